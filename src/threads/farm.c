/* master-worker (the parallel bzip2 study): rank 0 farms --blocks blocks of
 * --block-size bytes out to W workers (ranks 1..W; the others idle), which
 * compress each with libbz2 (or spin for --work-us of CPU time) and send the
 * result back.
 * One iteration = every block farmed out and its result back.  Versions:
 *   mpi-only        rounds of W blocks: the master sends one to each worker
 *                   in turn, then gathers the W results (MPI_Gather of the
 *                   sizes, MPI_Gatherv of the data)
 *   comm-threads    one master thread per worker (MPI_THREAD_MULTIPLE), each
 *                   taking the next block and doing blocking MPI_Send, then
 *                   MPI_Probe + MPI_Recv of the result, for its worker
 *   worker-overlap  each worker receives the next block on a second thread
 *                   while its first compresses the current one; the master
 *                   keeps two blocks in flight per worker and takes results
 *                   as they come (MPI_Probe on any source)
 * Block b travels with tag b + 1 both ways; tag 0 (empty) tells a worker to
 * stop.  --verify: the master decompresses every result and compares it with
 * the block of the iteration (the data are a function of iteration and
 * block, so stale data from the fault injection cannot pass). */
#include "threads.h"

#include <bzlib.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

const char *const thr_mw_names[MW_NMETH] = {"mpi-only", "comm-threads", "worker-overlap"};
enum { MPI_ONLY, COMM_THREADS, WORKER_OVERLAP };
enum { TAG_STOP = 0, RECEIPT = 8 };

struct farm {
    struct thr *c;
    struct mb_team *team; /* this rank's */
    MPI_Comm comm;        /* ranks 0..W of world; MPI_COMM_NULL on idle ranks */
    int method, W, rank, nb, spin;
    size_t bs, cap;       /* block bytes; room for one result */
    double work_s;        /* spin: CPU seconds per block */
    /* master */
    unsigned char *in, *out, *expect, *scratch;
    int *outlen, *counts, *displs, *stopped;
    atomic_int next;      /* comm-threads: the next block to hand out */
    double *probe;        /* per master thread: seconds in MPI_Probe */
    /* worker: two slots (worker-overlap's receiving thread fills, the other empties) */
    unsigned char *wbuf[2], *wout;
    int full[2], tag[2];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double sink;
};

/* Block b of iteration it: bytes drawn uniformly from the 16 letters a..p by
 * xorshift64*, seeded by (it, b) — 4 bits of entropy per byte, which bzip2
 * -9 compresses to about 51 %. */
static void gen(unsigned char *p, size_t n, long it, int b)
{
    uint64_t x = 0x9E3779B97F4A7C15u * (uint64_t)(it + 1) ^ 0xD1B54A32D192ED03u * (uint64_t)(b + 1);
    if (!x) x = 1;
    for (size_t i = 0; i < n; i += 16) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        uint64_t r = x * 0x2545F4914F6CDD1Du;
        for (size_t k = 0; k < 16 && i + k < n; k++) p[i + k] = (unsigned char)('a' + (r >> (4 * k) & 15));
    }
}

/* spin's result: one 8-byte word per 4 KiB of the block, folded (FNV-style)
 * — the master can tell the worker had this iteration's block without the
 * worker making a pass over it. */
static uint64_t receipt(const unsigned char *p, size_t n)
{
    uint64_t s = 1469598103934665603u ^ n;
    for (size_t i = 0; i < n; i += 4096) {
        uint64_t w = 0;
        memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        s = (s ^ w) * 1099511628211u;
    }
    return s;
}

