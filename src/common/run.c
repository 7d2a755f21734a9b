/* The life of a run: start (options, MPI, output files), one call pair per
 * test (mb_begin / mb_end), and the end (metadata, MPI_Finalize). */
#include "internal.h"
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

char *mb_cmdline_json(int argc, char **argv)
{
    size_t cap = 16;
    for (int i = 0; i < argc; i++) cap += 2 * strlen(argv[i]) + 4;
    char *s = malloc(cap), *p = s;
    *p++ = '[';
    for (int i = 0; i < argc; i++) {
        p += sprintf(p, "%s\"", i ? ", " : "");
        for (const char *c = argv[i]; *c; c++) {
            if (*c == '"' || *c == '\\') *p++ = '\\';
            *p++ = (unsigned char)*c < 0x20 ? ' ' : *c;
        }
        *p++ = '"';
    }
    strcpy(p, "]");
    return s;
}

static _Noreturn void finalize_exit(int code)
{
    fflush(NULL);
    MPI_Finalize();
    exit(code);
}

static void remove_outputs(struct mb_run *run)
{
    mb_term_release(); /* a SIGTERM now must not write the metadata back */
    if (run->rank != 0 || !run->csv) return;
    fclose(run->csv);
    run->csv = NULL;
    if (run->raw) fclose(run->raw);
    run->raw = NULL;
    mb_trace_release();
    mb_outputs_remove(); /* before measuring: only the files aside, an earlier run's stay */
}

/* One line from rank 0, no files left, every rank exits with code. */
static _Noreturn __attribute__((format(printf, 3, 0))) void fail_exit(struct mb_run *run, int code, const char *fmt,
                                                                       va_list ap)
{
    if (run->rank == 0) {
        fprintf(stderr, "%s: ", run->prog->name);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    remove_outputs(run);
    mb_trace_discard(run); /* a refused or failed run leaves no trace file either */
    mb_watchdog_stop();
    /* nobody exits before rank 0 has removed the files: an early exit makes
     * the launcher signal the others */
    MPI_Barrier(run->world);
    finalize_exit(code);
}

void mb_usage_error(struct mb_run *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_exit(run, 2, fmt, ap); /* a usage error leaves no stray files */
}

static _Noreturn __attribute__((format(printf, 3, 4))) void start_failed(struct mb_run *run, int code,
                                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_exit(run, code, fmt, ap);
}

/* Whose fault a failed write is: the device's (full, over quota, failing:
 * the run failed, exit 1) or the path's (missing, not writable, read-only:
 * the command line names another, exit 2). */
static int write_failure(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EIO || err == EFBIG ? 1 : 2;
}

/* Host name up to the first dot, reduced to the characters a label allows. */
static void default_label(char *buf, size_t len)
{
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    size_t j = 0;
    for (const char *p = host; *p && *p != '.' && j + 1 < len; p++)
        buf[j++] = (strchr("._-", *p) || (*p >= '0' && *p <= '9') || ((*p | 32) >= 'a' && (*p | 32) <= 'z')) ? *p : '_';
    buf[j] = 0;
}

/* A full disk is found at start, not after an hour of measurements: a run
 * needs little, but less than 1 MiB free means rows would be lost. */
static int no_room(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash == dir ? (void)(dir[1] = 0) : (void)(*slash = 0);
    else
        snprintf(dir, sizeof dir, ".");
    struct statvfs v;
    return statvfs(dir, &v) == 0 && (unsigned long long)v.f_bavail * v.f_frsize < (1ull << 20);
}

/* 0, or why a file the run will rename onto path could not replace it: a
 * file this user may not write (as opening it would say). */
static int replaceable(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0) return 0;
    return access(path, W_OK) ? errno : 0;
}

/* Rank 0: chooses the CSV/JSON paths and writes the CSV (header), --raw's
 * file (header) and the JSON aside (mb_outputs_aside).  Returns 0, or the
 * exit code of the failure described in err (see write_failure). */
