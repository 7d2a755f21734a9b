/* The profile's results, in the suite's format and through the suite's own
 * writer (src/common: mb_csv_row, the JSON metadata): opened at MPI_Init
 * (CSV header, JSON with complete: false), filled at MPI_Finalize (rows,
 * the communication matrix, then the JSON with complete: true — so a job
 * killed before the end leaves nothing that claims to be complete).
 *
 * Rows: one per call x size bin and one per call over all sizes; times are
 * each rank's total seconds in the call, aggregated over ranks. */
#include "internal.h"
#include "options.h"
#include "prof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The matrix CSV's columns: analysis/mpimb/schema/matrix.schema.json. */
static const char *const matrix_columns = "run_id,rank,peer,kind,messages,bytes";
static const char *const matrix_kinds[MBP_NMAT] = {[MBP_MAT_P2P] = "p2p", [MBP_MAT_RMA] = "rma"};

static const struct mb_program prog = {
    .name = "profile",
    .summary = "an application's MPI calls, profiled by libmpimb-prof.so",
    .flags = MB_NOT_TIMED,
};

static double setup_s, init_s;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The application's command line (it may not have passed argv to MPI_Init). */
static char *command_line(void)
{
    char buf[8192];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    char *argv[256];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 256; i += strlen(buf + i) + 1) argv[argc++] = buf + i;
    return mb_cmdline_json(argc, argv);
}

struct mb_run *mbp_open_run(int required, int provided, double init_seconds)
{
    double t0 = now();
    struct mb_run *r = calloc(1, sizeof *r);
    r->load_json = mb_load_json; /* "busy": null, the load not sampled: a profile has no measuring window */
    r->prog = &prog;
    r->world = mbp.world;
    r->rank = mbp.rank;
    r->nprocs = mbp.size;
    r->thread_level_req = required;
    r->thread_level = provided;
    const char *label = getenv("MPIMB_PROF_LABEL"), *out = getenv("MPIMB_PROF_OUT"), *err;
    if (label && *label && (err = mb_check_label("MPIMB_PROF_LABEL", label))) mbp_usage_error(err);
    r->opts.label = label && *label ? label : NULL;
    r->opts.output = out && *out ? out : "results";
    if ((r->opts.trace_out = mbp_trace_path())) r->opts.trace = "MPIMB_PROF_TRACE"; /* one of the run's files too */
    mb_nodes_init(r->world, &r->nodes);
    r->nnodes = r->nodes.nnodes;
    r->ppn = r->nodes.ppn;
    mb_run_ids(r);
    r->cmdline_json = command_line();
    mb_meta_gather(r);
    char msg[512] = "";
    if (r->rank == 0) {
        /* a directory (made if missing), or a path ending in .csv */
        size_t l = strlen(r->opts.output);
        int is_file = l > 4 && !strcmp(r->opts.output + l - 4, ".csv");
        if (!is_file && mkdir(r->opts.output, 0777) && errno != EEXIST)
            snprintf(msg, sizeof msg, "MPIMB_PROF_OUT: cannot create directory '%s': %s", r->opts.output,
                     strerror(errno));
        else if (mb_open_outputs(r, msg, sizeof msg))
            memmove(msg + 16, msg, strlen(msg) + 1 < sizeof msg - 16 ? strlen(msg) + 1 : sizeof msg - 16),
                memcpy(msg, "MPIMB_PROF_OUT: ", 16);
    }
    PMPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, r->world);
    if (msg[0]) mbp_usage_error(msg);
    init_s = init_seconds;
    setup_s = now() - t0;
    return r;
}

/* ------------------------------------------------ the end */

static long long bin_bytes(int bin) { return bin >= MBP_NOSIZE ? -1 : bin == 0 ? 0 : 1ll << (bin - 1); }

