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
struct gba_internal_ops *t_int;

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
	ret = fi_open_ops(&t_domain->fid, GBA_INTERNAL_OPS_NAME, 0,
			  (void **)&t_int, NULL);
	cr_assert_eq(ret, 0, "fi_open_ops(%s): %s", GBA_INTERNAL_OPS_NAME,
		     fi_strerror(-ret));
	cr_assert_eq(t_int->size, sizeof(*t_int));
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

uint64_t prov_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
