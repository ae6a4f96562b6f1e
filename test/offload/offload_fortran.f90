! offload_fortran - MPI_Barrier from Fortran ("use mpi" and "use mpi_f08"),
! whose Open MPI bindings call PMPI_Barrier: the barrier-offload library
! replaces those bindings too (offload_mpi.sh compiles this with mpifort,
! twice: -DF08 for mpi_f08).  Each rank prints
! "offload_fortran mpi|mpi_f08 rank=R barriers=B failures=F".
program offload_fortran
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer :: ierr, rank, i, failures
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  failures = 0
  do i = 1, 100
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) failures = failures + 1
  end do
#ifdef F08
  call MPI_Barrier(MPI_COMM_WORLD)
#else
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
#endif
#ifdef F08
  write (*, '(a,i0,a,i0,a,i0)') 'offload_fortran mpi_f08 rank=', rank, &
    ' barriers=', 101, ' failures=', failures
#else
  write (*, '(a,i0,a,i0,a,i0)') 'offload_fortran mpi rank=', rank, &
    ' barriers=', 101, ' failures=', failures
#endif
  call MPI_Finalize(ierr)
end program offload_fortran
