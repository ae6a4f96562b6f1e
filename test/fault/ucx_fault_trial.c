/*
 * ucx_fault_trial - one fault-injection trial over UCT on the UCX
 * transport (ucx/uct_gba, linked in); test/fault/fault_common.h describes
 * the trial, its options and its output.  Points: slot, and chunk (a
 * receiver holding a sender's chunk).
 *
 * Each iteration a member sends one active message to every other member
 * (uct_ep_am_bcopy of fault_msg_bytes: in the queue in odd iterations, in
 * a chunk in even ones), puts 8 bytes into every other member's heap
 * region (uct_ep_put_short: executed by the target's progress), flushes
 * its endpoints, and waits for the n - 1 messages and the flushes.  A dead
 * member fails the operations outstanding at it: the interface's endpoint
 * error handler (UCS_ERR_CONNECTION_RESET) or the flush's completion
 * ends the member's run; so does its deadline.  The transport reports a
 * dead peer only for operations outstanding there (it has no
 * uct_ep_check): a member still waiting for messages puts to their
 * senders and flushes again every PROBE_MS ms.  A message in a chunk
 * whose sender died before its receiver first mapped the sender's
 * transmit region is dropped (uct_gba(7)): counted as dropped, not lost.
 * (UCP's peer error mode cannot run over gba: the interface has no
 * UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE, uct_gba(7).)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gba/gba_fault.h>

#include "fault_common.h"
#include "uct_test_ctx.h"

#define AM_ID 7
#define PUT_BYTES 8
#define PROBE_MS 50 /* waiting for a member's message: probe it this often */

struct member {
	struct fault_shared *sh;
	int rank, n;
	uint32_t iter;
	struct uct_test_ctx c;
	uct_mem_h memh;
	uint64_t *region; /* one word per writer */
	uct_ep_h ep[FAULT_MAX_PROCS];
	uct_rkey_bundle_t rkey[FAULT_MAX_PROCS];
	/* per sender, for this iteration and the next (iteration & 1): a
	 * member can be one ahead, not two (it waits for our message) */
	bool got[2][FAULT_MAX_PROCS];
	uct_completion_t flush;
	bool flushing;
	ucs_status_t failed; /* first error seen */
};

/* A member's published addresses (device, interface, rkey). */
struct blob {
	uint32_t dev_len, iface_len, rkey_len;
	uint64_t region;
	uint8_t data[FAULT_ADDR_MAX - 24];
};

static struct member self; /* this process's */

static void fail(struct member *m, ucs_status_t status, const char *what)
{
	if (m->failed == UCS_OK) {
		m->failed = status;
		if (fault_opts.verbose)
			fprintf(stderr, "ucx_fault_trial[%d]: %s: %s\n",
				m->rank, what, ucs_status_string(status));
	}
}

static ucs_status_t err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
{
	struct member *m = arg;
	char what[64];
	int s;

	for (s = 0; s < m->n && m->ep[s] != ep; s++)
		;
	snprintf(what, sizeof(what),
		 "endpoint error handler (peer %d, iteration %u)", s, m->iter);
	fail(m, status, what);
	return UCS_OK;
}

static void flush_done(uct_completion_t *comp)
{
	struct member *m = ucs_container_of(comp, struct member, flush);

	m->flushing = false;
	if (comp->status != UCS_OK)
		fail(m, comp->status, "flush");
}

static ucs_status_t am_handler(void *arg, void *data, size_t length,
			       unsigned flags)
{
	struct member *m = arg;
	const struct fault_msg *msg = data;
	int from;

	(void)flags;
	if (length >= sizeof(uint32_t) * 2 &&
	    (msg->iter == m->iter || msg->iter == m->iter + 1) &&
	    fault_msg_valid(msg, length, msg->iter, m->n, &from) &&
	    !m->got[msg->iter & 1][from])
		m->got[msg->iter & 1][from] = true;
	else
		atomic_fetch_add(&m->sh->bad[m->rank], 1);
	return UCS_OK;
}

