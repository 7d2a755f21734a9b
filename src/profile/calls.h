/* The calls libmpimb-prof.so wraps: one line each, from which the C
 * wrappers, the Fortran wrappers, the call names and families are generated.
 *
 *   X(name, family, buffer, (params), accounting)
 *
 * name       MPI_<name> / PMPI_<name>
 * family     enum mbp_family without MBP_FAM_ (prof.h)
 * buffer     B: the call has a choice buffer; N: it has none (MPICH's mpi_f08
 *            module calls PMPI_<name> directly for exactly these: fortran.c)
 * params     (KIND, name) pairs in the standard's order; KIND gives the C and
 *            the Fortran type (MBP_CT_* in wrap.c, MBP_FT_* in fortran.c)
 * accounting PRE_/POST_ macro pair (prof.h) over parameter names
 */
#ifndef MBP_CALLS_H
#define MBP_CALLS_H

#define MBP_P2P_SEND(X, name, fam)                                                                                   \
    X(name, fam, B, ((CBUF, buf), (INT, count), (DT, datatype), (INT, dest), (INT, tag), (COMM, comm)),              \
      SEND(count, datatype, dest, tag, comm))
#define MBP_P2P_ISEND(X, name, fam)                                                                                  \
    X(name, fam, B,                                                                                                  \
      ((CBUF, buf), (INT, count), (DT, datatype), (INT, dest), (INT, tag), (COMM, comm), (REQP, request)),           \
      ISEND(count, datatype, dest, tag, comm, request))
#define MBP_P2P_SEND_INIT(X, name)                                                                                   \
    X(name, PERS, B,                                                                                                 \
      ((CBUF, buf), (INT, count), (DT, datatype), (INT, dest), (INT, tag), (COMM, comm), (REQP, request)),           \
      PSEND(count, datatype, dest, comm, request))

