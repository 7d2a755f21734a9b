/* The answer first: the stdout report of every program opens with findings,
 * one sentence each with its numbers.  A difference is called only where
 * the 95 % confidence intervals of the two medians do not overlap;
 * otherwise the sentence says it is within the noise.  The analysis
 * (mpimb-report) applies the same rule to the CSV. */
#include "mb.h"

#include <stdarg.h>
#include <string.h>

static int usable(const struct mb_row *r)
{
    return r && !r->na && strcmp(r->verified, "no") && r->t.median > 0;
}

int mb_est_time(const struct mb_row *r, struct mb_est *e)
{
    if (!usable(r)) return -1;
    *e = (struct mb_est){r->t.median, r->t.ci_lo, r->t.ci_hi, 0};
    return 0;
}

int mb_est_rate(const struct mb_row *r, struct mb_est *e)
{
    if (!usable(r) || !(r->sent_bytes > 0) || !(r->t.ci_lo > 0)) return -1;
    double b = r->sent_bytes / 1e6;
    *e = (struct mb_est){b / r->t.median, b / r->t.ci_hi, b / r->t.ci_lo, 1};
    return 0;
}

void mb_versus(const struct mb_est *a, const struct mb_est *b, struct mb_vs *v)
{
    /* "better": the larger rate, or the smaller time */
    int a_better = a->higher_better ? a->v >= b->v : a->v <= b->v;
    const struct mb_est *hi = a->v >= b->v ? a : b, *lo = a->v >= b->v ? b : a;
    v->a_better = a_better;
    v->ratio = lo->v > 0 ? hi->v / lo->v : 0;
    v->significant = lo->hi < hi->lo; /* the intervals do not overlap */
}

const char *mb_vs_note(const struct mb_vs *v)
{
    return v->significant ? "" : " - within the noise (the 95 % CIs overlap)";
}

const struct mb_row *mb_extreme(const struct mb_run *run, int (*keep)(const struct mb_row *, const void *),
                                const void *arg, int (*est)(const struct mb_row *, struct mb_est *), int best)
{
    const struct mb_row *pick = NULL;
    struct mb_est pe = {0}, e;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!keep(r, arg) || est(r, &e)) continue;
        int better = e.higher_better ? e.v > pe.v : e.v < pe.v;
        if (!pick || better == best) pick = r, pe = e;
    }
    return pick;
}

void mb_finding(FILE *f, int *count, const char *fmt, ...)
{
    if ((*count)++ == 0) fputs("\nFindings (medians; differences called only where the 95 % CIs do not overlap):\n", f);
    va_list ap;
    va_start(ap, fmt);
    fputs("  * ", f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
}
