/*
 * libfabric "gba" provider: progress (fi_domain(3) "Progress"): an
 * endpoint's (gba_ep_progress: the engine, software collectives,
 * barriers in flight, deferred work waiting for room), the domain's, and
 * the optional progress thread.
 *
 * Progress is manual by default: a process executes what arrives for
 * its endpoints, and fires the triggered operations that depend on it,
 * when it reads or waits on its CQs and counters.  No helper thread.
 * Counters named by deferred work are also progressed by any endpoint
 * of the domain, so they register here with every open endpoint.
 *
 * With data_progress FI_PROGRESS_AUTO (asked in the hints, or offered
 * by default with FI_GBA_PROGRESS=auto), the domain runs one progress
 * thread that progresses every endpoint: schedules of triggered and
 * deferred work complete while the host computes.  The domain's
 * objects are then created with their locks enabled whatever the
 * threading model (gba_domain_open); without the thread nothing here
 * is on the path of an ordinary CQ or counter read.
 *
 * The thread spins while it finds work, yields while operations are in
 * flight, and sleeps (20 us doubling up to 1 ms) when idle, so that more
 * processes than cores still share the CPUs.
 */
#include "config.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gba_ep.h"

#define GBA_PROGRESS_SLEEP_MIN_NS 20000L   /* first idle sleep */
#define GBA_PROGRESS_SLEEP_MAX_NS 1000000L /* longest idle sleep */
#define GBA_PROGRESS_IDLE_SPINS 64	   /* idle passes before sleeping */

struct gba_progress {
	pthread_mutex_t lock; /* eps; held during a pass */
	UT_array eps;	      /* struct gba_ep * */
	bool threaded;
	atomic_bool stop;
	pthread_t thread;
};

/*
 * One pass over @p's endpoints (lock held): engine entries handled;
 * *@busy is set if one has operations or barriers in flight.
 */
static int gba_progress_pass(struct gba_progress *p, bool *busy)
{
	struct gba_ep **ep = NULL;
	int n = 0;

	while ((ep = utarray_next(&p->eps, ep))) {
		n += gba_ep_progress(*ep);
		if (atomic_load_explicit(&(*ep)->pending,
					 memory_order_relaxed) ||
		    ((*ep)->eng && gba_eng_busy((*ep)->eng)))
			*busy = true;
	}
	return n;
}

