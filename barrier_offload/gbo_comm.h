/*
 * libgba_barrier: the offload decision of an MPI communicator, shared by
 * the MPI entry points (gbo_mpi.c) and the OpenSHMEM ones (gbo_shmem.c,
 * whose barrier sets are MPI communicators underneath).
 */
#ifndef GBO_COMM_H
#define GBO_COMM_H

#include <mpi.h>

#include "gbo.h"

/* A communicator's barrier: on a device group, or where it falls back. */
struct gbo_comm {
	struct gbo_set set;	/* joined when reason is GBO_OFFLOADED */
	enum gbo_reason reason;	/* GBO_OFFLOADED or why not */
	struct gbo_comm *prev, *next; /* live list (finalize) */
};

/*
 * gbo_comm_create - decide, together with every member of @comm,
 * whether its barrier runs on a device group (one agreement: all members
 * or none), and join the group if so.  Collective over @comm (two PMPI
 * collectives; none for one member).  *@cp receives the decision, also
 * when it is not to offload.  Returns MPI_SUCCESS, MPI_ERR_NO_MEM, or
 * the error of a PMPI call.
 */
int gbo_comm_create(MPI_Comm comm, struct gbo_comm **cp);

/*
 * gbo_comm_idle - called while a barrier waits: lets the MPI library
 * progress the program's other communication (a rendezvous send, a
 * one-sided operation aimed at this process; OpenSHMEM's too, as it runs
 * on that MPI), as its own barrier would: PMPI_Iprobe on MPI_COMM_SELF.
 */
void gbo_comm_idle(void);

/*
 * gbo_comm_barrier - a barrier of @c: on the device if offloaded (0 or
 * a negative -FI_E*, logged), else 1: the caller runs its fallback.
 * Counts it in gbo_stats.
 */
static inline int gbo_comm_barrier(struct gbo_comm *c)
{
	if (__builtin_expect(c->reason == GBO_OFFLOADED, 1)) {
		gbo_stats.offloaded++;
		return gbo_set_barrier(&c->set, gbo_comm_idle);
	}
	gbo_stats.fallback[c->reason]++;
	return 1;
}

/* gbo_comm_free - leave @c's group (if any) and free @c. */
void gbo_comm_free(struct gbo_comm *c);

/*
 * gbo_comm_finalize - leave every group still held (the program is
 * finalizing); the structures stay valid, their barriers fall back, and
 * gbo_comm_free still frees them.  Then report (GBA_BARRIER_VERBOSE) and
 * close the fabric.
 */
void gbo_comm_finalize(void);

/*
 * gbo_mpi_setup - once: parameters, the attribute keyvals, and the
 * finalize hook on MPI_COMM_SELF (gbo_mpi.c).  MPI must be initialized.
 * Returns MPI_SUCCESS or the error of a PMPI call.
 */
int gbo_mpi_setup(void);

/* gbo_comm_finalized - 1 once gbo_comm_finalize ran. */
int gbo_comm_finalized(void);

#endif /* GBO_COMM_H */
