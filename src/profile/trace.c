/* Trace mode of libmpimb-prof.so (trace.h; docs/profile.md, "Trace mode";
 * the file: docs/results-format.md, "Traces").
 *
 * Recording: each thread appends fixed-size events to its own buffer,
 * allocated at its first event (MPIMB_PROF_TRACE_EVENTS of them); an event
 * that does not fit is counted, never stored.  No lock and no allocation on
 * the path of a call after a thread's first event.
 *
 * The end (MPI_Finalize, collective over mbp.world): the clocks are aligned
 * to rank 0's with the harness's algorithm (src/common/sync.c, HCA3) and its
 * residual error measured; every rank converts its events to nanoseconds of
 * rank 0's clock and sends them to rank 0, which pairs each request's post
 * with its completion, each send with the receive that matched it (MPI's
 * order: per communicator, source, destination and tag, the k-th send
 * matches the k-th receive posted), and writes the Chrome trace-event JSON. */
#include "internal.h"
#include "prof.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mbp_trace_rec;
#ifdef MB_SIMULATED
/* SMPI: the profiler is linked into the program (Makefile, build/smpi/trace/);
 * the harness's --trace looks for this symbol (src/common/tracing.c) */
MBP_API const int mbp_trace_builtin = 1;
#endif

enum { SAVE_MAX = 4096, MAX_THREADS = 255 };
enum { ANY = -3 }; /* an event's peer: MPI_ANY_SOURCE (-1: none, MPI_PROC_NULL) */

struct tbuf {
    struct mbp_tev *ev;
    size_t n, cap;
    uint64_t dropped;
    int tid;
};

