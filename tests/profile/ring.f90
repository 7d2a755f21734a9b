! A ring of known traffic, for tests/test_profile.py: every rank sends to
! rank+1 and receives from rank-1.  Per rank: 10 x (Irecv + Isend of 100
! doubles, Waitall), 7 Sendrecv of 10 doubles, 4 Startall of a persistent
! pair of 50 doubles each (+ Waitall), 7 Allreduce of 1 double (2 in place),
! 3 Barrier.  Built twice: with `use mpi` and (-DF08) with `use mpi_f08`.
program ring
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_Request) :: req(2), preq(2)
#else
  use mpi
  implicit none
  integer :: req(2), preq(2)
#endif
  integer :: ierr, rank, nprocs, i, next, prev
  double precision :: sbuf(100), rbuf(100), x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank - 1 + nprocs, nprocs)
  sbuf = rank
  do i = 1, 10
    call MPI_Irecv(rbuf, 100, MPI_DOUBLE_PRECISION, prev, 1, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(sbuf, 100, MPI_DOUBLE_PRECISION, next, 1, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  end do
  do i = 1, 7
    call MPI_Sendrecv(sbuf, 10, MPI_DOUBLE_PRECISION, next, 2, rbuf, 10, MPI_DOUBLE_PRECISION, prev, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Recv_init(rbuf, 50, MPI_DOUBLE_PRECISION, prev, 3, MPI_COMM_WORLD, preq(1), ierr)
  call MPI_Send_init(sbuf, 50, MPI_DOUBLE_PRECISION, next, 3, MPI_COMM_WORLD, preq(2), ierr)
  do i = 1, 4
    call MPI_Startall(2, preq, ierr)
    call MPI_Waitall(2, preq, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Request_free(preq(1), ierr)
  call MPI_Request_free(preq(2), ierr)
  x = rank
  do i = 1, 5
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 2
    call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 3
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  if (rank == 0 .and. rbuf(1) /= nprocs - 1) print *, 'ring: wrong data'
  call MPI_Finalize(ierr)
end program ring
