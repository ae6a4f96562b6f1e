/*
 * The "gba" component, memory domain and interface through UCT's public
 * API, with libuct_gba.so loaded the way a preload does (dlopen after libuct,
 * its constructor registers): the component and its one memory domain,
 * UCX_GBA_DEVICE, md_query, registrations with distinct key ids, mkey_pack /
 * rkey_unpack / rkey_release carrying address, length and key id, errors;
 * memory the md allocates in shared memory (fixed addresses included),
 * mapped by another process through its remote key (uct_rkey_ptr) and
 * written there; the transport's one device, an interface's capabilities
 * and an endpoint to the interface itself: active messages of every kind
 * run by the progress, empty puts and gets, direct (self) puts and
 * atomics, accesses through the queue for restricted registrations,
 * out-of-range accesses that touch nothing, and a fence that orders direct
 * accesses after queued ones; large active messages holding chunks of the
 * sender's transmit region, given back when their receiver closes, and
 * dropped without an error when their sender closed first.
 *
 * Usage: uct_gba_md [path of libuct_gba.so]
 * (default: $top_builddir/ucx/uct_gba/.libs/libuct_gba.so)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ucs/async/async.h>
#include <uct/api/uct.h>

#include "gba_md.h"

static int failures;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n",         \
				__FILE__, __LINE__, #cond);                  \
			failures++;                                          \
		}                                                            \
	} while (0)

#define REQUIRE(cond)                                                        \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: required: %s\n", __FILE__,   \
				__LINE__, #cond);                            \
			exit(1);                                             \
		}                                                            \
	} while (0)

static uct_component_h find_gba(uct_component_h *components, unsigned num)
{
	uct_component_attr_t attr;
	unsigned i;

	for (i = 0; i < num; i++) {
		attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
		REQUIRE(uct_component_query(components[i], &attr) == UCS_OK);
		if (!strcmp(attr.name, "gba"))
			return components[i];
	}
	return NULL;
}

static void test_md(uct_component_h component, uct_md_h md)
{
	static char buf[3][4096];
	uct_gba_packed_rkey_t packed;
	uct_gba_memh_t bogus = {buf[2], sizeof(buf[2]), 123456789, 0};
	uct_rkey_bundle_t bundle;
	const uct_gba_rkey_t *rkey;
	uct_mem_h memh[2];
	uct_md_attr_t attr;
	int i;

	REQUIRE(uct_md_query(md, &attr) == UCS_OK);
	CHECK(!strcmp(attr.component_name, "gba"));
	CHECK(attr.cap.flags == (UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY |
				 UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_FIXED));
	CHECK(attr.cap.reg_mem_types == UCS_BIT(UCS_MEMORY_TYPE_HOST));
	CHECK(attr.cap.access_mem_types == UCS_BIT(UCS_MEMORY_TYPE_HOST));
	CHECK(attr.cap.alloc_mem_types == UCS_BIT(UCS_MEMORY_TYPE_HOST));
	CHECK(attr.rkey_packed_size == sizeof(packed));
	CHECK(sizeof(packed) == 52);

	/* two registrations, two key ids */
	for (i = 0; i < 2; i++)
		REQUIRE(uct_md_mem_reg(md, buf[i], sizeof(buf[i]) - i,
				       UCT_MD_MEM_ACCESS_ALL,
				       &memh[i]) == UCS_OK);
	CHECK(((uct_gba_memh_t *)memh[0])->key_id != 0);
	CHECK(((uct_gba_memh_t *)memh[0])->key_id !=
	      ((uct_gba_memh_t *)memh[1])->key_id);

	/* the packed key carries address, length and key id */
	for (i = 0; i < 2; i++) {
		memset(&packed, 0xa5, sizeof(packed));
		REQUIRE(uct_md_mkey_pack(md, memh[i], &packed) == UCS_OK);
		CHECK(packed.address == (uintptr_t)buf[i]);
		CHECK(packed.length == sizeof(buf[i]) - i);
		CHECK(packed.key_id == ((uct_gba_memh_t *)memh[i])->key_id);

		REQUIRE(uct_rkey_unpack(component, &packed, &bundle) ==
			UCS_OK);
		CHECK(bundle.rkey != UCT_INVALID_RKEY);
		rkey = (const uct_gba_rkey_t *)bundle.rkey;
		CHECK(rkey->address == packed.address);
		CHECK(rkey->length == packed.length);
		CHECK(rkey->key_id == packed.key_id);
		/* registered, not allocated: no shared region; this process
		 * reaches its own registrations directly */
		CHECK(packed.seg_fd == -1 && packed.pid == (uint32_t)getpid());
		CHECK(rkey->local == (uint8_t *)buf[i]);
		CHECK(uct_rkey_release(component, &bundle) == UCS_OK);
	}

	/*
	 * Keys come from other processes: one that names this process but
	 * not a registration of it (another key id, a range past the
	 * registration, memory never registered) is not reached directly,
	 * or its holder would load and store anywhere in this process.
	 */
	for (i = 0; i < 3; i++) {
		REQUIRE(uct_md_mkey_pack(md, memh[0], &packed) == UCS_OK);
		if (i == 0)
			packed.key_id = ((uct_gba_memh_t *)memh[1])->key_id;
		else if (i == 1)
			packed.length += 1;
		else
			packed.address = (uintptr_t)buf[2];
		REQUIRE(uct_rkey_unpack(component, &packed, &bundle) ==
			UCS_OK);
		rkey = (const uct_gba_rkey_t *)bundle.rkey;
		CHECK(rkey->local == NULL);
		CHECK(uct_rkey_release(component, &bundle) == UCS_OK);
	}

	/* bad registrations and a handle the md never gave out */
	CHECK(uct_md_mem_reg(md, NULL, 8, UCT_MD_MEM_ACCESS_ALL |
			     UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh[0]) ==
	      UCS_ERR_INVALID_PARAM);
	CHECK(uct_md_mem_reg(md, buf[2], 0, UCT_MD_MEM_ACCESS_ALL |
			     UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh[0]) ==
	      UCS_ERR_INVALID_PARAM);
	fprintf(stderr, "(an error about memh %p is expected)\n",
		(void *)&bogus);
	CHECK(uct_md_mem_dereg(md, &bogus) == UCS_ERR_INVALID_PARAM);

	/* an allocation is not a registration, and the reverse */
	fprintf(stderr, "(an error about memh %p is expected)\n", memh[0]);
	CHECK(uct_md_mem_free(md, memh[0]) == UCS_ERR_INVALID_PARAM);

	for (i = 0; i < 2; i++)
		CHECK(uct_md_mem_dereg(md, memh[i]) == UCS_OK);
}

