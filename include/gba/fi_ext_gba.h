/*
 * Extensions of the libfabric "gba" provider, for applications
 * (installed as <gba/fi_ext_gba.h>, in the manner of <rdma/fi_cxi_ext.h>
 * and <rdma/fi_ext_usnic.h>; fi_gba(7) documents them).  Each is a table
 * of functions that fi_open_ops(3) returns for its name on an object of
 * the provider; other providers answer -FI_ENOSYS.
 *
 * Collective query (FI_GBA_MC_OPS_1): whether the barrier of a joined
 * collective runs on a GBA hardware group or in software, and why.  The
 * libfabric collective API has no such query; a client that must decide,
 * together with the other members, between the provider's barrier and a
 * barrier of its own (the barrier-offload library, libgba_barrier(7))
 * asks through fi_open_ops(3) on the joined collective:
 *
 *	struct fi_gba_mc_ops *ops;
 *	struct fi_gba_mc_attr attr;
 *
 *	if (!fi_open_ops(&mc->fid, FI_GBA_MC_OPS_1, 0, (void **)&ops, NULL))
 *		ops->query(mc, &attr);
 *
 * Completion and event injection (FI_GBA_CQ_OPS_1 on a CQ,
 * FI_GBA_EQ_OPS_1 on an EQ): an application queues entries of its own,
 * successful or in error, on a CQ or EQ of the provider, which readers
 * and waiters (fi_cq_read, fi_cq_sread, wait sets) see as the provider's
 * own: for user-level notification between threads that wait on one CQ.
 */
#ifndef FI_EXT_GBA_H
#define FI_EXT_GBA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_GBA_MC_OPS_1 "fi_gba_mc_ops_1"

/* Where a joined collective's barriers run (fi_gba_mc_attr.barrier). */
enum fi_gba_barrier_path {
	FI_GBA_BARRIER_DEVICE = 0,   /* a hardware group of the GBA device */
	FI_GBA_BARRIER_SW_DISABLED,  /* software: FI_GBA_OFFLOAD=0 */
	FI_GBA_BARRIER_SW_MEMBERS,   /* software: more members than the
				      * device takes (GBA_REG_MAX_MEMBERS) */
	FI_GBA_BARRIER_SW_NO_DEVICE, /* software: no GBA device opened */
	FI_GBA_BARRIER_SW_NO_GROUP,  /* software: every hardware group in use */
};

/* What query reports of a joined collective. */
struct fi_gba_mc_attr {
	uint32_t member_id;	/* this endpoint's position in the AV set */
	uint32_t member_count;	/* members of the set */
	uint32_t barrier;	/* enum fi_gba_barrier_path */
	uint32_t group_index;	/* hardware group (FI_GBA_BARRIER_DEVICE) */
	uint64_t release_seq;	/* the group's RELEASE_SEQ register: the
				 * sequence of the last barrier the device
				 * released (0 in software) */
	uint64_t barriers;	/* barriers this member completed on the
				 * hardware group, successful or not (0 in
				 * software) */
};

struct fi_gba_mc_ops {
	size_t size;	/* sizeof(struct fi_gba_mc_ops) */
	/*
	 * query - fill @attr for the joined collective @mc (a struct fid_mc
	 * returned by fi_join_collective on a gba endpoint).  Reads the
	 * device's registers: call it outside the barrier's hot path.
	 * Returns 0 or -FI_EINVAL (NULL argument).
	 */
	int (*query)(struct fid_mc *mc, struct fi_gba_mc_attr *attr);
};

#define FI_GBA_CQ_OPS_1 "gba_cq_ext_v1"
#define FI_GBA_EQ_OPS_1 "gba_eq_ext_v1"

struct fi_gba_cq_ops {
	size_t size;	/* sizeof(struct fi_gba_cq_ops) */
	/*
	 * write - queue a successful completion on @cq with the fields of a
	 * struct fi_cq_tagged_entry (@len bytes, @buf, remote CQ @data,
	 * @tag; @src is what fi_cq_readfrom reports, FI_ADDR_NOTAVAIL if
	 * none).  A full CQ keeps it on its overflow list.  Returns 0,
	 * -FI_EINVAL (NULL @cq), -FI_ENOMEM (full and no overflow entry:
	 * lost, logged).
	 */
	int (*write)(struct fid_cq *cq, void *context, uint64_t flags,
		     size_t len, void *buf, uint64_t data, uint64_t tag,
		     fi_addr_t src);
	/*
	 * write_error - queue an error completion: fi_cq_readerr returns
	 * @err (a positive FI_E* code), @prov_errno, @len, @olen and a copy
	 * of @err_data_size bytes of @err_data (at most 64).  Returns 0,
	 * -FI_EINVAL (NULL @cq, @err not positive, err_data too long or
	 * NULL with a size), -FI_ENOMEM (as write).
	 */
	int (*write_error)(struct fid_cq *cq, void *context, uint64_t flags,
			   int err, int prov_errno, size_t len, size_t olen,
			   const void *err_data, size_t err_data_size);
	/* has_space - true if @n more entries fit without overflow. */
	bool (*has_space)(struct fid_cq *cq, size_t n);
};

struct fi_gba_eq_ops {
	size_t size;	/* sizeof(struct fi_gba_eq_ops) */
	/*
	 * write_error - queue an error entry on @eq: fi_eq_readerr returns
	 * @fid, @context, @data, @err (a positive FI_E* code) and
	 * @prov_errno.  A full EQ keeps it beyond its size, as the
	 * provider's own entries.  Returns 0, -FI_EINVAL (NULL @eq, @err
	 * not positive), -FI_ENOMEM (no memory: lost, logged).
	 */
	int (*write_error)(struct fid_eq *eq, fid_t fid, void *context,
			   uint64_t data, int err, int prov_errno);
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_GBA_H */
