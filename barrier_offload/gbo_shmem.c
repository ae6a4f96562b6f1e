/*
 * libgba_barrier: the OpenSHMEM barriers over the profiling interface
 * (OpenSHMEM 1.4 sections 9.9.1-9.9.4; Open MPI's oshmem defines them as
 * weak symbols over pshmem_*).
 *
 *   shmem_barrier_all  shmem_quiet, then a barrier of all PEs on the device
 *   shmem_sync_all     a barrier of all PEs on the device, alone
 *   shmem_barrier      shmem_quiet, then a barrier of the active set
 *   shmem_sync         a barrier of the active set, alone
 *
 * Open MPI's OpenSHMEM runs on an initialized MPI whose MPI_COMM_WORLD
 * ranks are the PE numbers; the library checks that once and builds its
 * barrier sets as MPI communicators (gbo_comm.c makes the decision with
 * PMPI collectives): all PEs for the *_all calls, and for an active set
 * (PE_start, logPE_stride, PE_size) a communicator made by its members
 * alone (MPI_Comm_create_group), once: every active set's decision is
 * cached, so its later barriers cost what shmem_barrier_all costs.  Sets
 * beyond the device's groups fall back to pshmem_* (cached too), as does
 * everything when the check fails.  pSync is left to the fallback.
 */
#include "config.h"

#include <pshmem.h>
#include <shmem.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "gbo_comm.h"

/* MPI_Comm_create_group's tag for active sets. */
#define GBO_SHMEM_TAG 0x6762

/* The decision of one active set. */
struct gbo_shmem_set {
	int key[3]; /* PE_start, logPE_stride, PE_size */
	struct gbo_comm *c;
	UT_hash_handle hh;
};

static enum gbo_reason gbo_shmem_state = GBO_NREASONS; /* not checked */
static struct gbo_comm *gbo_shmem_world;
static struct gbo_shmem_set *gbo_shmem_sets;

/* Once: is MPI underneath, with PE numbers as MPI_COMM_WORLD ranks? */
static enum gbo_reason gbo_shmem_check(void)
{
	int flag = 0, size = -1, rank = -1;

	gbo_param_init();
	gbo_set_rank(pshmem_my_pe());
	if (PMPI_Initialized(&flag) != MPI_SUCCESS || !flag) {
		gbo_log(1, "MPI is not initialized under OpenSHMEM: barriers "
			   "stay in pshmem_*");
		return GBO_NO_MPI;
	}
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size != pshmem_n_pes() || rank != pshmem_my_pe()) {
		gbo_log(1, "MPI_COMM_WORLD (rank %d of %d) is not the PEs: "
			   "barriers stay in pshmem_*", rank, size);
		return GBO_NO_MPI;
	}
	if (gbo_mpi_setup() != MPI_SUCCESS)
		return GBO_NO_MPI;
	return GBO_OFFLOADED;
}

/* The decision for all PEs, made at the first call.  NULL: fall back. */
static struct gbo_comm *gbo_shmem_all(void)
{
	if (__builtin_expect(gbo_shmem_world != NULL, 1))
		return gbo_shmem_world;
	if (gbo_shmem_state == GBO_NREASONS)
		gbo_shmem_state = gbo_shmem_check();
	if (gbo_shmem_state != GBO_OFFLOADED || gbo_comm_finalized())
		return NULL;
	if (gbo_comm_create(MPI_COMM_WORLD, &gbo_shmem_world) != MPI_SUCCESS)
		gbo_shmem_world = NULL;
	return gbo_shmem_world;
}

