/* Run metadata: who ran what, where, with which MPI, bound how.  Written by
 * rank 0 as JSON next to the CSV at start (complete: false) and again at the
 * end (complete: true), each time atomically (write, then rename). */
#include "internal.h"

#include <hwloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The Makefile passes these (VERSION, git or the tarball's commit, the
 * compiler and its flags) to this file alone. */
#ifndef MB_VERSION
#define MB_VERSION "unknown"
#endif
#ifndef MB_GIT_COMMIT
#define MB_GIT_COMMIT "unknown"
#endif
#ifndef MB_CC
#define MB_CC "unknown"
#endif
#ifndef MB_CFLAGS
#define MB_CFLAGS ""
#endif

enum { REC = 128 }; /* bytes per rank: host name, then cpu list */

static struct {
    char *recs; /* rank 0: nprocs records */
    int *bound; /* rank 0: whether each rank's binding is narrower than what the machine allows (-1: unknown) */
    int unbound, unknown, shared; /* ranks not bound, not known; ranks sharing a cpu with another rank of their host */
    int packages, numa, cores, pus;
    /* the most loaded host: its ranks x threads per rank against the PUs its ranks may use */
    int os_ranks, os_pus, os_host; /* os_host: the first rank on it; os_pus 0: not known */
    long os_threads;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int ver, subver;
} M;

struct mb_costs mb_costs; /* filled by run.c */

const char mb_suite_version[] = MB_VERSION;

/* The MPI library this binary was compiled for, from the macros its mpi.h
 * defines (the Makefile names build/<library>/ the same way). */
#if defined(MB_SIMULATED)
const char mb_built_with[] = "smpi", mb_built_with_name[] = "SimGrid SMPI";
#elif defined(I_MPI_VERSION)
const char mb_built_with[] = "intelmpi", mb_built_with_name[] = "Intel MPI";
#elif defined(MVAPICH2_VERSION)
const char mb_built_with[] = "mvapich2", mb_built_with_name[] = "MVAPICH2";
#elif defined(OPEN_MPI)
const char mb_built_with[] = "openmpi", mb_built_with_name[] = "Open MPI";
#elif defined(MPICH_VERSION)
const char mb_built_with[] = "mpich", mb_built_with_name[] = "MPICH";
#else
const char mb_built_with[] = "unknown", mb_built_with_name[] = "an unknown MPI";
#endif

extern char **environ;

void mb_utc_now(char *buf, size_t len, int compact)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* MPIMB_LAUNCH=series=TOKEN;index=I;of=N: which of N launches of one
 * configuration this run is (set by the script that runs the series). */
static struct {
    int set;
    char series[65];
    long index, of;
} launch;

/* [s, ...) starts with key=DIGITS up to end (';' or the string's end): the number, or -1 */
static long launch_number(const char *s, const char *key, char end, const char **next)
{
    size_t k = strlen(key), n = 0;
    if (strncmp(s, key, k)) return -1;
    s += k;
    long v = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < 6) v = 10 * v + (s[n++] - '0');
    if (n == 0 || s[0] == '0' || s[n] != end) return -1;
    *next = s + n + (end ? 1 : 0);
    return v;
}

const char *mb_launch_parse(const char *v)
{
    static char why[256];
    if (!v) return NULL;
    const char *p = v, *t = v;
    size_t len = 0;
    int ok = !strncmp(p, "series=", 7);
    if (ok) {
        t = p += 7;
        while (t[len] && (strchr("._-", t[len]) || (t[len] >= '0' && t[len] <= '9') ||
                          ((t[len] | 32) >= 'a' && (t[len] | 32) <= 'z')))
            len++;
        ok = len >= 1 && len <= 64 && t[len] == ';';
        p = t + len + 1;
    }
    long i = ok ? launch_number(p, "index=", ';', &p) : -1, n = i > 0 ? launch_number(p, "of=", 0, &p) : -1;
    if (!ok || i < 1 || n < i || n > 10000) {
        snprintf(why, sizeof why, "MPIMB_LAUNCH='%.60s%s' is not series=TOKEN;index=I;of=N (TOKEN: 1 to 64 of "
                                  "A-Z a-z 0-9 . _ -; 1 <= I <= N <= 10000)",
                 v, strlen(v) > 60 ? "..." : "");
        return why;
    }
    launch.set = 1;
    snprintf(launch.series, sizeof launch.series, "%.*s", (int)len, t);
    launch.index = i;
    launch.of = n;
    return NULL;
}

