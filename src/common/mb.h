/* mb.h — the one measurement harness shared by every mpimb program.
 *
 * A program is a driver: it describes itself (struct mb_program), calls
 * mb_init(), loops over its tests and, for each one, fills a struct mb_row,
 * calls mb_begin(), sets up, calls mb_measure() with a struct mb_kernel
 * (the timed region), tears down and calls mb_end().  mb_finish() writes the
 * final metadata and finalizes MPI.  Everything that is the same for every
 * program — options, timing loop, statistics, verification, watchdog,
 * progress, CSV + JSON — lives here, once.
 */
#ifndef MB_H
#define MB_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MB_SCHEMA_VERSION 2 /* analysis/mpimb/schema/ defines it */
/* The fewest repetitions that give the median a 95 % order-statistic
 * interval (below 6, [min, max] covers less than 95 %): the timing loop
 * never stops on "ci" below it, and rows with fewer carry no interval. */
#define MB_CI_MIN_REPS 6

/* ---------------------------------------------------------------- options */

enum mb_stat { MB_STAT_MEDIAN, MB_STAT_MIN, MB_STAT_MEAN };
/* How a repetition starts (--sync; docs/measurement.md).  AUTO: the
 * program's default (MB_WINDOW_BY_DEFAULT programs: window where the clocks agree
 * well enough, else barrier; the others: barrier). */
enum mb_sync { MB_SYNC_AUTO = -1, MB_SYNC_BARRIER, MB_SYNC_WINDOW };

enum mb_opt_kind {
    MB_OPT_FLAG,   /* int *dest = 1 when given */
    MB_OPT_INT,    /* long *dest, bounds [min, max] */
    MB_OPT_SIZE,   /* size_t *dest, bytes with K/M/G suffix, bounds [min, max] */
    MB_OPT_DOUBLE, /* double *dest, must be > 0 (or >= 0 when min == 0) */
    MB_OPT_CHOICE, /* int *dest = index of the word in choices ("a,b,c") */
    MB_OPT_LIST,   /* unsigned long *dest = bit mask of words in choices; "all" = every one */
    MB_OPT_STRING, /* const char **dest */
    MB_OPT_RANGE,  /* size_t dest[2], "MIN:MAX" in bytes */
};

/* One program-specific option; an array of them ends with a zeroed entry. */
struct mb_option {
    const char *name; /* long name, without "--" */
    int short_name;   /* a letter, or 0 */
    enum mb_opt_kind kind;
    void *dest;
    long long min, max;  /* INT and SIZE bounds (inclusive); DOUBLE: min 0 allows 0, else > 0 */
    const char *choices; /* CHOICE and LIST: comma-separated words; STRING: its value's name in --help (TEXT) */
    const char *help;
};

/* Common options, filled by mb_init() and read by programs. */
struct mb_opts {
    int quick, verify;
    double timeout;      /* seconds per test before the watchdog aborts the job */
    long reps, max_reps, warmup;
    double rel_ci;       /* stop when the 95 % CI of the median is within this fraction */
    double time_budget;  /* seconds per test */
    double min_rep_time; /* seconds per repetition (K is calibrated to reach it) */
    enum mb_stat stat;
    size_t size_min, size_max; /* -m MIN:MAX, only for programs with MB_USES_SIZES */
    const char *output, *label;
    const char *raw; /* --raw FILE: every repetition's per-rank times, long format */
    enum mb_sync sync;
    double window_us;     /* --window-us: time between window starts; 0: calibrated */
    double sweep_budget;  /* --sweep-budget: seconds one test's size sweep may take; 0: --time-budget per size */
    int shuffle;          /* --order shuffle */
    long long order_seed; /* --order-seed; not given: rank 0's pick, made common by mb_init (-1 before) */
    const char *trace, *trace_out; /* --trace PATTERN, --trace-out FILE (tracing.c) */
    long trace_iters;              /* --trace-iters */
    double overlap; /* --overlap F (MB_OVERLAP programs): computation F x the operation's time; 0: off */
};

