/*
 * libfabric "gba" provider: domain (fi_domain(3)).
 *
 * A domain owns the MR key map, the deferred work queue (gba_deferred.c),
 * the list of its endpoints for domain-wide progress (gba_progress.c)
 * and, from the first collective join on, an open GBA device.  Every child
 * object (AV, CQ, counter, MR, endpoint) holds a reference; fi_close on a
 * domain with children returns -FI_EBUSY.  fi_query_atomic /
 * fi_query_collective are gba_atomic.c's and gba_coll.c's.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

/*
 * fi_close(3) on a domain: -FI_EBUSY while child objects are open;
 * releases the bound EQ and the device.  Returns 0 or -FI_EBUSY.
 */
static int gba_domain_close(struct fid *fid)
{
	struct gba_domain *domain =
		container_of(fid, struct gba_domain, domain_fid.fid);

	if (atomic_load(&domain->ref)) {
		FI_WARN(&gba_prov, FI_LOG_DOMAIN,
			"domain still has %d open objects (AV/CQ/counter/MR/"
			"endpoint)\n",
			atomic_load(&domain->ref));
		return -FI_EBUSY;
	}
	gba_progress_fini(domain);
	gba_work_fini(domain);
	if (domain->eq)
		atomic_fetch_sub(&domain->eq->ref, 1);
	if (domain->dev)
		gba_dev_close(domain->dev);
	gba_lock_destroy(&domain->lock);
	atomic_fetch_sub(&domain->fabric->ref, 1);
	free(domain);
	return 0;
}

/*
 * gba_domain_bind - fi_domain_bind(3): bind an EQ for asynchronous
 * control events.  @flags must be 0 (FI_REG_MR asynchronous registration
 * is not supported: registration is synchronous).  Returns 0, -FI_EINVAL
 * (not an EQ, EQ of another fabric, already bound), -FI_ENOSYS (flags).
 */
static int gba_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct gba_domain *domain =
		container_of(fid, struct gba_domain, domain_fid.fid);
	struct gba_eq *eq;

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return GBA_WARN_RET(
			FI_LOG_DOMAIN, -FI_EINVAL,
			"fi_domain_bind: only an EQ can be bound\n");
	if (flags)
		return GBA_WARN_RET(
			FI_LOG_DOMAIN, -FI_ENOSYS,
			"fi_domain_bind: flags 0x%llx not supported "
			"(registration is synchronous)\n",
			(unsigned long long)flags);
	eq = container_of(bfid, struct gba_eq, eq_fid.fid);
	if (eq->fabric != domain->fabric)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_domain_bind: EQ of another fabric\n");
	if (domain->eq)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_domain_bind: an EQ is already bound\n");
	atomic_fetch_add(&eq->ref, 1);
	domain->eq = eq;
	return 0;
}

/* fi_scalable_ep(3): not supported (max_ep_tx_ctx 1).  -FI_ENOSYS. */
static int gba_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			   struct fid_ep **sep, void *context)
{
	FI_WARN(&gba_prov, FI_LOG_DOMAIN,
		"scalable endpoints not supported (max_ep_tx_ctx 1)\n");
	return -FI_ENOSYS;
}

/* fi_stx_context(3): shared tx contexts are not supported.  -FI_ENOSYS. */
static int gba_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		       struct fid_stx **stx, void *context)
{
	FI_WARN(&gba_prov, FI_LOG_DOMAIN,
		"shared tx contexts not supported (max_ep_stx_ctx 0)\n");
	return -FI_ENOSYS;
}

/* fi_srx_context(3): shared rx contexts are not supported.  -FI_ENOSYS. */
static int gba_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		       struct fid_ep **rx_ep, void *context)
{
	FI_WARN(&gba_prov, FI_LOG_DOMAIN,
		"shared rx contexts not supported (max_ep_srx_ctx 0)\n");
	return -FI_ENOSYS;
}

/*
 * fi_endpoint2(3): fi_endpoint with @flags, which must be 0
 * (-FI_EINVAL).
 */
static int gba_endpoint2(struct fid_domain *domain, struct fi_info *info,
			 struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_endpoint2: flags 0x%llx not "
				    "supported\n",
				    (unsigned long long)flags);
	return gba_ep_open(domain, info, ep, context);
}

/*
 * gba_domain_ops_open - fi_open_ops(3) on a domain: no extension ops.
 * Returns -FI_EINVAL (bad arguments) or -FI_ENOSYS.
 */
static int gba_domain_ops_open(struct fid *fid, const char *name,
			       uint64_t flags, void **ops, void *context)
{
	if (!name || !ops || flags)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_open_ops: bad arguments\n");
	return gba_no_ops_open(fid, name, flags, ops, context);
}

static struct fi_ops gba_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_domain_close,
	.bind = gba_domain_bind,
	.control = gba_domain_control,
	.ops_open = gba_domain_ops_open,
};