/* A worker's work on one block; returns the result's length. */
static int work(struct farm *f, const unsigned char *blk, unsigned char *out)
{
    if (f->spin) { /* computes until the thread has used --work-us of CPU: exact even when descheduled */
        double until = mb_team_thread_cpu() + f->work_s;
        if (f->work_s > 0)
            do f->sink += mb_work(64, f->sink);
            while (mb_team_thread_cpu() < until);
        uint64_t r = receipt(blk, f->bs);
        memcpy(out, &r, RECEIPT);
        return RECEIPT;
    }
    unsigned int len = (unsigned int)f->cap;
    int rc = BZ2_bzBuffToBuffCompress((char *)out, &len, (char *)blk, (unsigned int)f->bs, 9, 0, 0);
    if (rc != BZ_OK) { /* cannot happen with cap = bs * 1.01 + 600; the master's check would say so */
        fprintf(stderr, "threads: rank %d: BZ2_bzBuffToBuffCompress failed (%d)\n", f->rank, rc);
        return 0;
    }
    return (int)len;
}

/* ------------------------------------------------------------ master */

/* Master thread t: the next result from src with tag (any: MPI_ANY_*) into
 * its block's place, its size found with MPI_Probe; returns its sender. */
static int probe_recv(struct farm *f, int t, int src, int tag)
{
    MPI_Status st;
    double p0 = mb_team_now();
    MPI_Probe(src, tag, f->comm, &st);
    f->probe[t] += mb_team_now() - p0;
    int n, b = st.MPI_TAG - 1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    MPI_Recv(f->out + (size_t)b * f->cap, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, f->comm, MPI_STATUS_IGNORE);
    f->outlen[b] = n;
    return st.MPI_SOURCE;
}

static void send_block(struct farm *f, int b, int w)
{
    MPI_Send(f->in + (size_t)b * f->bs, (int)f->bs, MPI_BYTE, w, b + 1, f->comm);
}

static void master_mpi_only(struct farm *f)
{
    for (int b0 = 0; b0 < f->nb; b0 += f->W) {
        int n = f->nb - b0 < f->W ? f->nb - b0 : f->W, zero = 0;
        for (int w = 1; w <= n; w++) send_block(f, b0 + w - 1, w);
        MPI_Gather(&zero, 1, MPI_INT, f->counts, 1, MPI_INT, 0, f->comm);
        MPI_Gatherv(NULL, 0, MPI_BYTE, f->out + (size_t)b0 * f->cap, f->counts, f->displs, MPI_BYTE, 0, f->comm);
        for (int w = 1; w <= n; w++) f->outlen[b0 + w - 1] = f->counts[w];
    }
}

/* comm-threads: master thread t serves worker t + 1. */
static void master_thread(struct farm *f, int t)
{
    for (int b; (b = atomic_fetch_add(&f->next, 1)) < f->nb;) {
        send_block(f, b, t + 1);
        probe_recv(f, t, t + 1, b + 1);
    }
    MPI_Send(NULL, 0, MPI_BYTE, t + 1, TAG_STOP, f->comm);
}

/* worker-overlap: two blocks in flight per worker; a worker that has been
 * sent everything gets the stop message instead. */
static void feed(struct farm *f, int w, int *outstanding)
{
    int b = atomic_load(&f->next);
    if (b < f->nb) {
        atomic_store(&f->next, b + 1);
        send_block(f, b, w);
        ++*outstanding;
    } else if (!f->stopped[w]) {
        f->stopped[w] = 1;
        MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, f->comm);
    }
}

static void master_overlap(struct farm *f)
{
    int outstanding = 0;
    for (int w = 1; w <= f->W; w++) f->stopped[w] = 0;
    for (int round = 0; round < 2; round++)
        for (int w = 1; w <= f->W; w++) feed(f, w, &outstanding);
    while (outstanding > 0) {
        int w = probe_recv(f, 0, MPI_ANY_SOURCE, MPI_ANY_TAG);
        outstanding--;
        feed(f, w, &outstanding);
    }
}

/* ------------------------------------------------------------ workers */

static void worker_mpi_only(struct farm *f)
{
    for (int b0 = 0; b0 < f->nb; b0 += f->W) {
        int b = b0 + f->rank - 1, len = 0;
        if (b < f->nb) {
            MPI_Recv(f->wbuf[0], (int)f->bs, MPI_BYTE, 0, b + 1, f->comm, MPI_STATUS_IGNORE);
            len = work(f, f->wbuf[0], f->wout);
        }
        MPI_Gather(&len, 1, MPI_INT, NULL, 0, MPI_INT, 0, f->comm);
        MPI_Gatherv(f->wout, len, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, 0, f->comm);
    }
}

