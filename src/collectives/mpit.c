/* The library's own collective algorithms, as the library lists them
 * through the MPI tool information interface (MPI_T control variables):
 * never a list typed into the suite.
 *
 * Open MPI (coll tuned): the enumerated variable coll_tuned_<coll>_algorithm
 * (0 "ignore": the library's own decision); tuned takes a forced algorithm
 * only with coll_tuned_use_dynamic_rules=1 (read-only through MPI_T, so
 * --algorithms sets OMPI_MCA_coll_tuned_use_dynamic_rules=1 before
 * MPI_Init unless the user set it) and copies it into a communicator when
 * the communicator is created: a write is followed by MPI_Comm_dup.
 *
 * MPICH (4.0): MPIR_CVAR_<COLL>_INTRA_ALGORITHM, an integer variable whose
 * values are listed in its description ("auto - ...binomial   - ...");
 * value i is the i-th name there (the generator emits the enumeration in
 * that order; `tests/test_coll_tune.py` checks the mapping by setting the
 * variable by name in the environment and reading it back).  The library
 * reads the variable at every call, so a write applies at once. */
#include "coll.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#if defined(MPICH_VERSION) && !defined(MB_SIMULATED)
#include <dlfcn.h>
#endif

#if defined(MB_SIMULATED)
#define COLL_ALGS_NONE "SimGrid SMPI chooses collective algorithms with --cfg=smpi/<coll>, not MPI_T"
#elif defined(OMPI_MAJOR_VERSION)
#define COLL_ALGS_OMPI 1
#elif defined(MPICH_VERSION)
#define COLL_ALGS_MPICH 1
#else
#define COLL_ALGS_NONE "no known control variable selects this MPI library's collective algorithms"
#endif

const char *coll_algs_library(void)
{
#if defined(COLL_ALGS_OMPI)
    return "Open MPI";
#elif defined(COLL_ALGS_MPICH)
    return "MPICH";
#else
    return "";
#endif
}

int coll_algs_at_creation(void)
{
#if defined(COLL_ALGS_OMPI)
    return 1;
#else
    return 0;
#endif
}

void coll_algs_prepare_env(void)
{
#if defined(COLL_ALGS_OMPI)
    setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0); /* the user's own setting wins */
#endif
}

#if !defined(COLL_ALGS_NONE)
static int mpit_started;