/* A communicator of the active set's members, made by them alone. */
static int gbo_shmem_set_comm(int start, int log_stride, int size,
			      MPI_Comm *comm)
{
	MPI_Group world, group;
	int *ranks, i, ret;

	ranks = malloc(size * sizeof(*ranks));
	if (!ranks)
		return MPI_ERR_NO_MEM;
	for (i = 0; i < size; i++)
		ranks[i] = start + (i << log_stride);
	ret = PMPI_Comm_group(MPI_COMM_WORLD, &world);
	if (ret == MPI_SUCCESS) {
		ret = PMPI_Group_incl(world, size, ranks, &group);
		PMPI_Group_free(&world);
	}
	free(ranks);
	if (ret != MPI_SUCCESS)
		return ret;
	ret = PMPI_Comm_create_group(MPI_COMM_WORLD, group, GBO_SHMEM_TAG,
				     comm);
	PMPI_Group_free(&group);
	return ret;
}

/*
 * The decision for an active set, made at its first call (by its members
 * together).  NULL: fall back (also for sets pshmem_* must reject).
 */
static struct gbo_comm *gbo_shmem_active(int start, int log_stride, int size)
{
	int key[3] = {start, log_stride, size}, npes, me;
	struct gbo_shmem_set *s;
	MPI_Comm comm;

	if (!gbo_shmem_all())
		return NULL;
	npes = pshmem_n_pes();
	me = pshmem_my_pe();
	if (start < 0 || log_stride < 0 || log_stride > 30 || size < 1 ||
	    start + ((long)(size - 1) << log_stride) >= npes || me < start ||
	    (me - start) % (1 << log_stride) ||
	    (me - start) >> log_stride >= size)
		return NULL; /* not a set of this PE: pshmem_* says so */
	if (start == 0 && size == npes)
		return gbo_shmem_world;
	HASH_FIND(hh, gbo_shmem_sets, key, sizeof(key), s);
	if (s)
		return s->c;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	memcpy(s->key, key, sizeof(key));
	if (gbo_shmem_set_comm(start, log_stride, size, &comm) !=
	    MPI_SUCCESS) {
		free(s);
		return NULL;
	}
	if (gbo_comm_create(comm, &s->c) != MPI_SUCCESS)
		s->c = NULL;
	PMPI_Comm_free(&comm);
	if (!s->c) {
		free(s);
		return NULL;
	}
	HASH_ADD(hh, gbo_shmem_sets, key, sizeof(s->key), s);
	return s->c;
}

/* shmem_quiet before a barrier that does not run in pshmem_*. */
static inline void gbo_shmem_quiet(struct gbo_comm *c)
{
	if (c && (c->reason == GBO_OFFLOADED || c->reason == GBO_ONE_MEMBER))
		pshmem_quiet();
}

/* A barrier of @c: 0 done, otherwise the caller falls back. */
static int gbo_shmem_barrier(struct gbo_comm *c)
{
	int ret;

	if (!c)
		return 1;
	ret = gbo_comm_barrier(c);
	if (ret > 0 && c->reason == GBO_ONE_MEMBER)
		return 0;
	if (ret < 0) {
		gbo_log(0, "barrier failed on the device: aborting");
		PMPI_Abort(MPI_COMM_WORLD, 1);
	}
	return ret;
}

GBO_EXPORT void shmem_barrier_all(void)
{
	struct gbo_comm *c = gbo_shmem_all();

	gbo_shmem_quiet(c);
	if (gbo_shmem_barrier(c))
		pshmem_barrier_all();
}

GBO_EXPORT void shmem_sync_all(void)
{
	if (gbo_shmem_barrier(gbo_shmem_all()))
		pshmem_sync_all();
}

GBO_EXPORT void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
	struct gbo_comm *c = gbo_shmem_active(PE_start, logPE_stride, PE_size);

	gbo_shmem_quiet(c);
	if (gbo_shmem_barrier(c))
		pshmem_barrier(PE_start, logPE_stride, PE_size, pSync);
}

GBO_EXPORT void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
	struct gbo_comm *c = gbo_shmem_active(PE_start, logPE_stride, PE_size);

	if (gbo_shmem_barrier(c))
		pshmem_sync(PE_start, logPE_stride, PE_size, pSync);
}
