/* The answer first: the sentences that open halocompare's stdout report.
 * Per periodicity and stencil, at the largest message size: the fastest and
 * slowest method on world, and the best and worst rank ordering for the
 * fastest method; then the one-sender rate against the halo's, and the best
 * one-sided method against the best point-to-point one.  Every comparison
 * follows the harness's rule (findings.c): called only where the 95 % CIs do
 * not overlap. */
#include "halo.h"

#include <string.h>

struct sel {
    const char *test, *method, *comm; /* NULL: any */
    int periodic, nnbr, family;       /* family: -1 any, 0 point-to-point, 1 one-sided/neighbourhood */
    long long bytes;
};

static int onesided(const char *m) { return !strncmp(m, "rma-", 4) || !strncmp(m, "neighbor-", 9); }

static int keep(const struct mb_row *r, const void *arg)
{
    const struct sel *s = arg;
    return !strcmp(r->test, s->test) && r->periodic == s->periodic && r->neighbors == s->nnbr &&
           r->bytes == s->bytes && r->sent_bytes > 0 && (!s->method || !strcmp(r->method, s->method)) &&
           (!s->comm || !strcmp(r->comm, s->comm)) && (s->family < 0 || onesided(r->method) == s->family);
}

static const char *block_name(const struct sel *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s, %d neighbours, %lld B", s->periodic ? "Periodic" : "Non-periodic", s->nnbr, s->bytes);
    return buf;
}

/* "a (x MB/s) ... b (y MB/s): r x" for the best and the worst row kept by s. */
static void spread(int *n, const struct mb_run *run, struct sel s, const char *what, size_t field)
{
    const struct mb_row *best = mb_extreme(run, keep, &s, mb_est_rate, 1);
    const struct mb_row *worst = mb_extreme(run, keep, &s, mb_est_rate, 0);
    struct mb_est a, b;
    if (!best || !worst || best == worst || mb_est_rate(best, &a) || mb_est_rate(worst, &b)) return;
    struct mb_vs v;
    mb_versus(&a, &b, &v);
    char name[96];
    mb_finding(stdout, n, "%s%s%s: %s is the best %s (%.4g MB/s), %.2fx the worst, %s (%.4g MB/s)%s.",
               block_name(&s, name, sizeof name), s.comm ? ", " : "", s.comm ? s.comm : "",
               (const char *)best + field, what, a.v, v.ratio, (const char *)worst + field, b.v, mb_vs_note(&v));
}

static void versus(int *n, const struct mb_run *run, struct sel x, struct sel y, const char *xname, const char *yname)
{
    const struct mb_row *bx = mb_extreme(run, keep, &x, mb_est_rate, 1), *by = mb_extreme(run, keep, &y, mb_est_rate, 1);
    struct mb_est a, b;
    if (!bx || !by || mb_est_rate(bx, &a) || mb_est_rate(by, &b)) return;
    struct mb_vs v;
    mb_versus(&a, &b, &v);
    char name[96];
    mb_finding(stdout, n, "%s, world: %s %s%s%.4g MB/s against %s %s%s%.4g MB/s: %s is %.2fx faster%s.",
               block_name(&x, name, sizeof name), xname, x.method ? "" : bx->method, x.method ? "" : " ", a.v, yname,
               y.method ? "" : by->method, y.method ? "" : " ", b.v, v.a_better ? xname : yname, v.ratio,
               mb_vs_note(&v));
}

void halo_findings(const struct mb_run *run)
{
    int n = 0, first = 1;
    long long bytes = -1; /* the largest size measured */
    for (int i = 0; i < run->nrows; i++)
        if (!strcmp(run->rows[i].test, "halo") && run->rows[i].bytes > bytes) bytes = run->rows[i].bytes;
    for (int p = 0; p <= 1; p++)
        for (int k = 0; k < NSTENCIL; k++) {
            struct sel s = {"halo", NULL, "world", p, halo_stencils[k], -1, bytes};
            const struct mb_row *best = mb_extreme(run, keep, &s, mb_est_rate, 1);
            if (!best) continue;
            spread(&n, run, s, "method", offsetof(struct mb_row, method));
            struct sel o = {"halo", best->method, NULL, p, halo_stencils[k], -1, bytes};
            char what[80];
            snprintf(what, sizeof what, "rank ordering for %s", best->method);
            spread(&n, run, o, what, offsetof(struct mb_row, comm));
            if (!first) continue; /* one-sender and one-sided: for the first stencil alone */
            first = 0;
            struct sel one = {"one-sender", "isend", "world", p, halo_stencils[k], -1, bytes};
            struct sel halo = {"halo", "irecv-isend", "world", p, halo_stencils[k], -1, bytes};
            versus(&n, run, one, halo, "one-sender", "the halo's irecv-isend");
            struct sel rma = {"halo", NULL, "world", p, halo_stencils[k], 1, bytes};
            struct sel p2p = {"halo", NULL, "world", p, halo_stencils[k], 0, bytes};
            versus(&n, run, rma, p2p, "one-sided", "point-to-point");
        }
}