#ifndef MB_SIMULATED
static int count_type(hwloc_topology_t t, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(t, type);
    return n < 0 ? 0 : n;
}
#endif

void mb_meta_release(void)
{
    free(M.recs);
    free(M.bound);
    M.recs = NULL;
    M.bound = NULL;
}

#ifndef MB_SIMULATED
/* Rank 0: ranks of one host whose cpu sets overlap (two ranks on one core
 * disturb each other as much as an unbound pair). */
static int shared_cpus(int nprocs)
{
    int n = 0;
    hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
    for (int r = 0; r < nprocs; r++) {
        const char *rec = M.recs + (size_t)r * REC;
        if (M.bound[r] != 1 || hwloc_bitmap_list_sscanf(a, rec + REC / 2)) continue;
        for (int q = 0; q < nprocs; q++) {
            const char *other = M.recs + (size_t)q * REC;
            if (q == r || strcmp(rec, other) || M.bound[q] != 1 || hwloc_bitmap_list_sscanf(b, other + REC / 2))
                continue;
            if (hwloc_bitmap_intersects(a, b)) {
                n++;
                break;
            }
        }
    }
    hwloc_bitmap_free(a);
    hwloc_bitmap_free(b);
    return n;
}
#endif

#ifndef MB_SIMULATED
/* Rank 0: the union of the cpu sets of rank r's host's ranks (an unbound
 * rank's is everything it may use) into set; returns how many ranks the host
 * has, negated when some rank's set is not known. */
static int host_cpus(int nprocs, int r, hwloc_bitmap_t set, hwloc_bitmap_t one)
{
    const char *rec = M.recs + (size_t)r * REC;
    int ranks = 0, known = 1;
    hwloc_bitmap_zero(set);
    for (int q = 0; q < nprocs; q++) {
        const char *other = M.recs + (size_t)q * REC;
        if (strcmp(rec, other)) continue;
        ranks++;
        if (hwloc_bitmap_list_sscanf(one, other + REC / 2)) known = 0;
        else hwloc_bitmap_or(set, set, one);
    }
    return known ? ranks : -ranks;
}

/* Rank 0: per host, its ranks' PUs against ranks x threads; keeps the most loaded. */
static void oversubscription(const struct mb_run *run)
{
    long T = run->prog->threads_var ? *run->prog->threads_var : 1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
    for (int r = 0; r < run->nprocs; r++) {
        const char *rec = M.recs + (size_t)r * REC;
        int first = 1;
        for (int q = 0; q < r && first; q++) first = strcmp(rec, M.recs + (size_t)q * REC) != 0;
        if (!first) continue; /* hosts are counted at their first rank */
        int ranks = host_cpus(run->nprocs, r, set, one);
        int pus = ranks > 0 ? hwloc_bitmap_weight(set) : 0;
        long load = (long)ranks * T;
        if (pus > 0 && (M.os_pus == 0 || load * M.os_pus > (long)M.os_ranks * M.os_threads * pus)) {
            M.os_ranks = ranks;
            M.os_threads = T;
            M.os_pus = pus;
            M.os_host = r;
        }
    }
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(one);
}

/* Collective over world: every rank gets the PUs its host's ranks use (the
 * union oversubscription() weighs) as a list ("0-3,8"), or "" where some
 * rank's are not known. */
