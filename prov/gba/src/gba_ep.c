/* Endpoints (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}
void gba_ep_progress(struct gba_ep *ep)
{
}
int gba_ep_tx_complete(struct gba_ep *ep, enum gba_cntr_slot slot,
		       uint64_t flags, void *context, size_t len)
{
	return -FI_ENOSYS;
}
