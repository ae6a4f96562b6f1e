/*
 * libfabric "gba" provider: wait sets (fi_wait_open(3), fi_wait).
 *
 * A wait set is a wait object that its members (CQs, EQs, counters
 * opened with FI_WAIT_SET) signal, and a list of those members.  Each
 * member registers a readiness callback when it joins (gba_wait_set_add):
 * fi_wait asks the members through it, so this module knows no member
 * class (libfabric's util wait sets ask their members the same way).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

static const UT_icd gba_wait_set_member_icd = {
	.sz = sizeof(struct gba_wait_set_member),
};

static int gba_wait_set_close(struct fid *fid)
{
	struct gba_wait_set *set =
		container_of(fid, struct gba_wait_set, wait_fid.fid);

	if (atomic_load(&set->ref)) {
		FI_WARN(&gba_prov, FI_LOG_CORE,
			"wait set still has %d members\n",
			atomic_load(&set->ref));
		return -FI_EBUSY;
	}
	gba_wait_fini(&set->wait);
	pthread_mutex_destroy(&set->lock);
	utarray_done(&set->members);
	atomic_fetch_sub(&set->fabric->ref, 1);
	free(set);
	return 0;
}

/*
 * gba_wait_set_control - fi_control(3) on a wait set: FI_GETWAIT (int *fd,
 * FI_WAIT_FD sets only) and FI_GETWAITOBJ (enum fi_wait_obj *).
 * Returns 0, -FI_EINVAL (NULL arg), -FI_ENODATA (no fd), -FI_ENOSYS.
 */
static int gba_wait_set_control(struct fid *fid, int command, void *arg)
{
	struct gba_wait_set *set =
		container_of(fid, struct gba_wait_set, wait_fid.fid);

	if (!arg)
		return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
				    "wait set control: NULL argument\n");
	switch (command) {
	case FI_GETWAIT:
		if (set->wait.type != FI_WAIT_FD)
			return GBA_WARN_RET(FI_LOG_CORE, -FI_ENODATA,
					    "FI_GETWAIT: wait set has no fd\n");
		atomic_store(&set->wait.exported, true);
		*(int *)arg = set->wait.fd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = set->wait.type;
		return 0;
	default:
		return gba_no_control(fid, command, arg);
	}
}

/*
 * gba_wait_set_ready - true if a member of @set has something to read;
 * each member is asked (and progressed) through the callback it
 * registered, until one is ready.  *@pending as in gba_prov.h.
 */
bool gba_wait_set_ready(struct gba_wait_set *set, bool *pending)
{
	struct gba_wait_set_member *m = NULL;
	bool ready = false;

	pthread_mutex_lock(&set->lock);
	while (!ready && (m = utarray_next(&set->members, m)))
		ready = m->ready(m->fid, pending);
	pthread_mutex_unlock(&set->lock);
	return ready;
}

/*
 * gba_wait_set_wait - fi_wait(3): block until a member CQ/EQ/counter has
 * something to read or @timeout ms (<0: forever) pass.  Members are
 * progressed while waiting.  Returns 0 or -FI_ETIMEDOUT.
 */
static int gba_wait_set_wait(struct fid_wait *wait_fid, int timeout)
{
	struct gba_wait_set *set =
		container_of(wait_fid, struct gba_wait_set, wait_fid);
	uint64_t deadline =
		timeout < 0 ? UINT64_MAX : gba_now_ms() + (uint64_t)timeout;
	unsigned token;
	uint64_t now;
	bool pending;
	int left;

	for (;;) {
		pending = false;
		if (gba_wait_set_ready(set, &pending))
			return 0;
		now = gba_now_ms();
		if (now >= deadline)
			return -FI_ETIMEDOUT;
		token = gba_wait_enter(&set->wait);
		if (gba_wait_set_ready(set, &pending)) {
			gba_wait_leave(&set->wait);
			return 0;
		}
		left = deadline == UINT64_MAX ? -1 : (int)(deadline - now);
		/* Release flags are written without a signal: poll them. */
		if (pending && (left < 0 || left > 1))
			left = 1;
		gba_wait_sleep(&set->wait, token, left);
		gba_wait_leave(&set->wait);
	}
}

