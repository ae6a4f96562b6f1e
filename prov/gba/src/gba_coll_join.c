/*
 * libfabric "gba" provider: joining and leaving collectives
 * (fi_join_collective(3), fi_close of the struct fid_mc) and the
 * collective's extension ops (FI_GBA_MC_OPS_1, fi_gba(7)).  Barriers on
 * a joined collective are gba_coll.c.
 *
 * fi_join_collective maps an AV set onto one hardware group of the device
 * (doc/design.md section 3, protocol step 1, done by the core library's
 * gba_group_join): every member passes the same rendezvous key, a hash of
 * the set's member addresses in set order and of how many times this
 * endpoint joined that same list before, so that members that join the
 * same sets in the same order meet in the same groups.  The member id is
 * the endpoint's position in the set.  The join completes at once: the
 * FI_JOIN_COMPLETE event is queued on the endpoint's EQ before
 * fi_join_collective returns.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gba_coll.h"

/* Leave @mc's group and free it (already off the endpoint's list). */
static void gba_mc_free(struct gba_mc *mc)
{
	if (mc->grp)
		gba_group_leave(mc->grp);
	if (mc->swc)
		gba_swc_close(mc->swc);
	atomic_fetch_sub(&mc->set->ref, 1);
	free(mc);
}

/*
 * fi_close(3) on a joined collective: -FI_EBUSY while barriers are queued
 * or in flight (the device holds this member's arrival); otherwise the
 * group is left (the last member resets and frees it).  Returns 0 or
 * -FI_EBUSY.
 */
static int gba_mc_close(struct fid *fid)
{
	struct gba_mc *mc = container_of(fid, struct gba_mc, mc_fid.fid);
	struct gba_ep *ep = mc->ep;

	gba_lock_acquire(&ep->lock);
	if (mc->head != mc->tail || gba_swc_busy(mc->swc)) {
		gba_lock_release(&ep->lock);
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EBUSY,
				    "collective has operations in flight: "
				    "progress the CQ until they complete\n");
	}
	TAILQ_REMOVE(&ep->mcs, mc, entry);
	gba_lock_release(&ep->lock);
	FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
		"left collective (member %u of %u)\n", mc->member_id,
		mc->member_count);
	gba_mc_free(mc);
	return 0;
}

/*
 * gba_mc_query - fi_gba_mc_ops.query (<gba/fi_ext_gba.h>): where @mc_fid's
 * barriers run and, on the device, its group's RELEASE_SEQ.  Returns 0 or
 * -FI_EINVAL.
 */
static int gba_mc_query(struct fid_mc *mc_fid, struct fi_gba_mc_attr *attr)
{
	struct gba_group_diag diag;
	struct gba_mc *mc;

	if (!mc_fid || !attr || mc_fid->fid.fclass != FI_CLASS_MC)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_gba_mc_ops query: bad arguments\n");
	mc = container_of(mc_fid, struct gba_mc, mc_fid);
	memset(attr, 0, sizeof(*attr));
	attr->member_id = mc->member_id;
	attr->member_count = mc->member_count;
	attr->barrier = mc->path;
	if (!mc->grp || gba_group_diag(mc->grp, &diag))
		return 0;
	attr->group_index = diag.index;
	attr->release_seq = diag.release_seq;
	gba_lock_acquire(&mc->ep->lock);
	attr->barriers = mc->head;
	gba_lock_release(&mc->ep->lock);
	return 0;
}

static struct fi_gba_mc_ops gba_mc_ext_ops = {
	.size = sizeof(struct fi_gba_mc_ops),
	.query = gba_mc_query,
};

/*
 * gba_mc_ops_open - fi_open_ops(3) on a joined collective:
 * FI_GBA_MC_OPS_1 returns struct fi_gba_mc_ops.  Returns 0, -FI_EINVAL,
 * -FI_ENOSYS (other names).
 */
static int gba_mc_ops_open(struct fid *fid, const char *name, uint64_t flags,
			   void **ops, void *context)
{
	if (!name || !ops)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_open_ops: bad arguments\n");
	if (strcmp(name, FI_GBA_MC_OPS_1))
		return gba_no_ops_open(fid, name, flags, ops, context);
	*ops = &gba_mc_ext_ops;
	return 0;
}

static struct fi_ops gba_mc_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_mc_close,
	.bind = gba_no_bind,
	.control = gba_no_control,
	.ops_open = gba_mc_ops_open,
};

/*
 * gba_ep_close_mcs - endpoint close: leave every collective.  Barriers
 * still queued are dropped without completions (the endpoint is going).
 */
