/*
 * libfabric "gba" provider: poll sets (fi_poll(3): fi_poll_open,
 * fi_poll_add, fi_poll_del, fi_poll).
 *
 * A poll set is a list of CQs and counters of one domain.  fi_poll
 * progresses every member (through the endpoints bound to it, as its
 * own reads do) and returns the context of each CQ that is not empty and
 * of each counter whose value or error value changed since the last
 * fi_poll, fi_cntr_set or fi_cntr_add (the counter keeps that
 * checkpoint: gba_cntr_poll).  A member cannot close while it is in a
 * poll set (-FI_EBUSY, as while an endpoint is bound to it); closing the
 * poll set releases its members.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

struct gba_poll_member {
	struct fid *fid; /* a gba CQ or counter */
};

static const UT_icd gba_poll_member_icd = {
	.sz = sizeof(struct gba_poll_member),
};

struct gba_poll {
	struct fid_poll poll_fid;
	struct gba_domain *domain;
	pthread_mutex_t lock; /* members, next */
	UT_array members;     /* struct gba_poll_member */
	unsigned next;	      /* first member the next fi_poll asks */
};

/* The reference a poll set holds on member @fid (a CQ or counter). */
static atomic_int *gba_poll_member_ref(struct fid *fid)
{
	if (fid->fclass == FI_CLASS_CQ)
		return &container_of(fid, struct gba_cq, cq_fid.fid)->ref;
	return &container_of(fid, struct gba_cntr, cntr_fid.fid)->ref;
}

/*
 * Progress member @fid; true if fi_poll reports it: a CQ with an entry or
 * an error to read, a counter changed since its checkpoint.
 */
static bool gba_poll_member_ready(struct fid *fid)
{
	if (fid->fclass == FI_CLASS_CQ)
		return gba_cq_ready(container_of(fid, struct gba_cq, cq_fid.fid),
				    NULL);
	return gba_cntr_poll(container_of(fid, struct gba_cntr, cntr_fid.fid));
}

/*
 * gba_poll_poll - fi_poll(3): progress every member and store in
 * @context[0..@count-1] the fid context of each member that has
 * something to report.  When more members are ready than @count, the
 * next call starts with the first one left out (counters left out keep
 * their change for that call).  Returns the number of contexts stored
 * (0: none), or -FI_EINVAL (@count < 0, or NULL @context with @count > 0).
 */
static int gba_poll_poll(struct fid_poll *poll_fid, void **context, int count)
{
	struct gba_poll *ps = container_of(poll_fid, struct gba_poll, poll_fid);
	struct gba_poll_member *m;
	unsigned n, i, k;
	int found = 0;

	if (count < 0 || (count && !context))
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_poll: count %d, context %p\n", count,
				    (void *)context);
	pthread_mutex_lock(&ps->lock);
	n = utarray_len(&ps->members);
	for (k = 0; k < n && found < count; k++) {
		i = (ps->next + k) % n;
		m = (struct gba_poll_member *)utarray_eltptr(&ps->members, i);
		if (gba_poll_member_ready(m->fid))
			context[found++] = m->fid->context;
	}
	if (n)
		ps->next = (ps->next + k) % n;
	pthread_mutex_unlock(&ps->lock);
	return found;
}

/* The member entry of @fid in @ps, or NULL; called with ps->lock held. */
static struct gba_poll_member *gba_poll_find(struct gba_poll *ps,
					     struct fid *fid)
{
	struct gba_poll_member *m = NULL;

	while ((m = utarray_next(&ps->members, m)))
		if (m->fid == fid)
			return m;
	return NULL;
}

/*
 * gba_poll_add - fi_poll_add(3): add CQ or counter @event_fid (of the
 * poll set's domain) to the set; it cannot close until removed or the set
 * closes.  Adding a member again changes nothing.  @flags must be 0.
 * Returns 0, -FI_EINVAL (NULL fid, another class or domain, flags),
 * -FI_ENOMEM.
 */
