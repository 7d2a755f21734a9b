/* team.h — a team of T threads for multi-threaded benchmarks (threads).
 *
 * Thread 0 is the caller (the main thread); threads 1..T-1 are pthreads that
 * wait, blocked, between jobs.  mb_team_run() starts fn on threads
 * 0..nactive-1 at once (a barrier), waits for all of them (a barrier) and
 * returns the maximum of the values fn returned (each thread's own elapsed
 * seconds; a negative value is not counted).  With nactive <= 1 the caller
 * runs fn alone and the other threads are not woken.  The barriers order every
 * write made before a job with every read made in it, and the reverse, so
 * per-thread state needs no other synchronisation.
 *
 * With bind, thread t is pinned (hwloc) to one core: core (first + t) modulo
 * the cores of the process's binding.  mb_team_placement() writes where each
 * thread is bound and last ran, as JSON.
 *
 * CPU time: every job run through mb_team_run() adds each thread's
 * CLOCK_THREAD_CPUTIME_ID time spent in fn, and thread 0's wall time from
 * start to end of the job, to counters that mb_team_cpu() reads and
 * mb_team_cpu_reset() clears. */
#ifndef MB_TEAM_H
#define MB_TEAM_H

#include <stddef.h>

struct mb_team;

/* Returns the thread's elapsed seconds (mb_team_now()), or < 0 to be ignored. */
typedef double (*mb_team_fn)(void *arg, int tid, long iters);

/* NULL (errno set) if a thread cannot be started. */
struct mb_team *mb_team_create(int nthreads, int bind, int first);
int mb_team_size(const struct mb_team *team);
double mb_team_run(struct mb_team *team, int nactive, mb_team_fn fn, void *arg, long iters);
/* [{"thread": 0, "cpuset": "0", "last_cpu": "0"}, ...]; "bound" tells whether --bind succeeded. */
void mb_team_placement(struct mb_team *team, char *buf, size_t len);
int mb_team_bound(const struct mb_team *team); /* 1 when every thread was pinned */
/* Thread i's cpuset and last CPU as mb_team_placement() last found them. */
const char *mb_team_cpuset(const struct mb_team *team, int i);
const char *mb_team_last_cpu(const struct mb_team *team, int i);
void mb_team_destroy(struct mb_team *team);

double mb_team_now(void); /* monotonic seconds; callable from any thread without MPI */
double mb_team_thread_cpu(void); /* CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID) */

void mb_team_cpu_reset(struct mb_team *team);
/* Wall seconds of the jobs since the last reset; cpu[i] (team size entries)
 * = thread i's CPU seconds in them, or -1 if it ran none. */
double mb_team_cpu(const struct mb_team *team, double *cpu);

/* Pins thread i to the PU with OS index pu[i] (-1: back to where it was
 * when the team was made, or to its --bind core), then reads every thread's
 * binding back (mb_team_cpuset).  Returns 1 if every pin asked for held. */
int mb_team_pin(struct mb_team *team, const int *pu);

/* Where a communication thread goes relative to its compute thread. */
enum mb_place { MB_PLACE_SAME_PU, MB_PLACE_SMT_SIBLING, MB_PLACE_OTHER_CORE, MB_PLACE_UNBOUND, MB_NPLACE };
extern const char *const mb_place_names[MB_NPLACE]; /* "same-pu", "smt-sibling", "other-core", "unbound" */
struct hwloc_topology;
/* A pure function of the topology: the PUs (OS indices) of compute thread
 * number slot of nslots on the node (pu[0]) and of its communication
 * partner (pu[1]).  Compute thread s takes the first PU of core s; the
 * partner takes that PU (same-pu), the core's next PU (smt-sibling) or the
 * first PU of core nslots + s (other-core: a core no compute thread has);
 * unbound gives -1 for both.  Returns 0, or -1 with the reason in why. */
int mb_place_pus(struct hwloc_topology *topo, int slot, int nslots, enum mb_place place, int pu[2], char *why,
                 size_t len);
/* The team's topology of this machine (NULL if hwloc could not load it). */
struct hwloc_topology *mb_team_topology(const struct mb_team *team);

#endif
