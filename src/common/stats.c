/* Summary statistics and the nonparametric confidence interval of the median. */
#include "mb.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Order statistics bounding the median with 95 % confidence (Le Boudec,
 * "Performance Evaluation of Computer and Communication Systems", 2.1):
 * j = floor((n - 1.96 sqrt(n)) / 2), k = ceil(1 + (n + 1.96 sqrt(n)) / 2),
 * 1-based.  Below 6 (MB_CI_MIN_REPS) no such pair exists: [min, max] is
 * returned for the stopping rule's progress, and the row gets no interval. */
void mb_median_ci_index(int n, int *lo, int *hi)
{
    if (n < 6) {
        *lo = 0;
        *hi = n > 0 ? n - 1 : 0;
        return;
    }
    double r = 1.96 * sqrt((double)n);
    int j = (int)floor((n - r) / 2.0);
    int k = (int)ceil(1.0 + (n + r) / 2.0);
    if (j < 1) j = 1;
    if (k > n) k = n;
    *lo = j - 1;
    *hi = k - 1;
}

/* The q-quantile of n sorted samples, interpolated linearly between order
 * statistics (Hyndman-Fan type 7, numpy's and pandas' default), so the
 * analysis computes the same figure from --raw samples. */
static double quantile(const double *x, int n, double q)
{
    double h = (n - 1) * q;
    int i = (int)floor(h);
    return i + 1 < n ? x[i] + (h - i) * (x[i + 1] - x[i]) : x[n - 1];
}

void mb_stats_compute(double *x, int n, struct mb_stats *s)
{
    if (n <= 0) {
        *s = (struct mb_stats){.rank_min = -1, .rank_mean = -1};
        return;
    }
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += x[i];
    double mean = sum / n, ss = 0;
    for (int i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    int lo, hi;
    mb_median_ci_index(n, &lo, &hi);
    s->min = x[0];
    s->max = x[n - 1];
    s->median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    s->mean = mean;
    s->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    /* below MB_CI_MIN_REPS no pair of order statistics covers 95 %: no interval */
    s->ci_lo = n >= MB_CI_MIN_REPS ? x[lo] : NAN;
    s->ci_hi = n >= MB_CI_MIN_REPS ? x[hi] : NAN;
    s->p90 = quantile(x, n, 0.90);
    s->p99 = quantile(x, n, 0.99);
    s->rank_min = s->rank_mean = -1; /* over ranks: filled by the timing loop */
}

double mb_stat_value(const struct mb_opts *o, const struct mb_stats *s)
{
    switch (o->stat) {
    case MB_STAT_MIN: return s->min;
    case MB_STAT_MEAN: return s->mean;
    default: return s->median;
    }
}

const char *mb_stat_name(enum mb_stat s)
{
    return s == MB_STAT_MIN ? "min" : s == MB_STAT_MEAN ? "mean" : "median";
}
