/* A reusable team of threads: start barrier, per-thread result, end barrier,
 * optional hwloc pinning, placement report, per-thread CPU time, and the
 * placement of a communication thread relative to a compute thread.  See
 * team.h. */
#include "team.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PLACE = 48 }; /* bytes of one thread's cpuset / last-cpu text */

struct worker {
    struct mb_team *team;
    int tid;
    pthread_t thread;
};

struct mb_team {
    int n, quit, bind, first, nbound;
    pthread_barrier_t start, end;
    struct worker *w;
    double *result;
    /* the current job, written by thread 0 before the start barrier */
    mb_team_fn fn;
    void *arg;
    long iters;
    int nactive;
    hwloc_topology_t topo;
    int have_topo;
    hwloc_bitmap_t procset; /* the process's binding when the team was made */
    int *pinned;            /* per thread: 1 if pinning worked */
    char (*cpuset)[PLACE], (*last)[PLACE];
    double *cpu, wall;      /* per thread CPU seconds in jobs; thread 0's wall seconds of jobs */
    int *ran;               /* per thread: jobs run since the last reset */
    const int *want;        /* mb_team_pin's request, during its job */
};

double mb_team_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double mb_team_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pins the calling thread to one PU of core (first + tid) of the process's set. */
static void pin(struct mb_team *t, int tid)
{
    if (!t->have_topo) return;
    int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(t->topo, t->procset, HWLOC_OBJ_CORE);
    hwloc_obj_t obj = NULL;
    if (ncores > 0)
        obj = hwloc_get_obj_inside_cpuset_by_type(t->topo, t->procset, HWLOC_OBJ_CORE, (unsigned)((t->first + tid) % ncores));
    else {
        int npu = hwloc_get_nbobjs_inside_cpuset_by_type(t->topo, t->procset, HWLOC_OBJ_PU);
        if (npu > 0)
            obj = hwloc_get_obj_inside_cpuset_by_type(t->topo, t->procset, HWLOC_OBJ_PU, (unsigned)((t->first + tid) % npu));
    }
    if (!obj) return;
    hwloc_bitmap_t set = hwloc_bitmap_dup(obj->cpuset);
    hwloc_bitmap_and(set, set, t->procset);
    hwloc_bitmap_singlify(set);
    t->pinned[tid] = hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD) == 0;
    hwloc_bitmap_free(set);
}

static void where(struct mb_team *t, int tid)
{
    snprintf(t->cpuset[tid], PLACE, "unknown");
    snprintf(t->last[tid], PLACE, "unknown");
    if (!t->have_topo) return;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD) == 0)
        hwloc_bitmap_list_snprintf(t->cpuset[tid], PLACE, set);
    if (hwloc_get_last_cpu_location(t->topo, set, HWLOC_CPUBIND_THREAD) == 0)
        hwloc_bitmap_list_snprintf(t->last[tid], PLACE, set);
    hwloc_bitmap_free(set);
}

static void job(struct mb_team *t, int tid)
{
    if (tid >= t->nactive) {
        t->result[tid] = -1.0;
        return;
    }
    double c0 = mb_team_thread_cpu();
    t->result[tid] = t->fn(t->arg, tid, t->iters);
    t->cpu[tid] += mb_team_thread_cpu() - c0;
    t->ran[tid]++;
}

static void *loop(void *p)
{
    struct worker *w = p;
    struct mb_team *t = w->team;
    if (t->bind) pin(t, w->tid);
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->quit) break;
        job(t, w->tid);
        pthread_barrier_wait(&t->end);
    }
    return NULL;
}

