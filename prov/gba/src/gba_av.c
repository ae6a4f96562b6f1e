/*
 * libfabric "gba" provider: address vectors (fi_av(3)).
 *
 * Addresses are binary struct gba_addr (48 bytes, addr_format
 * FI_FORMAT_UNSPEC).  Entries live in fixed chunks that never move, so
 * gba_av_addr() (the data path's fi_addr -> address lookup, inline in
 * gba_prov.h) needs no lock.
 * FI_AV_TABLE hands out consecutive indices in insertion order and never
 * reuses removed ones; FI_AV_MAP returns indices too but reuses freed
 * slots.  A reverse map (uthash) serves gba_av_find().  With FI_EVENT the
 * results of an insert are reported on the bound EQ (FI_AV_COMPLETE, and
 * one error entry per bad address) and the call returns 0.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

/*
 * Canonical copy of a (validated) address: reserved bits cleared.  @src
 * is the caller's buffer (fi_av_insert's addr), which need not be aligned
 * for struct gba_addr: it is copied before its fields are read.  The
 * reverse map keys on its first GBA_ADDR_ID_LEN bytes, the endpoint's
 * identity (a message's source carries no network address when it came
 * through shared memory).
 */
static void gba_av_canon(struct gba_addr *dst, const void *src)
{
	struct gba_addr a;

	memcpy(&a, src, sizeof(a));
	memset(dst, 0, sizeof(*dst));
	dst->magic = a.magic;
	dst->version = a.version;
	dst->pid = a.pid;
	dst->ep_id = a.ep_id;
	dst->host_id = a.host_id;
	memcpy(dst->net, a.net, sizeof(dst->net));
	dst->port = a.port;
}

/* gba_av_find - see gba_prov.h. */
fi_addr_t gba_av_find(struct gba_av *av, const struct gba_addr *addr)
{
	struct gba_av_entry *e = NULL;
	struct gba_addr key;
	fi_addr_t ret;

	if (!av || !addr)
		return FI_ADDR_NOTAVAIL;
	gba_av_canon(&key, addr);
	gba_lock_acquire(&av->lock);
	HASH_FIND(hh, av->rmap, &key, GBA_ADDR_ID_LEN, e);
	ret = e ? e->fi_addr : FI_ADDR_NOTAVAIL;
	gba_lock_release(&av->lock);
	return ret;
}

/* Make room for index @i.  Called with the lock held.  0 or -FI_ENOMEM. */
static int gba_av_reserve(struct gba_av *av, size_t i)
{
	size_t c = i / GBA_AV_CHUNK;

	if (i >= GBA_AV_MAX_SIZE)
		return -FI_ENOSPC;
	if (!av->chunks[c]) {
		av->chunks[c] = calloc(GBA_AV_CHUNK, sizeof(**av->chunks));
		if (!av->chunks[c])
			return -FI_ENOMEM;
		av->size += GBA_AV_CHUNK;
	}
	return 0;
}

/*
 * Insert @addr at index @i (lock held): a shared AV's import
 * (gba_av_shared_open's insert callback).  0, -FI_EALREADY, -FI_ENOMEM,
 * -FI_ENOSPC.
 */
static int gba_av_insert_at(struct gba_av *av, size_t i,
			    const struct gba_addr *addr)
{
	struct gba_av_entry *e, *dup = NULL;
	int ret;

	ret = gba_av_reserve(av, i);
	if (ret)
		return ret;
	e = gba_av_entry(av, i);
	if (e->used)
		return -FI_EALREADY;
	gba_av_canon(&e->addr, addr);
	e->fi_addr = i;
	HASH_FIND(hh, av->rmap, &e->addr, GBA_ADDR_ID_LEN, dup);
	if (!dup)
		HASH_ADD(hh, av->rmap, addr, GBA_ADDR_ID_LEN, e);
	__atomic_store_n(&e->used, true, __ATOMIC_RELEASE);
	if (i >= av->count)
		__atomic_store_n(&av->count, i + 1, __ATOMIC_RELEASE);
	av->live++;
	return 0;
}

