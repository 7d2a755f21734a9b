/* A busy machine (docs/measurement.md, "A busy machine"): how much of the
 * PUs this run's ranks use did other processes take while it measured.
 * Sampled twice, at mb_init once the bindings are known and at mb_finish:
 * each node's leader reads /proc/stat's jiffies of its node's PUs, every
 * rank its own CPU time and involuntary context switches (getrusage: the
 * whole process, its threads and the MPI library's too).  What the PUs were
 * busy with beyond the ranks' own CPU time was someone else's:
 *
 *   others' share = (busy jiffies - ranks' CPU time) / (busy + idle jiffies)
 *
 * the denominator being the PUs' elapsed time as the kernel counted it (a
 * PU going offline does not count); a run shorter than MB_LOAD_MIN_S has
 * no share.  Steal time is busy: the hypervisor gave the PU to someone
 * else.  The run is busy when the busiest node's share passes
 * MB_BUSY_THRESHOLD; the JSON's "busy" and "load" say so. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MB_SIMULATED
#include <hwloc.h>
#endif

/* Others took more than this share of the ranks' PUs: a quiet run here
 * measures 0-3 %, a process spinning on one of 2 PUs about 50 %
 * (docs/measurement.md, "A busy machine"). */
#define MB_BUSY_THRESHOLD 0.10

/* /proc/stat counts in clock ticks (1/100 s here): each PU's busy count is
 * off by up to a tick at each end, so a share needs at least this many
 * seconds between the samples to be within 4 % (2 ticks in 50). */
#define MB_LOAD_MIN_S 0.5
#define MB_STR_(x) #x
#define MB_STR(x) MB_STR_(x)

enum { NOT_SAMPLED, STARTED, MEASURED, UNAVAILABLE };

struct sample {
    double busy, total; /* jiffies of the node's PUs (its leader; total < 0: not read) */
    double cpu, nivcsw; /* this process's CPU seconds and involuntary context switches */
    double t;           /* seconds, monotonic */
};

static struct {
    int state;
    char why[200]; /* UNAVAILABLE: why */
    struct sample s0;
    int err;  /* the leader's: errno of reading /proc/stat, or -1: its PUs are not known, -2: none found */
    int npus; /* the leader's PUs found in /proc/stat */
    /* rank 0, once MEASURED */
    double share, switches_per_s, seconds;
    int pus, host_rank;
#ifndef MB_SIMULATED
    hwloc_bitmap_t pu_set; /* the leader's node's PUs */
#endif
} L;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#ifndef MB_SIMULATED
/* Node leader: the busy and total jiffies of L.pu_set from /proc/stat
 * (user nice system idle iowait irq softirq steal; guest time is in user). */
static int read_stat(double *busy, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return errno ? errno : EIO;
    char line[512];
    unsigned long long v[8];
    unsigned cpu;
    int n = 0;
    *busy = *total = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9') continue;
        if (sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7]) != 9 ||
            !hwloc_bitmap_isset(L.pu_set, cpu))
            continue;
        double b = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
        *busy += b;
        *total += b + (double)(v[3] + v[4]);
        n++;
    }
    fclose(f);
    L.npus = n;
    return n ? 0 : -2;
}
#endif

static void sample(struct mb_run *run, struct sample *s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    s->cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    s->nivcsw = (double)ru.ru_nivcsw;
    s->t = now();
    s->busy = 0;
    s->total = -1;
#ifndef MB_SIMULATED
    if (run->nodes.local_rank == 0 && !L.err) L.err = read_stat(&s->busy, &s->total);
#else
    (void)run;
#endif
}

void mb_load_start(struct mb_run *run)
{
#ifdef MB_SIMULATED
    (void)run;
    L.state = UNAVAILABLE;
    snprintf(L.why, sizeof L.why, "unavailable: simulated machine (SMPI), no real PUs to share");
#else
    char list[256];
    mb_meta_host_cpus(run, list, sizeof list);
    L.pu_set = hwloc_bitmap_alloc();
    if (!list[0] || hwloc_bitmap_list_sscanf(L.pu_set, list)) L.err = -1;
    L.state = STARTED;
    sample(run, &L.s0);
#endif
}