/* In a child process: map the region of @packed through its remote key,
 * check it holds @expect at offset 8, store @value at offset 16; a key of
 * registered memory (@packed_reg) has no direct access there */
static int child_access(uct_component_h component,
			const uct_gba_packed_rkey_t *packed,
			const uct_gba_packed_rkey_t *packed_reg,
			uint64_t expect, uint64_t value)
{
	uct_rkey_bundle_t bundle;
	int bad = 0;
	void *ptr;

	if (uct_rkey_unpack(component, packed_reg, &bundle) != UCS_OK)
		return 10;
	bad |= uct_rkey_ptr(component, &bundle, packed_reg->address, &ptr) !=
	       UCS_ERR_UNSUPPORTED;
	uct_rkey_release(component, &bundle);

	if (uct_rkey_unpack(component, packed, &bundle) != UCS_OK)
		return 11;
	bad |= ((const uct_gba_rkey_t *)bundle.rkey)->map == NULL;
	bad |= uct_rkey_ptr(component, &bundle,
			    packed->address + packed->length, &ptr) !=
	       UCS_ERR_INVALID_ADDR;
	if (uct_rkey_ptr(component, &bundle, packed->address + 8, &ptr) !=
	    UCS_OK)
		return 12;
	bad |= *(uint64_t *)ptr != expect;
	((uint64_t *)ptr)[1] = value;
	uct_rkey_release(component, &bundle);
	return bad ? 13 : 0;
}

