/* Internal to src/common: shared between the harness's own files. */
#ifndef MB_INTERNAL_H
#define MB_INTERNAL_H
#include "mb.h"

#include <locale.h>
#include <sys/types.h>

/* "halo irecv-isend cart 8-nbr periodic 16000 B" */
void mb_row_desc(const struct mb_run *run, const struct mb_row *row, char *buf, size_t len);
/* Counts a failed verification; the run goes on and mb_finish exits 1. */

/* fault.c: MPIMB_FAULT, the one fault injection for tests of the suite
 * itself (verify, delay, drift, clock and row-delay faults; grammar in fault.c). */
const char *mb_fault_parse(const char *spec); /* NULL or why spec is bad (one line) */
int mb_fault_here(const struct mb_run *run, const struct mb_row *row); /* verify: send stale data here? */
double mb_fault_delay(const struct mb_row *row); /* delay: the fraction a repetition takes longer, or 0 */
double mb_fault_drift(const struct mb_row *row); /* drift: the seconds per step, or 0 */
double mb_fault_drift_step(double seconds); /* drift: the next step's extra time (seconds x steps so far), or 0 */
void mb_fault_clock(double *offset, double *drift); /* clock: the error per world rank, seconds (0, 0: none) */
double mb_fault_row_delay(void);                    /* row-delay: seconds (0: none) */
double mb_fault_load(double measured);              /* load: the share to report (measured: none) */
const char *mb_fault_unmatched(void); /* a verify, delay or drift fault that matched no test, as given, or NULL */

/* overlap.c: a wait on the clock of that many seconds (faults: that long for
 * real; a sleep under SMPI, whose time moves only in MPI calls and sleeps);
 * returns the time it took. */
double mb_busy(double seconds);
/* The calibrated computation (mb_work at mb_compute_init's rate: a fixed
 * amount of work, fenced, no clock read; a sleep under SMPI): what
 * mb_compute() does inside an overlap measurement, and t_cpu's. */
void mb_compute_for(double seconds);
void mb_compute_init(MPI_Comm world); /* --overlap: measures the computation's rate, once per run; collective */
void mb_compute_set(double seconds);  /* what mb_compute does from now on (measure.c); 0: nothing */

/* phases.c: the timing loop's hooks for a kernel's phases (mb_kernel.phases; nothing where it has none):
 * take this rank's phases after a timed repetition of iters iterations that took t seconds here; after a
 * batch of repetitions, keep each one's phases of the rank whose time was its sample (collective over
 * k->comm); keep repetition i of the batch; into the row's params at the end (and forget the kernel). */
void mb_phases_take(const struct mb_kernel *k, long iters, double t);
void mb_phases_batch(const struct mb_kernel *k);
void mb_phases_keep(const struct mb_kernel *k, long i);
void mb_phases_finish(const struct mb_kernel *k, struct mb_row *row);

/* run.c: the pieces of mb_init / mb_finish that libmpimb-prof.so reuses */
char *mb_cmdline_json(int argc, char **argv); /* argv as a JSON array (malloc'd) */
void mb_run_ids(struct mb_run *run);          /* label, run id, start time; collective */
/* rank 0: CSV + initial JSON, on their names at once (mb_init's own start
 * writes them aside until measuring starts); 0 or the exit code */
int mb_open_outputs(struct mb_run *run, char *err, size_t len);
/* A file written aside is PATH.tmp in PATH's directory: the metadata each
 * time it changes (then renamed onto PATH), and a run's CSV, JSON and --raw
 * file until it starts measuring (term.c, mb_outputs_land). */
#define MB_ASIDE ".tmp"
#define MB_TERM_ASIDE ".term" /* the metadata a SIGTERM leaves, before its rename (term.c) */
char *mb_aside_path(const char *path); /* PATH.tmp (malloc'd) */

/* outputs.c: the files of a run, their one list (docs/results-format.md, "Output paths").  Each belongs
 * to the option that names it: -o (the CSV and every file beside it, the trace too unless --trace-out),
 * --trace-out, --raw; given: the path as the user gave it; aside: a file written aside (renamed later). */
