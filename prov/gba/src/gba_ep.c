/*
 * libfabric "gba" provider: the endpoint (fi_endpoint(3)).
 *
 * FI_EP_RDM only.  An endpoint owns its address (struct gba_addr: host,
 * process, endpoint number), its binds (AV, EQ, tx/rx CQ, counters per
 * event) and its collective state (gba_coll.c).  Every endpoint of the
 * process is on a registry so that the direct path can reach another
 * endpoint of the same process (gba_ep_target); reaching the endpoint
 * itself takes no lock.
 *
 * The data verbs live in gba_msg.c (messages), gba_rma.c and
 * gba_atomic.c (direct path to this process, the engine beyond it) and
 * gba_coll.c (barriers).  Each endpoint owns an engine endpoint
 * (gba_eng.c) whose receive queue its progress polls.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

static struct fi_ops gba_ep_fi_ops;

/* fi_close(3) of an alias: the endpoint stays. */
static int gba_alias_close(struct fid *fid)
{
	struct gba_ep_view *alias =
		container_of(fid, struct gba_ep_view, ep_fid.fid);

	atomic_fetch_sub(&alias->ep->ref, 1);
	free(alias);
	return 0;
}

static struct fi_ops gba_alias_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_alias_close,
	.bind = gba_no_bind,
	.control = gba_no_control,
	.ops_open = gba_ep_no_ops_open,
};

/*
 * FI_ALIAS (fi_ep_alias(3)): @arg is a struct fi_alias; flags FI_TRANSMIT
 * and/or FI_RECV select which default op flags the alias carries (the
 * other bits of flags).  Returns 0, -FI_EINVAL, -FI_ENOMEM.
 */
static int gba_ep_alias(struct gba_ep *ep, struct fi_alias *arg)
{
	uint64_t dir, flags;
	struct gba_ep_view *alias;

	if (!arg || !arg->fid)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "FI_ALIAS: NULL argument\n");
	dir = arg->flags & (FI_TRANSMIT | FI_RECV);
	flags = arg->flags & ~(FI_TRANSMIT | FI_RECV);
	if (!dir)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "FI_ALIAS: flags need FI_TRANSMIT and/or "
				    "FI_RECV\n");
	alias = calloc(1, sizeof(*alias));
	if (!alias)
		return -FI_ENOMEM;
	alias->ep_fid = ep->view.ep_fid;
	alias->ep_fid.fid.ops = &gba_alias_fi_ops;
	alias->ep = ep;
	alias->tx_op_flags = dir & FI_TRANSMIT ? flags : ep->view.tx_op_flags;
	alias->rx_op_flags = dir & FI_RECV ? flags : ep->view.rx_op_flags;
	atomic_fetch_add(&ep->ref, 1);
	*arg->fid = &alias->ep_fid.fid;
	return 0;
}

/* ---- binds ------------------------------------------------------------ */

/* Counter slots selected by fi_ep_bind flags on a counter. */
static const struct {
	uint64_t flag;
	enum gba_cntr_slot slot;
} gba_ep_cntr_flags[] = {
	{FI_SEND, GBA_CNTR_SEND},
	{FI_RECV, GBA_CNTR_RECV},
	{FI_READ, GBA_CNTR_READ},
	{FI_WRITE, GBA_CNTR_WRITE},
	{FI_REMOTE_READ, GBA_CNTR_REMOTE_READ},
	{FI_REMOTE_WRITE, GBA_CNTR_REMOTE_WRITE},
};

#define GBA_EP_CNTR_BIND_FLAGS                                                 \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |             \
	 FI_REMOTE_WRITE)

/*
 * Progress source of the CQs and counters @ctx (an endpoint) is bound to:
 * progress it and say whether it has work in flight.
 */
static int gba_ep_progress_src(void *ctx, bool *pending)
{
	struct gba_ep *ep = ctx;
	int n = gba_ep_progress(ep);

	if (pending && gba_ep_pending(ep))
		*pending = true;
	return n;
}

