/* The files a run writes: their one list (every check of the paths reads
 * it), what may stand at their names, and how files aside are opened
 * (docs/results-format.md, "Output paths").
 *
 * A run replaces its outputs by renaming a file written aside onto each
 * name, so whatever stands at a name is gone afterwards: only a regular
 * file (or nothing) may.  A device, FIFO, socket or symbolic link there is
 * refused before anything is written -- renaming onto /dev/null would
 * replace the node, onto a link the link.
 *
 * Files aside are created, never opened as found: O_EXCL|O_NOFOLLOW, so a
 * link planted at NAME.tmp cannot redirect a write.  The CSV's and --raw's
 * files aside (and --trace-out's, tracing.c) stay locked (flock) for the whole run, the aside and then
 * the landed file (one inode): a second run given the same names finds one
 * of them locked and is refused, while a file aside left by a killed run
 * (no lock) is taken over. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

char *mb_beside(const char *csv, const char *suffix)
{
    size_t l = strlen(csv), stem = l > 4 && !strcmp(csv + l - 4, ".csv") ? l - 4 : l, n = stem + strlen(suffix) + 1;
    char *p = malloc(n);
    snprintf(p, n, "%.*s%s", (int)stem, csv, suffix);
    return p;
}

char *mb_aside_path(const char *path)
{
    size_t n = strlen(path) + sizeof MB_ASIDE;
    char *a = malloc(n);
    snprintf(a, n, "%s" MB_ASIDE, path);
    return a;
}

/* ------------------------------------------------ the list */

/* path + suffix as one of owner's files; given: the path the user named */
static void add(struct mb_outputs *l, int owner, int given, const char *what, const char *path, const char *suffix)
{
    if (l->n == MB_MAX_OUTPUTS) return;
    struct mb_output *o = &l->f[l->n++];
    *o = (struct mb_output){.owner = owner, .given = given, .aside = *suffix != 0, .what = what};
    snprintf(o->path, sizeof o->path, "%s%s", path, suffix);
}

static void add_beside(struct mb_outputs *l, int owner, const char *what, const char *csv, const char *suffix)
{
    char *p = mb_beside(csv, suffix);
    add(l, owner, 0, what, p, "");
    free(p);
}

void mb_outputs_list(const struct mb_opts *o, const char *csv, int profile, struct mb_outputs *l)
{
    l->n = 0;
    if (csv) {
        char *json = mb_beside(csv, MB_JSON_SUFFIX);
        add(l, MB_BY_OUTPUT, o->output != NULL, "the CSV", csv, "");
        add(l, MB_BY_OUTPUT, 0, "the CSV written aside", csv, MB_ASIDE);
        add(l, MB_BY_OUTPUT, 0, "the metadata", json, "");
        add(l, MB_BY_OUTPUT, 0, "a temporary file of the metadata", json, MB_ASIDE);
        add(l, MB_BY_OUTPUT, 0, "a temporary file of the metadata", json, MB_TERM_ASIDE);
        add_beside(l, MB_BY_OUTPUT, "the rounds file", csv, MB_ROUNDS_SUFFIX);
        if (profile) add_beside(l, MB_BY_OUTPUT, "the communication matrix", csv, MB_MATRIX_SUFFIX);
        free(json);
    }
    if (o->trace && o->trace_out) {
        add(l, MB_BY_TRACE, 1, "the trace", o->trace_out, "");
        add(l, MB_BY_TRACE, 0, "the trace written aside", o->trace_out, MB_ASIDE);
    } else if (o->trace && csv) { /* beside the CSV: one of -o's files */
        char *t = mb_beside(csv, MB_TRACE_SUFFIX);
        add(l, MB_BY_OUTPUT, 0, "the trace", t, "");
        add(l, MB_BY_OUTPUT, 0, "the trace written aside", t, MB_ASIDE);
        free(t);
    }
    if (o->raw) {
        add(l, MB_BY_RAW, 1, "the file", o->raw, "");
        add(l, MB_BY_RAW, 0, "the file written aside", o->raw, MB_ASIDE);
    }
}

/* ------------------------------------------------ the checks */

/* Where an output path lands: the real path of its directory and its name
 * (the directory need not exist yet: then as written). */
static void resolved(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    snprintf(out, len, "%s/%s", realpath(dir, real) ? real : dir, base);
}

static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
    struct stat sa, sb;
    resolved(a, ra, sizeof ra);
    resolved(b, rb, sizeof rb);
    if (!strcmp(ra, rb)) return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

const char *mb_file_kind(mode_t m)
{
    return S_ISREG(m) ? NULL : S_ISLNK(m) ? "a symbolic link" : S_ISCHR(m) ? "a character device" :
           S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
           S_ISDIR(m) ? "a directory" : "not a regular file";
}

const char *mb_not_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) ? NULL : mb_file_kind(st.st_mode);
}