/* blocking point-to-point, nonblocking, persistent, probe, completion */
#define MBP_CALLS_P2P(X)                                                                                             \
    MBP_P2P_SEND(X, Send, P2P)                                                                                       \
    MBP_P2P_SEND(X, Bsend, P2P)                                                                                      \
    MBP_P2P_SEND(X, Ssend, P2P)                                                                                      \
    MBP_P2P_SEND(X, Rsend, P2P)                                                                                      \
    X(Recv, P2P, B,                                                                                                  \
      ((BUF, buf), (INT, count), (DT, datatype), (INT, source), (INT, tag), (COMM, comm), (STAT, status)),           \
      RECV(count, datatype, source, tag, comm))                                                                      \
    X(Sendrecv, P2P, B,                                                                                              \
      ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (INT, dest), (INT, sendtag), (BUF, recvbuf),               \
       (INT, recvcount), (DT, recvtype), (INT, source), (INT, recvtag), (COMM, comm), (STAT, status)),               \
      SENDRECV(sendcount, sendtype, dest, sendtag, source, recvtag, comm, recvcount, recvtype))                      \
    X(Sendrecv_replace, P2P, B,                                                                                      \
      ((BUF, buf), (INT, count), (DT, datatype), (INT, dest), (INT, sendtag), (INT, source), (INT, recvtag),         \
       (COMM, comm), (STAT, status)),                                                                                \
      SENDRECV(count, datatype, dest, sendtag, source, recvtag, comm, count, datatype))                              \
    MBP_P2P_ISEND(X, Isend, P2PNB)                                                                                   \
    MBP_P2P_ISEND(X, Ibsend, P2PNB)                                                                                  \
    MBP_P2P_ISEND(X, Issend, P2PNB)                                                                                  \
    MBP_P2P_ISEND(X, Irsend, P2PNB)                                                                                  \
    X(Irecv, P2PNB, B,                                                                                               \
      ((BUF, buf), (INT, count), (DT, datatype), (INT, source), (INT, tag), (COMM, comm), (REQP, request)),          \
      IRECV(count, datatype, source, tag, comm, request))                                                            \
    MBP_P2P_SEND_INIT(X, Send_init)                                                                                  \
    MBP_P2P_SEND_INIT(X, Bsend_init)                                                                                 \
    MBP_P2P_SEND_INIT(X, Ssend_init)                                                                                 \
    MBP_P2P_SEND_INIT(X, Rsend_init)                                                                                 \
    X(Recv_init, PERS, B,                                                                                            \
      ((BUF, buf), (INT, count), (DT, datatype), (INT, source), (INT, tag), (COMM, comm), (REQP, request)),          \
      PRECV(count, datatype, request))                                                                               \
    X(Start, PERS, N, ((REQP, request)), START(request))                                                             \
    X(Startall, PERS, N, ((INT, count), (REQA, requests)), STARTALL(count, requests))                                \
    X(Request_free, PERS, N, ((REQP, request)), RFREE(request))                                                      \
    X(Probe, PROBE, N, ((INT, source), (INT, tag), (COMM, comm), (STAT, status)), NONE())                            \
    X(Iprobe, PROBE, N, ((INT, source), (INT, tag), (COMM, comm), (INTP, flag), (STAT, status)), NONE())             \
    X(Mprobe, PROBE, N, ((INT, source), (INT, tag), (COMM, comm), (MSGP, message), (STAT, status)), NONE())          \
    X(Improbe, PROBE, N,                                                                                             \
      ((INT, source), (INT, tag), (COMM, comm), (INTP, flag), (MSGP, message), (STAT, status)), NONE())              \
    X(Mrecv, P2P, B, ((BUF, buf), (INT, count), (DT, datatype), (MSGP, message), (STAT, status)),                    \
      MRECV(count, datatype))                                                                                        \
    X(Imrecv, P2PNB, B, ((BUF, buf), (INT, count), (DT, datatype), (MSGP, message), (REQP, request)),                \
      MRECV(count, datatype))                                                                                        \
    X(Wait, WAIT, N, ((REQP, request), (STAT, status)), WAIT(request))                                               \
    X(Waitall, WAIT, N, ((INT, count), (REQA, requests), (STATA, statuses)), WAITN(count, requests))                 \
    X(Waitany, WAIT, N, ((INT, count), (REQA, requests), (INTP, index), (STAT, status)), WAITN(count, requests))     \
    X(Waitsome, WAIT, N, ((INT, incount), (REQA, requests), (INTP, outcount), (INTA, indices),                       \
                          (STATA, statuses)), WAITN(incount, requests))                                              \
    X(Test, WAIT, N, ((REQP, request), (INTP, flag), (STAT, status)), WAIT(request))                                 \
    X(Testall, WAIT, N, ((INT, count), (REQA, requests), (INTP, flag), (STATA, statuses)), WAITN(count, requests))   \
    X(Testany, WAIT, N, ((INT, count), (REQA, requests), (INTP, index), (INTP, flag), (STAT, status)),               \
      WAITN(count, requests))                                                                                        \
    X(Testsome, WAIT, N, ((INT, incount), (REQA, requests), (INTP, outcount), (INTA, indices),                       \
                          (STATA, statuses)), WAITN(incount, requests))

/* MPI-4 point-to-point (MPICH 4; Open MPI 4.1 is MPI-3.1) */
#if MPI_VERSION >= 4
#define MBP_CALLS_MPI4(X)                                                                                            \
    X(Isendrecv, P2PNB, B,                                                                                           \
      ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (INT, dest), (INT, sendtag), (BUF, recvbuf),               \
       (INT, recvcount), (DT, recvtype), (INT, source), (INT, recvtag), (COMM, comm), (REQP, request)),              \
      ISENDRECV(sendcount, sendtype, dest, sendtag, source, recvtag, comm, recvcount, recvtype, request))            \
    X(Isendrecv_replace, P2PNB, B,                                                                                   \
      ((BUF, buf), (INT, count), (DT, datatype), (INT, dest), (INT, sendtag), (INT, source), (INT, recvtag),         \
       (COMM, comm), (REQP, request)),                                                                               \
      ISENDRECV(count, datatype, dest, sendtag, source, recvtag, comm, count, datatype, request))
#else
#define MBP_CALLS_MPI4(X)
#endif

/* A collective in its blocking and nonblocking form: the nonblocking one
 * has a request parameter more. */
#define MBP_COLL2(X, name, iname, buf, params, acct)                                                                 \
    X(name, COLL, buf, (MBP_UNPAREN params), acct)                                                                   \
    X(iname, COLLNB, buf, (MBP_UNPAREN params, (REQP, request)), acct)
