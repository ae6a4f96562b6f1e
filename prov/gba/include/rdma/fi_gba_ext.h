/*
 * Extensions of the libfabric "gba" provider, for applications
 * (installed as <rdma/fi_gba_ext.h>, in the manner of <rdma/fi_cxi_ext.h>).
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
 * Other providers answer fi_open_ops with -FI_ENOSYS.  See fi_gba(7).
 */
#ifndef FI_GBA_EXT_H
#define FI_GBA_EXT_H

#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

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

#ifdef __cplusplus
}
#endif

#endif /* FI_GBA_EXT_H */
