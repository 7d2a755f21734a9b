/* --trace PATTERN (docs/profile.md, "Trace mode"): after a selected test is
 * measured, a few more of its iterations run under the profiler's trace
 * mode, bracketed by MPI_Pcontrol(1) / (0).  The profiler is loaded only
 * then: before MPI_Init each rank re-executes itself with libmpimb-prof.so in
 * LD_PRELOAD (found beside the program, in ../lib, or MPIMB_PROF_LIB), so a
 * run without --trace never has it in its address space (the JSON's
 * trace.profiler says which library was loaded, or null).  Under SMPI every
 * rank is a privatized copy of the program in one process: the profiler is
 * linked into a second build instead (build/smpi/trace/, which
 * scripts/simulate runs for --trace), and nothing is re-executed.
 *
 * PATTERN is words joined by '/', each of which must be one of the test's:
 * its test, method and comm columns, "N-nbr", "periodic" / "non-periodic",
 * "NT" (threads), the size in bytes and its params (key=value, or the value
 * alone: irecv-send/datatype), e.g. irecv-send/world/4-nbr.  Before
 * MPI starts, every word must be one of the program's (its options' choices,
 * the values its string options were given, what --list prints, or such
 * words joined by '-') and not excluded by a list option, or a key=value
 * word; a pattern no test of the run matched is found at the end. */
#include "internal.h"
#include "options.h"
#include "pcontrol.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int traced;
static char loaded[PATH_MAX]; /* the profiler in this process's maps, "" if none */

/* The row's words, '/'-joined: "halo/irecv-send/world/4-nbr/non-periodic/800", then its params as
 * key=value words ("packing=datatype", "algorithm=binomial"): two rows that differ only in a setting
 * without a column of its own (--layout array's packing, --algorithms) get keys of their own. */
static void row_key(const struct mb_row *r, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s", r->test);
#define ADD(...) if (n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, __VA_ARGS__)
    if (r->method[0]) ADD("/%s", r->method);
    if (r->comm[0]) ADD("/%s", r->comm);
    if (r->neighbors >= 0) ADD("/%d-nbr", r->neighbors);
    if (r->periodic >= 0) ADD("/%s", r->periodic ? "periodic" : "non-periodic");
    if (r->threads > 1) ADD("/%dT", r->threads);
    if (r->bytes >= 0) ADD("/%lld", r->bytes);
    for (const char *p = r->params; *p;) { /* "a=1;b=2" (params.c); a '/' in a value would split it */
        size_t l = strcspn(p, ";");
        ADD("/");
        for (size_t i = 0; i < l && n >= 0 && (size_t)n + 1 < len; i++) buf[n++] = p[i] == '/' ? '-' : p[i];
        if (n >= 0 && (size_t)n < len) buf[n] = 0;
        p += l + (p[l] == ';');
    }
#undef ADD
}

/* w is one of key's words, or the value of one of its key=value words */
static int has_word(const char *key, const char *w, size_t wl)
{
    for (const char *p = key; *p;) {
        size_t l = strcspn(p, "/");
        const char *eq = memchr(p, '=', l), *v = eq ? eq + 1 : p;
        if ((l == wl && !strncmp(p, w, wl)) || (eq && (size_t)(p + l - v) == wl && !strncmp(v, w, wl))) return 1;
        p += l + (p[l] == '/');
    }
    return 0;
}

static int matches(const char *pattern, const struct mb_row *r)
{
    char key[1024];
    row_key(r, key, sizeof key);
    for (const char *p = pattern; *p;) {
        size_t l = strcspn(p, "/");
        if (!has_word(key, p, l)) return 0;
        p += l + (p[l] == '/');
    }
    return 1;
}

/* The program's words: its options' choices and what --list prints. */
static char *vocabulary(const struct mb_program *prog)
{
    char *text = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&text, &n);
    if (!m) return NULL;
    for (const struct mb_option *o = prog->options; o && o->name; o++)
        if (o->kind == MB_OPT_LIST || o->kind == MB_OPT_CHOICE)
            fprintf(m, "%s\n", o->choices);
        else if (o->kind == MB_OPT_STRING && *(const char **)o->dest) /* as given: --algorithms NAME,NAME */
            fprintf(m, "%s\n", *(const char **)o->dest);
    if (prog->list) { /* it prints to stdout (and calls no MPI): caught here */
        fflush(stdout);
        FILE *out = stdout;
        stdout = m;
        prog->list();
        stdout = out;
    }
    fclose(m);
    return text;
}