void mb_meta_host_cpus(const struct mb_run *run, char *list, size_t len)
{
    char *all = NULL;
    if (run->rank == 0) {
        all = calloc((size_t)run->nprocs, len);
        hwloc_bitmap_t set = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
        for (int r = 0; r < run->nprocs; r++) {
            char *mine = all + (size_t)r * len;
            int q = 0;
            while (strcmp(M.recs + (size_t)q * REC, M.recs + (size_t)r * REC)) q++;
            if (q < r) /* the host's first rank has it already */
                memcpy(mine, all + (size_t)q * len, len);
            else if (host_cpus(run->nprocs, r, set, one) > 0 && hwloc_bitmap_list_snprintf(mine, len, set) >= (int)len)
                mine[0] = 0; /* cut short: not known */
        }
        hwloc_bitmap_free(set);
        hwloc_bitmap_free(one);
    }
    MPI_Scatter(all, (int)len, MPI_CHAR, list, (int)len, MPI_CHAR, 0, run->world);
    free(all);
}
#endif

const char *mb_meta_host(int rank) { return M.recs ? M.recs + (size_t)rank * REC : "unknown"; }

int mb_oversubscribed(void) { return M.os_pus > 0 && (long)M.os_ranks * M.os_threads > M.os_pus; }

void mb_print_caveats(FILE *f, const struct mb_run *run)
{
    if (run->rank != 0) return;
    if (mb_oversubscribed())
        fprintf(f, "OVERSUBSCRIBED: %d ranks x %ld thread(s) on %.*s share %d PUs: these figures are the OS "
                   "scheduler's, not MPI's\n",
                M.os_ranks, M.os_threads, REC / 2, M.recs + (size_t)M.os_host * REC, M.os_pus);
    if (run->opts.max_reps < MB_CI_MIN_REPS)
        fprintf(f, "%s: at most %ld repetitions per test, fewer than the %d a 95 %% interval needs: no verdicts\n",
                run->opts.quick ? "--quick" : "--max-reps", run->opts.max_reps, MB_CI_MIN_REPS);
}

/* Rank 0: measured rows (those with a 95 % interval) and how many of them
 * have an interval wider than their median. */
static int wide_rows(const struct mb_run *run, int *measured)
{
    int wide = 0;
    *measured = 0;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_stats *t = &run->rows[i].t;
        if (run->rows[i].na || !isfinite(t->ci_lo) || !isfinite(t->ci_hi) || !(t->median > 0)) continue;
        ++*measured;
        wide += t->ci_hi - t->ci_lo > t->median;
    }
    return wide;
}

void mb_print_end_caveats(FILE *f, const struct mb_run *run)
{
    if (run->rank != 0) return;
    int few = 0, rows = 0;
    for (int i = 0; i < run->nrows; i++) {
        rows += !run->rows[i].na;
        few += mb_row_few(&run->rows[i]);
    }
    if (few) /* (a --max-reps below 6 is said at the start: its rows end on max-reps) */
        fprintf(f, "FEW REPETITIONS: %d of %d rows ended with fewer than the %d repetitions a 95 %% interval needs "
                   "when the time budget ran out (marked ~ in the tables): no verdict rests on them\n",
                few, rows, MB_CI_MIN_REPS);
    int measured, wide = wide_rows(run, &measured);
    if (2 * wide > measured)
        fprintf(f, "WIDE INTERVALS: %d of %d measured rows have a 95 %% interval wider than their median: this run "
                   "is too noisy to judge anything by\n",
                wide, measured);
}

