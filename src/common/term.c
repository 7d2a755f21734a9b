/* SIGTERM (what Slurm sends at the time limit, and mpiexec forwards): rank 0
 * leaves metadata that says the run was cut short, then the process ends
 * as the signal demands.  Only async-signal-safe calls happen in the
 * handler: the JSON is rendered beforehand, after every finished test, and
 * the handler just writes it and renames it into place.  Rows are already
 * on disk (each is flushed when its test ends).
 *
 * The row and the metadata counting it change as one step, guarded by a
 * small atomic state rather than by blocking the signal: a process-directed
 * signal goes to any thread that does not block it (the MPI library's, the
 * watchdog), so a handler on another thread could otherwise fire between
 * the two -- a CI run once found 27 rows under metadata saying 26.
 *
 * The same step puts the row's --raw samples on disk after the row, and
 * the metadata counting the row after both (written, then renamed into
 * place), so that a job killed at any instant, even by SIGKILL, leaves
 * metadata that counts only rows whose CSV line and raw samples are on
 * disk -- every one of them, or all but the one being written.
 *
 * Before all that, the outputs are written aside (NAME.tmp, MB_ASIDE) and
 * land on their names -- renames and unlinks only, so the handler can land
 * them too -- when the run starts measuring: a usage error found after
 * MPI_Init (the job's size, the library's features) leaves an earlier
 * run's files of those names as they were, and from the landing on the
 * files are what they always were at start (header, header, metadata
 * counting no row).  The landing takes the earlier metadata away first, so
 * no instant has metadata counting rows the CSV beside it lacks. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { IDLE, UPDATING, LEAVING };
static atomic_int state = IDLE;      /* lock-free, so safe in the handler */
static volatile sig_atomic_t deferred; /* a SIGTERM came while UPDATING */

static char *pending; /* the JSON to leave behind, rendered in advance */
static size_t pending_len;
static char tmp_path[4096], final_path[4096], row_tmp_path[4096];

/* rank 0: the outputs aside and their names (the metadata last), and the
 * rounds file beside the CSV (an earlier run's would sit beside rows it
 * does not belong to: this run writes its own only when it measures a group) */
enum { RAW, CSV, JSON, NOUT };
static char aside[NOUT][4096], named[NOUT][4096], rounds_path[4096], made[4096];
static volatile sig_atomic_t waiting; /* written aside, not landed yet */

static void land(void)
{
    if (!waiting) return;
    waiting = 0;
    unlink(named[JSON]);
    unlink(rounds_path);
    for (int i = 0; i < NOUT; i++)
        if (aside[i][0]) rename(aside[i], named[i]);
}

/* Writes len bytes to tmp, then renames it to final.  tmp is made afresh,
 * never opened as found (a link there is not followed: outputs.c). */
static void put_file(const char *tmp, const char *final, const char *buf, size_t len)
{
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) return;
    ssize_t off = 0, w;
    while ((size_t)off < len && (w = write(fd, buf + off, len - (size_t)off)) > 0) off += w;
    if (close(fd) == 0 && (size_t)off == len)
        rename(tmp, final);
    else
        unlink(tmp);
}

static void pause_for(time_t s, long ns)
{
    struct timespec ts = {s, ns};
    nanosleep(&ts, NULL);
}

static void mask(int how)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(how, &term, NULL);
}

/* Write the pending JSON and end the process by SIGTERM; the caller owns
 * the state (LEAVING).  The other ranks give rank 0 a second first: the
 * moment one of them dies, MPICH's launcher SIGKILLs the rest, and rank 0
 * was killed mid-write in 7 of 50 runs here without it (tests/test_faults.py). */
static void leave(void)
{
    if (!tmp_path[0]) pause_for(1, 0);
    land(); /* cut short before it measured: its files say so */
    if (pending && tmp_path[0]) put_file(tmp_path, final_path, pending, pending_len);
    signal(SIGTERM, SIG_DFL);
    mask(SIG_UNBLOCK); /* in the handler SIGTERM is blocked until it returns; it never returns */
    raise(SIGTERM);
    for (;;) pause_for(0, 1000000); /* not reached: the default action ends the process */
}

static int claim(int to)
{
    int idle = IDLE;
    return atomic_compare_exchange_strong(&state, &idle, to);
}

static void on_term(int sig)
{
    (void)sig;
    deferred = 1; /* before the claim: whoever ends an update sees it */
    if (claim(LEAVING)) leave();
}

/* The main thread's side: take the state, or wait for the end if a
 * handler is already leaving. */
