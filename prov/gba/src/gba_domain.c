/* Domain (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	return -FI_ENOSYS;
}
int gba_domain_dev(struct gba_domain *domain, struct gba_dev **devp)
{
	return -FI_ENOSYS;
}