enum { MB_BY_OUTPUT, MB_BY_TRACE, MB_BY_RAW, MB_MAX_OUTPUTS = 16 };
struct mb_output {
    char path[4096 + 16];
    const char *what; /* "the metadata" */
    int owner, given, aside;
};
struct mb_outputs {
    int n;
    struct mb_output f[MB_MAX_OUTPUTS];
};
/* csv: the CSV's path, NULL while it is not known (-o DIR: named at start); profile: the profiler's run
 * (its communication matrix) */
void mb_outputs_list(const struct mb_opts *o, const char *csv, int profile, struct mb_outputs *l);
/* 0, or 2 with the one line in err: a name holds something other than a regular file (a device, FIFO,
 * socket, directory or symbolic link, which the rename would replace), or two outputs are one file */
int mb_outputs_check(const struct mb_opts *o, const char *csv, int profile, char *err, size_t len);
char *mb_beside(const char *csv, const char *suffix); /* the CSV's stem (".csv" off, if there) + suffix (malloc'd) */
/* the files named after the CSV: mb_beside(csv, MB_..._SUFFIX) */
#define MB_JSON_SUFFIX ".json"
#define MB_ROUNDS_SUFFIX "-rounds.csv"
#define MB_TRACE_SUFFIX "-trace.json"
#define MB_MATRIX_SUFFIX "-matrix.csv"
const char *mb_not_regular(const char *path); /* NULL (a regular file, or nothing), or what stands there */
const char *mb_file_kind(mode_t mode);          /* NULL for a regular file, else "a FIFO" ... */
/* A file aside, created (O_EXCL|O_NOFOLLOW: never a link's target) and, with lock, flock'ed for the
 * run; one a killed run left is taken over, one a live run holds (or its landed file name, if given)
 * refused.  The fd, or -1 with the one line in err (errno set). */
int mb_aside_create(const char *path, int lock, char *err, size_t len, const char *name);
FILE *mb_aside_fopen(const char *path); /* created afresh for writing (whatever stood there unlinked), or NULL */
/* Numbers the suite writes have '.' decimals whatever locale the process is
 * in (an application under the profiler may have called setlocale): this
 * thread in the "C" locale until mb_locale_back(what it returned). */
locale_t mb_locale_c(void);
void mb_locale_back(locale_t was);
/* output.c: buf into f as one piece: all of it, or (a full disk) none of it -- the file cut back; 0 or -1 (errno) */
int mb_write_whole(FILE *f, const char *buf, size_t len);
void mb_costs_rss(struct mb_run *run);        /* peak RSS into mb_costs; collective */

/* output.c */
void mb_csv_header(FILE *f);
int mb_csv_row(const struct mb_run *run, const struct mb_row *row); /* the line whole, or none of it: 0 or -1 (errno) */
/* raw.c: --raw FILE, every repetition's time on every rank (long format).
 * mb_raw_write is collective over k->comm; world rank 0 keeps the lines,
 * each row's apart, until mb_raw_flush writes that row's, right after the
 * row reached the CSV (mb_end, with the row measured); mb_raw_discard drops
 * those of tests that never ended.  reference: the lines are a paired
 * reference's (test k->ref_test, method "reference"), else the row's own. */
int mb_raw_open(struct mb_run *run, char *err, size_t len); /* header into its file aside, locked (outputs.c) */
void mb_raw_write(struct mb_run *run, const struct mb_kernel *k, const struct mb_row *row, int reference,
                  const double *mine, long n);
int mb_raw_flush(struct mb_run *run, const struct mb_row *row); /* 0, or -1 (errno) */
void mb_raw_discard(void);
void mb_raw_release(void);

/* The suite's own costs, reduced over ranks (seconds, KiB): MPI_Init, the
 * harness's set-up (topology, metadata, files), and peak memory per rank. */
struct mb_costs {
    double init_s, setup_s;
    long rss_max_kib, rss_mean_kib;
};
extern struct mb_costs mb_costs;

