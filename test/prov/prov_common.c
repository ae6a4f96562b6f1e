/* Helpers shared by the provider unit tests; see prov_common.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "prov_common.h"

struct fi_info *t_hints;
struct fi_info *t_info;
struct fid_fabric *t_fabric;
struct fid_domain *t_domain;
int prov_ini_calls;

/* The provider's DSO entry point, linked into this program (gba_init.c). */
struct fi_provider *fi_prov_ini(void);

/*
 * Before main: make libfabric load the test-only module (PROV_SHIM_DIR,
 * set by the build) instead of prov/gba/.libs, for this process and the
 * processes it forks.
 */
__attribute__((constructor)) static void prov_use_shim(void)
{
	setenv("FI_PROVIDER_PATH", PROV_SHIM_DIR, 1);
}

/*
 * prov_test_ini - called by the test-only module's fi_prov_ini: run this
 * program's copy of the provider's fi_prov_ini and return its provider.
 * Exported from the program (linked with -export-dynamic).
 */
struct fi_provider *prov_test_ini(void)
{
	prov_ini_calls++;
	return fi_prov_ini();
}

struct fi_info *prov_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	cr_assert_not_null(hints);
	hints->fabric_attr->prov_name = strdup("gba");
	cr_assert_not_null(hints->fabric_attr->prov_name);
	return hints;
}

static void prov_setup_hints(struct fi_info *hints)
{
	int ret;

	t_hints = hints;
	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, t_hints, &t_info);
	cr_assert_eq(ret, 0, "fi_getinfo: %s (FI_PROVIDER_PATH=%s)",
		     fi_strerror(-ret), getenv("FI_PROVIDER_PATH"));
	cr_assert_str_eq(t_info->fabric_attr->prov_name, "gba");
	ret = fi_fabric(t_info->fabric_attr, &t_fabric, NULL);
	cr_assert_eq(ret, 0, "fi_fabric: %s", fi_strerror(-ret));
	ret = fi_domain(t_fabric, t_info, &t_domain, NULL);
	cr_assert_eq(ret, 0, "fi_domain: %s", fi_strerror(-ret));
	cr_assert_eq(prov_ini_calls, 1,
		     "libfabric did not load this program's provider "
		     "(FI_PROVIDER_PATH=%s)",
		     getenv("FI_PROVIDER_PATH"));
}

void prov_setup_mr_mode(int mr_mode)
{
	struct fi_info *hints = prov_hints();

	hints->domain_attr->mr_mode = mr_mode;
	prov_setup_hints(hints);
}

void prov_setup_threading(enum fi_threading threading)
{
	struct fi_info *hints = prov_hints();

	hints->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	hints->domain_attr->threading = threading;
	prov_setup_hints(hints);
}

void prov_setup(void)
{
	prov_setup_mr_mode(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
}

void prov_teardown(void)
{
	if (t_domain)
		cr_expect_eq(fi_close(&t_domain->fid), 0);
	if (t_fabric)
		cr_expect_eq(fi_close(&t_fabric->fid), 0);
	fi_freeinfo(t_info);
	fi_freeinfo(t_hints);
	t_domain = NULL;
	t_fabric = NULL;
	t_info = NULL;
	t_hints = NULL;
}

struct gba_addr prov_addr(uint32_t pid, uint32_t ep)
{
	struct gba_addr a;

	memset(&a, 0, sizeof(a));
	a.magic = GBA_ADDR_MAGIC;
	a.version = GBA_ADDR_VERSION;
	a.pid = pid;
	a.ep_id = ep;
	a.host_id = gba_host_id();
	return a;
}

struct gba_addr prov_absent_addr(void)
{
	return prov_addr(UINT32_C(1) << 30, 1);
}

uint64_t prov_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
