/* Point-to-point tests: the single-threaded ping-pong at the requested level
 * (overhead-*), T threads versus T processes (latency-mt, bw-mt,
 * msgrate-mt) and short messages beside long ones (short-long).
 *
 * A pair is an initiator (role 0) and a responder (role 1).  The threads
 * variants pair thread t of rank 0 with thread t of rank N/2 (N ranks); the
 * processes variant pairs rank r < T with rank r + N/2, one thread each, so
 * both cross the same boundary (node or not) under block rank placement.  Other ranks
 * idle (their time is 0; the harness takes the maximum over ranks). */
#include "threads.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum kind { LAT, BW };

struct p2p {
    enum kind kind;
    int role, partner, me, nthr, nbuf; /* nthr threads run; nbuf have buffers */
    size_t bytes; /* the message, as the row describes it */
    int count;    /* the same as MPI's int count (mb_int_count checked it) */
    long window;
    MPI_Comm *comm; /* per thread */
    int *tag;       /* per thread */
    unsigned char **sbuf, **rbuf;
    MPI_Request **req;
    MPI_Status **st; /* per thread (MPI_STATUSES_IGNORE upsets gcc's bounds checks) */
    unsigned char *acks; /* 64 bytes per thread: acknowledgements */
    struct mb_team *team;
    /* short-long */
    MPI_Comm longcomm;
    unsigned char *lsbuf, *lrbuf;
    size_t lbytes;
    int lcount;
    atomic_int stop;
    long nlong; /* long messages the responder received (its long thread only) */
};

static void p2p_alloc(struct p2p *p, int nthr)
{
    p->nthr = p->nbuf = nthr;
    p->comm = calloc((size_t)nthr, sizeof *p->comm);
    p->tag = calloc((size_t)nthr, sizeof *p->tag);
    p->sbuf = calloc((size_t)nthr, sizeof *p->sbuf);
    p->rbuf = calloc((size_t)nthr, sizeof *p->rbuf);
    p->req = calloc((size_t)nthr, sizeof *p->req);
    p->st = calloc((size_t)nthr, sizeof *p->st);
    p->acks = mb_alloc((size_t)nthr * 64);
    if (p->role < 0) return;
    for (int t = 0; t < nthr; t++) {
        p->sbuf[t] = mb_alloc(p->bytes);
        p->rbuf[t] = mb_alloc(p->bytes);
        p->req[t] = calloc((size_t)p->window, sizeof **p->req);
        p->st[t] = calloc((size_t)p->window, sizeof **p->st);
    }
}

static void p2p_free(struct p2p *p)
{
    for (int t = 0; t < p->nbuf; t++) {
        free(p->sbuf[t]);
        free(p->rbuf[t]);
        free(p->req[t]);
        free(p->st[t]);
    }
    free(p->comm);
    free(p->tag);
    free(p->sbuf);
    free(p->rbuf);
    free(p->req);
    free(p->st);
    free(p->acks);
    free(p->lsbuf);
    free(p->lrbuf);
}

/* ------------------------------------------------------------ per thread */