/* meta.c: gathers hosts/binding (collective) and writes the JSON (rank 0). */
extern const char mb_suite_version[]; /* VERSION, as the Makefile passed it */
/* the MPI library this binary was compiled for: "mpich", "openmpi", "smpi"
 * (the JSON's mpi.built_with), and its name for people ("MPICH") */
extern const char mb_built_with[], mb_built_with_name[];
struct mb_meta_ranks;
void mb_meta_gather(struct mb_run *run);
int mb_meta_write(struct mb_run *run, int complete); /* aside, then renamed into place: 0 or -1 (errno) */
int mb_meta_aside(struct mb_run *run, int complete); /* the same, left aside (mb_aside_path of the JSON's) */
/* The metadata JSON; ended_by (or NULL) says why an incomplete run stopped. */
void mb_meta_render(FILE *f, struct mb_run *run, int complete, const char *ended_by);

/* term.c: SIGTERM leaves metadata saying so (rank 0) */
void mb_term_install(struct mb_run *run);
void mb_term_update(struct mb_run *run, const struct mb_row *row); /* writes row too (landing the outputs first) */
void mb_term_release(void); /* back to the default SIGTERM action */
/* term.c: the outputs written aside at start (rank 0).  mb_outputs_aside
 * records them (CSV, --raw, JSON: each file aside and its name) once they
 * are written; mb_outputs_land renames them onto their names, replacing an
 * earlier run's files (the CSV's rounds file goes too), once -- when the
 * run starts measuring, writes a row, ends, or gets SIGTERM; mb_outputs_remove
 * deletes the run's files: those aside before the landing, else the landed
 * ones and the rounds file (a usage error leaves no file of its own). */
void mb_outputs_aside(const struct mb_run *run, const char *made_dir); /* made_dir: made for them, or NULL */
void mb_outputs_land(void);
void mb_outputs_remove(void);
void mb_utc_now(char *buf, size_t len, int compact);
void mb_meta_release(void);
void mb_json_str(FILE *f, const char *s); /* s as a JSON string, quoted and escaped (meta.c) */

/* sync.c: synchronised clocks for --sync window.  mb_sync_start,
 * mb_sync_refresh and mb_sync_check are collective over run->world. */
void mb_sync_start(struct mb_run *run);   /* learn every rank's clock model, check it, measure the barrier skew */
void mb_sync_refresh(struct mb_run *run); /* a new fit point per rank (offset, and drift once it can be seen) */
double mb_sync_check(struct mb_run *run); /* the error now: max over ranks of |global clock - rank 0's| */
int mb_sync_ready(void);
double mb_sync_error(void); /* the last check's */
double mb_sync_resolution(void); /* the last check's resolution: the largest half-width of its offset bounds */
double mb_sync_global(double local);
double mb_sync_local(double global);
double mb_sync_now(void);
double mb_sync_clock(void); /* this rank's clock: MPI_Wtime(), plus a clock fault's error (MPIMB_FAULT, tests) */
void mb_sync_wait(double local_target); /* until mb_sync_clock() reaches it */
/* Whether this test starts its repetitions on windows (the same on every
 * rank): --sync, and under the automatic choice the error against rep,
 * one repetition's time. */
int mb_sync_window(const struct mb_run *run, double rep);
void mb_sync_count(int window, long rejected); /* rank 0: rows per mode, for the JSON */
void mb_sync_meta(FILE *f, const struct mb_run *run);

/* tracing.c: --trace (the profiler's trace mode for the selected tests) */
/* before MPI_Init: re-executes the program with the profiler preloaded (argv: as given), or says why not */
void mb_trace_preload(char **argv, const struct mb_opts *o, char *err, size_t len);
void mb_trace_start(struct mb_run *run); /* the trace's path and run id to the profiler; the JSON's "trace" */
void mb_trace_test(struct mb_run *run, const struct mb_kernel *k, const struct mb_row *row); /* after measuring */
/* The trace written (collective): 2 when --trace matched no test (said by rank 0), else 0, and on rank 0
 * why the trace could not be written into err (else "") */