/* Insert one validated address; *fi_addr receives its index. */
static int gba_av_insert_one(struct gba_av *av, const void *addr,
			     fi_addr_t *fi_addr)
{
	struct gba_av_entry *e, *dup = NULL;
	size_t i;
	int ret;

	if (av->type == FI_AV_MAP) {
		for (i = av->free_hint; i < av->count; i++)
			if (!gba_av_entry(av, i)->used)
				break;
	} else {
		i = av->count;
	}
	ret = gba_av_reserve(av, i);
	if (ret)
		return ret;
	e = gba_av_entry(av, i);
	gba_av_canon(&e->addr, addr);
	e->fi_addr = i;
	HASH_FIND(hh, av->rmap, &e->addr, GBA_ADDR_ID_LEN, dup);
	if (!dup)
		HASH_ADD(hh, av->rmap, addr, GBA_ADDR_ID_LEN, e);
	__atomic_store_n(&e->used, true, __ATOMIC_RELEASE);
	if (i >= av->count)
		__atomic_store_n(&av->count, i + 1, __ATOMIC_RELEASE);
	if (av->type == FI_AV_MAP)
		av->free_hint = i + 1;
	av->live++;
	gba_av_shared_set(av, i, &e->addr);
	*fi_addr = i;
	return 0;
}

/*
 * FI_EVENT: queue the error entry for address @index of an insert (a
 * full EQ keeps it beyond its size; only a failed allocation loses it).
 */
static void gba_av_report(struct gba_av *av, size_t index, int err,
			  void *context)
{
	if (gba_eq_write_error(av->eq, &av->av_fid.fid, context, index, err, 0))
		FI_WARN(&gba_prov, FI_LOG_AV,
			"AV insert: no memory for the EQ entry: error for "
			"address %zu lost\n",
			index);
}

/*
 * FI_EVENT: queue FI_AV_COMPLETE for an insert of which @nok
 * addresses succeeded.  0 or the EQ error (logged).
 */
static int gba_av_complete(struct gba_av *av, size_t nok, void *context)
{
	struct fi_eq_entry entry = {
		.fid = &av->av_fid.fid,
		.context = context,
		.data = nok,
	};
	int ret;

	ret = gba_eq_write_event(av->eq, FI_AV_COMPLETE, &entry, sizeof(entry),
				 0);
	if (ret)
		FI_WARN(&gba_prov, FI_LOG_AV,
			"AV insert: cannot write FI_AV_COMPLETE: %s\n",
			fi_strerror(-ret));
	return ret;
}

/*
 * gba_av_insert - fi_av_insert(3).
 * @addr: @count packed struct gba_addr.  @fi_addr: optional output array
 * (FI_ADDR_NOTAVAIL for addresses that failed).  @flags: FI_MORE (hint,
 * ignored), FI_SYNC_ERR (@context is an int array receiving 0 or a
 * positive FI_E* per address; not with FI_EVENT).  @context: with an
 * FI_EVENT AV, returned in the FI_AV_COMPLETE event.
 * Returns the number of addresses inserted (0 with FI_EVENT: results go
 * to the EQ), -FI_EINVAL, -FI_EBADFLAGS, -FI_ENOEQ (FI_EVENT AV without
 * a bound EQ).  Invalid addresses fail individually with FI_EINVAL.
 */
/*
 * Is the (unaligned) address @p a service address of another host
 * (fi_getinfo's destination for a host and service there)?  If so, it is
 * copied into @svc.
 */
static bool gba_av_service(const void *p, struct gba_addr *svc)
{
	memcpy(svc, p, sizeof(*svc));
	return gba_addr_is_service(svc);
}

/*
 * Ask the host of service address @addr (address @i of the call) for the
 * endpoint's identity, into @addr, with the AV unlocked (the lookup waits
 * for the peer, up to GBA_LOOKUP_MS).  0 or -FI_EHOSTUNREACH.
 */
static int gba_av_ask_service(struct gba_av *av, size_t i,
			      struct gba_addr *addr)
{
	struct gba_addr svc = *addr;
	int ret;

	gba_lock_release(&av->lock);
	ret = gba_eng_service_lookup(&svc, GBA_LOOKUP_MS, addr);
	gba_lock_acquire(&av->lock);
	if (ret)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EHOSTUNREACH,
				    "fi_av_insert: address %zu: %s\n", i,
				    gba_last_error(ret));
	return 0;
}