static int open_aside(struct mb_run *run, char *err, size_t len)
{
    const char *o = run->opts.output;
    char stamp[32], dir[4096] = "results";
    struct stat st;
    int made = 0, code = 0;
    mb_utc_now(stamp, sizeof stamp, 1);
    int is_dir = o && stat(o, &st) == 0 && S_ISDIR(st.st_mode);
    /* -o DIR/ names a directory, created like results/ when it is missing */
    int wants_dir = o && !is_dir && o[strlen(o) - 1] == '/';
    if (is_dir || wants_dir) {
        snprintf(dir, sizeof dir, "%s", o);
        for (size_t e = strlen(dir); e > 1 && dir[e - 1] == '/'; e--) dir[e - 1] = 0;
    }
    size_t n = strlen(dir) + strlen(run->label) + 128;
    run->csv_path = malloc(n);
    if (o && !is_dir && !wants_dir) {
        free(run->csv_path);
        run->csv_path = strdup(o);
    } else {
        if (!o || wants_dir) {
            made = mkdir(dir, 0777) == 0;
            if (!made && errno != EEXIST) {
                int e = errno;
                snprintf(err, len, "cannot create directory '%s': %s", dir, strerror(e));
                return write_failure(e);
            }
        }
        /* never overwrite another run's file started in the same second (still aside, or landed) */
        for (int k = 1;; k++) {
            snprintf(run->csv_path, n, "%s/%s-%s-np%d-%s%s%.0d.csv", dir, run->prog->name, run->label, run->nprocs,
                     stamp, k > 1 ? "-" : "", k > 1 ? k : 0);
            char *a = mb_aside_path(run->csv_path);
            int taken = access(run->csv_path, F_OK) == 0 || access(a, F_OK) == 0;
            free(a);
            if (!taken) break;
        }
    }
    run->json_path = mb_beside(run->csv_path, MB_JSON_SUFFIX);
    char *csv_aside = NULL, *raw_aside = NULL; /* set once the run made them */
    const char *bad = NULL;
    int e = 0, fd = -1;
    const char *finals[] = {run->csv_path, run->json_path, run->opts.raw};
    /* (checked before MPI_Init too, but -o DIR's names are new here, and the profiler's checked only here) */
    code = mb_outputs_check(&run->opts, run->csv_path, (run->prog->flags & MB_NOT_TIMED) != 0, err, len);
    for (int i = 0; i < 3 && !code && !e; i++)
        if ((e = replaceable(finals[i]))) bad = finals[i];
    if (e) {
        snprintf(err, len, "cannot write '%s': %s", bad, strerror(e));
        code = write_failure(e);
    }
    /* the CSV aside, locked for the run: a second run given the same names is refused */
    if (!code) {
        char *a = mb_aside_path(run->csv_path);
        if ((fd = mb_aside_create(a, 1, err, len, run->csv_path)) < 0)
            code = errno == EBUSY || errno == EEXIST ? 2 : write_failure(errno);
        else
            csv_aside = a, run->csv = fdopen(fd, "w"); /* (a stream on a new fd: fails only out of memory) */
        if (!csv_aside) free(a);
    }
    if (!code && no_room(run->csv_path)) {
        snprintf(err, len, "no space left for results in the directory of '%s'", run->csv_path);
        code = 1;
    } else if (!code) {
        mb_csv_header(run->csv);
        if ((run->opts.raw && mb_raw_open(run, err, len)) || mb_trace_claim(&run->opts, err, len)) {
            code = errno == EBUSY || errno == EEXIST ? 2 : write_failure(errno);
        } else if (fflush(run->csv) || mb_meta_aside(run, 0)) {
            int e2 = errno;
            snprintf(err, len, "cannot write '%s': %s", run->json_path, strerror(e2));
            code = write_failure(e2);
        }
    }
    if (run->raw) raw_aside = mb_aside_path(run->opts.raw); /* made by this run */
    if (!code) {
        mb_outputs_aside(run, made ? dir : NULL);
    } else { /* the run leaves nothing behind */
        if (run->csv) fclose(run->csv);
        if (run->raw) fclose(run->raw);
        run->csv = run->raw = NULL;
        mb_trace_release();
        if (csv_aside) remove(csv_aside);
        if (raw_aside) remove(raw_aside);
        if (made) rmdir(dir);
    }
    free(csv_aside);
    free(raw_aside);
    return code;
}

