/* Counters (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context)
{
	return -FI_ENOSYS;
}
void gba_cntr_inc(struct gba_cntr *cntr)
{
}
void gba_cntr_inc_err(struct gba_cntr *cntr)
{
}
int gba_cntr_add_ep(struct gba_cntr *cntr, struct gba_ep *ep)
{
	return -FI_ENOSYS;
}
void gba_cntr_del_ep(struct gba_cntr *cntr, struct gba_ep *ep)
{
}
