/*
 * libgba_barrier: MPI_Barrier over the profiling interface (MPI-4.0
 * section 15.2).
 *
 * A communicator's decision (gbo_comm.c) is made at its first
 * MPI_Barrier and cached on it as an attribute (MPI_Comm_create_keyval):
 * its copy callback is MPI_COMM_NULL_COPY_FN, so MPI_Comm_dup gives the
 * duplicate a decision (and group) of its own, and its delete callback
 * leaves the group when the communicator is freed.  An attribute on
 * MPI_COMM_SELF, deleted first thing in MPI_Finalize (MPI-4.0 section
 * 11.2.4), leaves the groups still held (MPI_COMM_WORLD's among them)
 * while MPI still works.  The last communicator used is remembered
 * besides (its attribute's delete callback forgets it), so a loop of
 * barriers on one communicator does not look the attribute up each time.
 *
 * MPI_Ibarrier is not intercepted: a nonblocking barrier on the device
 * would need the MPI library to poll its release, which MPI's own means
 * (generalized requests) cannot do without a progress thread; it stays on
 * PMPI_Ibarrier, which is correct next to barriers on the device (each
 * collective is matched in order on its own path).
 */
#include "config.h"

#include <mpi.h>

#include "gbo_comm.h"

static int gbo_keyval = MPI_KEYVAL_INVALID;
static int gbo_self_keyval = MPI_KEYVAL_INVALID;
static int gbo_ready;
static MPI_Comm gbo_last_comm;
static struct gbo_comm *gbo_last;

/* Keyval delete callback: the communicator is freed. */
static int gbo_comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	struct gbo_comm *c = attr;

	if (gbo_last == c) {
		gbo_last = NULL;
		gbo_last_comm = MPI_COMM_NULL;
	}
	gbo_comm_free(c);
	return MPI_SUCCESS;
}

/* MPI_COMM_SELF's delete callback: MPI_Finalize began. */
static int gbo_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	gbo_last = NULL;
	gbo_last_comm = MPI_COMM_NULL;
	gbo_comm_finalize();
	return MPI_SUCCESS;
}

int gbo_mpi_setup(void)
{
	int ret, rank;

	if (gbo_ready)
		return MPI_SUCCESS;
	gbo_param_init();
	gbo_last_comm = MPI_COMM_NULL;
	ret = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, gbo_comm_delete,
				      &gbo_keyval, NULL);
	if (ret == MPI_SUCCESS)
		ret = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
					      gbo_finalize, &gbo_self_keyval,
					      NULL);
	if (ret == MPI_SUCCESS)
		ret = PMPI_Comm_set_attr(MPI_COMM_SELF, gbo_self_keyval, NULL);
	if (ret != MPI_SUCCESS)
		return ret;
	if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS)
		gbo_set_rank(rank);
	gbo_ready = 1;
	return MPI_SUCCESS;
}

/*
 * The decision of @comm, made now if it has none (collective: every
 * member is in its first MPI_Barrier on @comm).  NULL: leave the call to
 * PMPI (an error to report, or the library unusable).
 */
static struct gbo_comm *gbo_mpi_lookup(MPI_Comm comm)
{
	struct gbo_comm *c;
	int flag;

	if (comm == MPI_COMM_NULL || gbo_comm_finalized())
		return NULL;
	if (!gbo_ready && gbo_mpi_setup() != MPI_SUCCESS)
		return NULL;
	if (PMPI_Comm_get_attr(comm, gbo_keyval, &c, &flag) != MPI_SUCCESS)
		return NULL;
	if (!flag) {
		if (gbo_comm_create(comm, &c) != MPI_SUCCESS)
			return NULL;
		if (PMPI_Comm_set_attr(comm, gbo_keyval, c) != MPI_SUCCESS) {
			gbo_comm_free(c);
			return NULL;
		}
	}
	gbo_last_comm = comm;
	gbo_last = c;
	return c;
}

/*
 * MPI_Barrier - MPI-4.0 section 6.3.  On an intra-communicator offloaded
 * by all its members, one barrier on its device group; with one member,
 * returns at once; otherwise PMPI_Barrier.  A barrier the device fails
 * (a member died, an arrival rejected) raises MPI_ERR_OTHER on @comm's
 * error handler.
 */
GBO_EXPORT int MPI_Barrier(MPI_Comm comm)
{
	struct gbo_comm *c;
	int ret;

	c = comm == gbo_last_comm && gbo_last ? gbo_last
					       : gbo_mpi_lookup(comm);
	if (!c)
		return PMPI_Barrier(comm);
	ret = gbo_comm_barrier(c);
	if (__builtin_expect(ret == 0, 1))
		return MPI_SUCCESS;
	if (ret > 0)
		return c->reason == GBO_ONE_MEMBER ? MPI_SUCCESS
						   : PMPI_Barrier(comm);
	PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
	return MPI_ERR_OTHER;
}

#ifdef OPEN_MPI
/*
 * Fortran bindings of Open MPI (mpif.h, "use mpi", "use mpi_f08") call
 * PMPI_Barrier, not MPI_Barrier, so they are replaced too (MPICH's call
 * MPI_Barrier and need nothing).  @comm: the Fortran handle; @ierr:
 * receives the error code (optional in mpi_f08: may be NULL).
 */
static void gbo_fortran_barrier(MPI_Fint *comm, MPI_Fint *ierr)
{
	int ret = MPI_Barrier(PMPI_Comm_f2c(*comm));

	if (ierr)
		*ierr = (MPI_Fint)ret;
}

/* mpif.h and "use mpi": every name mangling gfortran and others use. */
GBO_EXPORT void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr)
{
	gbo_fortran_barrier(comm, ierr);
}

GBO_EXPORT void mpi_barrier__(MPI_Fint *comm, MPI_Fint *ierr)
	__attribute__((alias("mpi_barrier_")));
GBO_EXPORT void mpi_barrier(MPI_Fint *comm, MPI_Fint *ierr)
	__attribute__((alias("mpi_barrier_")));
GBO_EXPORT void MPI_BARRIER(MPI_Fint *comm, MPI_Fint *ierr)
	__attribute__((alias("mpi_barrier_")));

/* "use mpi_f08": TYPE(MPI_Comm) is one INTEGER; IERROR is OPTIONAL. */
GBO_EXPORT void mpi_barrier_f08_(MPI_Fint *comm, MPI_Fint *ierr)
{
	gbo_fortran_barrier(comm, ierr);
}
#endif
