/* The placement study (the SMT study's experiment): the overlap exchange
 * with its computation, done
 *   serial       by one thread: exchange, then compute
 *   comm-thread  by a compute thread and a communication thread (MPI_Testall
 *                loop), as overlap's comm-thread
 *   spmd         by two processes per side, each with half the bytes and
 *                half the computation, serially (the same total work)
 * for every placement of --placement: the communication thread (spmd: the
 * second process) on the compute thread's PU, on its SMT sibling, on another
 * core, or left where the launcher put it (unbound).  Sides are ranks 0 and
 * N/2; spmd's second processes are ranks 1 and N/2 + 1.  The PUs come from
 * mb_place_pus (a pure function of the hwloc topology); the binding obtained
 * is read back and goes to the JSON (placement). */
#include "overlap.h"

#include <stdlib.h>
#include <string.h>

const char *const thr_pl_names[PL_NMETH] = {"serial", "comm-thread", "spmd"};
enum { SERIAL, THREAD, SPMD };

/* Who does what: side 0/1 for the pair's ranks, helper of side 0/1 for
 * spmd's second processes, -1 otherwise. */
struct who {
    int side, helper, half;
    int slot, nslots; /* this side's compute thread among the pair's on the node */
};

static struct who who_am_i(const struct mb_run *run)
{
    int half = run->nprocs / 2, r = run->rank;
    struct who w = {.side = r == 0 ? 0 : r == half ? 1 : -1, .helper = -1, .half = half};
    if (run->nprocs >= 4) w.helper = r == 1 ? 0 : r == half + 1 ? 1 : -1;
    int same = run->nodes.node_of[0] == run->nodes.node_of[half];
    int s = w.side >= 0 ? w.side : w.helper;
    w.nslots = same ? 2 : 1;
    w.slot = same && s == 1 ? 1 : 0;
    return w;
}

/* This rank's PUs for placement p (pu[0] its thread 0, pu[1] its thread 1),
 * or the reason it cannot be done, agreed by every rank (the first rank
 * that cannot tells why). */
static int plan(struct thr *c, const struct who *w, int p, int pu[2], char *why, size_t len)
{
    struct mb_run *run = c->run;
    int pus[2] = {-1, -1}, bad = 0;
    why[0] = 0;
    if (w->side >= 0 || w->helper >= 0) {
        struct hwloc_topology *topo = mb_team_topology(c->team);
        if (!topo) {
            snprintf(why, len, "hwloc could not load the topology");
            bad = 1;
        } else {
            bad = mb_place_pus(topo, w->slot, w->nslots, (enum mb_place)p, pus, why, len) != 0;
        }
    }
    pu[0] = w->helper >= 0 ? pus[1] : pus[0]; /* spmd's second process sits where the communication thread would */
    pu[1] = w->helper >= 0 ? -1 : pus[1];
    int mine = bad ? run->rank : run->nprocs, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, run->world);
    if (first == run->nprocs) return 0;
    MPI_Bcast(why, (int)len, MPI_CHAR, first, run->world);
    return -1;
}

/* Where every rank's threads 0 and 1 are bound now, as JSON, and rank 0's as
 * "compute/comm" for the stdout table. */
static void bound_meta(struct thr *c, const struct who *w, int p, char **js, size_t *jn)
{
    struct mb_run *run = c->run;
    enum { S = 48 };
    char mine[2][S], *all = NULL;
    for (int i = 0; i < 2; i++) snprintf(mine[i], S, "%s", mb_team_cpuset(c->team, i));
    if (run->rank == 0) all = malloc((size_t)run->nprocs * 2 * S);
    MPI_Gather(mine, 2 * S, MPI_CHAR, all, 2 * S, MPI_CHAR, 0, run->world);
    int role = w->side >= 0 ? 0 : w->helper >= 0 ? 1 : 2, *roles = NULL;
    if (run->rank == 0) roles = malloc((size_t)run->nprocs * sizeof *roles);
    MPI_Gather(&role, 1, MPI_INT, roles, 1, MPI_INT, 0, run->world);
    if (run->rank == 0) {
        snprintf(c->place[p].bound, sizeof c->place[p].bound, "%s/%s", all, all + S);
        thr_append(js, jn, "%s\"%s\": {\"possible\": true, \"ranks\": [", *jn > 1 ? ", " : "", mb_place_names[p]);
        int k = 0;
        for (int r = 0; r < run->nprocs; r++) {
            const char *t0 = all + (size_t)r * 2 * S, *t1 = t0 + S;
            if (roles[r] == 0)
                thr_append(js, jn, "%s{\"rank\": %d, \"compute\": \"%s\", \"comm\": \"%s\"}", k++ ? ", " : "", r, t0,
                           t1);
            else if (roles[r] == 1)
                thr_append(js, jn, "%s{\"rank\": %d, \"spmd_second\": \"%s\"}", k++ ? ", " : "", r, t0);
        }
        thr_append(js, jn, "]}");
    }
    free(all);
    free(roles);
}

