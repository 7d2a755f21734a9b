/* A run of one process for the C unit tests that drive the timing loop
 * (MPI started alone): no outputs, every option as the test sets it. */
#ifndef SOLO_H
#define SOLO_H
#include "internal.h"

#include <string.h>

static void solo_run(struct mb_run *run)
{
    static const struct mb_program prog = {.name = "unit"};
    memset(run, 0, sizeof *run);
    run->prog = &prog;
    run->world = MPI_COMM_WORLD;
    run->nprocs = 1;
    for (int d = 0; d < MB_ORDER_DEPTH; d++) run->order_path[d] = -1;
}
#endif