void mb_binding_warn(struct mb_run *run)
{
    if (run->rank != 0 || run->warned_binding || !M.bound) return;
    run->warned_binding = 1;
    if (mb_oversubscribed())
        fprintf(stderr,
                "%s: warning: oversubscribed: %d ranks x %ld thread(s) on %.*s share %d PUs, so figures measure "
                "the OS scheduler; run at most %ld ranks per node (mpiexec -n, srun --ntasks-per-node) or fewer "
                "threads\n",
                run->prog->name, M.os_ranks, M.os_threads, REC / 2, M.recs + (size_t)M.os_host * REC, M.os_pus,
                M.os_pus / M.os_threads > 0 ? M.os_pus / M.os_threads : 1);
    if (M.unbound)
        fprintf(stderr,
                "%s: warning: %d of %d ranks are not bound to cores, so figures vary more from run to run; bind "
                "them: mpiexec -bind-to core (MPICH), mpiexec --bind-to core (Open MPI), "
                "srun --cpu-bind=cores (Slurm)\n",
                run->prog->name, M.unbound, run->nprocs);
    else if (M.shared)
        fprintf(stderr, "%s: warning: %d ranks share cores with other ranks of their node (the JSON's ranks[].cpus)\n",
                run->prog->name, M.shared);
}

/* Collective over the run's world: every rank contributes its host and binding. */
void mb_meta_gather(struct mb_run *run)
{
    char rec[REC] = {0}, cpus[REC / 2] = "unknown";
    int len = 0, bound = -1;
    char host[MPI_MAX_PROCESSOR_NAME];
    mb_node_name(host, sizeof host);
#ifdef MB_SIMULATED
    /* SMPI: every rank lives in this one process; the real machine's topology
     * says nothing about the simulated node, and 1024 loads cost minutes. */
    snprintf(cpus, sizeof cpus, "simulated");
#else
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0) {
        hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE); /* no PCI scan */
        if (hwloc_topology_load(topo) == 0) {
            hwloc_bitmap_t set = hwloc_bitmap_alloc();
            if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
                hwloc_bitmap_list_snprintf(cpus, sizeof cpus, set);
                /* bound: narrower than every cpu this process may use */
                bound = !hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(topo), set);
            }
            hwloc_bitmap_free(set);
            if (run->rank == 0) {
                M.packages = count_type(topo, HWLOC_OBJ_PACKAGE);
                M.numa = count_type(topo, HWLOC_OBJ_NUMANODE);
                M.cores = count_type(topo, HWLOC_OBJ_CORE);
                M.pus = count_type(topo, HWLOC_OBJ_PU);
            }
        }
        hwloc_topology_destroy(topo);
    }
#endif
    memcpy(rec, host, strnlen(host, REC / 2 - 1)); /* rec is zeroed: both stay terminated */
    memcpy(rec + REC / 2, cpus, strnlen(cpus, REC / 2 - 1));
    if (run->rank == 0) M.recs = malloc((size_t)run->nprocs * REC);
    MPI_Gather(rec, REC, MPI_CHAR, M.recs, REC, MPI_CHAR, 0, run->world);
    if (run->rank == 0) M.bound = malloc((size_t)run->nprocs * sizeof *M.bound);
    MPI_Gather(&bound, 1, MPI_INT, M.bound, 1, MPI_INT, 0, run->world);
#ifndef MB_SIMULATED
    if (run->rank == 0) {
        for (int r = 0; r < run->nprocs; r++) {
            M.unbound += M.bound[r] == 0;
            M.unknown += M.bound[r] < 0;
        }
        M.shared = shared_cpus(run->nprocs);
        oversubscription(run);
    }
#endif
    MPI_Get_library_version(M.lib, &len);
    MPI_Get_version(&M.ver, &M.subver);
}

void mb_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Variables that change how MPI, UCX or Slurm behave. */
static void environment(FILE *f)
{
    static const char *const prefixes[] = {"MPICH_", "MPIR_CVAR_", "OMPI_", "PMIX_MCA_", "UCX_", "SLURM_",
                                           "I_MPI_", "HWLOC_", "OMP_", "FI_", "PSM2_", "SMPI_"};
    int first = 1;
    fputs("{", f);
    for (char **e = environ; e && *e; e++) {
        for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
            if (strncmp(*e, prefixes[i], strlen(prefixes[i]))) continue;
            const char *eq = strchr(*e, '=');
            if (!eq) break;
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
            fprintf(f, "%s\n    ", first ? "" : ",");
            mb_json_str(f, key);
            fputs(": ", f);
            mb_json_str(f, eq + 1);
            first = 0;
            break;
        }
    }
    fputs(first ? "}" : "\n  }", f);
}

