/* Address vectors (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context)
{
	return -FI_ENOSYS;
}
const struct gba_addr *gba_av_addr(struct gba_av *av, fi_addr_t fi_addr)
{
	return NULL;
}
fi_addr_t gba_av_find(struct gba_av *av, const struct gba_addr *addr)
{
	return FI_ADDR_NOTAVAIL;
}
