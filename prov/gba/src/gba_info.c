/* fi_getinfo (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	return -FI_ENODATA;
}
