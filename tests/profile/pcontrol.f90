! An application choosing its traced stretches from Fortran (tests/test_trace.py), as
! pcontrol.c does from C: recorded from MPI_Init, one barrier; MPI_PCONTROL(0) stops the
! recording for 5 barriers; MPI_PCONTROL(1) ... (0) records 2 barriers.  Built with
! `use mpi` and (-DF08) with `use mpi_f08`.
program pcontrol
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer :: ierr, i
  call MPI_Init(ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Pcontrol(0)
  do i = 1, 5
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  call MPI_Pcontrol(1)
  do i = 1, 2
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  call MPI_Pcontrol(0)
  do i = 1, 5
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  call MPI_Finalize(ierr)
end program pcontrol
