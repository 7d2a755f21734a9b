/* Statistics: order statistics, median, the CI of the median, stddev. */
#include "check.h"
#include "mb.h"

#include <math.h>

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * (fabs(a) + fabs(b) + 1); }

int main(void)
{
    struct mb_stats s;
    double one[] = {3.0};
    mb_stats_compute(one, 1, &s);
    CHECK(s.min == 3 && s.max == 3 && s.median == 3 && s.mean == 3 && s.stddev == 0);
    CHECK(isnan(s.ci_lo) && isnan(s.ci_hi)); /* one sample: no interval */

    double odd[] = {5, 1, 4, 2, 3}; /* sorted: 1 2 3 4 5 */
    mb_stats_compute(odd, 5, &s);
    CHECK(s.min == 1 && s.max == 5 && s.median == 3 && near(s.mean, 3));
    CHECK(near(s.stddev, sqrt(2.5))); /* sample standard deviation */
    CHECK(isnan(s.ci_lo) && isnan(s.ci_hi)); /* below 6 samples: no 95 % interval */
    CHECK(odd[0] == 1 && odd[4] == 5);   /* sorted in place */

    double even[] = {4, 1, 3, 2};
    mb_stats_compute(even, 4, &s);
    CHECK(near(s.median, 2.5));

    /* n = 10: j = floor((10 - 1.96*3.162)/2) = 1, k = ceil(1 + (10 + 6.198)/2) = 10 (1-based) */
    int lo, hi;
    mb_median_ci_index(10, &lo, &hi);
    CHECK(lo == 1 - 1 && hi == 10 - 1);
    /* n = 100: j = floor((100 - 19.6)/2) = 40, k = ceil(1 + 119.6/2) = 61 (Le Boudec, table 2.1) */
    mb_median_ci_index(100, &lo, &hi);
    CHECK(lo == 39 && hi == 60);
    /* n = 1000: j = floor((1000 - 61.98)/2) = 469, k = ceil(1 + 1061.98/2) = 532 */
    mb_median_ci_index(1000, &lo, &hi);
    CHECK(lo == 468 && hi == 531);
    /* the interval always brackets the median and narrows (relatively) with n */
    for (int n = 6; n < 2000; n += 7) {
        mb_median_ci_index(n, &lo, &hi);
        CHECK(lo >= 0 && hi <= n - 1 && lo <= (n - 1) / 2 && hi >= n / 2);
    }

    double x[100];
    for (int i = 0; i < 100; i++) x[i] = 100 - i; /* 100 .. 1 */
    mb_stats_compute(x, 100, &s);
    CHECK(s.ci_lo == 40 && s.ci_hi == 61 && near(s.median, 50.5));

    struct mb_opts o = {.stat = MB_STAT_MIN};
    CHECK(mb_stat_value(&o, &s) == 1);
    o.stat = MB_STAT_MEAN;
    CHECK(near(mb_stat_value(&o, &s), 50.5));
    o.stat = MB_STAT_MEDIAN;
    CHECK(near(mb_stat_value(&o, &s), 50.5));
    /* percentiles interpolate linearly between order statistics (numpy's default):
     * 1..100: p90 at 0-based 89.1 -> 90.1, p99 at 98.01 -> 99.01 */
    double hundred[100];
    for (int i = 0; i < 100; i++) hundred[i] = 100 - i;
    mb_stats_compute(hundred, 100, &s);
    CHECK(near(s.p90, 90.1) && near(s.p99, 99.01));
    CHECK(s.rank_min < 0 && s.rank_mean < 0); /* over ranks: filled by the timing loop, not here */
    double three[] = {1, 2, 3}; /* h = 1.8 -> 2.8; h = 1.98 -> 2.98 */
    mb_stats_compute(three, 3, &s);
    CHECK(near(s.p90, 2.8) && near(s.p99, 2.98));
    mb_stats_compute(one, 1, &s);
    CHECK(s.p90 == 3 && s.p99 == 3);
    return CHECK_DONE();
}
