/* collectives --tuning FILE: a run with a tuning file written by
 * `mpimb-report tune` loaded into the library (Open MPI: coll_tuned dynamic
 * rules; MPICH: the selection JSON), set in the environment before MPI_Init,
 * so that the library's own choice (the plain `library` rows) is the tuned
 * one; the rows say so (params tuning=<file name>).  The file is checked
 * first, so that a file for the other library, a truncated or malformed one
 * is one line and exit 2 rather than a library that ignores it (Open MPI)
 * or asserts (MPICH).  Default against tuned: scripts/coll-tune-check. */
#include "coll.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (!fseek(f, 0, SEEK_END) && (*n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
        (buf = malloc((size_t)*n + 1)) && fread(buf, 1, (size_t)*n, f) != (size_t)*n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[*n] = 0;
    fclose(f);
    return buf;
}

/* The next number of a coll_tuned rules file ('#' starts a comment to the end of the line); 0 or -1 at the end. */
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
        *v = strtol(*p, &end, 0);
        if (end == *p) return -2;
        *p = end;
        return 0;
    }
}

static const char *check_ompi(const char *text, const char *path)
{
    static char why[512];
    const char *p = text;
    long ncoll, id, ncomm, size, nrules, r[4];
#define NEED(x, what)                                                                                               \
    if (next_long(&p, &(x))) {                                                                                       \
        snprintf(why, sizeof why, "--tuning %s: not a complete Open MPI coll_tuned rules file (%s missing or not a " \
                 "number: truncated or malformed)", path, what);                                                     \
        return why;                                                                                                  \
    }
    NEED(ncoll, "the number of collectives");
    for (long c = 0; c < ncoll; c++) {
        NEED(id, "a collective's ID");
        NEED(ncomm, "its number of communicator sizes");
        for (long k = 0; k < ncomm; k++) {
            NEED(size, "a communicator size");
            NEED(nrules, "its number of rules");
            for (long j = 0; j < nrules; j++)
                for (int q = 0; q < 4; q++) NEED(r[q], "a rule (msg_size algorithm faninout segsize)");
            (void)r;
        }
    }
#undef NEED
    long extra;
    if (next_long(&p, &extra) != -1) {
        snprintf(why, sizeof why, "--tuning %s: text after the last rule of the Open MPI coll_tuned rules file", path);
        return why;
    }
    return NULL;
}

static const char *check_json(const char *text, const char *path)
{
    static char why[512];
    int depth = 0, in_str = 0, seen = 0;
    for (const char *p = text; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '{') {
            depth++;
            seen = 1;
        } else if (*p == '}') {
            if (--depth < 0) break;
        }
    }
    if (!seen || depth || in_str) {
        snprintf(why, sizeof why, "--tuning %s: not a complete JSON object (truncated or malformed)", path);
        return why;
    }
    return NULL;
}

const char *coll_tuning_use(const char *path)
{
    static char why[512];
    long n = 0;
    char *text = slurp(path, &n);
    if (!text) {
        snprintf(why, sizeof why, "--tuning %s: cannot be read", path);
        return why;
    }
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
    return err;
}
