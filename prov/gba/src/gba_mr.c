/*
 * libfabric "gba" provider: memory registration (fi_mr(3)).
 *
 * A registration records up to GBA_MR_IOV_LIMIT buffers, the access
 * rights and a key, in the domain's key map (uthash).  With FI_MR_PROV_KEY
 * the provider assigns keys, otherwise requested_key is used (-FI_ENOKEY
 * if in use).  With FI_MR_VIRT_ADDR remote addresses are virtual
 * addresses of the buffers, otherwise offsets: byte 0 of the region is
 * remote address @offset (fi_mr_reg's offset argument) and the buffers of
 * an iov follow one another.  Nothing is pinned: the self path and the
 * emulated fabric access the memory directly.  A counter bound to a
 * region (fi_mr_bind) counts the remote writes and atomics (FI_REMOTE_WRITE)
 * or reads (FI_REMOTE_READ) that access it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

#define GBA_MR_ACCESS                                                          \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |             \
	 FI_REMOTE_WRITE | FI_COLLECTIVE)

/* The region registered under @key, or NULL.  Domain lock held. */
static struct gba_mr *gba_mr_find(struct gba_domain *domain, uint64_t key)
{
	struct gba_mr *mr = NULL;

	HASH_FIND(hh, domain->mr_map, &key, sizeof(key), mr);
	return mr;
}

/*
 * gba_mr_lookup - validate a remote access (see gba_obj.h) with the
 * core's checks (gba_eng.h): every bit of @access granted, and the access
 * inside one buffer of the region.  Returns 0, -FI_EKEYREJECTED,
 * -FI_EACCES, -FI_EINVAL.
 */
int gba_mr_lookup(struct gba_domain *domain, uint64_t key, uint64_t addr,
		  size_t len, uint64_t access, void **ptr,
		  struct gba_cntr **cntr)
{
	struct gba_mr *mr;
	uint64_t off;
	size_t i;
	int ret = -FI_EINVAL;

	if (!domain || !ptr)
		return -FI_EINVAL;
	gba_lock_acquire(&domain->lock);
	mr = gba_mr_find(domain, key);
	if (!mr || !mr->enabled) {
		ret = -FI_EKEYREJECTED;
		goto out;
	}
	if (cntr)
		*cntr = mr->cntr_flags & access ? mr->cntr : NULL;
	if (gba_eng_access_check(mr->access, access)) {
		ret = -FI_EACCES;
		goto out;
	}
	if (domain->mr_mode & FI_MR_VIRT_ADDR) {
		for (i = 0; i < mr->iov_count; i++) {
			if (!gba_eng_range_check((uintptr_t)mr->iov[i].iov_base,
						 mr->iov[i].iov_len, addr,
						 len)) {
				*ptr = (void *)(uintptr_t)addr;
				ret = 0;
				goto out;
			}
		}
		goto out;
	}
	if (addr < mr->offset)
		goto out;
	off = addr - mr->offset;
	for (i = 0; i < mr->iov_count; i++) {
		size_t ilen = mr->iov[i].iov_len;

		if (!gba_eng_range_check(0, ilen, off, len)) {
			*ptr = (uint8_t *)mr->iov[i].iov_base + off;
			ret = 0;
			goto out;
		}
		if (off < ilen)
			break; /* spans two buffers */
		off -= ilen;
	}
out:
	gba_lock_release(&domain->lock);
	if (ret)
		FI_DBG(&gba_prov, FI_LOG_MR,
		       "key 0x%llx addr 0x%llx len %zu access 0x%llx: %s\n",
		       (unsigned long long)key, (unsigned long long)addr, len,
		       (unsigned long long)access, fi_strerror(-ret));
	return ret;
}

/*
 * gba_mr_close - fi_close(3) on an MR: drop its key and its reference on
 * a bound counter.  Returns 0.
 */
static int gba_mr_close(struct fid *fid)
{
	struct gba_mr *mr = container_of(fid, struct gba_mr, mr_fid.fid);
	struct gba_domain *domain = mr->domain;

	gba_lock_acquire(&domain->lock);
	HASH_DEL(domain->mr_map, mr);
	gba_lock_release(&domain->lock);
	if (mr->cntr)
		atomic_fetch_sub(&mr->cntr->ref, 1);
	atomic_fetch_sub(&domain->nmr, 1);
	atomic_fetch_sub(&domain->ref, 1);
	free(mr);
	return 0;
}

