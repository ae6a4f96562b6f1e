/*
 * libfabric "gba" provider: AV sets (fi_av_set(3)), the member lists
 * that fi_join_collective turns into GBA groups.
 *
 * A set is an ordered list of fi_addr_t of one AV, without duplicates;
 * the position of an address is its rank in collectives.  fi_av_set_addr
 * returns the set's own address as coll_addr (gba_av_set_from_addr
 * recovers the set).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

static struct fi_ops gba_av_set_fi_ops;

/* The gba AV set behind @fid, or NULL if it is not one. */
static struct gba_av_set *gba_av_set_of(const struct fid_av_set *fid)
{
	if (!fid || fid->fid.fclass != FI_CLASS_AV_SET ||
	    fid->fid.ops != &gba_av_set_fi_ops)
		return NULL;
	return container_of(fid, struct gba_av_set, av_set_fid);
}

/*
 * Every open AV set of the process: a coll_addr is an application value,
 * so it is looked up here rather than dereferenced.
 */
static pthread_mutex_t gba_av_set_live_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, gba_av_set)
	gba_av_set_live = LIST_HEAD_INITIALIZER(gba_av_set_live);

/* gba_av_set_from_addr - the set behind @coll_addr, or NULL. */
struct gba_av_set *gba_av_set_from_addr(fi_addr_t coll_addr)
{
	struct gba_av_set *set;

	if (coll_addr == FI_ADDR_NOTAVAIL || !coll_addr)
		return NULL;
	pthread_mutex_lock(&gba_av_set_live_lock);
	LIST_FOREACH(set, &gba_av_set_live, live)
		if ((fi_addr_t)(uintptr_t)&set->av_set_fid == coll_addr)
			break;
	pthread_mutex_unlock(&gba_av_set_live_lock);
	return set;
}

/* Position of @addr in @set, or -1. */
static ssize_t gba_av_set_index(const struct gba_av_set *set, fi_addr_t addr)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		if (set->members[i] == addr)
			return (ssize_t)i;
	return -1;
}

/* Make room for @need members.  0 or -FI_ENOMEM. */
static int gba_av_set_grow(struct gba_av_set *set, size_t need)
{
	fi_addr_t *m;
	size_t n;

	if (need <= set->size)
		return 0;
	n = set->size ? set->size : 16;
	while (n < need)
		n *= 2;
	m = realloc(set->members, n * sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	set->members = m;
	set->size = n;
	return 0;
}

/* Append @addr (not yet a member).  0 or -FI_ENOMEM. */
static int gba_av_set_append(struct gba_av_set *set, fi_addr_t addr)
{
	int ret = gba_av_set_grow(set, set->count + 1);

	if (!ret)
		set->members[set->count++] = addr;
	return ret;
}

/* Both sets valid and of one AV?  Logs and returns -FI_EINVAL if not. */
static int gba_av_set_pair(struct fid_av_set *dst_fid,
			   const struct fid_av_set *src_fid,
			   struct gba_av_set **dst, struct gba_av_set **src,
			   const char *op)
{
	*dst = gba_av_set_of(dst_fid);
	*src = gba_av_set_of(src_fid);
	if (!*dst || !*src)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_%s: not a gba AV set\n", op);
	if ((*dst)->av != (*src)->av)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_%s: sets of different AVs\n",
				    op);
	return 0;
}

/*
 * gba_av_set_union - fi_av_set_union(3): append to @dst the members of
 * @src it lacks (in @src's order).  Returns 0, -FI_EINVAL, -FI_ENOMEM.
 */
static int gba_av_set_union_locked(struct fid_av_set *dst_fid,
				   const struct fid_av_set *src_fid)
{
	struct gba_av_set *dst, *src;
	size_t i;
	int ret;

	ret = gba_av_set_pair(dst_fid, src_fid, &dst, &src, "union");
	if (ret)
		return ret;
	if (dst == src)
		return 0;
	ret = gba_av_set_grow(dst, dst->count + src->count);
	if (ret)
		return ret;
	for (i = 0; i < src->count; i++)
		if (gba_av_set_index(dst, src->members[i]) < 0)
			dst->members[dst->count++] = src->members[i];
	return 0;
}

/*
 * gba_av_set_intersect - fi_av_set_intersect(3): keep in @dst only the
 * members also in @src (in @dst's order).  Returns 0 or -FI_EINVAL.
 */
static int gba_av_set_intersect_locked(struct fid_av_set *dst_fid,
				       const struct fid_av_set *src_fid)
{
	struct gba_av_set *dst, *src;
	size_t i, n = 0;
	int ret;

	ret = gba_av_set_pair(dst_fid, src_fid, &dst, &src, "intersect");
	if (ret)
		return ret;
	for (i = 0; i < dst->count; i++)
		if (gba_av_set_index(src, dst->members[i]) >= 0)
			dst->members[n++] = dst->members[i];
	dst->count = n;
	return 0;
}