int mb_open_outputs(struct mb_run *run, char *err, size_t len)
{
    int code = open_aside(run, err, len);
    if (!code) mb_outputs_land();
    return code;
}

/* Label and run id come from rank 0 so every row of the run agrees;
 * collective over run->world. */
void mb_run_ids(struct mb_run *run)
{
    char ids[sizeof run->label + sizeof run->run_id] = {0};
    if (run->rank == 0) {
        char stamp[32];
        if (run->opts.label)
            snprintf(run->label, sizeof run->label, "%s", run->opts.label);
        else
            default_label(run->label, sizeof run->label);
        mb_utc_now(stamp, sizeof stamp, 1);
        mb_utc_now(run->start_utc, sizeof run->start_utc, 0);
        snprintf(run->run_id, sizeof run->run_id, "%s-%s-%04x", run->label, stamp,
                 (unsigned)(getpid() ^ (unsigned)(MPI_Wtime() * 1e6)) & 0xffff);
        memcpy(ids, run->label, sizeof run->label);
        memcpy(ids + sizeof run->label, run->run_id, sizeof run->run_id);
    }
    MPI_Bcast(ids, (int)sizeof ids, MPI_CHAR, 0, run->world);
    memcpy(run->label, ids, sizeof run->label);
    memcpy(run->run_id, ids + sizeof run->label, sizeof run->run_id);
}

/* Peak memory per rank into the metadata's costs; collective over run->world. */
void mb_costs_rss(struct mb_run *run)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long rss = ru.ru_maxrss, rmax, rsum;
    MPI_Reduce(&rss, &rmax, 1, MPI_LONG, MPI_MAX, 0, run->world);
    MPI_Reduce(&rss, &rsum, 1, MPI_LONG, MPI_SUM, 0, run->world);
    mb_costs.rss_max_kib = rmax;
    mb_costs.rss_mean_kib = rsum / run->nprocs;
}

/* A launcher and the variables it gives each process of a multi-process
 * job (measured here: `env` under mpiexec.openmpi, mpiexec.mpich, srun).
 * SLURM_NTASKS is not one: the batch script has it too, where one process
 * is what was asked for. */
#ifndef MB_SIMULATED
static const struct launcher {
    const char *lib, *size_var, *rank_var, *who, *use;
} launchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "Open MPI's mpiexec", "mpiexec.openmpi"},
    {"slurm", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "srun", "srun --mpi=TYPE of a PMI it supports (srun --mpi=list)"},
    {"mpich", "PMI_SIZE", "PMI_RANK", "MPICH's mpiexec", "mpiexec.mpich"},
};
#endif

/* Whether a launcher started this process: one of theirs gave it a job size.
 * Without one it is a singleton whatever MPI_Init would say. */
static int launched(void)
{
#ifdef MB_SIMULATED
    return 1; /* smpirun: every rank must go through MPI_Init and leave by MPI_Finalize */
#else
    for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++)
        if (getenv(launchers[i].size_var)) return 1;
    return 0;
#endif
}

/* A process alone in MPI_COMM_WORLD while its launcher started several:
 * the launcher is another MPI library's (or speaks a PMI this one does
 * not), so every process would run alone and write a 1-process result.
 * Returns 1 with the message (and whether this process should print it:
 * the launcher's rank 0 alone), before any file is opened. */
