/*
 * libfabric "gba" provider: the entry point and the provider structure.
 *
 * The stock libfabric (1.17) dlopen()s libgba-fi.so from FI_PROVIDER_PATH
 * (or <libdir>/libfabric) and calls fi_prov_ini(), which defines the
 * FI_GBA_* parameters (listed by `fi_info -e`), reads them once and
 * returns the provider structure.  See fi_provider(7).
 */
#include "config.h"

#include "gba_ep.h"

struct fi_provider gba_prov = {
	.name = GBA_PROV_NAME,
	.version = GBA_PROV_VERSION,
	.fi_version = GBA_FI_VERSION,
	.getinfo = gba_getinfo,
	.fabric = gba_fabric_open,
	.cleanup = gba_params_free,
};

/*
 * fi_prov_ini - the DSO entry point (rdma/providers/fi_prov.h).  Called
 * once by libfabric when it loads libgba-fi.so.
 */
FI_EXT_INI
{
	gba_params_define();
	gba_params_read();
	return &gba_prov;
}