struct mb_team *mb_team_create(int nthreads, int bind, int first)
{
    struct mb_team *t = calloc(1, sizeof *t);
    t->n = nthreads < 1 ? 1 : nthreads;
    t->bind = bind;
    t->first = first;
    t->w = calloc((size_t)t->n, sizeof *t->w);
    t->result = calloc((size_t)t->n, sizeof *t->result);
    t->pinned = calloc((size_t)t->n, sizeof *t->pinned);
    t->cpuset = calloc((size_t)t->n, sizeof *t->cpuset);
    t->last = calloc((size_t)t->n, sizeof *t->last);
    t->cpu = calloc((size_t)t->n, sizeof *t->cpu);
    t->ran = calloc((size_t)t->n, sizeof *t->ran);
    if (hwloc_topology_init(&t->topo) == 0) {
        hwloc_topology_set_io_types_filter(t->topo, HWLOC_TYPE_FILTER_KEEP_NONE);
        t->have_topo = hwloc_topology_load(t->topo) == 0;
        if (!t->have_topo) hwloc_topology_destroy(t->topo);
    }
    t->procset = hwloc_bitmap_alloc();
    if (t->have_topo && hwloc_get_cpubind(t->topo, t->procset, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(t->procset, hwloc_topology_get_topology_cpuset(t->topo));
    pthread_barrier_init(&t->start, NULL, (unsigned)t->n);
    pthread_barrier_init(&t->end, NULL, (unsigned)t->n);
    if (bind) pin(t, 0);
    for (int i = 1; i < t->n; i++) {
        t->w[i] = (struct worker){t, i, 0};
        if (pthread_create(&t->w[i].thread, NULL, loop, &t->w[i])) {
            /* the barriers count n threads: shrink is impossible, so give up */
            fprintf(stderr, "mpimb: cannot start thread %d of %d\n", i, t->n);
            exit(1);
        }
    }
    return t;
}

int mb_team_size(const struct mb_team *t) { return t->n; }

double mb_team_run(struct mb_team *t, int nactive, mb_team_fn fn, void *arg, long iters)
{
    t->fn = fn;
    t->arg = arg;
    t->iters = iters;
    t->nactive = nactive > t->n ? t->n : nactive;
    double w0 = mb_team_now();
    if (t->nactive <= 1) { /* the caller alone: the other threads stay asleep */
        job(t, 0);
        t->wall += mb_team_now() - w0;
        return t->result[0] > 0 ? t->result[0] : 0;
    }
    pthread_barrier_wait(&t->start);
    job(t, 0);
    pthread_barrier_wait(&t->end);
    t->wall += mb_team_now() - w0;
    double m = 0;
    for (int i = 0; i < t->nactive; i++)
        if (t->result[i] > m) m = t->result[i];
    return m;
}

static double where_job(void *arg, int tid, long iters)
{
    (void)iters;
    where(arg, tid);
    return -1;
}

int mb_team_bound(const struct mb_team *t)
{
    if (!t->bind) return 0;
    for (int i = 0; i < t->n; i++)
        if (!t->pinned[i]) return 0;
    return 1;
}

void mb_team_placement(struct mb_team *t, char *buf, size_t len)
{
    mb_team_run(t, t->n, where_job, t, 0);
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < t->n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s{\"thread\": %d, \"cpuset\": \"%s\", \"last_cpu\": \"%s\"}",
                              i ? ", " : "", i, t->cpuset[i], t->last[i]);
    if (k < len) snprintf(buf + k, len - k, "]");
}

const char *mb_team_cpuset(const struct mb_team *t, int i) { return t->cpuset[i]; }

void mb_team_cpu_reset(struct mb_team *t)
{
    t->wall = 0;
    for (int i = 0; i < t->n; i++) {
        t->cpu[i] = 0;
        t->ran[i] = 0;
    }
}

double mb_team_cpu(const struct mb_team *t, double *cpu)
{
    for (int i = 0; i < t->n; i++) cpu[i] = t->ran[i] ? t->cpu[i] : -1;
    return t->wall;
}

/* Thread tid: its own binding, as mb_team_pin asked, then read back. */
static double pin_job(void *arg, int tid, long iters)
{
    (void)iters;
    struct mb_team *t = arg;
    if (!t->have_topo) return -1;
    if (t->want[tid] >= 0) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        hwloc_bitmap_only(set, (unsigned)t->want[tid]);
        t->pinned[tid] = hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD) == 0;
        hwloc_bitmap_free(set);
    } else if (t->bind) {
        pin(t, tid);
    } else {
        hwloc_set_cpubind(t->topo, t->procset, HWLOC_CPUBIND_THREAD);
    }
    where(t, tid);
    return -1;
}

int mb_team_pin(struct mb_team *t, const int *pu)
{
    t->want = pu;
    mb_team_run(t, t->n, pin_job, t, 0);
    t->want = NULL;
    int ok = t->have_topo;
    for (int i = 0; i < t->n; i++)
        if (pu[i] >= 0 && !t->pinned[i]) ok = 0;
    return ok;
}

struct hwloc_topology *mb_team_topology(const struct mb_team *t) { return t->have_topo ? t->topo : NULL; }

const char *const mb_place_names[MB_NPLACE] = {"same-pu", "smt-sibling", "other-core", "unbound"};

static int first_pu(hwloc_topology_t topo, hwloc_obj_t core, unsigned k)
{
    hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, k);
    return pu ? (int)pu->os_index : -1;
}

int mb_place_pus(struct hwloc_topology *topo, int slot, int nslots, enum mb_place place, int pu[2], char *why,
                 size_t len)
{
    pu[0] = pu[1] = -1;
    if (place == MB_PLACE_UNBOUND) return 0;
    /* no core objects (some virtual machines): every PU is its own core */
    hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    int ncores = hwloc_get_nbobjs_by_type(topo, type), per = place == MB_PLACE_OTHER_CORE ? 2 : 1;
    if (slot < 0 || slot >= nslots || ncores < per * nslots) {
        snprintf(why, len, "%s needs %d core%s (%d per compute thread, %d compute thread%s on this node), the node has %d",
                 mb_place_names[place], per * nslots, per * nslots > 1 ? "s" : "", per, nslots, nslots > 1 ? "s" : "",
                 ncores);
        return -1;
    }
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, (unsigned)slot);
    int compute = first_pu(topo, core, 0), partner = compute;
    if (place == MB_PLACE_SMT_SIBLING && (partner = first_pu(topo, core, 1)) < 0) {
        snprintf(why, len, "no SMT: core %u has one PU (P#%d)", core->logical_index, compute);
        return -1;
    }
    if (place == MB_PLACE_OTHER_CORE)
        partner = first_pu(topo, hwloc_get_obj_by_type(topo, type, (unsigned)(nslots + slot)), 0);
    pu[0] = compute;
    pu[1] = partner;
    return 0;
}
const char *mb_team_last_cpu(const struct mb_team *t, int i) { return t->last[i]; }

void mb_team_destroy(struct mb_team *t)
{
    if (!t) return;
    t->quit = 1;
    pthread_barrier_wait(&t->start);
    for (int i = 1; i < t->n; i++) pthread_join(t->w[i].thread, NULL);
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->end);
    hwloc_bitmap_free(t->procset);
    if (t->have_topo) hwloc_topology_destroy(t->topo);
    free(t->w);
    free(t->result);
    free(t->pinned);
    free(t->cpuset);
    free(t->last);
    free(t->cpu);
    free(t->ran);
    free(t);
}
