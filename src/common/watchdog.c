/* The --timeout watchdog: a thread that makes no MPI calls.  If a test is
 * still armed when its deadline passes, it names the test and the rank and
 * ends the process; the MPI launcher then tears the job down instead of
 * letting a hung test eat a batch allocation.  Rows already written are
 * flushed, and the metadata on disk still says complete: false. */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int running, armed, stop;
    struct timespec deadline;
    double seconds;
    char desc[200];
    const char *prog;
    int rank;
} W = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *watch(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&W.mu);
    while (!W.stop) {
        if (!W.armed) {
            pthread_cond_wait(&W.cv, &W.mu);
            continue;
        }
        if (pthread_cond_timedwait(&W.cv, &W.mu, &W.deadline) == ETIMEDOUT && W.armed) {
            fprintf(stderr, "%s: test '%s' timed out after %g s on rank %d; aborting the job\n", W.prog, W.desc,
                    W.seconds, W.rank);
            fflush(NULL);
            _exit(1);
        }
    }
    pthread_mutex_unlock(&W.mu);
    return NULL;
}

void mb_watchdog_start(const char *prog, int rank)
{
#ifdef MB_SIMULATED
    /* SMPI: clock_gettime returns simulated time while the thread would wait
     * in real time, and all ranks share one process; SimGrid itself reports
     * a deadlock, so simulated builds run without the watchdog thread. */
    (void)prog;
    (void)rank;
    return;
#endif
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&W.cv, &a);
    pthread_condattr_destroy(&a);
    W.prog = prog;
    W.rank = rank;
    W.running = pthread_create(&W.thread, NULL, watch, NULL) == 0;
}

void mb_watchdog_arm(double seconds, const char *desc)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&W.mu);
    double end = (double)now.tv_sec + now.tv_nsec * 1e-9 + seconds;
    W.deadline.tv_sec = (time_t)end;
    W.deadline.tv_nsec = (long)((end - (double)(time_t)end) * 1e9);
    W.seconds = seconds;
    snprintf(W.desc, sizeof W.desc, "%s", desc);
    W.armed = 1;
    pthread_cond_signal(&W.cv);
    pthread_mutex_unlock(&W.mu);
}

void mb_watchdog_disarm(void)
{
    pthread_mutex_lock(&W.mu);
    W.armed = 0;
    pthread_cond_signal(&W.cv);
    pthread_mutex_unlock(&W.mu);
}

void mb_watchdog_stop(void)
{
    if (!W.running) return;
    pthread_mutex_lock(&W.mu);
    W.stop = 1;
    pthread_cond_signal(&W.cv);
    pthread_mutex_unlock(&W.mu);
    pthread_join(W.thread, NULL);
    W.running = 0;
}