/* The option that names an owner's files, as the messages quote it. */
static void owner_name(const struct mb_opts *o, const char *csv, int owner, int profile, char *buf, size_t len)
{
    if (profile && owner == MB_BY_TRACE)
        snprintf(buf, len, "MPIMB_PROF_TRACE '%s'", o->trace_out);
    else if (profile) /* the profiler's messages name MPIMB_PROF_OUT first */
        snprintf(buf, len, "'%s'", csv);
    else if (owner == MB_BY_RAW)
        snprintf(buf, len, "--raw '%s'", o->raw);
    else if (owner == MB_BY_TRACE)
        snprintf(buf, len, "--trace-out '%s'", o->trace_out);
    else
        snprintf(buf, len, "%s '%s'", o->output ? "-o" : "the output", o->output ? o->output : csv);
}

int mb_outputs_check(const struct mb_opts *o, const char *csv, int profile, char *err, size_t len)
{
    struct mb_outputs l;
    char a[PATH_MAX + 64], b[PATH_MAX + 64];
    mb_outputs_list(o, csv, profile, &l);
    /* each file is its own: a later owner's file against every earlier owner's (a link that is another
     * output is said as that) */
    for (int i = 0; i < l.n; i++)
        for (int j = 0; j < l.n; j++) {
            const struct mb_output *f = &l.f[i], *g = &l.f[j];
            if (g->owner >= f->owner || !same_file(f->path, g->path)) continue;
            owner_name(o, csv, f->owner, profile, a, sizeof a);
            owner_name(o, csv, g->owner, profile, b, sizeof b);
            if (!f->aside)
                snprintf(err, len, "%s is %s of %s ('%s'): give each output its own file", a, g->what, b, g->path);
            else
                snprintf(err, len, "%s is written aside as '%s', %s of %s: give each output its own file", a, f->path,
                         g->what, b);
            return 2;
        }
    /* and a name the run will replace holds a regular file or nothing */
    for (int i = 0; i < l.n; i++) {
        const struct mb_output *f = &l.f[i];
        const char *kind = f->aside ? NULL : mb_not_regular(f->path);
        if (!kind) continue;
        owner_name(o, csv, f->owner, profile, a, sizeof a);
        if (f->given)
            snprintf(err, len, "%s is %s, not a regular file: outputs replace what stands at their names, so only a "
                               "regular file or a new name is taken", a, kind);
        else
            snprintf(err, len, "'%s', %s of %s, is %s, not a regular file: outputs replace what stands at their "
                               "names, so only a regular file or a new name is taken", f->path, f->what, a, kind);
        return 2;
    }
    return 0;
}

/* ------------------------------------------------ opening aside */

/* fd still names path (nobody replaced or removed it since it was opened) */
static int still_there(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The file at path, if any, is locked by a live run (1); 0 otherwise. */
static int locked(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    int busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

int mb_aside_create(const char *path, int lock, char *err, size_t len, const char *name)
{
    for (int tries = 0; tries < 4; tries++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            if (!lock) return fd;
            int got = flock(fd, LOCK_EX | LOCK_NB) == 0;
            if (!got && errno != EWOULDBLOCK) return fd; /* a file system without locks (Lustre's noflock): unguarded */
            if (got && still_there(fd, path)) {
                if (!name || !locked(name)) return fd;
                unlink(path); /* the name is another live run's landed file */
                close(fd);
                snprintf(err, len, "'%s' is being written by another run now: give this run other names", name);
                errno = EBUSY;
                return -1;
            }
            close(fd); /* another run took the name between our create and lock */
            continue;
        }
        if (errno != EEXIST) {
            int e = errno;
            snprintf(err, len, "cannot write '%s': %s", name ? name : path, strerror(e));
            errno = e;
            return -1;
        }
        /* something stands there: a file aside a killed run left (taken over), or not */
        int old = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        const char *kind = old < 0 ? (errno == ELOOP ? "a symbolic link" : NULL)
                                   : fstat(old, &st) ? NULL : mb_file_kind(st.st_mode);
        if (old < 0 && !kind) continue; /* gone meanwhile */
        if (kind) {
            if (old >= 0) close(old);
            snprintf(err, len, "'%s', where the run writes aside, is %s: remove it", path, kind);
            errno = EEXIST;
            return -1;
        }
        if (flock(old, LOCK_EX | LOCK_NB)) {
            int e = errno;
            close(old);
            if (e == EWOULDBLOCK)
                snprintf(err, len, "'%s' is being written by another run now: give this run other names",
                         name ? name : path);
            else /* no locks here to tell a live run's file from a killed one's */
                snprintf(err, len, "'%s' exists, and this file system cannot say whether a run is writing it: remove "
                                   "it if none is", path);
            errno = EBUSY;
            return -1;
        }
        if (still_there(old, path)) unlink(path); /* a killed run's, and ours to remove while we hold its lock */
        close(old);
    }
    snprintf(err, len, "'%s' is being written by another run now: give this run other names", name ? name : path);
    errno = EBUSY;
    return -1;
}

FILE *mb_aside_fopen(const char *path)
{
    unlink(path); /* a link or a stale file there is replaced, never written through */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (fd >= 0 && !f) close(fd);
    return f;
}

/* ------------------------------------------------ numbers without the locale */

static locale_t c_locale;
static pthread_once_t c_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

locale_t mb_locale_c(void)
{
    pthread_once(&c_once, make_c_locale);
    return c_locale ? uselocale(c_locale) : (locale_t)0;
}

void mb_locale_back(locale_t was)
{
    if (was) uselocale(was);
}
