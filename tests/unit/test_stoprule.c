/* The timing loop's stopping rule: never "ci" below the repetitions a 95 %
 * order-statistic interval of the median needs, whatever --reps says. */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <string.h>

int main(void)
{
    struct mb_opts o = {.reps = 1, .max_reps = 1000};
    /* an interval already tight enough (ratio 0) does not stop 1, 3 or 5 samples */
    for (long n = 1; n < MB_CI_MIN_REPS; n++) CHECK(mb_stop_reason(&o, n, 0.0, 0.0, 1.0) == NULL);
    CHECK(MB_CI_MIN_REPS == 6);
    CHECK(!strcmp(mb_stop_reason(&o, 6, 0.5, 0.0, 1.0), "ci"));
    CHECK(mb_stop_reason(&o, 6, 1.5, 0.0, 1.0) == NULL); /* not yet tight */
    /* --reps above the floor: the floor is --reps */
    o.reps = 10;
    CHECK(mb_stop_reason(&o, 8, 0.1, 0.0, 1.0) == NULL);
    CHECK(!strcmp(mb_stop_reason(&o, 10, 0.1, 0.0, 1.0), "ci"));
    /* --reps 1 --max-reps 1: one sample ends on the cap, never on "ci" */
    o = (struct mb_opts){.reps = 1, .max_reps = 1};
    CHECK(!strcmp(mb_stop_reason(&o, 1, 0.0, 0.0, 1.0), "max-reps"));
    /* --quick's 3 of 3 */
    o = (struct mb_opts){.reps = 3, .max_reps = 3};
    CHECK(!strcmp(mb_stop_reason(&o, 3, 0.0, 0.0, 1.0), "max-reps"));
    /* the budget ends a test with --reps samples; fewer only past 4x the budget */
    o = (struct mb_opts){.reps = 3, .max_reps = 1000};
    CHECK(!strcmp(mb_stop_reason(&o, 3, 0.0, 2.0, 1.0), "budget"));
    CHECK(mb_stop_reason(&o, 2, 0.0, 2.0, 1.0) == NULL);
    CHECK(!strcmp(mb_stop_reason(&o, 2, 0.0, 4.0, 1.0), "budget"));
    CHECK(mb_stop_reason(&o, 5, 0.0, 0.5, 1.0) == NULL); /* tight, within budget, below the floor: go on */
    CHECK(!strcmp(mb_stop_reason(&o, 6, 0.0, 0.5, 1.0), "ci"));

    /* rows below the floor carry no interval; from it on, one that brackets the median */
    struct mb_stats s;
    double x[6] = {6, 5, 4, 3, 2, 1};
    for (int n = 1; n <= 6; n++) {
        double y[6];
        for (int i = 0; i < n; i++) y[i] = x[i];
        mb_stats_compute(y, n, &s);
        if (n < MB_CI_MIN_REPS)
            CHECK(isnan(s.ci_lo) && isnan(s.ci_hi));
        else
            CHECK(s.ci_lo <= s.median && s.median <= s.ci_hi);
    }
    return CHECK_DONE();
}