static int mpit_start(void)
{
    int provided;
    if (!mpit_started && MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return -1;
    mpit_started = 1;
    return 0;
}

static void add(struct coll_algs *a, const char *name, size_t len, int value)
{
    if (a->n >= COLL_ALGS_MAX || len == 0 || len >= sizeof a->names[0]) return;
    memcpy(a->names[a->n], name, len);
    a->names[a->n][len] = 0;
    a->values[a->n++] = value;
}
#endif

#if defined(COLL_ALGS_MPICH)
static int name_char(char c) { return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '_'; }

/* The names of an MPICH 4.0 description, whose newlines the library has
 * removed: "Variable to select bcast algorithmauto - Internal algorithm
 * selection (can be ... JSON_FILE)binomial                  - Force Binomial
 * Treenb                      - Force ...".  After "auto", every name is
 * padded with spaces to one width W before its " - "; the first padded name
 * follows a non-name character (the ')' ending auto's line), which gives W;
 * each later name is the W - (its padding) characters before its padding. */
static const char *mpich_names(const char *desc, struct coll_algs *a)
{
    const char *p = strstr(desc, "auto - ");
    if (!p) return "its description does not list the algorithms (no 'auto - ')";
    add(a, "auto", 4, 0);
    long width = -1;
    for (const char *q = p + 7; (q = strstr(q, " - ")); q += 3) {
        const char *end = q; /* the padding's start: spaces back to the name */
        while (end > p && end[-1] == ' ') end--;
        long pad = (long)(q - end) + 1; /* the spaces, the one before '-' included */
        const char *start = end;
        if (width < 0) {
            while (start > p && name_char(start[-1])) start--;
            width = (long)(end - start) + pad;
        } else {
            start = end - (width - pad);
            if (start <= p || width - pad <= 0) return "its description's algorithm list could not be read";
        }
        for (const char *c = start; c < end; c++)
            if (!name_char(*c)) return "its description's algorithm list could not be read";
        add(a, start, (size_t)(end - start), a->n);
    }
    return a->n > 1 ? NULL : "its description lists no algorithm besides auto";
}
#endif

const char *coll_algs_find(const char *coll, struct coll_algs *a)
{
    memset(a, 0, sizeof *a);
    a->index = -1;
    snprintf(a->coll, sizeof a->coll, "%s", coll);
#if defined(COLL_ALGS_NONE)
    return COLL_ALGS_NONE;
#else
    static char why[256];
    if (mpit_start()) return "MPI_T_init_thread failed";
#if defined(COLL_ALGS_OMPI)
    snprintf(a->var, sizeof a->var, "coll_tuned_%s_algorithm", coll);
#else
    snprintf(a->var, sizeof a->var, "MPIR_CVAR_");
    for (size_t i = 0; coll[i] && i + 30 < sizeof a->var; i++) a->var[10 + i] = (char)toupper((unsigned char)coll[i]);
    strcat(a->var, "_INTRA_ALGORITHM");
#endif
    if (MPI_T_cvar_get_index(a->var, &a->index) != MPI_SUCCESS) {
        a->index = -1;
        snprintf(why, sizeof why, "the library has no control variable %s", a->var);
        return why;
    }
    char name[256], desc[8192];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum et;
    if (MPI_T_cvar_get_info(a->index, name, &nl, &verb, &dt, &et, desc, &dl, &bind, &scope) != MPI_SUCCESS ||
        dt != MPI_INT) {
        snprintf(why, sizeof why, "MPI_T gives no integer control variable %s", a->var);
        return why;
    }
#if defined(COLL_ALGS_OMPI)
    int ni = 0;
    char en[256];
    int el = sizeof en;
    if (et == MPI_T_ENUM_NULL || MPI_T_enum_get_info(et, &ni, en, &el) != MPI_SUCCESS) {
        snprintf(why, sizeof why, "%s has no enumeration of algorithms", a->var);
        return why;
    }
    for (int j = 0; j < ni; j++) {
        char in[128];
        int il = sizeof in, v;
        if (MPI_T_enum_get_item(et, j, &v, in, &il) == MPI_SUCCESS) add(a, in, strlen(in), v);
    }
    if (a->n < 2) {
        snprintf(why, sizeof why, "%s enumerates no algorithm", a->var);
        return why;
    }
#else
    const char *bad = mpich_names(desc, a);
    if (bad) {
        snprintf(why, sizeof why, "%s: %s", a->var, bad);
        return why;
    }
#endif
    int count;
    if (MPI_T_cvar_handle_alloc(a->index, NULL, &a->handle, &count) != MPI_SUCCESS) {
        snprintf(why, sizeof why, "%s cannot be written through MPI_T", a->var);
        return why;
    }
    a->open = 1;
    MPI_T_cvar_read(a->handle, &a->initial);
#if defined(COLL_ALGS_OMPI)
    int dyn = 0, di;
    MPI_T_cvar_handle dh;
    if (MPI_T_cvar_get_index("coll_tuned_use_dynamic_rules", &di) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(di, NULL, &dh, &count) == MPI_SUCCESS) {
        MPI_T_cvar_read(dh, &dyn);
        MPI_T_cvar_handle_free(&dh);
    }
    if (!dyn) {
        snprintf(why, sizeof why,
                 "Open MPI applies %s only with coll_tuned_use_dynamic_rules=1, and it is 0 here", a->var);
        return why;
    }
#endif
    return NULL;
#endif
}

int coll_algs_set(const struct coll_algs *a, int value)
{
#if defined(COLL_ALGS_NONE)
    (void)a;
    (void)value;
    return MPI_ERR_OTHER;
#else
    if (!a->open) return MPI_ERR_OTHER;
    return MPI_T_cvar_write(a->handle, &value);
#endif
}

#if defined(COLL_ALGS_MPICH)
/* MPIR_CVAR_COLLECTIVE_FALLBACK's value for `name`: its position among the
 * choices its description lists ("...error   - throw an errorprint   -
 * ...silent  - ..."), the order MPICH's generator numbers them in, as for
 * the algorithm variables; -1 where the description does not list all three. */
static int fallback_value(const char *desc, const char *name)
{
    static const char *const choices[] = {"error", "print", "silent"};
    const char *at[3];
    for (int i = 0; i < 3; i++) {
        at[i] = NULL;
        for (const char *p = desc; !at[i] && (p = strstr(p, choices[i])); p++) {
            const char *q = p + strlen(choices[i]);
            while (*q == ' ') q++;
            if (q > p + strlen(choices[i]) && q[0] == '-' && q[1] == ' ') at[i] = p;
        }
        if (!at[i]) return -1;
    }
    int value = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(choices[i], name)) {
            value = 0;
            for (int j = 0; j < 3; j++) value += at[j] < at[i];
        }
    return value;
}
#endif

