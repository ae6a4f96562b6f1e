/*
 * libbroken_barrier - a deliberately broken barrier offload, for the
 * negative controls of offload_mpi.sh and offload_shmem.sh.  Preloaded
 * before libgba_barrier.so, it lets every third MPI_Barrier /
 * shmem_barrier_all return at once, without a barrier, and passes the
 * others on to the next definition (the library's).  The early-release
 * checks of offload_mpi and offload_shmem must then fail.  Open MPI's ABI
 * (MPI_Comm is a pointer).
 */
#define _GNU_SOURCE
#include <dlfcn.h>

static unsigned long calls;

int MPI_Barrier(void *comm)
{
	static int (*next)(void *);

	if (!next)
		next = (int (*)(void *))dlsym(RTLD_NEXT, "MPI_Barrier");
	if (++calls % 3 == 0)
		return 0;
	return next(comm);
}

void shmem_barrier_all(void)
{
	static void (*next)(void);

	if (!next)
		next = (void (*)(void))dlsym(RTLD_NEXT, "shmem_barrier_all");
	if (++calls % 3 == 0)
		return;
	next();
}
