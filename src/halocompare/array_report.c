/* The --layout array tables on stdout (rank 0): one per periodicity,
 * communicator and message size — rows = methods, column groups = the
 * stencils, columns = the packings; cells = MB/s per process.  The verdicts
 * (best method x packing, hand packing against datatypes) are the
 * findings mpimb-report prints after them. */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

/* The row's packing (params "packing=..."), or -1. */
static int packing_of(const struct mb_row *r)
{
    for (int k = 0; k < NPACK; k++)
        if (mb_param_is(r->params, "packing", halo_packing_names[k])) return k;
    return -1;
}

static const struct mb_row *find(const struct mb_run *run, const char *method, const char *comm, int nnbr,
                                 int periodic, long long bytes, int pk)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (r->neighbors == nnbr && r->periodic == periodic && r->bytes == bytes && !r->overlap &&
            !strcmp(r->test, "halo") &&
            !strcmp(r->method, method) && !strcmp(r->comm, comm) && packing_of(r) == pk)
            return r;
    }
    return NULL;
}

/* Adds v to the distinct values out[0..*n) (in the order met). */
static void add(const char **out, int *n, int max, const char *v)
{
    for (int k = 0; k < *n; k++)
        if (!strcmp(out[k], v)) return;
    if (*n < max) out[(*n)++] = v;
}

static void block(const struct mb_run *run, int periodic, const char *comm, long long bytes)
{
    const char *methods[64];
    int nm = 0, nbrs[NSTENCIL], ng = 0, pks[NPACK], np = 0;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!strcmp(r->test, "halo") && r->periodic == periodic && r->bytes == bytes && !strcmp(r->comm, comm))
            add(methods, &nm, 64, r->method);
    }
    for (int s = 0; s < NSTENCIL; s++)
        for (int m = 0, hit = 0; m < nm && !hit; m++)
            for (int k = 0; k < NPACK && !hit; k++)
                if ((hit = find(run, methods[m], comm, halo_stencils[s], periodic, bytes, k) != NULL))
                    nbrs[ng++] = halo_stencils[s];
    for (int k = 0; k < NPACK; k++)
        for (int g = 0, hit = 0; g < ng && !hit; g++)
            for (int m = 0; m < nm && !hit; m++)
                if ((hit = find(run, methods[m], comm, nbrs[g], periodic, bytes, k) != NULL)) pks[np++] = k;
    if (!nm || !ng || !np) return;
    int ncols = 1 + ng * np, nrows = 1 + nm;
    char **cells = calloc((size_t)(ncols * nrows), sizeof *cells);
    const char **groups = calloc((size_t)ncols, sizeof *groups);
    char glabel[NSTENCIL][32];
    cells[0] = strdup("method");
    for (int g = 0; g < ng; g++) {
        snprintf(glabel[g], sizeof glabel[g], "%d neighbours", nbrs[g]);
        groups[1 + g * np] = glabel[g];
        for (int k = 0; k < np; k++) cells[1 + g * np + k] = strdup(halo_packing_names[pks[k]]);
    }
    for (int m = 0; m < nm; m++) {
        cells[(1 + m) * ncols] = strdup(methods[m]);
        for (int g = 0; g < ng; g++)
            for (int k = 0; k < np; k++)
                halo_cell(&cells[(1 + m) * ncols + 1 + g * np + k], run,
                          find(run, methods[m], comm, nbrs[g], periodic, bytes, pks[k]));
    }
    printf("\n%s mesh, comm %s, array layout, %lld-byte faces: MB/s per process (%s)\n",
           periodic ? "Periodic" : "Non-periodic", comm, bytes, mb_stat_name(run->opts.stat));
    mb_table_emit(stdout, nrows, ncols, cells, groups);
    free(groups);
}

static const struct mb_row *find_pack(const struct mb_run *run, const char *method, int nnbr, long long bytes)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!strcmp(r->test, "pack") && !strcmp(r->method, method) && r->neighbors == nnbr && r->bytes == bytes)
            return r;
    }
    return NULL;
}

/* --tests pack: rows = stencil and face size, columns = pack, mpi-pack,
 * memcpy (MB/s) and the two packings' share of memcpy's rate. */
static void pack_block(const struct mb_run *run, const long long *sz, int nsz)
{
    static const char *const head[] = {"stencil", "face bytes", "pack", "mpi-pack", "memcpy", "pack/memcpy",
                                       "mpi-pack/memcpy"};
    struct mb_table t;
    mb_table_new(&t, 7, head);
    for (int s = 0; s < NSTENCIL; s++)
        for (int b = 0; b < nsz; b++) {
            const struct mb_row *r[3] = {find_pack(run, "pack", halo_stencils[s], sz[b]),
                                         find_pack(run, "mpi-pack", halo_stencils[s], sz[b]),
                                         find_pack(run, "memcpy", halo_stencils[s], sz[b])};
            if (!r[2]) continue;
            char **row = mb_table_row(&t), buf[32];
            snprintf(buf, sizeof buf, "%d neighbours", halo_stencils[s]);
            row[0] = strdup(buf);
            snprintf(buf, sizeof buf, "%lld", sz[b]);
            row[1] = strdup(buf);
            double v[3];
            for (int k = 0; k < 3; k++) {
                double tm = r[k] ? mb_stat_value(&run->opts, &r[k]->t) : 0;
                v[k] = tm > 0 ? r[k]->sent_bytes / tm / 1e6 : 0;
                row[2 + k] = mb_cell(r[k], v[k]);
            }
            for (int k = 0; k < 2; k++) {
                snprintf(buf, sizeof buf, "-");
                if (v[k] > 0 && v[2] > 0) mb_fmt_ratio(buf, sizeof buf, v[k] / v[2]);
                row[5 + k] = strdup(buf);
            }
        }
    char title[160];
    snprintf(title, sizeof title, "Packing on its own: every region of the stencil packed and unpacked once, MB/s (%s)",
             mb_stat_name(run->opts.stat));
    mb_table_done(stdout, &t, title, NULL);
}

void halo_array_report(const struct mb_run *run, const char *grid)
{
    const char *comms[16];
    int nc = 0, nsz = 0;
    long long sz[64];
    for (int i = 0; i < run->nrows; i++) {
        add(comms, &nc, 16, run->rows[i].comm);
        int seen = 0;
        for (int k = 0; k < nsz; k++) seen |= sz[k] == run->rows[i].bytes;
        if (!seen && nsz < 64) sz[nsz++] = run->rows[i].bytes;
    }
    printf("halocompare: %d processes on %d node(s), grid %s, --layout array, label %s\n", run->nprocs, run->nnodes,
           grid, run->label);
    mb_print_caveats(stdout, run);
    for (int p = 0; p <= 1; p++)
        for (int c = 0; c < nc; c++)
            for (int s = 0; s < nsz; s++) block(run, p, comms[c], sz[s]);
    pack_block(run, sz, nsz);
    printf("\nMB/s = 10^6 bytes one process sends per exchange (its faces, edges and corners) / time per exchange,\n"
           "the time being the slowest rank's; packing: datatype = subarray types in place, pack = copy loops,\n"
           "mpi-pack = MPI_Pack/MPI_Unpack, both inside the timed exchange; "
           "n/a = not available (reason in the CSV).\n");
    fflush(stdout);
}
