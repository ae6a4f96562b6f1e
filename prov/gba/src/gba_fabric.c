/*
 * libfabric "gba" provider: fabric (fi_fabric(3)), wait sets and
 * fi_trywait (fi_poll(3)).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_prov.h"

/* ---- Wait sets ----------------------------------------------------------- */

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
	free(set->members);
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
 * True if a member of @set has something to read; *@pending as in
 * gba_fid_ready.
 */
static bool gba_wait_set_ready(struct gba_wait_set *set, bool *pending)
{
	bool ready = false;
	size_t i;

	pthread_mutex_lock(&set->lock);
	for (i = 0; i < set->nmembers && !ready; i++)
		ready = gba_fid_ready(set->members[i], pending);
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
 * gba_wait_open - fi_wait_open(3).  @attr->wait_obj: FI_WAIT_UNSPEC or
 * FI_WAIT_FD (FI_WAIT_YIELD polls); @attr->flags must be 0.
 * Returns 0, -FI_EINVAL, -FI_ENOSYS, -FI_ENOMEM, -FI_EMFILE.
 */
static int gba_wait_open(struct fid_fabric *fabric_fid,
			 struct fi_wait_attr *attr, struct fid_wait **waitset)
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

/* gba_wait_set_add - make @member report to @set.  0 or -FI_ENOMEM. */
int gba_wait_set_add(struct gba_wait_set *set, struct fid *member)
{
	struct fid **m;
	int ret = 0;

	pthread_mutex_lock(&set->lock);
	if (set->nmembers == set->msize) {
		size_t n = set->msize ? set->msize * 2 : 8;

		m = realloc(set->members, n * sizeof(*m));
		if (!m) {
			ret = -FI_ENOMEM;
			goto out;
		}
		set->members = m;
		set->msize = n;
	}
	set->members[set->nmembers++] = member;
	atomic_fetch_add(&set->ref, 1);
out:
	pthread_mutex_unlock(&set->lock);
	return ret;
}

/* gba_wait_set_del - undo gba_wait_set_add (member close). */
void gba_wait_set_del(struct gba_wait_set *set, struct fid *member)
{
	size_t i;

	pthread_mutex_lock(&set->lock);
	for (i = 0; i < set->nmembers; i++) {
		if (set->members[i] == member) {
			set->members[i] = set->members[--set->nmembers];
			atomic_fetch_sub(&set->ref, 1);
			break;
		}
	}
	pthread_mutex_unlock(&set->lock);
}

/*
 * gba_fid_ready - see gba_prov.h.  Unknown classes are "not ready" (the
 * caller validated them).
 */
bool gba_fid_ready(struct fid *fid, bool *pending)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		return gba_cq_ready(
			container_of(fid, struct gba_cq, cq_fid.fid), pending);
	case FI_CLASS_EQ:
		return gba_eq_ready(
			container_of(fid, struct gba_eq, eq_fid.fid));
	case FI_CLASS_CNTR:
		return gba_cntr_ready(
			container_of(fid, struct gba_cntr, cntr_fid.fid),
			pending);
	case FI_CLASS_WAIT:
		return gba_wait_set_ready(
			container_of(fid, struct gba_wait_set, wait_fid.fid),
			pending);
	default:
		return false;
	}
}

/*
 * The wait object of a CQ, EQ, counter or wait set; NULL for other
 * classes.
 */
static struct gba_wait *gba_fid_wait(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		return &container_of(fid, struct gba_cq, cq_fid.fid)->wait;
	case FI_CLASS_EQ:
		return &container_of(fid, struct gba_eq, eq_fid.fid)->wait;
	case FI_CLASS_CNTR:
		return &container_of(fid, struct gba_cntr, cntr_fid.fid)->wait;
	case FI_CLASS_WAIT:
		return &container_of(fid, struct gba_wait_set, wait_fid.fid)
				->wait;
	default:
		return NULL;
	}
}

