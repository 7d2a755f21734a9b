/* The suite's own MPI_Pcontrol levels: what the harness's --trace (tracing.c)
 * says to libmpimb-prof.so (src/profile/trace.h describes each level's
 * arguments).  Here, below both, so that the harness includes nothing of the
 * profiler. */
#ifndef MB_PCONTROL_H
#define MB_PCONTROL_H

#define MBP_PCONTROL_RUN 2701
#define MBP_PCONTROL_TEST 2702
#define MBP_PCONTROL_DISCARD 2703
#define MBP_PCONTROL_FINISH 2704
#define MBP_PCONTROL_KEY 0x6d70696d62747263L /* "mpimbtrc": passed as a long */
#define MBP_ERR_LEN 512

#endif