static void hosts(FILE *f, const struct mb_run *run)
{
    fputs("[", f);
    for (int r = 0; r < run->nprocs; r++) {
        const char *h = M.recs + (size_t)r * REC;
        int seen = 0;
        for (int q = 0; q < r && !seen; q++) seen = !strcmp(h, M.recs + (size_t)q * REC);
        if (seen) continue;
        fputs(r ? ", " : "", f);
        mb_json_str(f, h);
    }
    fputs("]", f);
}

static void ranks(FILE *f, const struct mb_run *run)
{
    fputs("[", f);
    for (int r = 0; r < run->nprocs; r++) {
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", r ? "," : "", r);
        mb_json_str(f, M.recs + (size_t)r * REC);
        fputs(", \"cpus\": ", f);
        mb_json_str(f, M.recs + (size_t)r * REC + REC / 2);
        fprintf(f, ", \"bound\": %s", M.bound[r] < 0 ? "null" : M.bound[r] ? "true" : "false");
        if (run->nodes.node_of) fprintf(f, ", \"node\": %d", run->nodes.node_of[r]); /* the node map itself */
        fputs("}", f);
    }
    fputs("\n  ]", f);
}

/* which run: its ids, program, build, command, times and whether it ended */
static void render_identity(FILE *f, const struct mb_run *run, int complete, const char *ended_by)
{
    char end[32];
    mb_utc_now(end, sizeof end, 0);
    fprintf(f, "{\n  \"schema_version\": %d,\n  \"run_id\": ", MB_SCHEMA_VERSION);
    mb_json_str(f, run->run_id);
    fputs(",\n  \"program\": ", f);
    mb_json_str(f, run->prog->name);
    fputs(",\n  \"label\": ", f);
    mb_json_str(f, run->label);
    if (launch.set) {
        fputs(",\n  \"launch\": {\"series\": ", f);
        mb_json_str(f, launch.series);
        fprintf(f, ", \"index\": %ld, \"of\": %ld}", launch.index, launch.of);
    }
    fputs(",\n  \"suite_version\": ", f);
    mb_json_str(f, mb_suite_version);
    fputs(",\n  \"git_commit\": ", f);
    mb_json_str(f, MB_GIT_COMMIT);
    fputs(",\n  \"command_line\": ", f);
    fputs(run->cmdline_json ? run->cmdline_json : "[]", f);
    fprintf(f, ",\n  \"start_utc\": \"%s\",\n  \"end_utc\": ", run->start_utc);
    if (complete)
        fprintf(f, "\"%s\"", end);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"complete\": %s,\n", complete ? "true" : "false");
    if (ended_by) fprintf(f, "  \"ended_by\": \"%s\",\n", ended_by);
}

/* real or simulated, and on which platform file */
static void render_platform(FILE *f)
{
#ifdef MB_SIMULATED
    fputs("  \"simulated\": true,\n", f);
    /* set by scripts/simulate: which platform file, byte for byte */
    static const char *const platform_env[][2] = {{"name", "MPIMB_PLATFORM"}, {"file", "MPIMB_PLATFORM_FILE"},
                                                  {"sha256", "MPIMB_PLATFORM_SHA256"},
                                                  {"smpi_config", "MPIMB_SMPI_CONFIG"}};
    fputs("  \"platform\": {", f);
    for (size_t i = 0; i < sizeof platform_env / sizeof *platform_env; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", platform_env[i][0]);
        const char *v = getenv(platform_env[i][1]);
        if (v)
            mb_json_str(f, v);
        else
            fputs("null", f);
    }
    fputs("},\n", f);
#else
    fputs("  \"simulated\": false,\n", f);
#endif
}

