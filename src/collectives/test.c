/* collectives: one test around its measurement, the same for every test
 * (main.c's and --algorithms' alike): which sizes it has (coll_applies),
 * its preparation (the root, the buffers and the method's set-up, every
 * rank's agreement, the untimed probe call), its release, and the bytes the
 * whole operation moves. */
#include "coll.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int coll_applies(const struct coll_op *op, size_t b, size_t first)
{
    if (op->flags & COLL_NOSIZE) return b == first;
    if (op->flags & COLL_DOUBLES) return b % 8 == 0;
    return 1;
}

static size_t mul(enum coll_mul m, const struct coll_state *s)
{
    switch (m) {
    case MUL_0: return 0;
    case MUL_1: return s->bytes;
    case MUL_P: return (size_t)s->size * s->bytes;
    case MUL_M: return (size_t)s->messages * s->bytes;
    }
    return 0;
}

/* Buffers and helper arrays; returns NULL or why the test is n/a.  Either
 * way the state is ready for coll_teardown. */
static const char *setup(struct coll_state *s, const struct coll_op *op, size_t b)
{
    s->ready = 1;
    s->bytes = b;
    s->count = b / 8;
    s->calls = 0;
    s->win = MPI_WIN_NULL;
    s->shm = NULL;
    s->preq = MPI_REQUEST_NULL;
    if (b > INT_MAX) return "message size exceeds INT_MAX";
    s->sbytes = mul(op->smul, s);
    s->rbytes = mul(op->rmul, s);
    s->sbuf = mb_alloc(s->sbytes);
    s->rbuf = mb_alloc(s->rbytes);
    s->tbuf = mb_alloc(b);
    size_t nseg = b ? (b + s->segment - 1) / s->segment : 1;
    if ((size_t)s->messages > nseg) nseg = (size_t)s->messages;
    s->reqs = calloc(2 * nseg, sizeof *s->reqs); /* the tree sends each segment twice */
    s->counts = calloc((size_t)s->size, sizeof *s->counts);
    s->displs = calloc((size_t)s->size, sizeof *s->displs);
    size_t chunk = (b + (size_t)s->size - 1) / (size_t)s->size;
    for (int i = 0; i < s->size; i++) {
        size_t lo = (size_t)i * chunk < b ? (size_t)i * chunk : b, hi = lo + chunk < b ? lo + chunk : b;
        s->displs[i] = (int)lo;
        s->counts[i] = (int)(hi - lo);
    }
    return op->setup ? op->setup(s) : NULL;
}

void coll_teardown(struct coll_state *s, const struct coll_op *op)
{
    if (!s->ready) return; /* nothing was set up: the root was outside the communicator */
    s->ready = 0;
    if (op->cleanup) op->cleanup(s);
    free(s->sbuf);
    free(s->rbuf);
    free(s->tbuf);
    free(s->reqs);
    free(s->counts);
    free(s->displs);
    s->sbuf = s->rbuf = s->tbuf = NULL;
    s->reqs = NULL;
    s->counts = s->displs = NULL;
}

/* Every rank's verdict: its own reason, else fallback if another rank has one. */
static const char *agree(const struct mb_run *run, const char *why, const char *fallback)
{
    int bad = why != NULL, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, run->world);
    return why ? why : any ? fallback : NULL;
}

/* The reason in an MPI error string.  MPICH's is a stack ("Other MPI error,
 * error stack:\nfunc(12)....: MPI_Bcast(...) failed\n...\nfunc(63): reason"):
 * the deepest line with text after its "func(NN)...: " says why (the stack
 * may be cut at MPI_MAX_ERROR_STRING, leaving only the call's own line).
 * Other libraries' strings are one line, taken whole. */
static const char *innermost(char *msg)
{
    if (!strchr(msg, '\n')) return msg;
    for (char *end = msg + strlen(msg);;) {
        *end = 0;
        char *line = strrchr(msg, '\n');
        if (!line) return msg;
        char *text = strstr(line + 1, ": ");
        if (text && text[2]) return text + 2;
        end = line;
    }
}

/* One untimed call: does the library run the operation here?  A forced
 * algorithm (--algorithms) is forced for it, and MPICH made to fail rather
 * than fall back; its refusal is the error stack's deepest reason. */
static const char *probe(const struct mb_run *run, struct coll_kern *k, char *err)
{
    int forced = k->alg != NULL, len = 0;
    coll_force_alg(k, 1);
    if (forced) coll_algs_strict(1);
    int rc = coll_one_call(k);
    if (forced) coll_algs_strict(0);
    coll_force_alg(k, 0);
    const char *mine = NULL;
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, err, &len);
        mine = forced ? innermost(err) : err;
    }
    return agree(run, mine,
                 forced ? "the MPI library returned an error on another rank" : "the MPI library returned an error");
}

const char *coll_prepare(const struct mb_run *run, struct coll_kern *k, size_t b, int root, const char *earlier)
{
    static char err[MPI_MAX_ERROR_STRING + 64];
    struct coll_state *s = k->s;
    const char *why = NULL;
    if (root >= s->size) {
        snprintf(err, sizeof err, "root %d is outside this communicator (%d ranks)", root, s->size);
        why = err;
    }
    if (!why) why = earlier;
    if (!why) why = setup(s, k->op, b);
    why = agree(run, why, "not available on another rank");
    return why ? why : probe(run, k, err);
}

/* Bytes the whole operation moves (every instance of it: both halves of
 * split, every node of node), in units of the message size. */
double coll_agg_units(const struct mb_run *run, const struct coll_state *s, const struct coll_op *op)
{
    double P = s->size, f = 0, total;
    switch (op->agg) {
    case AGG_NONE: f = 0; break;
    case AGG_P1: f = P - 1; break;
    case AGG_2P1: f = 2 * (P - 1); break;
    case AGG_PP1: f = P * (P - 1); break;
    }
    if (op->smul == MUL_M) f *= (double)s->messages;
    if (s->rank != 0) f = 0; /* one contribution per instance */
    MPI_Allreduce(&f, &total, 1, MPI_DOUBLE, MPI_SUM, run->world);
    return total;
}
