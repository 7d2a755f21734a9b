/* The stdout tables (rank 0): one block per test and window flavour; rows
 * are sizes, columns the send/recv reference and, per synchronisation
 * mode, the RMA figure and its ratio to send/recv (time RMA / time
 * send/recv: above 1 means one-sided is slower). */
#include "rma.h"

#include <stdlib.h>
#include <string.h>

static const struct mb_row *find(const struct mb_run *run, const char *test, const char *method, const char *comm,
                                 long long bytes)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (r->bytes == bytes && !strcmp(r->test, test) && !strcmp(r->method, method) && !strcmp(r->comm, comm))
            return r;
    }
    return NULL;
}

static int is_bw(const char *test) { return strlen(test) > 3 && !strcmp(test + strlen(test) - 3, "-bw"); }

/* Latency: microseconds per epoch; bw: MB/s per origin. */
static double value(const struct mb_run *run, const struct mb_row *r)
{
    double t = mb_stat_value(&run->opts, &r->t);
    if (!(t > 0)) return 0;
    return is_bw(r->test) ? r->sent_bytes / t / 1e6 : t * 1e6;
}

static char *cell(const struct mb_run *run, const struct mb_row *r)
{
    return mb_cell(r, r && !r->na ? value(run, r) : 0);
}

static char *ratio(const struct mb_run *run, const struct mb_row *x, const struct mb_row *ref)
{
    char buf[32] = "-";
    if (x && ref && !x->na && !ref->na) {
        double a = mb_stat_value(&run->opts, &x->t), b = mb_stat_value(&run->opts, &ref->t);
        if (a > 0 && b > 0) mb_fmt_ratio(buf, sizeof buf, a / b);
    }
    return strdup(buf);
}

/* Distinct strings of a field among rows matching (test, comm or any), in run order. */
static int distinct(const struct mb_run *run, const char *test, const char *comm, size_t off, const char **out,
                    int max)
{
    int n = 0;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        const char *v = (const char *)r + off;
        if ((test && strcmp(r->test, test)) || (comm && strcmp(r->comm, comm)) || !strcmp(v, "sendrecv") ||
            !strcmp(v, "p2p"))
            continue;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = !strcmp(out[k], v);
        if (!seen && n < max) out[n++] = v;
    }
    return n;
}

static void block(const struct mb_run *run, const char *test, const char *comm)
{
    const char *syncs[16];
    long long sizes[64];
    int ns = distinct(run, test, comm, offsetof(struct mb_row, method), syncs, 16), nz = 0;
    for (int i = 0; i < run->nrows && nz < 64; i++) {
        const struct mb_row *r = &run->rows[i];
        if (strcmp(r->test, test) || strcmp(r->comm, comm)) continue;
        int seen = 0;
        for (int k = 0; k < nz && !seen; k++) seen = sizes[k] == r->bytes;
        if (!seen) sizes[nz++] = r->bytes;
    }
    if (!ns || !nz) return;
    int ncols = 2 + 2 * ns, nrows = 1 + nz, bw = is_bw(test);
    char **cells = calloc((size_t)(ncols * nrows), sizeof *cells);
    cells[0] = strdup("bytes");
    cells[1] = strdup("sendrecv");
    for (int s = 0; s < ns; s++) {
        cells[2 + 2 * s] = strdup(syncs[s]);
        cells[3 + 2 * s] = strdup("ratio");
    }
    for (int z = 0; z < nz; z++) {
        char b[32];
        snprintf(b, sizeof b, "%lld", sizes[z]);
        char **row = cells + (1 + z) * ncols;
        const struct mb_row *ref = find(run, test, "sendrecv", "p2p", sizes[z]);
        row[0] = strdup(b);
        row[1] = cell(run, ref);
        for (int s = 0; s < ns; s++) {
            const struct mb_row *x = find(run, test, syncs[s], comm, sizes[z]);
            row[2 + 2 * s] = cell(run, x);
            row[3 + 2 * s] = ratio(run, x, ref);
        }
    }
    printf("\n%s, window %s: %s (%s); ratio = time RMA / time send/recv\n", test, comm,
           bw ? "MB/s per origin" : "microseconds per operation", mb_stat_name(run->opts.stat));
    mb_table_emit(stdout, nrows, ncols, cells, NULL);
    /* the reasons behind n/a cells, once per block */
    for (int s = 0; s < ns; s++)
        for (int z = 0; z < nz; z++) {
            const struct mb_row *x = find(run, test, syncs[s], comm, sizes[z]);
            if (x && x->na) {
                printf("  n/a %s: %s\n", syncs[s], x->stop_reason + (strncmp(x->stop_reason, "n/a: ", 5) ? 0 : 5));
                break;
            }
        }
}

void rma_report(const struct mb_run *run, const struct rma *r, int pairs_many)
{
    printf("rma: %d processes on %d node(s), label %s; %s: origin%s", run->nprocs, run->nnodes, run->label,
           pairs_many ? "many-to-one" : "one pair", r->norigins > 1 ? "s" : "");
    for (int k = 0; k < r->norigins; k++) printf(" %d", r->origins[k]);
    printf(" -> target %d; bw: %d operations per epoch\n", r->target, r->nslots);
    mb_print_caveats(stdout, run);
    const char *tests[32], *comms[8];
    int nt = distinct(run, NULL, NULL, offsetof(struct mb_row, test), tests, 32);
    for (int t = 0; t < nt; t++) {
        int nc = distinct(run, tests[t], NULL, offsetof(struct mb_row, comm), comms, 8);
        for (int c = 0; c < nc; c++) block(run, tests[t], comms[c]);
    }
    printf("\nlatency = time of one epoch holding one operation; bw = bytes of --epoch-ops operations per epoch /\n"
           "epoch time; send/recv: ping-pong half round trip and windowed Isend bandwidth in the same run.\n"
           "n/a = not available with this MPI library (reason in the CSV).\n");
    fflush(stdout);
}