static struct fi_ops gba_wait_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_wait_set_close,
	.bind = gba_no_bind,
	.control = gba_wait_set_control,
	.ops_open = gba_no_ops_open,
};

static struct fi_ops_wait gba_wait_set_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = gba_wait_set_wait,
};

/*
 * gba_wait_set_open - fi_wait_open(3).  @attr->wait_obj: FI_WAIT_UNSPEC
 * or FI_WAIT_FD (FI_WAIT_YIELD polls); @attr->flags must be 0.
 * Returns 0, -FI_EINVAL, -FI_ENOSYS, -FI_ENOMEM, -FI_EMFILE.
 */
int gba_wait_set_open(struct fid_fabric *fabric_fid, struct fi_wait_attr *attr,
		      struct fid_wait **waitset)
{
	struct gba_fabric *fabric =
		container_of(fabric_fid, struct gba_fabric, fabric_fid);
	struct gba_wait_set *set;
	int ret;

	if (!attr || !waitset)
		return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
				    "fi_wait_open: NULL attr or waitset\n");
	if (attr->flags)
		return GBA_WARN_RET(
			FI_LOG_CORE, -FI_EINVAL,
			"fi_wait_open: flags 0x%llx not supported\n",
			(unsigned long long)attr->flags);
	if (attr->wait_obj != FI_WAIT_UNSPEC && attr->wait_obj != FI_WAIT_FD &&
	    attr->wait_obj != FI_WAIT_YIELD)
		return GBA_WARN_RET(FI_LOG_CORE, -FI_ENOSYS,
				    "fi_wait_open: wait object %s not "
				    "supported\n",
				    gba_wait_obj_str(attr->wait_obj));
	set = calloc(1, sizeof(*set));
	if (!set)
		return -FI_ENOMEM;
	ret = gba_wait_init(&set->wait, attr->wait_obj);
	if (ret) {
		free(set);
		return ret;
	}
	pthread_mutex_init(&set->lock, NULL);
	utarray_init(&set->members, &gba_wait_set_member_icd);
	atomic_init(&set->ref, 0);
	set->fabric = fabric;
	set->wait_fid.fid.fclass = FI_CLASS_WAIT;
	set->wait_fid.fid.context = NULL;
	set->wait_fid.fid.ops = &gba_wait_set_fi_ops;
	set->wait_fid.ops = &gba_wait_set_ops;
	atomic_fetch_add(&fabric->ref, 1);
	*waitset = &set->wait_fid;
	return 0;
}

/* gba_wait_set_get - the gba wait set behind @wait_set, or NULL. */
struct gba_wait_set *gba_wait_set_get(struct fid_wait *wait_set)
{
	if (!wait_set || wait_set->fid.fclass != FI_CLASS_WAIT ||
	    wait_set->fid.ops != &gba_wait_set_fi_ops)
		return NULL;
	return container_of(wait_set, struct gba_wait_set, wait_fid);
}

/*
 * gba_wait_set_add - make @member report to @set, asked through @ready
 * (see gba_prov.h).  Returns 0 or -FI_ENOMEM.
 */
int gba_wait_set_add(struct gba_wait_set *set, struct fid *member,
		     bool (*ready)(struct fid *member, bool *pending))
{
	struct gba_wait_set_member m = {.fid = member, .ready = ready};
	int ret;

	pthread_mutex_lock(&set->lock);
	ret = gba_utarray_insert(&set->members, &m, utarray_len(&set->members));
	if (!ret)
		atomic_fetch_add(&set->ref, 1);
	pthread_mutex_unlock(&set->lock);
	return ret;
}

/* gba_wait_set_del - undo gba_wait_set_add (member close). */
void gba_wait_set_del(struct gba_wait_set *set, struct fid *member)
{
	struct gba_wait_set_member *m = NULL, *last;

	pthread_mutex_lock(&set->lock);
	while ((m = utarray_next(&set->members, m))) {
		if (m->fid != member)
			continue;
		last = utarray_back(&set->members);
		*m = *last;
		utarray_pop_back(&set->members);
		atomic_fetch_sub(&set->ref, 1);
		break;
	}
	pthread_mutex_unlock(&set->lock);
}