/* MPICH runs its own choice in place of a forced algorithm that cannot apply
 * to a call (smp on one node, reduce_scatter_allgather below 2^k elements)
 * and by default says nothing, so a row would carry a name it did not
 * measure.  Around the untimed probe call, MPIR_CVAR_COLLECTIVE_FALLBACK is
 * "error" (on = 1) and then the library's value again (on = 0): such a call
 * fails and its row is n/a with MPICH's reason.  The timed calls, with the
 * same arguments, keep the user's setting.  Nothing to do for Open MPI. */
void coll_algs_strict(int on)
{
#if defined(COLL_ALGS_MPICH)
    static int ready, error = -1, initial;
    static MPI_T_cvar_handle h;
    if (!ready) {
        ready = 1;
        int index, nl, dl, verb, bind, scope, count;
        char name[256], desc[4096];
        MPI_Datatype dt;
        MPI_T_enum et;
        nl = sizeof name;
        dl = sizeof desc;
        if (mpit_start() || MPI_T_cvar_get_index("MPIR_CVAR_COLLECTIVE_FALLBACK", &index) != MPI_SUCCESS ||
            MPI_T_cvar_get_info(index, name, &nl, &verb, &dt, &et, desc, &dl, &bind, &scope) != MPI_SUCCESS ||
            dt != MPI_INT || MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS)
            return;
        error = fallback_value(desc, "error");
        MPI_T_cvar_read(h, &initial);
    }
    if (error >= 0) MPI_T_cvar_write(h, on ? &error : &initial);
#else
    (void)on;
#endif
}

void coll_algs_free(struct coll_algs *a)
{
#if !defined(COLL_ALGS_NONE)
    if (a->open) {
        coll_algs_set(a, a->initial);
        MPI_T_cvar_handle_free(&a->handle);
    }
#endif
    a->open = 0;
}

void coll_algs_end(void)
{
#if !defined(COLL_ALGS_NONE)
    if (mpit_started) MPI_T_finalize();
    mpit_started = 0;
#endif
}

int coll_algs_lookup(const struct coll_algs *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->names[i], name)) return i;
    return -1;
}

char *coll_library_image(long *n)
{
#if defined(COLL_ALGS_MPICH)
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, "PMPI_Init");
    if (!sym || !dladdr(sym, &info) || !info.dli_fname) return NULL;
    FILE *f = fopen(info.dli_fname, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    *n = -1;
    if (fseek(f, 0, SEEK_END) || (*n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) || !(buf = malloc((size_t)*n + 1)) ||
        fread(buf, 1, (size_t)*n, f) != (size_t)*n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[*n] = 0;
    fclose(f);
    return buf;
#else
    (void)n;
    return NULL;
#endif
}

/* MPICH: the library's own selection (the JSON it compiles in and uses
 * without MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE), read from the library
 * file the process has loaded: the string that starts with {"collective=
 * and names MPIR_ algorithms.  A selection file replaces all of it (MPICH
 * asserts on a collective the file lacks), so `mpimb-report tune` starts
 * from it and changes only what was measured.  NULL where not found. */
char *coll_algs_default_selection(void)
{
#if defined(COLL_ALGS_MPICH)
    long n = 0;
    char *buf = coll_library_image(&n), *found = NULL;
    if (buf) {
        static const char start[] = "{\"collective=";
        for (char *p = buf; !found && (p = memmem(p, (size_t)(buf + n - p), start, sizeof start - 1));) {
            size_t len = strnlen(p, (size_t)(buf + n - p));
            if (memmem(p, len, "\"algorithm=MPIR_", 16) && !memmem(p, len, "composition=", 12)) {
                found = malloc(len + 1);
                memcpy(found, p, len);
                found[len] = 0;
            }
            p += len;
        }
    }
    free(buf);
    return found;
#else
    return NULL;
#endif
}