/* where it ran: load, the CSV, the MPI library, the ranks, hosts and topology */
static void render_machine(FILE *f, struct mb_run *run)
{
    /* ranks x threads beyond a node's PUs: every figure is marked (simulated ranks share no real cores) */
    fprintf(f, "  \"oversubscribed\": %s,\n", mb_oversubscribed() ? "true" : "false");
    if (M.os_pus > 0) {
        fputs("  \"oversubscription\": {\"host\": ", f);
        mb_json_str(f, M.recs + (size_t)M.os_host * REC);
        fprintf(f, ", \"ranks\": %d, \"threads_per_rank\": %ld, \"pus\": %d},\n", M.os_ranks, M.os_threads,
                M.os_pus);
    }
    if (run->load_json) run->load_json(f); /* how much of the ranks' PUs others took (busy.c, set by run.c) */
    fputs("  \"csv\": ", f);
    mb_json_str(f, strrchr(run->csv_path, '/') ? strrchr(run->csv_path, '/') + 1 : run->csv_path);
    fprintf(f, ",\n  \"rows\": %d,\n  \"mpi\": {\n    \"built_with\": \"%s\",\n    \"library_version\": ",
            run->nrows, mb_built_with);
    mb_json_str(f, M.lib);
    fprintf(f, ",\n    \"standard_version\": \"%d.%d\",\n    \"thread_level_requested\": \"%s\",\n"
               "    \"thread_level_provided\": \"%s\"\n  },\n",
            M.ver, M.subver, mb_thread_level_name(run->thread_level_req), mb_thread_level_name(run->thread_level));
    fprintf(f, "  \"nprocs\": %d,\n  \"nnodes\": %d,\n  \"ppn\": %d,\n  \"hosts\": ", run->nprocs, run->nnodes,
            run->ppn);
    hosts(f, run);
    fputs(",\n  \"ranks\": ", f);
    ranks(f, run);
#ifdef MB_SIMULATED
    fputs(",\n  \"topology\": {\"source\": \"none: simulated platform\", \"packages\": 0, \"numa_nodes\": 0, "
          "\"cores\": 0, \"pus\": 0},\n", f);
#else
    fprintf(f, ",\n  \"topology\": {\"source\": \"hwloc %s\", \"packages\": %d, \"numa_nodes\": %d, "
               "\"cores\": %d, \"pus\": %d},\n",
            HWLOC_VERSION, M.packages, M.numa, M.cores, M.pus);
#endif
}

/* how it was built and what it was asked: compiler, options, starts and order */
static void render_options(FILE *f, struct mb_run *run)
{
    const struct mb_opts *o = &run->opts;
    fputs("  \"compiler\": {\"mpicc\": ", f);
    mb_json_str(f, MB_CC);
    fputs(", \"version\": ", f);
    mb_json_str(f, __VERSION__);
    fputs(", \"flags\": ", f);
    mb_json_str(f, MB_CFLAGS);
    fputs("},\n  \"options\": {", f);
    const int timed = !(run->prog->flags & MB_NOT_TIMED); /* the profiler's settings are its own */
    if (timed) {
        fprintf(f, "\"quick\": %s, \"verify\": %s, \"timeout\": %g, \"reps\": %ld, "
                   "\"max_reps\": %ld, \"rel_ci\": %g, \"time_budget\": %g, \"min_rep_time\": %g, "
                   "\"warmup\": %ld, \"stat\": \"%s\"",
                o->quick ? "true" : "false", o->verify ? "true" : "false", o->timeout, o->reps, o->max_reps,
                o->rel_ci, o->time_budget, o->min_rep_time, o->warmup, mb_stat_name(o->stat));
        if (run->prog->flags & MB_USES_SIZES)
            fprintf(f, ", \"sizes\": [%zu, %zu], \"sweep_budget\": %g", o->size_min, o->size_max, o->sweep_budget);
        if (run->prog->flags & MB_OVERLAP) fprintf(f, ", \"overlap\": %g", o->overlap);
        fprintf(f, ", \"window_us\": %g, \"order\": \"%s\"", o->window_us, o->shuffle ? "shuffle" : "fixed");
    }
    fputs("}", f);
    if (timed) { /* how repetitions started; in which order the tests ran */
        mb_sync_meta(f, run);
        fprintf(f, ",\n  \"order\": {\"mode\": \"%s\", \"seed\": ", o->shuffle ? "shuffle" : "fixed");
        if (o->shuffle)
            fprintf(f, "%lld}", o->order_seed);
        else
            fputs("null}", f);
    }
}

