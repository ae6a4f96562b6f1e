/*
 * fault_trial - one fault-injection trial over libfabric (provider gba;
 * test/fault/fault_common.h describes the trial, its options and its
 * output).  Points: slot, chunk, rma, barrier and trigger.
 *
 * Each iteration a member sends one tagged message to every other member
 * (fault_msg_bytes: in one queue slot in odd iterations, in several in
 * even ones), writes 64 bytes into its right neighbour's region (a
 * triggered fi_writemsg, which the member's own counter fires), starts a
 * barrier (fi_barrier) and waits for the n - 1 messages, the write and
 * the barrier.  An error completion ends the member's run (a dead
 * member: the barrier's -FI_ECONNABORTED, a send's -FI_EIO...); so does
 * its deadline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gba/gba_fault.h>

#include "fault_common.h"
#include "gba_ft_common.h"

#define RMA_BYTES 64
#define TAG_MSG 0x77

struct member {
	struct ft_res r;
	struct fault_shared *sh;
	int rank, n;
	uint32_t iter;
	struct fid_mc *mc;
	struct fid_mr *mr;
	struct fid_cntr *go; /* fires the iteration's triggered write */
	struct fi_triggered_context tctx;
	uint8_t *region;
	struct fault_msg *rx, tx;
	bool *got;   /* this iteration, per sender */
	int pending; /* completions still expected this iteration */
	/* this iteration's completions of the rest, for -v at a deadline */
	int sends_done;
	bool write_done, barrier_done;
};

/* A completion of this iteration: count it, check a message. */
static void take(struct member *m, const struct fi_cq_data_entry *comp)
{
	const struct fault_msg *msg = comp->op_context;
	int from;

	m->pending--;
	if (comp->op_context == &m->mc)
		m->barrier_done = true;
	else if (comp->op_context == &m->tctx)
		m->write_done = true;
	else if (comp->op_context == &m->tx)
		m->sends_done++;
	if (!(comp->flags & FI_RECV))
		return;
	if (!fault_msg_valid(msg, comp->len, m->iter, m->n, &from) ||
	    m->got[from])
		atomic_fetch_add(&m->sh->bad[m->rank], 1);
	else
		m->got[from] = true;
}

/*
 * Take the completions there are, without waiting.  Returns 0, or the
 * (negative) error of an error completion or of fi_cq_read.
 */
static int poll_cq(struct member *m)
{
	struct fi_cq_data_entry comp;
	struct fi_cq_err_entry err;
	ssize_t n;

	while ((n = fi_cq_read(m->r.cq, &comp, 1)) == 1)
		take(m, &comp);
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(m->r.cq, &err, 0);
		if (fault_opts.verbose)
			fprintf(stderr,
				"fault_trial[%d]: error completion: %s\n",
				m->rank, fi_strerror(err.err));
		return -(int)err.err;
	}
	return n == -FI_EAGAIN ? 0 : (int)n;
}

/* poll_cq for fault_count_lost (errors again: still taking the rest) */
static void poll_any(void *arg)
{
	poll_cq(arg);
}

/* -v: which of this iteration's completions are missing. */
static void say_missing(const struct member *m)
{
	int s;

	fprintf(stderr,
		"fault_trial[%d]: deadline: %d completions missing (iteration "
		"%u:",
		m->rank, m->pending, m->iter);
	for (s = 0; s < m->n; s++)
		if (s != m->rank && !m->got[s])
			fprintf(stderr, " receive from %d,", s);
	fprintf(stderr, " %d of %d sends,%s%s)\n", m->n - 1 - m->sends_done,
		m->n - 1, m->write_done ? "" : " the write,",
		m->barrier_done ? "" : " the barrier");
}

/* Until this iteration's completions are all in: 0, error, timeout. */
static int drain(struct member *m, uint64_t deadline_ms)
{
	int ret;

	while (m->pending > 0) {
		ret = poll_cq(m);
		if (ret)
			return ret;
		if (ft_now_ms() > deadline_ms) {
			if (fault_opts.verbose)
				say_missing(m);
			return -FI_ETIMEDOUT;
		}
	}
	return 0;
}

/*
 * Queue this iteration's write of RMA_BYTES into member @dest's region
 * (fi_writemsg, FI_TRIGGER on m->go reaching the iteration) and fire it.
 */
static int triggered_write(struct member *m, int dest)
{
	struct iovec iov = {m->tx.data, RMA_BYTES};
	struct fi_rma_iov rma = {m->sh->rma_addr[dest], RMA_BYTES,
				 m->sh->rma_key[dest]};
	struct fi_msg_rma msg = {.msg_iov = &iov,
				 .iov_count = 1,
				 .addr = (fi_addr_t)dest,
				 .rma_iov = &rma,
				 .rma_iov_count = 1,
				 .context = &m->tctx};
	int ret;

	m->tctx.event_type = FI_TRIGGER_THRESHOLD;
	m->tctx.trigger.threshold.cntr = m->go;
	m->tctx.trigger.threshold.threshold = m->iter;
	ret = (int)fi_writemsg(m->r.ep, &msg, FI_TRIGGER);
	return ret ? ret : fi_cntr_add(m->go, 1);
}