void gba_ep_close_mcs(struct gba_ep *ep)
{
	struct gba_mc *mc;

	for (;;) {
		gba_lock_acquire(&ep->lock);
		mc = TAILQ_FIRST(&ep->mcs);
		if (mc) {
			TAILQ_REMOVE(&ep->mcs, mc, entry);
			gba_ep_pending_add(ep, -(int)(mc->tail - mc->head));
		}
		gba_lock_release(&ep->lock);
		if (!mc)
			break;
		if (mc->head != mc->tail)
			FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
				"endpoint closed with %llu barriers in "
				"flight: dropped\n",
				(unsigned long long)(mc->tail - mc->head));
		gba_mc_free(mc);
	}
}

/* gba_coll_fini - free the join counts (endpoint close). */
void gba_coll_fini(struct gba_ep *ep)
{
	struct gba_join_count *jc, *tmp;

	HASH_ITER(hh, ep->join_counts, jc, tmp) {
		HASH_DEL(ep->join_counts, jc);
		free(jc);
	}
}

/*
 * Rendezvous key of the next join of the member list @addrs (@count
 * addresses) by @ep: the list's hash, salted with the number of earlier
 * joins of the same list.  Never 0.  *@jcp is the list's count, to be
 * taken back if the join fails.  Locked.  Returns 0 or -FI_ENOMEM.
 */
static int gba_join_key(struct gba_ep *ep, const struct gba_addr *addrs,
			size_t count, uint64_t *key,
			struct gba_join_count **jcp)
{
	uint64_t list_hash = gba_addr_hash(addrs, count, 0);
	struct gba_join_count *jc;

	HASH_FIND(hh, ep->join_counts, &list_hash, sizeof(list_hash), jc);
	if (!jc) {
		jc = calloc(1, sizeof(*jc));
		if (!jc)
			return -FI_ENOMEM;
		jc->list_hash = list_hash;
		HASH_ADD(hh, ep->join_counts, list_hash, sizeof(list_hash), jc);
	}
	jc->joins++;
	*jcp = jc;
	*key = gba_addr_hash(addrs, count, jc->joins);
	if (!*key)
		*key = 1;
	return 0;
}

/*
 * The member addresses of @set in set order and @ep's position among them.
 * Returns 0, -FI_EINVAL (a member not in the AV, @ep not a member),
 * -FI_ENOMEM.  *@addrs is freed by the caller.
 */
static int gba_join_members(struct gba_ep *ep, struct gba_av_set *set,
			    struct gba_addr **addrs, uint32_t *member_id)
{
	const struct gba_addr *a;
	bool found = false;
	size_t i;

	*addrs = calloc(set->count, sizeof(**addrs));
	if (!*addrs)
		return -FI_ENOMEM;
	for (i = 0; i < set->count; i++) {
		a = gba_av_addr(set->av, set->members[i]);
		if (!a) {
			free(*addrs);
			return GBA_WARN_RET(
				FI_LOG_EP_CTRL, -FI_EINVAL,
				"join: set member fi_addr %llu "
				"was removed from the AV\n",
				(unsigned long long)set->members[i]);
		}
		(*addrs)[i] = *a;
		if (!found && gba_addr_equal(a, &ep->addr)) {
			*member_id = (uint32_t)i;
			found = true;
		}
	}
	if (!found) {
		free(*addrs);
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "join: this endpoint is not a member of "
				    "the AV set\n");
	}
	return 0;
}

/* Check the arguments of a join; the set to join in *@setp. */
static int gba_join_check(struct gba_ep *ep, const void *addr, uint64_t flags,
			  struct fid_mc **mc, struct gba_av_set **setp)
{
	const struct fi_collective_addr *caddr = addr;
	struct gba_av_set *set;

	if (!addr || !mc)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join: NULL argument\n");
	if (!(flags & FI_COLLECTIVE))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOSYS,
				    "fi_join: multicast groups are not "
				    "supported (use fi_join_collective)\n");
	if (flags & ~FI_COLLECTIVE)
		return GBA_WARN_RET(
			FI_LOG_EP_CTRL, -FI_EBADFLAGS,
			"fi_join_collective: flags 0x%llx not "
			"supported\n",
			(unsigned long long)(flags & ~FI_COLLECTIVE));
	if (!(ep->caps & FI_COLLECTIVE))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EOPNOTSUPP,
				    "fi_join_collective: endpoint opened "
				    "without FI_COLLECTIVE\n");
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EOPBADSTATE,
				    "fi_join_collective: endpoint not "
				    "enabled\n");
	if (!ep->eq)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOEQ,
				    "fi_join_collective: no EQ bound (the "
				    "join completes on the EQ)\n");
	set = caddr->set
		      ? gba_av_set_from_addr((fi_addr_t)(uintptr_t)caddr->set)
		      : gba_av_set_from_addr(caddr->coll_addr);
	if (!set)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join_collective: no gba AV set\n");
	if (set->av != ep->av)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join_collective: the set's AV is not "
				    "the endpoint's\n");
	if (!set->count)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join_collective: empty AV set\n");
	*setp = set;
	return 0;
}