static void worker_loop(struct farm *f)
{
    for (;;) {
        MPI_Status st;
        MPI_Recv(f->wbuf[0], (int)f->bs, MPI_BYTE, 0, MPI_ANY_TAG, f->comm, &st);
        if (st.MPI_TAG == TAG_STOP) return;
        int len = work(f, f->wbuf[0], f->wout);
        MPI_Send(f->wout, len, MPI_BYTE, 0, st.MPI_TAG, f->comm);
    }
}

/* worker-overlap, thread 1: receives into the slots in turn, each as soon as
 * thread 0 has emptied it. */
static void overlap_receiver(struct farm *f)
{
    for (int s = 0;; s ^= 1) {
        pthread_mutex_lock(&f->mu);
        while (f->full[s]) pthread_cond_wait(&f->cv, &f->mu);
        pthread_mutex_unlock(&f->mu);
        MPI_Status st;
        MPI_Recv(f->wbuf[s], (int)f->bs, MPI_BYTE, 0, MPI_ANY_TAG, f->comm, &st);
        pthread_mutex_lock(&f->mu);
        f->tag[s] = st.MPI_TAG;
        f->full[s] = 1;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        if (st.MPI_TAG == TAG_STOP) return;
    }
}

/* worker-overlap, thread 0: works on the slots in turn; a slot is free again
 * once its block is compressed, before the result goes back. */
static void overlap_worker(struct farm *f)
{
    for (int s = 0;; s ^= 1) {
        pthread_mutex_lock(&f->mu);
        while (!f->full[s]) pthread_cond_wait(&f->cv, &f->mu);
        int tag = f->tag[s];
        pthread_mutex_unlock(&f->mu);
        int len = tag == TAG_STOP ? 0 : work(f, f->wbuf[s], f->wout);
        pthread_mutex_lock(&f->mu);
        f->full[s] = 0;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        if (tag == TAG_STOP) return;
        MPI_Send(f->wout, len, MPI_BYTE, 0, tag, f->comm);
    }
}

/* ------------------------------------------------------------ kernel */

static double farm_thread(void *arg, int t, long iters)
{
    (void)iters;
    struct farm *f = arg;
    if (f->rank == 0) {
        if (f->method == COMM_THREADS)
            master_thread(f, t);
        else if (f->method == WORKER_OVERLAP)
            master_overlap(f);
        else
            master_mpi_only(f);
    } else if (f->method == WORKER_OVERLAP) {
        if (t == 1)
            overlap_receiver(f);
        else
            overlap_worker(f);
    } else if (f->method == MPI_ONLY) {
        worker_mpi_only(f);
    } else {
        worker_loop(f);
    }
    return -1;
}

static double farm_timed(void *state, long iters)
{
    struct farm *f = state;
    if (f->comm == MPI_COMM_NULL) return 0;
    int nthr = f->rank == 0 ? (f->method == COMM_THREADS ? f->W : 1) : f->method == WORKER_OVERLAP ? 2 : 1;
    double t0 = mb_team_now();
    for (long i = 0; i < iters; i++) {
        atomic_store(&f->next, 0);
        f->full[0] = f->full[1] = 0;
        mb_team_run(f->team, nthr, farm_thread, f, 1);
    }
    return mb_team_now() - t0;
}

static void farm_fill(void *state, long it)
{
    struct farm *f = state;
    if (f->rank != 0 || f->comm == MPI_COMM_NULL) return;
    for (int b = 0; b < f->nb; b++) {
        gen(f->in + (size_t)b * f->bs, f->bs, it, b);
        f->outlen[b] = -1;
    }
}