/* Bind a CQ for FI_TRANSMIT and/or FI_RECV.  0 or -FI_E*. */
static int gba_ep_bind_cq(struct gba_ep *ep, struct gba_cq *cq, uint64_t flags)
{
	int ret;

	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EBADFLAGS,
				    "CQ bind: flags 0x%llx not supported\n",
				    (unsigned long long)flags);
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EBADFLAGS,
				    "CQ bind needs FI_TRANSMIT or FI_RECV\n");
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "CQ bind: a CQ is already bound for "
				    "that direction\n");
	if (flags & FI_TRANSMIT) {
		ret = gba_cq_bind_progress(cq, ep, gba_ep_progress_src);
		if (ret)
			return ret;
		ep->tx_cq = cq;
		ep->tx_selective = !!(flags & FI_SELECTIVE_COMPLETION);
	}
	if (flags & FI_RECV) {
		ret = gba_cq_bind_progress(cq, ep, gba_ep_progress_src);
		if (ret) {
			if (ep->tx_cq == cq && (flags & FI_TRANSMIT)) {
				gba_cq_unbind_progress(cq, ep);
				ep->tx_cq = NULL;
			}
			return ret;
		}
		ep->rx_cq = cq;
		ep->rx_selective = !!(flags & FI_SELECTIVE_COMPLETION);
	}
	return 0;
}

/* Bind a counter for the events in @flags.  0 or -FI_E*. */
static int gba_ep_bind_cntr(struct gba_ep *ep, struct gba_cntr *cntr,
			    uint64_t flags)
{
	size_t i;
	int ret;

	if (!flags || (flags & ~GBA_EP_CNTR_BIND_FLAGS))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EBADFLAGS,
				    "counter bind: flags 0x%llx not "
				    "supported\n",
				    (unsigned long long)flags);
	for (i = 0;
	     i < sizeof(gba_ep_cntr_flags) / sizeof(gba_ep_cntr_flags[0]); i++)
		if ((flags & gba_ep_cntr_flags[i].flag) &&
		    ep->cntrs[gba_ep_cntr_flags[i].slot])
			return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
					    "counter bind: a counter is "
					    "already bound for %s\n",
					    fi_tostr(&gba_ep_cntr_flags[i].flag,
						     FI_TYPE_CAPS));
	for (i = 0;
	     i < sizeof(gba_ep_cntr_flags) / sizeof(gba_ep_cntr_flags[0]);
	     i++) {
		if (!(flags & gba_ep_cntr_flags[i].flag))
			continue;
		ret = gba_cntr_bind_progress(cntr, ep, gba_ep_progress_src);
		if (ret) {
			while (i-- > 0) {
				if (!(flags & gba_ep_cntr_flags[i].flag))
					continue;
				gba_cntr_unbind_progress(cntr, ep);
				ep->cntrs[gba_ep_cntr_flags[i].slot] = NULL;
			}
			return ret;
		}
		ep->cntrs[gba_ep_cntr_flags[i].slot] = cntr;
	}
	return 0;
}

/*
 * gba_ep_bind - fi_ep_bind(3): AV, EQ, CQ (FI_TRANSMIT, FI_RECV,
 * FI_SELECTIVE_COMPLETION) or counter (FI_SEND, FI_RECV, FI_READ,
 * FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE) of the same domain, before
 * fi_enable.  Returns 0, -FI_EINVAL (NULL, foreign or second object of a
 * kind), -FI_EBADFLAGS, -FI_EOPBADSTATE (enabled), -FI_ENOSYS (other
 * classes), -FI_ENOMEM.
 */
static int gba_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct gba_ep *ep = container_of(fid, struct gba_ep, view.ep_fid.fid);
	int ret = 0;

	if (!bfid)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_ep_bind: NULL object\n");
	if (ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EOPBADSTATE,
				    "fi_ep_bind after fi_enable\n");

	gba_lock_acquire(&ep->lock);
	switch (bfid->fclass) {
	case FI_CLASS_AV: {
		struct gba_av *av =
			container_of(bfid, struct gba_av, av_fid.fid);

		if (av->domain != ep->domain || ep->av) {
			ret = GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
					   "AV bind: %s\n",
					   ep->av ? "an AV is already bound"
						  : "AV of another domain");
			break;
		}
		ep->av = av;
		atomic_fetch_add(&av->ref, 1);
		break;
	}
	case FI_CLASS_EQ: {
		struct gba_eq *eq =
			container_of(bfid, struct gba_eq, eq_fid.fid);

		if (eq->fabric != ep->domain->fabric || ep->eq) {
			ret = GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
					   "EQ bind: %s\n",
					   ep->eq ? "an EQ is already bound"
						  : "EQ of another fabric");
			break;
		}
		ep->eq = eq;
		atomic_fetch_add(&eq->ref, 1);
		break;
	}
	case FI_CLASS_CQ: {
		struct gba_cq *cq =
			container_of(bfid, struct gba_cq, cq_fid.fid);

		if (cq->domain != ep->domain) {
			ret = GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
					   "CQ bind: CQ of another domain\n");
			break;
		}
		ret = gba_ep_bind_cq(ep, cq, flags);
		break;
	}
	case FI_CLASS_CNTR: {
		struct gba_cntr *cntr =
			container_of(bfid, struct gba_cntr, cntr_fid.fid);

		if (cntr->domain != ep->domain) {
			ret = GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
					   "counter bind: counter of another "
					   "domain\n");
			break;
		}
		ret = gba_ep_bind_cntr(ep, cntr, flags);
		break;
	}
	default:
		ret = GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOSYS,
				   "fi_ep_bind: class %s not supported\n",
				   fi_tostr(&bfid->fclass, FI_TYPE_FID));
		break;
	}
	gba_lock_release(&ep->lock);
	return ret;
}

