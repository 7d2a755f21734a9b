/* collectives --tuning FILE: a run with a tuning file written by
 * `mpimb-report tune` loaded into the library (Open MPI: coll_tuned dynamic
 * rules; MPICH: the selection JSON), set in the environment before MPI_Init,
 * so that the library's own choice (the plain `library` rows) is the tuned
 * one; the rows say so (params tuning=<file name>).  The file is checked
 * first, so that a file that is no regular file (a FIFO would hang the
 * read), one for the other library, a truncated or malformed one, or one
 * naming an algorithm the library does not have is one line and exit 2
 * rather than a library that ignores it, aborts in the first collective
 * (Open MPI 4.1 on an unknown algorithm) or asserts (MPICH).  The
 * algorithms are checked against the library's own lists: Open MPI's
 * coll_tuned_<coll>_algorithm enumerations (MPI_T, opened and closed again
 * before MPI_Init), MPICH's table of selection names in its own library
 * file.  Default against tuned: scripts/coll-tune-check. */
#include "coll.h"
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char why[640];

/* The file, whole and NUL-ended (malloc'd); NULL with why set: not a regular file, unreadable, or a NUL in
 * it (no tuning file of either library has one). */
static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO opens without a writer, and is refused */
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(why, sizeof why, "--tuning %s: cannot be read: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (mb_file_kind(st.st_mode)) {
        snprintf(why, sizeof why, "--tuning %s is %s, not a regular file", path, mb_file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = 0;
    ssize_t r = 1;
    while (buf && n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0) n += (size_t)r;
    close(fd);
    if (!buf || r < 0) {
        snprintf(why, sizeof why, "--tuning %s: cannot be read", path);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (strlen(buf) != n) {
        snprintf(why, sizeof why, "--tuning %s: a binary file (a NUL byte), not a tuning file", path);
        free(buf);
        return NULL;
    }
    return buf;
}

/* ------------------------------------------------ Open MPI: coll_tuned rules */

/* The next number of a coll_tuned rules file ('#' starts a comment to the end of the line); 0, -1 at the
 * end, -2 not a number. */
static int next_long(const char **p, long *v)
{
    for (;;) {
        while (isspace((unsigned char)**p)) (*p)++;
        if (**p == '#') {
            while (**p && **p != '\n') (*p)++;
            continue;
        }
        if (!**p) return -1;
        char *end;
        errno = 0;
        *v = strtol(*p, &end, 0);
        if (end == *p || errno) return -2;
        *p = end;
        return 0;
    }
}

/* coll_tuned's collective IDs (ompi/mca/coll/base/coll_base_functions.h, COLLTYPE_T), and the name of each
 * one's algorithm variable (coll_tuned_<name>_algorithm); NULL: tuned has no choice for it. */
static const char *const ompi_colls[] = {
    "allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", NULL /* alltoallw */, "barrier", "bcast",
    "exscan", "gather", NULL /* gatherv */, "reduce", "reduce_scatter", "reduce_scatter_block", "scan", "scatter",
    NULL /* scatterv */};
enum { OMPI_NCOLLS = sizeof ompi_colls / sizeof *ompi_colls };

#if defined(OMPI_MAJOR_VERSION) && !defined(MB_SIMULATED)
/* Whether alg is one of the values coll_tuned_<coll>_algorithm enumerates; -1: MPI_T could not say. */
static int ompi_has(const char *coll, long alg)
{
    char var[96], name[256], en[256];
    int index, nl = sizeof name, verb, bind, scope, ni = 0, el = sizeof en, found = 0;
    MPI_Datatype dt;
    MPI_T_enum et;
    snprintf(var, sizeof var, "coll_tuned_%s_algorithm", coll);
    if (MPI_T_cvar_get_index(var, &index) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(index, name, &nl, &verb, &dt, &et, NULL, NULL, &bind, &scope) != MPI_SUCCESS ||
        et == MPI_T_ENUM_NULL || MPI_T_enum_get_info(et, &ni, en, &el) != MPI_SUCCESS)
        return -1;
    for (int j = 0; j < ni && !found; j++) {
        char in[128];
        int il = sizeof in, v;
        found = MPI_T_enum_get_item(et, j, &v, in, &il) == MPI_SUCCESS && v == alg;
    }
    return found;
}
#endif

static const char *check_ompi(const char *text, const char *path)
{
    const char *p = text;
    long ncoll, id, ncomm, size, nrules, r[4], seen[OMPI_NCOLLS] = {0}, algs[OMPI_NCOLLS][64], nalgs[OMPI_NCOLLS] = {0};
#define NEED(x, what)                                                                                               \
    if (next_long(&p, &(x))) {                                                                                       \
        snprintf(why, sizeof why, "--tuning %s: not a complete Open MPI coll_tuned rules file (%s missing or not a " \
                 "number: truncated or malformed)", path, what);                                                     \
        return why;                                                                                                  \
    }
#define RANGE(cond, ...)                                                                                            \
    if (!(cond)) {                                                                                                   \
        int at = snprintf(why, sizeof why, "--tuning %s: ", path);                                                   \
        snprintf(why + at, sizeof why - (size_t)at, __VA_ARGS__);                                                    \
        return why;                                                                                                  \
    }
    NEED(ncoll, "the number of collectives");
    RANGE(ncoll >= 1 && ncoll <= OMPI_NCOLLS, "the number of collectives must be 1 to %d, got %ld", OMPI_NCOLLS, ncoll);
    for (long c = 0; c < ncoll; c++) {
        NEED(id, "a collective's ID");
        RANGE(id >= 0 && id < OMPI_NCOLLS && ompi_colls[id], "collective ID %ld is none that coll_tuned chooses an "
              "algorithm for", id);
        RANGE(!seen[id]++, "collective ID %ld (%s) appears twice", id, ompi_colls[id]);
        NEED(ncomm, "its number of communicator sizes");
        RANGE(ncomm >= 1 && ncomm <= 1 << 20, "%s: the number of communicator sizes must be positive, got %ld",
              ompi_colls[id], ncomm);
        long last_size = 0;
        for (long k = 0; k < ncomm; k++) {
            NEED(size, "a communicator size");
            RANGE(size > last_size, "%s: communicator sizes must be positive and rising, got %ld after %ld",
                  ompi_colls[id], size, last_size);
            last_size = size;
            NEED(nrules, "its number of rules");
            RANGE(nrules >= 1 && nrules <= 1 << 20, "%s: the number of rules must be positive, got %ld",
                  ompi_colls[id], nrules);
            long last_msg = -1;
            for (long j = 0; j < nrules; j++) {
                for (int q = 0; q < 4; q++) NEED(r[q], "a rule (msg_size algorithm faninout segsize)");
                RANGE(r[0] > last_msg, "%s: message sizes must be rising from 0, got %ld after %ld", ompi_colls[id],
                      r[0], last_msg);
                RANGE(r[1] >= 0 && r[2] >= 0 && r[3] >= 0, "%s: a rule's algorithm, fan-in/out and segment size must "
                      "be 0 or more, got %ld %ld %ld", ompi_colls[id], r[1], r[2], r[3]);
                last_msg = r[0];
                if (nalgs[id] < 64) algs[id][nalgs[id]++] = r[1];
            }
        }
    }
    long extra;
    RANGE(next_long(&p, &extra) == -1, "text after the last rule of the Open MPI coll_tuned rules file");
#if defined(OMPI_MAJOR_VERSION) && !defined(MB_SIMULATED)
    /* the algorithms: each one of its collective's enumeration (MPI_T before MPI_Init, closed again: Open MPI
     * 4.1's MPI_Init crashes with MPI_T left open) */
    int provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS) {
        const char *bad = NULL;
        long bad_alg = 0;
        for (int c = 0; c < OMPI_NCOLLS && !bad; c++)
            for (long k = 0; k < nalgs[c] && !bad; k++)
                if (ompi_has(ompi_colls[c], algs[c][k]) == 0) bad = ompi_colls[c], bad_alg = algs[c][k];
        MPI_T_finalize();
        RANGE(!bad, "%s algorithm %ld is none of this Open MPI's (ompi_info --param coll tuned --level 9 lists them)",
              bad, bad_alg);
    }
#endif
#undef NEED
#undef RANGE
    (void)algs; /* (SMPI, MPICH: no enumeration to ask) */
    return NULL;
}

/* ------------------------------------------------ MPICH: the selection JSON */

/* The subset of JSON a selection file is: objects of objects, keys strings ("collective=bcast",
 * "comm_size<=8", "algorithm=MPIR_Bcast_intra_binomial"), an empty object only under an algorithm. */
struct jp {
    const char *p, *path, *image, *defaults;
    long nimage;
    int bad;
};

static void jfail(struct jp *j, const char *fmt, const char *arg)
{
    if (j->bad) return;
    j->bad = 1;
    int at = snprintf(why, sizeof why, "--tuning %s: not MPICH's selection format: ", j->path);
    snprintf(why + at, sizeof why - (size_t)at, fmt, arg);
}

static void ws(struct jp *j)
{
    while (isspace((unsigned char)*j->p)) j->p++;
}

/* a string into buf (cut to len; escapes kept as written) */
static void jstring(struct jp *j, char *buf, size_t len)
{
    size_t n = 0;
    if (*j->p != '"') return jfail(j, "%s", "a key that is no string (truncated or malformed)");
    for (j->p++; *j->p && *j->p != '"'; j->p++) {
        if ((unsigned char)*j->p < 0x20) return jfail(j, "%s", "a control character in a string");
        if (*j->p == '\\' && j->p[1]) j->p++;
        if (n + 1 < len) buf[n++] = *j->p;
    }
    buf[n] = 0;
    if (*j->p != '"') return jfail(j, "%s", "a string that does not end (truncated or malformed)");
    j->p++;
}

/* the library knows this name: NUL, the text, NUL somewhere in its own file */
static int in_image(const struct jp *j, const char *text)
{
    size_t l = strlen(text);
    for (const char *q = j->image; q && (q = memmem(q, (size_t)(j->image + j->nimage - q), text, l + 1));
         q += l)
        if (q > j->image && q[-1] == 0) return 1;
    return !j->image; /* (no image to ask: not checked) */
}

static void jobject(struct jp *j, const char *key, int depth)
{
    ws(j);
    if (*j->p != '{') return jfail(j, key[0] ? "the value of '%s' is not an object" : "%s", key[0] ? key : "not a JSON object");
    if (depth > 32) return jfail(j, "%s", "objects nested deeper than 32");
    j->p++;
    ws(j);
    int members = 0, is_alg = !strncmp(key, "algorithm=", 10);
    while (*j->p != '}' && !j->bad) {
        char k[256];
        if (members && *j->p++ != ',') return jfail(j, "%s", "a member not followed by ',' or '}' (truncated or malformed)");
        ws(j);
        jstring(j, k, sizeof k);
        ws(j);
        if (!j->bad && *j->p++ != ':') return jfail(j, "%s", "a key not followed by ':'");
        if (j->bad) return;
        if (depth == 0 && strncmp(k, "collective=", 11)) return jfail(j, "'%s' is not collective=NAME", k);
        if (depth == 0 && j->defaults) {
            char quoted[300];
            snprintf(quoted, sizeof quoted, "\"%s\"", k);
            if (!strstr(j->defaults, quoted)) return jfail(j, "'%s' is no collective of this MPICH's selection", k);
        }
        if (!strncmp(k, "algorithm=", 10) && !in_image(j, k))
            return jfail(j, "'%s' is no algorithm of this MPICH (its selection names)", k);
        jobject(j, k, depth + 1);
        members++;
        ws(j);
    }
    if (j->bad) return;
    if (*j->p != '}') return jfail(j, "%s", "an object that does not end (truncated or malformed)");
    j->p++;
    if (!members && depth == 0) return jfail(j, "%s", "no collective in it");
    if (!members && !is_alg) return jfail(j, "'%s' leads to no algorithm", key);
}

static const char *check_json(const char *text, const char *path)
{
    long n = 0;
    struct jp j = {.p = text, .path = path};
#if defined(MPICH_VERSION) && !defined(MB_SIMULATED)
    j.image = coll_library_image(&n);
    j.nimage = n;
    j.defaults = coll_algs_default_selection();
#endif
    jobject(&j, "", 0);
    ws(&j);
    if (!j.bad && *j.p) jfail(&j, "%s", "text after the object");
    /* MPICH asserts on a collective its selection lacks: the file replaces the built-in one whole */
    for (const char *q = j.defaults; !j.bad && q && (q = strstr(q, "\"collective=")); q++) {
        char c[128];
        snprintf(c, sizeof c, "%.*s", (int)strcspn(q, ":"), q);
        if (!strstr(text, c)) {
            c[strlen(c) - 1] = 0;
            jfail(&j, "it lacks %s, which MPICH then asserts on (a selection file replaces its whole built-in one)",
                  c + 1);
        }
    }
    free((void *)j.image);
    free((void *)j.defaults);
    (void)n;
    return j.bad ? why : NULL;
}

/* ------------------------------------------------ the file's name in the rows */

char coll_tuning_name[64]; /* the rows' tuning parameter: the file's name ("" without --tuning) */

/* The name as params carries it: the file's base name, its separators (; = , ") and every byte that is not
 * printable UTF-8 (a newline, a sequence cut short) as '_', never a sequence cut at the end. */
static void set_name(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n = 0, cap = sizeof coll_tuning_name;
    for (const unsigned char *c = (const unsigned char *)base; *c && n + 1 < cap;) {
        int len = *c < 0x80 ? 1 : (*c & 0xe0) == 0xc0 ? 2 : (*c & 0xf0) == 0xe0 ? 3 : (*c & 0xf8) == 0xf0 ? 4 : 0;
        int ok = len > 0 && (len > 1 || (*c >= 0x20 && *c != 0x7f && !strchr(";=,\"", *c)));
        for (int k = 1; k < len && ok; k++) ok = (c[k] & 0xc0) == 0x80;
        if (ok && len > 1 && ((len == 2 && *c < 0xc2) || (len == 3 && *c == 0xe0 && c[1] < 0xa0) ||
                              (len == 4 && (*c > 0xf4 || (*c == 0xf0 && c[1] < 0x90)))))
            ok = 0; /* overlong or past U+10FFFF */
        if (!ok || n + (size_t)len >= cap) {
            coll_tuning_name[n++] = '_';
            c++;
            if (ok) break; /* a whole character that does not fit: the name ends before it */
            continue;
        }
        memcpy(coll_tuning_name + n, c, (size_t)len);
        n += (size_t)len;
        c += len;
    }
    coll_tuning_name[n] = 0;
}

const char *coll_tuning_use(const char *path)
{
    char *text = slurp(path);
    if (!text) return why;
    const char *p = text, *err = NULL;
    while (isspace((unsigned char)*p)) p++;
    int json = *p == '{';
    const char *lib = coll_algs_library();
    if (!strcmp(lib, "Open MPI")) {
        if (json)
            snprintf(why, sizeof why, "--tuning %s: a JSON file (MPICH's selection format), not Open MPI's coll_tuned "
                     "rules", path), err = why;
        else if (!(err = check_ompi(text, path))) {
            setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 1);
            setenv("OMPI_MCA_coll_tuned_dynamic_rules_filename", path, 1);
        }
    } else if (!strcmp(lib, "MPICH")) {
        if (!json)
            snprintf(why, sizeof why, "--tuning %s: not a JSON file (Open MPI's coll_tuned rules?), not MPICH's "
                     "selection format", path), err = why;
        else if (!(err = check_json(text, path)))
            setenv("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", path, 1);
    } else {
        snprintf(why, sizeof why, "--tuning: no tuning file format is known for this MPI library"), err = why;
    }
    free(text);
    if (!err) set_name(path);
    return err;
}
