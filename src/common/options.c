/* The one option parser.  It runs before MPI_Init on every rank with the
 * same argv, so every rank reaches the same verdict without communicating;
 * only rank 0 prints it (see run.c). */
#include "internal.h"
#include "options.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct mb_opts O;
static int want_help, want_version, want_list;
static size_t sizes[2];
static int stat_idx = -1, sync_idx = -1, order_idx;
static long order_seed = -1;

/* Common options, in --help order.  Their dest points into O. */
static const struct mb_option common[] = {
    {"help", 'h', MB_OPT_FLAG, &want_help, 0, 0, NULL, "show this help and exit"},
    {"version", 0, MB_OPT_FLAG, &want_version, 0, 0, NULL, "show the suite version and exit"},
    {"list", 0, MB_OPT_FLAG, &want_list, 0, 0, NULL, "list the tests/methods available and exit"},
    {"output", 'o', MB_OPT_STRING, &O.output, 0, 0, "PATH",
     "CSV path (default results/PROGRAM-LABEL-npN-UTC.csv; metadata beside it as .json)"},
    {"label", 0, MB_OPT_STRING, &O.label, 0, 0, "LABEL", "machine/run label (default: short host name)"},
    {"raw", 0, MB_OPT_STRING, &O.raw, 0, 0, "FILE",
     "also write every repetition's time on every rank to this CSV (long format, for distributions)"},
    {"quick", 0, MB_OPT_FLAG, &O.quick, 0, 0, NULL, "tiny counts, for smoke tests"},
    {"verify", 0, MB_OPT_FLAG, &O.verify, 0, 0, NULL, "check every byte received (before timing)"},
    {"timeout", 0, MB_OPT_DOUBLE, &O.timeout, 1, 0, NULL, "seconds per test before the job is aborted (300)"},
    {"reps", 0, MB_OPT_INT, &O.reps, 1, 1000000, NULL,
     "repetitions per test at least (10), unless the test overruns 4 x --time-budget: it then ends with those it has "
     "(stop_reason budget)"},
    {"max-reps", 0, MB_OPT_INT, &O.max_reps, 1, 10000000, NULL, "maximum repetitions per test (1000)"},
    {"rel-ci", 0, MB_OPT_DOUBLE, &O.rel_ci, 1, 0, NULL, "stop when the median's 95% CI is within this fraction (0.02)"},
    {"time-budget", 0, MB_OPT_DOUBLE, &O.time_budget, 1, 0, NULL, "seconds per test for extra repetitions (0.1)"},
    {"min-rep-time", 0, MB_OPT_DOUBLE, &O.min_rep_time, 0, 0, NULL, "seconds one repetition lasts at least; 0: one iteration per repetition (0.001)"},
    {"warmup", 0, MB_OPT_INT, &O.warmup, 0, 1000000, NULL, "warm-up iterations per test (5)"},
    {"stat", 0, MB_OPT_CHOICE, &stat_idx, 0, 0, "median,min,mean", "statistic shown in tables (median)"},
    {"sizes", 'm', MB_OPT_RANGE, sizes, 0, 0, NULL, "message sizes MIN:MAX in bytes, powers of two (K/M/G suffixes)"},
    {"sweep-budget", 0, MB_OPT_DOUBLE, &O.sweep_budget, 1, 86400, NULL,
     "seconds one test's sweep of sizes may take, shared among its sizes (default: --time-budget per size)"},
    {"sync", 0, MB_OPT_CHOICE, &sync_idx, 0, 0, "barrier,window",
     "how repetitions start: when each rank leaves a barrier, or at a global time agreed in advance on "
     "synchronised clocks (collectives, halocompare: window where the clock error is below 1% of a repetition, "
     "else barrier; others: barrier)"},
    {"window-us", 0, MB_OPT_DOUBLE, &O.window_us, 1, 1000000, NULL,
     "--sync window: microseconds from one repetition's start to the next (default: calibrated)"},
    {"order", 0, MB_OPT_CHOICE, &order_idx, 0, 0, "fixed,shuffle",
     "test order: as listed, or seeded random so that slow drift does not fall on one method (fixed)"},
    {"order-seed", 0, MB_OPT_INT, &order_seed, 0, 4294967295ll, NULL,
     "seed of --order shuffle (default: drawn at start; the JSON records it)"},
    {"overlap", 0, MB_OPT_DOUBLE, &O.overlap, 1, 1000, NULL,
     "also measure each nonblocking operation with computation F times its own time between its start and its "
     "wait: the share of it hidden (docs/measurement.md, \"Overlap with computation\") (off)"},
    {"trace", 0, MB_OPT_STRING, &O.trace, 0, 0, "PATTERN",
     "after measuring each test matching PATTERN (words joined by '/', e.g. irecv-send/world/4-nbr), trace a few "
     "more iterations with libmpimb-prof.so (Chrome trace-event JSON beside the CSV)"},
    {"trace-iters", 0, MB_OPT_INT, &O.trace_iters, 1, 100000, NULL, "--trace: iterations traced per test (3)"},
    {"trace-out", 0, MB_OPT_STRING, &O.trace_out, 0, 0, "FILE", "--trace: the trace's path (default: CSV stem + -trace.json)"},
    {0},
};

