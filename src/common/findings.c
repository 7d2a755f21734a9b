/* A run's findings are judged once, by the analysis package (mpimb-report
 * findings), for stdout, tables and reports alike: after MPI_Finalize rank 0
 * runs it on the CSV just written, so stdout ends with the same sentences
 * `mpimb-report report` shows.  Where the package is not installed, stdout
 * ends with the one command that gives them. */
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* MPIMB_REPORT (a path, or "none"; scripts/simulate sets it: a simulated
 * program is SimGrid's smpimain, and nothing lies beside that), else beside
 * the program: installed
 * (bin/mpimb-report), the source tree's root (.venv) or its build/LIB/bin,
 * else PATH.  0 found, 1 not found, -1 not wanted. */
static int locate(char *out, size_t len)
{
    const char *env = getenv("MPIMB_REPORT");
    if (env && *env) {
        if (!strcmp(env, "none")) return -1;
        snprintf(out, len, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        static const char *const beside[] = {"mpimb-report", ".venv/bin/mpimb-report", "../../../.venv/bin/mpimb-report"};
        for (size_t i = 0; i < sizeof beside / sizeof *beside; i++)
            if ((size_t)snprintf(out, len, "%s/%s", exe, beside[i]) < len && access(out, X_OK) == 0) return 0;
    }
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t l = strcspn(p, ":");
        if (l && (size_t)snprintf(out, len, "%.*s/mpimb-report", (int)l, p) < len && access(out, X_OK) == 0) return 0;
        p += l + (p[l] == ':');
    }
    return 1;
}

void mb_findings_after(const char *prog, const char *csv_path)
{
    char cmd[PATH_MAX];
    int where = locate(cmd, sizeof cmd);
    if (where < 0) return;
    fflush(NULL);
#ifdef MB_SIMULATED
    /* the findings describe a model, not a machine: say which (scripts/simulate names it) */
    const char *pname = getenv("MPIMB_PLATFORM"), *pfile = getenv("MPIMB_PLATFORM_FILE");
    printf("\nSimulated (SimGrid SMPI): these findings rest on the platform model %s (%s), not on a measured "
           "machine.\n", pname && *pname ? pname : "(unnamed)", pfile && *pfile ? pfile : "platform file not named");
    fflush(stdout);
#endif
    if (where > 0) {
        printf("\nFindings: mpimb-report findings %s (the analysis package is not installed here: make venv, "
               "or make install)\n", csv_path);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execl(cmd, cmd, "findings", csv_path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "%s: warning: no findings: '%s findings %s' failed (exit %d)\n", prog, cmd, csv_path,
                pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
