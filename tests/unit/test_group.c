/* Interleaved measurement of a group of tests (mb_measure_group) and its
 * rounds file.  Synthetic self-timed kernels whose times share a drift per
 * round (the machine's state of the moment, as one round sees it):
 *   1. two identical tests measured one after the other (mb_measure, as
 *      before groups) get disjoint 95 % intervals — drift, not a difference;
 *      measured as a group, every round's ratio is exactly 1;
 *   2. a true 8 % difference under the same drift: the members' own
 *      intervals overlap (no verdict), the per-round ratio is exactly 1.08,
 *      and so is its order-statistic interval (docs/measurement.md, "Paired
 *      comparisons").
 * The rounds file is read back: one line per (round, member), rows as in
 * the CSV, as many rounds as each row's reps, each round a permutation.
 *   3. calibrated K: members within 2x of each other's time per iteration
 *      run one K (the larger), a member 10x slower keeps its own. */
#include "check.h"
#include "internal.h"
#include "solo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct clock_ {
    long calls; /* kernel calls so far */
    int per;    /* calls per round: the number of members measured together */
};

struct synth {
    struct clock_ *c;
    double factor; /* the test's own cost, relative */
};

/* The machine's state in round r: a ramp (slow drift) and a jolt every few rounds. */
static double drift(long r) { return 1e-5 * (1 + 0.01 * (double)r + 0.3 * (double)((r * 7919) % 13) / 13); }

/* No drift: the time of `iters` iterations at the test's own cost. */
static double steady(void *state, long iters) { return ((struct synth *)state)->factor * 1e-5 * (double)iters; }

static double kernel(void *state, long iters)
{
    struct synth *s = state;
    long r = s->c->calls++ / s->c->per;
    return s->factor * drift(r) * (double)iters;
}

/* One group's lines of the rounds file. */
struct line {
    long group, round;
    int row, pos;
    double t;
};

static int read_rounds(const char *path, struct line *out, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char head[128];
    int n = 0;
    if (!fgets(head, sizeof head, f) || strcmp(head, "group,round,row,pos,time_s\n")) n = -1;
    while (n >= 0 && n < max &&
           fscanf(f, "%ld,%ld,%d,%d,%lf", &out[n].group, &out[n].round, &out[n].row, &out[n].pos, &out[n].t) == 5)
        n++;
    fclose(f);
    return n;
}

