/* The stdout tables (rank 0), from the rows the run wrote, under --stat:
 * overhead at the requested level, threads vs processes side by side,
 * short-long slowdown, overlap % and CPU %, concurrent vs sequential
 * collectives; then the two studies' tables (report_study.c). */
#include "threads.h"

#include <stdlib.h>
#include <string.h>

const struct mb_row *thr_find(const struct mb_run *run, const char *test, const char *method, long long bytes,
                              const char *params)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!strcmp(r->test, test) && !strcmp(r->method, method) && (bytes < 0 || r->bytes == bytes) &&
            (!params || !strcmp(r->params, params)))
            return r;
    }
    return NULL;
}

static double tval(const struct thr *c, const struct mb_row *r) { return mb_stat_value(&c->run->opts, &r->t); }

/* The figure shown for a row: µs for latencies and times; aggregate MB/s
 * (bw) or million messages/s (msgrate) over all pairs otherwise. */
static double shown(const struct thr *c, const struct mb_row *r)
{
    double t = tval(c, r);
    if (!(t > 0)) return 0;
    int pairs = thr_test_is(r->test, T_OVH_BW) ? 1 : r->threads;
    if (thr_test_is(r->test, T_BW_MT) || thr_test_is(r->test, T_OVH_BW))
        return (double)r->bytes * (double)c->window * pairs / t / 1e6;
    if (thr_test_is(r->test, T_RATE_MT)) return (double)c->window * pairs / t / 1e6;
    return t * 1e6;
}

static char *cell(const struct thr *c, const struct mb_row *r)
{
    return mb_cell(r, r && !r->na ? shown(c, r) : 0);
}

char *thr_fmt(const char *f, double v)
{
    char buf[48];
    snprintf(buf, sizeof buf, f, v);
    return strdup(buf);
}

static const char *unit(const char *test)
{
    return strstr(test, "bw") ? "MB/s" : thr_test_is(test, T_RATE_MT) ? "Mmsg/s" : "us";
}

void thr_report(const struct thr *c)
{
    const struct mb_run *run = c->run;
    mb_print_caveats(stdout, run);
    char title[256];
    struct mb_table t;

    static const char *const h1[] = {"test", "bytes", "value", "unit"};
    mb_table_new(&t, 4, h1);
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (strncmp(r->test, "overhead-", 9)) continue;
        char **row = mb_table_row(&t);
        row[0] = strdup(r->test);
        row[1] = thr_fmt("%.0f", (double)r->bytes);
        row[2] = cell(c, r);
        row[3] = strdup(unit(r->test));
    }
    snprintf(title, sizeof title, "single-threaded ping-pong, requested %s, provided %s (%s; compare levels with "
             "scripts/thread-overhead)", mb_thread_level_name(run->thread_level_req), mb_thread_level_name(run->thread_level),
             mb_stat_name(run->opts.stat));
    mb_table_done(stdout, &t, title, NULL);

    static const char *const h2[] = {"test", "bytes", "threads-tags", "threads-comms", "processes", "unit"};
    static const char *const var[3] = {"threads-tags", "threads-comms", "processes"};
    mb_table_new(&t, 6, h2);
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!strstr(r->test, "-mt") || thr_test_is(r->test, T_COLL_MT) || strcmp(r->method, "processes")) continue;
        char **row = mb_table_row(&t);
        row[0] = strdup(r->test);
        row[1] = thr_fmt("%.0f", (double)r->bytes);
        for (int v = 0; v < 3; v++) row[2 + v] = cell(c, thr_find(run, r->test, var[v], r->bytes, NULL));
        row[5] = strdup(unit(r->test));
    }
    snprintf(title, sizeof title, "%d threads per process vs %d processes per side, one thread each (%s; latency: "
             "half round trip; bw, msgrate: all pairs together)", c->T, c->T, mb_stat_name(run->opts.stat));
    mb_table_done(stdout, &t, title, NULL);

    static const char *const h3[] = {"test", "method", "value", "unit", "cpu %", "note"};
    mb_table_new(&t, 6, h3);
    const struct mb_row *alone = thr_find(run, thr_test_names[T_SHORT_LONG], "alone", -1, NULL),
                       *with = thr_find(run, thr_test_names[T_SHORT_LONG], "with-long", -1, NULL);
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!thr_test_is(r->test, T_SHORT_LONG) && !thr_test_is(r->test, T_OVERLAP) && !thr_test_is(r->test, T_COLL_MT))
            continue;
        if (mb_param_get(r->params, "placement", NULL)) continue; /* the placement table's */
        char **row = mb_table_row(&t);
        row[0] = strdup(r->test);
        row[1] = strdup(r->method);
        row[2] = cell(c, r);
        row[3] = strdup("us");
        row[4] = r->na || r->cpu_pct < 0 ? strdup("") : thr_fmt("%.0f", r->cpu_pct);
        double pct = -1e300;
        const char *f = "";
        if (r == with && alone && !alone->na && !with->na && tval(c, alone) > 0) {
            pct = 100 * (tval(c, with) / tval(c, alone) - 1);
            f = "%+.0f%% vs alone";
        } else if (thr_test_is(r->test, T_OVERLAP) && !r->na) {
            pct = !strcmp(r->method, "plain") ? c->ov.plain : !strcmp(r->method, "comm-thread") ? c->ov.thread_test
                  : !strcmp(r->method, "comm-thread-wait")                                 ? c->ov.thread_wait
                                                                                           : -1e300;
            f = "overlap %.0f%%";
        }
        row[5] = pct > -1e299 ? thr_fmt(f, pct) : strdup("");
    }
    snprintf(title, sizeof title, "short-long (%zu B beside %zu B), overlap (%zu B exchange), coll-mt (%d "
             "collectives per iteration) (%s; cpu: rank 0's threads, %% of one core)", c->short_size, c->long_size,
             c->long_size, c->T, mb_stat_name(run->opts.stat));
    mb_table_done(stdout, &t, title, NULL);
    thr_report_placement(c);
    thr_report_master_worker(c);

    printf("\nthread placement of rank 0 (bound cpus/last cpu; every rank: thread_placement in the JSON):");
    int n = mb_team_size(c->team), groups = 0;
    for (int i = 0; i < n && groups < 16; groups++) { /* runs of threads placed alike */
        int j = i;
        while (j + 1 < n && !strcmp(mb_team_cpuset(c->team, j + 1), mb_team_cpuset(c->team, i)) &&
               !strcmp(mb_team_last_cpu(c->team, j + 1), mb_team_last_cpu(c->team, i)))
            j++;
        if (j > i)
            printf(" t%d-%d %s/%s", i, j, mb_team_cpuset(c->team, i), mb_team_last_cpu(c->team, i));
        else
            printf(" t%d %s/%s", i, mb_team_cpuset(c->team, i), mb_team_last_cpu(c->team, i));
        i = j + 1;
        if (groups == 15 && i < n) printf(" ...");
    }
    printf("%s\n", mb_team_bound(c->team) ? " (pinned by --bind)" : "");
}