/* what else could move its figures: binding, environment, the suite's own costs */
static void render_context(FILE *f)
{
    /* whether ranks were bound */
#ifdef MB_SIMULATED
    fputs(",\n  \"binding\": {\"checked\": false, \"why\": \"simulated ranks\"}", f);
#else
    fprintf(f, ",\n  \"binding\": {\"checked\": true, \"bound\": %s, \"unbound_ranks\": %d, "
               "\"ranks_sharing_cpus\": %d}",
            M.unbound ? "false" : M.unknown ? "null" : "true", M.unbound, M.shared);
#endif
    fputs(",\n  \"environment\": ", f);
    environment(f);
    /* what the suite itself costs, apart from the measurements (max over ranks) */
#ifdef MB_SIMULATED
    /* SMPI: MPI_Init's real time is not measurable from inside (clock_gettime
     * is simulated), set-up is simulated time, and every rank lives in one
     * process, so the memory is the whole simulator's */
    fprintf(f, ",\n  \"costs\": {\"mpi_init_seconds\": null, \"setup_seconds\": %.6f, "
               "\"simulator_peak_rss_kib\": %ld}",
            mb_costs.setup_s, mb_costs.rss_max_kib);
#else
    fprintf(f, ",\n  \"costs\": {\"mpi_init_seconds\": %.6f, \"setup_seconds\": %.6f, "
               "\"peak_rss_kib_max\": %ld, \"peak_rss_kib_mean\": %ld}",
            mb_costs.init_s, mb_costs.setup_s, mb_costs.rss_max_kib, mb_costs.rss_mean_kib);
#endif
}

void mb_meta_render(FILE *f, struct mb_run *run, int complete, const char *ended_by)
{
    render_identity(f, run, complete, ended_by);
    render_platform(f);
    render_machine(f, run);
    render_options(f, run);
    render_context(f);
    if (run->extra_meta) fputs(run->extra_meta, f);
    fputs("\n}\n", f);
}

/* Rank 0: returns 0 or -1 (errno set). */
int mb_meta_aside(struct mb_run *run, int complete)
{
    char *tmp = mb_aside_path(run->json_path);
    FILE *f = mb_aside_fopen(tmp); /* made afresh: a link there is not written through */
    int rc = -1;
    if (f) {
        mb_meta_render(f, run, complete, NULL);
        rc = fclose(f) ? -1 : 0;
        if (rc) remove(tmp);
    }
    free(tmp);
    return rc;
}

int mb_meta_write(struct mb_run *run, int complete)
{
    if (mb_meta_aside(run, complete)) return -1;
    char *tmp = mb_aside_path(run->json_path);
    int rc = rename(tmp, run->json_path);
    if (rc) remove(tmp);
    free(tmp);
    return rc;
}

/* A key and its JSON value for the metadata: the programs' own sections, the rounds file, the trace. */
void mb_meta_add(struct mb_run *run, const char *key, const char *raw_json)
{
    if (run->rank != 0) return;
    size_t old = run->extra_meta ? strlen(run->extra_meta) : 0, n = old + strlen(key) + strlen(raw_json) + 16;
    run->extra_meta = realloc(run->extra_meta, n);
    snprintf(run->extra_meta + old, n - old, ",\n  \"%s\": %s", key, raw_json);
}
