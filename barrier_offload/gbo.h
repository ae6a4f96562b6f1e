/*
 * libgba_barrier: the barrier-offload library (libgba_barrier(7)).
 *
 * Loaded with LD_PRELOAD (or linked) into an unmodified MPI or OpenSHMEM
 * program, it defines MPI_Barrier and the OpenSHMEM barriers over the
 * profiling interface (PMPI_*, pshmem_*) and runs them on a hardware
 * barrier group through the libfabric collective API (fi_join_collective,
 * fi_barrier) on provider "gba" by default, falling back to the P* entry
 * point whenever the group cannot serve the call (doc/design.md section 8).
 *
 * Internal interfaces ("gbo": GBA barrier offload):
 *   gbo_param.c   parameters (GBA_BARRIER_*), logging, statistics
 *   gbo_fabric.c  the library's own fabric, domain, endpoint; a barrier
 *                 set (AV set + joined collective) and its barrier
 *   gbo_comm.c    the collective decision of an MPI communicator (shared
 *                 by the MPI and OpenSHMEM entry points)
 *   gbo_mpi.c     MPI_Barrier, the attribute keyval, finalize
 *   gbo_shmem.c   shmem_barrier_all, shmem_sync_all, shmem_barrier,
 *                 shmem_sync (Open MPI's oshmem only)
 *
 * Threads: the library offloads nothing in an MPI_THREAD_MULTIPLE program
 * (gbo_comm.c says why); every other level calls it from one thread at a
 * time, so it takes no lock.
 */
#ifndef GBO_H
#define GBO_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

/* The entry points the library defines (it is built -fvisibility=hidden). */
#define GBO_EXPORT __attribute__((visibility("default")))

/* Why a barrier does not run on the device (statistics and log lines). */
enum gbo_reason {
	GBO_OFFLOADED = 0,	/* it does */
	GBO_ONE_MEMBER,		/* one member: returns at once */
	GBO_DISABLED,		/* GBA_BARRIER_ENABLE=0 */
	GBO_INTERCOMM,		/* an inter-communicator */
	GBO_THREAD_MULTIPLE,	/* MPI_THREAD_MULTIPLE */
	GBO_NO_MPI,		/* OpenSHMEM without MPI underneath */
	GBO_NO_PROVIDER,	/* no libfabric provider with collectives */
	GBO_MEMBERS,		/* more members than the device takes */
	GBO_NO_DEVICE,		/* the provider found no GBA device */
	GBO_NO_GROUP,		/* every hardware group in use */
	GBO_PROV_DISABLED,	/* the provider's offload is off */
	GBO_JOIN_FAILED,	/* a member's join failed */
	GBO_OUT_OF_ORDER,	/* an earlier join failed: offload stopped */
	GBO_FINALIZED,		/* MPI_Finalize began */
	GBO_NREASONS
};

/* Parameters, read once (gbo_param_init). */
struct gbo_params {
	int enable;		/* GBA_BARRIER_ENABLE, default 1 */
	const char *provider;	/* GBA_BARRIER_PROVIDER, default "gba" */
	int verbose;		/* GBA_BARRIER_VERBOSE, default 0 */
};
extern struct gbo_params gbo_params;

/* Per-process counters, reported at finalize when verbose. */
struct gbo_stats {
	uint64_t offloaded;		/* barriers run on a device group */
	uint64_t confirmed;		/* of those, counted by the device */
	uint64_t fallback[GBO_NREASONS]; /* barriers run elsewhere, by why */
	uint32_t sets;			/* barrier sets offloaded, in all */
	uint32_t held;			/* device groups held now */
	uint32_t held_max;		/* ... at most */
};
extern struct gbo_stats gbo_stats;

/* gbo_param_init - read GBA_BARRIER_* once; later calls do nothing. */
void gbo_param_init(void);

/* gbo_reason_str - a few words for @r ("no free hardware group"). */
const char *gbo_reason_str(enum gbo_reason r);

/*
 * gbo_log - print "libgba_barrier: <rank> ..." on stderr when
 * GBA_BARRIER_VERBOSE >= @level (level 0: always, for errors).
 */
void gbo_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* gbo_set_rank - the rank shown in log lines (MPI_COMM_WORLD's). */
void gbo_set_rank(int rank);

/* gbo_stats_report - the finalize line (GBA_BARRIER_VERBOSE >= 1). */
void gbo_stats_report(void);

/* ---- the library's fabric (gbo_fabric.c) ---------------------------- */

/* Largest endpoint name exchanged between members, in bytes. */
#define GBO_NAME_MAX 56

/* A set of members that barriers together on one joined collective. */
struct gbo_set {
	struct fid_av_set *av_set;
	struct fid_mc *mc;
	fi_addr_t coll_addr;
	uint64_t barriers;	/* completed through this set */
	uint32_t member_count;
	uint32_t group_index;	/* the device group (verbose lines) */
	int ext;		/* the provider answers FI_GBA_MC_OPS_1 */
};

/*
 * gbo_fabric_open - open the library's fabric, domain, AV, EQ, CQ and
 * RDM endpoint with FI_COLLECTIVE on GBA_BARRIER_PROVIDER, once (later
 * calls return the first result).  Returns GBO_OFFLOADED or
 * GBO_NO_PROVIDER (logged).
 */
enum gbo_reason gbo_fabric_open(void);

/*
 * gbo_fabric_name - this process's endpoint name: GBO_NAME_MAX bytes at
 * @name (zero-padded), its length in *@len.  gbo_fabric_open first.
 */
void gbo_fabric_name(uint8_t name[GBO_NAME_MAX], uint32_t *len);

/*
 * gbo_set_join - join the members named by @names (@count names of
 * @stride bytes, member i's first, of length @lens[i]) as member @me.
 * Every member calls it with the same list, in the same order relative
 * to its other joins of identical lists (the provider's rendezvous).
 * Returns GBO_OFFLOADED (the barrier runs on a device group; @set is
 * ready), another reason with @set joined in software (the caller
 * decides with the other members, then gbo_set_leave), or
 * GBO_JOIN_FAILED (nothing joined; logged).
 */
enum gbo_reason gbo_set_join(struct gbo_set *set, const uint8_t *names,
			     size_t stride, const uint32_t *lens,
			     uint32_t count, uint32_t me);

/*
 * gbo_set_leave - leave @set's collective.  @offloaded: its barriers ran
 * on the device; their count is then checked against the group's
 * RELEASE_SEQ (gbo_stats.confirmed).
 */
void gbo_set_leave(struct gbo_set *set, int offloaded);

/*
 * gbo_set_barrier - one barrier on @set: fi_barrier, then read the CQ
 * until it completes.  While the barrier is not released, @idle (if not
 * NULL) is called every few thousand polls to progress the program's
 * other communication.  Returns 0 or a negative -FI_E* (the barrier
 * failed: a member died or the device rejected an arrival; logged).
 */
int gbo_set_barrier(struct gbo_set *set, void (*idle)(void));

/* gbo_fabric_close - close everything gbo_fabric_open opened. */
void gbo_fabric_close(void);

#endif /* GBO_H */
