/*
 * soak_mixed - the mixed-traffic soak of make soak: -n processes (forked)
 * run rounds of every kind of traffic for -D seconds or -I rounds,
 * whichever ends first.  Round k of member r (left l, right r + 1):
 *
 *   messages   a tagged message (tag k, directed receives) to every
 *              other member: random length up to 64 KiB (eager and
 *              single-copy), header with sender, round, length and a
 *              checksum over the payload, all checked on receipt;
 *   RMA        fi_write of a random-length pattern into the right
 *              neighbour's region (slot k % 2), then fi_read of it back,
 *              compared; the neighbour checks the slot after the barrier;
 *   atomics    FI_SUM of (r + 1) * k on word 0 of member k % n, and a
 *              fetching FI_SUM of the same on word 1 of the right
 *              neighbour: its old value must be exactly the sum of this
 *              member's earlier adds (nobody else adds there); at the end
 *              both words of every member must hold their exact totals;
 *   chain      a deferred fi_write (FI_QUEUE_WORK) into the left
 *              neighbour's region, triggered by a counter this member
 *              bumps (fi_cntr_add) once its plain write and read are
 *              done; its completion counter triggers the round's barrier
 *              (fi_barrier2 with FI_TRIGGER), whose completion ends the
 *              round; the neighbour checks the slot after the barrier;
 *   delay      0..-r us before the chain starts, in one round in four.
 *
 * A member arrives at barrier k only after its writes of round k are
 * complete, so after it every slot of round k must hold its pattern; a
 * slot is written again two rounds later, after barrier k + 1.
 * Progress is the provider's (FI_GBA_PROGRESS: manual or auto).
 *
 * Output (rank 0), one line:
 *   soak_mixed: 4 processes, R rounds, S s: M messages (B bytes),
 *               W writes, W reads, A atomics, R triggered chains, all
 *               checked, atomic totals exact
 * Exit status 0 when everything checked; 1 at the first error; 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gba_ft_common.h"
#include "soak_run.h"

#define MSG_MAX (64 * 1024)
#define RMA_MAX 8192
#define WORDS 64 /* bytes of the atomic words at the start of the region */
#define W_OFF(k) (WORDS + ((k) % 2) * RMA_MAX)
#define T_OFF(k) (WORDS + (2 + (k) % 2) * RMA_MAX)
#define REGION (WORDS + 4 * RMA_MAX)

struct soak_mixed_shared {
	struct ft_shared hdr; /* first: names */
	struct soak_stop stop;
	uint64_t key[FT_MAX_PROCS];
	uint64_t addr[FT_MAX_PROCS];
};

struct soak_msg {
	uint32_t rank;
	uint32_t round;
	uint32_t len; /* whole message, header included */
	uint32_t pad;
	uint64_t sum;
	uint8_t data[MSG_MAX];
};

/* One member's state. */
struct mixed {
	struct ft_res r;
	struct soak_mixed_shared *sh;
	const struct ft_opts *o;
	int rank, n, left, right;
	struct fid_mr *mr;
	struct fid_cntr *go, *done;
	struct fid_av_set *set;
	struct fid_mc *mc;
	uint8_t *region, *wbuf, *rbuf, *tbuf;
	struct soak_msg *tx, *rx; /* rx: one per sender */
	size_t wlen;
	uint64_t add_v, fetch_v, fetch_old, right_total;
	struct fi_triggered_context tctx;
	int pending; /* completions still due */
	bool write_done, read_done, barrier_done;
	uint64_t msgs, bytes, writes, reads, atomics;
};

static uint64_t msg_sum(const struct soak_msg *m, size_t payload)
{
	uint64_t h =
		0xcbf29ce484222325ULL ^ m->rank ^ ((uint64_t)m->round << 32);
	size_t i;

	for (i = 0; i < payload; i++)
		h = (h ^ m->data[i]) * 0x100000001b3ULL;
	return h;
}

/* Byte @i of member @rank's RMA pattern of round @k. */
static uint8_t pat(int rank, uint32_t k, size_t i)
{
	return (uint8_t)(rank * 13 + k * 7 + i * 3 + (i >> 8));
}