/* Unreleased polls before yielding for a group of @members (see above). */
static uint32_t gba_mc_spin_polls(uint32_t members)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus > 0 && members > (uint32_t)cpus ? 1 : GBA_SPIN_POLLS;
}

/*
 * Attach to the device group of @gattr, or decide that the barrier runs
 * in software (*@grp NULL, logged): FI_GBA_OFFLOAD=0, more members than
 * the device takes, no device, members on several hosts (@hosts) with a
 * device whose groups reach one host (gba_dev_spans_hosts), or every
 * hardware group in use.  Every
 * member of a set meets the same conditions (same parameters, same
 * device), so all of them decide alike.  Returns 0 or a negative -FI_E*
 * for other device errors (-FI_EACCES/-FI_EPERM: the device is refused,
 * e.g. an emulated image of another user; -FI_EADDRINUSE: that member is
 * attached).
 */
static int gba_join_device(struct gba_ep *ep, struct gba_group_attr *gattr,
			   bool hosts, struct gba_group **grp,
			   enum fi_gba_barrier_path *path)
{
	struct gba_dev *dev;
	int ret;

	*grp = NULL;
	*path = FI_GBA_BARRIER_DEVICE;
	if (!gba_params.offload) {
		*path = FI_GBA_BARRIER_SW_DISABLED;
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: FI_GBA_OFFLOAD=0\n");
		return 0;
	}
	if (gattr->member_count > GBA_MAX_MEMBERS) {
		*path = FI_GBA_BARRIER_SW_MEMBERS;
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: %u members (the device takes "
			"%d)\n",
			gattr->member_count, GBA_MAX_MEMBERS);
		return 0;
	}
	ret = gba_domain_dev(ep->domain, &dev);
	if (ret == -FI_EACCES || ret == -FI_EPERM) {
		/* a device that is there but not ours (another user's image,
		 * or one planted under our name): an error, not a fallback */
		*path = FI_GBA_BARRIER_SW_NO_DEVICE;
		return GBA_WARN_RET(FI_LOG_EP_CTRL, ret,
				    "fi_join_collective: the GBA device is "
				    "refused: %s\n",
				    fi_strerror(-ret));
	}
	if (ret) {
		*path = FI_GBA_BARRIER_SW_NO_DEVICE;
		FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: no GBA device (%s)\n",
			fi_strerror(-ret));
		return 0;
	}
	if (hosts && !gba_dev_spans_hosts(dev)) {
		/* the emulated device's groups reach one host's processes */
		*path = FI_GBA_BARRIER_SW_NO_DEVICE;
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: members on several hosts and "
			"a device of one host (GBA_DEVICE=emu+tcp://... "
			"names a switch for all)\n");
		return 0;
	}
	ret = gba_group_join(dev, gattr, grp);
	if (ret == -ENOSPC) {
		*grp = NULL;
		*path = FI_GBA_BARRIER_SW_NO_GROUP;
		FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: all hardware groups in use\n");
		return 0;
	}
	if (ret) {
		*grp = NULL;
		return GBA_WARN_RET(FI_LOG_EP_CTRL, gba_errno_to_fi(ret),
				    "fi_join_collective: device group for %u "
				    "members: %s\n",
				    gattr->member_count, strerror(-ret));
	}
	return 0;
}

/* Queue FI_JOIN_COMPLETE for @mc on the endpoint's EQ. */
static int gba_join_complete(struct gba_mc *mc, void *context)
{
	struct fi_eq_entry entry = {
		.fid = &mc->mc_fid.fid,
		.context = context,
	};

	return gba_eq_write_event(mc->ep->eq, FI_JOIN_COMPLETE, &entry,
				  sizeof(entry), 0);
}

/*
 * gba_ep_join - fi_join_collective(3) (fi_join with FI_COLLECTIVE).
 * @addr: struct fi_collective_addr: the AV set to join (set, or coll_addr
 *        from fi_av_set_addr when set is NULL).  The endpoint must be a
 *        member; the set must be on the endpoint's AV.
 * @flags: FI_COLLECTIVE (added by fi_join_collective), nothing else.
 * @mc: receives the collective; fi_mc_addr() of it is the coll_addr of
 *      fi_barrier.  FI_JOIN_COMPLETE (fid = the mc, @context) is queued on
 *      the endpoint's EQ before this returns.
 * Returns 0, -FI_EINVAL (arguments, not a member, more than 708 members),
 * -FI_EBADFLAGS, -FI_ENOEQ, -FI_EOPBADSTATE (not enabled), -FI_ENOSPC
 * (every device group in use), -FI_EADDRINUSE (that member is attached
 * already), -FI_EOPNOTSUPP (FI_GBA_OFFLOAD=0), -FI_EAGAIN (EQ full),
 * -FI_ENODEV (no device), -FI_ENOMEM, -FI_ENOSYS (multicast join).
 */