int mb_trace_end(struct mb_run *run, char *err, size_t len);
void mb_trace_discard(const struct mb_run *run); /* every rank: the profiler writes no trace (a failed run) */
/* rank 0, with the outputs: --trace-out's name locked for the run (0), or -1 with errno and why in err
 * (EBUSY: another live run writes it); released after MPI_Finalize */
int mb_trace_claim(const struct mb_opts *o, char *err, size_t len);
void mb_trace_release(void);

/* order.c: --order */
void mb_permutation(unsigned long long seed, int *perm, int n); /* seeded Fisher-Yates */
void mb_order_seed(struct mb_run *run); /* every rank agrees on the seed (collective over world) */
void mb_order_mark(const struct mb_run *run, struct mb_row *row); /* row->order: where the loops are now */
void mb_order_insert(struct mb_run *run, const struct mb_row *row); /* into run->rows at row->order's place */
void mb_order_free(struct mb_run *run);

/* measure.c: what ends a test's repetitions after n samples ("ci",
 * "max-reps", "budget"), or NULL to go on; ratio is the median interval's
 * half-width over the target (<= 1: reached). */
const char *mb_stop_reason(const struct mb_opts *o, long n, double ratio, double elapsed, double budget);

/* rounds.c: the rounds file of mb_measure_group (rank 0).  mb_rounds_begin
 * opens it at the first group (mb_beside: CSV stem + "-rounds.csv"; the JSON names it and the seed);
 * mb_rounds_keep holds one group's samples (a copy: t[j][r] is member j's slowest-rank time in kept round r,
 * pos[j][r] its place in that round's order) until its rows are in the CSV: mb_rounds_ended (mb_end) notes
 * each row's 1-based data row, and after the group's last row the samples go out.  A group kept while the
 * last one's rows had not all ended replaces it. */
void mb_rounds_begin(struct mb_run *run, unsigned long long seed);
void mb_rounds_keep(long group, int n, const struct mb_row *rows, const double *const *t, const int *const *pos,
                    long nrounds);
void mb_rounds_ended(const struct mb_run *run, const struct mb_row *row);

/* findings.c: rank 0, after MPI_Finalize: stdout ends with the run's
 * findings from the analysis package (or the command that gives them). */
void mb_findings_after(const char *prog, const char *csv_path);

/* meta.c: the binding check (rank 0 prints the warning once) */
void mb_binding_warn(struct mb_run *run);
/* output.c: a row the time budget ended with fewer repetitions than an interval needs (marked ~) */
int mb_row_few(const struct mb_row *r);
/* meta.c, rank 0 at mb_finish: rows of fewer repetitions than an interval
 * needs, and a run whose intervals are mostly wider than their medians, one
 * line each */
void mb_print_end_caveats(FILE *f, const struct mb_run *run);
/* meta.c: collective; the PUs this rank's host's ranks use, as a cpu list
 * ("" where not known; not under SMPI), and rank r's host name (rank 0) */
void mb_meta_host_cpus(const struct mb_run *run, char *list, size_t len);
const char *mb_meta_host(int rank);
/* meta.c: MPIMB_LAUNCH (series=TOKEN;index=I;of=N, from the script that runs
 * N launches): NULL or why it is bad (one line); the JSON's "launch" */
const char *mb_launch_parse(const char *value);

/* busy.c: how much of the ranks' PUs other processes took while the run
 * measured (/proc/stat against the ranks' own CPU time).  mb_load_start
 * (mb_init, once the bindings are known) and mb_load_end (mb_finish) are
 * collective over world. */
void mb_load_start(struct mb_run *run);
void mb_load_end(struct mb_run *run);
int mb_load_busy(void);                  /* 1 busy, 0 not, -1 not known */
void mb_load_json(FILE *f);              /* the JSON's "busy" and "load" lines */
void mb_load_print(FILE *f);             /* rank 0 at mb_finish: the BUSY line, where busy */

/* watchdog.c */
void mb_watchdog_start(const char *prog, int rank);
void mb_watchdog_arm(double seconds, const char *desc);
void mb_watchdog_disarm(void);
void mb_watchdog_stop(void);
#endif
