/* Fortran wrappers, where the MPI library's Fortran bindings do not go
 * through the C MPI_* symbols (docs/profile.md, "Fortran"):
 *
 *  Open MPI 4.1: mpif.h, `use mpi` and `use mpi_f08` all call PMPI_* (C)
 *    directly, so the Fortran symbols themselves are wrapped — mpi_<name>_
 *    around pmpi_<name>_, and mpi_<name>_f08_ around pmpi_<name>_f08_ —
 *    for every call of the table, and MPI_Init/Init_thread/Finalize.
 *  MPICH 4.0: mpif.h and `use mpi` call the C MPI_* symbols (the C wrappers
 *    count them); mpi_f08 does too for calls with a choice buffer, but calls
 *    PMPI_* directly for the others (table flag N) and for Init/Finalize: those
 *    are wrapped as mpi_<name>_f08_ around MPICH's pmpir_<name>_f08_.
 *
 * gfortran's (and most compilers') lower-case, one-underscore names only.
 * Every argument arrives by reference; handles are converted (f2c) into the
 * C values the accounting reads, and passed on untouched.  The library's
 * entry points are weak references: a C program never loads them. */
#include "prof.h"

#include "lcnames.h" /* generated: MBP_LC_<name> is <name> in lower case */

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are read as int arrays");

#define MBP_FT_CBUF(n) void *n##_f
#define MBP_FT_BUF(n) void *n##_f
#define MBP_FT_INT(n) MPI_Fint *n##_f
#define MBP_FT_INTP(n) MPI_Fint *n##_f
#define MBP_FT_INTA(n) MPI_Fint *n##_f
#define MBP_FT_CINTA(n) MPI_Fint *n##_f
#define MBP_FT_CAINTA(n) MPI_Aint *n##_f
#define MBP_FT_AINT(n) MPI_Aint *n##_f
#define MBP_FT_DT(n) MPI_Fint *n##_f
#define MBP_FT_CDTA(n) MPI_Fint *n##_f
#define MBP_FT_COMM(n) MPI_Fint *n##_f
#define MBP_FT_OP(n) MPI_Fint *n##_f
#define MBP_FT_WIN(n) MPI_Fint *n##_f
#define MBP_FT_WINP(n) MPI_Fint *n##_f
#define MBP_FT_REQP(n) MPI_Fint *n##_f
#define MBP_FT_REQA(n) MPI_Fint *n##_f
#define MBP_FT_STAT(n) MPI_Fint *n##_f
#define MBP_FT_STATA(n) MPI_Fint *n##_f
#define MBP_FT_MSGP(n) MPI_Fint *n##_f
#define MBP_FT_INFO(n) MPI_Fint *n##_f
#define MBP_FT_GROUP(n) MPI_Fint *n##_f
#define MBP_FDECL(kind, n) MBP_FT_##kind(n)
#define MBP_FARG(kind, n) n##_f

/* the C values the accounting reads, under the parameter's own name */
#define MBP_FL_CBUF(n) const void *n = n##_f;
#define MBP_FL_BUF(n) const void *n = n##_f;
#define MBP_FL_INT(n) int n = (int)*n##_f;
#define MBP_FL_INTP(n)
#define MBP_FL_INTA(n)
#define MBP_FL_CINTA(n) const int *n = (const int *)n##_f;
#define MBP_FL_CAINTA(n)
#define MBP_FL_AINT(n)
#define MBP_FL_DT(n) MPI_Datatype n = PMPI_Type_f2c(*n##_f);
#define MBP_FL_CDTA(n) const MPI_Fint *n = n##_f;
#define MBP_FL_COMM(n) MPI_Comm n = PMPI_Comm_f2c(*n##_f);
#define MBP_FL_OP(n) MPI_Op n = PMPI_Op_f2c(*n##_f);
#define MBP_FL_WIN(n) MPI_Win n = PMPI_Win_f2c(*n##_f);
#define MBP_FL_WINP(n)
#define MBP_FL_REQP(n) const MPI_Fint *n = n##_f;
#define MBP_FL_REQA(n) const MPI_Fint *n = n##_f;
#define MBP_FL_STAT(n)
#define MBP_FL_STATA(n)
#define MBP_FL_MSGP(n)
#define MBP_FL_INFO(n)
#define MBP_FL_GROUP(n)
#define MBP_FLOCAL(kind, n) MBP_FL_##kind(n)

/* requests and datatype arrays are Fortran integers here */
#define MBP_FORTRAN 1
#define MBP_REQ1(p) (const void *)(p), 1
#define MBP_REQA(p) (const void *)(p), 1

#define MBP_SYM(pre, name, post) MBP_SYM_(pre, MBP_LC_##name, post)
#define MBP_SYM_(pre, lc, post) MBP_SYM__(pre, lc, post)
#define MBP_SYM__(pre, lc, post) pre##lc##post

#pragma GCC diagnostic ignored "-Wunused-variable" /* not every converted value is accounted */