/*
 * gba_av_set_diff - fi_av_set_diff(3): remove from @dst the members of
 * @src.  Returns 0 or -FI_EINVAL.
 */
static int gba_av_set_diff_locked(struct fid_av_set *dst_fid,
				  const struct fid_av_set *src_fid)
{
	struct gba_av_set *dst, *src;
	size_t i, n = 0;
	int ret;

	ret = gba_av_set_pair(dst_fid, src_fid, &dst, &src, "diff");
	if (ret)
		return ret;
	if (dst == src) {
		dst->count = 0;
		return 0;
	}
	for (i = 0; i < dst->count; i++)
		if (gba_av_set_index(src, dst->members[i]) < 0)
			dst->members[n++] = dst->members[i];
	dst->count = n;
	return 0;
}

/*
 * gba_av_set_insert - fi_av_set_insert(3): append @addr, which must be
 * an address of the set's AV.  Returns 0, -FI_EINVAL (not in the AV, or
 * already a member), -FI_ENOMEM.
 */
static int gba_av_set_insert_locked(struct fid_av_set *set_fid, fi_addr_t addr)
{
	struct gba_av_set *set = gba_av_set_of(set_fid);

	if (!set)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_insert: not a gba AV set\n");
	if (!gba_av_addr(set->av, addr))
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_insert: fi_addr %llu not in "
				    "the AV\n",
				    (unsigned long long)addr);
	if (gba_av_set_index(set, addr) >= 0)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_insert: fi_addr %llu already "
				    "a member\n",
				    (unsigned long long)addr);
	return gba_av_set_append(set, addr);
}

/*
 * gba_av_set_remove - fi_av_set_remove(3): remove @addr keeping the
 * order of the others.  Returns 0 or -FI_EINVAL (not a member).
 */
static int gba_av_set_remove_locked(struct fid_av_set *set_fid, fi_addr_t addr)
{
	struct gba_av_set *set = gba_av_set_of(set_fid);
	ssize_t i;

	if (!set)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_remove: not a gba AV set\n");
	i = gba_av_set_index(set, addr);
	if (i < 0)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_remove: fi_addr %llu not a "
				    "member\n",
				    (unsigned long long)addr);
	memmove(&set->members[i], &set->members[i + 1],
		(set->count - (size_t)i - 1) * sizeof(set->members[0]));
	set->count--;
	return 0;
}

/*
 * The set operations run under the AV's lock (FI_THREAD_SAFE: sets of one
 * AV may be changed from several threads); the _locked bodies above
 * document arguments and returns.
 */
#define GBA_AV_SET_LOCKED(call, fid)                                           \
	({                                                                     \
		struct gba_av_set *s_ = gba_av_set_of(fid);                    \
		int r_;                                                        \
		if (s_)                                                        \
			gba_lock_acquire(&s_->av->lock);                       \
		r_ = (call);                                                   \
		if (s_)                                                        \
			gba_lock_release(&s_->av->lock);                       \
		r_;                                                            \
	})

static int gba_av_set_union(struct fid_av_set *dst,
			    const struct fid_av_set *src)
{
	return GBA_AV_SET_LOCKED(gba_av_set_union_locked(dst, src), dst);
}

static int gba_av_set_intersect(struct fid_av_set *dst,
				const struct fid_av_set *src)
{
	return GBA_AV_SET_LOCKED(gba_av_set_intersect_locked(dst, src), dst);
}

static int gba_av_set_diff(struct fid_av_set *dst, const struct fid_av_set *src)
{
	return GBA_AV_SET_LOCKED(gba_av_set_diff_locked(dst, src), dst);
}

static int gba_av_set_insert(struct fid_av_set *set, fi_addr_t addr)
{
	return GBA_AV_SET_LOCKED(gba_av_set_insert_locked(set, addr), set);
}

static int gba_av_set_remove(struct fid_av_set *set, fi_addr_t addr)
{
	return GBA_AV_SET_LOCKED(gba_av_set_remove_locked(set, addr), set);
}

/*
 * gba_av_set_addr - fi_av_set_addr(3): the collective address of the set
 * (for fi_join_collective).  Returns 0 or -FI_EINVAL.
 */
static int gba_av_set_addr(struct fid_av_set *set_fid, fi_addr_t *coll_addr)
{
	struct gba_av_set *set = gba_av_set_of(set_fid);

	if (!set || !coll_addr)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set_addr: bad set or NULL "
				    "coll_addr\n");
	*coll_addr = (fi_addr_t)(uintptr_t)&set->av_set_fid;
	return 0;
}

/*
 * fi_close(3) on an AV set: -FI_EBUSY while a collective holds it.
 * Returns 0 or -FI_EBUSY.
 */
