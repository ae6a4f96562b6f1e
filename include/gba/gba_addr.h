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
#define GBA_ADDR_VERSION 1
#define GBA_ADDR_STRLEN 64	/* enough for gba_addr_str() incl. NUL */

struct gba_addr {
	uint32_t magic;		/* GBA_ADDR_MAGIC */
	uint16_t version;	/* GBA_ADDR_VERSION */
	uint16_t reserved;	/* 0 */
	uint32_t pid;		/* owning process */
	uint32_t ep_id;		/* endpoint number, unique within the process */
	uint64_t host_id;	/* identifies the host (boot id hash) */
};

/* Reachability of a peer address from a local one. */
enum gba_reach {
	GBA_REACH_SELF,		/* same endpoint: direct (loopback) path */
	GBA_REACH_PROCESS,	/* another endpoint of this process */
	GBA_REACH_HOST,		/* another process on this host */
	GBA_REACH_NONE,		/* another host: not reachable */
};

/*
 * gba_addr_init_local - fill @addr for a new endpoint of this process with
 * a process-unique ep_id.  Returns 0 or -EINVAL.
 */
int gba_addr_init_local(struct gba_addr *addr);

/*
 * gba_addr_valid - 1 if @buf of @len bytes is a well-formed address
 * (size, magic, version), else 0.
 */
int gba_addr_valid(const void *buf, size_t len);

/* gba_addr_reach - how @peer is reached from @local. */
enum gba_reach gba_addr_reach(const struct gba_addr *local,
			      const struct gba_addr *peer);

/* gba_addr_equal - 1 if both name the same endpoint. */
int gba_addr_equal(const struct gba_addr *a, const struct gba_addr *b);

/*
 * gba_addr_str - printable form "gba://<host_id hex>/<pid>/<ep_id>" in
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

/* gba_host_id - this host's identifier (hash of the kernel boot id). */
uint64_t gba_host_id(void);

#ifdef __cplusplus
}
#endif

#endif /* GBA_ADDR_H */