static int is_token(const char *text, const char *w, size_t l)
{
    static const char *const sep = " \t\n,;:()[]<>|*";
    for (const char *p = text; p && *p;) {
        p += strspn(p, sep);
        size_t t = strcspn(p, sep);
        if (t == l && !strncmp(p, w, l)) return 1;
        p += t;
    }
    return 0;
}

/* A word of the program's vocabulary, or several joined by '-' (rma's
 * put-latency: an operation and a test); *opt: the LIST option it is a
 * choice of, for the selection check.  Or a form the harness makes. */
static int known_word(const struct mb_program *prog, const char *w, size_t l, const struct mb_option **opt, int *bit)
{
    *opt = NULL;
    const char *eq = memchr(w, '=', l);
    if (eq && eq > w) /* a setting as params spells it (algorithm=NAME, whose names the library gives only once
                       * MPI runs): taken as asked, and a run whose rows have none is found at the end */
        return eq + 1 < w + l;
    for (const struct mb_option *o = prog->options; o && o->name; o++) {
        int i = o->kind == MB_OPT_LIST ? mb_choice_index(o->choices, w, l) : -1;
        if (i >= 0) {
            *opt = o;
            *bit = i;
            return 1;
        }
    }
    char *text = vocabulary(prog);
    int ok[64] = {1}; /* ok[k]: w up to its k-th '-' boundary is made of words */
    size_t at[64] = {0};
    int nb = 1;
    for (size_t i = 0; i < l && nb < 63; i++)
        if (w[i] == '-') at[nb++] = i + 1;
    at[nb] = l + 1;
    for (int k = 1; k <= nb; k++)
        for (int j = 0; j < k && !ok[k]; j++)
            ok[k] = ok[j] && text && is_token(text, w + at[j], at[k] - 1 - at[j]);
    free(text);
    if (ok[nb]) return 1;
    size_t d = strspn(w, "0123456789");
    if (d && d == l) return 1;                                             /* bytes */
    if (d && l == d + 4 && !strncmp(w + d, "-nbr", 4)) return 1;           /* stencil */
    if (d && l == d + 1 && w[d] == 'T') return 1;                          /* threads */
    return (l == 8 && !strncmp(w, "periodic", 8)) || (l == 12 && !strncmp(w, "non-periodic", 12));
}

/* "OPTION=CHOICE" that option `name` acts only with (mb_program.acts_with), or NULL. */
static const char *acts_with(const struct mb_program *prog, const char *name)
{
    for (const char *const *a = prog->acts_with; a && a[0] && a[1]; a += 2)
        if (!strcmp(a[0], name)) return a[1];
    return NULL;
}

/* Whether "OPTION=CHOICE" holds: the program's CHOICE option OPTION (an index into its choices) is CHOICE. */
static int acting(const struct mb_program *prog, const char *cond)
{
    const char *eq = strchr(cond, '=');
    for (const struct mb_option *o = prog->options; eq && o && o->name; o++)
        if (o->kind == MB_OPT_CHOICE && strlen(o->name) == (size_t)(eq - cond) && !strncmp(o->name, cond, (size_t)(eq - cond)))
            return mb_choice_index(o->choices, eq + 1, strlen(eq + 1)) == *(int *)o->dest;
    return 1;
}

const char *mb_trace_check(const struct mb_program *prog, const struct mb_opts *o, char *buf, size_t len)
{
    if (!o->trace) return o->trace_out || o->trace_iters ? "--trace-iters and --trace-out need --trace" : NULL;
    for (const char *p = o->trace;;) {
        size_t l = strcspn(p, "/");
        const struct mb_option *opt;
        int bit = 0;
        if (!l) {
            snprintf(buf, len, "--trace '%s': an empty word (form: WORD[/WORD...], e.g. irecv-send/world/4-nbr)",
                     o->trace);
            return buf;
        }
        if (!known_word(prog, p, l, &opt, &bit)) {
            snprintf(buf, len, "--trace '%s' matches no test: '%.*s' is no word of a %s test (see --list)", o->trace,
                     (int)l, p, prog->name);
            return buf;
        }
        const char *cond = opt ? acts_with(prog, opt->name) : NULL;
        if (cond && !acting(prog, cond)) {
            snprintf(buf, len, "--trace '%s' matches no test: '%.*s' is a choice of --%s, which acts only with --%.*s %s",
                     o->trace, (int)l, p, opt->name, (int)strcspn(cond, "="), cond, strchr(cond, '=') + 1);
            return buf;
        }
        unsigned long mask = opt ? *(unsigned long *)opt->dest : 0;
        if (mask && !(mask >> bit & 1)) {
            snprintf(buf, len, "--trace '%s' matches no test: --%s does not select '%.*s'", o->trace, opt->name,
                     (int)l, p);
            return buf;
        }
        if (!p[l]) break;
        p += l + 1;
    }
    if (o->trace_out) { /* its directory must take the file */
        const char *t = o->trace_out, *slash = strrchr(t, '/');
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - t) + (slash == t) : 1, slash ? t : ".");
        if (t[strlen(t) - 1] == '/' || access(dir, W_OK)) {
            snprintf(buf, len, "--trace-out '%s' cannot be written (directory '%s' %s)", t, dir,
                     t[strlen(t) - 1] == '/' ? "given, not a file" : "is not writable or does not exist");
            return buf;
        }
    }
    return NULL;
}

