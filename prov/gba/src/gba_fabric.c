/* Fabric (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	return -FI_ENOSYS;
}
