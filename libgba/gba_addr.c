/*
 * GBA core library: endpoint addresses (include/gba/gba_addr.h).
 *
 * host_id is a 64-bit FNV-1a hash of the kernel boot id, so that two
 * processes of one boot of one host agree on it without talking; ep_id
 * comes from a process-wide atomic counter.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gba/gba_addr.h>

#include "gba_backend.h"

#define FNV64_PRIME 0x100000001b3ULL

uint64_t gba_fnv1a(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV64_PRIME;
	}
	return h;
}

static _Atomic uint32_t gba_next_ep_id;
static _Atomic uint64_t gba_cached_host_id;

uint64_t gba_host_id(void)
{
	uint64_t id = atomic_load_explicit(&gba_cached_host_id,
					   memory_order_relaxed);
	char boot_id[64];
	size_t n = 0;
	FILE *f;

	if (id)
		return id;

	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		n = fread(boot_id, 1, sizeof(boot_id), f);
		fclose(f);
		/* strip the trailing newline */
		while (n && (boot_id[n - 1] == '\n' || boot_id[n - 1] == ' '))
			n--;
	}
	if (n) {
		id = gba_fnv1a(GBA_FNV64_OFFSET, boot_id, n);
	} else {
		long hid = gethostid();

		id = gba_fnv1a(GBA_FNV64_OFFSET, &hid, sizeof(hid));
	}
	if (!id)
		id = 1; /* 0 is reserved as "not computed yet" */
	atomic_store_explicit(&gba_cached_host_id, id, memory_order_relaxed);
	return id;
}

int gba_addr_init_local(struct gba_addr *addr)
{
	if (!addr)
		return -EINVAL;
	memset(addr, 0, sizeof(*addr));
	addr->magic = GBA_ADDR_MAGIC;
	addr->version = GBA_ADDR_VERSION;
	addr->pid = (uint32_t)getpid();
	addr->ep_id = atomic_fetch_add_explicit(&gba_next_ep_id, 1,
						memory_order_relaxed);
	addr->host_id = gba_host_id();
	return 0;
}

int gba_addr_valid(const void *buf, size_t len)
{
	struct gba_addr a;

	if (!buf || len != sizeof(a))
		return 0;
	memcpy(&a, buf, sizeof(a));
	return a.magic == GBA_ADDR_MAGIC && a.version == GBA_ADDR_VERSION &&
	       a.reserved == 0;
}

enum gba_reach gba_addr_reach(const struct gba_addr *local,
			      const struct gba_addr *peer)
{
	if (!local || !peer || local->host_id != peer->host_id)
		return GBA_REACH_NONE;
	if (local->pid != peer->pid)
		return GBA_REACH_HOST;
	if (local->ep_id != peer->ep_id)
		return GBA_REACH_PROCESS;
	return GBA_REACH_SELF;
}

int gba_addr_equal(const struct gba_addr *a, const struct gba_addr *b)
{
	if (!a || !b)
		return 0;
	return a->magic == b->magic && a->version == b->version &&
	       a->pid == b->pid && a->ep_id == b->ep_id &&
	       a->host_id == b->host_id;
}

int gba_addr_str(const struct gba_addr *addr, char *buf, size_t len)
{
	if (!addr)
		return -EINVAL;
	return snprintf(buf, buf ? len : 0, "gba://%016" PRIx64 "/%" PRIu32
			"/%" PRIu32, addr->host_id, addr->pid, addr->ep_id);
}

/* Parse an unsigned number of the given base up to @end; 0 or -EINVAL. */
static int parse_u64(const char **sp, int base, int max_digits,
		     char end, uint64_t max, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;
	int n = 0, d;

	for (;; s++) {
		char c = *s;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (++n > max_digits)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
	if (!n || *s != end || v > max)
		return -EINVAL;
	*sp = end ? s + 1 : s;
	*out = v;
	return 0;
}

int gba_addr_parse(const char *str, struct gba_addr *addr)
{
	uint64_t host, pid, ep;
	const char *s = str;

	if (!str || !addr || strncmp(s, "gba://", 6))
		return -EINVAL;
	s += 6;
	if (parse_u64(&s, 16, 16, '/', UINT64_MAX, &host) ||
	    parse_u64(&s, 10, 10, '/', UINT32_MAX, &pid) ||
	    parse_u64(&s, 10, 10, '\0', UINT32_MAX, &ep))
		return -EINVAL;
	memset(addr, 0, sizeof(*addr));
	addr->magic = GBA_ADDR_MAGIC;
	addr->version = GBA_ADDR_VERSION;
	addr->host_id = host;
	addr->pid = (uint32_t)pid;
	addr->ep_id = (uint32_t)ep;
	return 0;
}

uint64_t gba_addr_hash(const struct gba_addr *addrs, size_t count,
		       uint64_t seed)
{
	uint64_t h = GBA_FNV64_OFFSET;
	size_t i;

	h = gba_fnv1a(h, &seed, sizeof(seed));
	for (i = 0; addrs && i < count; i++) {
		/* hash field by field: the struct has no padding, but be
		 * explicit so the hash never depends on layout */
		h = gba_fnv1a(h, &addrs[i].magic, sizeof(addrs[i].magic));
		h = gba_fnv1a(h, &addrs[i].version, sizeof(addrs[i].version));
		h = gba_fnv1a(h, &addrs[i].pid, sizeof(addrs[i].pid));
		h = gba_fnv1a(h, &addrs[i].ep_id, sizeof(addrs[i].ep_id));
		h = gba_fnv1a(h, &addrs[i].host_id, sizeof(addrs[i].host_id));
	}
	return h;
}