#define MBP_UNPAREN(...) __VA_ARGS__

#define MBP_CALLS_COLL(X)                                                                                            \
    X(Barrier, COLL, N, ((COMM, comm)), BARRIER(comm))                                                               \
    X(Ibarrier, COLLNB, N, ((COMM, comm), (REQP, request)), BARRIER(comm))                                           \
    MBP_COLL2(X, Bcast, Ibcast, B, ((BUF, buffer), (INT, count), (DT, datatype), (INT, root), (COMM, comm)),         \
              BLOCK(comm, count, datatype, root, MPI_OP_NULL))                                                       \
    MBP_COLL2(X, Reduce, Ireduce, B,                                                                                 \
              ((CBUF, sendbuf), (BUF, recvbuf), (INT, count), (DT, datatype), (OP, op), (INT, root),                 \
               (COMM, comm)),                                                                                        \
              BLOCK(comm, count, datatype, root, op))                                                                \
    MBP_COLL2(X, Allreduce, Iallreduce, B,                                                                           \
              ((CBUF, sendbuf), (BUF, recvbuf), (INT, count), (DT, datatype), (OP, op), (COMM, comm)),               \
              BLOCK(comm, count, datatype, -1, op))                                                                  \
    MBP_COLL2(X, Gather, Igather, B,                                                                                 \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (INT, recvcount),                  \
               (DT, recvtype), (INT, root), (COMM, comm)),                                                           \
              GATHER(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, root))                                 \
    MBP_COLL2(X, Gatherv, Igatherv, B,                                                                               \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (CINTA, recvcounts),               \
               (CINTA, displs), (DT, recvtype), (INT, root), (COMM, comm)),                                          \
              GATHERV(comm, sendbuf, sendcount, sendtype, recvcounts, recvtype, root))                               \
    MBP_COLL2(X, Scatter, Iscatter, B,                                                                               \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (INT, recvcount),                  \
               (DT, recvtype), (INT, root), (COMM, comm)),                                                           \
              SCATTER(comm, sendcount, sendtype, recvbuf, recvcount, recvtype, root))                                \
    MBP_COLL2(X, Scatterv, Iscatterv, B,                                                                             \
              ((CBUF, sendbuf), (CINTA, sendcounts), (CINTA, displs), (DT, sendtype), (BUF, recvbuf),                \
               (INT, recvcount), (DT, recvtype), (INT, root), (COMM, comm)),                                         \
              SCATTERV(comm, sendcounts, sendtype, recvbuf, recvcount, recvtype, root))                              \
    MBP_COLL2(X, Allgather, Iallgather, B,                                                                           \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (INT, recvcount),                  \
               (DT, recvtype), (COMM, comm)),                                                                        \
              ALLG(comm, sendbuf, sendcount, sendtype, recvcount, recvtype))                                         \
    MBP_COLL2(X, Allgatherv, Iallgatherv, B,                                                                         \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (CINTA, recvcounts),               \
               (CINTA, displs), (DT, recvtype), (COMM, comm)),                                                       \
              ALLGV(comm, sendbuf, sendcount, sendtype, recvcounts, recvtype))                                       \
    MBP_COLL2(X, Alltoall, Ialltoall, B,                                                                             \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (INT, recvcount),                  \
               (DT, recvtype), (COMM, comm)),                                                                        \
              ALLG(comm, sendbuf, sendcount, sendtype, recvcount, recvtype))                                         \
    MBP_COLL2(X, Alltoallv, Ialltoallv, B,                                                                           \
              ((CBUF, sendbuf), (CINTA, sendcounts), (CINTA, sdispls), (DT, sendtype), (BUF, recvbuf),               \
               (CINTA, recvcounts), (CINTA, rdispls), (DT, recvtype), (COMM, comm)),                                 \
              ALLTOALLV(comm, sendbuf, sendcounts, sendtype, recvcounts, recvtype))                                  \
    MBP_COLL2(X, Alltoallw, Ialltoallw, B,                                                                           \
              ((CBUF, sendbuf), (CINTA, sendcounts), (CINTA, sdispls), (CDTA, sendtypes), (BUF, recvbuf),            \
               (CINTA, recvcounts), (CINTA, rdispls), (CDTA, recvtypes), (COMM, comm)),                              \
              ALLTOALLW(comm, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes))                                \
    MBP_COLL2(X, Reduce_scatter, Ireduce_scatter, B,                                                                 \
              ((CBUF, sendbuf), (BUF, recvbuf), (CINTA, recvcounts), (DT, datatype), (OP, op), (COMM, comm)),        \
              RSCAT(comm, recvcounts, datatype, op))                                                                 \
    MBP_COLL2(X, Reduce_scatter_block, Ireduce_scatter_block, B,                                                     \
              ((CBUF, sendbuf), (BUF, recvbuf), (INT, recvcount), (DT, datatype), (OP, op), (COMM, comm)),           \
              BLOCK(comm, recvcount, datatype, -1, op))                                                              \
    MBP_COLL2(X, Scan, Iscan, B,                                                                                     \
              ((CBUF, sendbuf), (BUF, recvbuf), (INT, count), (DT, datatype), (OP, op), (COMM, comm)),               \
              BLOCK(comm, count, datatype, -1, op))                                                                  \
    MBP_COLL2(X, Exscan, Iexscan, B,                                                                                 \
              ((CBUF, sendbuf), (BUF, recvbuf), (INT, count), (DT, datatype), (OP, op), (COMM, comm)),               \
              BLOCK(comm, count, datatype, -1, op))                                                                  \
    MBP_COLL2(X, Neighbor_allgather, Ineighbor_allgather, B,                                                         \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (INT, recvcount),                  \
               (DT, recvtype), (COMM, comm)),                                                                        \
              NEIGH(comm, sendcount, sendtype))                                                                      \
    MBP_COLL2(X, Neighbor_allgatherv, Ineighbor_allgatherv, B,                                                       \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (CINTA, recvcounts),               \
               (CINTA, displs), (DT, recvtype), (COMM, comm)),                                                       \
              NEIGH(comm, sendcount, sendtype))                                                                      \
    MBP_COLL2(X, Neighbor_alltoall, Ineighbor_alltoall, B,                                                           \
              ((CBUF, sendbuf), (INT, sendcount), (DT, sendtype), (BUF, recvbuf), (INT, recvcount),                  \
               (DT, recvtype), (COMM, comm)),                                                                        \
              NEIGH(comm, sendcount, sendtype))                                                                      \
    MBP_COLL2(X, Neighbor_alltoallv, Ineighbor_alltoallv, B,                                                         \
              ((CBUF, sendbuf), (CINTA, sendcounts), (CINTA, sdispls), (DT, sendtype), (BUF, recvbuf),               \
               (CINTA, recvcounts), (CINTA, rdispls), (DT, recvtype), (COMM, comm)),                                 \
              NEIGHV(comm, sendcounts, sendtype))                                                                    \
    MBP_COLL2(X, Neighbor_alltoallw, Ineighbor_alltoallw, B,                                                         \
              ((CBUF, sendbuf), (CINTA, sendcounts), (CAINTA, sdispls), (CDTA, sendtypes), (BUF, recvbuf),           \
               (CINTA, recvcounts), (CAINTA, rdispls), (CDTA, recvtypes), (COMM, comm)),                             \
              NEIGHW(comm, sendcounts, sendtypes))