/* Collective over world, at mb_finish: the second sample, reduced. */
void mb_load_end(struct mb_run *run)
{
    if (L.state != STARTED) return;
    struct sample s1;
    sample(run, &s1);
    double own = s1.cpu - L.s0.cpu, node_own = 0, sw = s1.nivcsw - L.s0.nivcsw, sw_sum = 0;
    MPI_Reduce(&own, &node_own, 1, MPI_DOUBLE, MPI_SUM, 0, run->nodes.comm);
    MPI_Reduce(&sw, &sw_sum, 1, MPI_DOUBLE, MPI_SUM, 0, run->world);
    if (run->nodes.local_rank == 0) {
        /* per node: share (< 0: none), PUs, the reason it has none, its leader's world rank */
        double mine[4] = {-1, L.npus, L.err, run->rank}, *all = NULL;
        double busy = s1.busy - L.s0.busy, total = s1.total - L.s0.total;
        double tick = (double)sysconf(_SC_CLK_TCK);
        if (!L.err && total >= MB_LOAD_MIN_S * tick * L.npus) {
            double x = (busy - node_own * tick) / total;
            mine[0] = x < 0 ? 0 : x > 1 ? 1 : x;
        } else if (!L.err) {
            mine[2] = -3; /* too short for the ticks */
        }
        if (run->rank == 0) all = malloc((size_t)run->nnodes * sizeof mine);
        MPI_Gather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, run->nodes.leaders);
        if (run->rank == 0) {
            int worst = -1, failed = -1;
            for (int i = 0; i < run->nnodes; i++) {
                if (all[4 * i] < 0 && failed < 0) failed = i;
                if (all[4 * i] >= 0 && (worst < 0 || all[4 * i] > all[4 * worst])) worst = i;
            }
            if (failed >= 0) { /* one node not measured: the run's answer is not known */
                int e = (int)all[4 * failed + 2];
                char what[120];
                if (e > 0)
                    snprintf(what, sizeof what, "/proc/stat: %s", strerror(e));
                else
                    snprintf(what, sizeof what, "%s",
                             e == -1   ? "the PUs its ranks use are not known (hwloc)"
                             : e == -2 ? "/proc/stat lists none of the PUs its ranks use"
                                       : "under " MB_STR(MB_LOAD_MIN_S) " s between the samples, too short for "
                                         "/proc/stat's clock ticks");
                L.state = UNAVAILABLE;
                snprintf(L.why, sizeof L.why, "unavailable: %s on %s", what, mb_meta_host((int)all[4 * failed + 3]));
            } else {
                L.state = MEASURED;
                /* the JSON's 4 decimals, once: the verdict, the JSON and the BUSY line then read one number
                 * (the line's percentage from the full double could round the other way) */
                L.share = round(mb_fault_load(all[4 * worst]) * 1e4) / 1e4;
                L.pus = (int)all[4 * worst + 1];
                L.host_rank = (int)all[4 * worst + 3];
            }
            free(all);
        }
    }
    if (run->rank == 0) {
        L.seconds = s1.t - L.s0.t;
        L.switches_per_s = L.seconds > 0 ? sw_sum / L.seconds : 0;
    }
#ifndef MB_SIMULATED
    hwloc_bitmap_free(L.pu_set);
    L.pu_set = NULL;
#endif
}

int mb_load_busy(void) { return L.state == MEASURED ? L.share > MB_BUSY_THRESHOLD : -1; }

void mb_load_json(FILE *f)
{
    int busy = mb_load_busy();
    fprintf(f, "  \"busy\": %s,\n  \"load\": {", busy < 0 ? "null" : busy ? "true" : "false");
    if (L.state == MEASURED) {
        fprintf(f, "\"others_share\": %.4f, \"pus\": %d, \"host\": ", L.share, L.pus);
        mb_json_str(f, mb_meta_host(L.host_rank));
        fprintf(f, ", \"seconds\": %.3f, \"threshold\": %.2f, \"involuntary_switches_per_s\": %.1f, "
                   "\"source\": \"/proc/stat\"},\n",
                L.seconds, MB_BUSY_THRESHOLD, L.switches_per_s);
        return;
    }
    fputs("\"source\": ", f);
    mb_json_str(f, L.state == UNAVAILABLE ? L.why
                   : L.state == STARTED   ? "unavailable: sampled when the run ends"
                                          : "unavailable: not sampled");
    fputs("},\n", f);
}

void mb_load_print(FILE *f)
{
    if (mb_load_busy() != 1) return;
    fprintf(f,
            "BUSY: others took %.0f %% of the %d PU(s) this run's ranks use on %s while it measured (more than %.0f "
            "%%): these figures are not this machine's alone\n",
            100 * L.share, L.pus, mb_meta_host(L.host_rank), 100 * MB_BUSY_THRESHOLD);
}