static size_t pack(void *dest, void *arg)
{
	struct member *m = arg;

	fault_msg_fill(dest, (uint32_t)m->rank, m->iter);
	return fault_msg_bytes(m->iter);
}

static void poll_any(void *arg)
{
	struct member *m = arg;

	uct_worker_progress(m->c.worker);
}

/* Messages of this iteration still missing. */
static int missing(struct member *m)
{
	int s, k = 0;

	for (s = 0; s < m->n; s++)
		k += s != m->rank && !m->got[m->iter & 1][s];
	return k;
}

/* Issue @op until it is not UCS_ERR_NO_RESOURCE (progressing): status. */
#define RETRY(m, deadline, op)                                                 \
	({                                                                     \
		ssize_t _r;                                                    \
		while ((_r = (op)) == UCS_ERR_NO_RESOURCE &&                   \
		       (m)->failed == UCS_OK && fault_now_ms() <= (deadline))  \
			uct_worker_progress((m)->c.worker);                    \
		_r;                                                            \
	})

/*
 * Put our word into the region of every other member (@missing_only:
 * of those whose message of this iteration is missing), then flush
 * those endpoints: m->flushing until all flushes completed.
 */
static void put_flush(struct member *m, uint64_t deadline, bool missing_only)
{
	uint64_t word = m->iter;
	ucs_status_t st;
	int s;

	/* a count per endpoint flush in progress, and one of ours */
	m->flush.count = 1;
	m->flush.status = UCS_OK;
	m->flush.func = flush_done;
	m->flushing = true;
	for (s = 0; s < m->n && m->failed == UCS_OK; s++) {
		struct blob *b = (struct blob *)m->sh->addr[s];

		if (s == m->rank || (missing_only && m->got[m->iter & 1][s]))
			continue;
		st = RETRY(m, deadline,
			   uct_ep_put_short(m->ep[s], &word, PUT_BYTES,
					    b->region + (uint64_t)m->rank *
								PUT_BYTES,
					    m->rkey[s].rkey));
		if (st != UCS_OK) {
			fail(m, st, "uct_ep_put_short");
			break;
		}
		st = RETRY(m, deadline, uct_ep_flush(m->ep[s], 0, &m->flush));
		if (st == UCS_INPROGRESS)
			m->flush.count++;
		else if (st != UCS_OK)
			fail(m, st, "uct_ep_flush");
	}
	if (--m->flush.count == 0)
		m->flushing = false;
}

/* One iteration: 0, or -1 (an error, or the deadline: m->failed). */
static int iteration(struct member *m)
{
	uint64_t now, deadline = fault_now_ms() + (uint64_t)fault_opts.wait_ms;
	uint64_t probe = fault_now_ms() + PROBE_MS;
	ssize_t r;
	int s;

	memset(m->got[(m->iter + 1) & 1], 0, sizeof(m->got[0]));
	for (s = 0; s < m->n && m->failed == UCS_OK; s++) {
		if (s == m->rank)
			continue;
		r = RETRY(m, deadline,
			  uct_ep_am_bcopy(m->ep[s], AM_ID, pack, m, 0));
		if (r < 0)
			fail(m, (ucs_status_t)r, "uct_ep_am_bcopy");
	}
	if (m->failed == UCS_OK)
		atomic_store(&m->sh->sent[m->rank], m->iter);
	put_flush(m, deadline, false);
	while (m->failed == UCS_OK && (m->flushing || missing(m))) {
		uct_worker_progress(m->c.worker);
		now = fault_now_ms();
		if (now > deadline)
			fail(m, UCS_ERR_TIMED_OUT, "deadline");
		else if (now >= probe && !m->flushing) {
			put_flush(m, deadline, true);
			probe = now + PROBE_MS;
		}
	}
	return m->failed == UCS_OK ? 0 : -1;
}