#define MBP_RMA_PUT(X, name, fam, ...)                                                                               \
    X(name, fam, B,                                                                                                  \
      ((CBUF, origin_addr), (INT, origin_count), (DT, origin_datatype), (INT, target_rank),                          \
       (AINT, target_disp), (INT, target_count), (DT, target_datatype) __VA_ARGS__),                                 \
      RMA(origin_count, origin_datatype, target_rank, win))
#define MBP_RMA_GETACC(X, name, ...)                                                                                 \
    X(name, RMA, B,                                                                                                  \
      ((CBUF, origin_addr), (INT, origin_count), (DT, origin_datatype), (BUF, result_addr),                          \
       (INT, result_count), (DT, result_datatype), (INT, target_rank), (AINT, target_disp),                          \
       (INT, target_count), (DT, target_datatype), (OP, op), (WIN, win) __VA_ARGS__),                                \
      RMA2(origin_count, origin_datatype, result_count, result_datatype, target_rank, win))

/* one-sided: communication, synchronisation, windows */
/* SimGrid 3.32's compare_addr is not const (smpi.h) */
#ifdef MB_SIMULATED
#define MBP_CAS_COMPARE BUF
#else
#define MBP_CAS_COMPARE CBUF
#endif
#define MBP_CALLS_RMA(X)                                                                                             \
    MBP_RMA_PUT(X, Put, RMA, , (WIN, win))                                                                           \
    MBP_RMA_PUT(X, Rput, RMA, , (WIN, win), (REQP, request))                                                         \
    X(Get, RMA, B,                                                                                                   \
      ((BUF, origin_addr), (INT, origin_count), (DT, origin_datatype), (INT, target_rank),                           \
       (AINT, target_disp), (INT, target_count), (DT, target_datatype), (WIN, win)),                                 \
      RMA(origin_count, origin_datatype, target_rank, win))                                                          \
    X(Rget, RMA, B,                                                                                                  \
      ((BUF, origin_addr), (INT, origin_count), (DT, origin_datatype), (INT, target_rank),                           \
       (AINT, target_disp), (INT, target_count), (DT, target_datatype), (WIN, win), (REQP, request)),                \
      RMA(origin_count, origin_datatype, target_rank, win))                                                          \
    MBP_RMA_PUT(X, Accumulate, RMA, , (OP, op), (WIN, win))                                                          \
    MBP_RMA_PUT(X, Raccumulate, RMA, , (OP, op), (WIN, win), (REQP, request))                                        \
    MBP_RMA_GETACC(X, Get_accumulate)                                                                                \
    MBP_RMA_GETACC(X, Rget_accumulate, , (REQP, request))                                                            \
    X(Fetch_and_op, RMA, B,                                                                                          \
      ((CBUF, origin_addr), (BUF, result_addr), (DT, datatype), (INT, target_rank), (AINT, target_disp),             \
       (OP, op), (WIN, win)),                                                                                        \
      RMA(1, datatype, target_rank, win))                                                                            \
    X(Compare_and_swap, RMA, B,                                                                                      \
      ((CBUF, origin_addr), (MBP_CAS_COMPARE, compare_addr), (BUF, result_addr), (DT, datatype), (INT, target_rank), \
       (AINT, target_disp), (WIN, win)),                                                                             \
      RMA(1, datatype, target_rank, win))                                                                            \
    X(Win_fence, RMASYNC, N, ((INT, assert), (WIN, win)), NONE())                                                    \
    X(Win_start, RMASYNC, N, ((GROUP, group), (INT, assert), (WIN, win)), NONE())                                    \
    X(Win_complete, RMASYNC, N, ((WIN, win)), NONE())                                                                \
    X(Win_post, RMASYNC, N, ((GROUP, group), (INT, assert), (WIN, win)), NONE())                                     \
    X(Win_wait, RMASYNC, N, ((WIN, win)), NONE())                                                                    \
    X(Win_test, RMASYNC, N, ((WIN, win), (INTP, flag)), NONE())                                                      \
    X(Win_lock, RMASYNC, N, ((INT, lock_type), (INT, rank), (INT, assert), (WIN, win)), NONE())                      \
    X(Win_unlock, RMASYNC, N, ((INT, rank), (WIN, win)), NONE())                                                     \
    X(Win_lock_all, RMASYNC, N, ((INT, assert), (WIN, win)), NONE())                                                 \
    X(Win_unlock_all, RMASYNC, N, ((WIN, win)), NONE())                                                              \
    X(Win_flush, RMASYNC, N, ((INT, rank), (WIN, win)), NONE())                                                      \
    X(Win_flush_all, RMASYNC, N, ((WIN, win)), NONE())                                                               \
    X(Win_flush_local, RMASYNC, N, ((INT, rank), (WIN, win)), NONE())                                                \
    X(Win_flush_local_all, RMASYNC, N, ((WIN, win)), NONE())                                                         \
    X(Win_sync, RMASYNC, N, ((WIN, win)), NONE())                                                                    \
    X(Win_create, RMAWIN, B,                                                                                         \
      ((BUF, base), (AINT, size), (INT, disp_unit), (INFO, info), (COMM, comm), (WINP, win)), NONE())                \
    X(Win_allocate, RMAWIN, N,                                                                                       \
      ((AINT, size), (INT, disp_unit), (INFO, info), (COMM, comm), (BUF, baseptr), (WINP, win)), NONE())             \
    X(Win_allocate_shared, RMAWIN, N,                                                                                \
      ((AINT, size), (INT, disp_unit), (INFO, info), (COMM, comm), (BUF, baseptr), (WINP, win)), NONE())             \
    X(Win_create_dynamic, RMAWIN, N, ((INFO, info), (COMM, comm), (WINP, win)), NONE())                              \
    X(Win_free, RMAWIN, N, ((WINP, win)), NONE())

