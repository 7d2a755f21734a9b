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
 * thread is bound and last ran, as JSON. */
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

#endif
