/* Known library defects that crash instead of returning an error: such a
 * combination is reported n/a with the reason instead of being run.  Each
 * entry names the library versions it applies to and the upstream report. */
#include "rma.h"

#include <string.h>

const char *rma_quirk(const struct rma *r)
{
#ifdef MB_SIMULATED
    /* seen with SimGrid 3.32: the first lock_all + MPI_Win_flush_local epoch never ends */
    if (!strcmp(r->sync->name, "lockall-flush-local"))
        return "lock_all + MPI_Win_flush_local hangs under SimGrid SMPI (3.32)";
#endif
#if defined(OPEN_MPI) && OPEN_MPI && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    /* osc/rdma over btl/vader: a 64-bit MPI_Compare_and_swap on an
     * MPI_Win_allocate window segfaults in the target's progress engine
     * (open-mpi/ompi#11349, #7967; osu_cas_latency crashes the same way). */
    if (!strcmp(r->op->name, "compare_and_swap") && !strcmp(r->w.wf->name, "allocate"))
        return "Open MPI 4.x osc/rdma segfaults in MPI_Compare_and_swap on MPI_Win_allocate windows "
               "(open-mpi/ompi#11349)";
#endif
    (void)r;
    return NULL;
}