static int gba_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct gba_av *av = container_of(av_fid, struct gba_av, av_fid);
	const uint8_t *p = addr;
	int *sync_err = NULL;
	size_t i, nok = 0;
	fi_addr_t tmp;
	int ret;

	if (count && !addr)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_insert: NULL addresses\n");
	if (flags & ~(FI_MORE | FI_SYNC_ERR))
		return GBA_WARN_RET(
			FI_LOG_AV, -FI_EBADFLAGS,
			"fi_av_insert: flags 0x%llx not supported\n",
			(unsigned long long)flags);
	if (flags & FI_SYNC_ERR) {
		if (av->flags & FI_EVENT)
			return GBA_WARN_RET(FI_LOG_AV, -FI_EBADFLAGS,
					    "fi_av_insert: FI_SYNC_ERR on an "
					    "FI_EVENT AV\n");
		if (!context)
			return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
					    "fi_av_insert: FI_SYNC_ERR without "
					    "an error array\n");
		sync_err = context;
		memset(sync_err, 0, count * sizeof(*sync_err));
	}
	if (av->flags & FI_READ)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EACCES,
				    "fi_av_insert: AV opened FI_READ\n");
	if ((av->flags & FI_EVENT) && !av->eq)
		return GBA_WARN_RET(FI_LOG_AV, -FI_ENOEQ,
				    "fi_av_insert: FI_EVENT AV has no EQ "
				    "bound\n");

	gba_lock_acquire(&av->lock);
	for (i = 0; i < count; i++, p += sizeof(struct gba_addr)) {
		struct gba_addr found;
		const char *why;

		if (gba_addr_check(p, sizeof(struct gba_addr), &why)) {
			ret = -FI_EINVAL;
			FI_WARN(&gba_prov, FI_LOG_AV,
				"fi_av_insert: address %zu refused: %s\n", i,
				why);
		} else if (gba_av_service(p, &found)) {
			ret = gba_av_ask_service(av, i, &found);
			if (!ret)
				ret = gba_av_insert_one(av, &found, &tmp);
		} else {
			ret = gba_av_insert_one(av, p, &tmp);
		}
		if (fi_addr)
			fi_addr[i] = ret ? FI_ADDR_NOTAVAIL : tmp;
		if (!ret) {
			nok++;
			continue;
		}
		if (ret != -FI_EINVAL)
			FI_WARN(&gba_prov, FI_LOG_AV,
				"fi_av_insert: address %zu: %s\n", i,
				fi_strerror(-ret));
		if (sync_err)
			sync_err[i] = -ret;
		if (av->flags & FI_EVENT)
			gba_av_report(av, i, -ret, context);
	}
	gba_lock_release(&av->lock);

	if (av->flags & FI_EVENT) {
		gba_av_complete(av, nok, context);
		return 0;
	}
	return (int)nok;
}

/*
 * gba_av_insertsvc - fi_av_insertsvc(3): insert the address named by
 * @node/@service (syntax of gba_resolve: "gba://<host>/<pid>/<ep>", or
 * localhost/this host's name with service "<ep>" or "<pid>/<ep>").
 * Returns as fi_av_insert for one address; an unresolvable name is
 * -FI_EINVAL (or an FI_EVENT error entry).
 */
static int gba_av_insertsvc(struct fid_av *av_fid, const char *node,
			    const char *service, fi_addr_t *fi_addr,
			    uint64_t flags, void *context)
{
	struct gba_av *av = container_of(av_fid, struct gba_av, av_fid);
	struct gba_addr addr;

	if (!node && !service)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_insertsvc: no node or service\n");
	if (gba_resolve_dest(node, service, &addr)) {
		FI_WARN(&gba_prov, FI_LOG_AV,
			"fi_av_insertsvc: cannot resolve \"%s\" \"%s\"\n",
			node ? node : "", service ? service : "");
		if (flags & ~(FI_MORE | FI_SYNC_ERR))
			return -FI_EBADFLAGS;
		if (fi_addr)
			*fi_addr = FI_ADDR_NOTAVAIL;
		if ((av->flags & FI_EVENT) && av->eq) {
			gba_av_report(av, 0, FI_EINVAL, context);
			gba_av_complete(av, 0, context);
			return 0;
		}
		if ((flags & FI_SYNC_ERR) && context)
			*(int *)context = FI_EINVAL;
		return -FI_EINVAL;
	}
	return gba_av_insert(av_fid, &addr, 1, fi_addr, flags, context);
}

