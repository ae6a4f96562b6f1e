/*
 * libfabric "gba" provider: a joined collective (struct gba_mc), shared
 * by the barrier (gba_coll.c) and join/leave (gba_coll_join.c).
 */
#ifndef GBA_COLL_H
#define GBA_COLL_H

#include "gba_ep.h"

/* One queued barrier. */
struct gba_barrier_op {
	void *context;
	uint64_t flags;
};

/* Barriers one collective queues (GBA_TX_SIZE, the tx_attr->size). */
#define GBA_MC_QUEUE GBA_TX_SIZE
/*
 * Progress reads the head's release flag itself; gba_group_test (the
 * switch's error flags, lost peers) runs on the first unreleased poll of
 * a barrier and on every GBA_TEST_POLLS-th after, on every poll once past
 * the spin (struct gba_mc.spin_polls: progress may then yield on each; a
 * dead member went unnoticed for seconds under load with 16 yields
 * between tests).
 */
#define GBA_TEST_POLLS 16
/* Polls of an unreleased barrier between clock reads (timeout). */
#define GBA_TIMEOUT_POLLS 1024
/*
 * Polls of an unreleased barrier before progress starts yielding the CPU
 * (sched_yield once per progress call), so that more processes than
 * cores make progress (doc/design.md section 3, "Waiting").  A barrier on
 * idle cores is released well within this budget: no syscall.  A group
 * with more members than this host has online CPUs is oversubscribed on
 * the emulated device: its members stop spinning at once (as Open MPI's
 * mpi_yield_when_idle does when it detects oversubscription), and the
 * core library's gba_group_should_yield decides each time whether a
 * yield can help: it cannot when every member still to arrive runs on
 * another CPU, and then the member keeps polling.
 */
#define GBA_SPIN_POLLS 128

/* A joined collective (fi_join_collective's struct fid_mc). */
struct gba_mc {
	struct fid_mc mc_fid; /* mc_fid.fi_addr: the coll_addr */
	struct gba_ep *ep;
	struct gba_av_set *set;
	struct gba_group *grp;	       /* NULL: barriers in software */
	enum fi_gba_barrier_path path; /* why (fi_gba_mc_attr.barrier) */
	struct gba_swc *swc; /* the other collectives (gba_coll_sw.c) */
	uint32_t member_id;
	uint32_t member_count;
	TAILQ_ENTRY(gba_mc) entry; /* ep->mcs */
	/* Queue of barriers; the one at @head has arrived if in_flight. */
	struct gba_barrier_op ops[GBA_MC_QUEUE];
	uint64_t head, tail;
	bool in_flight;
	uint32_t seq;		       /* sequence of the head's arrival */
	const volatile uint64_t *flag; /* our release flag (gba_group_flag) */
	uint64_t arrive_ms;	       /* when it arrived (timeout) */
	uint32_t polls;		       /* since the last clock read */
	uint32_t waits;		       /* unreleased polls of the head */
	uint32_t spin_polls;	       /* waits before yielding */
	int error;		       /* sticky: positive FI_E* or 0 */
	int prov_errno;		       /* positive core errno */
	uint64_t error_info;	       /* ERROR_INFO when it failed */
};

/* How many times this endpoint joined a given member list. */
struct gba_join_count {
	uint64_t list_hash;
	uint64_t joins;
	UT_hash_handle hh;
};

/*
 * ep->pending changes only under the endpoint lock (or in the single
 * thread FI_THREAD_DOMAIN allows): a plain read-modify-write, no locked
 * instruction.  Progress reads it without the lock (a hint).
 */
static inline void gba_ep_pending_add(struct gba_ep *ep, int n)
{
	atomic_store_explicit(
		&ep->pending,
		atomic_load_explicit(&ep->pending, memory_order_relaxed) + n,
		memory_order_relaxed);
}

#endif /* GBA_COLL_H */