/* FI_ENABLE: an RDM endpoint needs its AV (fi_endpoint(3)). */
static int gba_ep_enable(struct gba_ep *ep)
{
	if (ep->enabled)
		return 0;
	if (!ep->av)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOAV,
				    "fi_enable: no AV bound\n");
	ep->enabled = true;
	return 0;
}

/*
 * FI_GETOPSFLAG / FI_SETOPSFLAG: @arg is a uint64_t * holding
 * FI_TRANSMIT or FI_RECV (which set) plus, for SETOPSFLAG, the flags.
 */
static int gba_ep_opsflag(struct gba_ep *ep, int command, uint64_t *arg)
{
	uint64_t dir = *arg & (FI_TRANSMIT | FI_RECV);
	uint64_t *target;

	if (dir == FI_TRANSMIT)
		target = &ep->view.tx_op_flags;
	else if (dir == FI_RECV)
		target = &ep->view.rx_op_flags;
	else
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "ops flag: need exactly one of "
				    "FI_TRANSMIT, FI_RECV\n");
	if (command == FI_GETOPSFLAG)
		*arg = *target;
	else
		*target = *arg & ~(FI_TRANSMIT | FI_RECV);
	return 0;
}

/*
 * gba_ep_control - fi_control(3) on an endpoint: FI_ENABLE (@arg unused),
 * FI_GETOPSFLAG / FI_SETOPSFLAG (uint64_t *).  Returns 0, -FI_ENOAV,
 * -FI_EINVAL, -FI_ENOSYS (other commands).
 */
static int gba_ep_control(struct fid *fid, int command, void *arg)
{
	struct gba_ep *ep = container_of(fid, struct gba_ep, view.ep_fid.fid);
	int ret;

	switch (command) {
	case FI_ENABLE:
		gba_lock_acquire(&ep->lock);
		ret = gba_ep_enable(ep);
		gba_lock_release(&ep->lock);
		return ret;
	case FI_ALIAS:
		return gba_ep_alias(ep, arg);
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		if (!arg)
			return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
					    "ops flag: NULL argument\n");
		return gba_ep_opsflag(ep, command, arg);
	default:
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOSYS,
				    "endpoint control %d not supported\n",
				    command);
	}
}

/*
 * gba_ep_close - fi_close(3): leaves the joined collectives, discards
 * queued triggered operations, drops every bind.  Returns 0.
 */
static int gba_ep_close(struct fid *fid)
{
	struct gba_ep *ep = container_of(fid, struct gba_ep, view.ep_fid.fid);
	size_t i;

	gba_progress_del_ep(ep->domain, ep);
	gba_ep_close_mcs(ep);
	gba_trigger_drain_ep(ep);
	gba_work_close_ep(ep);

	gba_peer_unregister(ep);

	if (ep->tx_cq)
		gba_cq_unbind_progress(ep->tx_cq, ep);
	if (ep->rx_cq)
		gba_cq_unbind_progress(ep->rx_cq, ep);
	for (i = 0; i < GBA_CNTR_MAX; i++)
		if (ep->cntrs[i])
			gba_cntr_unbind_progress(ep->cntrs[i], ep);
	if (ep->av)
		atomic_fetch_sub(&ep->av->ref, 1);
	if (ep->eq)
		atomic_fetch_sub(&ep->eq->ref, 1);
	gba_eng_close(ep);
	gba_coll_fini(ep);
	gba_lock_destroy(&ep->lock);
	atomic_fetch_sub(&ep->domain->nep, 1);
	atomic_fetch_sub(&ep->domain->ref, 1);
	free(ep);
	return 0;
}