/* The ov state of this rank for method m: its part, partner, bytes, work. */
static void part(struct ov *o, const struct ov *base, const struct who *w, int m)
{
    o->method = m == THREAD ? M_THREAD_TEST : M_SERIAL;
    o->role = -1;
    o->partner = -1;
    if (w->side >= 0) {
        o->role = w->side;
        o->partner = w->side ? 0 : w->half;
        o->bytes = m == SPMD ? base->bytes - base->bytes / 2 : base->bytes;
        o->work = m == SPMD ? base->work - base->work / 2 : base->work;
    } else if (w->helper >= 0 && m == SPMD) {
        o->role = w->helper;
        o->partner = w->helper ? 1 : w->half + 1;
        o->bytes = base->bytes / 2;
        o->work = base->work / 2;
    }
}

void thr_placement(struct thr *c, const struct ov *base)
{
    struct mb_run *run = c->run;
    struct who w = who_am_i(run);
    struct ov o = {.team = c->team, .comm = c->shared, .me = run->rank, .bytes = base->bytes};
    if (w.side >= 0 || w.helper >= 0) {
        o.sbuf = mb_alloc(base->bytes);
        o.rbuf = mb_alloc(base->bytes);
    }
    int n = mb_team_size(c->team), *pin = malloc((size_t)n * sizeof *pin);
    char *js = NULL;
    size_t jn = 0;
    thr_append(&js, &jn, "{");
    for (int p = 0; p < MB_NPLACE; p++) {
        if (!(c->placement >> p & 1)) continue;
        int pu[2];
        char why[200];
        int ok = run->nprocs >= 2 && plan(c, &w, p, pu, why, sizeof why) == 0;
        if (run->nprocs < 2) snprintf(why, sizeof why, "needs at least 2 ranks");
        if (!ok && run->rank == 0) {
            snprintf(c->place[p].why, sizeof c->place[p].why, "%s", why);
            thr_append(&js, &jn, "%s\"%s\": {\"possible\": false, \"why\": \"%s\"}", jn > 1 ? ", " : "",
                       mb_place_names[p], why);
        }
        for (int m = 0; m < PL_NMETH; m++) {
            struct mb_row row;
            mb_row_init(&row, "overlap", thr_pl_names[m]);
            snprintf(row.comm, sizeof row.comm, "world");
            row.bytes = (long long)base->bytes;
            row.threads = m == THREAD ? 2 : 1;
            mb_param_opt(run, &row, "bind");
            mb_param_opt(run, &row, "compute-us");
            mb_param(&row, "placement", "%s", mb_place_names[p]);
            row.sent_bytes = (double)base->bytes;
            if (ok) { /* spmd's second processes are pinned only for spmd: idle, they would poll on that PU */
                for (int i = 0; i < n; i++) pin[i] = i < 2 && (m == SPMD || w.helper < 0) ? pu[i] : -1;
                mb_team_pin(c->team, pin);
                if (m == SPMD) bound_meta(c, &w, p, &js, &jn);
            }
            mb_begin(run, &row);
            char lvl[160];
            if (!ok)
                mb_na(run, &row, "%s", why);
            else if (m == THREAD && thr_level_short(c, MPI_THREAD_SERIALIZED, lvl, sizeof lvl))
                mb_na(run, &row, "%s", lvl);
            else if (m == SPMD && run->nprocs < 4)
                mb_na(run, &row, "needs 4 ranks (two processes per side), job has %d", run->nprocs);
            else if (m == SPMD && (run->nodes.node_of[1] != run->nodes.node_of[0] ||
                                   run->nodes.node_of[w.half + 1] != run->nodes.node_of[w.half]))
                mb_na(run, &row, "spmd's second processes (ranks 1 and %d) must share a node with ranks 0 and %d",
                      w.half + 1, w.half);
            else {
                part(&o, base, &w, m);
                struct mb_kernel k = {.state = &o, .comm = run->world, .run_timed = thr_ov_timed,
                                      .fill = thr_ov_fill, .check = thr_ov_check, .idle = o.role < 0};
                thr_measure(c, c->team, &k, &row);
            }
            mb_end(run, &row);
        }
    }
    for (int i = 0; i < n; i++) pin[i] = -1; /* back to where the threads were */
    mb_team_pin(c->team, pin);
    thr_append(&js, &jn, "}");
    char *meta = NULL;
    size_t mn = 0;
    thr_append(&meta, &mn, "{\"compute_iterations\": %ld, \"bytes\": %zu, \"placements\": %s}", base->work,
               base->bytes, js);
    mb_meta_add(run, "placement", meta);
    free(meta);
    free(js);
    free(pin);
    free(o.sbuf);
    free(o.rbuf);
}