static int wrong_launcher(const struct mb_run *run, char *msg, size_t len, int *speak)
{
#ifdef MB_SIMULATED
    (void)run, (void)msg, (void)len, (void)speak;
    return 0; /* every simulated rank lives in one process */
#else
    if (run->nprocs != 1) return 0;
    const struct launcher *own = NULL, *by = NULL;
    for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++)
        if (!strcmp(launchers[i].lib, mb_built_with)) own = &launchers[i];
    if (own && getenv(own->size_var)) { /* this library's own launcher: it knows */
        if (atol(getenv(own->size_var)) <= 1) return 0;
        by = own;
    }
    for (size_t i = 0; !by && i < sizeof launchers / sizeof *launchers; i++)
        if (getenv(launchers[i].size_var) && atol(getenv(launchers[i].size_var)) > 1) by = &launchers[i];
    if (!by) return 0;
    const char *n = getenv(by->size_var), *r = getenv(by->rank_var);
    *speak = !r || atol(r) == 0;
    if (by == own)
        snprintf(msg, len, "%s: started by %s as %s=%s processes, but MPI_COMM_WORLD has 1: the launcher and the "
                           "MPI library do not talk (another installation's launcher?)",
                 run->prog->name, by->who, by->size_var, n);
    else if (!strcmp(by->lib, "slurm"))
        snprintf(msg, len, "%s: built for %s but started by srun (%s=%s) with no PMI %s understands: use %s%s%s",
                 run->prog->name, mb_built_with_name, by->size_var, n, mb_built_with_name, by->use,
                 own ? ", or " : "", own ? own->use : "");
    else
        snprintf(msg, len, "%s: built for %s but started by %s (%s=%s): use %s, or the %s build (make MPI=%s)",
                 run->prog->name, mb_built_with_name, by->who, by->size_var, n,
                 own ? own->use : "the launcher of the library it was built for", by->lib, by->lib);
    return 1;
#endif
}

/* --help (1), --version (2), --list (3) */
static void answer(const struct mb_program *prog, int action)
{
    if (action == 1) mb_print_help(prog);
    if (action == 2) printf("%s (mpimb) %s\nbuilt for %s (%s)\n", prog->name, mb_suite_version, mb_built_with_name, mb_built_with);
    if (action == 3 && prog->list) prog->list();
}

struct mb_run *mb_init(int *argc, char ***argv, const struct mb_program *prog)
{
    struct mb_run *run = calloc(1, sizeof *run);
    run->load_json = mb_load_json; /* meta.c writes busy.c's lines through it: the driver knows both */
    run->prog = prog;
    run->cmdline_json = mb_cmdline_json(*argc, *argv); /* before getopt permutes argv */
    mb_locale_c(); /* every number written with '.' decimals, whatever the environment's locale */
    char **given = malloc(((size_t)*argc + 1) * sizeof *given), trace_err[512] = "";
    memcpy(given, *argv, ((size_t)*argc + 1) * sizeof *given);
    int action = 0;
    const char *err = mb_parse_options(*argc, *argv, prog, &run->opts, &action);
    if (!err && !action) mb_trace_preload(given, &run->opts, trace_err, sizeof trace_err); /* --trace: execs */
    if (!err && trace_err[0]) err = trace_err;
    free(given);
    if (!err) err = mb_fault_parse(getenv("MPIMB_FAULT"));
    if (!err) err = mb_launch_parse(getenv("MPIMB_LAUNCH"));
    if ((err || action) && !launched()) { /* a process alone: its one line needs no MPI (nor its seconds) */
        if (err) fprintf(stderr, "%s: %s\n", prog->name, err);
        else answer(prog, action);
        fflush(NULL);
        exit(err ? 2 : 0);
    }
    run->thread_level_req = prog->thread_level_var ? *prog->thread_level_var : prog->thread_level;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    MPI_Init_thread(argc, argv, run->thread_level_req, &run->thread_level);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double t0 = MPI_Wtime(), init_s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    MPI_Comm_dup(MPI_COMM_WORLD, &run->world);
    MPI_Comm_rank(run->world, &run->rank);
    MPI_Comm_size(run->world, &run->nprocs);
    char msg[512];
    int speak = 1;
    if (wrong_launcher(run, msg, sizeof msg, &speak)) { /* before any file: each process is alone */
        if (speak) fprintf(stderr, "%s\n", msg);
        finalize_exit(2);
    }
    if (err) mb_usage_error(run, "%s", err);
    if (action) {
        if (run->rank == 0) answer(prog, action);
        finalize_exit(0);
    }
    mb_nodes_init(run->world, &run->nodes);
    for (int d = 0; d < MB_ORDER_DEPTH; d++) run->order_path[d] = -1;
    mb_order_seed(run);
    run->nnodes = run->nodes.nnodes;
    run->ppn = run->nodes.ppn;

