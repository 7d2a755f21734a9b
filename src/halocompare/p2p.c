/* The point-to-point halo exchanges (MPI-1).  Each message is what the
 * halo says it is (sbuf[d], scount[d], stype[d]): a buffer of doubles, a
 * face datatype in the array, or a packed face (halo.h). */
#include "halo.h"

static void post_irecvs(struct halo *h, MPI_Request *r)
{
    for (int i = 0; i < h->ndirs; i++) {
        int d = h->dirs[i];
        MPI_Irecv(h->rbuf[d], h->rcount[d], h->rtype[d], h->partner[d], h->opp[d], h->comm, &r[i]);
    }
    halo_phase(h, PH_POST);
}

static void irecv_send(struct halo *h, long iters)
{
    for (long it = 0; it < iters; it++) {
        post_irecvs(h, h->req);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            MPI_Send(h->sbuf[d], h->scount[d], h->stype[d], h->partner[d], d, h->comm);
        }
        halo_phase(h, PH_SEND);
        mb_compute(); /* --overlap: only the receives are still open: the sends cannot hide */
        MPI_Waitall(h->ndirs, h->req, MPI_STATUSES_IGNORE);
        halo_phase(h, PH_WAIT);
    }
}

static void irecv_isend(struct halo *h, long iters)
{
    for (long it = 0; it < iters; it++) {
        post_irecvs(h, h->req);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            MPI_Isend(h->sbuf[d], h->scount[d], h->stype[d], h->partner[d], d, h->comm, &h->req[h->ndirs + i]);
        }
        halo_phase(h, PH_SEND);
        mb_compute(); /* --overlap: the computation the exchange may hide behind (overlap.c) */
        MPI_Waitall(2 * h->ndirs, h->req, MPI_STATUSES_IGNORE);
        halo_phase(h, PH_WAIT);
    }
}

/* Phased (red-black for the faces; 2^ndims colours for the full stencil: 4
 * in 2-D, 8 in 3-D): colour c sends in phase c,
 * and nobody sends before it has received the data of every neighbour of an
 * earlier colour — so only one colour injects at a time.  Receives are
 * posted first, which keeps it deadlock-free even where two neighbours share
 * a colour (odd periodic dimensions, a process that is its own neighbour). */
static void phased(struct halo *h, long iters)
{
    for (long it = 0; it < iters; it++) {
        post_irecvs(h, h->req);
        for (int c = 0; c < h->ncolours; c++) {
            if (c == h->colour) {
                for (int i = 0; i < h->ndirs; i++) {
                    int d = h->dirs[i];
                    MPI_Send(h->sbuf[d], h->scount[d], h->stype[d], h->partner[d], d, h->comm);
                }
                halo_phase(h, PH_SEND);
                continue;
            }
            if (c > h->colour) continue;
            for (int i = 0; i < h->ndirs; i++)
                if (h->pcolour[h->dirs[i]] == c) MPI_Wait(&h->req[i], MPI_STATUS_IGNORE);
            halo_phase(h, PH_WAIT);
        }
        MPI_Waitall(h->ndirs, h->req, MPI_STATUSES_IGNORE); /* the rest (completed ones are null) */
        halo_phase(h, PH_WAIT);
    }
}

static const char *persistent_setup(struct halo *h)
{
#ifdef MB_SIMULATED
    /* measured: SimGrid SMPI 3.32's persistent requests deliver a derived datatype's data of an earlier
     * start (or none), so the array's ghost cells fail verification */
    if (h->arr && h->packing == PACK_DATATYPE)
        return "persistent requests with derived datatypes: wrong data under SimGrid SMPI";
#endif
    for (int i = 0; i < h->ndirs; i++) {
        int d = h->dirs[i];
        MPI_Recv_init(h->rbuf[d], h->rcount[d], h->rtype[d], h->partner[d], h->opp[d], h->comm, &h->req[i]);
        MPI_Send_init(h->sbuf[d], h->scount[d], h->stype[d], h->partner[d], d, h->comm, &h->req[h->ndirs + i]);
    }
    return NULL;
}

static void persistent(struct halo *h, long iters)
{
    for (long it = 0; it < iters; it++) {
        MPI_Startall(h->ndirs, h->req); /* the receives first: the phases post and send (halo-phases.md) */
        halo_phase(h, PH_POST);
        MPI_Startall(h->ndirs, h->req + h->ndirs);
        halo_phase(h, PH_SEND);
        mb_compute();
        MPI_Waitall(2 * h->ndirs, h->req, MPI_STATUSES_IGNORE);
        halo_phase(h, PH_WAIT);
    }
}

static void persistent_free(struct halo *h)
{
    for (int i = 0; i < 2 * h->ndirs; i++) MPI_Request_free(&h->req[i]);
}

/* A shift per direction: send along d, receive what comes along d from the
 * opposite neighbour — every process does the same direction at once. */
static void sendrecv(struct halo *h, long iters)
{
    for (long it = 0; it < iters; it++)
        for (int d = 0; d < h->nnbr; d++) {
            int o = h->opp[d];
            MPI_Sendrecv(h->sbuf[d], h->scount[d], h->stype[d], h->partner[d], d, h->rbuf[o], h->rcount[o],
                         h->rtype[o], h->partner[o], d, h->comm, MPI_STATUS_IGNORE);
        }
}

const struct halo_method halo_p2p_methods[] = {
    {"irecv-send", NULL, irecv_send, NULL, NULL},
    {"irecv-isend", NULL, irecv_isend, NULL, NULL},
    {"phased", NULL, phased, NULL, NULL},
    {"persistent", persistent_setup, persistent, persistent_free, NULL},
    {"sendrecv", NULL, sendrecv, NULL, "each MPI_Sendrecv posts, sends and waits in one call"},
    {0},
};

/* Deliberately unsafe: every process sends all its messages with
 * MPI_Send before it receives any — correct only while the library buffers
 * them (below the eager limit); above it the job deadlocks and the watchdog
 * (--timeout) names the test.  Selectable only with --unsafe. */
static void send_recv_naive(struct halo *h, long iters)
{
    for (long it = 0; it < iters; it++) {
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            MPI_Send(h->sbuf[d], h->scount[d], h->stype[d], h->partner[d], d, h->comm);
        }
        halo_phase(h, PH_SEND);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            MPI_Recv(h->rbuf[d], h->rcount[d], h->rtype[d], h->partner[d], h->opp[d], h->comm, MPI_STATUS_IGNORE);
        }
        halo_phase(h, PH_WAIT); /* a blocking receive posts and waits: all wait */
    }
}

/* Its own family, so the driver can keep it out of "all" unless --unsafe. */
const struct halo_method halo_unsafe_methods[] = {{"send-recv-naive", NULL, send_recv_naive, NULL, NULL}, {0}};