/* One row from every rank's seconds x[], calls and bytes (rank 0). */
static void emit(struct mb_run *r, int call, int bin, const char *method, const double *x, const uint64_t *calls,
                 const uint64_t *bytes, size_t stride, int sized)
{
    struct mb_row row;
    mb_row_init(&row, mbp_call_names[call], method);
    row.bytes = bin_bytes(bin);
    row.iters = row.reps = -1;
    snprintf(row.stop_reason, sizeof row.stop_reason, "finalize");
    if (mbp.sync && mbp_call_family[call] == MBP_FAM_COLL) mb_param(&row, "sync", "barrier");
    long long nc = 0, nb = 0;
    int slowest = 0;
    for (int p = 0; p < r->nprocs; p++) {
        nc += (long long)calls[p * stride];
        nb += (long long)bytes[p * stride];
        if (x[p * stride] > x[slowest * stride]) slowest = p;
    }
    double *t = malloc((size_t)r->nprocs * sizeof *t);
    for (int p = 0; p < r->nprocs; p++) t[p] = x[p * stride];
    mb_stats_compute(t, r->nprocs, &row.t); /* over ranks */
    free(t);
    row.t.rank_min = row.t.rank_mean = -1;
    row.calls = nc;
    row.total_bytes = sized ? nb : -1;
    row.slowest_rank = slowest;
    if (!r->lost && mb_csv_row(r, &row)) r->lost = strerror(errno); /* a row whole or none, and none after */
    if (!r->lost) r->nrows++;
}

/* The communication matrix: every rank's nonzero (peer, kind, messages,
 * bytes) to rank 0, which writes them beside the results. */
static char *write_matrix(struct mb_run *r)
{
    int n = 0;
    for (int k = 0; k < MBP_NMAT; k++)
        for (int p = 0; p < mbp.size; p++) n += mbp.msgs[k][p] > 0;
    uint64_t *mine = malloc(4 * ((size_t)n + 1) * sizeof *mine), *all = NULL;
    n = 0;
    for (int k = 0; k < MBP_NMAT; k++)
        for (int p = 0; p < mbp.size; p++)
            if (mbp.msgs[k][p]) {
                uint64_t q[4] = {(uint64_t)p, (uint64_t)k, mbp.msgs[k][p], mbp.bytes[k][p]};
                memcpy(mine + 4 * (size_t)n++, q, sizeof q);
            }
    int *counts = NULL, *displs = NULL, total = 0, len = 4 * n;
    if (r->rank == 0) {
        counts = malloc(2 * (size_t)r->nprocs * sizeof *counts);
        displs = counts + r->nprocs;
    }
    PMPI_Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, r->world);
    if (r->rank == 0) {
        for (int p = 0; p < r->nprocs; p++) displs[p] = total, total += counts[p];
        all = malloc(((size_t)total + 1) * sizeof *all);
    }
    PMPI_Gatherv(mine, len, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, r->world);
    free(mine);
    char *path = NULL;
    if (r->rank == 0) {
        path = mb_beside(r->csv_path, MB_MATRIX_SUFFIX); /* (outputs.c: one of the run's files) */
        char *aside = mb_aside_path(path);
        FILE *f = mb_aside_fopen(aside); /* written aside, renamed when whole */
        if (f) {
            fprintf(f, "%s\n", matrix_columns);
            for (int p = 0; p < r->nprocs; p++)
                for (int i = displs[p]; i < displs[p] + counts[p]; i += 4)
                    fprintf(f, "%s,%d,%llu,%s,%llu,%llu\n", r->run_id, p, (unsigned long long)all[i],
                            matrix_kinds[all[i + 1]], (unsigned long long)all[i + 2], (unsigned long long)all[i + 3]);
        }
        if (!f || fclose(f) || rename(aside, path)) {
            fprintf(stderr, "mpimb-prof: cannot write '%s': %s\n", path, strerror(errno));
            remove(aside);
            free(path);
            path = NULL;
        }
        free(aside);
        free(all);
        free(counts);
    }
    return path;
}