    mb_run_ids(run);
    mb_meta_gather(run);
    mb_load_start(run); /* the machine's load while the run measures: from here to mb_finish */
    struct {
        int code;
        char msg[512];
    } out = {0, ""};
    if (run->rank == 0) out.code = open_aside(run, out.msg, sizeof out.msg); /* they land when measuring starts */
    MPI_Bcast(&out, (int)sizeof out, MPI_BYTE, 0, run->world);
    if (out.code) start_failed(run, out.code, "%s", out.msg);
    mb_trace_start(run);
    if (run->opts.overlap > 0) mb_compute_init(run->world); /* once per run: the computation's rate */
    mb_watchdog_start(prog->name, run->rank);
    mb_term_install(run);
    run->t_start = t0;
    double mine[2] = {init_s, MPI_Wtime() - t0}, most[2];
    MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, run->world);
    mb_costs.init_s = most[0];
    mb_costs.setup_s = most[1];
    return run;
}

void mb_begin(struct mb_run *run, struct mb_row *row)
{
    char desc[200];
    mb_row_desc(run, row, desc, sizeof desc);
    mb_binding_warn(run); /* once, when measuring starts (never before a usage error) */
    if (run->rank == 0) mb_outputs_land(); /* and the outputs replace an earlier run's */
    mb_raw_discard();     /* samples of a test that never ended belong to no row */
    mb_order_mark(run, row); /* its place in the fixed order: where the program's loops are now */
    row->t_begin = MPI_Wtime();
    mb_watchdog_arm(run->opts.timeout, desc);
}

void mb_na(struct mb_run *run, struct mb_row *row, const char *fmt, ...)
{
    (void)run;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(row->stop_reason, sizeof row->stop_reason, "n/a: ");
    vsnprintf(row->stop_reason + n, sizeof row->stop_reason - (size_t)n, fmt, ap);
    va_end(ap);
    row->na = 1;
}

int mb_int_count(struct mb_run *run, struct mb_row *row, long long bytes, size_t elem)
{
    long long n = elem ? bytes / (long long)elem : bytes;
    if (bytes >= 0 && n <= INT_MAX) return (int)n;
    mb_na(run, row, "%lld B is %lld elements, more than the int count of an MPI call (%d)", bytes, n, INT_MAX);
    return -1;
}

void mb_end(struct mb_run *run, struct mb_row *row)
{
    mb_watchdog_disarm();
    row->wall = MPI_Wtime() - row->t_begin;
    if (!row->na && row->sent_bytes > 0 && row->t.median > 0) row->mbps = row->sent_bytes / row->t.median / 1e6;
    run->ndone++;
    if (run->rank != 0) return;
    if (run->nrows == run->cap_rows) {
        run->cap_rows = run->cap_rows ? 2 * run->cap_rows : 64;
        run->rows = realloc(run->rows, (size_t)run->cap_rows * sizeof *run->rows);
    }
    mb_order_insert(run, row); /* run->rows in the fixed order, whatever --order ran */
    mb_term_update(run, row); /* the CSV row and the SIGTERM metadata, together */
    mb_rounds_ended(run, row); /* a group's samples, after its last row */
    char desc[200];
    mb_row_desc(run, row, desc, sizeof desc);
    if (row->na)
        fprintf(stderr, "[%d/%d] %s ... %s\n", run->ndone, run->ntotal, desc, row->stop_reason);
    else
        fprintf(stderr, "[%d/%d] %s ... %.1f s\n", run->ndone, run->ntotal, desc, row->wall);
}