/* Interface, region, addresses, endpoints and rkeys. */
static int member_setup(struct member *m)
{
	uct_iface_attr_t iattr;
	uct_md_attr_t mattr;
	struct blob mine = {0};
	uint8_t *p = mine.data;
	int s;

	uct_test_ctx_open(&m->c, "gba", err_handler, m);
	uct_iface_progress_enable(m->c.iface,
				  UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
	m->region = calloc((size_t)m->n, PUT_BYTES);
	if (!m->region || uct_iface_query(m->c.iface, &iattr) != UCS_OK ||
	    uct_md_query(m->c.md, &mattr) != UCS_OK ||
	    iattr.cap.am.max_bcopy < fault_msg_bytes(2) ||
	    iattr.device_addr_len + iattr.iface_addr_len +
			    mattr.rkey_packed_size >
		    sizeof(mine.data) ||
	    uct_iface_set_am_handler(m->c.iface, AM_ID, am_handler, m, 0) !=
		    UCS_OK ||
	    uct_md_mem_reg(m->c.md, m->region, (size_t)m->n * PUT_BYTES,
			   UCT_MD_MEM_ACCESS_ALL, &m->memh) != UCS_OK)
		return -1;
	mine.dev_len = (uint32_t)iattr.device_addr_len;
	mine.iface_len = (uint32_t)iattr.iface_addr_len;
	mine.rkey_len = (uint32_t)mattr.rkey_packed_size;
	mine.region = (uint64_t)(uintptr_t)m->region;
	if (uct_iface_get_device_address(m->c.iface, (uct_device_addr_t *)p) !=
		    UCS_OK ||
	    uct_iface_get_address(m->c.iface,
				  (uct_iface_addr_t *)(p + mine.dev_len)) !=
		    UCS_OK ||
	    uct_md_mkey_pack(m->c.md, m->memh,
			     p + mine.dev_len + mine.iface_len) != UCS_OK ||
	    fault_publish(m->sh, m->rank, m->n, &mine, sizeof(mine)))
		return -1;
	for (s = 0; s < m->n; s++) {
		struct blob *b = (struct blob *)m->sh->addr[s];
		uct_ep_params_t ep = {
			.field_mask = UCT_EP_PARAM_FIELD_IFACE |
				      UCT_EP_PARAM_FIELD_DEV_ADDR |
				      UCT_EP_PARAM_FIELD_IFACE_ADDR,
			.iface = m->c.iface,
			.dev_addr = (const uct_device_addr_t *)b->data,
			.iface_addr = (const uct_iface_addr_t *)(b->data +
								 b->dev_len),
		};

		if (s == m->rank)
			continue;
		if (uct_ep_create(&ep, &m->ep[s]) != UCS_OK ||
		    uct_rkey_unpack(m->c.component,
				    b->data + b->dev_len + b->iface_len,
				    &m->rkey[s]) != UCS_OK)
			return -1;
	}
	return 0;
}

static int member_run(int rank, int n, struct fault_shared *sh, uint32_t iters)
{
	struct member *m = &self;

	*m = (struct member){.sh = sh, .rank = rank, .n = n};
	if (member_setup(m))
		return 1;
	atomic_fetch_add(&sh->go, 1);
	for (m->iter = 1; m->iter <= (iters ? iters : FAULT_MAX_ITERS);
	     m->iter++) {
		int ret = iteration(m);

		atomic_store(&sh->iters[rank], m->iter);
		if (ret) {
			fault_detected(sh, rank,
				       m->failed == UCS_ERR_TIMED_OUT);
			fault_count_lost(sh, rank, n, m->iter,
					 m->got[m->iter & 1], poll_any, m);
			return FAULT_DETECTED;
		}
	}
	fault_finish(sh, n, poll_any, m);
	return 0;
}

static int reap(void)
{
	struct uct_test_ctx c;

	uct_test_ctx_open(&c, "gba", NULL, NULL);
	uct_test_ctx_close(&c);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct fault_stack ucx = {
		.name = "ucx",
		.member = member_run,
		.reap = reap,
		.points = 1u << GBA_FAULT_SLOT | 1u << GBA_FAULT_CHUNK,
	};

	return fault_main(argc, argv, &ucx);
}
