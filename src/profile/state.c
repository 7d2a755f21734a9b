/* The profile's life: the settings (environment), the clock, start after
 * MPI_Init and the end before MPI_Finalize.  Names and families of the
 * wrapped calls come from the table (calls.h). */
#include "internal.h"
#include "prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mbp_state mbp;

const char *const mbp_call_names[MBP_NCALLS] = {
#define MBP_NAME(name, fam, buf, params, acct) "MPI_" #name,
    MBP_CALLS(MBP_NAME)
#undef MBP_NAME
};

const enum mbp_family mbp_call_family[MBP_NCALLS] = {
#define MBP_FAMILY(name, fam, buf, params, acct) MBP_FAM_##fam,
    MBP_CALLS(MBP_FAMILY)
#undef MBP_FAMILY
};

const char *const mbp_family_names[MBP_NFAMILIES] = {
    [MBP_FAM_P2P] = "p2p",          [MBP_FAM_P2PNB] = "p2p-nonblocking",
    [MBP_FAM_PERS] = "persistent",  [MBP_FAM_PROBE] = "probe",
    [MBP_FAM_WAIT] = "completion",  [MBP_FAM_COLL] = "collective",
    [MBP_FAM_COLLNB] = "collective-nonblocking", [MBP_FAM_RMA] = "rma",
    [MBP_FAM_RMASYNC] = "rma-sync", [MBP_FAM_RMAWIN] = "rma-window",
};

/* ------------------------------------------------ clock */

/* The invariant TSC (constant and non-stop: one rate on every core, in
 * every power state) costs ~10 ns a read here against ~25 ns for
 * clock_gettime; it is converted with the rate measured against
 * CLOCK_MONOTONIC over the whole run, so seconds are exact to ~1e-6. */
int mbp_use_tsc;
static uint64_t tick0;

uint64_t mbp_ticks_slow(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int invariant_tsc(void)
{
#if defined(MB_SIMULATED)
    return 0; /* SMPI: clock_gettime is smpicc's, simulated time (the trace's clock must be MPI_Wtime's) */
#elif defined(__x86_64__) || defined(__i386__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int ok = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    if (f) fclose(f);
    return ok;
#else
    return 0;
#endif
}

static double mono_s(void) { return 1e-9 * (double)mbp_ticks_slow(); }

/* A tick and another clock's reading taken together: the tightest of a few
 * brackets (ticks before and after the clock's read).  A single pair of reads
 * can be split by a preemption, common on a loaded node, and that shifts
 * every time converted through the pair by the preemption's length. */
uint64_t mbp_ticks_with(double (*clock)(void), double *at)
{
    uint64_t width = UINT64_MAX, mid = 0;
    for (int i = 0; i < 16; i++) {
        uint64_t a = mbp_ticks();
        double c = clock();
        uint64_t b = mbp_ticks();
        if (b >= a && b - a < width) width = b - a, mid = a + (b - a) / 2, *at = c;
    }
    return mid;
}

static double mono0;

void mbp_clock_start(void)
{
    mbp_use_tsc = invariant_tsc();
    tick0 = mbp_ticks_with(mono_s, &mono0);
}

double mbp_clock_stop(void)
{
    double m;
    uint64_t t = mbp_ticks_with(mono_s, &m);
    if (!mbp_use_tsc || t <= tick0) return 1e-9;
    return (m - mono0) / (double)(t - tick0);
}

#ifdef MB_SIMULATED
const char *mbp_clock_name(void) { return "simulated (SMPI clock_gettime, as MPI_Wtime)"; }
#else
const char *mbp_clock_name(void) { return mbp_use_tsc ? "tsc" : "clock_gettime(CLOCK_MONOTONIC)"; }
#endif

/* ------------------------------------------------ start and end */

static struct mb_run *run;
static struct timespec wall0;

void mbp_usage_error(const char *msg)
{
    if (mbp.rank == 0) fprintf(stderr, "mpimb-prof: %s\n", msg);
    fflush(stderr);
    PMPI_Barrier(MPI_COMM_WORLD); /* nobody exits before rank 0 has said why */
    PMPI_Finalize();
    exit(2);
}

static int flag(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v || !strcmp(v, "0")) return 0;
    if (!strcmp(v, "1")) return 1;
    char msg[300];
    snprintf(msg, sizeof msg, "%s must be 0 or 1, got '%.200s'", name, v);
    mbp_usage_error(msg);
}

void mbp_start_profile(int required, int provided, double init_seconds)
{
    if (mbp.on || run) return; /* MPI_Init from C after Fortran, or twice */
    clock_gettime(CLOCK_MONOTONIC, &wall0);
    PMPI_Comm_rank(MPI_COMM_WORLD, &mbp.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &mbp.size);
    mbp.sync = flag("MPIMB_PROF_SYNC");
    mbp.check = flag("MPIMB_PROF_CHECK");
    mbp.mt = provided == MPI_THREAD_MULTIPLE;
    PMPI_Comm_dup(MPI_COMM_WORLD, &mbp.world);
    for (int k = 0; k < MBP_NMAT; k++) {
        mbp.msgs[k] = calloc((size_t)mbp.size, sizeof *mbp.msgs[k]);
        mbp.bytes[k] = calloc((size_t)mbp.size, sizeof *mbp.bytes[k]);
    }
    mbp_translate_init();
    mbp_check_init();
    mbp_clock_start();
    mbp_trace_init(); /* exits 2 on a bad trace setting */
    const char *out = getenv("MPIMB_PROF_OUT");
    if (!out || strcmp(out, "none")) { /* none: no profile files (a trace alone) */
        locale_t was = mb_locale_c(); /* the application's locale (setlocale) is not the files' */
        run = mbp_open_run(required, provided, init_seconds); /* exits 2 on a bad MPIMB_PROF_OUT or label */
        mb_locale_back(was);
    }
    mbp.on = 1;
}

void mbp_finish_profile(void)
{
    if (!mbp.on) return;
    mbp.on = 0; /* from here on the library's own MPI calls pass straight through */
    mbp_trace_finish(run ? run->run_id : NULL);
    double spt = mbp_clock_stop();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double wall = (double)(t.tv_sec - wall0.tv_sec) + 1e-9 * (double)(t.tv_nsec - wall0.tv_nsec);
    locale_t was = mb_locale_c();
    if (run) mbp_write_run(run, spt, wall);
    mb_locale_back(was);
    run = NULL;
    for (int k = 0; k < MBP_NMAT; k++) {
        free(mbp.msgs[k]);
        free(mbp.bytes[k]);
    }
    PMPI_Comm_free(&mbp.world);
}