static char errbuf[512];
static const char *fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return errbuf;
}

static const char *list_words(const char *choices)
{
    static char buf[512];
    size_t j = 0;
    for (const char *p = choices; *p && j + 3 < sizeof buf; p++) {
        buf[j++] = *p;
        if (*p == ',') buf[j++] = ' ';
    }
    buf[j] = 0;
    return buf;
}

/* Stores one option's value or returns the message saying why it is bad. */
static const char *store(const struct mb_option *op, const char *arg)
{
    long long v;
    switch (op->kind) {
    case MB_OPT_FLAG:
        *(int *)op->dest = 1;
        return NULL;
    case MB_OPT_STRING:
        if (!*arg) return fail("--%s needs a non-empty value", op->name);
        *(const char **)op->dest = arg;
        return NULL;
    case MB_OPT_INT:
        if (mb_parse_long(arg, op->min, op->max, &v)) {
            if (op->min == 1 && op->max >= 1000000) {
                if (!mb_parse_long(arg, op->min, LLONG_MAX, &v)) /* a number, above the limit: say the limit */
                    return fail("--%s must be at most %lld, got '%s'", op->name, op->max, arg);
                return fail("--%s must be a positive integer, got '%s'", op->name, arg);
            }
            return fail("--%s must be an integer from %lld to %lld, got '%s'", op->name, op->min, op->max, arg);
        }
        *(long *)op->dest = (long)v;
        return NULL;
    case MB_OPT_SIZE: {
        size_t s;
        if (mb_parse_size(arg, &s) || (long long)s < op->min || (op->max && (long long)s > op->max))
            return fail("--%s must be a size in bytes from %lld to %lld (K/M/G suffixes allowed), got '%s'",
                        op->name, op->min, op->max, arg);
        *(size_t *)op->dest = s;
        return NULL;
    }
    case MB_OPT_DOUBLE: {
        double d;
        if (mb_parse_double(arg, &d) || d < 0 || (d == 0 && op->min != 0) || (op->max && d > (double)op->max))
            return op->max ? fail("--%s must be a positive number up to %lld, got '%s'", op->name, op->max, arg)
                           : fail("--%s must be a %s number, got '%s'", op->name,
                                  op->min == 0 ? "non-negative" : "positive", arg);
        *(double *)op->dest = d;
        return NULL;
    }
    case MB_OPT_CHOICE: {
        int i = mb_choice_index(op->choices, arg, strlen(arg));
        if (i < 0) return fail("--%s: unknown value '%s' (choose from: %s)", op->name, arg, list_words(op->choices));
        *(int *)op->dest = i;
        return NULL;
    }
    case MB_OPT_LIST: {
        unsigned long mask = 0;
        if (!*arg) return fail("--%s needs a comma-separated list", op->name);
        for (const char *p = arg; p;) {
            const char *c = strchr(p, ',');
            size_t n = c ? (size_t)(c - p) : strlen(p);
            int i = mb_choice_index(op->choices, p, n);
            if (n == 3 && !strncmp(p, "all", 3))
                mask = ~0ul;
            else if (i < 0)
                return fail("--%s: unknown value '%.*s' (choose from: %s, all)", op->name, (int)n, p,
                            list_words(op->choices));
            else
                mask |= 1ul << i;
            p = c ? c + 1 : NULL;
        }
        *(unsigned long *)op->dest = mask;
        return NULL;
    }
    case MB_OPT_RANGE: {
        size_t lo, hi;
        const char *colon = strchr(arg, ':');
        char first[64];
        snprintf(first, sizeof first, "%.*s", colon ? (int)(colon - arg) : 0, arg);
        if (!colon || mb_parse_size(first, &lo) || mb_parse_size(colon + 1, &hi))
            return fail("--%s must be MIN:MAX in bytes (K/M/G/T suffixes allowed), got '%s'", op->name, arg);
        if (lo > MB_MSG_MAX || hi > MB_MSG_MAX) /* the one limit of every message size */
            return fail("--%s: messages are at most 1G bytes (%llu), got '%s'", op->name,
                        (unsigned long long)MB_MSG_MAX, arg);
        if (lo > hi) return fail("--%s must be MIN:MAX in bytes with MIN <= MAX, got '%s'", op->name, arg);
        ((size_t *)op->dest)[0] = lo;
        ((size_t *)op->dest)[1] = hi;
        return NULL;
    }
    }
    return NULL;
}