#define MB_USES_SIZES 1u /* the program sweeps message sizes (-m MIN:MAX) */
#define MB_NOT_TIMED 2u  /* not a timed benchmark (libmpimb-prof.so): no harness options in the metadata */
/* Program flag: under --sync auto, window for a test whose clocks are
 * synchronised to within MB_SYNC_FRACTION of one repetition, barrier
 * otherwise (collectives, halocompare: where every rank's start matters). */
#define MB_WINDOW_BY_DEFAULT 4u
#define MB_SYNC_FRACTION 0.01
/* The program has nonblocking operations that can hide behind computation:
 * it takes --overlap (overlap.c; docs/measurement.md, "Overlap with computation"). */
#define MB_OVERLAP 8u

struct mb_program {
    const char *name;    /* "halocompare" */
    const char *summary; /* one line for --help */
    const struct mb_option *options;
    unsigned flags;
    size_t size_min, size_max;       /* default sweep, MB_USES_SIZES only */
    size_t quick_size_max;           /* the sweep's end with --quick */
    int thread_level;                /* requested in MPI_Init_thread */
    const int *thread_level_var;     /* if set, read after option parsing instead */
    const long *threads_var;         /* threads per process (read after option parsing); NULL: 1 */
    void (*list)(void);              /* prints what --list shows (rank 0) */
    /* Cross-option checks after parsing; returns NULL or a message ("--x needs --y"). */
    const char *(*validate)(void);
    /* the program's own defaults for --rel-ci, --sweep-budget and --min-rep-time (0: the common ones) */
    double rel_ci, sweep_budget, min_rep_time;
    /* options that act only with another's choice, in pairs, NULL-ended: {"packing", "layout=array", NULL}
     * (their choices are --trace words only then) */
    const char *const *acts_with;
};

/* ------------------------------------------------------------ run state */

#define MB_ORDER_DEPTH 5 /* nesting levels of test loops that mb_order() tracks */

/* Over repetitions of the slowest rank's time (min ... p99), and over ranks
 * of each rank's own median (rank_min, rank_mean: the load imbalance). */
struct mb_stats {
    double min, median, mean, max, stddev, ci_lo, ci_hi, p90, p99;
    double rank_min, rank_mean; /* < 0: not measured */
};

/* One CSV row = one test.  The program fills the descriptive fields before
 * mb_begin(); the harness fills the measured ones.  -1 means "empty". */
struct mb_row {
    char test[32];
    char method[48];
    char comm[32];
    /* Every other setting that changes what is measured, canonical
     * "key=value;key=value" sorted by key (mb_param); empty where none. */
    char params[1024];
    int order[MB_ORDER_DEPTH]; /* the row's place in --order fixed: run->order_path at mb_begin (harness-filled) */
    int neighbors, periodic, threads;
    long long bytes;
    double sent_bytes; /* bytes one process sends per operation (for mbps); 0: no mbps */
    /* measured */
    long iters;
    long reps;
    char stop_reason[200]; /* "ci", "max-reps", "budget", or "n/a: why" */
    struct mb_stats t;
    long reps_rejected; /* repetitions rejected (a rank started late); -1: empty */
    double sync_error;  /* seconds: achieved clock-synchronisation error; -1: empty */
    double cpu_pct;     /* CPU time over wall time, %; -1: empty */
    double mbps;
    double agg_mbps; /* bytes the whole operation moves per second / 10^6; 0: empty */
    /* profile rows (libmpimb-prof.so): calls and bytes summed over ranks, and
     * the world rank whose time is time_max_s; -1: empty (benchmarks) */
    long long calls, total_bytes;
    int slowest_rank;
    const char *verified; /* "yes", "no" or "" */
    int na;
    double wall;    /* seconds the whole test took (progress line) */
    double t_begin; /* MPI_Wtime() at mb_begin; a group's row: set so its wall is its share of the group's (harness) */
    int overlap; /* an overlap row (--overlap): the harness wrote overlap_pct= and its times into params */
};

/* Where the ranks of a communicator live: the one answer to "which node is
 * each rank on, and who leads it" (MPI_Comm_split_type SHARED).  Nodes are
 * numbered 0.. in the order of their lowest rank; that rank leads. */