static int iteration(struct member *m)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)fault_opts.wait_ms;
	int s, dest = (m->rank + 1) % m->n, ret;

	memset(m->got, 0, sizeof(bool) * (size_t)m->n);
	m->pending = 0;
	m->sends_done = 0;
	m->write_done = m->barrier_done = false;
	for (s = 0; s < m->n; s++) {
		if (s == m->rank)
			continue;
		ret = (int)fi_trecv(m->r.ep, &m->rx[s], sizeof(m->rx[s]), NULL,
				    (fi_addr_t)s, TAG_MSG, 0, &m->rx[s]);
		if (ret)
			return ret;
		m->pending++;
	}
	fault_msg_fill(&m->tx, (uint32_t)m->rank, m->iter);
	for (s = 0; s < m->n; s++) {
		if (s == m->rank)
			continue;
		while ((ret = (int)fi_tsend(
				m->r.ep, &m->tx, fault_msg_bytes(m->iter), NULL,
				(fi_addr_t)s, TAG_MSG, &m->tx)) == -FI_EAGAIN) {
			ret = poll_cq(m);
			if (!ret && ft_now_ms() > deadline) {
				if (fault_opts.verbose)
					fprintf(stderr,
						"fault_trial[%d]: deadline: "
						"send to %d\n",
						m->rank, s);
				ret = -FI_ETIMEDOUT;
			}
			if (ret)
				return ret;
		}
		if (ret)
			return ret;
		m->pending++;
	}
	atomic_store(&m->sh->sent[m->rank], m->iter);
	ret = triggered_write(m, dest);
	if (ret)
		return ret;
	m->pending++;
	ret = (int)fi_barrier(m->r.ep, (fi_addr_t)m->mc, &m->mc);
	if (ret)
		return ret;
	m->pending++;
	return drain(m, deadline);
}

/* Open, register the region, exchange addresses and keys, join. */
static int member_setup(struct member *m)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fault_shared *sh = m->sh;
	struct fid_av_set *set;
	char name[FT_NAME_LEN];
	size_t len = sizeof(name);
	fi_addr_t a;
	int i;

	m->rx = calloc((size_t)m->n, sizeof(*m->rx));
	m->got = calloc((size_t)m->n, sizeof(*m->got));
	m->region = calloc(1, RMA_BYTES);
	if (!m->rx || !m->got || !m->region ||
	    ft_open(&m->r, "gba",
		    FI_MSG | FI_TAGGED | FI_RMA | FI_COLLECTIVE | FI_TRIGGER) ||
	    fi_cntr_open(m->r.domain, &cattr, &m->go, NULL) ||
	    fi_mr_reg(m->r.domain, m->region, RMA_BYTES, FI_REMOTE_WRITE, 0, 0,
		      0, &m->mr, NULL) ||
	    fi_getname(&m->r.ep->fid, name, &len))
		return -1;
	sh->rma_key[m->rank] = fi_mr_key(m->mr);
	sh->rma_addr[m->rank] = ft_rma_addr(&m->r, m->region, m->region);
	if (fault_publish(sh, m->rank, m->n, name, len))
		return -1;
	for (i = 0; i < m->n; i++)
		if (fi_av_insert(m->r.av, sh->addr[i], 1, &a, 0, NULL) != 1 ||
		    a != (fi_addr_t)i)
			return -1;
	return ft_join_all(&m->r, m->n, &set, &m->mc);
}

static int member_run(int rank, int n, struct fault_shared *sh, uint32_t iters)
{
	struct member m = {.sh = sh, .rank = rank, .n = n};
	int ret;

	ft_set_prog("fault_trial");
	if (member_setup(&m))
		return 1;
	atomic_fetch_add(&sh->go, 1);
	for (m.iter = 1; m.iter <= (iters ? iters : FAULT_MAX_ITERS);
	     m.iter++) {
		ret = iteration(&m);
		atomic_store(&sh->iters[rank], m.iter);
		if (ret) {
			fault_detected(sh, rank, ret == -FI_ETIMEDOUT);
			fault_count_lost(sh, rank, n, m.iter, m.got, poll_any,
					 &m);
			return FAULT_DETECTED;
		}
	}
	fault_finish(sh, n, poll_any, &m);
	return 0;
}

static int reap(void)
{
	struct ft_res r;

	return ft_open(&r, "gba", FI_MSG | FI_TAGGED) || ft_close(&r) ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct fault_stack fi = {
		.name = "fi",
		.member = member_run,
		.reap = reap,
		.points = 1u << GBA_FAULT_SLOT | 1u << GBA_FAULT_CHUNK |
			  1u << GBA_FAULT_RMA | 1u << GBA_FAULT_BARRIER |
			  1u << GBA_FAULT_TRIGGER,
		.delivers_dead = true,
	};

	return fault_main(argc, argv, &fi);
}