static struct {
    int on;             /* trace mode: MPIMB_PROF_TRACE set */
    int discard;        /* MPI_Pcontrol(MBP_PCONTROL_DISCARD): write nothing */
    long cap;           /* events per thread */
    char path[4096];
    char run_id[128];
    pthread_mutex_t lock;
    struct tbuf *threads[MAX_THREADS];
    int nthreads;
    uint64_t lost;      /* events of threads past MAX_THREADS or whose buffer could not be allocated */
    uint64_t untracked; /* requests of a wait / test past SAVE_MAX: their completion is not recorded */
    /* stretches: MPI_Pcontrol(1) to (0), named by MBP_PCONTROL_TEST; as many as there are (the arrays
     * grow in MPI_Pcontrol, never in a call's path) */
    int nstretch, cap_stretch;
    char **name;
    uint64_t *begin, *end;
    char *next_name;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local struct tbuf *mine;
static _Thread_local uint64_t saved_keys[SAVE_MAX];

static struct tbuf *thread_buffer(void);

/* room for the next stretch (0), or none left (-1: it is not recorded, and counted) */
static int grow_stretches(void)
{
    if (T.nstretch < T.cap_stretch) return 0;
    int cap = T.cap_stretch ? 2 * T.cap_stretch : 64;
    char **n = realloc(T.name, (size_t)cap * sizeof *n);
    if (n) T.name = n;
    uint64_t *b = n ? realloc(T.begin, (size_t)cap * sizeof *b) : NULL;
    if (b) T.begin = b;
    uint64_t *e = b ? realloc(T.end, (size_t)cap * sizeof *e) : NULL;
    if (e) T.end = e;
    if (!e) return -1;
    T.cap_stretch = cap;
    return 0;
}

/* ------------------------------------------------ settings */

void mbp_trace_init(void)
{
    const char *path = getenv("MPIMB_PROF_TRACE"), *ev = getenv("MPIMB_PROF_TRACE_EVENTS"),
               *start = getenv("MPIMB_PROF_TRACE_START");
    char msg[600];
    T.cap = 1 << 16;
    if (ev) {
        long long v;
        if (mb_parse_long(ev, 1, 1ll << 30, &v)) {
            snprintf(msg, sizeof msg,
                     "MPIMB_PROF_TRACE_EVENTS must be a positive number of events per thread (at most %lld), got '%.200s'",
                     1ll << 30, ev);
            mbp_usage_error(msg);
        }
        T.cap = (long)v;
    }
    int from_init = 1;
    if (start) {
        if (strcmp(start, "0") && strcmp(start, "1")) {
            snprintf(msg, sizeof msg, "MPIMB_PROF_TRACE_START must be 0 or 1, got '%.200s'", start);
            mbp_usage_error(msg);
        }
        from_init = start[0] == '1';
    }
    if (!path || !*path) return;
    if (strlen(path) >= sizeof T.path) mbp_usage_error("MPIMB_PROF_TRACE: path too long");
    snprintf(T.path, sizeof T.path, "%s", path);
    if (strcmp(path, "@program")) { /* a path of the user's: its directory must take the file */
        char dir[4096];
        const char *slash = strrchr(path, '/'), *kind = mb_not_regular(path);
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
        if (path[strlen(path) - 1] == '/' || access(dir, W_OK)) {
            snprintf(msg, sizeof msg, "MPIMB_PROF_TRACE: cannot write '%.300s' (directory '%.200s': %s)", path, dir,
                     path[strlen(path) - 1] == '/' ? "a directory, not a file" : strerror(errno));
            mbp_usage_error(msg);
        }
        if (kind) { /* the trace replaces what stands at its name: only a regular file may */
            snprintf(msg, sizeof msg, "MPIMB_PROF_TRACE: '%.300s' is %s, not a regular file: the trace would "
                                      "replace it", path, kind);
            mbp_usage_error(msg);
        }
    }
    T.on = 1;
    grow_stretches();
    /* the main thread's buffer now, its pages touched: no page fault (nor allocation) inside a stretch */
    if (!(mine = thread_buffer())) { /* the first thread's must fit, or the setting is wrong here */
        snprintf(msg, sizeof msg, "MPIMB_PROF_TRACE_EVENTS=%ld: cannot allocate a thread's buffer of %ld events "
                                  "(%.3g GiB): give fewer", T.cap, T.cap, (double)T.cap * sizeof *mine->ev / 1073741824.0);
        mbp_usage_error(msg);
    }
    memset(mine->ev, 0, mine->cap * sizeof *mine->ev);
    __atomic_store_n(&mbp_trace_rec, from_init, __ATOMIC_RELAXED);
    if (from_init) T.begin[T.nstretch] = mbp_ticks(), T.name[T.nstretch] = NULL;
}

const char *mbp_trace_path(void) { return T.on && strcmp(T.path, "@program") ? T.path : NULL; }

/* ------------------------------------------------ recording */

static struct tbuf *thread_buffer(void)
{
    struct tbuf *b = calloc(1, sizeof *b);
    if (b) b->ev = malloc((size_t)T.cap * sizeof *b->ev);
    pthread_mutex_lock(&T.lock);
    if (!b || !b->ev || T.nthreads == MAX_THREADS) {
        if (b) free(b->ev);
        free(b);
        b = NULL;
    } else {
        b->cap = (size_t)T.cap;
        b->tid = T.nthreads;
        T.threads[T.nthreads++] = b;
    }
    pthread_mutex_unlock(&T.lock);
    return b;
}

static struct mbp_tev *slot(void)
{
    struct tbuf *b = mine;
    if (!b && !(b = mine = thread_buffer())) {
        __atomic_fetch_add(&T.lost, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    if (b->n == b->cap) {
        b->dropped++;
        return NULL;
    }
    struct mbp_tev *e = &b->ev[b->n++];
    e->tid = (uint8_t)b->tid;
    return e;
}

void mbp_trace_call(int id, uint64_t t0, uint64_t t1)
{
    struct mbp_tev *e = slot();
    if (e) *e = (struct mbp_tev){.t0 = t0, .t1 = t1, .peer = -1, .wpeer = -1, .tag = -1, .call = (uint16_t)id,
                                 .kind = MBP_EV_CALL, .tid = e->tid};
}

void mbp_trace_msg(int id, int kind, uint64_t t0, uint64_t t1, uint64_t bytes, int peer, int tag, MPI_Comm comm,
                   const void *req, int fortran)
{
    struct mbp_tev *e = slot();
    if (!e) return;
    int valid = peer >= 0 && peer != MPI_PROC_NULL;
    *e = (struct mbp_tev){.t0 = t0, .t1 = t1, .req = req ? mbp_req_key(req, fortran, 0) : 0, .bytes = bytes,
                          .comm = mbp_comm_id(comm), .peer = valid ? peer : peer == MPI_ANY_SOURCE ? ANY : -1,
                          .wpeer = valid ? mbp_world_rank(comm, peer) : -1, .tag = tag, .call = (uint16_t)id,
                          .kind = (uint8_t)kind, .tid = e->tid};
}

uint64_t *mbp_trace_save(const void *reqs, int fortran, int n)
{
    if (n > SAVE_MAX) {
        __atomic_fetch_add(&T.untracked, (uint64_t)(n - SAVE_MAX), __ATOMIC_RELAXED);
        n = SAVE_MAX;
    }
    for (int i = 0; i < n; i++) saved_keys[i] = mbp_req_key(reqs, fortran, i);
    return saved_keys;
}

/* A request completed in this call: non-null before, MPI_REQUEST_NULL after
 * (persistent requests stay non-null: their life is not traced). */
void mbp_trace_done(int id, uint64_t t0, uint64_t t1, const uint64_t *saved, const void *reqs, int fortran, int n)
{
    mbp_trace_call(id, t0, t1);
    if (!saved) return;
    MPI_Request null = MPI_REQUEST_NULL;
    uint64_t nullkey = mbp_req_key(&null, 0, 0);
    if (n > SAVE_MAX) n = SAVE_MAX;
    for (int i = 0; i < n; i++) {
        if (saved[i] == nullkey || mbp_req_key(reqs, fortran, i) != nullkey) continue;
        struct mbp_tev *e = slot();
        if (e) *e = (struct mbp_tev){.t0 = t0, .t1 = t1, .req = saved[i], .peer = -1, .wpeer = -1, .tag = -1,
                                     .call = (uint16_t)id, .kind = MBP_EV_DONE, .tid = e->tid};
    }
}

static void trace_end(const char *profile_run_id, int *status, char *err);

void mbp_trace_pcontrol(int level, const char *a, const char *b, int *status, char *err)
{
    if (level == MBP_PCONTROL_FINISH) {
        trace_end(NULL, status, err); /* collective, as MPI_Finalize's */
        return;
    }
    if (!T.on) return;
    if (level == MBP_PCONTROL_RUN) {
        if (a) snprintf(T.run_id, sizeof T.run_id, "%s", a);
        if (b && *b) snprintf(T.path, sizeof T.path, "%s", b);
    } else if (level == MBP_PCONTROL_TEST) {
        free(T.next_name);
        T.next_name = a ? strdup(a) : NULL;
    } else if (level == MBP_PCONTROL_DISCARD) {
        T.discard = 1;
    } else if (level == 1 && !mbp_tracing() && !grow_stretches()) {
        T.begin[T.nstretch] = mbp_ticks();
        T.name[T.nstretch] = T.next_name;
        T.next_name = NULL;
        __atomic_store_n(&mbp_trace_rec, 1, __ATOMIC_RELAXED);
    } else if (level == 0 && mbp_tracing()) {
        __atomic_store_n(&mbp_trace_rec, 0, __ATOMIC_RELAXED);
        T.end[T.nstretch++] = mbp_ticks();
    }
}

/* ------------------------------------------------ the end */

struct rank_data {
    struct mbp_tev *ev;
    long n;
    uint64_t dropped;
    int nthreads;
};

struct msg { /* a send or a completed receive, for matching */
    uint32_t comm;
    int src, dst, tag;
    uint64_t order; /* post time on its rank */
    long idx;       /* event index on its rank (tie-break) */
    int rank, tid;
    uint64_t ts;    /* where the flow starts (send) or ends (the receive's completion) */
};

static int cmp_msg(const void *pa, const void *pb)
{
    const struct msg *a = pa, *b = pb;
#define CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
    CMP(comm);
    CMP(src);
    CMP(dst);
    CMP(tag);
    CMP(order);
    CMP(idx);
#undef CMP
    return 0;
}

static int cmp_ev_time(const void *pa, const void *pb)
{
    const struct mbp_tev *a = pa, *b = pb;
    if (a->t0 != b->t0) return a->t0 < b->t0 ? -1 : 1;
    return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* ------------------------------------------------ matching */

/* What the writer needs from the matching: each post's completion, the messages paired, the counts. */
struct match {
    long **done_at;          /* per rank: event i (a post) -> the DONE event completing it, -1: none */
    struct msg *send, *recv; /* every send and every completed receive, sorted by cmp_msg */
    long nsend, nrecv;
    long (*pair)[2];         /* the messages: send index, receive index, in order */
    long npair;
    uint64_t unfinished, wildcard, unmatched_send, unmatched_recv;
};

/* Each post of one rank's events paired with the DONE event that completed it (done_at, -1: none); returns
 * how many posts were never completed.  The open requests are kept in post order, by key: a handle may be
 * reused once done, and one DONE completes every open post of its key (Isendrecv: a send and a receive). */
static long complete_requests(const struct mbp_tev *ev, long n, long *done_at)
{
    long *open = malloc((size_t)(n + 1) * sizeof *open), nopen = 0;
    for (long i = 0; i < n; i++) {
        done_at[i] = -1;
        const struct mbp_tev *e = &ev[i];
        int k = e->kind & 0x7f;
        if ((k == MBP_EV_SEND || k == MBP_EV_RECV) && e->req) open[nopen++] = i;
        if (k != MBP_EV_DONE) continue;
        long j = 0;
        while (j < nopen && ev[open[j]].req != e->req) j++;
        long m = j;
        for (long q = j; q < nopen; q++)
            if (ev[open[q]].req == e->req)
                done_at[open[q]] = i;
            else
                open[m++] = open[q];
        nopen = m;
    }
    free(open);
    return nopen;
}

/* Rank r's sends and the receives it completed, into m for pairing (a receive's end is its completion: the
 * call itself when blocking).  MPI_PROC_NULL has no message; a wildcard receive is counted, not matched. */
static void collect_messages(const struct mbp_tev *ev, long n, const long *done_at, int r, struct match *m)
{
    for (long i = 0; i < n; i++) {
        const struct mbp_tev *e = &ev[i];
        int k = e->kind & 0x7f;
        if (k == MBP_EV_SEND) {
            if (e->wpeer < 0) continue;
            uint64_t one = e->t1 - e->t0 > 1;
            m->send[m->nsend++] = (struct msg){e->comm, r, e->wpeer, e->tag, e->t0, i, r, e->tid, e->t0 + one};
        } else if (k == MBP_EV_RECV) {
            if (e->peer == ANY || e->tag == MPI_ANY_TAG) {
                m->wildcard++;
                continue;
            }
            if (e->wpeer < 0) continue;
            const struct mbp_tev *c = !e->req ? e : done_at[i] >= 0 ? &ev[done_at[i]] : NULL; /* where it ended */
            if (!c) continue;
            uint64_t one = c->t1 - c->t0 > 1;
            m->recv[m->nrecv++] = (struct msg){e->comm, e->wpeer, r, e->tag, e->t0, i, r, c->tid, c->t1 - one};
        }
    }
}

/* MPI's order: per communicator, source, destination and tag, the k-th send matches the k-th receive. */
static void pair_messages(struct match *m)
{
    qsort(m->send, (size_t)m->nsend, sizeof *m->send, cmp_msg);
    qsort(m->recv, (size_t)m->nrecv, sizeof *m->recv, cmp_msg);
    long i = 0, j = 0;
    while (i < m->nsend || j < m->nrecv) {
        int c = i < m->nsend && j < m->nrecv ? 0 : i < m->nsend ? -1 : 1;
        if (!c) {
            struct msg a = m->send[i], b = m->recv[j];
            a.order = b.order = 0, a.idx = b.idx = 0;
            c = cmp_msg(&a, &b);
        }
        if (c < 0) {
            m->unmatched_send++, i++;
        } else if (c > 0) {
            m->unmatched_recv++, j++;
        } else {
            m->pair[m->npair][0] = i++;
            m->pair[m->npair++][1] = j++;
        }
    }
}

/* Every rank's requests completed and messages paired. */
static void match(struct match *m, const struct rank_data *R, int P)
{
    long cap_s = 0, cap_r = 0;
    for (int r = 0; r < P; r++)
        for (long i = 0; i < R[r].n; i++) {
            int k = R[r].ev[i].kind & 0x7f;
            cap_s += k == MBP_EV_SEND;
            cap_r += k == MBP_EV_RECV;
        }
    *m = (struct match){.done_at = calloc(P > 0 ? (size_t)P : 1, sizeof *m->done_at),
                        .send = malloc((size_t)(cap_s + 1) * sizeof *m->send),
                        .recv = malloc((size_t)(cap_r + 1) * sizeof *m->recv),
                        .pair = malloc((size_t)((cap_s < cap_r ? cap_s : cap_r) + 1) * sizeof *m->pair)};
    for (int r = 0; r < P; r++) {
        m->done_at[r] = malloc((size_t)(R[r].n + 1) * sizeof **m->done_at);
        m->unfinished += (uint64_t)complete_requests(R[r].ev, R[r].n, m->done_at[r]);
        collect_messages(R[r].ev, R[r].n, m->done_at[r], r, m);
    }
    pair_messages(m);
}

static void match_free(struct match *m, int P)
{
    for (int r = 0; r < P; r++) free(m->done_at[r]);
    free(m->done_at);
    free(m->send);
    free(m->recv);
    free(m->pair);
}

/* ------------------------------------------------ the JSON */

static double us(uint64_t ns) { return (double)ns / 1000.0; }

/* The separator before an event: none before the first. */
static const char *sep(int *first) { return *first ? (*first = 0, "") : ",\n"; }

static void write_names(FILE *f, int r, int nthreads, int *first)
{
    fprintf(f, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"rank %d\"}}",
            sep(first), r, r);
    fprintf(f, "%s{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": %d, \"tid\": 0, \"args\": {\"sort_index\": %d}}",
            sep(first), r, r);
    for (int t = 0; t < nthreads; t++)
        fprintf(f, "%s{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": \"thread %d\"}}",
                sep(first), r, t, t);
}

/* A call's slice; a message's carries its partner, tag and bytes (Sendrecv: the receive's too, from the
 * event after it). */
static void write_slice(FILE *f, const struct mbp_tev *ev, long n, long i, int r, int *first)
{
    const struct mbp_tev *e = &ev[i];
    int k = e->kind & 0x7f;
    fprintf(f, "%s{\"ph\": \"X\", \"name\": \"%s\", \"cat\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f",
            sep(first), mbp_call_names[e->call], mbp_family_names[mbp_call_family[e->call]], r, e->tid, us(e->t0),
            us(e->t1 - e->t0));
    if (k == MBP_EV_SEND || k == MBP_EV_RECV) {
        const char *who = k == MBP_EV_SEND ? "dest" : "source";
        if (e->peer == ANY)
            fprintf(f, ", \"args\": {\"%s\": \"any\", \"%s_world\": \"any\"", who, who);
        else
            fprintf(f, ", \"args\": {\"%s\": %d, \"%s_world\": %d", who, e->peer, who, e->wpeer);
        if (e->tag == MPI_ANY_TAG)
            fprintf(f, ", \"tag\": \"any\"");
        else
            fprintf(f, ", \"tag\": %d", e->tag);
        fprintf(f, ", \"bytes\": %llu", (unsigned long long)e->bytes);
        if (i + 1 < n && (ev[i + 1].kind & MBP_EV_PART) && ev[i + 1].t0 == e->t0)
            fprintf(f, ", \"source\": %d, \"source_world\": %d, \"recv_tag\": %d", ev[i + 1].peer, ev[i + 1].wpeer,
                    ev[i + 1].tag);
        fputc('}', f);
    }
    fputc('}', f);
}

/* A request's life: an async slice from its post e to its completion d. */
static void write_request(FILE *f, const struct mbp_tev *e, const struct mbp_tev *d, int r, long id, int *first)
{
    const char *what = (e->kind & 0x7f) == MBP_EV_SEND ? "send request" : "receive request";
    fprintf(f, "%s{\"ph\": \"b\", \"name\": \"%s\", \"cat\": \"request\", \"id\": %ld, \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"args\": {\"peer_world\": %d, \"tag\": %d, \"bytes\": %llu, \"completed_by\": \"%s\"}}",
            sep(first), what, id, r, e->tid, us(e->t0), e->wpeer, e->tag, (unsigned long long)e->bytes,
            mbp_call_names[d->call]);
    fprintf(f, "%s{\"ph\": \"e\", \"name\": \"%s\", \"cat\": \"request\", \"id\": %ld, \"pid\": %d, \"tid\": %d, \"ts\": %.3f}",
            sep(first), what, id, r, d->tid, us(d->t1));
}

/* Rank r's events in time order: its names, each call's slice, each completed request's life. */
static void write_rank(FILE *f, const struct rank_data *D, int r, const long *done_at, long *async_id, int *first)
{
    write_names(f, r, D->nthreads, first);
    for (long i = 0; i < D->n; i++) {
        const struct mbp_tev *e = &D->ev[i];
        int k = e->kind & 0x7f;
        if (k != MBP_EV_DONE && !(e->kind & MBP_EV_PART)) write_slice(f, D->ev, D->n, i, r, first);
        if ((k == MBP_EV_SEND || k == MBP_EV_RECV) && e->req && done_at[i] >= 0)
            write_request(f, e, &D->ev[done_at[i]], r, ++*async_id, first);
    }
}

/* Each paired message: a flow from the send to the receive's completion. */
static void write_flows(FILE *f, const struct match *m, int *first)
{
    for (long p = 0; p < m->npair; p++) {
        const struct msg *s = &m->send[m->pair[p][0]], *v = &m->recv[m->pair[p][1]];
        fprintf(f, "%s{\"ph\": \"s\", \"name\": \"message\", \"cat\": \"message\", \"id\": %ld, \"pid\": %d, \"tid\": %d, \"ts\": %.3f}",
                sep(first), p + 1, s->rank, s->tid, us(s->ts));
        fprintf(f, "%s{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"message\", \"cat\": \"message\", \"id\": %ld, \"pid\": %d, \"tid\": %d, \"ts\": %.3f}",
                sep(first), p + 1, v->rank, v->tid, us(v->ts));
    }
}

/* The stretches of recording: the programs' name is a JSON object (tracing.c); anything else an
 * application passed, a string. */
static void write_stretches(FILE *f)
{
    fprintf(f, ", \"stretches\": [");
    for (int s = 0; s < T.nstretch; s++) {
        const char *nm = T.name[s];
        size_t l = nm ? strlen(nm) : 0;
        fprintf(f, "%s{\"begin_us\": %.3f, \"end_us\": %.3f, \"test\": ", s ? ", " : "", us(T.begin[s]), us(T.end[s]));
        if (!nm)
            fputs("null", f);
        else if (l > 1 && nm[0] == '{' && nm[l - 1] == '}')
            fputs(nm, f);
        else
            mb_json_str(f, nm);
        fputc('}', f);
    }
    fprintf(f, "]");
}

/* otherData: the run, the counts (events, drops, the matching's), the clock, the stretches. */
static void write_other(FILE *f, const struct rank_data *R, int P, const struct match *m, double clock_error,
                        double clock_res, const char *profile_run_id)
{
    uint64_t dropped = T.lost, events = 0;
    for (int r = 0; r < P; r++) dropped += R[r].dropped, events += (uint64_t)R[r].n;
    const char *run_id = T.run_id[0] ? T.run_id : profile_run_id;
    fprintf(f, "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"format\": \"mpimb-trace\", \"version\": 1");
    fputs(", \"run_id\": ", f);
    run_id ? mb_json_str(f, run_id) : (void)fputs("null", f);
    fprintf(f, ", \"ranks\": %d, \"events\": %llu, \"dropped_events\": %llu, \"dropped_per_rank\": [", P,
            (unsigned long long)events, (unsigned long long)dropped);
    for (int r = 0; r < P; r++) fprintf(f, "%s%llu", r ? ", " : "", (unsigned long long)R[r].dropped);
    fprintf(f, "], \"buffer_events\": %ld, \"event_bytes\": %zu", T.cap, sizeof(struct mbp_tev));
    fprintf(f, ", \"messages\": %ld, \"unmatched_sends\": %llu, \"unmatched_receives\": %llu, \"wildcard_receives\": %llu, "
               "\"unfinished_requests\": %llu, \"untracked_requests\": %llu",
            m->npair, (unsigned long long)m->unmatched_send, (unsigned long long)m->unmatched_recv,
            (unsigned long long)m->wildcard, (unsigned long long)m->unfinished, (unsigned long long)T.untracked);
    fprintf(f, ", \"clock\": {\"aligned_to\": \"rank 0\", \"algorithm\": \"HCA3 tree (src/common/sync.c)\", "
               "\"residual_error_s\": %.9g, \"check_resolution_s\": %.9g, \"ticks\": \"%s\"}",
            clock_error, clock_res, mbp_clock_name());
#ifdef MB_SIMULATED /* scripts/simulate names the platform */
    fputs(", \"simulated\": true, \"platform\": ", f);
    getenv("MPIMB_PLATFORM") ? mb_json_str(f, getenv("MPIMB_PLATFORM")) : (void)fputs("null", f);
#else
    fputs(", \"simulated\": false", f);
#endif
    write_stretches(f);
    fprintf(f, "}}\n");
}

/* The events of every rank are rank 0's ns; ev sorted by t0 per rank.  Matching first, then the file:
 * every rank's events, the messages' flows, otherData. */
static int write_json(FILE *f, struct rank_data *R, int P, double clock_error, double clock_res,
                      const char *profile_run_id)
{
    struct match m;
    match(&m, R, P);
    fprintf(f, "{\"traceEvents\": [\n");
    int first = 1;
    long async_id = 0;
    for (int r = 0; r < P; r++) write_rank(f, &R[r], r, m.done_at[r], &async_id, &first);
    write_flows(f, &m, &first);
    write_other(f, R, P, &m, clock_error, clock_res, profile_run_id);
    match_free(&m, P);
    return ferror(f);
}

/* ticks of this rank -> ns of rank 0's clock since origin (global seconds) */
static double spt_g, w_ref;
static uint64_t tick_ref;
static double global_s(uint64_t t)
{
    double local = w_ref + ((double)t - (double)tick_ref) * spt_g;
    return mb_sync_global(local);
}

/* The trace into path: written unnamed (O_TMPFILE) and named only when
 * whole, so a job killed while it is written leaves no file; where the
 * file system has no unnamed files, written aside as PATH.tmp (a killed
 * job may leave that).  0, or -1 with the reason in why. */
static int write_file(const char *path, struct rank_data *R, int P, double clock_error, double clock_res,
                      const char *profile_run_id, char *why, size_t len)
{
    char dir[4096], tmp[4200];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    snprintf(tmp, sizeof tmp, "%s" MB_ASIDE, path);
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666), e = 0;
    FILE *f = fd >= 0 ? fdopen(fd, "w") : mb_aside_fopen(tmp);
    if (!f && fd >= 0) close(fd);
    locale_t was = mb_locale_c(); /* '.' decimals whatever the application's locale */
    int bad = !f || write_json(f, R, P, clock_error, clock_res, profile_run_id) || fflush(f) || fsync(fileno(f));
    mb_locale_back(was);
    if (bad) e = errno;
    if (!bad && fd >= 0) { /* name it: beside its name first, then onto it in one rename */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(f));
        unlink(tmp);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW)) bad = 1, e = errno;
    }
    if (f && fclose(f) && !bad) bad = 1, e = errno;
    if (!bad && rename(tmp, path)) bad = 1, e = errno;
    if (bad) {
        remove(tmp);
        snprintf(why, len, "cannot write the trace '%.300s': %s", path, strerror(e ? e : EIO));
        return -1;
    }
    return 0;
}

