/* The answer first: the sentences that open the threads report — T threads
 * against T processes for the concurrent latency and bandwidth tests, the
 * communication thread against plain overlap, and the master-worker
 * versions at the most workers (findings.c's CI rule).  MULTIPLE against
 * SINGLE takes two launches: scripts/thread-overhead and mpimb-report. */
#include "threads.h"

#include <stdlib.h>
#include <string.h>

struct sel {
    const char *test, *method;
    long long bytes;  /* -1: any */
    const char *pair; /* NULL, or a "key=value" the row's params must hold */
};

static int has_pair(const char *params, const char *pair)
{
    size_t l = strlen(pair);
    for (const char *p = params; (p = strstr(p, pair)); p++)
        if ((p == params || p[-1] == ';') && (p[l] == ';' || !p[l])) return 1;
    return 0;
}

static int keep(const struct mb_row *r, const void *arg)
{
    const struct sel *s = arg;
    return !strcmp(r->test, s->test) && (!s->method || !strcmp(r->method, s->method)) &&
           (s->bytes < 0 || r->bytes == s->bytes) && (!s->pair || has_pair(r->params, s->pair));
}

/* The best row of x against the best of y, by est; one sentence. */
static void versus(int *n, const struct mb_run *run, struct sel x, struct sel y, const char *what,
                   int (*est)(const struct mb_row *, struct mb_est *), const char *unit, double scale)
{
    const struct mb_row *a = mb_extreme(run, keep, &x, est, 1), *b = mb_extreme(run, keep, &y, est, 1);
    struct mb_est ea, eb;
    if (!a || !b || a == b || est(a, &ea) || est(b, &eb)) return;
    struct mb_vs v;
    mb_versus(&ea, &eb, &v);
    char va[32], vb[32];
    mb_fmt_value(va, sizeof va, ea.v * scale);
    mb_fmt_value(vb, sizeof vb, eb.v * scale);
    mb_finding(stdout, n, "%s: %s %s %s against %s %s %s: %s is %.2fx better%s.", what, a->method, va, unit,
               b->method, vb, unit, v.a_better ? a->method : b->method, v.ratio, mb_vs_note(&v));
}

static long long edge(const struct mb_run *run, const char *test, int largest)
{
    long long b = -1;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!strcmp(r->test, test) && !r->na && (b < 0 || (largest ? r->bytes > b : r->bytes < b))) b = r->bytes;
    }
    return b;
}

void thr_findings(const struct mb_run *run)
{
    int n = 0;
    char what[96];
    long long b = edge(run, "latency-mt", 0);
    snprintf(what, sizeof what, "Concurrent latency at %lld B, threads against processes", b);
    versus(&n, run, (struct sel){"latency-mt", NULL, b, NULL}, (struct sel){"latency-mt", "processes", b, NULL}, what,
           mb_est_time, "us", 1e6);
    b = edge(run, "bw-mt", 1);
    snprintf(what, sizeof what, "Concurrent bandwidth at %lld B, threads against processes", b);
    versus(&n, run, (struct sel){"bw-mt", NULL, b, NULL}, (struct sel){"bw-mt", "processes", b, NULL}, what,
           mb_est_rate, "MB/s", 1);
    versus(&n, run, (struct sel){"overlap", "comm-thread", -1, NULL}, (struct sel){"overlap", "plain", -1, NULL},
           "Overlap of communication and computation", mb_est_time, "us", 1e6);
    int most = 0; /* master-worker at the most workers measured */
    for (int i = 0; i < run->nrows; i++) {
        const char *w = strstr(run->rows[i].params, "workers=");
        if (!strcmp(run->rows[i].test, "master-worker") && !run->rows[i].na && w && atoi(w + 8) > most)
            most = atoi(w + 8);
    }
    char pair[32];
    snprintf(pair, sizeof pair, "workers=%d", most);
    snprintf(what, sizeof what, "Master-worker with %d workers, farm throughput", most);
    if (most)
        versus(&n, run, (struct sel){"master-worker", NULL, -1, pair}, (struct sel){"master-worker", "mpi-only", -1, pair},
               what, mb_est_rate, "MB/s", 1);
}
