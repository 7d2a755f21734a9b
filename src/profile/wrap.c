/* The C wrappers: MPI_<name> for every entry of calls.h, plus MPI_Init,
 * MPI_Init_thread and MPI_Finalize, which start and end the profile. */
#include "prof.h"

#include <stdarg.h>
#include <time.h>

/* C types of the parameter kinds of calls.h */
#define MBP_CT_CBUF(n) const void *n
#define MBP_CT_BUF(n) void *n
#define MBP_CT_INT(n) int n
#define MBP_CT_INTP(n) int *n
#define MBP_CT_INTA(n) int n[]
#define MBP_CT_CINTA(n) const int n[]
#define MBP_CT_CAINTA(n) const MPI_Aint n[]
#define MBP_CT_AINT(n) MPI_Aint n
#define MBP_CT_DT(n) MPI_Datatype n
#define MBP_CT_CDTA(n) const MPI_Datatype n[]
#define MBP_CT_COMM(n) MPI_Comm n
#define MBP_CT_OP(n) MPI_Op n
#define MBP_CT_WIN(n) MPI_Win n
#define MBP_CT_WINP(n) MPI_Win *n
#define MBP_CT_REQP(n) MPI_Request *n
#define MBP_CT_REQA(n) MPI_Request n[]
#define MBP_CT_STAT(n) MPI_Status *n
#define MBP_CT_STATA(n) MPI_Status n[]
#define MBP_CT_MSGP(n) MPI_Message *n
#define MBP_CT_INFO(n) MPI_Info n
#define MBP_CT_GROUP(n) MPI_Group n
#define MBP_CDECL(kind, n) MBP_CT_##kind(n)
#define MBP_CARG(kind, n) n

/* requests and datatype arrays are C handles here */
#define MBP_FORTRAN 0
#define MBP_REQ1(p) (const void *)(p), 0
#define MBP_REQA(p) (const void *)(p), 0

#define MBP_C_WRAPPER(name, fam, buf, params, acct)                                                 \
    MBP_API int MPI_##name(MBP_MAP(MBP_CDECL, MBP_UNPAREN params))                                  \
    {                                                                                               \
        if (!mbp.on) return PMPI_##name(MBP_MAP(MBP_CARG, MBP_UNPAREN params));                     \
        int rc;                                                                                     \
        MBP_BODY(name, acct, rc = PMPI_##name(MBP_MAP(MBP_CARG, MBP_UNPAREN params)));              \
        return rc;                                                                                  \
    }
MBP_CALLS(MBP_C_WRAPPER)

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

MBP_API int MPI_Init(int *argc, char ***argv)
{
    double t = seconds();
    int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;
    t = seconds() - t;
    if (rc == MPI_SUCCESS) {
        PMPI_Query_thread(&provided);
        mbp_start_profile(MPI_THREAD_SINGLE, provided, t);
    }
    return rc;
}

MBP_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    double t = seconds();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    t = seconds() - t;
    if (rc == MPI_SUCCESS) mbp_start_profile(required, *provided, t);
    return rc;
}

MBP_API int MPI_Finalize(void)
{
    mbp_finish_profile();
    return PMPI_Finalize();
}

/* MPI_Pcontrol: 0 stops recording a trace, 1 starts it; the suite's own
 * levels carry its key, then their arguments (trace.h).  Passed on to the
 * library (but SMPI's). */
MBP_API int MPI_Pcontrol(const int level, ...)
{
    const char *a = NULL, *b = NULL;
    int *status = NULL, ours = level >= MBP_PCONTROL_RUN && level <= MBP_PCONTROL_FINISH;
    char *err = NULL;
    if (ours) {
        va_list ap;
        va_start(ap, level);
        ours = va_arg(ap, long) == MBP_PCONTROL_KEY; /* else an application's: nothing more is read */
        if (ours && (level == MBP_PCONTROL_RUN || level == MBP_PCONTROL_TEST)) a = va_arg(ap, const char *);
        if (ours && level == MBP_PCONTROL_RUN) b = va_arg(ap, const char *);
        if (ours && level == MBP_PCONTROL_FINISH) status = va_arg(ap, int *), err = va_arg(ap, char *);
        va_end(ap);
    }
    if (mbp.on && (ours || level < MBP_PCONTROL_RUN || level > MBP_PCONTROL_FINISH))
        mbp_trace_pcontrol(level, a, b, status, err);
#ifdef MB_SIMULATED
    return MPI_SUCCESS; /* SimGrid 3.32 aborts in PMPI_Pcontrol ("not yet implemented") */
#else
    return PMPI_Pcontrol(level);
#endif
}
