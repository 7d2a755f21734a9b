/* The stdout tables of the two studies (rank 0), under --stat: overlap by
 * placement of the communication thread (methods x placements, time and %
 * change against serial, as the SMT study showed it), and master-worker
 * (versions side by side against the number of workers, as the parallel
 * bzip2 study showed it). */
#include "threads.h"

#include <stdlib.h>
#include <string.h>

static const struct mb_row *find(const struct mb_run *run, const char *test, const char *method, const char *key,
                                 const char *value)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (!strcmp(r->test, test) && !strcmp(r->method, method) && mb_param_is(r->params, key, value)) return r;
    }
    return NULL;
}

static double tval(const struct thr *c, const struct mb_row *r)
{
    return r && !r->na && strcmp(r->verified, "no") ? mb_stat_value(&c->run->opts, &r->t) : 0;
}

void thr_report_placement(const struct thr *c)
{
    const struct mb_run *run = c->run;
    int np = 0, pl[MB_NPLACE];
    for (int p = 0; p < MB_NPLACE; p++)
        if (c->placement >> p & 1) pl[np++] = p;
    if (!np) return;
    int ncols = 1 + 2 * np;
    const char **head = calloc((size_t)ncols, sizeof *head), **groups = calloc((size_t)ncols, sizeof *groups);
    head[0] = "method";
    for (int i = 0; i < np; i++) {
        head[1 + 2 * i] = "us";
        head[2 + 2 * i] = "vs serial";
        groups[1 + 2 * i] = mb_place_names[pl[i]];
    }
    struct mb_table t;
    mb_table_new(&t, ncols, head);
    for (int m = 0; m < PL_NMETH; m++) {
        char **row = mb_table_row(&t);
        row[0] = strdup(thr_pl_names[m]);
        for (int i = 0; i < np; i++) {
            const char *where = mb_place_names[pl[i]];
            const struct mb_row *r = find(run, "overlap", thr_pl_names[m], "placement", where);
            double v = tval(c, r), s = tval(c, find(run, "overlap", "serial", "placement", where));
            row[1 + 2 * i] = mb_cell(r, v * 1e6);
            row[2 + 2 * i] = m && v > 0 && s > 0 ? thr_fmt("%+.0f%%", 100 * (v / s - 1)) : strdup("");
        }
    }
    char title[320];
    snprintf(title, sizeof title,
             "overlap by placement of the communication thread (%s us per iteration, %zu B exchange + computation; "
             "%% change against serial under the same placement; spmd: two processes per side, half the work each)",
             mb_stat_name(run->opts.stat), c->long_size);
    mb_table_done(stdout, &t, title, groups);
    for (int i = 0; i < np; i++) {
        const int p = pl[i];
        if (c->place[p].why[0])
            printf("  %s: n/a: %s\n", mb_place_names[p], c->place[p].why);
        else
            printf("  %s: rank 0 bound compute/comm %s (every rank: placement in the JSON)\n", mb_place_names[p],
                   c->place[p].bound);
    }
    free(head);
    free(groups);
}

void thr_report_master_worker(const struct thr *c)
{
    const struct mb_run *run = c->run;
    int any = 0;
    for (int i = 0; i < run->nrows && !any; i++) any = thr_test_is(run->rows[i].test, T_MASTER_WORKER);
    if (!any) return;
    enum { PER = 5 };
    const int ncols = 1 + PER * MW_NMETH;
    const char *head[1 + PER * MW_NMETH] = {"workers"}, *groups[1 + PER * MW_NMETH] = {NULL};
    static const char *const sub[PER] = {"blocks/s", "MB/s", "speedup", "eff %", "cpu %"};
    for (int m = 0; m < MW_NMETH; m++) {
        groups[1 + PER * m] = thr_mw_names[m];
        for (int k = 0; k < PER; k++) head[1 + PER * m + k] = sub[k];
    }
    struct mb_table t;
    mb_table_new(&t, ncols, head);
    for (int i = 0; i < c->nworkers; i++) {
        int W = c->workers[i];
        char w[16];
        snprintf(w, sizeof w, "%d", W);
        char **row = mb_table_row(&t);
        row[0] = strdup(w);
        for (int m = 0; m < MW_NMETH; m++) {
            const struct mb_row *r = find(run, thr_test_names[T_MASTER_WORKER], thr_mw_names[m], "workers", w);
            double v = tval(c, r), one = tval(c, find(run, thr_test_names[T_MASTER_WORKER], thr_mw_names[m], "workers", "1"));
            char **cell = row + 1 + PER * m;
            cell[0] = mb_cell(r, v > 0 ? (double)c->blocks / v : 0);
            cell[1] = mb_cell(r, v > 0 ? (double)c->blocks * (double)c->block_size / v / 1e6 : 0);
            cell[2] = v > 0 && one > 0 ? thr_fmt("%.2f", one / v) : strdup("-");
            cell[3] = v > 0 && one > 0 ? thr_fmt("%.0f", 100 * one / v / W) : strdup("-");
            cell[4] = v > 0 && r->cpu_pct >= 0 ? thr_fmt("%.0f", r->cpu_pct) : strdup("-");
        }
    }
    char title[320];
    snprintf(title, sizeof title,
             "master-worker: %ld blocks of %zu B, %s (%s; speedup and efficiency against 1 worker of the same version; "
             "cpu: the master's threads, %% of one core)",
             c->blocks, c->block_size, c->spin ? "spin" : "bzip2", mb_stat_name(run->opts.stat));
    mb_table_done(stdout, &t, title, groups);
}
