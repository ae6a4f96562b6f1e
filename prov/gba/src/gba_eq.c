/* Event queues (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context)
{
	return -FI_ENOSYS;
}
int gba_eq_write_event(struct gba_eq *eq, uint32_t event, const void *buf,
		       size_t len, uint64_t flags)
{
	return -FI_ENOSYS;
}
int gba_eq_write_error(struct gba_eq *eq, fid_t fid, void *context,
		       uint64_t data, int err, int prov_errno)
{
	return -FI_ENOSYS;
}
