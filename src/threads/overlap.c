/* overlap: a nonblocking exchange between ranks 0 and N/2 with a fixed
 * computation in between.  Methods, in run order:
 *   comm-only         Irecv + Isend + Waitall, nothing else
 *   compute-only      the computation alone
 *   plain             Irecv + Isend, compute, Waitall (progress only if the
 *                     library makes it by itself)
 *   comm-thread       a second thread posts the exchange and drives it with
 *                     an MPI_Testall loop while thread 0 computes
 *   comm-thread-wait  the same thread blocks in MPI_Waitall instead
 * overlap % = 100 * (comm-only + compute-only - method) / comm-only: the part
 * of the communication time hidden behind the computation.  With
 * --placement, the placement study follows (place.c). */
#include "overlap.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[NMETH] = {"comm-only", "compute-only", "plain", "comm-thread", "comm-thread-wait"};

static void post(struct ov *o)
{
    int n = (int)o->bytes; /* at most INT_MAX: each row checked it (mb_int_count) */
    MPI_Irecv(o->rbuf, n, MPI_BYTE, o->partner, 0, o->comm, &o->req[0]);
    MPI_Isend(o->sbuf, n, MPI_BYTE, o->partner, 0, o->comm, &o->req[1]);
}

static double ov_thread(void *arg, int t, long iters)
{
    struct ov *o = arg;
    double t0 = mb_team_now();
    if (t == 1) { /* the communication thread */
        for (long i = 1; i <= iters; i++) {
            while (atomic_load(&o->go) < i) sched_yield();
            post(o);
            if (o->method == M_THREAD_WAIT) {
                MPI_Waitall(2, o->req, o->st[t]);
            } else {
                int flag = 0;
                while (!flag) MPI_Testall(2, o->req, &flag, o->st[t]);
            }
            atomic_store(&o->done, i);
        }
        return -1;
    }
    for (long i = 1; i <= iters; i++) {
        switch (o->method) {
        case M_COMM:
            post(o);
            MPI_Waitall(2, o->req, o->st[t]);
            break;
        case M_COMPUTE:
            o->sink += mb_work(o->work, o->sink);
            break;
        case M_PLAIN:
            post(o);
            o->sink += mb_work(o->work, o->sink);
            MPI_Waitall(2, o->req, o->st[t]);
            break;
        case M_SERIAL:
            post(o);
            MPI_Waitall(2, o->req, o->st[t]);
            o->sink += mb_work(o->work, o->sink);
            break;
        default:
            atomic_store(&o->go, i);
            o->sink += mb_work(o->work, o->sink);
            while (atomic_load(&o->done) < i) sched_yield();
        }
    }
    return mb_team_now() - t0;
}

double thr_ov_timed(void *state, long iters)
{
    struct ov *o = state;
    if (o->role < 0) return 0;
    atomic_store(&o->go, 0);
    atomic_store(&o->done, 0);
    int two = o->method == M_THREAD_TEST || o->method == M_THREAD_WAIT;
    return mb_team_run(o->team, two ? 2 : 1, ov_thread, o, iters);
}

void thr_ov_fill(void *state, long it)
{
    struct ov *o = state;
    if (o->role < 0) return;
    mb_pattern_fill_bytes(o->sbuf, o->bytes, (uint32_t)o->me, 0, (uint32_t)it);
    memset(o->rbuf, 0, o->bytes);
}

int thr_ov_check(void *state, long it, char *msg, size_t len)
{
    struct ov *o = state;
    if (o->role < 0 || o->method == M_COMPUTE) return 0;
    long bad = mb_pattern_check_bytes(o->rbuf, o->bytes, (uint32_t)o->partner, 0, (uint32_t)it);
    if (bad < 0) return 0;
    snprintf(msg, len, "message from rank %d: first bad byte %ld of %zu", o->partner, bad, o->bytes);
    return 1;
}

void thr_overlap(struct thr *c)
{
    struct mb_run *run = c->run;
    struct ov o = {.team = c->team, .comm = c->shared, .me = run->rank, .bytes = c->long_size};
    thr_pair(run, &o.role, &o.partner);
    if (o.role >= 0) {
        o.sbuf = mb_alloc(o.bytes);
        o.rbuf = mb_alloc(o.bytes);
    }
    double rate = mb_work_rate(run->world), t[NMETH] = {0};
    int ok[NMETH] = {0};
    for (int m = 0; m < NMETH; m++) {
        struct mb_row row;
        mb_row_init(&row, "overlap", names[m]);
        snprintf(row.comm, sizeof row.comm, "world");
        row.bytes = (long long)o.bytes;
        row.threads = m >= M_THREAD_TEST ? 2 : 1;
        mb_param_opt(run, &row, "bind");
        mb_param_opt(run, &row, "compute-us");
        row.sent_bytes = m == M_COMPUTE ? 0 : (double)o.bytes;
        mb_begin(run, &row);
        char why[160];
        if (run->nprocs < 2)
            mb_na(run, &row, "needs at least 2 ranks");
        else if (m >= M_THREAD_TEST && thr_level_short(c, MPI_THREAD_SERIALIZED, why, sizeof why))
            mb_na(run, &row, "%s", why);
        else if (mb_int_count(run, &row, row.bytes, 1) < 0) {
            /* n/a, and why: post() passes bytes as MPI's int count */
        } else {
            if (m == M_COMPUTE) { /* as long as the exchange took, unless --compute-us says otherwise */
                double us = c->compute_us > 0 ? c->compute_us : ok[M_COMM] ? t[M_COMM] * 1e6 : 100;
                o.work = (long)(us * 1e-6 * rate) + 1;
            }
            o.method = m;
            struct mb_kernel k = {.state = &o, .comm = run->world, .run_timed = thr_ov_timed, .fill = thr_ov_fill,
                                  .check = thr_ov_check, .idle = o.role < 0};
            thr_measure(c, c->team, &k, &row);
            t[m] = mb_stat_value(&run->opts, &row.t);
            ok[m] = 1;
        }
        mb_end(run, &row);
    }
    /* hidden communication, per method that overlaps */
    double pct[NMETH];
    for (int m = 0; m < NMETH; m++)
        pct[m] = ok[m] && ok[M_COMM] && ok[M_COMPUTE] && m >= M_PLAIN && t[M_COMM] > 0
                     ? 100 * (t[M_COMM] + t[M_COMPUTE] - t[m]) / t[M_COMM]
                     : -1e300;
    c->ov.comm = t[M_COMM];
    c->ov.compute = t[M_COMPUTE];
    c->ov.plain = pct[M_PLAIN];
    c->ov.thread_test = pct[M_THREAD_TEST];
    c->ov.thread_wait = pct[M_THREAD_WAIT];
    char meta[512], v[3][32];
    for (int i = 0; i < 3; i++) {
        double x = pct[M_PLAIN + i];
        if (x > -1e299)
            snprintf(v[i], sizeof v[i], "%.1f", x);
        else
            snprintf(v[i], sizeof v[i], "null");
    }
    snprintf(meta, sizeof meta,
             "{\"compute_iterations\": %ld, \"compute_us\": %.3f, \"statistic\": \"%s\", \"overlap_percent\": "
             "{\"plain\": %s, \"comm-thread\": %s, \"comm-thread-wait\": %s}}",
             o.work, t[M_COMPUTE] * 1e6, mb_stat_name(run->opts.stat), v[0], v[1], v[2]);
    mb_meta_add(run, "overlap", meta);
    if (c->placement) thr_placement(c, &o);
    free(o.sbuf);
    free(o.rbuf);
}
