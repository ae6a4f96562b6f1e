/*
 * libfabric "gba" provider: the fi_ops entries of objects that do not
 * support an operation (fi_ops.bind, .control, .ops_open, .close).
 */
#include "config.h"

#include "gba_prov.h"

/* gba_no_bind - fi_ops.bind for objects that bind to nothing: -FI_ENOSYS. */
int gba_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	FI_WARN(&gba_prov, FI_LOG_CORE, "fid class %zu: bind not supported\n",
		fid ? fid->fclass : 0);
	return -FI_ENOSYS;
}

/* gba_no_control - fi_ops.control without commands: -FI_ENOSYS. */
int gba_no_control(struct fid *fid, int command, void *arg)
{
	FI_INFO(&gba_prov, FI_LOG_CORE,
		"fid class %zu: control command %d not supported\n",
		fid ? fid->fclass : 0, command);
	return -FI_ENOSYS;
}

/* gba_no_ops_open - fi_open_ops(3): the provider has no extension ops. */
int gba_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	FI_INFO(&gba_prov, FI_LOG_CORE, "no extension ops \"%s\"\n",
		name ? name : "(null)");
	return -FI_ENOSYS;
}

/* gba_no_close - fi_close on an object that cannot be closed: -FI_ENOSYS. */
int gba_no_close(struct fid *fid)
{
	return -FI_ENOSYS;
}

/*
 * gba_ep_no_ops_open - fi_open_ops(3) on an endpoint or an alias: no
 * extension ops (-FI_ENOSYS).  Every endpoint fid of the provider has it
 * in its fi_ops, which is how gba_ep_of tells them from other fids.
 */
int gba_ep_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		       void **ops, void *context)
{
	return gba_no_ops_open(fid, name, flags, ops, context);
}