/* --trace-out's name, claimed for the run by rank 0: its file aside, created
 * and locked (outputs.c) until after MPI_Finalize, so a second run given the
 * same --trace-out is refused while this one lives (a trace beside the CSV
 * is guarded by the CSV's own lock).  The profiler writes the trace under
 * that name aside and renames it onto --trace-out, at MPI_Finalize. */
static int claim = -1;
static char claim_path[PATH_MAX + 16];

int mb_trace_claim(const struct mb_opts *o, char *err, size_t len)
{
    if (!o->trace || !o->trace_out) return 0;
    char *a = mb_aside_path(o->trace_out);
    snprintf(claim_path, sizeof claim_path, "%s", a);
    free(a);
    claim = mb_aside_create(claim_path, 1, err, len, o->trace_out);
    return claim < 0 ? -1 : 0;
}

void mb_trace_release(void)
{
    if (claim < 0) return;
    struct stat mine, there;
    if (!fstat(claim, &mine) && !stat(claim_path, &there) && mine.st_ino == there.st_ino &&
        mine.st_dev == there.st_dev)
        unlink(claim_path); /* still the claim: no trace came (the run failed) */
    close(claim);
    claim = -1;
}

/* The path of the first library in this process's maps whose name has
 * `name` in it, into out; 0 if none. */
static int mapped(const char *name, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 128];
    out[0] = 0;
    while (f && !out[0] && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (p && strstr(p, name)) {
            p[strcspn(p, "\n")] = 0;
            snprintf(out, len, "%s", p);
        }
    }
    if (f) fclose(f);
    return out[0] != 0;
}

/* This process's copy of libmpimb-prof.so. */
static void find_loaded(void) { mapped("libmpimb-prof.so", loaded, sizeof loaded); }

#ifdef MB_SIMULATED
extern const int mbp_trace_builtin __attribute__((weak)); /* defined by the profiler linked in (trace.c) */
#else
static int lib_beside(char *out, size_t len)
{
    const char *env = getenv("MPIMB_PROF_LIB");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = 0;
    *strrchr(exe, '/') = 0;
    static const char *const where[] = {"libmpimb-prof.so", "../lib/libmpimb-prof.so"};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++)
        if (snprintf(out, len, "%s/%s", exe, where[i]) < (int)len && access(out, R_OK) == 0) return 1;
    return 0;
}
#endif

void mb_trace_preload(char **argv, const struct mb_opts *o, char *err, size_t len)
{
    /* only with --trace: under SMPI every rank is a thread of one process whose
     * maps grow with the ranks, and reading them per rank cost a 1024-rank run
     * 6 s of its start-up (the metadata's look is rank 0's, mb_trace_start) */
    if (!o->trace) return;
#ifdef MB_SIMULATED
    /* every simulated rank is a privatized copy of the program in smpirun's one
     * process: nothing to preload or re-execute; scripts/simulate runs the
     * build with the profiler linked in (build/smpi/trace/, Makefile) */
    if (!&mbp_trace_builtin) {
        snprintf(err, len, "--trace in simulation needs the program built with the profiler: run it with "
                           "scripts/simulate (it runs build/smpi/trace/PROGRAM)");
        return;
    }
    snprintf(loaded, sizeof loaded, "%s (linked in: SMPI)", argv[0]);
#else
    find_loaded();
    if (loaded[0]) return;
    char lib[PATH_MAX], pre[3 * PATH_MAX + 16];
    if (getenv("MPIMB_TRACE_EXEC")) {
        snprintf(err, len, "--trace: LD_PRELOAD=%s did not load the profiler", getenv("LD_PRELOAD"));
        return;
    }
    if (!lib_beside(lib, sizeof lib)) {
        snprintf(err, len, "--trace needs libmpimb-prof.so (MPIMB_PROF_LIB, or beside the program or in its ../lib: "
                           "build it with make)");
        return;
    }
    /* a sanitizer's runtime must stay first in the preload list (ASan checks): name it first */
    char san[PATH_MAX] = "";
    if (!mapped("libasan.so", san, sizeof san)) mapped("libtsan.so", san, sizeof san);
    const char *old = getenv("LD_PRELOAD");
    snprintf(pre, sizeof pre, "%s%s%s%s%s", san, *san ? ":" : "", old && *old ? old : "", old && *old ? ":" : "", lib);
    setenv("LD_PRELOAD", pre, 1);
    setenv("MPIMB_TRACE_EXEC", "1", 1);
#endif
    setenv("MPIMB_PROF_TRACE", o->trace_out ? o->trace_out : "@program", 1);
    setenv("MPIMB_PROF_TRACE_START", "0", 1);
    setenv("MPIMB_PROF_OUT", "none", 1);
#ifndef MB_SIMULATED
    execv("/proc/self/exe", argv);
    snprintf(err, len, "--trace: cannot re-execute the program with the profiler");
#endif
}