int gba_ep_join(struct fid_ep *ep_fid, const void *addr, uint64_t flags,
		struct fid_mc **mcp, void *context)
{
	struct gba_ep *ep = container_of(ep_fid, struct gba_ep, view.ep_fid);
	struct gba_group_attr gattr = {0};
	struct gba_join_count *jc = NULL;
	struct gba_addr *addrs = NULL;
	struct gba_av_set *set;
	struct gba_mc *mc;
	bool hosts = false;
	uint32_t i;
	int ret;

	ret = gba_join_check(ep, addr, flags, mcp, &set);
	if (ret)
		return ret;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -FI_ENOMEM;

	gba_lock_acquire(&set->av->lock);
	ret = gba_join_members(ep, set, &addrs, &gattr.member_id);
	gattr.member_count = (uint32_t)set->count;
	gba_lock_release(&set->av->lock);
	if (ret)
		goto err_free;

	gba_lock_acquire(&ep->lock);
	ret = gba_join_key(ep, addrs, gattr.member_count, &gattr.key, &jc);
	gba_lock_release(&ep->lock);
	for (i = 0; !ret && i < gattr.member_count; i++)
		if (addrs[i].host_id != ep->addr.host_id)
			hosts = true;
	free(addrs);
	if (ret)
		goto err_free;

	ret = gba_join_device(ep, &gattr, hosts, &mc->grp, &mc->path);
	if (!ret)
		ret = gba_swc_open(ep, gattr.key, set, gattr.member_id,
				   &mc->swc);
	if (ret) {
		if (mc->grp)
			gba_group_leave(mc->grp);
		gba_lock_acquire(&ep->lock);
		jc->joins--;
		gba_lock_release(&ep->lock);
		goto err_free;
	}

	mc->mc_fid.fid.fclass = FI_CLASS_MC;
	mc->mc_fid.fid.context = context;
	mc->mc_fid.fid.ops = &gba_mc_fi_ops;
	mc->mc_fid.fi_addr = (fi_addr_t)(uintptr_t)mc;
	mc->ep = ep;
	mc->set = set;
	mc->member_id = gattr.member_id;
	mc->member_count = gattr.member_count;
	mc->spin_polls = gba_mc_spin_polls(mc->member_count);
	if (mc->grp)
		mc->flag = gba_group_flag(mc->grp, NULL);
	atomic_fetch_add(&set->ref, 1);

	gba_lock_acquire(&ep->lock);
	TAILQ_INSERT_TAIL(&ep->mcs, mc, entry);
	gba_lock_release(&ep->lock);

	ret = gba_join_complete(mc, context);
	if (ret) {
		gba_lock_acquire(&ep->lock);
		TAILQ_REMOVE(&ep->mcs, mc, entry);
		gba_lock_release(&ep->lock);
		gba_mc_free(mc);
		return GBA_WARN_RET(FI_LOG_EP_CTRL, ret,
				    "fi_join_collective: EQ full\n");
	}
	FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
		"joined collective: member %u of %u, key 0x%llx, barrier %s\n",
		mc->member_id, mc->member_count, (unsigned long long)gattr.key,
		mc->grp ? "on the device" : "in software");
	*mcp = &mc->mc_fid;
	return 0;

err_free:
	free(mc);
	return ret;
}

/*
 * gba_domain_dev - the domain's GBA device, opened on first use with
 * gba_dev_open(FI_GBA_DEVICE).  Returns 0 or the mapped error
 * (-FI_ENODEV, -FI_EACCES, -FI_EIO, -FI_ENOMEM, -FI_ENOSPC, -FI_EMFILE,
 * -FI_EINVAL).
 */
int gba_domain_dev(struct gba_domain *domain, struct gba_dev **devp)
{
	struct gba_dev_attr attr;
	int ret = 0;

	if (!domain || !devp)
		return -FI_EINVAL;
	gba_lock_acquire(&domain->lock);
	if (!domain->dev) {
		ret = gba_dev_open(gba_params.device, &domain->dev);
		if (ret) {
			domain->dev = NULL;
			FI_WARN(&gba_prov, FI_LOG_DOMAIN,
				"gba_dev_open(%s): %s\n",
				gba_params.device ? gba_params.device
						  : "default",
				gba_last_error(ret));
			ret = gba_errno_to_fi(ret);
		} else if (!gba_dev_query(domain->dev, &attr)) {
			FI_INFO(&gba_prov, FI_LOG_DOMAIN,
				"GBA device %s (%s): %u groups, %u members\n",
				attr.path ? attr.path : "?",
				attr.backend ? attr.backend : "?",
				attr.num_groups, attr.max_members);
		}
	}
	*devp = domain->dev;
	gba_lock_release(&domain->lock);
	return ret;
}