/*
 * gba_av_insertsym - fi_av_insertsym(3): @svccnt addresses of endpoints
 * <ep>, <ep>+1, ... of the process named by @node/@service (as in
 * insertsvc; @service gives the first endpoint number).  Only one node
 * can be named this way: @nodecnt must be 1.  Returns the number
 * inserted (0 with FI_EVENT), -FI_EINVAL, -FI_EBADFLAGS.
 */
static int gba_av_insertsym(struct fid_av *av_fid, const char *node,
			    size_t nodecnt, const char *service, size_t svccnt,
			    fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct gba_addr base, *addrs;
	size_t i;
	int ret;

	if (!node || !service || nodecnt != 1 || !svccnt)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_insertsym: need node, service, "
				    "nodecnt 1 and svccnt > 0 (got %zu, %zu)\n",
				    nodecnt, svccnt);
	if (svccnt > GBA_AV_MAX_SIZE)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_insertsym: svccnt %zu too large\n",
				    svccnt);
	if (!strncmp(node, "gba://", 6) || gba_resolve(node, service, &base))
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_insertsym: cannot resolve \"%s\" "
				    "\"%s\"\n",
				    node, service);
	if ((uint64_t)base.ep_id + svccnt - 1 > UINT32_MAX)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_insertsym: endpoint numbers "
				    "overflow\n");
	addrs = calloc(svccnt, sizeof(*addrs));
	if (!addrs)
		return -FI_ENOMEM;
	for (i = 0; i < svccnt; i++) {
		addrs[i] = base;
		addrs[i].ep_id = base.ep_id + (uint32_t)i;
	}
	ret = gba_av_insert(av_fid, addrs, svccnt, fi_addr, flags, context);
	free(addrs);
	return ret;
}

/* Re-point the reverse map at another live copy of @e's address. */
static void gba_av_rehash(struct gba_av *av, struct gba_av_entry *e)
{
	struct gba_av_entry *h = NULL;
	size_t i;

	HASH_FIND(hh, av->rmap, &e->addr, GBA_ADDR_ID_LEN, h);
	if (h != e)
		return;
	HASH_DEL(av->rmap, e);
	for (i = 0; i < av->count; i++) {
		struct gba_av_entry *o = gba_av_entry(av, i);

		if (o != e && o->used &&
		    !memcmp(&o->addr, &e->addr, GBA_ADDR_ID_LEN)) {
			HASH_ADD(hh, av->rmap, addr, GBA_ADDR_ID_LEN, o);
			break;
		}
	}
}

/*
 * gba_av_remove - fi_av_remove(3): remove @count addresses.  @flags must
 * be 0.  Every valid entry is removed even if some are not; returns 0 or
 * -FI_EINVAL (NULL array, unknown or already removed fi_addr), -FI_EBADFLAGS.
 */
static int gba_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			 size_t count, uint64_t flags)
{
	struct gba_av *av = container_of(av_fid, struct gba_av, av_fid);
	struct gba_av_entry *e;
	int ret = 0;
	size_t i;

	if (count && !fi_addr)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_remove: NULL fi_addr array\n");
	if (flags)
		return GBA_WARN_RET(
			FI_LOG_AV, -FI_EBADFLAGS,
			"fi_av_remove: flags 0x%llx not supported\n",
			(unsigned long long)flags);
	if (av->flags & FI_READ)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EACCES,
				    "fi_av_remove: AV opened FI_READ\n");
	gba_lock_acquire(&av->lock);
	for (i = 0; i < count; i++) {
		if (fi_addr[i] >= av->count ||
		    !gba_av_entry(av, fi_addr[i])->used) {
			FI_WARN(&gba_prov, FI_LOG_AV,
				"fi_av_remove: fi_addr %llu not in the AV\n",
				(unsigned long long)fi_addr[i]);
			ret = -FI_EINVAL;
			continue;
		}
		e = gba_av_entry(av, fi_addr[i]);
		gba_av_rehash(av, e);
		__atomic_store_n(&e->used, false, __ATOMIC_RELEASE);
		gba_av_shared_set(av, fi_addr[i], NULL);
		av->live--;
		atomic_fetch_add_explicit(&av->gen, 1, memory_order_release);
		if (av->type == FI_AV_MAP && fi_addr[i] < av->free_hint)
			av->free_hint = fi_addr[i];
	}
	gba_lock_release(&av->lock);
	return ret;
}

