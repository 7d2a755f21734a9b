/* Per-thread CPU time of every threads test.  Around each mb_measure the
 * rank's team counts, per thread, the CLOCK_THREAD_CPUTIME_ID time spent in
 * the test's kernel, and thread 0's wall time of the same calls (every call
 * the harness makes: verification, warm-up, calibration, timed repetitions).
 * The row's cpu_pct is rank 0's sum over its threads over that wall time;
 * every rank's per-thread figures go to the JSON as thread_cpu. */
#include "threads.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void thr_append(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *s = realloc(*s, *len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(*s + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

int thr_measure(struct thr *c, struct mb_team *team, const struct mb_kernel *k, struct mb_row *row)
{
    struct mb_run *run = c->run;
    mb_team_cpu_reset(team);
    int failed = mb_measure(run, k, row);
    int L = c->cpu_slots, n = mb_team_size(team);
    double *cpu = malloc((size_t)L * sizeof *cpu), *all = NULL;
    for (int i = 0; i < L; i++) cpu[i] = -1;
    double wall = mb_team_cpu(team, cpu), busy = 0;
    for (int i = 0; i < n; i++) {
        if (cpu[i] >= 0) busy += cpu[i];
        cpu[i] = cpu[i] >= 0 && wall > 0 ? 100 * cpu[i] / wall : -1;
    }
    if (run->rank == 0) all = malloc((size_t)L * (size_t)run->nprocs * sizeof *all);
    MPI_Gather(cpu, L, MPI_DOUBLE, all, L, MPI_DOUBLE, 0, run->world);
    if (run->rank == 0) {
        c->last_wall = wall;
        row->cpu_pct = wall > 0 ? 100 * busy / wall : -1;
        thr_append(&c->cpu_json, &c->cpu_len,
                   "%s\n    {\"test\": \"%s\", \"method\": \"%s\", \"bytes\": %lld, \"params\": \"%s\", \"wall_s\": %.6g, "
                   "\"ranks\": [",
                   c->cpu_len ? "," : "", row->test, row->method, row->bytes, row->params, wall);
        for (int r = 0; r < run->nprocs; r++) {
            const double *p = all + (size_t)r * (size_t)L;
            int last = L - 1;
            while (last >= 0 && p[last] < 0) last--;
            thr_append(&c->cpu_json, &c->cpu_len, "%s[", r ? ", " : "");
            for (int i = 0; i <= last; i++)
                if (p[i] >= 0)
                    thr_append(&c->cpu_json, &c->cpu_len, "%s%.1f", i ? ", " : "", p[i]);
                else
                    thr_append(&c->cpu_json, &c->cpu_len, "%snull", i ? ", " : "");
            thr_append(&c->cpu_json, &c->cpu_len, "]");
        }
        thr_append(&c->cpu_json, &c->cpu_len, "]}");
    }
    free(cpu);
    free(all);
    return failed;
}

void thr_cpu_meta(struct thr *c)
{
    if (c->run->rank != 0) return;
    char *js = NULL;
    size_t n = 0;
    thr_append(&js, &n,
               "{\"definition\": \"per test, per rank, per thread: CPU time (CLOCK_THREAD_CPUTIME_ID) in the test's "
               "kernel over the rank's wall time of the same calls, percent; the CSV's cpu_pct is rank 0's threads "
               "summed\", \"rows\": [%s]}",
               c->cpu_json ? c->cpu_json : "");
    mb_meta_add(c->run, "thread_cpu", js);
    free(js);
}