/* Returns NULL if result b is this iteration's block b, compressed, else why not. */
static const char *bad_block(struct farm *f, int b, long it, char *why, size_t len)
{
    const unsigned char *res = f->out + (size_t)b * f->cap;
    int n = f->outlen[b];
    gen(f->expect, f->bs, it, b);
    if (n < 0) return "no result came back";
    if (f->spin) {
        uint64_t want = receipt(f->expect, f->bs), got;
        if (n != RECEIPT) return "the result is not an 8-byte receipt";
        memcpy(&got, res, RECEIPT);
        return got == want ? NULL : "the receipt does not match the block of this iteration";
    }
    unsigned int dlen = (unsigned int)f->bs;
    int rc = BZ2_bzBuffToBuffDecompress((char *)f->scratch, &dlen, (char *)res, (unsigned int)n, 0, 0);
    if (rc != BZ_OK) {
        snprintf(why, len, "the result does not decompress (bzip2 error %d)", rc);
        return why;
    }
    if (dlen != f->bs) {
        snprintf(why, len, "the result decompresses to %u bytes, the block has %zu", dlen, f->bs);
        return why;
    }
    for (size_t i = 0; i < f->bs; i++)
        if (f->scratch[i] != f->expect[i]) {
            snprintf(why, len, "decompressed, byte %zu differs from the block of this iteration", i);
            return why;
        }
    return NULL;
}

