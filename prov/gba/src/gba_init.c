/* Provider entry point (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

struct gba_params gba_params;
struct fi_provider gba_prov = {
	.name = GBA_PROV_NAME,
	.version = GBA_PROV_VERSION,
	.fi_version = GBA_FI_VERSION,
	.getinfo = gba_getinfo,
	.fabric = gba_fabric_open,
};
int gba_lock_init(struct gba_lock *lock, bool enabled)
{
	lock->enabled = enabled;
	return enabled ? -pthread_mutex_init(&lock->mutex, NULL) : 0;
}
void gba_lock_destroy(struct gba_lock *lock)
{
	if (lock->enabled)
		pthread_mutex_destroy(&lock->mutex);
}
int gba_errno_to_fi(int err)
{
	return err;
}
int gba_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}
int gba_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}
int gba_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	return -FI_ENOSYS;
}
FI_EXT_INI
{
	return &gba_prov;
}
