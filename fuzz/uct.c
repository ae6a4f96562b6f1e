/*
 * Fuzz harness: what the UCX transport unpacks from its peers (ucx/uct_gba):
 * remote keys (uct_rkey_unpack, uct_rkey_ptr and a load through the
 * pointer it gives, uct_rkey_release) and device and interface addresses
 * (uct_iface_is_reachable, uct_ep_create), through the UCT API of one
 * interface of the stock UCX with the build's libuct_gba.so loaded.
 *
 * A helper process holds a shared-memory region (gba_eng_seg_alloc); an
 * input can name it in its key (pid, file, cookie), so that the fuzzer
 * reaches the mapping of a real region with any length and address.
 *
 * Input: a packed key (uct_gba_packed_rkey_t), a byte of choices, a remote
 * address, a device address and an interface address.
 */
#include "config.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <uct/api/uct.h>

#include <gba/gba_addr.h>
#include <gba/gba_eng.h>

#include "fuzz.h"
#include "gba_iface.h"
#include "gba_md.h"

#define FUZZ_SEG_LEN (64 * 1024)

static uct_component_h comp;
static uct_component_h *components;
static uct_worker_h worker;
static ucs_async_context_t *async;
static uct_md_h md;
static uct_iface_h iface;
static struct gba_eng_seg helper; /* the helper's region, as it sent it */
static uct_gba_iface_addr_t own_addr;

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,     \
				#cond);                                        \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* A child that holds a region until this process exits. */
static void helper_start(void)
{
	int fds[2];
	pid_t pid;

	REQUIRE(pipe(fds) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		if (gba_eng_seg_alloc(FUZZ_SEG_LEN, NULL, &helper) ||
		    write(fds[1], &helper, sizeof(helper)) != sizeof(helper))
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	REQUIRE(read(fds[0], &helper, sizeof(helper)) == sizeof(helper));
	close(fds[0]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uct_md_resource_desc_t md_res[4];
	uct_tl_resource_desc_t *res;
	uct_component_attr_t cattr;
	uct_iface_config_t *iface_config;
	uct_md_config_t *md_config;
	uct_iface_params_t params;
	unsigned i, num;

	helper_start();
	/* as LD_PRELOAD would: its constructor registers the component */
	REQUIRE(dlopen(GBA_FUZZ_UCT_MODULE, RTLD_NOW | RTLD_GLOBAL) != NULL);
	REQUIRE(uct_query_components(&components, &num) == UCS_OK);
	for (i = 0; i < num; i++) {
		cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
				   UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
		REQUIRE(uct_component_query(components[i], &cattr) == UCS_OK);
		if (!strcmp(cattr.name, "gba"))
			comp = components[i];
	}
	REQUIRE(comp != NULL);
	cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
	cattr.md_resources = md_res;
	REQUIRE(uct_component_query(comp, &cattr) == UCS_OK);
	REQUIRE(uct_md_config_read(comp, NULL, NULL, &md_config) == UCS_OK);
	REQUIRE(uct_md_open(comp, md_res[0].md_name, md_config, &md) == UCS_OK);
	uct_config_release(md_config);
	REQUIRE(uct_md_query_tl_resources(md, &res, &num) == UCS_OK && num);
	REQUIRE(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
					 &async) == UCS_OK);
	REQUIRE(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) ==
		UCS_OK);
	REQUIRE(uct_md_iface_config_read(md, res[0].tl_name, NULL, NULL,
					 &iface_config) == UCS_OK);
	memset(&params, 0, sizeof(params));
	params.field_mask =
		UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
	params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
	params.mode.device.tl_name = res[0].tl_name;
	params.mode.device.dev_name = res[0].dev_name;
	REQUIRE(uct_iface_open(md, worker, &params, iface_config, &iface) ==
		UCS_OK);
	uct_config_release(iface_config);
	uct_release_tl_resource_list(res);
	REQUIRE(uct_iface_get_address(iface, (uct_iface_addr_t *)&own_addr) ==
		UCS_OK);
	return 0;
}

static void rkey(uct_gba_packed_rkey_t *packed, uint8_t choice,
		 uint64_t remote_addr)
{
	uct_rkey_bundle_t bundle;
	volatile uint8_t sink;
	void *local;

	if (choice & 1) { /* the helper's region */
		packed->pid = helper.pid;
		packed->seg_fd = helper.fd;
		if (choice & 2)
			packed->seg_cookie = helper.cookie;
		if (choice & 4)
			packed->address = (uintptr_t)helper.addr;
	}
	if (choice & 8)
		packed->host_id = gba_host_id();
	if (choice & 16) /* a key naming this process */
		packed->pid = getpid();
	if (uct_rkey_unpack(comp, packed, &bundle) != UCS_OK)
		return;
	if (uct_rkey_ptr(comp, &bundle, remote_addr, &local) == UCS_OK)
		sink = *(volatile uint8_t *)local;
	(void)sink;
	uct_rkey_release(comp, &bundle);
}

static void addresses(uint64_t dev_addr, uct_gba_iface_addr_t *addr,
		      uint8_t choice)
{
	uct_ep_params_t params;
	uct_ep_h ep;

	if (choice & 32) /* a well-formed address: another interface */
		addr->magic = own_addr.magic;
	if (choice & 64)
		*addr = own_addr;
	if (choice & 128)
		dev_addr = gba_host_id();
	uct_iface_is_reachable(iface, (const uct_device_addr_t *)&dev_addr,
			       (const uct_iface_addr_t *)addr);
	params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
			    UCT_EP_PARAM_FIELD_DEV_ADDR |
			    UCT_EP_PARAM_FIELD_IFACE_ADDR;
	params.iface = iface;
	params.dev_addr = (const uct_device_addr_t *)&dev_addr;
	params.iface_addr = (const uct_iface_addr_t *)addr;
	if (uct_ep_create(&params, &ep) == UCS_OK)
		uct_ep_destroy(ep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uct_gba_packed_rkey_t packed;
	uct_gba_iface_addr_t addr;
	uint64_t remote_addr, dev_addr;
	uint8_t choice;

	fuzz_take(&in, &packed, sizeof(packed));
	choice = fuzz_u8(&in);
	remote_addr = fuzz_u64(&in);
	dev_addr = fuzz_u64(&in);
	fuzz_take(&in, &addr, sizeof(addr));
	rkey(&packed, choice, remote_addr);
	addresses(dev_addr, &addr, choice);
	uct_worker_progress(worker);
	return 0;
}
