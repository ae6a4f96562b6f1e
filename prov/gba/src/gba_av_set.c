/* AV sets (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_av_set_open(struct fid_av *av, struct fi_av_set_attr *attr,
		    struct fid_av_set **av_set, void *context)
{
	return -FI_ENOSYS;
}
