/* MPI-4 partitioned communication (MPI_Psend_init / MPI_Precv_init): the
 * exchange as threads that each fill part of a face would write it.  One
 * partitioned send and receive per direction, made once in the set-up on
 * the halo's messages (halo.h: buffers, or packed array faces); per
 * exchange MPI_Startall, MPI_Pready for each partition of each message in
 * turn (the order T threads filling their parts would mark them ready; one
 * thread here, a loop), MPI_Waitall.
 *
 * A face of c elements is split into --partitions P parts of c / P (main.c
 * refuses a P that does not divide the faces the user asked for; with the
 * default P and --methods all, a size P does not divide is this row's n/a).
 * The full stencil's edges and corners of the array (a line, one double),
 * and a packed face whose bytes P does not divide, are P parts where P
 * divides their count, else one.  Sender and receiver reach
 * the same split: a message's count is the same on both sides. */
#include "halo.h"

#include <stdio.h>

#if defined(MB_SIMULATED)
#define NO_PARTITIONED "SimGrid SMPI has no partitioned communication (MPI-4 MPI_Psend_init)"
#elif MPI_VERSION < 4
#define NO_PARTITIONED 1
#endif

#ifdef NO_PARTITIONED
static const char *part_setup(struct halo *h)
{
    (void)h;
#if defined(MB_SIMULATED)
    return NO_PARTITIONED;
#else
    static char why[160];
#if defined(OMPI_MAJOR_VERSION)
    snprintf(why, sizeof why, "MPI_Psend_init needs MPI-4; Open MPI %d.%d.%d is MPI-%d.%d", OMPI_MAJOR_VERSION,
             OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION, MPI_VERSION, MPI_SUBVERSION);
#else
    snprintf(why, sizeof why, "MPI_Psend_init needs MPI-4; this MPI library is MPI-%d.%d", MPI_VERSION,
             MPI_SUBVERSION);
#endif
    return why;
#endif
}

static void part_run(struct halo *h, long iters)
{
    (void)h;
    (void)iters;
}

static void part_free(struct halo *h) { (void)h; }
#else
/* The partitions of a message of n elements. */
static int parts(const struct halo *h, int n) { return n % h->partitions ? 1 : h->partitions; }

static const char *part_setup(struct halo *h)
{
    static char why[160];
    if (h->arr && h->packing == PACK_DATATYPE)
        return "a face sent in place is one subarray element, which partitions cannot split (packing pack, "
               "mpi-pack)";
    /* every face, partner or not, so that every rank reaches the same verdict */
    for (int d = 0; d < halo_faces(h->ndims); d++) {
        long face = h->arr ? halo_array_elems(h->arr, d) : h->count; /* doubles, whatever the packing */
        if (face % h->partitions) {
            snprintf(why, sizeof why, "%d partitions (--partitions) do not divide a face of %ld doubles",
                     h->partitions, face);
            return why;
        }
    }
    for (int i = 0; i < h->ndirs; i++) {
        int d = h->dirs[i], r = parts(h, h->rcount[d]), s = parts(h, h->scount[d]);
        MPI_Precv_init(h->rbuf[d], r, h->rcount[d] / r, h->rtype[d], h->partner[d], h->opp[d], h->comm,
                       MPI_INFO_NULL, &h->req[i]);
        MPI_Psend_init(h->sbuf[d], s, h->scount[d] / s, h->stype[d], h->partner[d], d, h->comm, MPI_INFO_NULL,
                       &h->req[h->ndirs + i]);
    }
    return NULL;
}

static void part_run(struct halo *h, long iters)
{
    for (long it = 0; it < iters; it++) {
        MPI_Startall(h->ndirs, h->req); /* the receives first: the phases post and send (halo-phases.md) */
        halo_phase(h, PH_POST);
        MPI_Startall(h->ndirs, h->req + h->ndirs);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            for (int p = 0; p < parts(h, h->scount[d]); p++) MPI_Pready(p, h->req[h->ndirs + i]);
        }
        halo_phase(h, PH_SEND);
        mb_compute(); /* --overlap (overlap.c) */
        MPI_Waitall(2 * h->ndirs, h->req, MPI_STATUSES_IGNORE);
        halo_phase(h, PH_WAIT);
    }
}

static void part_free(struct halo *h)
{
    for (int i = 0; i < 2 * h->ndirs; i++) MPI_Request_free(&h->req[i]);
}
#endif

const struct halo_method halo_partitioned_methods[] = {
    {"partitioned", part_setup, part_run, part_free, NULL},
    {0},
};
