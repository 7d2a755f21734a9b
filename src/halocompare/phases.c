/* --phases (docs/halo-phases.md): where an exchange's time goes, in the same repetitions as its time —
 * post receives; pack and post sends; wait; unpack (LLNL Comb's phases).  The methods end each phase with
 * halo_phase() (halo.h); this file is the clock's side (start, hand over) and the phase table on stdout. */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

const char *const halo_phase_names[NPH] = {"post", "send", "wait", "unpack"};

void halo_phases_start(struct halo *h)
{
    if (!h->ph) return;
    memset(h->ph->ticks, 0, sizeof h->ph->ticks);
    h->ph->last = mb_ticks();
}

void halo_phases_take(struct halo *h, double *secs)
{
    double tick = mb_tick_seconds();
    for (int p = 0; p < NPH; p++) {
        secs[p] = (double)h->ph->ticks[p] * tick;
        h->ph->ticks[p] = 0;
    }
}

/* The number under key in a row's params, or -1 where it has none. */
static double param_num(const struct mb_row *r, const char *key)
{
    const char *v = mb_param_get(r->params, key, NULL);
    return v ? atof(v) : -1;
}

/* The text under key in a row's params into buf ("" where it has none). */
static const char *param_text(const struct mb_row *r, const char *key, char *buf, size_t len)
{
    size_t n = 0;
    const char *v = mb_param_get(r->params, key, &n);
    snprintf(buf, len, "%.*s", v ? (int)n : 0, v ? v : "");
    return buf;
}

static char *us_cell(double s)
{
    char b[32];
    mb_fmt_value(b, sizeof b, s * 1e6);
    return strdup(b);
}

/* One row of the table: what was measured, then its phases, their sum and its time (µs per exchange). */
static void phase_row(struct mb_table *t, const struct mb_row *r, char *why, size_t len)
{
    char **c = mb_table_row(t), b[160];
    c[0] = strdup(r->method);
    c[1] = strdup(r->comm);
    snprintf(b, sizeof b, "%d%s", r->neighbors, r->periodic ? " periodic" : "");
    c[2] = strdup(b);
    snprintf(b, sizeof b, "%lld", r->bytes);
    c[3] = strdup(b);
    c[4] = strdup(param_text(r, "packing", b, sizeof b)[0] ? b : "-");
    c[5] = strdup(param_text(r, "mock", b, sizeof b)[0] ? "mock" : "");
    param_text(r, "phase_na", why, len);
    double sum = 0;
    for (int p = 0; p < NPH; p++) {
        char key[32];
        snprintf(key, sizeof key, "phase_%s_s", halo_phase_names[p]);
        double v = param_num(r, key);
        sum += v > 0 ? v : 0;
        c[6 + p] = r->na ? mb_cell(r, 0) : why[0] || v < 0 ? strdup("n/a") : us_cell(v);
    }
    c[6 + NPH] = r->na || why[0] ? mb_cell(r->na ? r : NULL, 0) : us_cell(sum);
    c[7 + NPH] = mb_cell(r, r->t.median * 1e6);
}

void halo_phase_report(const struct mb_run *run)
{
    static const char *const head[] = {"method", "comm", "nbrs", "bytes", "packing", "mode", "post", "pack+send",
                                       "wait", "unpack", "sum", "time"};
    struct mb_table t;
    mb_table_new(&t, (int)(sizeof head / sizeof *head), head);
    enum { WHY = 160 };
    char notes[8][sizeof run->rows->method + 2 + WHY]; /* "method: why", whole */
    int nnotes = 0;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (strcmp(r->test, "halo") || r->overlap || mb_param_is(r->params, "phases", "off")) continue; /* --phases-cost */
        char why[WHY];
        phase_row(&t, r, why, sizeof why);
        int seen = 0;
        for (int k = 0; k < nnotes; k++) seen |= !strncmp(notes[k], r->method, strlen(r->method));
        if (why[0] && !seen && nnotes < 8) snprintf(notes[nnotes++], sizeof notes[0], "%s: %s", r->method, why);
    }
    int any = t.nrows > 1;
    mb_table_done(stdout, &t, "Phases: µs per exchange (median, the slowest rank's of each repetition; "
                              "docs/halo-phases.md)", NULL);
    for (int k = 0; k < nnotes; k++) printf("n/a %s\n", notes[k]);
    if (any) printf("sum = post + pack+send + wait + unpack; time = the row's own median\n");
}