static int count_opts(const struct mb_option *o)
{
    int n = 0;
    while (o && o[n].name) n++;
    return n;
}

static const struct mb_option *nth(const struct mb_program *prog, int i)
{
    int nc = count_opts(common);
    return i < nc ? &common[i] : &prog->options[i - nc];
}

static int is_explicit[64];
static int explicit_common(const void *dest)
{
    for (int i = 0; common[i].name; i++)
        if (common[i].dest == dest) return is_explicit[i];
    return 0;
}

/* Options about message sizes: only for programs that sweep them; --overlap:
 * only for programs with nonblocking operations.  0: the option applies to prog. */
static int not_for(const struct mb_option *op, const struct mb_program *prog)
{
    if (op->dest == sizes || op->dest == &O.sweep_budget) return !(prog->flags & MB_USES_SIZES);
    return op->dest == &O.overlap && !(prog->flags & MB_OVERLAP);
}

const char *mb_check_label(const char *what, const char *l)
{
    if (strlen(l) > 63) return fail("%s must be at most 63 characters, got '%s'", what, l);
    for (const char *p = l; *p; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') || *p == '.' ||
              *p == '_' || *p == '-'))
            return fail("%s may contain only letters, digits, '.', '_' and '-', got '%s'", what, l);
    return NULL;
}