/*
 * gba_av_lookup - fi_av_lookup(3): copy the address of @fi_addr into
 * @addr (at most *@addrlen bytes) and set *@addrlen to its full size
 * (sizeof(struct gba_addr)); a short buffer gets a truncated copy, as the
 * man page specifies.  Returns 0 or -FI_EINVAL (unknown fi_addr, NULL
 * addrlen, NULL addr with *addrlen > 0).
 */
static int gba_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	struct gba_av *av = container_of(av_fid, struct gba_av, av_fid);
	const struct gba_addr *a;
	size_t n;

	if (!addrlen || (*addrlen && !addr))
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_lookup: NULL addr or addrlen\n");
	a = gba_av_addr(av, fi_addr);
	if (!a)
		return GBA_WARN_RET(
			FI_LOG_AV, -FI_EINVAL,
			"fi_av_lookup: fi_addr %llu not in the AV\n",
			(unsigned long long)fi_addr);
	n = *addrlen < sizeof(*a) ? *addrlen : sizeof(*a);
	if (n < sizeof(*a))
		FI_INFO(&gba_prov, FI_LOG_AV,
			"fi_av_lookup: buffer of %zu bytes, address is %zu\n",
			*addrlen, sizeof(*a));
	if (n)
		memcpy(addr, a, n);
	*addrlen = sizeof(*a);
	return 0;
}

/*
 * gba_av_straddr - fi_av_straddr(3): printable form of the binary address
 * @addr, "gba://<host_id hex>/<pid>/<ep_id>", or "gba://invalid" when
 * @addr is not a gba address.  Writes at most *@len bytes (always NUL-
 * terminated) and sets *@len to the size needed including the NUL.
 * Returns @buf, or NULL for NULL @buf/@len.
 */
static const char *gba_av_straddr(struct fid_av *av_fid, const void *addr,
				  char *buf, size_t *len)
{
	char tmp[GBA_ADDR_STRLEN];
	int n;

	if (!buf || !len || !*len) {
		FI_WARN(&gba_prov, FI_LOG_AV,
			"fi_av_straddr: NULL or empty buffer\n");
		if (len)
			*len = GBA_ADDR_STRLEN;
		return NULL;
	}
	if (addr && gba_addr_valid(addr, sizeof(struct gba_addr)))
		n = gba_addr_str(addr, tmp, sizeof(tmp));
	else
		n = snprintf(tmp, sizeof(tmp), "gba://invalid");
	if (n < 0)
		n = snprintf(tmp, sizeof(tmp), "gba://invalid");
	snprintf(buf, *len, "%s", tmp);
	*len = (size_t)n + 1;
	return buf;
}

/*
 * gba_av_bind - fi_av_bind(3): bind the EQ that receives FI_EVENT
 * results.  @flags must be 0.  Returns 0, -FI_EINVAL (not an EQ, AV not
 * opened with FI_EVENT, EQ already bound).
 */
static int gba_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct gba_av *av = container_of(fid, struct gba_av, av_fid.fid);
	struct gba_eq *eq;

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_bind: only an EQ can be bound\n");
	if (flags)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_bind: flags 0x%llx not supported\n",
				    (unsigned long long)flags);
	if (!(av->flags & FI_EVENT))
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_bind: AV not opened with "
				    "FI_EVENT\n");
	if (av->eq)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_bind: an EQ is already bound\n");
	eq = container_of(bfid, struct gba_eq, eq_fid.fid);
	atomic_fetch_add(&eq->ref, 1);
	av->eq = eq;
	return 0;
}

/*
 * fi_close(3) on an AV: -FI_EBUSY while AV sets or endpoints use it.
 * Returns 0 or -FI_EBUSY.
 */
static int gba_av_close(struct fid *fid)
{
	struct gba_av *av = container_of(fid, struct gba_av, av_fid.fid);
	size_t i;

	if (atomic_load(&av->ref)) {
		FI_WARN(&gba_prov, FI_LOG_AV,
			"AV still used by %d AV sets/endpoints\n",
			atomic_load(&av->ref));
		return -FI_EBUSY;
	}
	if (av->eq)
		atomic_fetch_sub(&av->eq->ref, 1);
	gba_av_shared_close(av);
	HASH_CLEAR(hh, av->rmap);
	for (i = 0; i < av->nchunks; i++)
		free(av->chunks[i]);
	free(av->chunks);
	gba_lock_destroy(&av->lock);
	atomic_fetch_sub(&av->domain->ref, 1);
	free(av);
	return 0;
}