static struct fi_ops gba_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_ep_close,
	.bind = gba_ep_bind,
	.control = gba_ep_control,
	.ops_open = gba_ep_no_ops_open,
};

/* ---- fi_ops_ep -------------------------------------------------------- */

/*
 * gba_ep_cancel - fi_cancel(3): a triggered operation still waiting for
 * its counter, or a barrier that has not arrived yet, is cancelled (an
 * FI_ECANCELED error completion); anything else has completed or is in
 * the device.  Returns 0 or -FI_ENOENT.
 */
static ssize_t gba_ep_cancel(fid_t fid, void *context)
{
	struct gba_ep *ep = container_of(fid, struct gba_ep, view.ep_fid.fid);

	if (!gba_trigger_cancel(ep, context))
		return 0;
	if (!gba_msg_cancel(ep, context))
		return 0;
	return gba_coll_cancel(ep, context);
}

/*
 * fi_getopt(3): FI_OPT_ENDPOINT / FI_OPT_MIN_MULTI_RECV (size_t, bytes).
 * Returns 0, -FI_EINVAL (NULL or short buffer), -FI_ENOPROTOOPT.
 */
static int gba_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct gba_ep *ep = container_of(fid, struct gba_ep, view.ep_fid.fid);

	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MIN_MULTI_RECV)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen || *optlen < sizeof(size_t))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_getopt: buffer too small\n");
	*(size_t *)optval = ep->min_multi_recv;
	*optlen = sizeof(size_t);
	return 0;
}

/* fi_setopt(3): FI_OPT_ENDPOINT / FI_OPT_MIN_MULTI_RECV (size_t). */
static int gba_ep_setopt(fid_t fid, int level, int optname, const void *optval,
			 size_t optlen)
{
	struct gba_ep *ep = container_of(fid, struct gba_ep, view.ep_fid.fid);

	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MIN_MULTI_RECV)
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(size_t))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_setopt: FI_OPT_MIN_MULTI_RECV takes "
				    "a size_t\n");
	ep->min_multi_recv = *(const size_t *)optval;
	return 0;
}

/* fi_tx_context / fi_rx_context: scalable endpoints absent.  -FI_ENOSYS. */
static int gba_ep_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		      struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int gba_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

/* fi_rx_size_left / fi_tx_size_left (deprecated).  -FI_ENOSYS. */
static ssize_t gba_ep_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

static struct fi_ops_ep gba_ep_base_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = gba_ep_cancel,
	.getopt = gba_ep_getopt,
	.setopt = gba_ep_setopt,
	.tx_ctx = gba_ep_ctx,
	.rx_ctx = gba_ep_rx_ctx,
	.rx_size_left = gba_ep_size_left,
	.tx_size_left = gba_ep_size_left,
};

/* ---- fi_ops_cm -------------------------------------------------------- */

/*
 * gba_ep_getname - fi_getname(3): the endpoint's address (struct
 * gba_addr, 48 bytes).  *@addrlen is set to the size; -FI_ETOOSMALL if
 * the buffer is smaller (nothing copied).  Returns 0, -FI_EINVAL (NULL
 * addrlen, or NULL addr with a non-zero length), -FI_ETOOSMALL.
 */
static int gba_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct gba_ep *ep = container_of(fid, struct gba_ep, view.ep_fid.fid);
	size_t have;

	if (!addrlen || (!addr && *addrlen))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_getname: NULL argument\n");
	have = *addrlen;
	*addrlen = sizeof(ep->addr);
	if (have < sizeof(ep->addr))
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->addr, sizeof(ep->addr));
	return 0;
}

/* Connection management of connected endpoints: -FI_ENOSYS on RDM. */
static int gba_ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

static int gba_ep_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

static int gba_ep_connect(struct fid_ep *ep, const void *addr,
			  const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

static int gba_ep_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

static int gba_ep_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

static int gba_ep_reject(struct fid_pep *pep, fid_t handle, const void *param,
			 size_t paramlen)
{
	return -FI_ENOSYS;
}

static int gba_ep_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

static struct fi_ops_cm gba_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = gba_ep_setname,
	.getname = gba_ep_getname,
	.getpeer = gba_ep_getpeer,
	.connect = gba_ep_connect,
	.listen = gba_ep_listen,
	.accept = gba_ep_accept,
	.reject = gba_ep_reject,
	.shutdown = gba_ep_shutdown,
	.join = gba_ep_join,
};