const char *mb_parse_options(int argc, char **argv, const struct mb_program *prog, struct mb_opts *out,
                             int *action)
{
    int nc = count_opts(common), n = nc + count_opts(prog->options);
    struct option *lo = calloc((size_t)n + 1, sizeof *lo);
    char shorts[128] = ":";
    memset(is_explicit, 0, sizeof is_explicit); /* parsing starts afresh each call */
    want_help = want_version = want_list = 0;
    stat_idx = sync_idx = -1;
    order_idx = 0;
    order_seed = -1;
    O = (struct mb_opts){.timeout = 300, .reps = 10, .max_reps = 1000, .warmup = 5, .rel_ci = 0.02,
                         .time_budget = 0.1, .min_rep_time = 1e-3};
    for (int i = 0; i < n; i++) {
        const struct mb_option *op = nth(prog, i);
        lo[i] = (struct option){op->name, op->kind == MB_OPT_FLAG ? no_argument : required_argument, NULL, 256 + i};
        if (op->short_name) {
            size_t l = strlen(shorts);
            shorts[l] = (char)op->short_name;
            shorts[l + 1] = op->kind == MB_OPT_FLAG ? 0 : ':';
            shorts[l + 2] = 0;
        }
    }
    const char *err = NULL;
    int c, idx;
    opterr = 0;
    optind = 1;
    while (!err && (c = getopt_long(argc, argv, shorts, lo, &idx)) != -1) {
        const struct mb_option *op = NULL;
        if (c >= 256) {
            op = nth(prog, c - 256);
            if (c - 256 < nc) is_explicit[c - 256] = 1;
        } else if (c == ':') {
            err = fail("%s needs a value", argv[optind - 1]);
        } else if (c == '?') {
            if (optopt >= 256)
                err = fail("%s takes no value", argv[optind - 1]);
            else if (optopt)
                err = fail("unrecognized option '-%c' (see --help)", optopt);
            else
                err = fail("unrecognized option '%s' (see --help)", argv[optind - 1]);
        } else {
            for (int i = 0; i < n && !op; i++)
                if (nth(prog, i)->short_name == c) {
                    op = nth(prog, i);
                    if (i < nc) is_explicit[i] = 1;
                }
        }
        if (op) {
            if (not_for(op, prog))
                err = fail("--%s does not apply to %s", op->name, prog->name);
            else
                err = store(op, optarg);
        }
    }
    if (!err && optind < argc) err = fail("unexpected argument '%s' (see --help)", argv[optind]);
    free(lo);
    *action = want_help ? 1 : want_version ? 2 : want_list ? 3 : 0;
    if (err || *action) return err;

    /* --quick lowers the counts the user did not set */
    /* the program's own defaults, then --quick's */
    if (prog->rel_ci > 0 && !explicit_common(&O.rel_ci)) O.rel_ci = prog->rel_ci;
    if (prog->sweep_budget > 0 && !O.quick && !explicit_common(&O.sweep_budget)) O.sweep_budget = prog->sweep_budget;
    if (prog->min_rep_time > 0 && !explicit_common(&O.min_rep_time)) O.min_rep_time = prog->min_rep_time;
    if (O.quick) {
        if (!explicit_common(&O.warmup)) O.warmup = 1;
        if (!explicit_common(&O.reps)) O.reps = 3;
        if (!explicit_common(&O.max_reps)) O.max_reps = O.reps;
        if (!explicit_common(&O.min_rep_time)) O.min_rep_time = 0;
        if (!explicit_common(&O.time_budget)) O.time_budget = 0.05;
    }
    if (!explicit_common(&O.max_reps) && O.max_reps < O.reps) O.max_reps = O.reps;
    if (O.max_reps < O.reps)
        return fail("--max-reps (%ld) must be at least --reps (%ld)", O.max_reps, O.reps);
    if (O.rel_ci >= 1) return fail("--rel-ci must be below 1, got '%g'", O.rel_ci);
    if (O.label && (err = mb_check_label("--label", O.label))) return err;
    O.stat = stat_idx < 0 ? MB_STAT_MEDIAN : (enum mb_stat)stat_idx;
    O.sync = sync_idx < 0 ? MB_SYNC_AUTO : sync_idx ? MB_SYNC_WINDOW : MB_SYNC_BARRIER;
    int windows = O.sync == MB_SYNC_WINDOW || (O.sync == MB_SYNC_AUTO && (prog->flags & MB_WINDOW_BY_DEFAULT));
    if (!windows && explicit_common(&O.window_us)) return fail("--window-us needs --sync window");
    O.shuffle = order_idx == 1;
    if (order_seed >= 0 && !O.shuffle) return fail("--order-seed needs --order shuffle");
    O.order_seed = order_seed;
    if (prog->flags & MB_USES_SIZES) {
        if (explicit_common(sizes)) {
            O.size_min = sizes[0];
            O.size_max = sizes[1];
        } else {
            O.size_min = prog->size_min;
            O.size_max = O.quick && prog->quick_size_max ? prog->quick_size_max : prog->size_max;
        }
    }
    /* the outputs, found out before MPI starts so that a bad one leaves nothing behind (outputs.c); -o DIR:
     * the CSV's name is new (program, label, time) */
    struct stat st;
    size_t ol = O.output ? strlen(O.output) : 0;
    int dir = ol && (O.output[ol - 1] == '/' || (stat(O.output, &st) == 0 && S_ISDIR(st.st_mode)));
    if (mb_outputs_check(&O, ol && !dir ? O.output : NULL, 0, errbuf, sizeof errbuf)) return errbuf;
    if (prog->validate && (err = prog->validate())) return fail("%s", err);
    if ((err = mb_trace_check(prog, &O, errbuf, sizeof errbuf))) return err == errbuf ? err : fail("%s", err);
    if (O.trace && !O.trace_iters) O.trace_iters = 3;
    *out = O;
    return NULL;
}

