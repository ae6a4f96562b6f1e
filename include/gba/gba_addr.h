/*
 * GBA core library: endpoint addresses.
 *
 * An endpoint address is an opaque, fixed-size byte string that both front
 * ends (libfabric fi_getname/fi_av_insert, UCX iface/ep addresses) exchange
 * out of band.  doc/design.md section 4.  The layout is fixed here so that it
 * can be validated on insertion; users treat it as opaque.
 */
#ifndef GBA_ADDR_H
#define GBA_ADDR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GBA_ADDR_MAGIC 0x41414247u /* "GBAA" little-endian */
/*
 * Version 2 (48 bytes) added the network address (net, port) by which
 * endpoints on other hosts reach the endpoint; version 1 addresses (24
 * bytes, no network address) are refused by gba_addr_valid.
 */
#define GBA_ADDR_VERSION 2
#define GBA_ADDR_STRLEN 112	/* enough for gba_addr_str() incl. NUL */

struct gba_addr {
	uint32_t magic;		/* GBA_ADDR_MAGIC */
	uint16_t version;	/* GBA_ADDR_VERSION */
	uint16_t reserved;	/* 0 */
	uint32_t pid;		/* owning process */
	uint32_t ep_id;		/* endpoint number, unique within the process */
	uint64_t host_id;	/* identifies the host (gba_host_id) */
	/*
	 * The endpoint's TCP listener for peers on other hosts
	 * (doc/design.md section 9): an IPv6 address, IPv4 as
	 * ::ffff:a.b.c.d; all zero, with port 0: not reachable from
	 * other hosts.
	 */
	uint8_t net[16];
	uint16_t port;		/* TCP port, network byte order; 0: none */
	uint16_t reserved2[3];	/* 0 */
};

/*
 * The identity of an endpoint: the first GBA_ADDR_ID_LEN bytes (magic,
 * version, reserved, pid, ep_id, host_id).  net and port say how to reach
 * it, not who it is: lookups by address (the provider's reverse AV map)
 * key on the identity.
 */
#define GBA_ADDR_ID_LEN 24

/* Reachability of a peer address from a local one. */
enum gba_reach {
	GBA_REACH_SELF,		/* same endpoint: direct (loopback) path */
	GBA_REACH_PROCESS,	/* another endpoint of this process */
	GBA_REACH_HOST,		/* another process on this host */
	GBA_REACH_NONE,		/* another host: not reachable */
	GBA_REACH_NET,		/* another host, reached over TCP */
};

/*
 * gba_addr_init_local - fill @addr for a new endpoint of this process with
 * a process-unique ep_id.  Returns 0 or -EINVAL.
 */
int gba_addr_init_local(struct gba_addr *addr);

/*
 * gba_addr_valid - 1 if @buf of @len bytes is a well-formed address
 * (size, magic, version, reserved fields zero), else 0.
 */
int gba_addr_valid(const void *buf, size_t len);

/*
 * gba_addr_check - gba_addr_valid with the reason: 0, or -EINVAL with a
 * short description in *@why (a static string): the size, the magic, an
 * address of another version (an older build's 24-byte version 1
 * address), or a reserved field not zero.
 */
int gba_addr_check(const void *buf, size_t len, const char **why);

/*
 * gba_addr_reach - how @peer is reached from @local: same host means the
 * same gba_host_id() (one kernel and one /dev/shm); a peer on another
 * host is GBA_REACH_NET when both addresses carry a network address (the
 * engine's TCP path), else GBA_REACH_NONE.
 */
enum gba_reach gba_addr_reach(const struct gba_addr *local,
			      const struct gba_addr *peer);

/* gba_addr_equal - 1 if both name the same endpoint. */
int gba_addr_equal(const struct gba_addr *a, const struct gba_addr *b);

/*
 * gba_addr_str - printable form "gba://<host_id hex>/<pid>/<ep_id>",
 * followed by "@<IPv4>:<port>" or "@[<IPv6>]:<port>" when the address
 * has a network address, in
 * @buf of @len bytes (GBA_ADDR_STRLEN is enough; shorter buffers get a
 * truncated, NUL-terminated string).  Returns the length the full string
 * needs, excluding the NUL, as snprintf does.
 */
int gba_addr_str(const struct gba_addr *addr, char *buf, size_t len);

/* gba_addr_parse - inverse of gba_addr_str.  Returns 0 or -EINVAL. */
int gba_addr_parse(const char *str, struct gba_addr *addr);

/* gba_addr_hash - 64-bit hash of a sequence of addresses (FNV-1a). */
uint64_t gba_addr_hash(const struct gba_addr *addrs, size_t count,
		       uint64_t seed);

/*
 * gba_host_id - this host's identifier: a hash of what makes processes
 * share a host for the fabric (the shared-memory path): the kernel boot
 * id, the device and inode of /dev/shm's mount and the host name (UTS
 * namespace).  Emulated hosts (scripts/emu_hosts.sh) share the kernel but
 * not /dev/shm, so they differ.  Never 0.
 */
uint64_t gba_host_id(void);

/*
 * gba_addr_service - a service address: service @service (1..65535) of
 * host @node (a host name or a numeric address) of another host, into
 * @addr: pid 0, host_id 0, ep_id @service, net @node's address (IPv4
 * first), port @service (network order).  It names an endpoint by host
 * and service before its identity is known; gba_eng_service_lookup asks
 * that host for the identity (an AV insert does).  Nothing is contacted
 * here.  Returns 0, -EINVAL (bad arguments), -EHOSTUNREACH (@node does
 * not resolve).
 */
int gba_addr_service(const char *node, uint32_t service,
		     struct gba_addr *addr);

/* Whether @addr is a service address (gba_addr_service). */
static inline int gba_addr_is_service(const struct gba_addr *addr)
{
	return !addr->pid && !addr->host_id && addr->port &&
	       addr->ep_id && addr->ep_id <= 0xffff;
}

/*
 * gba_net_local - this process's network address for other hosts (the
 * engine's TCP listeners bind to it), into @net (16 bytes, IPv6 or
 * IPv4-mapped): from @spec when not NULL, else GBA_NET_ADDR, else the
 * address this host's name resolves to (its first IPv4 address, else its
 * first IPv6).  @spec and GBA_NET_ADDR are a numeric address or a host
 * name; "none" disables the TCP path.  Returns 0, -ENOENT (disabled, or
 * no address by default), -EINVAL (@spec or GBA_NET_ADDR does not
 * resolve; logged on stderr).  The default is computed once per process.
 */
int gba_net_local(const char *spec, uint8_t net[16]);

#ifdef __cplusplus
}
#endif

#endif /* GBA_ADDR_H */