static void test_alloc(uct_component_h component, uct_md_h md)
{
	static char reg[4096];
	uct_gba_packed_rkey_t packed, packed_reg;
	size_t page = sysconf(_SC_PAGESIZE), length;
	uct_mem_h memh, memh_reg;
	void *address, *hole;
	int status;
	pid_t pid;

	/* shared memory, rounded up to pages */
	length = 10000;
	address = NULL;
	REQUIRE(uct_md_mem_alloc(md, &length, &address, UCS_MEMORY_TYPE_HOST,
				 UCT_MD_MEM_ACCESS_ALL, "test", &memh) ==
		UCS_OK);
	CHECK(length >= 10000 && length % page == 0);
	CHECK(address != NULL && (uintptr_t)address % page == 0);
	((uint64_t *)address)[1] = 0x5eed;
	REQUIRE(uct_md_mkey_pack(md, memh, &packed) == UCS_OK);
	CHECK(packed.address == (uintptr_t)address);
	CHECK(packed.length == length);
	CHECK(packed.seg_fd >= 0 && packed.direct == 1);
	REQUIRE(uct_md_mem_reg(md, reg, sizeof(reg), UCT_MD_MEM_ACCESS_ALL,
			       &memh_reg) == UCS_OK);
	REQUIRE(uct_md_mkey_pack(md, memh_reg, &packed_reg) == UCS_OK);

	/* another process maps it through the remote key and writes */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(child_access(component, &packed, &packed_reg, 0x5eed,
				   0xfeedull << 32));
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(((uint64_t *)address)[2] == 0xfeedull << 32);

	fprintf(stderr, "(an error about memh %p is expected)\n", memh);
	CHECK(uct_md_mem_dereg(md, memh) == UCS_ERR_INVALID_PARAM);
	CHECK(uct_md_mem_free(md, memh) == UCS_OK);
	CHECK(uct_md_mem_dereg(md, memh_reg) == UCS_OK);

	/* a fixed address: placed exactly there, never over a mapping */
	hole = mmap(NULL, 4 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	REQUIRE(hole != MAP_FAILED);
	address = hole;
	length = page;
	CHECK(uct_md_mem_alloc(md, &length, &address, UCS_MEMORY_TYPE_HOST,
			       UCT_MD_MEM_ACCESS_ALL | UCT_MD_MEM_FLAG_FIXED |
			       UCT_MD_MEM_FLAG_HIDE_ERRORS, "test", &memh) ==
	      UCS_ERR_NO_MEMORY);
	munmap(hole, 4 * page);
	address = (char *)hole + page;
	length = page;
	REQUIRE(uct_md_mem_alloc(md, &length, &address, UCS_MEMORY_TYPE_HOST,
				 UCT_MD_MEM_ACCESS_ALL | UCT_MD_MEM_FLAG_FIXED,
				 "test", &memh) == UCS_OK);
	CHECK(address == (char *)hole + page && length == page);
	CHECK(uct_md_mem_free(md, memh) == UCS_OK);

	/* bad allocations */
	address = (char *)hole + 1;
	length = page;
	CHECK(uct_md_mem_alloc(md, &length, &address, UCS_MEMORY_TYPE_HOST,
			       UCT_MD_MEM_FLAG_FIXED |
			       UCT_MD_MEM_FLAG_HIDE_ERRORS, "test", &memh) ==
	      UCS_ERR_INVALID_PARAM);
	length = 0;
	CHECK(uct_md_mem_alloc(md, &length, &address, UCS_MEMORY_TYPE_HOST,
			       UCT_MD_MEM_FLAG_HIDE_ERRORS, "test", &memh) ==
	      UCS_ERR_INVALID_PARAM);
	length = page;
	CHECK(uct_md_mem_alloc(md, &length, &address, UCS_MEMORY_TYPE_CUDA, 0,
			       "test", &memh) == UCS_ERR_UNSUPPORTED);
}

/* Active messages to the interface itself: what the handler saw */
static struct {
	unsigned count;
	size_t length;
	unsigned char first, last;
} self_am;

static ucs_status_t self_am_handler(void *arg, void *data, size_t length,
				    unsigned flags)
{
	self_am.count++;
	self_am.length = length;
	self_am.first = ((unsigned char *)data)[0];
	self_am.last = ((unsigned char *)data)[length - 1];
	return UCS_OK;
}

static size_t self_am_pack(void *dest, void *arg)
{
	size_t length = *(size_t *)arg;

	memset(dest, 0x5a, length);
	((unsigned char *)dest)[0] = 0x11;
	return length;
}

/* Progress @iface until the self_am handler has run @count times */
static void self_am_wait(uct_iface_h iface, unsigned count)
{
	int i;

	for (i = 0; i < 100000 && self_am.count < count; i++)
		uct_iface_progress(iface);
}

/* Active messages of every kind to the interface itself: the handler runs
 * in uct_iface_progress, never inside the send (UCT_IFACE_FLAG_CB_SYNC) */
static void test_self_am(uct_iface_h iface, uct_ep_h ep)
{
	static unsigned char payload[20000];
	uint64_t header = 0x33;
	size_t length;
	uct_iov_t iov;

	REQUIRE(uct_iface_set_am_handler(iface, 3, self_am_handler, NULL, 0) ==
		UCS_OK);
	memset(payload, 0x77, sizeof(payload));
	payload[sizeof(payload) - 1] = 0x99;
	self_am.count = 0;
	CHECK(uct_ep_am_short(ep, 3, header, payload, 100) == UCS_OK);
	CHECK(self_am.count == 0);
	self_am_wait(iface, 1);
	CHECK(self_am.count == 1 && self_am.length == 108 &&
	      self_am.first == 0x33 && self_am.last == 0x77);
	length = 10000;
	CHECK(uct_ep_am_bcopy(ep, 3, self_am_pack, &length, 0) == 10000);
	CHECK(self_am.count == 1);
	self_am_wait(iface, 2);
	CHECK(self_am.count == 2 && self_am.length == 10000 &&
	      self_am.first == 0x11 && self_am.last == 0x5a);
	iov.buffer = payload;
	iov.length = sizeof(payload);
	iov.memh = UCT_MEM_HANDLE_NULL;
	iov.stride = 0;
	iov.count = 1;
	CHECK(uct_ep_am_zcopy(ep, 3, &header, 1, &iov, 1, 0, NULL) == UCS_OK);
	CHECK(self_am.count == 2);
	self_am_wait(iface, 3);
	CHECK(self_am.count == 3 && self_am.length == sizeof(payload) + 1 &&
	      self_am.first == 0x33 && self_am.last == 0x99);
}

static size_t empty_pack(void *dest, void *arg)
{
	return 0;
}

static void empty_unpack(void *arg, const void *data, size_t length)
{
	CHECK(!"unpack called for an empty get_bcopy");
}

/* Puts and gets of no bytes complete at once and touch nothing, whatever
 * the remote key: UCT_INVALID_RKEY too, as UCX's shared-memory transports
 * take it */
static void test_empty_rma(uct_ep_h ep)
{
	uct_iov_t iov = {.buffer = NULL,
			 .length = 0,
			 .memh = UCT_MEM_HANDLE_NULL,
			 .count = 1};

	CHECK(uct_ep_put_short(ep, NULL, 0, 0, UCT_INVALID_RKEY) == UCS_OK);
	CHECK(uct_ep_put_bcopy(ep, empty_pack, NULL, 0, UCT_INVALID_RKEY) ==
	      0);
	CHECK(uct_ep_put_zcopy(ep, &iov, 1, 0, UCT_INVALID_RKEY, NULL) ==
	      UCS_OK);
	CHECK(uct_ep_get_zcopy(ep, &iov, 1, 0, UCT_INVALID_RKEY, NULL) ==
	      UCS_OK);
	CHECK(uct_ep_get_bcopy(ep, empty_unpack, NULL, 0, 0, UCT_INVALID_RKEY,
			       NULL) == UCS_OK);
	CHECK(uct_ep_flush(ep, 0, NULL) == UCS_OK);
}

/* Parameters opening transport gba on device @dev */
static void iface_params(uct_iface_params_t *params, const char *dev)
{
	memset(params, 0, sizeof(*params));
	params->field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
			     UCT_IFACE_PARAM_FIELD_DEVICE;
	params->open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
	params->mode.device.tl_name = "gba";
	params->mode.device.dev_name = dev;
}

/* An endpoint from @iface to a new interface of @md, opened with @params
 * (NULL: iface_params' defaults); the interface in *@peer_p */
static uct_ep_h ep_to_new_iface(uct_md_h md, uct_worker_h worker,
				uct_iface_config_t *config,
				const uct_iface_params_t *params,
				uct_iface_h iface, uct_iface_h *peer_p)
{
	unsigned char dev[8], ifa[48];
	uct_iface_params_t defaults;
	uct_ep_params_t ep_params;
	uct_ep_h ep;

	iface_params(&defaults, "gba");
	REQUIRE(uct_iface_open(md, worker, params ? params : &defaults, config,
			       peer_p) == UCS_OK);
	REQUIRE(uct_iface_get_device_address(*peer_p,
					    (uct_device_addr_t *)dev) == UCS_OK);
	REQUIRE(uct_iface_get_address(*peer_p, (uct_iface_addr_t *)ifa) ==
		UCS_OK);
	memset(&ep_params, 0, sizeof(ep_params));
	ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
			       UCT_EP_PARAM_FIELD_DEV_ADDR |
			       UCT_EP_PARAM_FIELD_IFACE_ADDR;
	ep_params.iface = iface;
	ep_params.dev_addr = (uct_device_addr_t *)dev;
	ep_params.iface_addr = (uct_iface_addr_t *)ifa;
	REQUIRE(uct_ep_create(&ep_params, &ep) == UCS_OK);
	return ep;
}

/* Large am_bcopy messages take chunks of the sender's transmit region
 * until their receiver has run the handler: a receiver that never does
 * holds all 64 (UCX_GBA_TX_CHUNKS' default) and the 65th send is
 * refused, until it closes and the sender takes its chunks back (within
 * UCT_GBA_CHUNK_CHECK_MS of asking); then
 * another receiver gets the message, the bytes intact */
static void test_chunks(uct_md_h md, uct_worker_h worker,
			uct_iface_config_t *config, uct_iface_h iface)
{
	size_t length = 10000;
	uct_iface_h idle, other;
	uct_ep_h to_idle, to_other;
	ssize_t ret = 0;
	int i;

	to_idle = ep_to_new_iface(md, worker, config, NULL, iface, &idle);
	to_other = ep_to_new_iface(md, worker, config, NULL, iface, &other);
	REQUIRE(uct_iface_set_am_handler(other, 3, self_am_handler, NULL, 0) ==
		UCS_OK);
	for (i = 0; i < 64; i++)
		CHECK(uct_ep_am_bcopy(to_idle, 3, self_am_pack, &length, 0) ==
		      10000);
	CHECK(uct_ep_am_bcopy(to_other, 3, self_am_pack, &length, 0) ==
	      UCS_ERR_NO_RESOURCE);
	uct_ep_destroy(to_idle);
	uct_iface_close(idle);
	for (i = 0; i < 100; i++) {
		ret = uct_ep_am_bcopy(to_other, 3, self_am_pack, &length, 0);
		if (ret != UCS_ERR_NO_RESOURCE)
			break;
		usleep(1000);
	}
	CHECK(ret == 10000);
	self_am.count = 0;
	for (i = 0; i < 100000 && !self_am.count; i++)
		uct_iface_progress(other);
	CHECK(self_am.count == 1 && self_am.length == 10000 &&
	      self_am.first == 0x11 && self_am.last == 0x5a);
	uct_ep_destroy(to_other);
	uct_iface_close(other);
}

/* What keep_chunk_handler saw: the messages, those it kept (their data),
 * and whether it may keep more */
static struct {
	unsigned count, flagged, bad;
	int keep;
	unsigned nkept;
	unsigned char *kept[64];
} chunk_rx;

#define CHUNK_MSG_LEN 10000

/* A message of CHUNK_MSG_LEN bytes, every byte *@arg */
static size_t chunk_pack(void *dest, void *arg)
{
	memset(dest, *(unsigned char *)arg, CHUNK_MSG_LEN);
	return CHUNK_MSG_LEN;
}

static ucs_status_t keep_chunk_handler(void *arg, void *data, size_t length,
				       unsigned flags)
{
	unsigned char *p = data;

	chunk_rx.count++;
	if (length != CHUNK_MSG_LEN || p[0] != p[length - 1])
		chunk_rx.bad++;
	if (!(flags & UCT_CB_PARAM_FLAG_DESC))
		return UCS_OK;
	chunk_rx.flagged++;
	if (!chunk_rx.keep || chunk_rx.nkept == 64)
		return UCS_OK;
	/* the headroom is the handler's to write, as UCP's descriptor */
	memset(p - 40, 0xee, 40);
	chunk_rx.kept[chunk_rx.nkept++] = p;
	return UCS_INPROGRESS;
}

/* Progress @iface until keep_chunk_handler has seen @count messages */
static void chunk_rx_wait(uct_iface_h iface, unsigned count)
{
	int i;

	for (i = 0; i < 100000 && chunk_rx.count < count; i++)
		uct_iface_progress(iface);
	CHECK(chunk_rx.count == count);
}

/* A handler may keep a large am_bcopy's chunk as its receive descriptor
 * (UCT_CB_PARAM_FLAG_DESC, the interface's 40-byte headroom before the
 * data): the receivers of a sender keep at most 48 of its 64 chunks at
 * once, later messages come without the flag, and the sender goes on
 * sending through the other 16 (exactly 16 more while the receiver does
 * not look).  A kept message stays intact while the sender reuses the
 * other chunks; uct_iface_release_desc frees its chunk for the sender.
 * With a headroom that does not fit a chunk's header, no message comes
 * with the flag. */
static void test_chunk_keep(uct_md_h md, uct_worker_h worker,
			    uct_iface_config_t *config, uct_iface_h iface)
{
	uct_iface_params_t params;
	uct_iface_h sender, receiver;
	unsigned char value;
	uct_ep_h ep;
	unsigned i;

	uct_ep_destroy(
		ep_to_new_iface(md, worker, config, NULL, iface, &sender));
	iface_params(&params, "gba");
	params.field_mask |= UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
	params.rx_headroom = 40;
	ep = ep_to_new_iface(md, worker, config, &params, sender, &receiver);
	REQUIRE(uct_iface_set_am_handler(receiver, 3, keep_chunk_handler, NULL,
					 0) == UCS_OK);
	memset(&chunk_rx, 0, sizeof(chunk_rx));
	chunk_rx.keep = 1;
	for (i = 0; i < 80; i++) {
		value = (unsigned char)i;
		CHECK(uct_ep_am_bcopy(ep, 3, chunk_pack, &value, 0) ==
		      CHUNK_MSG_LEN);
		chunk_rx_wait(receiver, i + 1);
	}
	CHECK(chunk_rx.nkept == 48 && chunk_rx.flagged == 48 &&
	      chunk_rx.bad == 0);
	for (i = 0; i < 16; i++) {
		value = 0xa0;
		CHECK(uct_ep_am_bcopy(ep, 3, chunk_pack, &value, 0) ==
		      CHUNK_MSG_LEN);
	}
	value = 0xa1;
	CHECK(uct_ep_am_bcopy(ep, 3, chunk_pack, &value, 0) ==
	      UCS_ERR_NO_RESOURCE);
	chunk_rx_wait(receiver, 96);
	for (i = 0; i < chunk_rx.nkept; i++) {
		CHECK(chunk_rx.kept[i][0] == i &&
		      chunk_rx.kept[i][CHUNK_MSG_LEN - 1] == i);
		uct_iface_release_desc(chunk_rx.kept[i] - 40);
	}
	/* all 64 free again, and kept again up to 48 */
	chunk_rx.nkept = 0;
	for (i = 0; i < 64; i++) {
		value = (unsigned char)i;
		CHECK(uct_ep_am_bcopy(ep, 3, chunk_pack, &value, 0) ==
		      CHUNK_MSG_LEN);
	}
	chunk_rx_wait(receiver, 160);
	CHECK(chunk_rx.nkept == 48 && chunk_rx.bad == 0);
	for (i = 0; i < chunk_rx.nkept; i++)
		uct_iface_release_desc(chunk_rx.kept[i] - 40);
	uct_ep_destroy(ep);
	uct_iface_close(receiver);

	/* a headroom beyond a chunk's header: never the flag */
	params.rx_headroom = 200;
	ep = ep_to_new_iface(md, worker, config, &params, sender, &receiver);
	REQUIRE(uct_iface_set_am_handler(receiver, 3, keep_chunk_handler, NULL,
					 0) == UCS_OK);
	memset(&chunk_rx, 0, sizeof(chunk_rx));
	value = 7;
	CHECK(uct_ep_am_bcopy(ep, 3, chunk_pack, &value, 0) == CHUNK_MSG_LEN);
	chunk_rx_wait(receiver, 1);
	CHECK(chunk_rx.flagged == 0 && chunk_rx.bad == 0);
	uct_ep_destroy(ep);
	uct_iface_close(receiver);
	uct_iface_close(sender);
}

/* Errors UCX logged while count_errors was pushed */
static unsigned logged_errors;

static ucs_log_func_rc_t count_errors(const char *file, unsigned line,
				      const char *function,
				      ucs_log_level_t level,
				      const ucs_log_component_config_t *comp,
				      const char *message, va_list ap)
{
	if (level <= UCS_LOG_LEVEL_ERROR)
		logged_errors++;
	return UCS_LOG_FUNC_RC_CONTINUE;
}

/* A large am_bcopy whose sender closes its interface before the receiver
 * reads the chunk: the receiver finds the region gone and drops the
 * message without an error (as those of an endpoint destroyed without a
 * flush) */
static void test_chunk_sender_gone(uct_md_h md, uct_worker_h worker,
				   uct_iface_config_t *config,
				   uct_iface_h iface)
{
	size_t length = 10000;
	uct_iface_h sender, receiver;
	uct_ep_h ep;
	int i;

	uct_ep_destroy(
		ep_to_new_iface(md, worker, config, NULL, iface, &sender));
	ep = ep_to_new_iface(md, worker, config, NULL, sender, &receiver);
	REQUIRE(uct_iface_set_am_handler(receiver, 3, self_am_handler, NULL,
					 0) == UCS_OK);
	CHECK(uct_ep_am_bcopy(ep, 3, self_am_pack, &length, 0) == 10000);
	uct_ep_destroy(ep);
	uct_iface_close(sender);

	self_am.count = 0;
	logged_errors = 0;
	ucs_log_push_handler(count_errors);
	for (i = 0; i < 1000; i++)
		uct_iface_progress(receiver);
	ucs_log_pop_handler();
	CHECK(self_am.count == 0 && logged_errors == 0);
	uct_iface_close(receiver);
}

/* A receive descriptor a handler kept (UCT_CB_PARAM_FLAG_DESC) */
static void *kept_desc;

static ucs_status_t keep_am_handler(void *arg, void *data, size_t length,
				    unsigned flags)
{
	self_am_handler(arg, data, length, flags);
	if (!(flags & UCT_CB_PARAM_FLAG_DESC))
		return UCS_OK;
	kept_desc = data;
	return UCS_INPROGRESS;
}

static struct {
	unsigned count;
	ucs_status_t status;
} zcopy_done;

static void zcopy_completed(uct_completion_t *comp)
{
	zcopy_done.count++;
	zcopy_done.status = comp->status;
}

/* UCX_GBA_TX_CHUNKS=0: no transmit region.  am_bcopy goes up to a queue
 * slot's size; a larger am_zcopy is read in place by the receiver, whose
 * handler gets a receive descriptor it may keep, aligned as the receiver's
 * UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT asked; the send completes once the
 * receiver has read it.  More than 64 chunks is refused, and so are an
 * alignment that is not a power of two and an alignment offset without an
 * alignment. */
static void test_no_chunks(uct_md_h md, uct_worker_h worker,
			   uct_iface_config_t *config, uct_iface_h iface)
{
	unsigned char payload[9999];
	unsigned char header = 0x33;
	uct_completion_t comp;
	uct_iface_params_t params;
	uct_iface_h sender, receiver, bad;
	uct_iface_attr_t attr;
	size_t length = 4000;
	uct_ep_h ep;
	uct_iov_t iov;
	int i;

	REQUIRE(uct_config_modify(config, "TX_CHUNKS", "65") == UCS_OK);
	iface_params(&params, "gba");
	fprintf(stderr, "(an error about UCX_GBA_TX_CHUNKS=65 is expected)\n");
	CHECK(uct_iface_open(md, worker, &params, config, &bad) ==
	      UCS_ERR_INVALID_PARAM);

	REQUIRE(uct_config_modify(config, "TX_CHUNKS", "0") == UCS_OK);
	iface_params(&params, "gba");
	params.field_mask |= UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT;
	for (i = 0; i < 2; i++) {
		params.am_alignment = i ? 0 : 3;
		fprintf(stderr, "(an error about AM alignment %zu is "
				"expected)\n", params.am_alignment);
		CHECK(uct_iface_open(md, worker, &params, config, &bad) ==
		      UCS_ERR_INVALID_PARAM);
	}
	iface_params(&params, "gba");
	params.field_mask |= UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET;
	params.am_align_offset = 3;
	fprintf(stderr, "(an error about the alignment offset is expected)\n");
	CHECK(uct_iface_open(md, worker, &params, config, &bad) ==
	      UCS_ERR_INVALID_PARAM);

	uct_ep_destroy(
		ep_to_new_iface(md, worker, config, NULL, iface, &sender));
	/*
	 * the receiver asks for its data + 24 to be aligned to 4096 bytes
	 * (an offset that is not a multiple of 8 works too, but leaves the
	 * pointer before the descriptor unaligned, which UCX's own inline
	 * uct_iface_release_desc then loads as is: UBSan flags it in uct.h)
	 */
	iface_params(&params, "gba");
	params.field_mask |= UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
			     UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET;
	params.am_alignment = 4096;
	params.am_align_offset = 24;
	ep = ep_to_new_iface(md, worker, config, &params, sender, &receiver);
	REQUIRE(uct_iface_query(sender, &attr) == UCS_OK);
	CHECK(attr.cap.am.max_bcopy == 4032);
	CHECK(attr.cap.am.max_zcopy == 65536);
	REQUIRE(uct_iface_set_am_handler(receiver, 3, keep_am_handler, NULL,
					 0) == UCS_OK);

	self_am.count = 0;
	CHECK(uct_ep_am_bcopy(ep, 3, self_am_pack, &length, 0) == 4000);
	for (i = 0; i < 100000 && !self_am.count; i++)
		uct_iface_progress(receiver);
	CHECK(self_am.count == 1 && self_am.length == 4000 &&
	      self_am.first == 0x11 && self_am.last == 0x5a);
	CHECK(kept_desc == NULL); /* a bcopy message is in the queue's slot */

	memset(payload, 0x77, sizeof(payload));
	payload[sizeof(payload) - 1] = 0x99;
	iov.buffer = payload;
	iov.length = sizeof(payload);
	iov.memh = UCT_MEM_HANDLE_NULL;
	iov.stride = 0;
	iov.count = 1;
	comp.func = zcopy_completed;
	comp.count = 1;
	comp.status = UCS_OK;
	CHECK(uct_ep_am_zcopy(ep, 3, &header, 1, &iov, 1, 0, &comp) ==
	      UCS_INPROGRESS);
	for (i = 0; i < 100000 && self_am.count < 2; i++)
		uct_iface_progress(receiver);
	CHECK(self_am.count == 2 && self_am.length == sizeof(payload) + 1 &&
	      self_am.first == 0x33 && self_am.last == 0x99);
	CHECK(kept_desc != NULL && ((uintptr_t)kept_desc + 24) % 4096 == 0);
	for (i = 0; i < 100000 && !zcopy_done.count; i++)
		uct_iface_progress(sender);
	CHECK(zcopy_done.count == 1 && zcopy_done.status == UCS_OK);
	if (kept_desc)
		uct_iface_release_desc(kept_desc);
	kept_desc = NULL;

	uct_ep_destroy(ep);
	uct_iface_close(receiver);
	uct_iface_close(sender);
	REQUIRE(uct_config_modify(config, "TX_CHUNKS", "16") == UCS_OK);
}

static void test_iface(uct_component_h component, uct_md_h md)
{
	uct_tl_resource_desc_t *resources;
	uct_iface_config_t *config;
	ucs_async_context_t *async;
	uct_iface_params_t params;
	uct_ep_params_t ep_params;
	uct_iface_attr_t attr;
	uct_worker_h worker;
	unsigned num;
	uct_iface_h iface;
	uct_ep_h ep;

	REQUIRE(uct_md_query_tl_resources(md, &resources, &num) == UCS_OK);
	REQUIRE(num == 1);
	CHECK(!strcmp(resources[0].tl_name, "gba"));
	CHECK(!strcmp(resources[0].dev_name, "gba"));
	CHECK(resources[0].dev_type == UCT_DEVICE_TYPE_NET);

	REQUIRE(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
					 &async) == UCS_OK);
	REQUIRE(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) ==
		UCS_OK);
	REQUIRE(uct_md_iface_config_read(md, "gba", NULL, NULL, &config) ==
		UCS_OK);

	iface_params(&params, "nodev");
	CHECK(uct_iface_open(md, worker, &params, config, &iface) ==
	      UCS_ERR_NO_DEVICE);

	params.mode.device.dev_name = resources[0].dev_name;
	REQUIRE(uct_iface_open(md, worker, &params, config, &iface) == UCS_OK);
	REQUIRE(uct_iface_query(iface, &attr) == UCS_OK);
	/* the data path's capabilities (uct_gba(7)) */
	CHECK(attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
	CHECK(attr.cap.flags & UCT_IFACE_FLAG_AM_SHORT);
	CHECK(attr.cap.flags & UCT_IFACE_FLAG_PUT_ZCOPY);
	CHECK(attr.cap.flags & UCT_IFACE_FLAG_GET_ZCOPY);
	CHECK(attr.cap.flags & UCT_IFACE_FLAG_ATOMIC_CPU);
	CHECK(!(attr.cap.flags & UCT_IFACE_FLAG_ATOMIC_DEVICE));
	CHECK(attr.cap.event_flags == 0);
	CHECK(attr.cap.atomic64.fop_flags & UCS_BIT(UCT_ATOMIC_OP_CSWAP));
	CHECK(attr.iface_addr_len == 48 && attr.device_addr_len == 8);
	CHECK(!uct_iface_is_reachable(iface, NULL, NULL));
	{
		unsigned char dev[8], ifa[48], other[8];
		uint64_t target = 5, value = 0x1122334455667788ull;
		uint64_t *pattern = &value;
		uct_mem_h memh;
		void *rkey_buf;
		uct_rkey_bundle_t rkey;
		int i;

		REQUIRE(uct_iface_get_device_address(iface,
						    (uct_device_addr_t *)dev) ==
			UCS_OK);
		REQUIRE(uct_iface_get_address(iface, (uct_iface_addr_t *)ifa) ==
			UCS_OK);
		CHECK(uct_iface_is_reachable(iface, (uct_device_addr_t *)dev,
					     (uct_iface_addr_t *)ifa));
		memcpy(other, dev, 8);
		other[0] ^= 1; /* another host */
		CHECK(!uct_iface_is_reachable(iface, (uct_device_addr_t *)other,
					      (uct_iface_addr_t *)ifa));

		memset(&ep_params, 0, sizeof(ep_params));
		ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
		ep_params.iface = iface;
		CHECK(uct_ep_create(&ep_params, &ep) != UCS_OK);

		/* an endpoint to the interface itself: put, then atomics, on
		 * registered memory, completed by the interface's progress */
		ep_params.field_mask |= UCT_EP_PARAM_FIELD_DEV_ADDR |
					UCT_EP_PARAM_FIELD_IFACE_ADDR;
		ep_params.dev_addr = (uct_device_addr_t *)dev;
		ep_params.iface_addr = (uct_iface_addr_t *)ifa;
		REQUIRE(uct_ep_create(&ep_params, &ep) == UCS_OK);
		test_self_am(iface, ep);
		test_empty_rma(ep);
		REQUIRE(uct_md_mem_reg(md, &target, sizeof(target),
				       UCT_MD_MEM_ACCESS_ALL, &memh) == UCS_OK);
		rkey_buf = malloc(64);
		REQUIRE(uct_md_mkey_pack(md, memh, rkey_buf) == UCS_OK);
		REQUIRE(uct_rkey_unpack(component, rkey_buf, &rkey) == UCS_OK);
		CHECK(uct_ep_put_short(ep, pattern, 8, (uintptr_t)&target,
				       rkey.rkey) == UCS_OK);
		CHECK(uct_ep_atomic64_post(ep, UCT_ATOMIC_OP_ADD, 1,
					   (uintptr_t)&target,
					   rkey.rkey) == UCS_OK);
		for (i = 0; i < 100000 &&
			    uct_ep_flush(ep, 0, NULL) == UCS_INPROGRESS;
		     i++)
			uct_iface_progress(iface);
		CHECK(uct_ep_flush(ep, 0, NULL) == UCS_OK);
		CHECK(target == value + 1);
		/* outside the region: completes with an error, touches nothing */
		CHECK(uct_ep_put_short(ep, pattern, 8, (uintptr_t)&target + 8,
				       rkey.rkey) == UCS_OK);
		for (i = 0; i < 100000 &&
			    uct_ep_flush(ep, 0, NULL) == UCS_INPROGRESS;
		     i++)
			uct_iface_progress(iface);
		CHECK(target == value + 1);

		/* registrations that do not grant every access go through
		 * the target's queue, which checks them: a put into memory
		 * granting remote gets only is refused */
		{
			uint64_t guarded = 7, queued = 0, v1 = 11, v2 = 22;
			uct_rkey_bundle_t rkey_ro, rkey_q;
			uct_mem_h memh_ro, memh_q;
			char kbuf[64];

			REQUIRE(uct_md_mem_reg(md, &guarded, 8,
					       UCT_MD_MEM_ACCESS_REMOTE_GET,
					       &memh_ro) == UCS_OK);
			REQUIRE(uct_md_mkey_pack(md, memh_ro, kbuf) == UCS_OK);
			REQUIRE(uct_rkey_unpack(component, kbuf, &rkey_ro) ==
				UCS_OK);
			CHECK(((uct_gba_rkey_t *)rkey_ro.rkey)->local == NULL);
			CHECK(uct_ep_put_short(ep, pattern, 8,
					       (uintptr_t)&guarded,
					       rkey_ro.rkey) == UCS_OK);
			for (i = 0; i < 100000 &&
				    uct_ep_flush(ep, 0, NULL) == UCS_INPROGRESS;
			     i++)
				uct_iface_progress(iface);
			CHECK(guarded == 7);
			/* a fetching atomic writes too: refused as well */
			{
				uct_completion_t comp;
				uint64_t fetched = 99;

				comp.func = zcopy_completed;
				comp.count = 1;
				comp.status = UCS_OK;
				zcopy_done.count = 0;
				CHECK(uct_ep_atomic64_fetch(
					      ep, UCT_ATOMIC_OP_ADD, 1,
					      &fetched, (uintptr_t)&guarded,
					      rkey_ro.rkey,
					      &comp) == UCS_INPROGRESS);
				for (i = 0; i < 100000 && !zcopy_done.count;
				     i++)
					uct_iface_progress(iface);
				CHECK(zcopy_done.count == 1 &&
				      zcopy_done.status != UCS_OK);
				CHECK(guarded == 7 && fetched == 99);
				zcopy_done.count = 0;
			}
			/* an iov entry without a buffer is refused */
			{
				uct_iov_t iov = {.buffer = NULL,
						 .length = 8,
						 .memh = UCT_MEM_HANDLE_NULL,
						 .count = 1};

				fprintf(stderr, "(an error about iov entry 0 "
						"is expected)\n");
				CHECK(uct_ep_am_short_iov(ep, 3, &iov, 1) ==
				      UCS_ERR_INVALID_PARAM);
			}

			/* a fence: the direct put after it waits for the
			 * queued put before it */
			REQUIRE(uct_md_mem_reg(md, &queued, 8,
					       UCT_MD_MEM_ACCESS_REMOTE_PUT |
					       UCT_MD_MEM_ACCESS_REMOTE_GET,
					       &memh_q) == UCS_OK);
			REQUIRE(uct_md_mkey_pack(md, memh_q, kbuf) == UCS_OK);
			REQUIRE(uct_rkey_unpack(component, kbuf, &rkey_q) ==
				UCS_OK);
			CHECK(uct_ep_put_short(ep, &v1, 8, (uintptr_t)&queued,
					       rkey_q.rkey) == UCS_OK);
			CHECK(queued == 0); /* executed by the progress */
			CHECK(uct_ep_fence(ep, 0) == UCS_OK);
			CHECK(uct_ep_put_short(ep, &v2, 8, (uintptr_t)&target,
					       rkey.rkey) == UCS_OK);
			CHECK(target == value + 1);
			for (i = 0; i < 100000 &&
				    uct_ep_flush(ep, 0, NULL) == UCS_INPROGRESS;
			     i++)
				uct_iface_progress(iface);
			CHECK(queued == v1 && target == v2);
			/* the fence is over: direct again */
			CHECK(uct_ep_put_short(ep, &v1, 8, (uintptr_t)&target,
					       rkey.rkey) == UCS_OK);
			CHECK(target == v1);
			/* an iface fence works the same */
			CHECK(uct_ep_put_short(ep, &v2, 8, (uintptr_t)&queued,
					       rkey_q.rkey) == UCS_OK);
			CHECK(uct_iface_fence(iface, 0) == UCS_OK);
			CHECK(uct_ep_atomic64_post(ep, UCT_ATOMIC_OP_ADD, 1,
						   (uintptr_t)&target,
						   rkey.rkey) == UCS_OK);
			CHECK(target == v1);
			for (i = 0; i < 100000 &&
				    uct_ep_flush(ep, 0, NULL) == UCS_INPROGRESS;
			     i++)
				uct_iface_progress(iface);
			CHECK(queued == v2 && target == v1 + 1);
			uct_rkey_release(component, &rkey_q);
			uct_rkey_release(component, &rkey_ro);
			CHECK(uct_md_mem_dereg(md, memh_q) == UCS_OK);
			CHECK(uct_md_mem_dereg(md, memh_ro) == UCS_OK);
			target = value + 1;
		}
		uct_rkey_release(component, &rkey);
		free(rkey_buf);
		uct_ep_destroy(ep);
		CHECK(uct_md_mem_dereg(md, memh) == UCS_OK);
	}
	test_chunks(md, worker, config, iface);
	test_chunk_sender_gone(md, worker, config, iface);
	test_chunk_keep(md, worker, config, iface);
	test_no_chunks(md, worker, config, iface);
	CHECK(uct_iface_flush(iface, 0, NULL) == UCS_OK);
	CHECK(uct_iface_progress(iface) == 0);

	uct_iface_close(iface);
	uct_config_release(config);
	uct_worker_destroy(worker);
	ucs_async_context_destroy(async);
	uct_release_tl_resource_list(resources);
}