static struct fi_ops_domain gba_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = gba_av_open,
	.cq_open = gba_cq_open,
	.endpoint = gba_ep_open,
	.scalable_ep = gba_scalable_ep,
	.cntr_open = gba_cntr_open,
	.poll_open = gba_poll_open,
	.stx_ctx = gba_stx_ctx,
	.srx_ctx = gba_srx_ctx,
	.query_atomic = gba_query_atomic,
	.query_collective = gba_query_collective,
	.endpoint2 = gba_endpoint2,
};

static struct fi_ops_mr gba_domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = gba_mr_reg,
	.regv = gba_mr_regv,
	.regattr = gba_mr_regattr,
};

/*
 * gba_domain_open - fi_domain(3).
 * @fabric: a gba fabric.
 * @info: an fi_info from fi_getinfo (possibly edited); checked again.
 * domain_attr->data_progress FI_PROGRESS_AUTO starts a progress thread
 * (gba_progress.c); unspecified takes FI_GBA_PROGRESS.
 * Returns 0, -FI_EINVAL (NULL arguments, info the provider cannot meet),
 * -FI_ENOMEM, -FI_EAGAIN (no progress thread).
 */
int gba_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct gba_fabric *fab;
	struct gba_domain *dom;
	int mr_mode;
	int ret;

	if (!fabric || !info || !domain)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_domain: NULL fabric, info or domain\n");
	fab = container_of(fabric, struct gba_fabric, fabric_fid);
	if (gba_info_check(fabric->api_version, info))
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_domain: info not supported by gba "
				    "(FI_LOG_LEVEL=info shows the field)\n");

	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;

	dom->threading = FI_THREAD_SAFE;
	dom->data_progress = gba_params.progress;
	dom->control_progress = FI_PROGRESS_MANUAL;
	dom->av_type = FI_AV_UNSPEC;
	mr_mode = 0;
	if (info->domain_attr) {
		if (info->domain_attr->threading)
			dom->threading = info->domain_attr->threading;
		if (info->domain_attr->data_progress)
			dom->data_progress = info->domain_attr->data_progress;
		if (info->domain_attr->control_progress)
			dom->control_progress =
				info->domain_attr->control_progress;
		dom->av_type = info->domain_attr->av_type;
		mr_mode = info->domain_attr->mr_mode;
	}
	/* v1.0 names: BASIC = provider keys + virtual addresses. */
	if (mr_mode == FI_MR_BASIC)
		dom->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	else if (mr_mode == FI_MR_SCALABLE || mr_mode == FI_MR_UNSPEC)
		dom->mr_mode = 0;
	else
		dom->mr_mode = mr_mode & (FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	/* a progress thread shares every object with the application */
	dom->locking = gba_threading_locks(dom->threading) ||
		       dom->data_progress == FI_PROGRESS_AUTO;
	dom->caps = info->caps ? info->caps : GBA_CAPS;
	dom->api_version = fabric->api_version;
	dom->next_key = 1;
	atomic_init(&dom->ref, 0);
	atomic_init(&dom->ncq, 0);
	atomic_init(&dom->ncntr, 0);
	atomic_init(&dom->nmr, 0);
	atomic_init(&dom->nep, 0);
	ret = gba_lock_init(&dom->lock, dom->locking);
	if (ret)
		goto err_free;
	ret = gba_work_init(dom);
	if (ret)
		goto err_lock;
	ret = gba_progress_init(dom);
	if (ret)
		goto err_work;
	dom->fabric = fab;
	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &gba_domain_fi_ops;
	dom->domain_fid.ops = &gba_domain_ops;
	dom->domain_fid.mr = &gba_domain_mr_ops;
	atomic_fetch_add(&fab->ref, 1);
	if (fi_log_enabled(&gba_prov, FI_LOG_INFO, FI_LOG_DOMAIN)) {
		/* fi_tostr's buffer is shared: one per value */
		char thr[64], mr[128], cp[64], dp[64];

		FI_INFO(&gba_prov, FI_LOG_DOMAIN,
			"domain opened: threading %s (%s), mr_mode %s, "
			"progress control %s data %s%s\n",
			fi_tostr_r(thr, sizeof(thr), &dom->threading,
				   FI_TYPE_THREADING),
			dom->locking ? "locked" : "lock-free",
			dom->mr_mode ? fi_tostr_r(mr, sizeof(mr), &dom->mr_mode,
						  FI_TYPE_MR_MODE)
				     : "user keys, offsets",
			fi_tostr_r(cp, sizeof(cp), &dom->control_progress,
				   FI_TYPE_PROGRESS),
			fi_tostr_r(dp, sizeof(dp), &dom->data_progress,
				   FI_TYPE_PROGRESS),
			dom->data_progress == FI_PROGRESS_AUTO
				? " (progress thread)"
				: "");
	}
	*domain = &dom->domain_fid;
	return 0;
err_work:
	gba_work_fini(dom);
err_lock:
	gba_lock_destroy(&dom->lock);
err_free:
	free(dom);
	return ret;
}