int mb_option_format(const struct mb_program *prog, const char *name, char *buf, size_t len)
{
    const struct mb_option *op = prog->options;
    while (op && op->name && strcmp(op->name, name)) op++;
    if (!op || !op->name) return -1;
    switch (op->kind) {
    case MB_OPT_FLAG: snprintf(buf, len, "%d", *(int *)op->dest ? 1 : 0); break;
    case MB_OPT_INT: snprintf(buf, len, "%ld", *(long *)op->dest); break;
    case MB_OPT_SIZE: snprintf(buf, len, "%zu", *(size_t *)op->dest); break;
    case MB_OPT_DOUBLE: snprintf(buf, len, "%.9g", *(double *)op->dest); break;
    case MB_OPT_STRING: snprintf(buf, len, "%s", *(const char **)op->dest ? *(const char **)op->dest : ""); break;
    case MB_OPT_RANGE: snprintf(buf, len, "%zu:%zu", ((size_t *)op->dest)[0], ((size_t *)op->dest)[1]); break;
    case MB_OPT_CHOICE:
    case MB_OPT_LIST: {
        /* the chosen word(s), in the order of choices; a list's "all" spelled out */
        int idx = op->kind == MB_OPT_CHOICE ? *(int *)op->dest : 0;
        unsigned long mask = op->kind == MB_OPT_LIST ? *(unsigned long *)op->dest : idx >= 0 ? 1ul << idx : 0;
        size_t n = 0;
        int i = 0;
        buf[0] = 0;
        for (const char *p = op->choices; p && *p && n < len; i++) {
            const char *c = strchr(p, ',');
            int wl = c ? (int)(c - p) : (int)strlen(p);
            if (mask >> i & 1) n += (size_t)snprintf(buf + n, len - n, "%s%.*s", n ? "," : "", wl, p);
            p = c ? c + 1 : NULL;
        }
        if (!buf[0]) snprintf(buf, len, "none");
        break;
    }
    }
    return 0;
}

void mb_print_help(const struct mb_program *prog)
{
    printf("Usage: %s [options]\n%s\n\nOptions of %s:\n", prog->name, prog->summary, prog->name);
    for (int pass = 0; pass < 2; pass++) {
        const struct mb_option *t = pass ? common : prog->options;
        if (pass) printf("\nCommon options:\n");
        for (int i = 0; t && t[i].name; i++) {
            if (not_for(&t[i], prog)) continue;
            static const char *const meta[] = {"", "N", "SIZE", "X", "WORD", "LIST", "TEXT", "MIN:MAX"};
            char lhs[64];
            const char *value = t[i].kind == MB_OPT_STRING && t[i].choices ? t[i].choices : meta[t[i].kind];
            snprintf(lhs, sizeof lhs, "%c%c%s--%s%s%s", t[i].short_name ? '-' : ' ', t[i].short_name ? t[i].short_name : ' ',
                     t[i].short_name ? ", " : "  ", t[i].name, t[i].kind == MB_OPT_FLAG ? "" : " ", value);
            printf("  %-26s %s", lhs, t[i].help);
            if (t[i].kind == MB_OPT_CHOICE || t[i].kind == MB_OPT_LIST) printf(" [%s]", list_words(t[i].choices));
            printf("\n");
        }
    }
    if (prog->rel_ci > 0 || prog->sweep_budget > 0 || prog->min_rep_time > 0) {
        printf("\n%s's own defaults:", prog->name);
        if (prog->rel_ci > 0) printf(" --rel-ci %g", prog->rel_ci);
        if (prog->min_rep_time > 0) printf(" --min-rep-time %g", prog->min_rep_time);
        if (prog->sweep_budget > 0) printf(" --sweep-budget %g (not with --quick)", prog->sweep_budget);
        printf("\n");
    }
    printf("\nExit status: 0 ok, 1 a measurement or verification failed, 2 usage error.\n");
}