/* Round, length, then @rank's bytes: @len bytes into @buf. */
static void pat_fill(uint8_t *buf, size_t len, int rank, uint32_t k)
{
	uint32_t hdr[2] = {k, (uint32_t)len};
	size_t i;

	memcpy(buf, hdr, sizeof(hdr));
	for (i = sizeof(hdr); i < len; i++)
		buf[i] = pat(rank, k, i);
}

/* Does the slot at @buf hold @rank's pattern of round @k? */
static int pat_check(struct mixed *m, const uint8_t *buf, int rank, uint32_t k,
		     const char *what)
{
	uint32_t hdr[2];
	size_t i;

	memcpy(hdr, buf, sizeof(hdr));
	if (hdr[0] != k || hdr[1] < sizeof(hdr) || hdr[1] > RMA_MAX)
		goto bad;
	for (i = sizeof(hdr); i < hdr[1]; i++)
		if (buf[i] != pat(rank, k, i))
			goto bad;
	return 0;
bad:
	fprintf(stderr,
		"soak_mixed[%d]: round %u: %s from member %d: header "
		"%u/%u or data wrong\n",
		m->rank, k, what, rank, hdr[0], hdr[1]);
	return -FI_EIO;
}

/* A random length in [@min, @max], short ones three times in four. */
static size_t rand_len(size_t min, size_t max)
{
	size_t top = (rand() & 3) ? 512 : max;

	return min + (size_t)rand() % (top - min + 1);
}

/* Check a received message of round @k from member @s. */
static int check_msg(struct mixed *m, const struct fi_cq_data_entry *c, int s,
		     uint32_t k)
{
	const struct soak_msg *msg = &m->rx[s];
	size_t hdr = offsetof(struct soak_msg, data);

	if (!(c->flags & FI_RECV) || c->len != msg->len ||
	    msg->rank != (uint32_t)s || msg->round != k || msg->len < hdr ||
	    msg->sum != msg_sum(msg, msg->len - hdr)) {
		fprintf(stderr,
			"soak_mixed[%d]: round %u: bad message from %d "
			"(len %zu/%u rank %u round %u)\n",
			m->rank, k, s, c->len, msg->len, msg->rank, msg->round);
		return -FI_EIO;
	}
	m->msgs++;
	m->bytes += msg->len;
	return 0;
}

/* Account for one completion of round @k. */
static int handle(struct mixed *m, const struct fi_cq_data_entry *c, uint32_t k)
{
	const char *ctx = c->op_context;

	m->pending--;
	if (ctx >= (char *)m->rx && ctx < (char *)(m->rx + m->n))
		return check_msg(m, c, (int)((struct soak_msg *)ctx - m->rx),
				 k);
	if (ctx == (char *)&m->fetch_old) {
		if (m->fetch_old != m->right_total) {
			fprintf(stderr,
				"soak_mixed[%d]: round %u: fetched %llu, "
				"expected %llu\n",
				m->rank, k, (unsigned long long)m->fetch_old,
				(unsigned long long)m->right_total);
			return -FI_EIO;
		}
		m->right_total += m->fetch_v;
		m->atomics++;
	} else if (ctx == (char *)&m->add_v) {
		m->atomics++;
	} else if (ctx == (char *)m->wbuf) {
		m->write_done = true;
		m->writes++;
	} else if (ctx == (char *)m->rbuf) {
		m->read_done = true;
		m->reads++;
		if (memcmp(m->rbuf, m->wbuf, m->wlen))
			return ft_err("read back differs from write", -FI_EIO);
	} else if (ctx == (char *)&m->tctx) {
		if (!(c->flags & FI_COLLECTIVE))
			return ft_err("barrier completion flags", -FI_EOTHER);
		m->barrier_done = true;
	} else if (ctx != (char *)m->tx) {
		return ft_err("completion of an unknown context", -FI_EOTHER);
	}
	return 0;
}