struct mb_nodes {
    int nnodes, ppn;            /* ppn: the most ranks any node has */
    int node;                   /* this rank's node */
    int local_rank, local_size; /* within the node */
    int leader;                 /* rank (in the communicator) leading this node */
    MPI_Comm comm;              /* this node's ranks, in communicator order */
    MPI_Comm leaders;           /* the node leaders, in node order; MPI_COMM_NULL on other ranks */
    int *node_of;               /* node of every rank of the communicator */
};
/* The name of this rank's node (MPI_Get_processor_name; simulated: its host's
 * mpimb/node property where the platform gives one). */
void mb_node_name(char *name, size_t len);
/* Collective over comm.  mb_nodes_free releases the communicators and array. */
void mb_nodes_init(MPI_Comm comm, struct mb_nodes *n);
void mb_nodes_free(struct mb_nodes *n);

struct mb_run {
    const struct mb_program *prog;
    struct mb_opts opts;
    MPI_Comm world; /* a private dup of MPI_COMM_WORLD for the harness's own traffic */
    int rank, nprocs, nnodes, ppn;
    struct mb_nodes nodes; /* of world */
    int thread_level; /* provided */
    int thread_level_req;
    char run_id[128];
    char label[64];
    int ntotal, ndone;  /* tests planned and done (progress) */
    int nfailed;        /* tests whose verification failed */
    char first_failed[200]; /* the first of them, for the closing line */
    /* rank 0 only */
    FILE *csv, *raw;
    char *csv_path, *json_path;
    struct mb_row *rows; /* every finished row, for the program's tables */
    int nrows, cap_rows;
    const char *lost; /* why rows stopped reaching the CSV (a full disk: term.c), or NULL */
    char *extra_meta;    /* ",\"key\": value" pairs appended to the JSON */
    void (*load_json)(FILE *f); /* the JSON's "busy" and "load" (busy.c's, set by mb_init): meta.c renders them */
    int order_path[MB_ORDER_DEPTH]; /* mb_order: the item each loop depth is on */
    int *order_perm[MB_ORDER_DEPTH];
    unsigned long long order_draws;
    int warned_binding;
    char *cmdline_json;  /* argv as a JSON array */
    double t_start;
    char start_utc[32];
};

/* The timed region.  run() does the operation iters times and nothing else.
 * Ranks that take no part in a test still call mb_measure() (run may do
 * nothing) because repetitions start with a barrier over comm. */
struct mb_kernel {
    void *state;
    MPI_Comm comm; /* ranks whose times are max-reduced; usually the run's world */
    void (*run)(void *state, long iters);
    /* Alternative for programs that time themselves (threads: the max over
     * the process's threads); returns local seconds for iters iterations. */
    double (*run_timed)(void *state, long iters);
    /* --verify: fill send buffers for iteration it, then after run(state, 1)
     * check every received byte; check returns 0 or writes a message. */
    void (*fill)(void *state, long it);
    int (*check)(void *state, long it, char *msg, size_t len);
    /* Paired reference (collectives --timing subtract): when set, every
     * repetition times ref_timed(state, K) right after the kernel, and its
     * sample is the difference of the two (slowest rank's each; below 0
     * counts as 0), so the median and its interval are those of the
     * difference itself.  Starts by barrier.  *ref_median (if set) receives the reference's median. */
    double (*ref_timed)(void *state, long iters);
    double *ref_median;
    const char *ref_test; /* the reference's test name in the raw file (its method there: "reference") */
    /* --overlap: > 0 makes this an overlap measurement: the kernel's mb_compute() hook computes this many
     * seconds per iteration, and every repetition also times, right after it, the kernel with the hook idle
     * (t_pure) and K computations alone (t_cpu), each the slowest rank's; the row's time is t_ovrl and its
     * params get overlap, pure_s, cpu_s and overlap_pct (mb_overlap_pct of the three medians).  Starts by barrier. */
    double compute_s;
    int idle; /* this rank takes no part: left out of rank_min / rank_mean */
    /* Phases (phases.c; halocompare --phases, docs/halo-phases.md): phases(state, secs) hands over this
     * rank's seconds in each of the nphases phases since its last call (secs[nphases]) and resets them.  After
     * each timed repetition the loop takes them, per iteration, from the rank whose time is the repetition's
     * sample (the slowest), so they add up to it; the row's params get each phase's median and 95 % interval
     * (phase_NAME_s, phase_NAME_lo_s, phase_NAME_hi_s).  NULL: no phases. */
    int nphases;
    const char *const *phase_names;
    void (*phases)(void *state, double *secs);
    struct mb_sweep *sweep; /* NULL, or the size sweep this test is one size of */
};