/*
 * gba_trywait - fi_trywait(3): before blocking on the fds of @fids, make
 * sure none has something to read.  Resets the fds' signals first, so a
 * later event signals again.  Returns 0 (safe to block), -FI_EAGAIN
 * (read first), -FI_EINVAL (NULL, wrong class or FI_WAIT_NONE object).
 */
static int gba_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	struct gba_wait *wait;
	int i;

	if (count < 0 || (count && !fids))
		return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
				    "fi_trywait: bad fid array\n");
	for (i = 0; i < count; i++) {
		if (!fids[i])
			return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
					    "fi_trywait: NULL fid %d\n", i);
		wait = gba_fid_wait(fids[i]);
		if (!wait)
			return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
					    "fi_trywait: fid class %zu has no "
					    "wait object\n",
					    fids[i]->fclass);
		if (wait->type == FI_WAIT_NONE)
			return GBA_WARN_RET(FI_LOG_CORE, -FI_EINVAL,
					    "fi_trywait: object opened with "
					    "FI_WAIT_NONE\n");
		gba_wait_reset(wait);
	}
	for (i = 0; i < count; i++) {
		bool pending = false;

		if (gba_fid_ready(fids[i], &pending) || pending)
			return -FI_EAGAIN;
	}
	return 0;
}

/* ---- Fabric ------------------------------------------------------------- */

static int gba_fabric_close(struct fid *fid)
{
	struct gba_fabric *fabric =
		container_of(fid, struct gba_fabric, fabric_fid.fid);

	if (atomic_load(&fabric->ref)) {
		FI_WARN(&gba_prov, FI_LOG_FABRIC,
			"fabric still has %d open domains/EQs/wait sets\n",
			atomic_load(&fabric->ref));
		return -FI_EBUSY;
	}
	free(fabric);
	return 0;
}

/* fi_passive_ep(3): FI_EP_MSG is not supported.  -FI_ENOSYS. */
static int gba_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_pep **pep, void *context)
{
	FI_WARN(&gba_prov, FI_LOG_FABRIC,
		"passive endpoints (FI_EP_MSG) not supported\n");
	return -FI_ENOSYS;
}

/* fi_domain2(3): fi_domain with @flags, which must be 0 (-FI_EINVAL). */
static int gba_domain2(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **dom, uint64_t flags, void *context)
{
	if (flags)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_domain2: flags 0x%llx not supported\n",
				    (unsigned long long)flags);
	return gba_domain_open(fabric, info, dom, context);
}

static struct fi_ops gba_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_fabric_close,
	.bind = gba_no_bind,
	.control = gba_no_control,
	.ops_open = gba_no_ops_open,
};

static struct fi_ops_fabric gba_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = gba_domain_open,
	.passive_ep = gba_passive_ep,
	.eq_open = gba_eq_open,
	.wait_open = gba_wait_open,
	.trywait = gba_trywait,
	.domain2 = gba_domain2,
};

/*
 * gba_fabric_open - fi_provider.fabric, reached through fi_fabric(3).
 * @attr: name must be "gba" (or NULL); prov_name is matched by libfabric.
 * Returns 0, -FI_EINVAL (NULL arguments), -FI_ENODATA (another fabric's
 * name), -FI_ENOMEM.
 */
int gba_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct gba_fabric *fab;

	if (!attr || !fabric)
		return GBA_WARN_RET(FI_LOG_FABRIC, -FI_EINVAL,
				    "fi_fabric: NULL attr or fabric\n");
	if (attr->name && strcmp(attr->name, GBA_FABRIC_NAME))
		return GBA_WARN_RET(FI_LOG_FABRIC, -FI_ENODATA,
				    "fi_fabric: unknown fabric \"%s\"\n",
				    attr->name);
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	atomic_init(&fab->ref, 0);
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &gba_fabric_fi_ops;
	fab->fabric_fid.ops = &gba_fabric_ops;
	fab->fabric_fid.api_version =
		attr->api_version ? attr->api_version : GBA_FI_VERSION;
	*fabric = &fab->fabric_fid;
	return 0;
}