/* Take completions until *@flag (NULL: until none is due). */
static int wait_for(struct mixed *m, uint32_t k, const bool *flag)
{
	struct fi_cq_data_entry c;
	int ret;

	while (flag ? !*flag : m->pending > 0) {
		ret = ft_wait_comp(&m->r, &c, m->o->timeout_s * 1000);
		if (!ret)
			ret = handle(m, &c, k);
		if (ret)
			return ret;
	}
	return 0;
}

/* Post with retries on -FI_EAGAIN (taking completions meanwhile). */
#define SOAK_POST(m, k, call)                                                  \
	do {                                                                   \
		struct fi_cq_data_entry c_;                                    \
		ssize_t r_;                                                    \
		while ((r_ = (call)) == -FI_EAGAIN) {                          \
			r_ = fi_cq_read((m)->r.cq, &c_, 1);                    \
			if (r_ == 1)                                           \
				r_ = handle((m), &c_, (k));                    \
			else if (r_ == -FI_EAGAIN)                             \
				r_ = 0;                                        \
			if (r_)                                                \
				return ft_err(#call, (int)r_);                 \
		}                                                              \
		if (r_)                                                        \
			return ft_err(#call, (int)r_);                         \
		(m)->pending++;                                                \
	} while (0)

/* Messages and atomics of round @k. */
static int round_msgs(struct mixed *m, uint32_t k)
{
	size_t hdr = offsetof(struct soak_msg, data), i, len;
	int s;

	for (s = 0; s < m->n; s++)
		if (s != m->rank)
			SOAK_POST(m, k,
				  fi_trecv(m->r.ep, &m->rx[s], sizeof(m->rx[s]),
					   NULL, (fi_addr_t)s, k, 0,
					   &m->rx[s]));
	len = rand_len(hdr, sizeof(*m->tx));
	m->tx->rank = (uint32_t)m->rank;
	m->tx->round = k;
	m->tx->len = (uint32_t)len;
	for (i = 0; i < len - hdr; i++)
		m->tx->data[i] = (uint8_t)rand();
	m->tx->sum = msg_sum(m->tx, len - hdr);
	for (s = 0; s < m->n; s++)
		if (s != m->rank)
			SOAK_POST(m, k,
				  fi_tsend(m->r.ep, m->tx, len, NULL,
					   (fi_addr_t)s, k, m->tx));
	m->add_v = m->fetch_v = (uint64_t)(m->rank + 1) * k;
	s = (int)(k % (uint32_t)m->n);
	SOAK_POST(m, k,
		  fi_atomic(m->r.ep, &m->add_v, 1, NULL, (fi_addr_t)s,
			    m->sh->addr[s], m->sh->key[s], FI_UINT64, FI_SUM,
			    &m->add_v));
	SOAK_POST(m, k,
		  fi_fetch_atomic(m->r.ep, &m->fetch_v, 1, NULL, &m->fetch_old,
				  NULL, (fi_addr_t)m->right,
				  m->sh->addr[m->right] + 8,
				  m->sh->key[m->right], FI_UINT64, FI_SUM,
				  &m->fetch_old));
	return 0;
}

/* The plain write into the right neighbour, then its read back. */
static int round_rma(struct mixed *m, uint32_t k)
{
	uint64_t raddr = m->sh->addr[m->right] + W_OFF(k);
	int ret;

	m->wlen = rand_len(8, RMA_MAX);
	pat_fill(m->wbuf, m->wlen, m->rank, k);
	m->write_done = m->read_done = false;
	SOAK_POST(m, k,
		  fi_write(m->r.ep, m->wbuf, m->wlen, NULL, (fi_addr_t)m->right,
			   raddr, m->sh->key[m->right], m->wbuf));
	ret = wait_for(m, k, &m->write_done);
	if (ret)
		return ret;
	memset(m->rbuf, 0, m->wlen);
	SOAK_POST(m, k,
		  fi_read(m->r.ep, m->rbuf, m->wlen, NULL, (fi_addr_t)m->right,
			  raddr, m->sh->key[m->right], m->rbuf));
	return wait_for(m, k, &m->read_done);
}

/*
 * The chain: go counter -> deferred write into the left neighbour ->
 * done counter -> triggered barrier -> CQ.
 */
static int round_chain(struct mixed *m, uint32_t k)
{
	size_t len = rand_len(8, RMA_MAX);
	struct iovec iov = {m->tbuf + (k % 2) * RMA_MAX, len};
	struct fi_rma_iov rma = {m->sh->addr[m->left] + T_OFF(k), len,
				 m->sh->key[m->left]};
	struct fi_op_rma op = {
		.ep = m->r.ep,
		.msg = {.msg_iov = &iov,
			.iov_count = 1,
			.addr = (fi_addr_t)m->left,
			.rma_iov = &rma,
			.rma_iov_count = 1},
	};
	struct fi_deferred_work work = {.threshold = k,
					.triggering_cntr = m->go,
					.completion_cntr = m->done,
					.op_type = FI_OP_WRITE,
					.op.rma = &op};

	pat_fill(iov.iov_base, len, m->rank, k);
	/* copied when queued (fi_gba(7)): the locals may go */
	FT_CHECK(fi_control(&m->r.domain->fid, FI_QUEUE_WORK, &work));
	m->tctx.event_type = FI_TRIGGER_THRESHOLD;
	m->tctx.trigger.threshold.cntr = m->done;
	m->tctx.trigger.threshold.threshold = k;
	m->barrier_done = false;
	SOAK_POST(
		m, k,
		fi_barrier2(m->r.ep, fi_mc_addr(m->mc), FI_TRIGGER, &m->tctx));
	if (m->o->delay_us && !(rand() & 3))
		usleep((useconds_t)(rand() % (m->o->delay_us + 1)));
	FT_CHECK(fi_cntr_add(m->go, 1));
	return wait_for(m, k, NULL);
}

static int one_round(struct mixed *m, uint32_t k)
{
	int ret = round_msgs(m, k);

	if (!ret)
		ret = round_rma(m, k);
	if (!ret)
		ret = round_chain(m, k);
	if (!ret && !m->barrier_done)
		ret = ft_err("round ended without its barrier", -FI_EOTHER);
	if (!ret && fi_cntr_readerr(m->done))
		ret = ft_err("deferred write failed", -FI_EIO);
	if (!ret)
		ret = pat_check(m, m->region + W_OFF(k), m->left, k, "write");
	if (!ret)
		ret = pat_check(m, m->region + T_OFF(k), m->right, k,
				"triggered write");
	return ret;
}

/* After @rounds rounds: the exact totals of this member's words. */
static int check_totals(struct mixed *m, long rounds)
{
	uint64_t w0 = 0, w1, *word = (uint64_t *)m->region;
	uint64_t ranks = (uint64_t)m->n * (uint64_t)(m->n + 1) / 2;
	long k;

	for (k = 1; k <= rounds; k++)
		if (k % m->n == m->rank)
			w0 += ranks * (uint64_t)k;
	w1 = (uint64_t)(m->left + 1) * (uint64_t)rounds *
	     (uint64_t)(rounds + 1) / 2;
	if (word[0] != w0 || word[1] != w1) {
		fprintf(stderr,
			"soak_mixed[%d]: atomic totals %llu %llu, expected "
			"%llu %llu\n",
			m->rank, (unsigned long long)word[0],
			(unsigned long long)word[1], (unsigned long long)w0,
			(unsigned long long)w1);
		return -FI_EIO;
	}
	return 0;
}

static int setup(struct mixed *m)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	int ret;

	m->left = (m->rank + m->n - 1) % m->n;
	m->right = (m->rank + 1) % m->n;
	m->region = calloc(1, REGION);
	m->wbuf = calloc(1, RMA_MAX);
	m->rbuf = calloc(1, RMA_MAX);
	m->tbuf = calloc(2, RMA_MAX);
	m->tx = calloc(1, sizeof(*m->tx));
	m->rx = calloc((size_t)m->n, sizeof(*m->rx));
	if (!m->region || !m->wbuf || !m->rbuf || !m->tbuf || !m->tx || !m->rx)
		return ft_err("calloc", -FI_ENOMEM);
	ret = ft_open(&m->r, m->o->prov,
		      FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_RMA |
			      FI_ATOMIC | FI_COLLECTIVE | FI_TRIGGER);
	if (ret)
		return ret;
	FT_CHECK(fi_mr_reg(m->r.domain, m->region, REGION,
			   FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &m->mr,
			   NULL));
	FT_CHECK(fi_cntr_open(m->r.domain, &cattr, &m->go, NULL));
	FT_CHECK(fi_cntr_open(m->r.domain, &cattr, &m->done, NULL));
	m->sh->key[m->rank] = fi_mr_key(m->mr);
	m->sh->addr[m->rank] = ft_rma_addr(&m->r, m->region, m->region);
	ret = ft_exchange(&m->r, &m->sh->hdr, m->rank, m->n, m->o->timeout_s);
	if (ret)
		return ret;
	return ft_join_all(&m->r, m->n, &m->set, &m->mc);
}

/*
 * A last plain barrier: every member's atomics of the last round are
 * complete (a round's barrier waits for its chain only), then the totals
 * of @rounds rounds are checked; nobody leaves while others progress.
 */
static int teardown(struct mixed *m, long rounds)
{
	struct fi_cq_data_entry c;

	FT_CHECK(fi_barrier(m->r.ep, fi_mc_addr(m->mc), NULL));
	FT_CHECK(ft_wait_comp(&m->r, &c, m->o->timeout_s * 1000));
	if (check_totals(m, rounds))
		return -FI_EIO;
	FT_CHECK(fi_close(&m->mc->fid));
	FT_CHECK(fi_close(&m->set->fid));
	FT_CHECK(fi_close(&m->mr->fid));
	FT_CHECK(fi_close(&m->go->fid));
	FT_CHECK(fi_close(&m->done->fid));
	FT_CHECK(ft_close(&m->r));
	free(m->region);
	free(m->wbuf);
	free(m->rbuf);
	free(m->tbuf);
	free(m->tx);
	free(m->rx);
	return 0;
}

static int soak_mixed_child(int rank, void *shared, const struct ft_opts *o)
{
	struct mixed m = {.sh = shared, .o = o, .rank = rank, .n = o->nprocs};
	uint64_t end_ms = 0;
	double t0, s;
	long k;
	int ret;

	srand((unsigned)getpid());
	ret = setup(&m);
	if (ret)
		return ret;
	t0 = ft_now_us();
	if (o->duration_s)
		end_ms = ft_now_ms() + (uint64_t)o->duration_s * 1000;
	for (k = 1;; k++) {
		ret = one_round(&m, (uint32_t)k);
		if (ret) {
			fprintf(stderr, "soak_mixed[%d]: round %ld failed\n",
				rank, k);
			return ret;
		}
		soak_ready(rank, k);
		if (soak_stop_after(&m.sh->stop, rank, k, o->iters, end_ms))
			break;
	}
	s = (ft_now_us() - t0) / 1e6;
	ret = teardown(&m, k);
	if (ret)
		return ret;
	if (rank == 0)
		printf("soak_mixed: %d processes, %ld rounds, %.1f s: %llu "
		       "messages (%llu bytes), %llu writes, %llu reads, %llu "
		       "atomics, %ld triggered chains, all checked, atomic "
		       "totals exact (per process)\n",
		       m.n, k, s, (unsigned long long)m.msgs,
		       (unsigned long long)m.bytes,
		       (unsigned long long)m.writes,
		       (unsigned long long)m.reads,
		       (unsigned long long)m.atomics, k);
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {.prov = "gba",
			    .iters = 0,
			    .nprocs = 4,
			    .timeout_s = 3600,
			    .delay_us = 50};

	ft_parse(argc, argv, &o, "soak_mixed",
		 "  -r <us>         random delay bound before the chain of "
		 "one round in four (default 50)\n"
		 "  (-I and -D bound the run; at least one is needed)\n");
	if ((!o.iters && !o.duration_s) || o.nprocs < 2) {
		fprintf(stderr, "soak_mixed: give -I or -D, and -n >= 2\n");
		return 2;
	}
	return ft_fork_run(&o, sizeof(struct soak_mixed_shared),
			   soak_mixed_child);
}