/* One test over its message sizes, smallest first.  --sweep-budget is
 * shared among the sizes: each gets what is left over the sizes left, so a
 * size that reaches its interval early leaves time to the later ones; and
 * each size's calibration starts from the previous size's K.  Zero one per
 * test and pass it in mb_kernel.sweep for each of the test's sizes. */
struct mb_sweep {
    int started, left; /* sizes still to measure, this one included */
    double budget;     /* seconds left */
    long K;            /* the previous size's iterations per repetition (0: none) */
};

/* --order: which item a test loop runs at its position j of n.  Identity
 * under fixed; under shuffle a seeded permutation, the same on every rank,
 * drawn afresh each time a loop starts (j == 0), so that slow drift of the
 * machine does not fall on one method.  depth: the loop's nesting level
 * (0 outermost, below MB_ORDER_DEPTH); keep = 1 for a loop that must keep
 * its order (message sizes, which calibration and the sweep budget follow)
 * but has shuffled loops inside.  Rows remember the items, so run->rows
 * stays in the fixed order the tables are built from. */
int mb_order(struct mb_run *run, int depth, int n, int j, int keep);

/* Parses options (validated identically on every rank), starts MPI, opens
 * the CSV and writes the initial metadata.  Exits 0 after --help/--version/
 * --list, 2 after a usage error (a bad option, an output path that cannot be
 * written) and 1 when the results cannot be written for another reason (a
 * full disk), on every rank, with one line from rank 0 and no files left. */
struct mb_run *mb_init(int *argc, char ***argv, const struct mb_program *prog);

