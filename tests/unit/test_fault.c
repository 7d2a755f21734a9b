/* MPIMB_FAULT, the one fault injection (fault.c): its grammar, which rows
 * each kind matches, and the delay's and drift's spins, alone and inside the
 * timing loop (measure.c: a delayed repetition is at least FRACTION longer, a
 * drifted one n x SECONDS, an undelayed one untouched). */
#include "check.h"
#include "internal.h"
#include "solo.h"

#include <string.h>

static struct mb_row row(const char *test, const char *method, const char *comm)
{
    struct mb_row r;
    mb_row_init(&r, test, method);
    snprintf(r.comm, sizeof r.comm, "%s", comm);
    return r;
}

/* a bad value: one line that names the bad fault and the form it should have */
static int bad(const char *spec, const char *form)
{
    const char *e = mb_fault_parse(spec);
    return e && !strchr(e, '\n') && strstr(e, "MPIMB_FAULT: ") == e && strstr(e, form) != NULL;
}

/* a self-timed kernel: 1 ms per iteration, at once */
static double synthetic(void *state, long iters)
{
    (void)state;
    return 1e-3 * (double)iters;
}

/* the median time per iteration the timing loop gives a row, under the faults set */
static double measured(const char *method)
{
    struct mb_run run;
    solo_run(&run);
    run.opts = (struct mb_opts){.reps = 6, .max_reps = 6, .rel_ci = 0.01, .time_budget = 100, .timeout = 300,
                                .sync = MB_SYNC_BARRIER};
    struct mb_kernel k = {.comm = MPI_COMM_WORLD, .run_timed = synthetic};
    struct mb_row r;
    mb_row_init(&r, "halo", method);
    mb_measure(&run, &k, &r);
    return r.reps == 6 ? r.t.median : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct mb_run run0, run1;
    memset(&run0, 0, sizeof run0);
    memset(&run1, 0, sizeof run1);
    run1.rank = 1;
    struct mb_row halo_is = row("halo", "irecv-isend", "world"), halo_is_dup = row("halo", "irecv-isend", "dup"),
                  halo_s = row("halo", "irecv-send", "world"), bcast = row("bcast", "library", "");

    /* nothing set: no fault of any kind */
    CHECK(mb_fault_parse(NULL) == NULL && mb_fault_parse("") == NULL);
    CHECK(!mb_fault_here(&run0, &halo_is) && mb_fault_delay(&halo_is) == 0 && mb_fault_row_delay() == 0);
    CHECK(mb_fault_drift(&halo_is) == 0 && mb_fault_drift_step(0) == 0);
    CHECK(mb_fault_unmatched() == NULL);

    /* verify, short form and long form: TEST[/METHOD[/COMM]][@RANK] */
    CHECK(mb_fault_parse("halo") == NULL);
    CHECK(mb_fault_here(&run0, &halo_is) && mb_fault_here(&run1, &halo_s) && !mb_fault_here(&run0, &bcast));
    CHECK(mb_fault_parse("halo/irecv-isend@1") == NULL);
    CHECK(mb_fault_unmatched() && !strcmp(mb_fault_unmatched(), "halo/irecv-isend@1"));
    CHECK(!mb_fault_here(&run0, &halo_is) && mb_fault_here(&run1, &halo_is) && !mb_fault_here(&run1, &halo_s));
    CHECK(mb_fault_unmatched() == NULL); /* matched, even on a rank it does not fault */
    CHECK(mb_fault_parse("verify:halo/irecv-isend/dup") == NULL);
    CHECK(!mb_fault_here(&run0, &halo_is) && mb_fault_here(&run0, &halo_is_dup));
    CHECK(mb_fault_parse("verify:bcast@0") == NULL && mb_fault_here(&run0, &bcast) && !mb_fault_here(&run1, &bcast));
    CHECK(mb_fault_delay(&bcast) == 0); /* a verify fault delays nothing */

    /* delay:FRACTION/TEST[/METHOD[/COMM]] */
    CHECK(mb_fault_parse("delay:0.05/halo/irecv-send") == NULL);
    CHECK(mb_fault_delay(&halo_s) == 0.05 && mb_fault_delay(&halo_is) == 0 && !mb_fault_here(&run0, &halo_s));
    CHECK(mb_fault_parse("delay:0.1/halo/irecv-isend/dup") == NULL);
    CHECK(mb_fault_unmatched() && !strcmp(mb_fault_unmatched(), "delay:0.1/halo/irecv-isend/dup"));
    CHECK(mb_fault_delay(&halo_is) == 0 && mb_fault_delay(&halo_is_dup) == 0.1 && mb_fault_unmatched() == NULL);

    /* drift:SECONDS/TEST[/METHOD[/COMM]]: step n adds n x SECONDS, counted across tests, afresh per parse */
    CHECK(mb_fault_parse("drift:1e-3/halo/irecv-send,drift:2e-3/bcast") == NULL);
    CHECK(mb_fault_unmatched() && !strcmp(mb_fault_unmatched(), "drift:1e-3/halo/irecv-send"));
    CHECK(mb_fault_drift(&halo_s) == 1e-3 && mb_fault_drift(&halo_is) == 0 && mb_fault_delay(&halo_s) == 0);
    CHECK(mb_fault_unmatched() && !strcmp(mb_fault_unmatched(), "drift:2e-3/bcast"));
    CHECK(mb_fault_drift(&bcast) == 2e-3 && mb_fault_unmatched() == NULL && !mb_fault_here(&run0, &bcast));
    CHECK(mb_fault_drift_step(1e-3) == 1e-3 && mb_fault_drift_step(2e-3) == 4e-3 && mb_fault_drift_step(0) == 0);
    CHECK(mb_fault_parse("drift:1e-3/halo") == NULL && mb_fault_drift_step(1e-3) == 1e-3);

    /* clock:OFFSET[:DRIFT] and row-delay:SECONDS */
    double off = -1, drift = -1;
    CHECK(mb_fault_parse("clock:0.001:1e-5") == NULL);
    mb_fault_clock(&off, &drift);
    CHECK(off == 0.001 && drift == 1e-5 && mb_fault_unmatched() == NULL && !mb_fault_here(&run0, &halo_is));
    CHECK(mb_fault_parse("clock:-2") == NULL);
    mb_fault_clock(&off, &drift);
    CHECK(off == -2 && drift == 0);
    CHECK(mb_fault_parse("row-delay:0.3") == NULL && mb_fault_row_delay() == 0.3);
    /* load:SHARE replaces the measured share; without it the measured one stands */
    CHECK(mb_fault_parse("load:0.31549") == NULL && mb_fault_load(0.5) == 0.31549);
    CHECK(mb_fault_parse("row-delay:1") == NULL && mb_fault_load(0.5) == 0.5);

    /* several, separated by ';' or ','; each parse starts afresh */
    CHECK(mb_fault_parse("row-delay:2;clock:0.5,halo/irecv-send@0;delay:1/bcast") == NULL);
    mb_fault_clock(&off, &drift);
    CHECK(mb_fault_row_delay() == 2 && off == 0.5 && mb_fault_delay(&bcast) == 1);
    CHECK(mb_fault_here(&run0, &halo_s) && !mb_fault_here(&run1, &halo_s));
    CHECK(mb_fault_parse("halo@1") == NULL);
    mb_fault_clock(&off, &drift);
    CHECK(mb_fault_row_delay() == 0 && off == 0 && mb_fault_delay(&bcast) == 0 && !mb_fault_here(&run0, &halo_s));

    /* bad values: one line naming the form; nothing of a bad value stays set */
    const char *V = "verify:TEST[/METHOD[/COMM]][@RANK]", *D = "delay:FRACTION/TEST", *C = "clock:OFFSET[:DRIFT]",
               *R = "row-delay:SECONDS", *T = "drift:SECONDS/TEST", *K = "a fault: verify:";
    CHECK(bad("@1", V) && bad("halo/", V) && bad("halo@x", V) && bad("halo@-1", V) && bad("halo@1/irecv", V));
    CHECK(bad("halo//dup", V) && bad("halo/a/b/c", V) && bad("verify:", V) && bad("halo@", V));
    CHECK(bad("halo;", V) && bad(";halo", V) && bad("halo,,bcast", V)); /* empty faults */
    CHECK(bad("delay:0.05", D) && bad("delay:x/halo", D) && bad("delay:0/halo", D) && bad("delay:-0.1/halo", D));
    CHECK(bad("delay:11/halo", D) && bad("delay:nan/halo", D) && bad("delay:0.05/", D) && bad("delay:/halo", D));
    CHECK(bad("drift:1e-3", T) && bad("drift:0/halo", T) && bad("drift:2/halo", T) && bad("drift:-1e-3/halo", T));
    CHECK(bad("drift:inf/halo", T) && bad("drift:1e-3/", T) && bad("drift:/halo", T) && bad("drift:x/halo", T));
    CHECK(bad("clock:soon", C) && bad("clock:", C) && bad("clock:1:", C) && bad("clock:1:2:3", C) && bad("clock:inf", C));
    CHECK(bad("row-delay:x", R) && bad("row-delay:-1", R) && bad("row-delay:", R) && bad("row-delay:1e9", R));
    CHECK(bad("load:x", "load:SHARE with 0 <= SHARE <= 1") && bad("load:1.5", "load:SHARE") && bad("load:-0.1", "load:SHARE"));
    CHECK(bad("slow:1", K) && bad("Verify:halo", K));
    CHECK(bad("halo;clock:soon", C) && !mb_fault_here(&run0, &halo_is)); /* the good one before it is gone too */
    CHECK(bad("a;b;c;d;e;f;g;h;i", "at most 8")); /* a fixed table */
    CHECK(bad("halo/a-method-name-far-too-long-for-any-row-of-the-suite-to-have", V));

    /* the delay's spin: at least as long as asked, inside the timed time */
    double t = mb_busy(0.01);
    CHECK(t >= 0.01 && t < 1);
    CHECK(mb_busy(0) >= 0);
    /* ... in the timing loop: only the named test's repetitions, at least 50 % longer (spun for real) */
    CHECK(mb_fault_parse("delay:0.5/halo/slow") == NULL);
    CHECK(measured("fast") == 1e-3);
    CHECK(measured("slow") >= 1.5e-3);
    CHECK(mb_fault_unmatched() == NULL);
    /* ... and a drift: repetition n of the named test n ms longer (6 repetitions: 1..6 ms, median 3.5 ms) */
    CHECK(mb_fault_parse("drift:1e-3/halo/slow") == NULL);
    CHECK(measured("fast") == 1e-3);
    CHECK(measured("slow") >= 4.5e-3);
    CHECK(mb_fault_unmatched() == NULL);
    MPI_Finalize();
    return CHECK_DONE();
}