/*
 * gba_mr_bind - fi_mr_bind(3): count the remote accesses of the region
 * named by @flags (FI_REMOTE_WRITE: writes and atomics, FI_REMOTE_READ:
 * reads) on counter @bfid, of the region's domain; one counter per
 * region, which cannot close while the region is open.  Returns 0,
 * -FI_EINVAL (NULL or not a counter, another domain, a counter already
 * bound), -FI_EBADFLAGS (no or other flags).
 */
static int gba_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct gba_mr *mr = container_of(fid, struct gba_mr, mr_fid.fid);
	struct gba_cntr *cntr;
	int ret = 0;

	if (!bfid || bfid->fclass != FI_CLASS_CNTR)
		return GBA_WARN_RET(FI_LOG_MR, -FI_EINVAL,
				    "fi_mr_bind: %s, need a counter\n",
				    bfid ? fi_tostr(&bfid->fclass, FI_TYPE_FID)
					 : "NULL fid");
	if (!flags || (flags & ~(FI_REMOTE_WRITE | FI_REMOTE_READ)))
		return GBA_WARN_RET(FI_LOG_MR, -FI_EBADFLAGS,
				    "fi_mr_bind: flags 0x%llx: FI_REMOTE_WRITE "
				    "and/or FI_REMOTE_READ\n",
				    (unsigned long long)flags);
	cntr = container_of(bfid, struct gba_cntr, cntr_fid.fid);
	if (cntr->domain != mr->domain)
		return GBA_WARN_RET(FI_LOG_MR, -FI_EINVAL,
				    "fi_mr_bind: counter of another domain\n");
	gba_lock_acquire(&mr->domain->lock);
	if (mr->cntr) {
		ret = -FI_EINVAL;
	} else {
		atomic_fetch_add(&cntr->ref, 1);
		mr->cntr_flags = flags;
		mr->cntr = cntr;
	}
	gba_lock_release(&mr->domain->lock);
	if (ret)
		FI_WARN(&gba_prov, FI_LOG_MR,
			"fi_mr_bind: the region already has a counter\n");
	return ret;
}

/*
 * gba_mr_control - fi_control(3) on an MR: FI_ENABLE (fi_mr_enable) opens
 * a region registered with FI_RMA_EVENT to remote access (0 otherwise
 * too).  Returns 0 or -FI_ENOSYS (other commands).
 */
static int gba_mr_control(struct fid *fid, int command, void *arg)
{
	struct gba_mr *mr = container_of(fid, struct gba_mr, mr_fid.fid);

	if (command != FI_ENABLE)
		return gba_no_control(fid, command, arg);
	gba_lock_acquire(&mr->domain->lock);
	mr->enabled = true;
	gba_lock_release(&mr->domain->lock);
	return 0;
}

static struct fi_ops gba_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_mr_close,
	.bind = gba_mr_bind,
	.control = gba_mr_control,
	.ops_open = gba_no_ops_open,
};

/*
 * gba_mr_regattr - fi_mr_regattr(3), the common path of reg/regv.
 * @fid: the domain.  @attr: mr_iov/iov_count (1..mr_iov_limit; NULL base
 * only with length 0), access (FI_SEND, FI_RECV, FI_READ, FI_WRITE,
 * FI_REMOTE_READ, FI_REMOTE_WRITE, FI_COLLECTIVE), offset, requested_key
 * (ignored with FI_MR_PROV_KEY), context, iface (FI_HMEM_SYSTEM only), no
 * auth key.  @flags: 0 or FI_RMA_EVENT (the region takes no remote
 * access until fi_mr_enable, so that a counter can be bound first).
 * Returns 0, -FI_EINVAL, -FI_EBADFLAGS, -FI_ENOSYS (iface, auth key),
 * -FI_ENOKEY (requested key in use), -FI_ENOSPC (mr_cnt regions),
 * -FI_ENOMEM.
 */
