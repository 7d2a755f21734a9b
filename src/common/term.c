/* SIGTERM (what Slurm sends at the time limit, and mpiexec forwards): rank 0
 * leaves metadata that says the run was cut short, then the process ends
 * as the signal demands.  Only async-signal-safe calls happen in the
 * handler: the JSON is rendered beforehand, after every finished test, and
 * the handler just writes it and renames it into place.  Rows are already
 * on disk (each is flushed when its test ends). */
#include "internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *pending;     /* the JSON to leave behind, rendered in advance */
static size_t pending_len;
static char tmp_path[4096], final_path[4096];

static void on_term(int sig)
{
    if (pending && tmp_path[0]) {
        int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd >= 0) {
            ssize_t off = 0, w;
            while ((size_t)off < pending_len && (w = write(fd, pending + off, pending_len - (size_t)off)) > 0) off += w;
            close(fd);
            rename(tmp_path, final_path);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void mb_term_install(struct mb_run *run)
{
    if (run->rank == 0 && run->json_path) {
        snprintf(final_path, sizeof final_path, "%s", run->json_path);
        snprintf(tmp_path, sizeof tmp_path, "%s.term", run->json_path);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    mb_term_update(run);
}

/* Rank 0, after every test: what the file should say if SIGTERM came now. */
void mb_term_update(struct mb_run *run)
{
    if (run->rank != 0 || !run->json_path) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    mb_meta_render(f, run, 0, "terminated by SIGTERM");
    fclose(f);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old); /* never swap the buffer under the handler */
    char *prev = pending;
    pending = buf;
    pending_len = len;
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(prev);
}

void mb_term_release(void)
{
    signal(SIGTERM, SIG_DFL);
    free(pending);
    pending = NULL;
}