/* The order-statistic 95 % interval of the median of n ratios (sorted in place). */
static void ratio_ci(double *x, int n, double *med, double *lo, double *hi)
{
    struct mb_stats s;
    mb_stats_compute(x, n, &s);
    *med = s.median;
    *lo = s.ci_lo;
    *hi = s.ci_hi;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char csv[] = "/tmp/mpimb-test-group-XXXXXX", path[64], rounds[80];
    int fd = mkstemp(csv);
    CHECK(fd >= 0);
    close(fd);
    snprintf(path, sizeof path, "%s.csv", csv);
    snprintf(rounds, sizeof rounds, "%s-rounds.csv", csv);
    struct mb_run run;
    solo_run(&run);
    run.csv_path = path;
    run.csv = fopen(path, "w");
    mb_csv_header(run.csv);
    /* K = 1 (no calibration), no warm-up: every kernel call is one repetition */
    run.opts = (struct mb_opts){.reps = 10, .max_reps = 40, .rel_ci = 0.01, .time_budget = 100, .timeout = 300,
                                .sync = MB_SYNC_BARRIER, .order_seed = 42};

    /* 1. identical tests, one after the other: disjoint intervals */
    struct clock_ c = {0, 1};
    struct synth x = {&c, 1.0}, y = {&c, 1.0};
    struct mb_kernel kx = {.state = &x, .comm = MPI_COMM_WORLD, .run_timed = kernel};
    struct mb_kernel ky = {.state = &y, .comm = MPI_COMM_WORLD, .run_timed = kernel};
    struct mb_row rx, ry;
    mb_row_init(&rx, "halo", "same");
    mb_row_init(&ry, "halo", "same");
    CHECK(mb_measure(&run, &kx, &rx) == 0 && mb_measure(&run, &ky, &ry) == 0);
    CHECK(rx.reps == 40 && ry.reps == 40 && !strcmp(rx.stop_reason, "max-reps"));
    CHECK(rx.t.ci_hi < ry.t.ci_lo); /* "different", and they are the same test */

    /* ... as a group: the rounds pair them, every ratio is 1 */
    c = (struct clock_){0, 2};
    struct mb_kernel k1[2] = {kx, ky};
    struct mb_row r1[2];
    mb_row_init(&r1[0], "halo", "x");
    mb_row_init(&r1[1], "halo", "y");
    mb_begin(&run, &r1[0]);
    mb_begin(&run, &r1[1]);
    CHECK(mb_measure_group(&run, k1, r1, 2) == 0);
    CHECK(c.calls == 80); /* 40 rounds of both, nothing else */
    CHECK(r1[0].reps == 40 && r1[1].reps == 40);
    CHECK(!strcmp(r1[0].stop_reason, "max-reps") && !strcmp(r1[1].stop_reason, "max-reps"));
    CHECK(strstr(r1[0].params, "sync=barrier") != NULL);
    CHECK(run.nrows == 0); /* every row is the caller's to end, a group's as mb_measure's */
    struct line *l = malloc(1000 * sizeof *l);
    mb_end(&run, &r1[0]);
    CHECK(run.nrows == 1 && read_rounds(rounds, l, 1000) == 0); /* the samples wait for the group's last row */
    mb_end(&run, &r1[1]);
    CHECK(run.nrows == 2 && read_rounds(rounds, l, 1000) == 2 * 40);

    /* 2. a real 8 % difference under the same drift */
    c = (struct clock_){0, 2};
    struct synth a = {&c, 1.08}, b = {&c, 1.0};
    struct mb_kernel k2[2] = {{.state = &a, .comm = MPI_COMM_WORLD, .run_timed = kernel},
                              {.state = &b, .comm = MPI_COMM_WORLD, .run_timed = kernel}};
    struct mb_row r2[2];
    mb_row_init(&r2[0], "halo", "a");
    mb_row_init(&r2[1], "halo", "b");
    mb_begin(&run, &r2[0]);
    mb_begin(&run, &r2[1]);
    CHECK(mb_measure_group(&run, k2, r2, 2) == 0);
    mb_end(&run, &r2[1]); /* ended in any order: each row's rounds say its own CSV row */
    mb_end(&run, &r2[0]);
    CHECK(r2[0].reps == 40 && r2[1].reps == 40);
    CHECK(r2[0].t.ci_lo < r2[1].t.ci_hi); /* the members' own intervals overlap: no verdict from them */
    CHECK(r2[0].t.median / r2[1].t.median > 1.0 && r2[0].t.median / r2[1].t.median < 1.2);

    /* the rounds file: after the rows, one line per round and member */
    fflush(run.csv);
    int n = read_rounds(rounds, l, 1000);
    CHECK(n == 2 * 40 + 2 * 40);
    int per_row[5] = {0}, seen_pos[2][2] = {{0}};
    double ratio1[40], ratio2[40];
    for (int i = 0; i + 1 < n; i += 2) {
        /* lines come by round, then member in the group's order: rows 1, 2 (group 0), 4, 3 (group 1: its
         * second member ended first) */
        CHECK(l[i].group == l[i + 1].group && l[i].round == l[i + 1].round);
        CHECK(l[i].row == (l[i].group ? 4 : 1) && l[i + 1].row == (l[i].group ? 3 : 2));
        CHECK(l[i].round == (i / 2) % 40);
        CHECK(l[i].pos + l[i + 1].pos == 1 && l[i].pos * l[i + 1].pos == 0); /* a permutation of the round */
        per_row[l[i].row]++;
        per_row[l[i + 1].row]++;
        seen_pos[l[i].group][l[i].pos] = 1;
        double q = l[i].t / l[i + 1].t;
        if (l[i].group == 0)
            ratio1[l[i].round] = q;
        else
            ratio2[l[i].round] = q;
    }
    for (int r = 1; r <= 4; r++) CHECK(per_row[r] == 40); /* = the rows' reps */
    CHECK(seen_pos[0][0] && seen_pos[0][1] && seen_pos[1][0] && seen_pos[1][1]); /* the order is shuffled */
    double med, lo, hi;
    ratio_ci(ratio1, 40, &med, &lo, &hi);
    CHECK(fabs(med - 1) < 1e-7 && fabs(lo - 1) < 1e-7 && fabs(hi - 1) < 1e-7); /* the same: exactly */
    ratio_ci(ratio2, 40, &med, &lo, &hi);
    CHECK(fabs(med - 1.08) < 1e-7 && fabs(lo - 1.08) < 1e-7 && fabs(hi - 1.08) < 1e-7); /* 8 %: exactly */

    /* the CSV has every row the rounds file names (4 group rows) */
    FILE *f = fopen(path, "r");
    int lines = 0;
    for (int ch; (ch = fgetc(f)) != EOF;) lines += ch == '\n';
    fclose(f);
    CHECK(lines == 1 + 4);
    /* the JSON names the file and the seed */
    CHECK(run.extra_meta && strstr(run.extra_meta, "\"rounds\": \"mpimb-test-group-") &&
          strstr(run.extra_meta, "\"rounds_seed\": 42"));

    /* 3. calibration to 1 ms: alone, 1e-5 s per iteration gives K = 100, 1.3e-5 s K = 93, 1e-4 s K = 12 */
    run.opts.min_rep_time = 1e-3;
    run.opts.reps = run.opts.max_reps = 6;
    struct synth s3[3] = {{&c, 1.0}, {&c, 1.3}, {&c, 10.0}};
    struct mb_kernel k3[3];
    struct mb_row r3[3];
    for (int j = 0; j < 3; j++) {
        k3[j] = (struct mb_kernel){.state = &s3[j], .comm = MPI_COMM_WORLD, .run_timed = steady};
        mb_row_init(&r3[j], "halo", "k");
    }
    CHECK(mb_measure(&run, &k3[1], &r3[1]) == 0 && r3[1].iters == 93);
    CHECK(mb_measure_group(&run, k3, r3, 3) == 0);
    CHECK(r3[0].iters == 100 && r3[1].iters == 100 && r3[2].iters == 12);
    CHECK(fabs(r3[1].t.median / r3[0].t.median - 1.3) < 1e-9); /* per iteration, whatever K */

    /* 4. --raw: each row's samples wait apart until that row ends, then carry its CSV row */
    char raw[80];
    snprintf(raw, sizeof raw, "%s-raw.csv", csv);
    run.opts.raw = raw;
    run.raw = fopen(raw, "w");
    run.opts.min_rep_time = 0;
    struct mb_row r4[2];
    mb_row_init(&r4[0], "halo", "first");
    mb_row_init(&r4[1], "halo", "second");
    for (int j = 0; j < 2; j++) mb_begin(&run, &r4[j]);
    CHECK(mb_measure_group(&run, k3, r4, 2) == 0);
    long before = ftell(run.raw);
    mb_end(&run, &r4[1]);
    int second_row = run.nrows;
    mb_end(&run, &r4[0]);
    fclose(run.raw);
    run.raw = NULL;
    CHECK(before == 0); /* nothing before its row ended */
    FILE *rf = fopen(raw, "r");
    char line[256], method[32];
    int nraw = 0, row_of[2] = {0, 0}, rownum, rep;
    while (rf && fgets(line, sizeof line, rf) && sscanf(line, ",%d,halo,%31[^,],,,%d", &rownum, method, &rep) == 3) {
        int j = !strcmp(method, "second");
        CHECK(rep == nraw % 6 && (row_of[j] == 0 || row_of[j] == rownum));
        row_of[j] = rownum;
        nraw++;
    }
    if (rf) fclose(rf);
    CHECK(nraw == 2 * 6 && row_of[1] == second_row && row_of[0] == second_row + 1);
    remove(raw);

    fclose(run.csv);
    remove(path);
    remove(rounds);
    remove(csv);
    free(l);
    free(run.rows);
    free(run.extra_meta);
    MPI_Finalize();
    return CHECK_DONE();
}