int mb_finish(struct mb_run *run)
{
    mb_watchdog_stop();
    mb_costs_rss(run);
    mb_load_end(run);
    char trace_err[512] = "";
    int code = run->nfailed ? 1 : 0, traced = mb_trace_end(run, trace_err, sizeof trace_err);
    if (traced) code = traced;
    if (run->rank == 0) {
        if (run->nfailed) {
            char n[32];
            snprintf(n, sizeof n, "%d", run->nfailed);
            mb_meta_add(run, "verification_failures", n);
        }
        mb_load_print(stdout);              /* a busy machine */
        mb_print_end_caveats(stdout, run); /* wide intervals */
        mb_outputs_land(); /* a run that measured nothing */
        if (run->lost) {
            /* a row lost to a full disk mid-run fails the run; the metadata on disk is the one counting
             * the rows before it (complete: false), and stays */
            fprintf(stderr, "%s: cannot write '%s': %s; the rows before are kept (the metadata counts none it lacks)\n",
                    run->prog->name, run->csv_path, run->lost);
            code = 1;
        } else {
            /* a trace that could not be written fails the run too, and its metadata says so */
            if (trace_err[0]) {
                char *s = NULL;
                size_t n = 0;
                FILE *f = open_memstream(&s, &n);
                if (f) mb_json_str(f, trace_err), fclose(f), mb_meta_add(run, "ended_by", s);
                free(s);
                code = 1;
            }
            if (mb_meta_write(run, !trace_err[0])) {
                fprintf(stderr, "%s: cannot write '%s': %s\n", run->prog->name, run->json_path, strerror(errno));
                code = 1;
            }
        }
        if (fclose(run->csv)) {
            fprintf(stderr, "%s: cannot write '%s': %s\n", run->prog->name, run->csv_path, strerror(errno));
            code = 1;
        }
        if (run->raw) fclose(run->raw);
        fprintf(stderr, "%s: results in %s (+ .json)\n", run->prog->name, run->csv_path);
        if (mb_fault_unmatched())
            fprintf(stderr, "%s: warning: MPIMB_FAULT's '%s' matched no test (a verify fault needs --verify)\n",
                    run->prog->name, mb_fault_unmatched());
        if (run->nfailed)
            fprintf(stderr, "%s: FAILED: %d of %d tests failed verification (first: %s); their rows say verified=no\n",
                    run->prog->name, run->nfailed, run->ndone, run->first_failed);
    }
    /* The files are complete: a SIGTERM from now on must not replace the
     * metadata.  Nobody exits before rank 0 is here: a rank exiting 1 (failed
     * verification) makes the launcher signal the others. */
    mb_term_release();
    MPI_Barrier(run->world);
    mb_nodes_free(&run->nodes);
    mb_order_free(run);
    MPI_Comm_free(&run->world);
    fflush(NULL);
    MPI_Finalize();
    if (run->rank == 0 && !(run->prog->flags & MB_NOT_TIMED) && run->nrows > 0)
        mb_findings_after(run->prog->name, run->csv_path);
    mb_meta_release();
    mb_raw_release();
    mb_trace_release();
    free(run->rows);
    free(run->extra_meta);
    free(run->cmdline_json);
    free(run->csv_path);
    free(run->json_path);
    free(run);
    return code;
}

void *mb_alloc(size_t bytes)
{
    void *p = NULL;
    size_t n = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
    if (posix_memalign(&p, 4096, n)) {
        fprintf(stderr, "mpimb: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    memset(p, 0, n);
    return p;
}