static void json_array(FILE *f, const char *key, const double *v, int n)
{
    fprintf(f, ",\n    \"%s\": [", key);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.9g", i ? ", " : "", v[i]);
    fputs("]", f);
}

/* The "profile" object of the metadata (rank 0). */
static char *profile_json(struct mb_run *r, const char *matrix, const double *per_rank, double spt,
                          unsigned long long untracked, const int *used, double finalize_s)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    const char *m = matrix ? strrchr(matrix, '/') : NULL;
    fprintf(f, "{\n    \"library\": \"libmpimb-prof.so\",\n    \"clock\": \"%s\",\n    \"seconds_per_tick\": %.6g,\n"
               "    \"sync\": %s,\n    \"check\": %s,\n    \"matrix_csv\": ",
            mbp_clock_name(), spt, mbp.sync ? "true" : "false", mbp.check ? "true" : "false");
    if (matrix)
        fprintf(f, "\"%s\"", m ? m + 1 : matrix);
    else
        fputs("null", f);
    fprintf(f, ",\n    \"persistent_untracked\": %llu,\n    \"finalize_seconds\": %.6f,\n    \"families\": {",
            untracked, finalize_s);
    for (int c = 0, first = 1; c < MBP_NCALLS; c++)
        if (used[c * MBP_NBINS + MBP_ALL]) {
            fprintf(f, "%s\"%s\": \"%s\"", first ? "" : ", ", mbp_call_names[c], mbp_family_names[mbp_call_family[c]]);
            first = 0;
        }
    fputs("}", f);
    /* per rank: seconds from MPI_Init's return to MPI_Finalize, in wrapped calls, at the optional barrier */
    static const char *const keys[] = {"wall_seconds", "mpi_seconds", "sync_seconds"};
    double *v = malloc((size_t)r->nprocs * sizeof *v);
    for (int k = 0; k < 3; k++) {
        for (int p = 0; p < r->nprocs; p++) v[p] = per_rank[3 * p + k];
        json_array(f, keys[k], v, r->nprocs);
    }
    free(v);
    fputs("\n  }", f);
    fclose(f);
    return s;
}