static int gba_av_set_close(struct fid *fid)
{
	struct gba_av_set *set =
		container_of(fid, struct gba_av_set, av_set_fid.fid);

	if (atomic_load(&set->ref)) {
		FI_WARN(&gba_prov, FI_LOG_AV,
			"AV set still used by %d collective joins\n",
			atomic_load(&set->ref));
		return -FI_EBUSY;
	}
	pthread_mutex_lock(&gba_av_set_live_lock);
	LIST_REMOVE(set, live);
	pthread_mutex_unlock(&gba_av_set_live_lock);
	atomic_fetch_sub(&set->av->ref, 1);
	free(set->members);
	free(set);
	return 0;
}

static struct fi_ops gba_av_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_av_set_close,
	.bind = gba_no_bind,
	.control = gba_no_control,
	.ops_open = gba_no_ops_open,
};

static struct fi_ops_av_set gba_av_set_ops = {
	.size = sizeof(struct fi_ops_av_set),
	.set_union = gba_av_set_union,
	.intersect = gba_av_set_intersect,
	.diff = gba_av_set_diff,
	.insert = gba_av_set_insert,
	.remove = gba_av_set_remove,
	.addr = gba_av_set_addr,
};

/*
 * gba_av_set_open - fi_av_set(3).
 * @attr: flags FI_UNIVERSE (every address of the AV, in fi_addr order;
 *        start/end/stride ignored) or 0; otherwise the fi_addr values
 *        start_addr, start_addr + stride, ... <= end_addr, each of which
 *        must be in the AV (start_addr FI_ADDR_NOTAVAIL: empty set);
 *        count is a capacity hint; comm_key not supported.
 * Returns 0, -FI_EINVAL (bad range or stride, address not in the AV),
 * -FI_ENOSYS (comm_key), -FI_ENOMEM.
 */
int gba_av_set_open(struct fid_av *av_fid, struct fi_av_set_attr *attr,
		    struct fid_av_set **set_fid, void *context)
{
	struct gba_av *av;
	struct gba_av_set *set;
	fi_addr_t a;
	size_t i;
	int ret = 0;

	if (!av_fid || !attr || !set_fid)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set: NULL av, attr or set\n");
	av = container_of(av_fid, struct gba_av, av_fid);
	if (attr->flags & ~FI_UNIVERSE)
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_set: flags 0x%llx not supported\n",
				    (unsigned long long)attr->flags);
	if (attr->comm_key_size || attr->comm_key)
		return GBA_WARN_RET(FI_LOG_AV, -FI_ENOSYS,
				    "fi_av_set: comm_key not supported\n");
	if (!(attr->flags & FI_UNIVERSE) &&
	    attr->start_addr != FI_ADDR_NOTAVAIL) {
		if (attr->end_addr < attr->start_addr ||
		    attr->end_addr == FI_ADDR_NOTAVAIL)
			return GBA_WARN_RET(
				FI_LOG_AV, -FI_EINVAL,
				"fi_av_set: end_addr %llu before "
				"start_addr %llu\n",
				(unsigned long long)attr->end_addr,
				(unsigned long long)attr->start_addr);
		if (!attr->stride && attr->end_addr != attr->start_addr)
			return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
					    "fi_av_set: stride 0\n");
	}

	set = calloc(1, sizeof(*set));
	if (!set)
		return -FI_ENOMEM;
	set->av = av;
	set->flags = attr->flags;
	atomic_init(&set->ref, 0);
	if (attr->count && attr->count <= GBA_AV_MAX_SIZE)
		ret = gba_av_set_grow(set, attr->count);

	gba_lock_acquire(&av->lock);
	if (!ret && (attr->flags & FI_UNIVERSE)) {
		for (i = 0; i < av->count && !ret; i++)
			if (gba_av_addr(av, i))
				ret = gba_av_set_append(set, i);
	} else if (!ret && attr->start_addr != FI_ADDR_NOTAVAIL) {
		for (a = attr->start_addr; a <= attr->end_addr && !ret;) {
			if (!gba_av_addr(av, a)) {
				FI_WARN(&gba_prov, FI_LOG_AV,
					"fi_av_set: fi_addr %llu not in the "
					"AV\n",
					(unsigned long long)a);
				ret = -FI_EINVAL;
				break;
			}
			ret = gba_av_set_append(set, a);
			if (!attr->stride || attr->end_addr - a < attr->stride)
				break;
			a += attr->stride;
		}
	}
	if (!ret)
		atomic_fetch_add(&av->ref, 1);
	gba_lock_release(&av->lock);
	if (ret) {
		free(set->members);
		free(set);
		return ret;
	}

	set->av_set_fid.fid.fclass = FI_CLASS_AV_SET;
	set->av_set_fid.fid.context = context;
	set->av_set_fid.fid.ops = &gba_av_set_fi_ops;
	set->av_set_fid.ops = &gba_av_set_ops;
	pthread_mutex_lock(&gba_av_set_live_lock);
	LIST_INSERT_HEAD(&gba_av_set_live, set, live);
	pthread_mutex_unlock(&gba_av_set_live_lock);
	*set_fid = &set->av_set_fid;
	return 0;
}