void mb_trace_start(struct mb_run *run)
{
    const struct mb_opts *o = &run->opts;
    char path[PATH_MAX + 16] = "";
    if (o->trace && run->rank == 0) {
        if (o->trace_out)
            snprintf(path, sizeof path, "%s", o->trace_out);
        else { /* beside the CSV: <stem>-trace.json (outputs.c) */
            char *t = mb_beside(run->csv_path, MB_TRACE_SUFFIX);
            snprintf(path, sizeof path, "%s", t);
            free(t);
        }
    }
    if (o->trace) MPI_Pcontrol(MBP_PCONTROL_RUN, MBP_PCONTROL_KEY, run->run_id, path);
    if (run->rank != 0) return;
    if (!o->trace) find_loaded(); /* preloaded by hand: the metadata says so */
    char *json = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&json, &n);
    if (!f) return;
    fputs("{\"pattern\": ", f);
    o->trace ? mb_json_str(f, o->trace) : (void)fputs("null", f);
    if (o->trace) {
        fprintf(f, ", \"iters\": %ld, \"path\": ", o->trace_iters);
        mb_json_str(f, path);
    }
    fputs(", \"profiler\": ", f);
    loaded[0] ? mb_json_str(f, loaded) : (void)fputs("null", f);
    fputc('}', f);
    fclose(f);
    mb_meta_add(run, "trace", json);
    free(json);
}

void mb_trace_test(struct mb_run *run, const struct mb_kernel *k, const struct mb_row *row)
{
    const char *p = run->opts.trace;
    if (!p || row->na || !matches(p, row)) return;
    traced++;
    char key[1024], *name = NULL;
    size_t n = 0;
    row_key(row, key, sizeof key);
    FILE *f = open_memstream(&name, &n);
    if (!f) return;
    const char *const field[][2] = {{"key", key}, {"program", run->prog->name}, {"test", row->test},
                                    {"method", row->method}, {"comm", row->comm}, {"params", row->params}};
    for (size_t i = 0; i < sizeof field / sizeof *field; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "{", field[i][0]);
        mb_json_str(f, field[i][1]);
    }
    fprintf(f, ", \"bytes\": %lld, \"iters\": %ld}", row->bytes, run->opts.trace_iters);
    fclose(f);
    MPI_Barrier(run->world);
    MPI_Pcontrol(MBP_PCONTROL_TEST, MBP_PCONTROL_KEY, name);
    MPI_Pcontrol(1);
    if (k->run_timed)
        k->run_timed(k->state, run->opts.trace_iters);
    else
        k->run(k->state, run->opts.trace_iters);
    MPI_Pcontrol(0);
    free(name);
}

int mb_trace_end(struct mb_run *run, char *err, size_t len)
{
    if (!run->opts.trace) return 0;
    if (traced) {
        /* the trace written now, before the metadata's last word (rank 0 learns whether it was) */
        int status = -1;
        char why[MBP_ERR_LEN] = "";
        MPI_Pcontrol(MBP_PCONTROL_FINISH, MBP_PCONTROL_KEY, &status, why);
        if (status > 0) snprintf(err, len, "%s", why[0] ? why : "the trace could not be written");
        return 0;
    }
    if (run->rank == 0)
        fprintf(stderr, "%s: --trace '%s' matched no test of this run (no trace written)\n", run->prog->name,
                run->opts.trace);
    mb_trace_discard(run);
    return 2;
}

void mb_trace_discard(const struct mb_run *run)
{
    if (!run->opts.trace) return;
#ifdef MB_SIMULATED
    if (!&mbp_trace_builtin) return; /* no profiler to tell, and SMPI's own MPI_Pcontrol aborts */
#endif
    MPI_Pcontrol(MBP_PCONTROL_DISCARD, MBP_PCONTROL_KEY);
}