void mbp_write_run(struct mb_run *r, double spt, double wall)
{
    double t0 = now();
    enum { NCELL = MBP_NCALLS * MBP_NBINS };
    double mpi = 0, sync = 0;
    for (int c = 0; c < MBP_NCALLS; c++) {
        struct mbp_cell all = {0}, *cell = mbp.cell[c];
        for (int b = 0; b < MBP_ALL; b++) {
            all.calls += cell[b].calls;
            all.bytes += cell[b].bytes;
            all.ticks += cell[b].ticks;
            all.sync_ticks += cell[b].sync_ticks;
        }
        cell[MBP_ALL] = all;
        mpi += (double)all.ticks * spt;
        sync += (double)all.sync_ticks * spt;
    }
    /* the cells any rank used: no-size calls have only their total */
    int *used = calloc(NCELL, sizeof *used);
    for (int i = 0; i < NCELL; i++) used[i] = i % MBP_NBINS != MBP_NOSIZE && mbp.cell[i / MBP_NBINS][i % MBP_NBINS].calls;
    PMPI_Allreduce(MPI_IN_PLACE, used, NCELL, MPI_INT, MPI_MAX, r->world);
    int n = 0;
    for (int i = 0; i < NCELL; i++) n += used[i];
    /* per used cell: seconds in the call and at the barrier, calls, bytes */
    double *secs = malloc(2 * ((size_t)n + 1) * sizeof *secs), *all_secs = NULL;
    uint64_t *cnt = malloc(2 * ((size_t)n + 1) * sizeof *cnt), *all_cnt = NULL;
    for (int i = 0, k = 0; i < NCELL; i++)
        if (used[i]) {
            const struct mbp_cell *c = &mbp.cell[i / MBP_NBINS][i % MBP_NBINS];
            secs[2 * k] = (double)c->ticks * spt;
            secs[2 * k + 1] = (double)c->sync_ticks * spt;
            cnt[2 * k] = c->calls;
            cnt[2 * k + 1] = c->bytes;
            k++;
        }
    double mine[3] = {wall, mpi, sync}, *per_rank = NULL;
    if (r->rank == 0) {
        all_secs = malloc(2 * ((size_t)n + 1) * (size_t)r->nprocs * sizeof *all_secs);
        all_cnt = malloc(2 * ((size_t)n + 1) * (size_t)r->nprocs * sizeof *all_cnt);
        per_rank = malloc(3 * (size_t)r->nprocs * sizeof *per_rank);
    }
    PMPI_Gather(secs, 2 * n, MPI_DOUBLE, all_secs, 2 * n, MPI_DOUBLE, 0, r->world);
    PMPI_Gather(cnt, 2 * n, MPI_UINT64_T, all_cnt, 2 * n, MPI_UINT64_T, 0, r->world);
    PMPI_Gather(mine, 3, MPI_DOUBLE, per_rank, 3, MPI_DOUBLE, 0, r->world);
    free(secs);
    free(cnt);
    unsigned long long untracked = mbp.untracked, untracked_all = 0;
    PMPI_Reduce(&untracked, &untracked_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, r->world);
    double costs[2] = {init_s, setup_s}, most[2];
    PMPI_Reduce(costs, most, 2, MPI_DOUBLE, MPI_MAX, 0, r->world);
    mb_costs.init_s = most[0];
    mb_costs.setup_s = most[1];
    mb_costs_rss(r);
    char *matrix = write_matrix(r);

    if (r->rank == 0) {
        int *pos = malloc(NCELL * sizeof *pos);
        for (int i = 0, k = 0; i < NCELL; i++) pos[i] = used[i] ? k++ : -1;
        size_t stride = 2 * (size_t)n;
        for (int c = 0; c < MBP_NCALLS; c++) {
            const int *u = used + c * MBP_NBINS, *at = pos + c * MBP_NBINS;
            if (!u[MBP_ALL]) continue;
            int sized = 0;
            for (int b = 0; b < MBP_SIZEBINS; b++) sized |= u[b];
            /* the time in the call; then, with MPIMB_PROF_SYNC=1, the wait at the barrier before it */
            for (int m = 0; m < 1 + (mbp.sync && mbp_call_family[c] == MBP_FAM_COLL); m++) {
                const char *method = m ? "sync-wait" : "";
                for (int b = -1; b < MBP_SIZEBINS; b++) { /* -1: the total over every size first */
                    int bin = b < 0 ? MBP_ALL : b;
                    if (!u[bin]) continue;
                    size_t k = 2 * (size_t)at[bin];
                    emit(r, c, bin, method, all_secs + k + m, all_cnt + k, all_cnt + k + 1, stride,
                         b >= 0 || sized);
                }
            }
        }
        free(pos);
        char *prof = profile_json(r, matrix, per_rank, spt, untracked_all, used, now() - t0);
        mb_meta_add(r, "profile", prof);
        free(prof);
        if (r->lost) /* the metadata on disk (complete: false) stays: the CSV lacks rows */
            fprintf(stderr, "mpimb-prof: cannot write '%s': %s; the profile is incomplete\n", r->csv_path, r->lost);
        else if (mb_meta_write(r, 1))
            fprintf(stderr, "mpimb-prof: cannot write '%s': %s\n", r->json_path, strerror(errno));
        fclose(r->csv);
        fprintf(stderr, "mpimb-prof: profile in %s (+ .json%s)\n", r->csv_path, matrix ? ", -matrix.csv" : "");
        free(all_secs);
        free(all_cnt);
        free(per_rank);
        free(matrix);
    }
    free(used);
    mb_nodes_free(&r->nodes);
    mb_meta_release();
    free(r->extra_meta);
    free(r->cmdline_json);
    free(r->csv_path);
    free(r->json_path);
    free(r);
}
