/* Collectives (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

struct fi_ops_collective gba_ep_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
};

int gba_ep_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}
void gba_ep_close_mcs(struct gba_ep *ep)
{
}
int gba_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			 struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}