#define MBP_F_WRAPPER(sym, lib, name, params, acct)                                                 \
    extern void lib(MBP_MAP(MBP_FDECL, MBP_UNPAREN params), MPI_Fint *ierr) __attribute__((weak));  \
    MBP_API void sym(MBP_MAP(MBP_FDECL, MBP_UNPAREN params), MPI_Fint *ierr);                       \
    void sym(MBP_MAP(MBP_FDECL, MBP_UNPAREN params), MPI_Fint *ierr)                                \
    {                                                                                               \
        if (!mbp.on) {                                                                              \
            lib(MBP_MAP(MBP_FARG, MBP_UNPAREN params), ierr);                                       \
            return;                                                                                 \
        }                                                                                           \
        MBP_SMAP(MBP_FLOCAL, MBP_UNPAREN params)                                                    \
        int rc;                                                                                     \
        MBP_BODY(name, acct, lib(MBP_MAP(MBP_FARG, MBP_UNPAREN params), ierr);                      \
                 rc = ierr ? (int)*ierr : MPI_SUCCESS);                                             \
        (void)rc; /* read by the persistent-request accounting only */                              \
    }

/* Start and end of the profile from Fortran (ierr may be absent in mpi_f08) */
#define MBP_F_LIFE(pre, lib, post)                                                                  \
    extern void lib(init, post)(MPI_Fint *ierr) __attribute__((weak));                              \
    extern void lib(init_thread, post)(MPI_Fint *, MPI_Fint *, MPI_Fint *) __attribute__((weak));   \
    extern void lib(finalize, post)(MPI_Fint *ierr) __attribute__((weak));                          \
    MBP_API void pre##init##post(MPI_Fint *ierr);                                                   \
    void pre##init##post(MPI_Fint *ierr)                                                            \
    {                                                                                               \
        uint64_t t = mbp_ticks_slow();                                                              \
        lib(init, post)(ierr);                                                                      \
        int provided = MPI_THREAD_SINGLE;                                                           \
        PMPI_Query_thread(&provided);                                                               \
        if (!ierr || *ierr == MPI_SUCCESS)                                                          \
            mbp_start_profile(MPI_THREAD_SINGLE, provided, (double)(mbp_ticks_slow() - t) * 1e-9);  \
    }                                                                                               \
    MBP_API void pre##init_thread##post(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);    \
    void pre##init_thread##post(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)             \
    {                                                                                               \
        uint64_t t = mbp_ticks_slow();                                                              \
        lib(init_thread, post)(required, provided, ierr);                                           \
        if (!ierr || *ierr == MPI_SUCCESS)                                                          \
            mbp_start_profile(*required, *provided, (double)(mbp_ticks_slow() - t) * 1e-9);         \
    }                                                                                               \
    MBP_API void pre##finalize##post(MPI_Fint *ierr);                                               \
    void pre##finalize##post(MPI_Fint *ierr)                                                        \
    {                                                                                               \
        mbp_finish_profile();                                                                       \
        lib(finalize, post)(ierr);                                                                  \
    }

#if defined(OPEN_MPI)
#define MBP_OMPI_F77(name, fam, buf, params, acct)                                                  \
    MBP_F_WRAPPER(MBP_SYM(mpi_, name, _), MBP_SYM(pmpi_, name, _), name, params, acct)
#define MBP_OMPI_F08(name, fam, buf, params, acct)                                                  \
    MBP_F_WRAPPER(MBP_SYM(mpi_, name, _f08_), MBP_SYM(pmpi_, name, _f08_), name, params, acct)
MBP_CALLS(MBP_OMPI_F77)
MBP_CALLS(MBP_OMPI_F08)
#define MBP_PMPI(what, post) pmpi_##what##post
MBP_F_LIFE(mpi_, MBP_PMPI, _)
MBP_F_LIFE(mpi_, MBP_PMPI, _f08_)

#elif defined(MPICH_VERSION)
#define MBP_MPICH_F08_B(name, params, acct)
#define MBP_MPICH_F08_N(name, params, acct)                                                         \
    MBP_F_WRAPPER(MBP_SYM(mpi_, name, _f08_), MBP_SYM(pmpir_, name, _f08_), name, params, acct)
#define MBP_MPICH_F08(name, fam, buf, params, acct) MBP_MPICH_F08_##buf(name, params, acct)
MBP_CALLS(MBP_MPICH_F08)
#define MBP_PMPIR(what, post) pmpir_##what##post
MBP_F_LIFE(mpi_, MBP_PMPIR, _f08_)
#endif

/* MPI_PCONTROL, which starts and stops the trace (wrap.c's MPI_Pcontrol):
 * Open MPI's bindings (mpif.h and `use mpi`: mpi_pcontrol_; mpi_f08:
 * mpi_pcontrol_f08_) and MPICH's mpi_f08 call PMPI_Pcontrol past the C
 * symbol, so the Fortran symbol hands its level to the C wrapper (MPICH's
 * `use mpi` calls MPI_Pcontrol itself).  The standard's MPI_PCONTROL has
 * no error argument. */
#if defined(OPEN_MPI)
MBP_API void mpi_pcontrol_(MPI_Fint *level);
void mpi_pcontrol_(MPI_Fint *level) { MPI_Pcontrol((int)*level); }
#endif
#if defined(OPEN_MPI) || defined(MPICH_VERSION)
MBP_API void mpi_pcontrol_f08_(MPI_Fint *level);
void mpi_pcontrol_f08_(MPI_Fint *level) { MPI_Pcontrol((int)*level); }
#endif