static struct fi_ops gba_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_av_close,
	.bind = gba_av_bind,
	.control = gba_no_control,
	.ops_open = gba_no_ops_open,
};

static struct fi_ops_av gba_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = gba_av_insert,
	.insertsvc = gba_av_insertsvc,
	.insertsym = gba_av_insertsym,
	.remove = gba_av_remove,
	.lookup = gba_av_lookup,
	.straddr = gba_av_straddr,
	.av_set = gba_av_set_open,
};

/*
 * gba_av_open - fi_av_open(3).
 * @attr: type (FI_AV_UNSPEC: the domain's av_type, else FI_AV_TABLE),
 *        count (initial size hint, at most GBA_AV_MAX_SIZE), flags
 *        (FI_EVENT, FI_SYMMETRIC; FI_READ opens the named AV another
 *        process created, read-only), rx_ctx_bits 0, name (a named AV
 *        shared between processes, see gba_av_shared.c; with FI_READ,
 *        map_addr is set to its fi_addr array), ep_per_node ignored.
 * Returns 0, -FI_EINVAL, -FI_ENOENT (FI_READ of an unknown name),
 * -FI_ENOSYS (rx_ctx_bits), -FI_ENOMEM.
 */
int gba_av_open(struct fid_domain *domain_fid, struct fi_av_attr *attr,
		struct fid_av **av_fid, void *context)
{
	struct gba_domain *domain;
	struct gba_av *av;
	int ret;

	if (!domain_fid || !attr || !av_fid)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_open: NULL domain, attr or av\n");
	domain = container_of(domain_fid, struct gba_domain, domain_fid);
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
	    attr->type != FI_AV_TABLE)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_open: invalid type %d\n",
				    attr->type);
	if (attr->flags & ~(FI_EVENT | FI_SYMMETRIC | FI_READ))
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_open: flags 0x%llx not supported\n",
				    (unsigned long long)attr->flags);
	if ((attr->flags & FI_READ) && !attr->name)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_open: FI_READ needs a name\n");
	if (attr->rx_ctx_bits)
		return GBA_WARN_RET(FI_LOG_AV, -FI_ENOSYS,
				    "fi_av_open: rx_ctx_bits %d: no scalable "
				    "endpoints\n",
				    attr->rx_ctx_bits);
	if (attr->count > GBA_AV_MAX_SIZE)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_open: count %zu > %zu\n",
				    attr->count, GBA_AV_MAX_SIZE);

	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->nchunks = GBA_AV_MAX_SIZE / GBA_AV_CHUNK;
	av->chunks = calloc(av->nchunks, sizeof(*av->chunks));
	if (!av->chunks) {
		free(av);
		return -FI_ENOMEM;
	}
	ret = gba_lock_init(&av->lock, domain->locking);
	if (ret) {
		free(av->chunks);
		free(av);
		return ret;
	}
	av->type = attr->type != FI_AV_UNSPEC	     ? attr->type
		   : domain->av_type != FI_AV_UNSPEC ? domain->av_type
						     : FI_AV_TABLE;
	av->flags = attr->flags;
	av->domain = domain;
	atomic_init(&av->ref, 0);
	/* Preallocate for the size hint (first chunk at least). */
	gba_av_reserve(av, attr->count ? attr->count - 1 : 0);
	if (attr->name) {
		ret = gba_av_shared_open(av, attr, gba_av_insert_at);
		if (ret) {
			gba_av_shared_close(av);
			for (size_t i = 0; i < av->nchunks; i++)
				free(av->chunks[i]);
			HASH_CLEAR(hh, av->rmap);
			free(av->chunks);
			gba_lock_destroy(&av->lock);
			free(av);
			return ret;
		}
	}
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &gba_av_fi_ops;
	av->av_fid.ops = &gba_av_ops;
	atomic_fetch_add(&domain->ref, 1);
	*av_fid = &av->av_fid;
	return 0;
}
