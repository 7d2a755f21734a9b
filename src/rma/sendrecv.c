/* The send/receive reference, measured in the same run for every test's
 * size: ping-pong latency (half a round trip, as osu_latency) and windowed
 * bandwidth (W Isends then a zero-byte acknowledgement, as osu_bw).  With
 * --pairs many-to-one every origin does it with the one target at once. */
#include "rma.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_DATA = 61, TAG_ACK = 62, TAG_VERIFY = 99 };

static char *slot(struct rma *r, int k, int j) { return r->p2p + (size_t)k * r->region + (size_t)j * r->bytes; }

/* Returns seconds for iters iterations: half of each round trip. */
double rma_sendrecv_latency(void *state, long iters)
{
    struct rma *r = state;
    int n = (int)r->bytes;
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        if (r->role == ROLE_ORIGIN) {
            MPI_Send(r->src, n, MPI_BYTE, r->target, TAG_DATA, r->comm);
            MPI_Recv(r->res, n, MPI_BYTE, r->target, TAG_DATA, r->comm, MPI_STATUS_IGNORE);
        } else if (r->role == ROLE_TARGET) {
            for (int k = 0; k < r->norigins; k++)
                MPI_Irecv(slot(r, k, 0), n, MPI_BYTE, r->origins[k], TAG_DATA, r->comm, &r->reqs[k]);
            MPI_Waitall(r->norigins, r->reqs, r->stats);
            for (int k = 0; k < r->norigins; k++)
                MPI_Isend(slot(r, k, 0), n, MPI_BYTE, r->origins[k], TAG_DATA, r->comm, &r->reqs[k]);
            MPI_Waitall(r->norigins, r->reqs, r->stats);
        }
    }
    return (MPI_Wtime() - t0) / 2;
}

void rma_sendrecv_bw(void *state, long iters)
{
    struct rma *r = state;
    int n = (int)r->bytes, w = r->nops;
    for (long it = 0; it < iters; it++) {
        if (r->role == ROLE_ORIGIN) {
            for (int j = 0; j < w; j++)
                MPI_Isend(r->src + (size_t)j * r->bytes, n, MPI_BYTE, r->target, TAG_DATA, r->comm, &r->reqs[j]);
            MPI_Waitall(w, r->reqs, r->stats);
            MPI_Recv(NULL, 0, MPI_BYTE, r->target, TAG_ACK, r->comm, MPI_STATUS_IGNORE);
        } else if (r->role == ROLE_TARGET) {
            int q = 0;
            for (int k = 0; k < r->norigins; k++)
                for (int j = 0; j < w; j++)
                    MPI_Irecv(slot(r, k, j), n, MPI_BYTE, r->origins[k], TAG_DATA, r->comm, &r->reqs[q++]);
            MPI_Waitall(q, r->reqs, r->stats);
            for (int k = 0; k < r->norigins; k++)
                MPI_Isend(NULL, 0, MPI_BYTE, r->origins[k], TAG_ACK, r->comm, &r->reqs[k]);
            MPI_Waitall(r->norigins, r->reqs, r->stats);
        }
    }
}

void rma_sendrecv_fill(void *state, long it)
{
    struct rma *r = state;
    size_t nb = (size_t)r->nops * r->bytes;
    if (r->role == ROLE_ORIGIN) {
        mb_pattern_fill_bytes(r->src, nb, (uint32_t)r->rank, TAG_VERIFY, (uint32_t)it);
        memset(r->res, 0, nb);
    } else if (r->role == ROLE_TARGET) {
        for (int k = 0; k < r->norigins; k++) memset(slot(r, k, 0), 0, nb);
    }
}

/* Target: every origin's messages; origin (latency): the echo. */
int rma_sendrecv_check(void *state, long it, char *msg, size_t len)
{
    struct rma *r = state;
    size_t nb = (size_t)r->nops * r->bytes;
    if (r->role == ROLE_TARGET)
        for (int k = 0; k < r->norigins; k++) {
            long b = mb_pattern_check_bytes(slot(r, k, 0), nb, (uint32_t)r->origins[k], TAG_VERIFY, (uint32_t)it);
            if (b >= 0) {
                snprintf(msg, len, "sendrecv: message from origin %d: first bad byte %ld", r->origins[k], b);
                return 1;
            }
        }
    if (r->role == ROLE_ORIGIN && r->nops == 1) {
        long b = mb_pattern_check_bytes(r->res, nb, (uint32_t)r->rank, TAG_VERIFY, (uint32_t)it);
        if (b >= 0) {
            snprintf(msg, len, "sendrecv: echo from target %d: first bad byte %ld", r->target, b);
            return 1;
        }
    }
    return 0;
}