/* gba_progress_domain - one pass, unless one runs (see gba_prov.h). */
int gba_progress_domain(struct gba_domain *domain)
{
	struct gba_progress *p = domain->progress;
	bool busy = false;
	int n;

	if (pthread_mutex_trylock(&p->lock))
		return 0; /* another thread is progressing them */
	n = gba_progress_pass(p, &busy);
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* domain->progress_all: gba_progress_domain (*@pending left alone). */
static int gba_progress_domain_src(void *ctx, bool *pending)
{
	return gba_progress_domain(ctx);
}

/* The progress thread: pass after pass until the domain closes. */
static void *gba_progress_thread(void *arg)
{
	struct gba_domain *domain = arg;
	struct gba_progress *p = domain->progress;
	long sleep_ns = GBA_PROGRESS_SLEEP_MIN_NS;
	struct timespec ts;
	unsigned idle = 0;
	bool busy;
	int n;

	while (!atomic_load_explicit(&p->stop, memory_order_acquire)) {
		busy = false;
		pthread_mutex_lock(&p->lock);
		n = gba_progress_pass(p, &busy);
		pthread_mutex_unlock(&p->lock);
		if (n) {
			idle = 0;
			sleep_ns = GBA_PROGRESS_SLEEP_MIN_NS;
			continue;
		}
		if (busy || ++idle < GBA_PROGRESS_IDLE_SPINS) {
			sched_yield();
			continue;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = sleep_ns;
		nanosleep(&ts, NULL);
		if (sleep_ns < GBA_PROGRESS_SLEEP_MAX_NS)
			sleep_ns *= 2;
	}
	return NULL;
}

/*
 * gba_progress_init - the domain's endpoint list; starts the progress
 * thread when the domain's data progress is FI_PROGRESS_AUTO.  Returns
 * 0, -FI_ENOMEM, -FI_EAGAIN (no thread could be created; logged).
 */
int gba_progress_init(struct gba_domain *domain)
{
	struct gba_progress *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -FI_ENOMEM;
	if (pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		return -FI_ENOMEM;
	}
	utarray_init(&p->eps, &ut_ptr_icd);
	atomic_init(&p->stop, false);
	domain->progress = p;
	domain->progress_all.ctx = domain;
	domain->progress_all.progress = gba_progress_domain_src;
	if (domain->data_progress != FI_PROGRESS_AUTO)
		return 0;
	ret = pthread_create(&p->thread, NULL, gba_progress_thread, domain);
	if (ret) {
		FI_WARN(&gba_prov, FI_LOG_DOMAIN,
			"FI_PROGRESS_AUTO: no progress thread: %s\n",
			strerror(ret));
		pthread_mutex_destroy(&p->lock);
		utarray_done(&p->eps);
		free(p);
		domain->progress = NULL;
		return -FI_EAGAIN;
	}
	p->threaded = true;
	FI_INFO(&gba_prov, FI_LOG_DOMAIN,
		"FI_PROGRESS_AUTO: progress thread started\n");
	return 0;
}

/* gba_progress_fini - stop the thread (if any), free the list. */
void gba_progress_fini(struct gba_domain *domain)
{
	struct gba_progress *p = domain->progress;

	if (p->threaded) {
		atomic_store_explicit(&p->stop, true, memory_order_release);
		pthread_join(p->thread, NULL);
	}
	pthread_mutex_destroy(&p->lock);
	utarray_done(&p->eps);
	free(p);
	domain->progress = NULL;
}

/*
 * gba_progress_add_ep - register @ep (fi_endpoint).  0 or -FI_ENOMEM.
 */
int gba_progress_add_ep(struct gba_domain *domain, struct gba_ep *ep)
{
	struct gba_progress *p = domain->progress;
	int ret;

	pthread_mutex_lock(&p->lock);
	ret = gba_utarray_insert(&p->eps, &ep, utarray_len(&p->eps));
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/*
 * gba_progress_del_ep - unregister @ep (fi_close); waits for a pass in
 * another thread to end, so no pass touches @ep afterwards.  Call it
 * with no endpoint lock held.
 */
void gba_progress_del_ep(struct gba_domain *domain, struct gba_ep *ep)
{
	struct gba_progress *p = domain->progress;
	struct gba_ep **e = NULL;

	pthread_mutex_lock(&p->lock);
	while ((e = utarray_next(&p->eps, e))) {
		if (*e == ep) {
			utarray_erase(&p->eps, utarray_eltidx(&p->eps, e), 1);
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

/*
 * gba_ep_progress - drive the engine, barriers in flight and deferred
 * work waiting for room (see gba_prov.h).  A few loads when idle: the
 * engine is looked at without the lock (gba_eng_poll) and locked only
 * when it has work or software collectives are in flight.  Returns the
 * engine entries handled.
 */
int gba_ep_progress(struct gba_ep *ep)
{
	bool token;
	int n = 0;

	if (ep->eng &&
	    (gba_eng_poll(ep->eng) ||
	     atomic_load_explicit(&ep->swc_ops, memory_order_relaxed))) {
		token = gba_ep_data_lock(ep);
		n = gba_eng_progress(ep->eng);
		if (!LIST_EMPTY(&ep->swcs))
			gba_swc_progress(ep);
		gba_ep_data_unlock(ep, token);
	}
	if (atomic_load_explicit(&ep->pending, memory_order_relaxed))
		gba_coll_progress(ep);
	if (atomic_load_explicit(&ep->domain->nretry, memory_order_relaxed))
		gba_work_retry(ep->domain);
	return n > 0 ? n : 0;
}