#define MBP_CALLS(X) MBP_CALLS_P2P(X) MBP_CALLS_MPI4(X) MBP_CALLS_COLL(X) MBP_CALLS_RMA(X)

/* MAP over a parameter list: f applied to each (KIND, name) pair, joined by
 * commas (MBP_MAP) or by nothing (MBP_SMAP, for statements). */
#define MBP_NARGS(...) MBP_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define MBP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, n, ...) n
#define MBP_MAP(f, ...) MBP_CAT(MBP_MAP_, MBP_NARGS(__VA_ARGS__))(f, __VA_ARGS__)
#define MBP_MAP_1(f, x) f x
#define MBP_MAP_2(f, x, ...) f x, MBP_MAP_1(f, __VA_ARGS__)
#define MBP_MAP_3(f, x, ...) f x, MBP_MAP_2(f, __VA_ARGS__)
#define MBP_MAP_4(f, x, ...) f x, MBP_MAP_3(f, __VA_ARGS__)
#define MBP_MAP_5(f, x, ...) f x, MBP_MAP_4(f, __VA_ARGS__)
#define MBP_MAP_6(f, x, ...) f x, MBP_MAP_5(f, __VA_ARGS__)
#define MBP_MAP_7(f, x, ...) f x, MBP_MAP_6(f, __VA_ARGS__)
#define MBP_MAP_8(f, x, ...) f x, MBP_MAP_7(f, __VA_ARGS__)
#define MBP_MAP_9(f, x, ...) f x, MBP_MAP_8(f, __VA_ARGS__)
#define MBP_MAP_10(f, x, ...) f x, MBP_MAP_9(f, __VA_ARGS__)
#define MBP_MAP_11(f, x, ...) f x, MBP_MAP_10(f, __VA_ARGS__)
#define MBP_MAP_12(f, x, ...) f x, MBP_MAP_11(f, __VA_ARGS__)
#define MBP_MAP_13(f, x, ...) f x, MBP_MAP_12(f, __VA_ARGS__)
#define MBP_MAP_14(f, x, ...) f x, MBP_MAP_13(f, __VA_ARGS__)
#define MBP_SMAP(f, ...) MBP_CAT(MBP_SMAP_, MBP_NARGS(__VA_ARGS__))(f, __VA_ARGS__)
#define MBP_SMAP_1(f, x) f x
#define MBP_SMAP_2(f, x, ...) f x MBP_SMAP_1(f, __VA_ARGS__)
#define MBP_SMAP_3(f, x, ...) f x MBP_SMAP_2(f, __VA_ARGS__)
#define MBP_SMAP_4(f, x, ...) f x MBP_SMAP_3(f, __VA_ARGS__)
#define MBP_SMAP_5(f, x, ...) f x MBP_SMAP_4(f, __VA_ARGS__)
#define MBP_SMAP_6(f, x, ...) f x MBP_SMAP_5(f, __VA_ARGS__)
#define MBP_SMAP_7(f, x, ...) f x MBP_SMAP_6(f, __VA_ARGS__)
#define MBP_SMAP_8(f, x, ...) f x MBP_SMAP_7(f, __VA_ARGS__)
#define MBP_SMAP_9(f, x, ...) f x MBP_SMAP_8(f, __VA_ARGS__)
#define MBP_SMAP_10(f, x, ...) f x MBP_SMAP_9(f, __VA_ARGS__)
#define MBP_SMAP_11(f, x, ...) f x MBP_SMAP_10(f, __VA_ARGS__)
#define MBP_SMAP_12(f, x, ...) f x MBP_SMAP_11(f, __VA_ARGS__)
#define MBP_SMAP_13(f, x, ...) f x MBP_SMAP_12(f, __VA_ARGS__)
#define MBP_SMAP_14(f, x, ...) f x MBP_SMAP_13(f, __VA_ARGS__)

#endif