/* Rank 0 prints "prog: msg" and every rank exits 2.  Collective over world. */
_Noreturn void mb_usage_error(struct mb_run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void mb_row_init(struct mb_row *row, const char *test, const char *method);
void mb_begin(struct mb_run *run, struct mb_row *row); /* arms the watchdog */
/* Verify (with --verify), warm up, calibrate, repeat: fills row.  Returns 0,
 * or 1 if verification failed: that is reported, the row says verified=no
 * and is still measured, and the run goes on (mb_finish then exits 1). */
int mb_measure(struct mb_run *run, const struct mb_kernel *k, struct mb_row *row);
/* Measures the n tests of a group interleaved, so that comparisons between
 * them are paired (docs/measurement.md, "Paired comparisons"): each member
 * is verified, warmed up and calibrated (its own K), then in each round
 * every member does one repetition, in an order shuffled per round (seeded:
 * the JSON's rounds_seed).  It stops when every member's interval meets the
 * rule, at --max-reps rounds, or when the sum of the members' budgets is
 * spent; a round some member started late (--sync window) is dropped for
 * all.  Each row is filled as mb_measure fills it (reps: the rounds kept);
 * the caller calls mb_begin for each member before and mb_end for each row
 * after, as for mb_measure, and the rounds' samples go to the rounds file
 * once the last of the rows has ended.  Collective over world (every rank
 * calls it, as mb_measure); the members' communicators must hold the same
 * processes.  Each row keeps the place in the fixed order its mb_begin gave
 * it (run->order_path then).  Returns how many members failed verification. */
int mb_measure_group(struct mb_run *run, const struct mb_kernel *k, struct mb_row *rows, int n);
/* Marks a row not applicable; the reason goes to the CSV ("n/a: reason"). */
void mb_na(struct mb_run *run, struct mb_row *row, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mb_end(struct mb_run *run, struct mb_row *row); /* emits the row, disarms */
/* Adds "key=value" to the row's params (kept sorted by key; a key given
 * again is replaced).  Values must not hold ';' or '='. */
void mb_param(struct mb_row *row, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same for one of the program's own options, by its long name: the value
 * as given or defaulted, in canonical form (sizes in bytes, lists in the
 * option's order). */
void mb_param_opt(const struct mb_run *run, struct mb_row *row, const char *option);
/* A row's params read back: the value of key (a pointer into params, *len its length; len may be NULL),
 * or NULL where params has no such pair; and whether params holds key=value exactly. */
const char *mb_param_get(const char *params, const char *key, size_t *len);
int mb_param_is(const char *params, const char *key, const char *value);
/* Adds "key": raw_json to the run's metadata (rank 0; shown in the JSON). */
void mb_meta_add(struct mb_run *run, const char *key, const char *raw_json);
/* Rank 0: the caveats every report prints under its heading, loudly: an
 * oversubscribed run (ranks x threads beyond the PUs of a node), --quick
 * (too few repetitions for any verdict). */
void mb_print_caveats(FILE *f, const struct mb_run *run);
/* Whether ranks x threads exceed the PUs the job may use on some node (rank 0). */
int mb_oversubscribed(void);
/* Writes complete metadata, closes files, finalizes MPI; returns the exit code. */
int mb_finish(struct mb_run *run);

/* ------------------------------------------------------------ utilities */

/* Statistics of n samples (x is sorted in place). */
void mb_stats_compute(double *x, int n, struct mb_stats *s);
/* 0-based indices of the nonparametric 95 % CI of the median of n sorted samples. */
void mb_median_ci_index(int n, int *lo, int *hi);
double mb_stat_value(const struct mb_opts *o, const struct mb_stats *s);
const char *mb_stat_name(enum mb_stat s);
/* The i-th word (from 0) of a comma-separated list such as an option's
 * choices, into buf ("" past the end): names kept once, in the list. */
const char *mb_word(const char *list, int i, char *buf, size_t len);
/* The thread levels: the results' vocabulary, in MPI's order (an option's
 * choices, --list), the MPI_THREAD_* of the i-th word, and the word of a level. */
#define MB_THREAD_LEVEL_WORDS "single,funneled,serialized,multiple"
int mb_thread_level_of(int index);
const char *mb_thread_level_name(int level);

/* Verification patterns: exactly representable, distinct per
 * (sender, tag, iteration, index). */
double mb_pattern_double(uint32_t sender, uint32_t tag, uint32_t iter, size_t i);
void mb_pattern_fill_doubles(double *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter);
/* Returns the first bad index, or -1 if all n match. */
long mb_pattern_check_doubles(const double *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter);
void mb_pattern_fill_bytes(void *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter);
long mb_pattern_check_bytes(const void *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter);

/* The largest message any size option describes: 1 GiB (-m, and each
 * program's own size options).  Sizes are carried as size_t / long long
 * everywhere; an MPI call that takes an int count checks with mb_int_count. */
#define MB_MSG_MAX ((size_t)1 << 30)
/* The int count of bytes / elem elements for an MPI call, or -1 after
 * marking row n/a (above INT_MAX elements: the call cannot describe it). */
int mb_int_count(struct mb_run *run, struct mb_row *row, long long bytes, size_t elem);

/* Option value parsers (exposed for unit tests); 0 on success. */
int mb_parse_long(const char *s, long long min, long long max, long long *out);
int mb_parse_size(const char *s, size_t *out); /* "4K", "1M", "512", "2G", at most "1T" */
int mb_parse_double(const char *s, double *out);
int mb_parse_range(const char *s, size_t *lo, size_t *hi); /* "MIN:MAX" */
int mb_choice_index(const char *choices, const char *word, size_t wlen);

/* Table printer: cells row-major, row 0 is the header; column 0 left-aligned.
 * groups: NULL, or ncols labels, non-NULL where a column group starts. */
void mb_table_print(FILE *f, int nrows, int ncols, char **cells, const char *const *groups);
void mb_fmt_value(char *buf, size_t len, double v); /* 3 significant digits */
void mb_fmt_ratio(char *buf, size_t len, double v); /* a ratio of two figures: 2 decimals */
/* A table cell for a row, malloc'd: "-" without a row, "n/a" for a row the
 * library could not run, "FAILED" for one whose verification failed, else v
 * formatted (v is not read in the other cases). */
char *mb_cell(const struct mb_row *r, double v);
/* A row's achieved interval, malloc'd: "±0.8%", the larger half-width of
 * the 95 % CI of the median as a percentage of the median ("-" where none). */
char *mb_ci_cell(const struct mb_row *r);
/* Prints the table, then frees every cell and the array (heap cells only). */
void mb_table_emit(FILE *f, int nrows, int ncols, char **cells, const char *const *groups);
/* A table built row by row: cells row-major (heap strings), row 0 the header. */
struct mb_table {
    int nrows, ncols;
    char **cells;
};
void mb_table_new(struct mb_table *t, int ncols, const char *const *head);
char **mb_table_row(struct mb_table *t); /* the next row's ncols cells, all NULL ("-") */
/* Prints it under "\ntitle\n" if it has rows (nothing otherwise), then frees it. */
void mb_table_done(FILE *f, struct mb_table *t, const char *title, const char *const *groups);

/* The next size in a power-of-two sweep: 0 -> 1 -> 2 -> 4 ... */
static inline size_t mb_next_size(size_t s) { return s ? 2 * s : 1; }
/* The sizes of -m MIN:MAX in order, what a program's plan iterates; returns how many (at most 64). */
enum { MB_MAX_SIZES = 64 };
static inline int mb_sizes(const struct mb_opts *o, size_t sizes[MB_MAX_SIZES])
{
    int n = 0;
    for (size_t s = o->size_min; s <= o->size_max && n < MB_MAX_SIZES; s = mb_next_size(s)) sizes[n++] = s;
    return n;
}

void *mb_alloc(size_t bytes); /* page-aligned, zeroed; exits 1 on failure */

/* phases.c: the cheapest clock, for timing phases inside a timed region (four reads an iteration): the
 * invariant TSC on x86-64 (bench/README.md, "Phases: what timing them costs"), else CLOCK_MONOTONIC; under
 * SMPI MPI_Wtime (simulated time).  In ticks; mb_tick_seconds() is one tick's seconds (calibrated once,
 * against MPI_Wtime, on the first call). */
#if defined(__x86_64__) && !defined(MB_SIMULATED)
static inline uint64_t mb_ticks(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}
#else
uint64_t mb_ticks(void);
#endif
double mb_tick_seconds(void);

/* overlap.c: computation to overlap with communication (--overlap).  A
 * program calls mb_compute() between starting a nonblocking operation and
 * waiting for it; it computes only inside an overlap measurement
 * (mb_kernel.compute_s), else it only counts the call. */
void mb_compute(void);
long mb_compute_calls(void); /* mb_compute calls so far: a method that never calls it has nothing to overlap */
/* --overlap: an operation measured again with computation is a row of its own.  mb_overlap_row makes it
 * from the ordinary row, measured (what names it: test, method, comm, params, place in the fixed order,
 * stencil, threads, sizes; nothing measured), before its mb_begin; mb_overlap_compute_s is what its
 * mb_kernel.compute_s is: --overlap x the ordinary row's median (1 ns where that is 0). */
void mb_overlap_row(const struct mb_row *plain, struct mb_row *ov);
double mb_overlap_compute_s(const struct mb_run *run, const struct mb_row *plain);
/* OMB's and IMB-NBC's overlap share, in %: 100 max(0, min(1, (t_pure + t_cpu - t_ovrl) / t_pure)) */
double mb_overlap_pct(double t_pure, double t_cpu, double t_ovrl);
/* A dependent chain of n multiply-adds (the computation), and how many of
 * them one second holds (rank 0's figure, broadcast over world). */
double mb_work(long n, double seed);
double mb_work_rate(MPI_Comm world);

#endif
