/*
 * libfabric "gba" provider: fabric (fi_fabric(3)) and fi_trywait
 * (fi_poll(3)).  Wait sets are gba_wait_set.c's.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

/* ---- fi_trywait --------------------------------------------------------- */

/*
 * Progress and readiness test of a CQ, EQ, counter or wait set (see
 * gba_wait_set_ready in gba_prov.h).  Unknown classes are "not ready"
 * (the caller validated them).
 */
static bool gba_fid_ready(struct fid *fid, bool *pending)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		return gba_cq_ready(
			container_of(fid, struct gba_cq, cq_fid.fid), pending);
	case FI_CLASS_EQ:
		return gba_eq_ready(
			container_of(fid, struct gba_eq, eq_fid.fid));
	case FI_CLASS_CNTR:
		return gba_cntr_ready(
			container_of(fid, struct gba_cntr, cntr_fid.fid),
			pending);
	case FI_CLASS_WAIT:
		return gba_wait_set_ready(
			container_of(fid, struct gba_wait_set, wait_fid.fid),
			pending);
	default:
		return false;
	}
}

/*
 * The wait object of a CQ, EQ, counter or wait set; NULL for other
 * classes.
 */
static struct gba_wait *gba_fid_wait(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		return &container_of(fid, struct gba_cq, cq_fid.fid)->wait;
	case FI_CLASS_EQ:
		return &container_of(fid, struct gba_eq, eq_fid.fid)->wait;
	case FI_CLASS_CNTR:
		return &container_of(fid, struct gba_cntr, cntr_fid.fid)->wait;
	case FI_CLASS_WAIT:
		return &container_of(fid, struct gba_wait_set, wait_fid.fid)
				->wait;
	default:
		return NULL;
	}
}

/*
 * gba_trywait - fi_trywait(3): before blocking on the fds of @fids, make
 * sure none has something to read.  Resets the fds' signals first, so a
 * later event signals again.  Returns 0 (safe to block), -FI_EAGAIN
 * (read first), -FI_EINVAL (NULL, wrong class or FI_WAIT_NONE object).
 */
static int gba_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	struct gba_wait *wait;
	int i;

	if (count < 0 || (count && !fids))
		return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
				    "fi_trywait: bad fid array\n");
	for (i = 0; i < count; i++) {
		if (!fids[i])
			return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
					    "fi_trywait: NULL fid %d\n", i);
		wait = gba_fid_wait(fids[i]);
		if (!wait)
			return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
					    "fi_trywait: fid class %zu has no "
					    "wait object\n",
					    fids[i]->fclass);
		if (wait->type == FI_WAIT_NONE)
			return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
					    "fi_trywait: object opened with "
					    "FI_WAIT_NONE\n");
		gba_wait_reset(wait);
	}
	for (i = 0; i < count; i++) {
		bool pending = false;

		if (gba_fid_ready(fids[i], &pending) || pending)
			return -FI_EAGAIN;
	}
	return 0;
}

/* ---- Fabric ------------------------------------------------------------- */

static int gba_fabric_close(struct fid *fid)
{
	struct gba_fabric *fabric =
		container_of(fid, struct gba_fabric, fabric_fid.fid);

	if (atomic_load(&fabric->ref)) {
		FI_WARN(&gba_prov, FI_LOG_FABRIC,
			"fabric still has %d open domains/EQs/wait sets\n",
			atomic_load(&fabric->ref));
		return -FI_EBUSY;
	}
	free(fabric);
	return 0;
}

/* fi_passive_ep(3): FI_EP_MSG is not supported.  -FI_ENOSYS. */
static int gba_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_pep **pep, void *context)
{
	FI_WARN(&gba_prov, FI_LOG_FABRIC,
		"passive endpoints (FI_EP_MSG) not supported\n");
	return -FI_ENOSYS;
}

/* fi_domain2(3): fi_domain with @flags, which must be 0 (-FI_EINVAL). */
static int gba_domain2(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **dom, uint64_t flags, void *context)
{
	if (flags)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_domain2: flags 0x%llx not supported\n",
				    (unsigned long long)flags);
	return gba_domain_open(fabric, info, dom, context);
}

static struct fi_ops gba_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_fabric_close,
	.bind = gba_no_bind,
	.control = gba_no_control,
	.ops_open = gba_no_ops_open,
};

static struct fi_ops_fabric gba_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = gba_domain_open,
	.passive_ep = gba_passive_ep,
	.eq_open = gba_eq_open,
	.wait_open = gba_wait_set_open,
	.trywait = gba_trywait,
	.domain2 = gba_domain2,
};

/*
 * gba_fabric_open - fi_provider.fabric, reached through fi_fabric(3).
 * @attr: name must be "gba" (or NULL); prov_name is matched by libfabric.
 * Returns 0, -FI_EINVAL (NULL arguments), -FI_ENODATA (another fabric's
 * name), -FI_ENOMEM.
 */
int gba_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct gba_fabric *fab;

	if (!attr || !fabric)
		return GBA_WARN_RET(FI_LOG_FABRIC, -FI_EINVAL,
				    "fi_fabric: NULL attr or fabric\n");
	if (attr->name && strcmp(attr->name, GBA_FABRIC_NAME))
		return GBA_WARN_RET(FI_LOG_FABRIC, -FI_ENODATA,
				    "fi_fabric: unknown fabric \"%s\"\n",
				    attr->name);
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	atomic_init(&fab->ref, 0);
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &gba_fabric_fi_ops;
	fab->fabric_fid.ops = &gba_fabric_ops;
	fab->fabric_fid.api_version =
		attr->api_version ? attr->api_version : GBA_FI_VERSION;
	*fabric = &fab->fabric_fid;
	return 0;
}
