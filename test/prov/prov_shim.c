/*
 * Test-only provider module libgbatest-fi.so (built by make check, never
 * installed).  The provider unit tests link the provider's sources
 * statically and point FI_PROVIDER_PATH here (prov_common.c), so the
 * stock libfabric dlopen()s this module, whose fi_prov_ini returns the
 * test program's copy of the provider: libfabric and the test then share
 * one copy, globals included, and the test calls the provider's internal
 * functions directly.  The program exports prov_test_ini (-export-dynamic).
 */
#include <rdma/providers/fi_prov.h>

struct fi_provider *prov_test_ini(void);

/* fi_prov_ini - the DSO entry point: the test program's provider. */
__attribute__((visibility("default"))) struct fi_provider *fi_prov_ini(void)
{
	return prov_test_ini();
}