static int gba_poll_add(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct gba_poll *ps = container_of(poll_fid, struct gba_poll, poll_fid);
	struct gba_poll_member m = {.fid = event_fid};
	struct gba_domain *domain;
	int ret = 0;

	if (!event_fid || flags)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_poll_add: %s\n",
				    event_fid ? "flags must be 0" : "NULL fid");
	switch (event_fid->fclass) {
	case FI_CLASS_CQ:
		domain = container_of(event_fid, struct gba_cq, cq_fid.fid)
				 ->domain;
		break;
	case FI_CLASS_CNTR:
		domain = container_of(event_fid, struct gba_cntr, cntr_fid.fid)
				 ->domain;
		break;
	default:
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_poll_add: a poll set holds CQs and "
				    "counters, not %s\n",
				    fi_tostr(&event_fid->fclass, FI_TYPE_FID));
	}
	if (domain != ps->domain)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_poll_add: %s of another domain\n",
				    fi_tostr(&event_fid->fclass, FI_TYPE_FID));
	pthread_mutex_lock(&ps->lock);
	if (!gba_poll_find(ps, event_fid)) {
		ret = gba_utarray_insert(&ps->members, &m,
					 utarray_len(&ps->members));
		if (!ret)
			atomic_fetch_add(gba_poll_member_ref(event_fid), 1);
	}
	pthread_mutex_unlock(&ps->lock);
	return ret;
}

/*
 * gba_poll_del - fi_poll_del(3): remove @event_fid from the set.  @flags
 * must be 0.  Returns 0, -FI_EINVAL (NULL fid, flags), -FI_ENOENT (not a
 * member).
 */
static int gba_poll_del(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct gba_poll *ps = container_of(poll_fid, struct gba_poll, poll_fid);
	struct gba_poll_member *m;
	ssize_t idx;

	if (!event_fid || flags)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_poll_del: %s\n",
				    event_fid ? "flags must be 0" : "NULL fid");
	pthread_mutex_lock(&ps->lock);
	m = gba_poll_find(ps, event_fid);
	if (m) {
		idx = utarray_eltidx(&ps->members, m);
		utarray_erase(&ps->members, (unsigned)idx, 1);
		atomic_fetch_sub(gba_poll_member_ref(event_fid), 1);
	}
	pthread_mutex_unlock(&ps->lock);
	if (!m)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_ENOENT,
				    "fi_poll_del: %s is not in the poll set\n",
				    fi_tostr(&event_fid->fclass, FI_TYPE_FID));
	return 0;
}

/* fi_close(3) on a poll set: releases its members.  Returns 0. */
static int gba_poll_close(struct fid *fid)
{
	struct gba_poll *ps = container_of(fid, struct gba_poll, poll_fid.fid);
	struct gba_poll_member *m = NULL;

	while ((m = utarray_next(&ps->members, m)))
		atomic_fetch_sub(gba_poll_member_ref(m->fid), 1);
	utarray_done(&ps->members);
	pthread_mutex_destroy(&ps->lock);
	atomic_fetch_sub(&ps->domain->ref, 1);
	free(ps);
	return 0;
}

static struct fi_ops gba_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_poll_close,
	.bind = gba_no_bind,
	.control = gba_no_control,
	.ops_open = gba_no_ops_open,
};

static struct fi_ops_poll gba_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = gba_poll_poll,
	.poll_add = gba_poll_add,
	.poll_del = gba_poll_del,
};

/*
 * gba_poll_open - fi_poll_open(3) (fi_ops_domain.poll_open): an empty
 * poll set of @domain_fid.  @attr may be NULL; @attr->flags must be 0.
 * Returns 0, -FI_EINVAL (NULL @pollset, flags), -FI_ENOMEM.
 */
int gba_poll_open(struct fid_domain *domain_fid, struct fi_poll_attr *attr,
		  struct fid_poll **pollset)
{
	struct gba_domain *domain =
		container_of(domain_fid, struct gba_domain, domain_fid);
	struct gba_poll *ps;

	if (!pollset)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_poll_open: NULL pollset\n");
	if (attr && attr->flags)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_poll_open: flags 0x%llx not "
				    "supported\n",
				    (unsigned long long)attr->flags);
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	pthread_mutex_init(&ps->lock, NULL);
	utarray_init(&ps->members, &gba_poll_member_icd);
	ps->domain = domain;
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &gba_poll_fi_ops;
	ps->poll_fid.ops = &gba_poll_ops;
	atomic_fetch_add(&domain->ref, 1);
	*pollset = &ps->poll_fid;
	return 0;
}