int main(int argc, char **argv)
{
	uct_md_resource_desc_t md_resources[4];
	uct_component_h *components, gba;
	uct_component_attr_t cattr;
	const char *top = getenv("top_builddir");
	char path[4096], value[256];
	uct_md_config_t *config;
	unsigned num;
	uct_md_h md;

	if (argc > 1)
		snprintf(path, sizeof(path), "%s", argv[1]);
	else
		snprintf(path, sizeof(path),
			 "%s/ucx/uct_gba/.libs/libuct_gba.so",
			 top ? top : ".");

	/* before the module is loaded, UCT has no gba component */
	REQUIRE(uct_query_components(&components, &num) == UCS_OK);
	CHECK(find_gba(components, num) == NULL);
	uct_release_component_list(components);

	if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	REQUIRE(uct_query_components(&components, &num) == UCS_OK);
	gba = find_gba(components, num);
	REQUIRE(gba != NULL);

	/* one memory domain, named like the component */
	cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT |
			   UCT_COMPONENT_ATTR_FIELD_FLAGS;
	REQUIRE(uct_component_query(gba, &cattr) == UCS_OK);
	REQUIRE(cattr.md_resource_count == 1);
	CHECK(cattr.flags == 0);
	cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
	cattr.md_resources = md_resources;
	REQUIRE(uct_component_query(gba, &cattr) == UCS_OK);
	CHECK(!strcmp(md_resources[0].md_name, "gba"));

	/* UCX_GBA_DEVICE: empty by default, read from the environment */
	unsetenv("UCX_GBA_DEVICE");
	REQUIRE(uct_md_config_read(gba, NULL, NULL, &config) == UCS_OK);
	REQUIRE(uct_config_get(config, "DEVICE", value, sizeof(value)) ==
		UCS_OK);
	CHECK(!strcmp(value, ""));
	uct_config_release(config);
	setenv("UCX_GBA_DEVICE", "emu:/uct-gba-md-test", 1);
	REQUIRE(uct_md_config_read(gba, NULL, NULL, &config) == UCS_OK);
	REQUIRE(uct_config_get(config, "DEVICE", value, sizeof(value)) ==
		UCS_OK);
	CHECK(!strcmp(value, "emu:/uct-gba-md-test"));

	REQUIRE(uct_md_open(gba, md_resources[0].md_name, config, &md) ==
		UCS_OK);
	uct_config_release(config);
	CHECK(!strcmp(((uct_gba_md_t *)md)->device, "emu:/uct-gba-md-test"));

	test_md(gba, md);
	test_alloc(gba, md);
	test_iface(gba, md);
	uct_md_close(md);
	uct_release_component_list(components);

	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("uct_gba_md: all checks passed\n");
	return 0;
}