int gba_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr_fid)
{
	struct gba_domain *domain;
	struct gba_mr *mr;
	size_t i;
	int ret;

	if (!fid || fid->fclass != FI_CLASS_DOMAIN || !attr || !mr_fid)
		return GBA_WARN_RET(FI_LOG_MR, -FI_EINVAL,
				    "fi_mr_reg: need a domain, attr and mr\n");
	domain = container_of(fid, struct gba_domain, domain_fid.fid);
	if (flags & ~FI_RMA_EVENT)
		return GBA_WARN_RET(FI_LOG_MR, -FI_EBADFLAGS,
				    "fi_mr_reg: flags 0x%llx not supported\n",
				    (unsigned long long)flags);
	if (!attr->iov_count || !attr->mr_iov)
		return GBA_WARN_RET(FI_LOG_MR, -FI_EINVAL,
				    "fi_mr_reg: no buffer (iov_count %zu)\n",
				    attr->iov_count);
	if (attr->iov_count > GBA_MR_IOV_LIMIT)
		return GBA_WARN_RET(FI_LOG_MR, -FI_EINVAL,
				    "fi_mr_regv: iov_count %zu > mr_iov_limit "
				    "%d\n",
				    attr->iov_count, GBA_MR_IOV_LIMIT);
	for (i = 0; i < attr->iov_count; i++)
		if (!attr->mr_iov[i].iov_base && attr->mr_iov[i].iov_len)
			return GBA_WARN_RET(FI_LOG_MR, -FI_EINVAL,
					    "fi_mr_reg: iov[%zu] NULL with "
					    "length %zu\n",
					    i, attr->mr_iov[i].iov_len);
	if (attr->access & ~GBA_MR_ACCESS)
		return GBA_WARN_RET(FI_LOG_MR, -FI_EINVAL,
				    "fi_mr_reg: access 0x%llx has unknown "
				    "bits\n",
				    (unsigned long long)attr->access);
	if (attr->iface != FI_HMEM_SYSTEM)
		return GBA_WARN_RET(FI_LOG_MR, -FI_ENOSYS,
				    "fi_mr_reg: iface %s not supported (no "
				    "FI_HMEM)\n",
				    fi_tostr(&attr->iface, FI_TYPE_HMEM_IFACE));
	if (attr->auth_key_size || attr->auth_key)
		return GBA_WARN_RET(FI_LOG_MR, -FI_ENOSYS,
				    "fi_mr_reg: authentication keys not "
				    "supported\n");
	if (atomic_fetch_add(&domain->nmr, 1) >= GBA_MR_CNT) {
		atomic_fetch_sub(&domain->nmr, 1);
		return GBA_WARN_RET(FI_LOG_MR, -FI_ENOSPC,
				    "fi_mr_reg: %d regions already registered "
				    "(domain mr_cnt)\n",
				    GBA_MR_CNT);
	}

	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		atomic_fetch_sub(&domain->nmr, 1);
		return -FI_ENOMEM;
	}
	mr->domain = domain;
	mr->access = attr->access;
	mr->offset = attr->offset;
	mr->flags = flags;
	mr->enabled = !(flags & FI_RMA_EVENT);
	mr->iov_count = attr->iov_count;
	for (i = 0; i < attr->iov_count; i++) {
		mr->iov[i] = attr->mr_iov[i];
		mr->len += attr->mr_iov[i].iov_len;
	}

	gba_lock_acquire(&domain->lock);
	if (domain->mr_mode & FI_MR_PROV_KEY) {
		do {
			mr->key = domain->next_key++;
		} while (gba_mr_find(domain, mr->key));
	} else {
		if (gba_mr_find(domain, attr->requested_key)) {
			gba_lock_release(&domain->lock);
			atomic_fetch_sub(&domain->nmr, 1);
			free(mr);
			return GBA_WARN_RET(
				FI_LOG_MR, -FI_ENOKEY,
				"fi_mr_reg: key 0x%llx in use\n",
				(unsigned long long)attr->requested_key);
		}
		mr->key = attr->requested_key;
	}
	HASH_ADD(hh, domain->mr_map, key, sizeof(mr->key), mr);
	gba_lock_release(&domain->lock);

	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = &gba_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = mr->key;
	atomic_fetch_add(&domain->ref, 1);
	*mr_fid = &mr->mr_fid;
	ret = 0;
	FI_DBG(&gba_prov, FI_LOG_MR,
	       "registered %zu bytes in %zu buffers, "
	       "key 0x%llx\n",
	       mr->len, mr->iov_count, (unsigned long long)mr->key);
	return ret;
}

/*
 * gba_mr_regv - fi_mr_regv(3): register @count buffers of @iov.
 * Arguments and returns as gba_mr_regattr.
 */
int gba_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return gba_mr_regattr(fid, &attr, flags, mr);
}

/*
 * gba_mr_reg - fi_mr_reg(3): register @len bytes at @buf.  Arguments and
 * returns as gba_mr_regattr.
 */
int gba_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context)
{
	struct iovec iov = {
		.iov_base = (void *)buf,
		.iov_len = len,
	};

	return gba_mr_regv(fid, &iov, 1, access, offset, requested_key, flags,
			   mr, context);
}