/* ---- open ------------------------------------------------------------- */

/*
 * gba_ep_open - fi_endpoint(3).
 * @domain_fid: a gba domain.
 * @info: from fi_getinfo (may be edited): ep_attr->type FI_EP_RDM, caps
 *        within the provider's; checked with gba_info_check.
 * @ep_fid: receives the endpoint.
 * Returns 0, -FI_EINVAL (NULL arguments), -FI_ENODATA (info the provider
 * cannot meet), -FI_ENOSPC (GBA_EP_CNT endpoints open in the domain),
 * -FI_EADDRINUSE (source address taken), -FI_ENOMEM.
 */
int gba_ep_open(struct fid_domain *domain_fid, struct fi_info *info,
		struct fid_ep **ep_fid, void *context)
{
	struct gba_domain *domain;
	struct gba_ep *ep;
	int ret;

	if (!domain_fid || !ep_fid || !info)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_endpoint: NULL argument\n");
	domain = container_of(domain_fid, struct gba_domain, domain_fid);
	ret = gba_info_check(domain->api_version, info);
	if (ret)
		return ret;
	if (info->ep_attr && info->ep_attr->type != FI_EP_UNSPEC &&
	    info->ep_attr->type != FI_EP_RDM)
		return GBA_WARN_RET(
			FI_LOG_EP_CTRL, -FI_ENODATA,
			"fi_endpoint: endpoint type %s not "
			"supported (FI_EP_RDM)\n",
			fi_tostr(&info->ep_attr->type, FI_TYPE_EP_TYPE));
	if (atomic_fetch_add(&domain->nep, 1) >= GBA_EP_CNT) {
		atomic_fetch_sub(&domain->nep, 1);
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOSPC,
				    "fi_endpoint: %d endpoints already open "
				    "(ep_cnt)\n",
				    GBA_EP_CNT);
	}

	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		ret = -FI_ENOMEM;
		goto err_count;
	}
	ep->domain = domain;
	ep->caps = info->caps ? info->caps : GBA_CAPS;
	if (info->tx_attr)
		ep->view.tx_op_flags = info->tx_attr->op_flags;
	if (info->rx_attr)
		ep->view.rx_op_flags = info->rx_attr->op_flags;
	TAILQ_INIT(&ep->mcs);
	TAILQ_INIT(&ep->triggers);
	ret = gba_lock_init(&ep->lock, domain->locking);
	if (ret)
		goto err_free;

	ret = gba_peer_register(ep, info);
	if (ret)
		goto err_lock;
	ret = gba_eng_open(ep);
	if (ret)
		goto err_registry;
	ret = gba_progress_add_ep(domain, ep);
	if (ret) {
		gba_eng_close(ep);
		goto err_registry;
	}

	ep->view.ep = ep;
	ep->progress = gba_ep_progress;
	ep->view.ep_fid.fid.fclass = FI_CLASS_EP;
	ep->view.ep_fid.fid.context = context;
	ep->view.ep_fid.fid.ops = &gba_ep_fi_ops;
	ep->view.ep_fid.ops = &gba_ep_base_ops;
	ep->view.ep_fid.cm = &gba_ep_cm_ops;
	ep->view.ep_fid.msg = &gba_ep_msg_ops;
	ep->view.ep_fid.tagged = &gba_ep_tagged_ops;
	ep->view.ep_fid.rma = &gba_ep_rma_ops;
	ep->view.ep_fid.atomic = &gba_ep_atomic_ops;
	ep->view.ep_fid.collective = &gba_ep_collective_ops;
	atomic_fetch_add(&domain->ref, 1);
	*ep_fid = &ep->view.ep_fid;

	if (fi_log_enabled(&gba_prov, FI_LOG_INFO, FI_LOG_EP_CTRL)) {
		char str[GBA_ADDR_STRLEN];

		gba_addr_str(&ep->addr, str, sizeof(str));
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL, "endpoint %s opened\n", str);
	}
	return 0;

err_registry:
	gba_peer_unregister(ep);
err_lock:
	gba_lock_destroy(&ep->lock);
err_free:
	free(ep);
err_count:
	atomic_fetch_sub(&domain->nep, 1);
	return ret;
}