void mbp_trace_finish(const char *profile_run_id) { trace_end(profile_run_id, NULL, NULL); }

static void trace_end(const char *profile_run_id, int *status, char *why)
{
    if (!T.on) return;
    int was_on = mbp.on;
    mbp.on = 0; /* the clock alignment's own calls are not the application's */
    if (mbp_tracing()) mbp_trace_pcontrol(0, NULL, NULL, NULL, NULL); /* a stretch still open ends here */
    /* clocks: this rank's ticks against its MPI_Wtime, then the harness's alignment to rank 0 */
    spt_g = mbp_clock_stop();
    tick_ref = mbp_ticks_with(mb_sync_clock, &w_ref);
    struct mb_run run = {.world = mbp.world, .rank = mbp.rank, .nprocs = mbp.size};
    mb_sync_start(&run);
    double err = mb_sync_error(), res = mb_sync_resolution();
    /* one array of this rank's events (every thread's), in rank 0's ns */
    long n = 0;
    uint64_t dropped = 0;
    for (int t = 0; t < T.nthreads; t++) n += (long)T.threads[t]->n, dropped += T.threads[t]->dropped;
    struct mbp_tev *all = malloc((size_t)(n + 1) * sizeof *all);
    double lo = 1e300;
    for (int t = 0, k = 0; t < T.nthreads; t++)
        for (size_t i = 0; i < T.threads[t]->n; i++) all[k++] = T.threads[t]->ev[i];
    for (long i = 0; i < n; i++) lo = fmin(lo, global_s(all[i].t0));
    for (int s = 0; s < T.nstretch; s++) lo = fmin(lo, global_s(T.begin[s]));
    double origin;
    PMPI_Allreduce(&lo, &origin, 1, MPI_DOUBLE, MPI_MIN, mbp.world);
    if (origin > 1e299) origin = 0;
#define NS(t) ((uint64_t)llround((global_s(t) - origin) * 1e9))
    for (long i = 0; i < n; i++) {
        uint64_t a = NS(all[i].t0), b = NS(all[i].t1);
        all[i].t0 = a, all[i].t1 = b < a ? a : b;
    }
    for (int s = 0; s < T.nstretch; s++) T.begin[s] = NS(T.begin[s]), T.end[s] = NS(T.end[s]);
#undef NS
    /* A stretch spans every rank's: from the first MPI_Pcontrol(1) to the last (0).  Ranks leave the barrier
     * before it at different times, and the aligned clocks differ by their residual error: rank 0's begin
     * alone could follow another rank's first call of the stretch (by 1 ns in a simulated run). */
    int counts[2] = {T.nstretch, -T.nstretch}, agree[2];
    PMPI_Allreduce(counts, agree, 2, MPI_INT, MPI_MIN, mbp.world);
    if (agree[0] == -agree[1] && T.nstretch > 0) { /* (ranks that stretched differently keep rank 0's) */
        int root = mbp.rank == 0;
        PMPI_Reduce(root ? MPI_IN_PLACE : T.begin, T.begin, T.nstretch, MPI_UINT64_T, MPI_MIN, 0, mbp.world);
        PMPI_Reduce(root ? MPI_IN_PLACE : T.end, T.end, T.nstretch, MPI_UINT64_T, MPI_MAX, 0, mbp.world);
    }
    qsort(all, (size_t)n, sizeof *all, cmp_ev_time); /* threads merged; each thread's own order is its time order */
    long long head[3] = {n, (long long)dropped, T.nthreads}, *heads = NULL;
    if (mbp.rank == 0) heads = malloc(3 * (size_t)mbp.size * sizeof *heads);
    PMPI_Gather(head, 3, MPI_LONG_LONG, heads, 3, MPI_LONG_LONG, 0, mbp.world);
    const long chunk = (INT_MAX / (long)sizeof *all) / 2;
    if (mbp.rank != 0) {
        for (long i = 0; i < n; i += chunk) {
            long c = n - i < chunk ? n - i : chunk;
            PMPI_Send(all + i, (int)(c * (long)sizeof *all), MPI_BYTE, 0, 2701, mbp.world);
        }
    } else {
        struct rank_data *R = calloc((size_t)mbp.size, sizeof *R);
        R[0] = (struct rank_data){all, n, dropped, T.nthreads};
        for (int r = 1; r < mbp.size; r++) {
            R[r].n = (long)heads[3 * r];
            R[r].dropped = (uint64_t)heads[3 * r + 1];
            R[r].nthreads = (int)heads[3 * r + 2];
            R[r].ev = malloc((size_t)(R[r].n + 1) * sizeof *R[r].ev);
            for (long i = 0; i < R[r].n; i += chunk) {
                long c = R[r].n - i < chunk ? R[r].n - i : chunk;
                PMPI_Recv(R[r].ev + i, (int)(c * (long)sizeof *all), MPI_BYTE, r, 2701, mbp.world, MPI_STATUS_IGNORE);
            }
        }
        if (!T.discard && strcmp(T.path, "@program")) { /* @program: the program never named it (usage error) */
            char msg[MBP_ERR_LEN];
            int bad = write_file(T.path, R, mbp.size, err, res, profile_run_id, msg, sizeof msg);
            if (bad) {
                fprintf(stderr, "mpimb-prof: %s\n", msg);
                if (why) snprintf(why, MBP_ERR_LEN, "%s", msg);
            } else {
                uint64_t d = T.lost;
                for (int r = 0; r < mbp.size; r++) d += R[r].dropped;
                fprintf(stderr, "mpimb-prof: trace in %s (%d stretch%s, %llu events dropped)\n", T.path, T.nstretch,
                        T.nstretch == 1 ? "" : "es", (unsigned long long)d);
            }
            if (status) *status = bad ? 1 : 0;
        }
        for (int r = 1; r < mbp.size; r++) free(R[r].ev);
        free(R);
        free(heads);
    }
    free(all);
    for (int t = 0; t < T.nthreads; t++) free(T.threads[t]->ev), free(T.threads[t]);
    for (int st = 0; st < T.nstretch; st++) free(T.name[st]);
    free(T.name), free(T.begin), free(T.end);
    T.name = NULL, T.begin = T.end = NULL;
    T.nthreads = T.nstretch = T.cap_stretch = 0;
    T.on = 0;
    mbp.on = was_on;
}