/* Ping-pong: the initiator sends and waits for the echo. */
static double lat_thread(void *arg, int t, long iters)
{
    struct p2p *p = arg;
    int n = p->count;
    double t0 = mb_team_now();
    for (long i = 0; i < iters; i++) {
        if (p->role == 0) {
            MPI_Send(p->sbuf[t], n, MPI_BYTE, p->partner, p->tag[t], p->comm[t]);
            MPI_Recv(p->rbuf[t], n, MPI_BYTE, p->partner, p->tag[t], p->comm[t], MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(p->rbuf[t], n, MPI_BYTE, p->partner, p->tag[t], p->comm[t], MPI_STATUS_IGNORE);
            MPI_Send(p->sbuf[t], n, MPI_BYTE, p->partner, p->tag[t], p->comm[t]);
        }
    }
    return mb_team_now() - t0;
}

/* OMB-style window: the initiator posts window sends, the responder window
 * receives (into one buffer, as OMB does), then a 4-byte acknowledgement. */
static double bw_thread(void *arg, int t, long iters)
{
    struct p2p *p = arg;
    int n = p->count, w = (int)p->window;
    unsigned char *ack = p->acks + (size_t)t * 64;
    double t0 = mb_team_now();
    for (long i = 0; i < iters; i++) {
        if (p->role == 0) {
            for (int k = 0; k < w; k++)
                MPI_Isend(p->sbuf[t], n, MPI_BYTE, p->partner, p->tag[t], p->comm[t], &p->req[t][k]);
            MPI_Waitall(w, p->req[t], p->st[t]);
            MPI_Recv(ack, 4, MPI_BYTE, p->partner, p->tag[t], p->comm[t], MPI_STATUS_IGNORE);
        } else {
            for (int k = 0; k < w; k++)
                MPI_Irecv(p->rbuf[t], n, MPI_BYTE, p->partner, p->tag[t], p->comm[t], &p->req[t][k]);
            MPI_Waitall(w, p->req[t], p->st[t]);
            MPI_Send(ack, 4, MPI_BYTE, p->partner, p->tag[t], p->comm[t]);
        }
    }
    return mb_team_now() - t0;
}

static double p2p_timed(void *state, long iters)
{
    struct p2p *p = state;
    if (p->role < 0) return 0;
    double t = mb_team_run(p->team, p->nthr, p->kind == LAT ? lat_thread : bw_thread, p, iters);
    return p->kind == LAT ? t / 2 : t; /* latency: half the round trip */
}

/* --verify: iteration it carries pattern (sender rank, thread, it). */
static void p2p_fill(void *state, long it)
{
    struct p2p *p = state;
    if (p->role < 0) return;
    for (int t = 0; t < p->nbuf; t++) {
        mb_pattern_fill_bytes(p->sbuf[t], p->bytes, (uint32_t)p->me, (uint32_t)t,
                              (uint32_t)it);
        memset(p->rbuf[t], 0, p->bytes);
    }
}

static int p2p_check(void *state, long it, char *msg, size_t len)
{
    struct p2p *p = state;
    if (p->role < 0 || (p->kind == BW && p->role == 0)) return 0; /* bandwidth: the responder receives */
    for (int t = 0; t < p->nbuf; t++) {
        long bad = mb_pattern_check_bytes(p->rbuf[t], p->bytes, (uint32_t)p->partner, (uint32_t)t, (uint32_t)it);
        if (bad >= 0) {
            snprintf(msg, len, "thread %d: message from rank %d: first bad byte %ld of %zu", t, p->partner, bad,
                     p->bytes);
            return 1;
        }
    }
    return 0;
}

static void measure(struct thr *c, struct p2p *p, struct mb_row *row, struct mb_sweep *sw)
{
    p->team = c->team;
    struct mb_kernel k = {.state = p, .comm = c->run->world, .run_timed = p2p_timed, .fill = p2p_fill, .idle = p->role < 0,
                          .check = p2p_check, .sweep = sw};
    thr_measure(c, c->team, &k, row);
}

/* ------------------------------------------------------------ overhead-* */

/* One thread on ranks 0 and N/2, whatever the level: what a single-threaded
 * program pays for having asked for it. */
void thr_overhead(struct thr *c, int bw)
{
    struct mb_run *run = c->run;
    const size_t *sizes = bw ? &c->long_size : c->sizes;
    struct mb_sweep sw = {0};
    for (int j = 0; j < (bw ? 1 : c->nsizes); j++) {
        size_t b = sizes[j];
        struct mb_row row;
        mb_row_init(&row, thr_test_names[bw ? T_OVH_BW : T_OVH_LAT], mb_thread_level_name(run->thread_level_req));
        snprintf(row.comm, sizeof row.comm, "shared");
        row.bytes = (long long)b;
        row.threads = 1;
        mb_param_opt(run, &row, "bind");
        if (bw) mb_param_opt(run, &row, "window");
        row.sent_bytes = bw ? (double)b * (double)c->window : 0;
        mb_begin(run, &row);
        int count;
        if (run->nprocs < 2) {
            mb_na(run, &row, "needs at least 2 ranks");
        } else if ((count = mb_int_count(run, &row, row.bytes, 1)) >= 0) {
            struct p2p p = {.kind = bw ? BW : LAT, .me = run->rank, .bytes = b, .count = count, .window = c->window};
            thr_pair(run, &p.role, &p.partner);
            p2p_alloc(&p, 1);
            p.comm[0] = c->shared;
            measure(c, &p, &row, bw ? NULL : &sw);
            p2p_free(&p);
        }
        mb_end(run, &row);
    }
}

/* ------------------------------------------------------------ *-mt */

/* Variants in table order: threads on one communicator with distinct tags,
 * threads with one communicator each, processes with one thread each. */
static void mt_one(struct thr *c, int test, int variant, size_t b, struct mb_sweep *sw)
{
    static const char *const names[MT_NVAR] = {"threads-tags", "threads-comms", "processes"};
    struct mb_run *run = c->run;
    int T = c->T, procs = variant == 2;
    struct mb_row row;
    mb_row_init(&row, thr_test_names[test], names[variant]);
    snprintf(row.comm, sizeof row.comm, "%s", variant == 1 ? "per-thread" : "shared");
    row.bytes = (long long)b;
    row.threads = T;
    mb_param_opt(run, &row, "bind");
    if (test != T_LAT_MT) mb_param_opt(run, &row, "window");
    int nthr = procs ? 1 : T;
    row.sent_bytes = test == T_LAT_MT ? 0 : (double)b * (double)c->window * nthr;
    mb_begin(run, &row);
    char why[160];
    int count = 0;
    if (procs && run->nprocs < 2 * T)
        mb_na(run, &row, "needs 2T = %d ranks (T processes per side), job has %d", 2 * T, run->nprocs);
    else if (!procs && run->nprocs < 2)
        mb_na(run, &row, "needs at least 2 ranks");
    else if (!procs && T > 1 && thr_level_short(c, MPI_THREAD_MULTIPLE, why, sizeof why))
        mb_na(run, &row, "%s", why);
    else if ((count = mb_int_count(run, &row, row.bytes, 1)) < 0) {
        /* n/a, and why */
    } else {
        struct p2p p = {.kind = test == T_LAT_MT ? LAT : BW, .me = run->rank, .bytes = b, .count = count,
                        .window = c->window};
        if (procs) {
            int half = run->nprocs / 2, r = run->rank;
            p.role = r < T ? 0 : r >= half && r < half + T ? 1 : -1;
            p.partner = p.role == 0 ? r + half : r - half;
        } else {
            thr_pair(run, &p.role, &p.partner);
        }
        p2p_alloc(&p, nthr);
        for (int t = 0; t < nthr; t++) {
            p.comm[t] = variant == 1 ? c->percomm[t] : c->shared;
            p.tag[t] = variant == 0 ? t : 0;
        }
        measure(c, &p, &row, sw);
        p2p_free(&p);
    }
    mb_end(run, &row);
}

void thr_mt(struct thr *c, int test)
{
    struct mb_run *run = c->run;
    const size_t *sizes = test == T_LAT_MT ? c->sizes : test == T_BW_MT ? &c->long_size : &c->short_size;
    struct mb_sweep sw[MT_NVAR] = {{0}}; /* latency-mt sweeps sizes, one per variant */
    for (int zi = 0; zi < (test == T_LAT_MT ? c->nsizes : 1); zi++) {
        mb_order(run, 1, 64, zi, 1); /* sizes keep their order; variants shuffle within each */
        for (int j = 0; j < MT_NVAR; j++) {
            const int v = mb_order(run, 2, MT_NVAR, j, 0);
            if (thr_mt_variant(c, v)) mt_one(c, test, v, sizes[zi], test == T_LAT_MT ? &sw[v] : NULL);
        }
    }
}

/* ------------------------------------------------------------ short-long */

/* Thread 0: the short ping-pong.  Thread 1: long messages from rank 0 to
 * rank 1 on their own communicator until rank 0's thread 0 is done, then a
 * zero-byte message with tag 2 that tells rank 1's thread 1 to stop. */
static double sl_thread(void *arg, int t, long iters)
{
    struct p2p *p = arg;
    if (t == 0) {
        double s = lat_thread(arg, 0, iters);
        if (p->role == 0) atomic_store(&p->stop, 1);
        return s;
    }
    if (p->role == 0) {
        while (!atomic_load(&p->stop)) MPI_Send(p->lsbuf, p->lcount, MPI_BYTE, p->partner, 1, p->longcomm);
        MPI_Send(NULL, 0, MPI_BYTE, p->partner, 2, p->longcomm);
    } else {
        for (;;) {
            MPI_Status st;
            MPI_Recv(p->lrbuf, p->lcount, MPI_BYTE, p->partner, MPI_ANY_TAG, p->longcomm, &st);
            if (st.MPI_TAG == 2) break;
            p->nlong++;
        }
    }
    return -1; /* not timed: only the short messages' latency counts */
}

static double sl_timed(void *state, long iters)
{
    struct p2p *p = state;
    if (p->role < 0) return 0;
    atomic_store(&p->stop, 0);
    return mb_team_run(p->team, p->nthr, sl_thread, p, iters) / 2;
}

static void sl_fill(void *state, long it)
{
    struct p2p *p = state;
    p2p_fill(state, it);
    if (p->role < 0 || p->nthr < 2) return;
    mb_pattern_fill_bytes(p->lsbuf, p->lbytes, 0, 1, (uint32_t)it);
    memset(p->lrbuf, 0, p->lbytes);
    p->nlong = 0;
}

static int sl_check(void *state, long it, char *msg, size_t len)
{
    struct p2p *p = state;
    if (p2p_check(state, it, msg, len)) return 1;
    if (p->role != 1 || p->nthr < 2 || p->nlong == 0) return 0;
    long bad = mb_pattern_check_bytes(p->lrbuf, p->lbytes, 0, 1, (uint32_t)it);
    if (bad < 0) return 0;
    snprintf(msg, len, "long message from rank 0: first bad byte %ld of %zu", bad, p->lbytes);
    return 1;
}

void thr_short_long(struct thr *c)
{
    struct mb_run *run = c->run;
    for (int with = 0; with < SL_NMETH; with++) {
        struct mb_row row;
        mb_row_init(&row, thr_test_names[T_SHORT_LONG], with ? "with-long" : "alone");
        snprintf(row.comm, sizeof row.comm, "shared");
        row.bytes = (long long)c->short_size;
        row.threads = with ? 2 : 1;
        mb_param_opt(run, &row, "bind");
        mb_param(&row, "long-size", "%zu", c->long_size);
        mb_begin(run, &row);
        char why[160];
        int count = 0, lcount = 0;
        if (run->nprocs < 2)
            mb_na(run, &row, "needs at least 2 ranks");
        else if (with && thr_level_short(c, MPI_THREAD_MULTIPLE, why, sizeof why))
            mb_na(run, &row, "%s", why);
        else if ((count = mb_int_count(run, &row, row.bytes, 1)) < 0 ||
                 (lcount = mb_int_count(run, &row, (long long)c->long_size, 1)) < 0) {
            /* n/a, and why */
        } else {
            struct p2p p = {.kind = LAT, .me = run->rank, .bytes = c->short_size, .count = count, .window = 1,
                            .longcomm = c->longcomm, .lbytes = c->long_size, .lcount = lcount, .team = c->team};
            thr_pair(run, &p.role, &p.partner);
            p2p_alloc(&p, 1);
            p.nthr = with ? 2 : 1; /* thread 1 has no short buffers: it only streams */
            p.comm[0] = c->shared;
            if (with && p.role >= 0) {
                p.lsbuf = mb_alloc(p.lbytes);
                p.lrbuf = mb_alloc(p.lbytes);
            }
            struct mb_kernel k = {.state = &p, .comm = run->world, .run_timed = sl_timed, .fill = sl_fill,
                                  .check = sl_check, .idle = p.role < 0};
            thr_measure(c, c->team, &k, &row);
            p2p_free(&p);
        }
        mb_end(run, &row);
    }
}
