/*
 * GBA core library: endpoint addresses (include/gba/gba_addr.h).
 *
 * host_id is a 64-bit FNV-1a hash of the kernel boot id, /dev/shm's
 * device and inode and the host name, so that two processes that share a
 * kernel and a /dev/shm agree on it without talking; ep_id comes from a
 * process-wide atomic counter.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
	/*
	 * The boot id alone is shared by emulated hosts (namespaces of one
	 * kernel): what the shared-memory path needs is the same /dev/shm
	 * mount, and the host name tells hosts apart as users see them.
	 */
	{
		struct stat st;
		char name[256];
		uint64_t dev_ino[2] = {0, 0};

		if (!stat("/dev/shm", &st)) {
			dev_ino[0] = (uint64_t)st.st_dev;
			dev_ino[1] = (uint64_t)st.st_ino;
		}
		id = gba_fnv1a(id, dev_ino, sizeof(dev_ino));
		if (!gethostname(name, sizeof(name))) {
			name[sizeof(name) - 1] = '\0';
			id = gba_fnv1a(id, name, strlen(name));
		}
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

int gba_addr_check(const void *buf, size_t len, const char **why)
{
	struct gba_addr a;
	const char *w = NULL;
	uint32_t magic;
	uint16_t version;

	if (!buf) {
		w = "no address";
	} else if (len >= 6) {
		memcpy(&magic, buf, sizeof(magic));
		memcpy(&version, (const char *)buf + 4, sizeof(version));
		if (magic != GBA_ADDR_MAGIC)
			w = "not a gba address (magic)";
		else if (version != GBA_ADDR_VERSION)
			w = version < GBA_ADDR_VERSION
				    ? "an address of an older version (without "
				      "a network address: rebuild the peer)"
				    : "an address of a newer version";
	}
	if (!w && len != sizeof(a))
		w = "wrong size for a gba address";
	if (!w) {
		memcpy(&a, buf, sizeof(a));
		if (a.reserved || a.reserved2[0] || a.reserved2[1] ||
		    a.reserved2[2])
			w = "reserved fields not zero";
	}
	if (why)
		*why = w;
	return w ? -EINVAL : 0;
}

int gba_addr_valid(const void *buf, size_t len)
{
	return !gba_addr_check(buf, len, NULL);
}

/* Whether @a carries a network address (the TCP path can reach it). */
static int addr_has_net(const struct gba_addr *a)
{
	static const uint8_t zero[16];

	return a->port && memcmp(a->net, zero, sizeof(zero));
}

enum gba_reach gba_addr_reach(const struct gba_addr *local,
			      const struct gba_addr *peer)
{
	if (!local || !peer)
		return GBA_REACH_NONE;
	if (local->host_id != peer->host_id)
		return addr_has_net(local) && addr_has_net(peer)
			       ? GBA_REACH_NET
			       : GBA_REACH_NONE;
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

/* The IPv4 address mapped in @net (::ffff:a.b.c.d), or 0 for IPv6. */
static int net_v4(const uint8_t net[16])
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0,
					   0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(net, prefix, sizeof(prefix));
}

int gba_addr_str(const struct gba_addr *addr, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "";

	if (!addr)
		return -EINVAL;
	if (!addr_has_net(addr))
		return snprintf(buf, buf ? len : 0,
				"gba://%016" PRIx64 "/%" PRIu32 "/%" PRIu32,
				addr->host_id, addr->pid, addr->ep_id);
	if (net_v4(addr->net))
		inet_ntop(AF_INET, addr->net + 12, ip, sizeof(ip));
	else
		inet_ntop(AF_INET6, addr->net, ip, sizeof(ip));
	return snprintf(buf, buf ? len : 0,
			"gba://%016" PRIx64 "/%" PRIu32 "/%" PRIu32 "@%s%s%s:%u",
			addr->host_id, addr->pid, addr->ep_id,
			net_v4(addr->net) ? "" : "[", ip,
			net_v4(addr->net) ? "" : "]", ntohs(addr->port));
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

/* Parse "@<IPv4>:<port>" or "@[<IPv6>]:<port>" at @s into @addr. */
static int parse_net(const char *s, struct gba_addr *addr)
{
	char ip[INET6_ADDRSTRLEN];
	const char *end, *colon;
	uint64_t port;
	size_t n;

	if (*s++ != '@')
		return -EINVAL;
	if (*s == '[') {
		end = strchr(++s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		end = colon = strrchr(s, ':');
		if (!end)
			return -EINVAL;
	}
	n = (size_t)(end - s);
	if (!n || n >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, s, n);
	ip[n] = '\0';
	/* IPv6 only in brackets (its colons would be ambiguous) */
	if (end == colon && inet_pton(AF_INET, ip, addr->net + 12) == 1) {
		memset(addr->net, 0, 10);
		addr->net[10] = addr->net[11] = 0xff;
	} else if (end == colon || inet_pton(AF_INET6, ip, addr->net) != 1) {
		return -EINVAL;
	}
	s = colon + 1;
	if (parse_u64(&s, 10, 5, '\0', 65535, &port) || !port)
		return -EINVAL;
	addr->port = htons((uint16_t)port);
	return 0;
}

int gba_addr_parse(const char *str, struct gba_addr *addr)
{
	uint64_t host, pid, ep;
	struct gba_addr a;
	const char *s = str, *at;

	if (!str || !addr || strncmp(s, "gba://", 6))
		return -EINVAL;
	s += 6;
	memset(&a, 0, sizeof(a));
	at = strchr(s, '@');
	if (at) {
		char head[64];

		if ((size_t)(at - s) >= sizeof(head) || parse_net(at, &a))
			return -EINVAL;
		memcpy(head, s, (size_t)(at - s));
		head[at - s] = '\0';
		s = head;
		if (parse_u64(&s, 16, 16, '/', UINT64_MAX, &host) ||
		    parse_u64(&s, 10, 10, '/', UINT32_MAX, &pid) ||
		    parse_u64(&s, 10, 10, '\0', UINT32_MAX, &ep))
			return -EINVAL;
	} else if (parse_u64(&s, 16, 16, '/', UINT64_MAX, &host) ||
		   parse_u64(&s, 10, 10, '/', UINT32_MAX, &pid) ||
		   parse_u64(&s, 10, 10, '\0', UINT32_MAX, &ep)) {
		return -EINVAL;
	}
	*addr = a;
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

/* ---- The host's network address (the engine's TCP path) ---------------- */

/* Resolve @name (numeric or a host name) into @net; 0 or -EINVAL. */
static int net_resolve(const char *name, uint8_t net[16])
{
	struct addrinfo hints, *res = NULL, *ai, *pick = NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(name, NULL, &hints, &res) || !res)
		return -EINVAL;
	/* an IPv4 address first: the emulated hosts' bridge is IPv4 */
	for (ai = res; ai && !pick; ai = ai->ai_next)
		if (ai->ai_family == AF_INET)
			pick = ai;
	for (ai = res; ai && !pick; ai = ai->ai_next)
		if (ai->ai_family == AF_INET6)
			pick = ai;
	if (!pick) {
		freeaddrinfo(res);
		return -EINVAL;
	}
	memset(net, 0, 16);
	if (pick->ai_family == AF_INET) {
		net[10] = net[11] = 0xff;
		memcpy(net + 12,
		       &((struct sockaddr_in *)pick->ai_addr)->sin_addr, 4);
	} else {
		memcpy(net, &((struct sockaddr_in6 *)pick->ai_addr)->sin6_addr,
		       16);
	}
	freeaddrinfo(res);
	return 0;
}

int gba_addr_service(const char *node, uint32_t service, struct gba_addr *addr)
{
	if (!node || !*node || !service || service > UINT16_MAX || !addr)
		return -EINVAL;
	memset(addr, 0, sizeof(*addr));
	addr->magic = GBA_ADDR_MAGIC;
	addr->version = GBA_ADDR_VERSION;
	addr->ep_id = service;
	addr->port = htons((uint16_t)service);
	if (net_resolve(node, addr->net))
		return gba_err_set(-EHOSTUNREACH, "host %s does not resolve",
				   node);
	return 0;
}

static pthread_once_t net_default_once = PTHREAD_ONCE_INIT;
static uint8_t net_default[16];
static int net_default_ret;

static void net_default_init(void)
{
	const char *env = getenv("GBA_NET_ADDR");
	char name[256];

	if (env && *env) {
		if (!strcmp(env, "none")) {
			net_default_ret = -ENOENT;
			return;
		}
		net_default_ret = net_resolve(env, net_default);
		if (net_default_ret)
			fprintf(stderr,
				"gba: GBA_NET_ADDR=%s does not resolve to an "
				"address: no TCP path to other hosts\n",
				env);
		return;
	}
	if (gethostname(name, sizeof(name))) {
		net_default_ret = -ENOENT;
		return;
	}
	name[sizeof(name) - 1] = '\0';
	net_default_ret = net_resolve(name, net_default) ? -ENOENT : 0;
}

int gba_net_local(const char *spec, uint8_t net[16])
{
	int ret;

	if (!net)
		return -EINVAL;
	if (spec && *spec) {
		if (!strcmp(spec, "none"))
			return -ENOENT;
		ret = net_resolve(spec, net);
		if (ret)
			fprintf(stderr,
				"gba: network address %s does not resolve: "
				"no TCP path to other hosts\n",
				spec);
		return ret;
	}
	pthread_once(&net_default_once, net_default_init);
	if (!net_default_ret)
		memcpy(net, net_default, 16);
	return net_default_ret;
}