static int farm_check(void *state, long it, char *msg, size_t len)
{
    struct farm *f = state;
    if (f->rank != 0 || f->comm == MPI_COMM_NULL) return 0;
    for (int b = 0; b < f->nb; b++) {
        char why[160];
        const char *bad = bad_block(f, b, it, why, sizeof why);
        if (bad) {
            snprintf(msg, len, "block %d of %d (%s, %zu B): %s", b, f->nb, f->spin ? "spin" : "bzip2", f->bs, bad);
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ driver */

static void farm_alloc(struct farm *f, int maxW)
{
    if (f->rank == 0) {
        f->in = mb_alloc((size_t)f->nb * f->bs);
        f->out = mb_alloc((size_t)f->nb * f->cap);
        f->expect = mb_alloc(f->bs);
        f->scratch = mb_alloc(f->bs);
        f->outlen = calloc((size_t)f->nb, sizeof *f->outlen);
        f->counts = calloc((size_t)maxW + 1, sizeof *f->counts);
        f->displs = calloc((size_t)maxW + 1, sizeof *f->displs);
        f->stopped = calloc((size_t)maxW + 1, sizeof *f->stopped);
        f->probe = calloc((size_t)maxW, sizeof *f->probe);
        for (int b = 0; b < f->nb; b++) gen(f->in + (size_t)b * f->bs, f->bs, 0, b); /* timed runs without --verify */
    } else if (f->rank <= maxW) {
        f->wbuf[0] = mb_alloc(f->bs);
        f->wbuf[1] = mb_alloc(f->bs);
        f->wout = mb_alloc(f->cap);
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
}

static void farm_free(struct farm *f)
{
    free(f->in);
    free(f->out);
    free(f->expect);
    free(f->scratch);
    free(f->outlen);
    free(f->counts);
    free(f->displs);
    free(f->stopped);
    free(f->probe);
    free(f->wbuf[0]);
    free(f->wbuf[1]);
    free(f->wout);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
}

/* Why version m with W workers cannot run here, or NULL. */
static const char *cannot(struct thr *c, const struct farm *f, int m, int W, char *buf, size_t len)
{
    if (c->run->nprocs < 2) return "needs at least 2 ranks";
    if ((m == COMM_THREADS && W > 1) || m == WORKER_OVERLAP) return thr_level_short(c, MPI_THREAD_MULTIPLE, buf, len);
    if (m == MPI_ONLY && (double)(W - 1) * (double)f->cap > INT_MAX) {
        snprintf(buf, len, "MPI_Gatherv displacements overflow: %d workers x %zu B", W, f->cap);
        return buf;
    }
    return NULL;
}

void thr_master_worker(struct thr *c)
{
    struct mb_run *run = c->run;
    int maxW = c->nworkers ? c->workers[c->nworkers - 1] : 0;
    struct farm f = {.c = c, .rank = run->rank, .nb = (int)c->blocks, .bs = c->block_size, .spin = c->spin};
    f.cap = f.spin ? RECEIPT : f.bs + f.bs / 100 + 600; /* bzip2's bound: 1 % + 600 bytes */
    f.work_s = f.spin ? c->work_us * 1e-6 : 0;
    farm_alloc(&f, maxW);
    char *js = NULL;
    size_t jn = 0;
    int nw = c->nworkers ? c->nworkers : 1;
    for (int i = 0; i < nw; i++) {
        int W = c->nworkers ? c->workers[i] : 1;
        f.W = W;
        MPI_Comm_split(c->shared, run->rank <= W && run->nprocs > 1 ? 0 : MPI_UNDEFINED, run->rank, &f.comm);
        if (run->rank == 0 && W <= maxW && (double)(W - 1) * (double)f.cap <= INT_MAX)
            for (int w = 0; w <= W; w++) f.displs[w] = w ? (w - 1) * (int)f.cap : 0;
        for (int m = 0; m < MW_NMETH; m++) {
            struct mb_row row;
            mb_row_init(&row, thr_test_names[T_MASTER_WORKER], thr_mw_names[m]);
            snprintf(row.comm, sizeof row.comm, "farm");
            row.bytes = (long long)f.bs;
            row.threads = m == COMM_THREADS ? W : m == WORKER_OVERLAP ? 2 : 1;
            mb_param_opt(run, &row, "bind");
            mb_param(&row, "blocks", "%d", f.nb);
            mb_param_opt(run, &row, "work");
            if (f.spin) mb_param(&row, "work-us", "%g", c->work_us);
            mb_param(&row, "workers", "%d", W);
            row.sent_bytes = (double)f.nb * (double)f.bs; /* mbps: MB/s of input */
            mb_begin(run, &row);
            char why[200];
            const char *no = cannot(c, &f, m, W, why, sizeof why);
            if (no) {
                mb_na(run, &row, "%s", no);
            } else {
                f.method = m;
                f.team = run->rank == 0 && m == COMM_THREADS && c->mteam ? c->mteam : c->team;
                if (run->rank == 0) memset(f.probe, 0, (size_t)maxW * sizeof *f.probe);
                struct mb_kernel k = {.state = &f, .comm = run->world, .run_timed = farm_timed, .fill = farm_fill,
                                      .check = farm_check, .idle = f.comm == MPI_COMM_NULL};
                thr_measure(c, f.team, &k, &row);
                if (run->rank == 0) {
                    double probe = 0, in = 0, out = 0;
                    for (int t = 0; t < maxW; t++) probe += f.probe[t];
                    for (int b = 0; b < f.nb; b++) {
                        in += (double)f.bs;
                        out += f.outlen[b] > 0 ? f.outlen[b] : 0;
                    }
                    thr_append(&js, &jn, "%s\n    {\"method\": \"%s\", \"workers\": %d, \"master_cpu_pct\": %.1f, "
                               "\"probe_pct\": ", jn ? "," : "", thr_mw_names[m], W, row.cpu_pct);
                    if (m == MPI_ONLY || c->last_wall <= 0)
                        thr_append(&js, &jn, "null");
                    else
                        thr_append(&js, &jn, "%.1f", 100 * probe / c->last_wall);
                    thr_append(&js, &jn, ", \"result_ratio\": %.6g}", out / in);
                }
            }
            mb_end(run, &row);
        }
        if (f.comm != MPI_COMM_NULL) MPI_Comm_free(&f.comm);
    }
    char *meta = NULL;
    size_t mn = 0;
    thr_append(&meta, &mn,
               "{\"blocks\": %d, \"block_size\": %zu, \"work\": \"%s\", \"work_us\": %g, "
               "\"data\": \"bytes uniform over the 16 letters a-p (4 bits of entropy per byte), xorshift64* seeded by "
               "iteration and block\", \"rows\": [%s]}",
               f.nb, f.bs, f.spin ? "spin" : "bzip2", f.spin ? c->work_us : 0, js ? js : "");
    mb_meta_add(run, "master_worker", meta);
    free(meta);
    free(js);
    farm_free(&f);
}