static void begin_update(void)
{
    while (!claim(UPDATING)) pause_for(0, 1000000);
}

static void end_update(void)
{
    atomic_store(&state, IDLE);
    if (deferred && claim(LEAVING)) leave();
}

/* Self-test hook (tests/test_faults.py): MPIMB_FAULT=row-delay:S (fault.c)
 * holds the moment between a row reaching the CSV and the metadata counting
 * it open for S seconds, so a test can send SIGTERM inside it. */
static void hold_window(void)
{
    double d = mb_fault_row_delay();
    if (d > 0) pause_for((time_t)d, (long)((d - (double)(time_t)d) * 1e9));
}

void mb_term_install(struct mb_run *run)
{
    if (run->rank == 0 && run->json_path) {
        snprintf(final_path, sizeof final_path, "%s", run->json_path);
        snprintf(tmp_path, sizeof tmp_path, "%s" MB_TERM_ASIDE, run->json_path);
        snprintf(row_tmp_path, sizeof row_tmp_path, "%s" MB_ASIDE, run->json_path);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    mb_term_update(run, NULL);
}

/* Rank 0, after every test: write its row (if any) and what the metadata
 * should say if SIGTERM came now, as one step for the handler. */
void mb_term_update(struct mb_run *run, const struct mb_row *row)
{
    if (run->rank != 0) return;
    if (row) mb_outputs_land(); /* a row is never written aside */
    char *buf = NULL, *now = NULL;
    size_t len = 0, now_len = 0;
    FILE *f = run->json_path ? open_memstream(&buf, &len) : NULL;
    if (f) {
        mb_meta_render(f, run, 0, "terminated by SIGTERM");
        fclose(f);
    }
    f = row && run->json_path ? open_memstream(&now, &now_len) : NULL;
    if (f) { /* what the metadata on disk says while the run goes on */
        mb_meta_render(f, run, 0, NULL);
        fclose(f);
    }
    begin_update();
    /* A row that could not be written whole (a full disk) is none of the
     * CSV, and the rows after it are not written either (the raw file's
     * row numbers would no longer meet theirs): the metadata on disk, and
     * the one a SIGTERM leaves, stay those counting the rows before it. */
    if (row && !run->lost && mb_csv_row(run, row)) run->lost = strerror(errno);
    if (row && !run->lost) {
        hold_window();
        if (mb_raw_flush(run, row)) run->lost = strerror(errno); /* the row's samples, after the row */
        if (now && row_tmp_path[0]) put_file(row_tmp_path, run->json_path, now, now_len);
    }
    free(now);
    char *prev = NULL;
    if (buf && (!row || !run->lost)) {
        prev = pending;
        pending = buf;
        pending_len = len;
    }
    end_update();
    free(prev);
    if (buf && row && run->lost) free(buf);
}

/* Back to the default action, once the final metadata is written. */
void mb_term_release(void)
{
    signal(SIGTERM, SIG_DFL);
    begin_update(); /* a handler already running finishes first (and ends us) */
    free(pending);
    pending = NULL;
    atomic_store(&state, IDLE);
}

void mb_outputs_aside(const struct mb_run *run, const char *made_dir)
{
    snprintf(made, sizeof made, "%s", made_dir ? made_dir : "");
    const char *path[NOUT] = {run->raw ? run->opts.raw : NULL, run->csv_path, run->json_path};
    for (int i = 0; i < NOUT; i++) {
        char *a = path[i] ? mb_aside_path(path[i]) : NULL;
        snprintf(aside[i], sizeof aside[i], "%s", a ? a : "");
        snprintf(named[i], sizeof named[i], "%s", path[i] ? path[i] : "");
        free(a);
    }
    char *r = mb_beside(run->csv_path, MB_ROUNDS_SUFFIX);
    snprintf(rounds_path, sizeof rounds_path, "%s", r);
    free(r);
    waiting = 1;
}

void mb_outputs_land(void)
{
    if (!waiting) return;
    begin_update(); /* a SIGTERM now waits, or has landed them itself */
    land();
    end_update();
}

void mb_outputs_remove(void)
{
    for (int i = 0; i < NOUT; i++)
        if (aside[i][0]) unlink(waiting ? aside[i] : named[i]);
    if (!waiting && aside[CSV][0]) unlink(rounds_path);
    if (made[0]) rmdir(made); /* results/ made for them, if nothing else is in it */
    waiting = 0;
    memset(aside, 0, sizeof aside);
}
