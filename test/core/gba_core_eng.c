/*
 * The fabric engine (include/gba/gba_eng.h): endpoints and addresses,
 * loopback, messages of every size class between processes (inline,
 * large, held, partial copies, FIFO order, full queues, the receiver's
 * status), puts and gets with the target's access checks, remote events
 * and ordering, the built-in atomic executor (every op, 32 and 64 bits,
 * fetch results, largest counts, concurrent adders) and a front end's
 * own, peers that die or close with operations or answers outstanding,
 * and two endpoints with tiny queues flooding each other.
 *
 * The test brings a tiny front end (struct fe): a table of registered
 * regions keyed by key (remote addresses are the target's virtual
 * addresses), a completion table indexed by cookie, a log of messages and
 * remote events.  Children report failures through their exit status
 * (and a line on stderr), never through Criterion; the parent asserts on
 * it.  Addresses go between the processes in a MAP_SHARED struct.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <gba/gba_eng.h>
#include <gba/gba_job.h>

#include "gba_core_util.h"

TestSuite(fab, .timeout = 60);

/* ---- Data patterns ------------------------------------------------------- */

/* Byte @i of the pattern @seed: shifts, swaps and mix-ups all show. */
static inline uint8_t pat(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 29u + i * 7u + (i >> 8) * 3u + (i >> 16) * 11u);
}

#define CANARY 0xEE
#define RW (GBA_ENG_ACCESS_READ | GBA_ENG_ACCESS_WRITE)

/*
 * Describe @n bytes of @buf (which holds n + 64 bytes) as 4 iov entries:
 * two pieces, an empty entry without a buffer, the rest; 13-byte gaps
 * between the pieces.  @v picks where the cuts are.
 */
static size_t spread(char *buf, size_t n, unsigned v, struct iovec *iov)
{
	size_t want[4], off = 0, left = n, take, i;

	want[0] = v ? 3 : n / 7;
	want[1] = v ? n / 2 : 1;
	want[2] = 0;
	want[3] = SIZE_MAX;
	for (i = 0; i < 4; i++) {
		if (i == 2) {
			iov[i].iov_base = NULL;
			iov[i].iov_len = 0;
			continue;
		}
		take = want[i] < left ? want[i] : left;
		iov[i].iov_base = buf + off;
		iov[i].iov_len = take;
		off += take + 13;
		left -= take;
	}
	return 4;
}

/* Fill the logical bytes of @iov with pattern @seed. */
static void iov_fill(const struct iovec *iov, size_t cnt, uint32_t seed)
{
	size_t i, j, lo = 0;

	for (i = 0; i < cnt; i++)
		for (j = 0; j < iov[i].iov_len; j++)
			((uint8_t *)iov[i].iov_base)[j] = pat(seed, lo++);
}

/*
 * @buf (@size bytes, canary-filled before) after receiving @n bytes into
 * @iov (entries inside @buf, increasing addresses): logical byte i < n is
 * pat(seed, off0 + i), every other byte of @buf still the canary.  Returns
 * -1, or the offset in @buf of the first wrong byte.
 */
static long long check_rx(const char *buf, size_t size,
			  const struct iovec *iov, size_t cnt, uint32_t seed,
			  size_t off0, size_t n)
{
	const uint8_t *b = (const uint8_t *)buf;
	size_t pos = 0, lo = 0, i, j, at;
	uint8_t want;

	for (i = 0; i < cnt; i++) {
		if (!iov[i].iov_base)
			continue;
		at = (size_t)((const char *)iov[i].iov_base - buf);
		for (; pos < at; pos++)
			if (b[pos] != CANARY)
				return (long long)pos;
		for (j = 0; j < iov[i].iov_len; j++, lo++, pos++) {
			want = lo < n ? pat(seed, off0 + lo) : CANARY;
			if (b[pos] != want)
				return (long long)pos;
		}
	}
	for (; pos < size; pos++)
		if (b[pos] != CANARY)
			return (long long)pos;
	return -1;
}

/* -1 if @n bytes at @p are pat(seed, off0 + i), else the first wrong i. */
static long long check_lin(const void *p, size_t n, uint32_t seed, size_t off0)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((const uint8_t *)p)[i] != pat(seed, off0 + i))
			return (long long)i;
	return -1;
}

/* ---- Children ------------------------------------------------------------ */

static void cfail(int line, const char *what, long long a, long long b)
{
	fprintf(stderr, "gba_core_eng child %d: line %d: %s (%lld, %lld)\n",
		(int)getpid(), line, what, a, b);
	_exit(20 + line % 200);
}

/* Checks inside a child: a failure is an exit status. */
#define CHK(c)                                                         \
	do {                                                           \
		if (!(c))                                              \
			cfail(__LINE__, #c, 0, 0);                     \
	} while (0)
#define CHKEQ(a, b)                                                    \
	do {                                                           \
		long long a_ = (long long)(a), b_ = (long long)(b);    \
		if (a_ != b_)                                          \
			cfail(__LINE__, #a " == " #b, a_, b_);         \
	} while (0)

/* The children of the running test (parent side). */
static struct {
	pid_t owner;
	int n;
	pid_t pid[8];
	int reaped[8];
	const char *name[8];
	unsigned polls;
} kids;

struct shared;
typedef void (*kid_fn)(struct shared *sh, int arg);

static pid_t kid(const char *name, kid_fn fn, struct shared *sh, int arg)
{
	pid_t pid;

	if (kids.owner != getpid()) {
		memset(&kids, 0, sizeof(kids));
		kids.owner = getpid();
	}
	cr_assert_lt(kids.n, 8);
	pid = gba_t_fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		kids.owner = 0;
		kids.n = 0;
		fn(sh, arg);
		_exit(0);
	}
	kids.pid[kids.n] = pid;
	kids.reaped[kids.n] = 0;
	kids.name[kids.n++] = name;
	return pid;
}

static void kid_check(int i, int st)
{
	kids.reaped[i] = 1;
	cr_assert(WIFEXITED(st), "child %s died: signal %d", kids.name[i],
		  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_assert_eq(WEXITSTATUS(st), 0,
		     "child %s failed: exit %d (line %% 200 + 20; see stderr)",
		     kids.name[i], WEXITSTATUS(st));
}

/* A child that failed while the parent waits for it: fail at once. */
static void kids_poll(void)
{
	int i, st;

	if (kids.owner != getpid() || (++kids.polls & 255))
		return;
	for (i = 0; i < kids.n; i++)
		if (!kids.reaped[i] &&
		    waitpid(kids.pid[i], &st, WNOHANG) == kids.pid[i])
			kid_check(i, st);
}

/* The parent reaps a child it killed: it must have died of @sig. */
static void kid_reap_killed(pid_t pid, int sig)
{
	int i, st;

	for (i = 0; i < kids.n; i++)
		if (kids.pid[i] == pid && !kids.reaped[i])
			break;
	cr_assert_lt(i, kids.n);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	kids.reaped[i] = 1;
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sig,
		  "child %s: status %#x, expected signal %d", kids.name[i], st,
		  sig);
}

static void kids_wait(void)
{
	int i, st;

	for (i = 0; i < kids.n; i++) {
		if (kids.reaped[i])
			continue;
		cr_assert_eq(waitpid(kids.pid[i], &st, 0), kids.pid[i]);
		kid_check(i, st);
	}
	kids.n = 0;
}

/* Between the parent and its children (MAP_SHARED | MAP_ANONYMOUS). */
struct shared {
	struct gba_addr addr[8];
	_Atomic int ready[8];
	_Atomic int phase;     /* parent -> children */
	_Atomic int cphase[8]; /* child -> parent */
	_Atomic int done;      /* participants through finish() */
	_Atomic uint64_t mark; /* receiver: tag of the last rx_done */
	uint64_t raddr[8];     /* region addresses (remote side) */
	_Atomic uint64_t val[8];
	_Atomic double t_kill;
	_Atomic uint8_t seen[4096]; /* fetched values (bitmap) */
};

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	return sh;
}

/* ---- The front end ------------------------------------------------------- */

#define MAX_REG 8
#define MAX_COOKIE 65536
#define MAX_HELD 64
#define MAX_EV 64

struct region {
	uint64_t key;
	char *base;
	size_t len;
	uint32_t access;
};

struct msgrec {
	struct gba_addr src;
	uint64_t len, tag, data;
	uint32_t flags;
	int large;
	long long copied;
};

struct evrec {
	enum gba_eng_event ev;
	struct gba_addr src;
	uint32_t flags;
	uint64_t data;
	size_t len;
};

enum rx_mode {
	RX_COPY, /* rx_copy into rx_iov, then rx_done */
	RX_HOLD, /* gba_eng_rx_hold, finished later */
	RX_FIFO, /* check order and contents (messages test) */
	RX_DL,	 /* check contents (deadlock test) */
};

struct fe {
	struct gba_eng_ep *ep;
	struct region reg[MAX_REG];
	int nreg;
	/* completions */
	uint64_t ck; /* next cookie */
	uint8_t *done;
	int *status;
	uint64_t ncomp, nfail, dups, bad_cookie;
	void (*hook)(struct fe *fe, uint64_t cookie, int status);
	void *user;
	_Atomic uint64_t *mark; /* sender: mark_at_complete <- *mark */
	uint64_t mark_at_complete;
	/* messages */
	enum rx_mode rx_mode;
	struct iovec rx_iov[GBA_ENG_MAX_IOV];
	size_t rx_iovcnt;
	unsigned rx_done_delay_us; /* before rx_done of a large one */
	uint64_t nmsg;
	struct msgrec last;
	uint64_t tags[16];
	struct gba_eng_rx *held[MAX_HELD];
	int nheld, hold_fail;
	void (*rx_hook)(struct fe *fe, struct gba_eng_rx *rx);
	uint64_t fifo_next, fifo_bad, fifo_why;
	size_t (*fifo_lenf)(uint64_t i); /* NULL: fifo_len */
	char *fifo_buf;			 /* NULL: scratch */
	size_t fifo_cap;
	uint64_t msg_bad;
	char scratch[8192];
	/* remote events */
	struct evrec ev[MAX_EV];
	uint64_t nev, nev_type[3];
};

/* FIFO test: message i's length (every 997th is large). */
#define NFIFO 10000
static size_t fifo_len(uint64_t i)
{
	return i % 997 == 500 ? 4100 + i % 50 : i % 61;
}

static void fe_recv_fifo(struct fe *fe, struct gba_eng_rx *rx)
{
	uint64_t i = fe->fifo_next;
	const void *p = rx->payload;
	struct iovec iov;
	ssize_t n;

	if (fe->fifo_bad)
		return;
	if (rx->tag != i ||
	    rx->len != (fe->fifo_lenf ? fe->fifo_lenf : fifo_len)(i) ||
	    rx->data != ~i || (rx->len > GBA_ENG_INLINE) != (p == NULL)) {
		fe->fifo_bad = i + 1;
		fe->fifo_why = 1;
		return;
	}
	if (!p) {
		iov.iov_base = fe->fifo_buf ? fe->fifo_buf : fe->scratch;
		iov.iov_len = fe->fifo_buf ? fe->fifo_cap : sizeof(fe->scratch);
		n = gba_eng_rx_copy(fe->ep, rx, &iov, 1, 0);
		if (n != (ssize_t)rx->len) {
			fe->fifo_bad = i + 1;
			fe->fifo_why = 2;
			return;
		}
		p = iov.iov_base;
	}
	if (check_lin(p, rx->len, (uint32_t)i, 0) != -1) {
		fe->fifo_bad = i + 1;
		fe->fifo_why = 3;
		return;
	}
	fe->fifo_next++;
}

/* Deadlock test: tag 3 is 32 inline bytes, tag 4 5000 large ones. */
static void fe_recv_dl(struct fe *fe, struct gba_eng_rx *rx)
{
	struct iovec iov = {fe->scratch, sizeof(fe->scratch)};
	size_t want = rx->tag == 3 ? 32 : 5000;

	if ((rx->tag != 3 && rx->tag != 4) || rx->len != want ||
	    gba_eng_rx_copy(fe->ep, rx, &iov, 1, 0) != (ssize_t)want ||
	    check_lin(fe->scratch, want, (uint32_t)rx->tag, 0) != -1)
		fe->msg_bad++;
}

static void fe_recv(void *ctx, struct gba_eng_rx *rx)
{
	struct fe *fe = ctx;
	struct msgrec *m = &fe->last;

	m->src = rx->src;
	m->len = rx->len;
	m->tag = rx->tag;
	m->data = rx->data;
	m->flags = rx->flags;
	m->large = rx->payload == NULL;
	m->copied = -1;
	if (fe->rx_hook)
		fe->rx_hook(fe, rx);
	if (fe->nmsg < 16)
		fe->tags[fe->nmsg] = rx->tag;
	fe->nmsg++;
	switch (fe->rx_mode) {
	case RX_HOLD:
		if (fe->nheld < MAX_HELD) {
			fe->held[fe->nheld] = gba_eng_rx_hold(rx);
			if (fe->held[fe->nheld]) {
				fe->nheld++;
				return;
			}
		}
		fe->hold_fail++;
		gba_eng_rx_done(fe->ep, rx, -ENOMEM);
		return;
	case RX_FIFO:
		fe_recv_fifo(fe, rx);
		break;
	case RX_DL:
		fe_recv_dl(fe, rx);
		break;
	case RX_COPY:
		m->copied = gba_eng_rx_copy(fe->ep, rx, fe->rx_iov,
					    fe->rx_iovcnt, 0);
		if (m->large && fe->rx_done_delay_us)
			usleep(fe->rx_done_delay_us);
		break;
	}
	if (fe->mark)
		atomic_store(fe->mark, rx->tag);
	gba_eng_rx_done(fe->ep, rx, 0);
}

static void fe_complete(void *ctx, uint64_t cookie, int status)
{
	struct fe *fe = ctx;

	fe->ncomp++;
	if (status)
		fe->nfail++;
	if (fe->mark)
		fe->mark_at_complete = atomic_load(fe->mark);
	if (fe->hook) {
		fe->hook(fe, cookie, status);
		return;
	}
	if (cookie >= MAX_COOKIE) {
		fe->bad_cookie++;
		return;
	}
	if (fe->done[cookie])
		fe->dups++;
	fe->done[cookie] = 1;
	fe->status[cookie] = status;
}

static int fe_mr_lookup(void *ctx, uint64_t key, uint64_t addr, size_t len,
			uint32_t access, void **ptr)
{
	struct fe *fe = ctx;
	struct region *r;
	uintptr_t base;
	int i;

	for (i = 0; i < fe->nreg; i++) {
		r = &fe->reg[i];
		if (r->key != key)
			continue;
		if (access & ~r->access)
			return -EACCES;
		base = (uintptr_t)r->base;
		if (addr < base || len > r->len || addr - base > r->len - len)
			return -ERANGE;
		*ptr = (void *)(uintptr_t)addr;
		return 0;
	}
	return -ENOKEY;
}

static void fe_event(void *ctx, enum gba_eng_event event,
		     const struct gba_addr *src, uint32_t flags,
		     uint64_t data, size_t len)
{
	struct fe *fe = ctx;

	if (fe->nev < MAX_EV)
		fe->ev[fe->nev] =
			(struct evrec){event, *src, flags, data, len};
	fe->nev++;
	if ((unsigned)event < 3)
		fe->nev_type[event]++;
}

static const struct gba_eng_ops fe_ops = {
	.recv = fe_recv,
	.complete = fe_complete,
	.mr_lookup = fe_mr_lookup,
	.atomic = NULL, /* the built-in executor */
	.remote_event = fe_event,
};

static int fe_open_flags(struct fe *fe, uint32_t rx_slots, uint32_t max_ops,
			 uint32_t eager_max, uint32_t flags,
			 const struct gba_eng_ops *ops)
{
	struct gba_eng_ep_attr attr = {
		.rx_slots = rx_slots,
		.max_ops = max_ops,
		.eager_max = eager_max,
		.flags = flags,
		.ops = ops,
		.ctx = fe,
	};
	int ret;

	memset(fe, 0, sizeof(*fe));
	fe->ck = 1;
	fe->done = calloc(MAX_COOKIE, 1);
	fe->status = calloc(MAX_COOKIE, sizeof(int));
	if (!fe->done || !fe->status)
		ret = -ENOMEM;
	else
		ret = gba_eng_ep_open(&attr, &fe->ep);
	if (ret) {
		free(fe->done);
		free(fe->status);
		fe->done = NULL;
		fe->status = NULL;
	}
	return ret;
}

static int fe_open_eager(struct fe *fe, uint32_t rx_slots, uint32_t max_ops,
			 uint32_t eager_max, const struct gba_eng_ops *ops)
{
	return fe_open_flags(fe, rx_slots, max_ops, eager_max, 0, ops);
}

static int fe_open_ops(struct fe *fe, uint32_t rx_slots, uint32_t max_ops,
		       const struct gba_eng_ops *ops)
{
	return fe_open_eager(fe, rx_slots, max_ops, 0, ops);
}

static int fe_open(struct fe *fe, uint32_t rx_slots, uint32_t max_ops)
{
	return fe_open_ops(fe, rx_slots, max_ops, &fe_ops);
}

static void fe_close(struct fe *fe)
{
	int i;

	for (i = 0; i < fe->nheld; i++)
		gba_eng_rx_done(fe->ep, fe->held[i], 0);
	fe->nheld = 0;
	gba_eng_ep_close(fe->ep);
	fe->ep = NULL;
	free(fe->done);
	free(fe->status);
	fe->done = NULL;
	fe->status = NULL;
}

static void fe_reg(struct fe *fe, uint64_t key, void *base, size_t len,
		   uint32_t access)
{
	fe->reg[fe->nreg++] = (struct region){key, base, len, access};
}

static const struct gba_addr *fe_addr(const struct fe *fe)
{
	return gba_eng_ep_addr(fe->ep);
}

/* ---- Waiting ------------------------------------------------------------- */

/* One round of waiting: progress @fe (may be NULL), watch the children. */
static int spin_step(struct fe *fe)
{
	int n = 0;

	if (fe && fe->ep)
		n = gba_eng_progress(fe->ep);
	if (n <= 0)
		sched_yield();
	kids_poll();
	return n;
}

/* Progress until @cond or @ms pass; 1 if @cond held. */
#define SPIN(fe, cond, ms)                                             \
	({                                                             \
		double e_ = gba_t_now_ms() + (ms);                     \
		int ok_ = 1;                                           \
		while (!(cond)) {                                      \
			if (gba_t_now_ms() > e_) {                     \
				ok_ = !!(cond);                        \
				break;                                 \
			}                                              \
			spin_step(fe);                                 \
		}                                                      \
		ok_;                                                   \
	})
#define P_SPIN(fe, cond) cr_assert(SPIN(fe, cond, 8000), "timeout: " #cond)
#define C_SPIN(fe, cond)                                               \
	do {                                                           \
		if (!SPIN(fe, cond, 8000))                             \
			cfail(__LINE__, "timeout: " #cond, 0, 0);      \
	} while (0)

#define WAIT_TIMEOUT (-999999)
#define START_FAILED (-1000000)

static int fe_wait(struct fe *fe, uint64_t cookie, int ms)
{
	if (!SPIN(fe, fe->done[cookie], ms))
		return WAIT_TIMEOUT;
	return fe->status[cookie];
}

/*
 * Start an operation with @call (which uses COOKIE), retrying on -EAGAIN,
 * and wait for its completion: its status, START_FAILED + the error if
 * the call failed, WAIT_TIMEOUT.
 */
#define RUN(fe, call)                                                  \
	({                                                             \
		uint64_t COOKIE = (fe)->ck++;                          \
		double e_ = gba_t_now_ms() + 5000;                     \
		int r_;                                                \
		while ((r_ = (call)) == -EAGAIN &&                     \
		       gba_t_now_ms() < e_)                            \
			spin_step(fe);                                 \
		r_ ? START_FAILED + r_ : fe_wait(fe, COOKIE, 5000);    \
	})

/*
 * Everybody ends with this: wait until its own operations and answers
 * are through, then until all @n participants are, progressing all the
 * time (the others may still need this endpoint).  0 or the line.
 */
static int finish(struct fe *fe, struct shared *sh, int n)
{
	if (!SPIN(fe, gba_eng_busy(fe->ep) == 0, 8000))
		return __LINE__;
	atomic_fetch_add(&sh->done, 1);
	if (!SPIN(fe, atomic_load(&sh->done) >= n, 8000))
		return __LINE__;
	return 0;
}

static void ring_path(const struct gba_addr *a, char *buf, size_t len)
{
	snprintf(buf, len, "/dev/shm/gba-fab-%u-%016" PRIx64 "-%u-%u",
		 (unsigned)getuid(), gba_job_id(), (unsigned)a->pid,
		 (unsigned)a->ep_id);
}

/* A pid no process has (a child that exited and was reaped). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	int st;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return pid;
}

/* ---- 1. Endpoints and addresses (one process) --------------------------- */

/* @a's IPv4 network address (IPv4-mapped in addr.net) and TCP port. */
static void addr_in(const struct gba_addr *a, struct sockaddr_in *in)
{
	memset(in, 0, sizeof(*in));
	in->sin_family = AF_INET;
	memcpy(&in->sin_addr, a->net + 12, 4);
	in->sin_port = a->port;
}

/*
 * A TCP port of @a's network address that nothing listens on (bound,
 * then closed: connecting to it is refused).
 */
static uint16_t closed_port(const struct gba_addr *a)
{
	struct sockaddr_in in;
	socklen_t len = sizeof(in);
	uint16_t port;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	addr_in(a, &in);
	in.sin_port = 0;
	cr_assert_eq(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&in, &len), 0);
	port = in.sin_port;
	close(fd);
	return port;
}

Test(fab, open_close_addresses)
{
	struct gba_eng_ops ops = fe_ops;
	struct gba_eng_ep_attr attr = {.ops = &ops};
	struct gba_eng_peer *p, *p2, *pb, *pc;
	struct gba_eng_ep *ep;
	struct gba_addr ad, bad;
	const struct gba_addr *aa;
	struct fe a, b, c;
	char path[128];
	struct iovec iov[GBA_ENG_MAX_IOV + 1];
	char byte = 1;
	struct stat st;
	unsigned i;

	cr_assert_eq(fe_open(&a, 0, 0), 0);
	aa = fe_addr(&a);
	cr_assert(gba_addr_valid(aa, sizeof(*aa)));
	cr_assert_eq(aa->pid, (uint32_t)getpid());
	cr_assert_eq(aa->host_id, gba_host_id());
	ring_path(aa, path, sizeof(path));
	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(st.st_uid, getuid());
	cr_assert_eq((size_t)st.st_size,
		     4096 + (size_t)GBA_ENG_RX_SLOTS_DEF * GBA_ENG_SLOT_SIZE);
	cr_assert_eq(gba_eng_busy(a.ep), 0);
	cr_assert_eq(gba_eng_progress(a.ep), 0);

	cr_assert_eq(fe_open(&b, 4, 0), 0);
	bad = *fe_addr(&b);
	cr_assert_neq(bad.ep_id, aa->ep_id);
	cr_assert_eq(bad.pid, aa->pid);
	cr_assert(!gba_addr_equal(&bad, aa));
	ring_path(&bad, path, sizeof(path));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq((size_t)st.st_size, 4096 + 4 * (size_t)GBA_ENG_SLOT_SIZE);

	/* peers: self, another endpoint of this process */
	cr_assert_eq(gba_eng_peer_get(a.ep, aa, &p), 0);
	cr_assert(gba_addr_equal(gba_eng_peer_addr(p), aa));
	cr_assert_eq(gba_eng_peer_get(a.ep, aa, &p2), 0);
	cr_assert_eq(p2, p, "a second lookup gives the same handle");
	cr_assert_eq(gba_eng_peer_get(a.ep, &bad, &pb), 0);
	cr_assert(gba_addr_equal(gba_eng_peer_addr(pb), &bad));
	cr_assert_neq(pb, p);

	/* bad arguments, unreachable addresses */
	cr_assert_eq(gba_eng_peer_get(NULL, aa, &p2), -EINVAL);
	cr_assert_eq(gba_eng_peer_get(a.ep, NULL, &p2), -EINVAL);
	cr_assert_eq(gba_eng_peer_get(a.ep, aa, NULL), -EINVAL);
	ad = bad;
	ad.magic ^= 1;
	cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), -EINVAL);
	ad = bad;
	ad.version++;
	cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), -EINVAL);
	ad = bad;
	ad.reserved = 1;
	cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), -EINVAL);
	/* another host: without a network address, or none listening */
	ad = bad;
	ad.host_id ^= 0x10;
	ad.port = 0;
	cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), -EHOSTUNREACH);
	if (bad.port && bad.net[10] == 0xff && bad.net[11] == 0xff) {
		ad = bad;
		ad.host_id ^= 0x10;
		ad.port = closed_port(&bad);
		cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), -EHOSTUNREACH);
	}
	ad = bad;
	ad.ep_id += 100000;
	cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), -EHOSTUNREACH);
	ad = bad;
	ad.pid = (uint32_t)dead_pid();
	cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), -EHOSTUNREACH);

	/* open: argument errors */
	cr_assert_eq(gba_eng_ep_open(NULL, &ep), -EINVAL);
	cr_assert_eq(gba_eng_ep_open(&attr, NULL), -EINVAL);
	attr.ops = NULL;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL);
	attr.ops = &ops;
	ops.recv = NULL;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL);
	ops = fe_ops;
	ops.complete = NULL;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL);
	ops = fe_ops;
	ops.mr_lookup = NULL;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL);
	ops = fe_ops;
	{
		static const uint32_t bad_slots[] = {3, 6, 12, 100, 65535,
						     131072, 0x80000001u};

		for (i = 0; i < sizeof(bad_slots) / sizeof(bad_slots[0]);
		     i++) {
			attr.rx_slots = bad_slots[i];
			cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL,
				     "rx_slots %u", bad_slots[i]);
		}
	}
	attr.rx_slots = 0;
	attr.max_ops = 65537;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL);
	attr.max_ops = 0;
	ad = *aa;
	ad.pid = (uint32_t)dead_pid();
	attr.addr = &ad;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL, "other process");
	ad = *aa;
	ad.host_id ^= 1;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL, "other host");
	ad = *aa;
	ad.magic = 0;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EINVAL, "malformed");
	ad = *aa;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), -EADDRINUSE);
	/* an address chosen by the caller; rx_slots 1 is a power of two */
	ad.ep_id = 0x7fff1234;
	attr.rx_slots = 1;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), 0);
	cr_assert(gba_addr_equal(gba_eng_ep_addr(ep), &ad));
	cr_assert_eq(gba_eng_peer_get(a.ep, &ad, &p2), 0);
	gba_eng_ep_close(ep);
	attr.addr = NULL;
	attr.rx_slots = 0;

	/* operation argument errors */
	for (i = 0; i <= GBA_ENG_MAX_IOV; i++)
		iov[i] = (struct iovec){&byte, 1};
	cr_assert_eq(gba_eng_send(a.ep, pb, iov, GBA_ENG_MAX_IOV + 1, 0, 0,
				  0, 0),
		     -EINVAL);
	cr_assert_eq(gba_eng_send(a.ep, pb, NULL, 1, 0, 0, 0, 0), -EINVAL);
	cr_assert_eq(gba_eng_send(NULL, pb, iov, 1, 0, 0, 0, 0), -EINVAL);
	cr_assert_eq(gba_eng_send(a.ep, NULL, iov, 1, 0, 0, 0, 0), -EINVAL);
	iov[1] = (struct iovec){NULL, 5};
	cr_assert_eq(gba_eng_send(a.ep, pb, iov, 2, 0, 0, 0, 0), -EINVAL);
	cr_assert_eq(gba_eng_put(a.ep, pb, iov, 2, 0, 0, 0, 0, 0), -EINVAL);
	cr_assert_eq(gba_eng_get(a.ep, pb, iov, 2, 0, 0, 0, 0), -EINVAL);
	iov[1] = (struct iovec){&byte, SIZE_MAX - 1};
	cr_assert_eq(gba_eng_send(a.ep, pb, iov, 2, 0, 0, 0, 0), -EINVAL,
		     "lengths wrap around");
	cr_assert_eq(gba_eng_busy(a.ep), 0);
	cr_assert_eq(gba_eng_progress(b.ep), 0, "nothing was sent");

	/* a closed endpoint: its queue is gone, senders are told */
	gba_eng_ep_close(b.ep);
	b.ep = NULL;
	ring_path(&bad, path, sizeof(path));
	cr_assert_eq(stat(path, &st), -1);
	cr_assert_eq(errno, ENOENT);
	iov[0] = (struct iovec){&byte, 1};
	{
		int r = gba_eng_send(a.ep, pb, iov, 1, 0, 0, 0, 0);

		cr_assert(r == -EHOSTUNREACH || r == -EPIPE, "send: %d", r);
		r = gba_eng_put(a.ep, pb, iov, 1, 0, 0, 0, 0, 0);
		cr_assert(r == -EHOSTUNREACH || r == -EPIPE, "put: %d", r);
	}
	cr_assert_eq(gba_eng_busy(a.ep), 0);
	cr_assert_eq(fe_open(&c, 0, 0), 0);
	cr_assert_eq(gba_eng_peer_get(c.ep, &bad, &pc), -EHOSTUNREACH);
	/* the address is free again */
	attr.addr = &bad;
	attr.ctx = &c;
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), 0);
	gba_eng_ep_close(ep);
	gba_eng_ep_close(NULL);
	fe_close(&c);
	free(b.done);
	free(b.status);
	ring_path(aa, path, sizeof(path));
	fe_close(&a);
	cr_assert_eq(stat(path, &st), -1);
}

/* ---- Loopback: everything to the endpoint itself (one process) ---------- */

/*
 * Services of another host by host and service (gba_addr_service,
 * gba_eng_service_lookup; here the "other host" is this one's network
 * address): a child holds service @arg (its TCP listener on that port)
 * and progresses until the parent is through.
 */
static void svc_child(struct shared *sh, int arg)
{
	struct gba_addr a;
	struct gba_eng_ep_attr attr = {.ops = &fe_ops, .addr = &a,
				       .flags = GBA_ENG_EP_SERVICE};
	struct fe fe;

	CHKEQ(gba_addr_init_local(&a), 0);
	a.ep_id = (uint32_t)arg;
	memset(&fe, 0, sizeof(fe));
	attr.ctx = &fe;
	CHKEQ(gba_eng_ep_open(&attr, &fe.ep), 0);
	sh->addr[0] = *gba_eng_ep_addr(fe.ep);
	atomic_store(&sh->ready[0], 1);
	C_SPIN(&fe, atomic_load(&sh->phase) == 1);
	gba_eng_ep_close(fe.ep);
}

/* A listener that answers a T_WHOIS with garbage (not a gba endpoint). */
static void svc_garbage_child(struct shared *sh, int arg)
{
	struct sockaddr_in in;
	char buf[256];
	int fd = socket(AF_INET, SOCK_STREAM, 0), c;

	(void)arg;
	CHK(fd >= 0);
	addr_in(&sh->addr[1], &in);
	CHKEQ(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	CHKEQ(listen(fd, 4), 0);
	atomic_store(&sh->ready[1], 1);
	c = accept(fd, NULL, NULL);
	CHK(c >= 0);
	memset(buf, 0x5a, sizeof(buf));
	CHK(read(c, buf, 64) > 0);
	CHK(write(c, buf, sizeof(buf)) > 0);
	close(c);
	close(fd);
}

Test(fab, service_lookup_of_another_host)
{
	struct shared *sh = shared_new();
	struct gba_addr self, svc, got;
	char host[16];
	uint16_t port;
	int ret;

	cr_assert_eq(gba_addr_init_local(&self), 0);
	if (gba_net_local(NULL, self.net)) {
		cr_skip_test("no network address here (GBA_NET_ADDR)");
		return;
	}
	cr_assert(self.net[10] == 0xff && self.net[11] == 0xff,
		  "the default network address is IPv4 here");
	snprintf(host, sizeof(host), "%u.%u.%u.%u", self.net[12],
		 self.net[13], self.net[14], self.net[15]);
	self.port = htons(1);

	/* bad arguments, a host that does not resolve */
	cr_assert_eq(gba_addr_service(NULL, 9228, &svc), -EINVAL);
	cr_assert_eq(gba_addr_service(host, 0, &svc), -EINVAL);
	cr_assert_eq(gba_addr_service(host, 65536, &svc), -EINVAL);
	cr_assert_eq(gba_addr_service("no-such-host.invalid", 9228, &svc),
		     -EHOSTUNREACH);
	cr_assert_eq(gba_eng_service_lookup(&self, 100, &got), -EINVAL,
		     "an endpoint's own address is not a service address");

	/* a service nobody holds: refused until the timeout */
	port = ntohs(closed_port(&self));
	cr_assert_eq(gba_addr_service(host, port, &svc), 0);
	cr_assert(gba_addr_is_service(&svc));
	cr_assert_eq(svc.ep_id, port);
	cr_assert_eq(svc.port, htons(port));
	cr_assert_eq(gba_eng_service_lookup(&svc, 300, &got), -EHOSTUNREACH);

	/* a live endpoint holding it: its whole address */
	kid("service holder", svc_child, sh, port);
	P_SPIN(NULL, atomic_load(&sh->ready[0]));
	ret = gba_eng_service_lookup(&svc, 5000, &got);
	cr_assert_eq(ret, 0, "lookup: %s", gba_last_error(ret));
	cr_assert(gba_addr_equal(&got, &sh->addr[0]));
	cr_assert_eq(got.port, htons(port), "it listens on its service");
	cr_assert_neq(got.pid, 0);

	/* its port, another service number: not held there */
	svc.ep_id = port == 65535 ? 1 : port + 1u;
	cr_assert_eq(gba_eng_service_lookup(&svc, 2000, &got), -ENOENT);
	atomic_store(&sh->phase, 1);
	kids_wait();

	/* not a gba endpoint */
	port = ntohs(closed_port(&self));
	cr_assert_eq(gba_addr_service(host, port, &sh->addr[1]), 0);
	kid("garbage listener", svc_garbage_child, sh, 0);
	P_SPIN(NULL, atomic_load(&sh->ready[1]));
	cr_assert_eq(gba_eng_service_lookup(&sh->addr[1], 2000, &got),
		     -EPROTO);
	kids_wait();
}

/*
 * The engine's looks at its TCP listener, counted: accept4 calls on a
 * socket bound to listen_port (this process's; 0: none counted), and the
 * connections they returned.
 */
static in_port_t listen_port;
static atomic_int n_looks, n_accepted;

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	static int (*next)(int, struct sockaddr *, socklen_t *, int);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	bool watched;
	int ret;

	if (!next)
		next = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(
			RTLD_NEXT, "accept4");
	watched = listen_port &&
		  !getsockname(fd, (struct sockaddr *)&ss, &sl) &&
		  ss.ss_family == AF_INET &&
		  ((struct sockaddr_in *)&ss)->sin_port == listen_port;
	ret = next(fd, sa, len, flags);
	if (watched) {
		atomic_fetch_add(&n_looks, 1);
		if (ret >= 0)
			atomic_fetch_add(&n_accepted, 1);
	}
	return ret;
}

/*
 * An endpoint nobody connects to looks at its listener less and less
 * often (GBA_NET_IDLE_NS at first, at most every millisecond once idle),
 * so a process polling without a pause makes few system calls; a peer
 * that connects later is still taken within about that millisecond.
 */
Test(fab, listener_backoff)
{
	const struct gba_addr *a;
	struct sockaddr_in in;
	struct fe fe;
	double t0, t;
	int fd, looks;

	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	a = gba_eng_ep_addr(fe.ep);
	if (!a->port || a->net[10] != 0xff || a->net[11] != 0xff) {
		fe_close(&fe);
		cr_skip_test("no IPv4 TCP listener here (GBA_NET_ADDR)");
		return;
	}
	listen_port = a->port;

	/* 300 ms of idle progress: about 300 looks, not 6000 (every 50 us) */
	t0 = gba_t_now_ms();
	while (gba_t_now_ms() - t0 < 300)
		gba_eng_progress(fe.ep);
	looks = atomic_load(&n_looks);
	cr_assert(looks >= 5 && looks < 1000,
		  "%d looks at the listener in 300 ms of idle progress", looks);
	cr_assert_eq(atomic_load(&n_accepted), 0);

	/* a peer connecting now is taken within a look or two */
	addr_in(a, &in);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(fd >= 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	t0 = gba_t_now_ms();
	while (!atomic_load(&n_accepted) && gba_t_now_ms() - t0 < 5000)
		gba_eng_progress(fe.ep);
	t = gba_t_now_ms() - t0;
	cr_assert_eq(atomic_load(&n_accepted), 1, "not accepted in 5 s");
	cr_assert(t < 100, "accepted %.1f ms after the connect", t);
	close(fd);
	listen_port = 0;
	fe_close(&fe);
}

Test(fab, loopback)
{
	struct fe a, s;
	struct gba_eng_peer *self, *ps, *pa;
	struct iovec iov[GBA_ENG_MAX_IOV], riov[GBA_ENG_MAX_IOV];
	size_t cnt, rcnt, n = 300000, i, max8;
	char *sb = malloc(n + 64), *rb = malloc(n + 64 + 64);
	uint64_t *mem = aligned_alloc(64, 8192), *res, *opd;
	char region[4096];

	cr_assert(sb && rb && mem);
	cr_assert_eq(fe_open(&a, 0, 0), 0);
	cr_assert_eq(gba_eng_peer_get(a.ep, fe_addr(&a), &self), 0);
	a.rx_mode = RX_COPY;
	a.rx_iovcnt = spread(rb, n + 64, 1, a.rx_iov);

	/* inline and large messages to itself */
	memset(rb, CANARY, n + 128);
	cnt = spread(sb, 1000, 0, iov);
	iov_fill(iov, cnt, 5);
	cr_assert_eq(gba_eng_send(a.ep, self, iov, cnt, 7, 8, 9, 1), 1);
	cr_assert_eq(gba_eng_progress(a.ep), 1);
	cr_assert_eq(a.nmsg, 1);
	cr_assert_eq(a.last.len, 1000);
	cr_assert_eq(a.last.tag, 7);
	cr_assert_eq(a.last.data, 8);
	cr_assert_eq(a.last.flags, 9);
	cr_assert(gba_addr_equal(&a.last.src, fe_addr(&a)));
	cr_assert_eq(a.last.copied, 1000);
	cr_assert_eq(check_rx(rb, n + 128, a.rx_iov, a.rx_iovcnt, 5, 0, 1000),
		     -1);
	memset(rb, CANARY, n + 128);
	cnt = spread(sb, n, 0, iov);
	iov_fill(iov, cnt, 6);
	cr_assert_eq(gba_eng_send(a.ep, self, iov, cnt, 17, 18, 19, 2), 0);
	cr_assert_eq(gba_eng_busy(a.ep), 1);
	cr_assert_eq(fe_wait(&a, 2, 5000), 0);
	cr_assert_eq(a.last.len, n);
	cr_assert(a.last.large);
	cr_assert_eq(a.last.copied, (long long)n);
	cr_assert_eq(check_rx(rb, n + 128, a.rx_iov, a.rx_iovcnt, 6, 0, n), -1);
	cr_assert_eq(a.ncomp, 1, "the inline send is not reported");
	a.ck = 100; /* RUN's cookies from here */

	/* put and get to itself, inline and large */
	fe_reg(&a, 1, region, sizeof(region), GBA_ENG_ACCESS_READ |
						      GBA_ENG_ACCESS_WRITE);
	fe_reg(&a, 2, sb, n, GBA_ENG_ACCESS_READ | GBA_ENG_ACCESS_WRITE);
	memset(region, CANARY, sizeof(region));
	cnt = spread(rb, 100, 0, iov);
	iov_fill(iov, cnt, 9);
	cr_assert_eq(RUN(&a, gba_eng_put(a.ep, self, iov, cnt,
					 (uintptr_t)region + 50, 1, 0, 0,
					 COOKIE)),
		     0);
	cr_assert_eq(check_lin(region + 50, 100, 9, 0), -1);
	cr_assert_eq(region[49], (char)CANARY);
	cr_assert_eq(region[150], (char)CANARY);
	memset(rb, CANARY, 200);
	cnt = spread(rb, 100, 1, iov);
	cr_assert_eq(RUN(&a, gba_eng_get(a.ep, self, iov, cnt,
					 (uintptr_t)region + 50, 1, 0,
					 COOKIE)),
		     0);
	cr_assert_eq(check_rx(rb, 164, iov, cnt, 9, 0, 100), -1);
	/* large get from region 2 */
	for (i = 0; i < n; i++)
		sb[i] = (char)pat(0x66, i);
	memset(rb, CANARY, n + 128);
	rcnt = spread(rb, n - 10, 0, riov);
	cr_assert_eq(RUN(&a, gba_eng_get(a.ep, self, riov, rcnt,
					 (uintptr_t)sb + 11, 2, 0, COOKIE)),
		     -ERANGE, "leaves the region");
	cr_assert_eq(RUN(&a, gba_eng_get(a.ep, self, riov, rcnt,
					 (uintptr_t)sb + 5, 2, 0, COOKIE)),
		     0);
	cr_assert_eq(check_rx(rb, n + 128, riov, rcnt, 0x66, 5, n - 10), -1);
	/* the most iov entries an operation takes */
	for (i = 0; i < GBA_ENG_MAX_IOV; i++)
		riov[i] = (struct iovec){sb + 1000 * i, 1 + i};
	cr_assert_eq(gba_eng_send(a.ep, self, riov, GBA_ENG_MAX_IOV, 8, 0, 0,
				  0),
		     1);
	cr_assert_eq(gba_eng_progress(a.ep), 1);
	cr_assert_eq(a.last.len, GBA_ENG_MAX_IOV * (GBA_ENG_MAX_IOV + 1) / 2);

	/* atomic at the largest count */
	max8 = gba_eng_atomic_max_count(8, 0);
	cr_assert_eq(max8, (GBA_ENG_INLINE - 16) / 8);
	cr_assert_eq(gba_eng_atomic_max_count(8, 1), (GBA_ENG_INLINE - 16) / 16);
	cr_assert_eq(gba_eng_atomic_max_count(4, 0), (GBA_ENG_INLINE - 16) / 4);
	cr_assert_eq(gba_eng_atomic_max_count(0, 0), 0);
	fe_reg(&a, 3, mem, 8192, GBA_ENG_ACCESS_READ | GBA_ENG_ACCESS_WRITE);
	res = calloc(max8 + 1, 8);
	opd = calloc(max8 + 1, 8);
	for (i = 0; i < max8; i++) {
		mem[i] = i * 0x100000001ULL;
		opd[i] = i + 1;
	}
	cr_assert_eq(RUN(&a, gba_eng_atomic(a.ep, self, GBA_ENG_AOP_ADD, 0, 8,
					    max8, opd, NULL, res,
					    (uintptr_t)mem, 3, 0, 0, COOKIE)),
		     0);
	for (i = 0; i < max8; i++) {
		cr_assert_eq(res[i], i * 0x100000001ULL, "element %zu", i);
		cr_assert_eq(mem[i], i * 0x100000001ULL + i + 1);
	}
	cr_assert_eq(gba_eng_atomic(a.ep, self, GBA_ENG_AOP_ADD, 0, 8,
				    max8 + 1, opd, NULL, res, (uintptr_t)mem,
				    3, 0, 0, 99),
		     -EINVAL);
	cr_assert_eq(gba_eng_busy(a.ep), 0);

	/* a full operation table (max_ops 2) and a full queue (2 slots) */
	cr_assert_eq(fe_open(&s, 2, 2), 0);
	cr_assert_eq(gba_eng_peer_get(s.ep, fe_addr(&s), &ps), 0);
	cr_assert_eq(gba_eng_peer_get(s.ep, fe_addr(&a), &pa), 0);
	s.rx_mode = RX_COPY;
	s.rx_iov[0] = (struct iovec){rb, n};
	s.rx_iovcnt = 1;
	cnt = spread(sb, 5000, 0, iov);
	cr_assert_eq(gba_eng_send(s.ep, pa, iov, cnt, 1, 0, 0, 1), 0);
	cr_assert_eq(gba_eng_send(s.ep, pa, iov, cnt, 2, 0, 0, 2), 0);
	cr_assert_eq(gba_eng_send(s.ep, pa, iov, cnt, 3, 0, 0, 3), -EAGAIN);
	cr_assert_eq(gba_eng_put(s.ep, pa, iov, cnt, 0, 0, 0, 0, 3),
		     -EAGAIN);
	cr_assert_eq(gba_eng_busy(s.ep), 2);
	cr_assert_eq(gba_eng_send(s.ep, pa, iov, 1, 4, 0, 0, 4), 1,
		     "inline sends need no operation record");
	/* own queue: 2 slots */
	cr_assert_eq(gba_eng_send(s.ep, ps, iov, 1, 5, 0, 0, 0), 1);
	cr_assert_eq(gba_eng_send(s.ep, ps, iov, 1, 6, 0, 0, 0), 1);
	cr_assert_eq(gba_eng_send(s.ep, ps, iov, 1, 7, 0, 0, 0), -EAGAIN);
	cr_assert_eq(gba_eng_progress(s.ep), 2);
	cr_assert_eq(gba_eng_send(s.ep, ps, iov, 1, 7, 0, 0, 0), 1);
	cr_assert_eq(gba_eng_progress(s.ep), 1);
	cr_assert_eq(s.nmsg, 3);
	cr_assert_eq(s.tags[0], 5);
	cr_assert_eq(s.tags[2], 7);
	/* a receives the two large ones, s gets its completions */
	P_SPIN(&a, a.nmsg >= 6);
	P_SPIN(&s, s.done[1] && s.done[2]);
	cr_assert_eq(s.status[1], 0);
	cr_assert_eq(s.status[2], 0);
	cr_assert_eq(gba_eng_send(s.ep, pa, iov, cnt, 3, 0, 0, 3), 0);
	P_SPIN(&a, a.nmsg >= 7);
	P_SPIN(&s, s.done[3]);
	cr_assert_eq(s.status[3], 0);
	cr_assert_eq(a.tags[3], 1);
	cr_assert_eq(a.tags[4], 2);
	cr_assert_eq(a.tags[5], 4);
	cr_assert_eq(a.tags[6], 3);
	cr_assert_eq(a.dups + s.dups, 0);
	fe_close(&s);

	/* the receiver's status reaches the sender of a large message */
	a.rx_mode = RX_HOLD;
	cnt = spread(sb, 5000, 0, iov);
	cr_assert_eq(gba_eng_send(a.ep, self, iov, cnt, 1, 0, 0, 50), 0);
	cr_assert_eq(gba_eng_send(a.ep, self, iov, 1, 2, 0, 0, 51), 1);
	P_SPIN(&a, a.nheld == 2);
	gba_eng_rx_done(a.ep, a.held[0], -ECANCELED);
	gba_eng_rx_done(a.ep, a.held[1], -ECANCELED);
	a.nheld = 0;
	cr_assert_eq(fe_wait(&a, 50, 5000), -ECANCELED);
	P_SPIN(&a, gba_eng_busy(a.ep) == 0);
	cr_assert_eq(a.done[51], 0, "an inline send is never reported");
	cr_assert_eq(a.dups, 0);
	fe_close(&a);
	free(res);
	free(opd);
	free(mem);
	free(sb);
	free(rb);
}

/* A front end's own atomic executor: what it was given. */
static struct {
	uint32_t op, datatype;
	size_t count;
	void *dst;
	uint64_t operand[2], compare[2];
	int has_compare, has_result, calls;
} catom;

static int custom_atomic(void *ctx, uint32_t op, uint32_t datatype, void *dst,
			 const void *operand, const void *compare,
			 void *result, size_t count)
{
	(void)ctx;
	catom.calls++;
	catom.op = op;
	catom.datatype = datatype;
	catom.count = count;
	catom.dst = dst;
	memcpy(catom.operand, operand, 2 * 8);
	catom.has_compare = compare != NULL;
	if (compare)
		memcpy(catom.compare, compare, 2 * 8);
	catom.has_result = result != NULL;
	if (datatype == 99)
		return -EINVAL;
	if (result)
		memset(result, 0x5a, count * 8);
	*(uint64_t *)dst += 1;
	return 0;
}

Test(fab, front_end_atomic_executor)
{
	struct gba_eng_ops ops = fe_ops;
	uint64_t mem[4] = {100, 200, 0, 0}, opd[2] = {11, 12}, cmp[2] = {21, 22},
		 res[2] = {0, 0};
	struct gba_eng_peer *self;
	struct fe c;

	ops.atomic = custom_atomic;
	cr_assert_eq(fe_open_ops(&c, 0, 0, &ops), 0);
	fe_reg(&c, 5, (char *)mem, sizeof(mem), RW);
	cr_assert_eq(gba_eng_peer_get(c.ep, fe_addr(&c), &self), 0);
	cr_assert_eq(RUN(&c, gba_eng_atomic(c.ep, self, 42, 7, 8, 2, opd, cmp,
					    res, (uintptr_t)&mem[1], 5, 3, 4,
					    COOKIE)),
		     0);
	cr_assert_eq(catom.calls, 1);
	cr_assert_eq(catom.op, 42);
	cr_assert_eq(catom.datatype, 7);
	cr_assert_eq(catom.count, 2);
	cr_assert_eq(catom.dst, &mem[1]);
	cr_assert_eq(catom.operand[0], 11);
	cr_assert_eq(catom.operand[1], 12);
	cr_assert(catom.has_compare);
	cr_assert_eq(catom.compare[0], 21);
	cr_assert_eq(catom.compare[1], 22);
	cr_assert(catom.has_result);
	cr_assert_eq(res[0], 0x5a5a5a5a5a5a5a5aULL);
	cr_assert_eq(res[1], 0x5a5a5a5a5a5a5a5aULL);
	cr_assert_eq(mem[1], 201);
	cr_assert_eq(mem[0], 100);
	cr_assert_eq(c.nev_type[GBA_ENG_EV_ATOMIC], 1);
	cr_assert_eq(c.ev[0].flags, 3);
	cr_assert_eq(c.ev[0].data, 4);
	/* not fetching, no compare: NULLs; the executor's error comes back */
	cr_assert_eq(RUN(&c, gba_eng_atomic(c.ep, self, 43, 99, 8, 2, opd, NULL,
					    NULL, (uintptr_t)mem, 5, 0, 0,
					    COOKIE)),
		     -EINVAL);
	cr_assert_eq(catom.calls, 2);
	cr_assert_eq(catom.datatype, 99);
	cr_assert(!catom.has_compare);
	cr_assert(!catom.has_result);
	cr_assert_eq(c.nev, 1, "no event for a failed atomic");
	fe_close(&c);
}

/*
 * With no file descriptor left (RLIMIT_NOFILE at the lowest free one),
 * opening an endpoint, allocating a region and opening the emulated
 * device fail at once with -EMFILE, and gba_last_error names the call
 * and the object (gba(7), RESOURCE LIMITS).
 */
Test(fab, no_descriptor_left)
{
	struct gba_eng_ops ops = fe_ops;
	struct gba_eng_ep_attr attr = {.ops = &ops};
	const char *dev_name = gba_t_image("nofd");
	struct rlimit rl, low;
	struct gba_eng_seg seg;
	struct gba_eng_ep *ep;
	struct gba_dev *dev;
	int fd;

	fd = dup(2); /* the lowest free descriptor */
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	low = rl;
	low.rlim_cur = (rlim_t)fd;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);

	cr_expect_eq(gba_eng_ep_open(&attr, &ep), -EMFILE);
	cr_expect(strstr(gba_last_error(-EMFILE), "/dev/shm/gba-fab-") &&
			  strstr(gba_last_error(-EMFILE), "Too many open files"),
		  "gba_last_error: \"%s\"", gba_last_error(-EMFILE));
	cr_expect_eq(gba_eng_seg_alloc(4096, NULL, &seg), -EMFILE);
	cr_expect(strstr(gba_last_error(-EMFILE), "memfd_create"),
		  "gba_last_error: \"%s\"", gba_last_error(-EMFILE));
	cr_expect_eq(gba_dev_open(dev_name, &dev), -EMFILE);
	cr_expect(strstr(gba_last_error(-EMFILE), "shm_open /dev/shm/gba-t"),
		  "gba_last_error: \"%s\"", gba_last_error(-EMFILE));

	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	cr_assert_eq(gba_eng_ep_open(&attr, &ep), 0, "fine again");
	cr_expect_str_eq(gba_last_error(0), strerror(0),
			 "cleared by the next call");
	gba_eng_ep_close(ep);
	gba_t_unlink();
}

/* ---- 2. Messages between two processes ---------------------------------- */

#define BIG (4u << 20)
/* 16 and 17: the largest message in the slot's header and the next */
/*
 * Up to 32 bytes with flags below 256 travel in the slot's header line,
 * the rest in the slot or single-copy: the sizes around each boundary,
 * and the header's size with flags too large for it (MSG_FLAGS).
 */
static const size_t msg_sizes[] = {0,  1,  8,  16, 17, 31, 32, 32, 33, 64,
				   GBA_ENG_INLINE, GBA_ENG_INLINE + 1, 65536,
				   BIG};
#define NSIZES (sizeof(msg_sizes) / sizeof(msg_sizes[0]))
#define MSG_FLAGS(k) ((k) == 7 ? 0x10000u + (k) : 0x10u + (k))
#define TAG0 0x7a90
#define DATA0 0xdada0000ULL
#define SEED0 0x31

/* Check a held message through every rx_copy form (child). */
static void verify_held(struct fe *fe, struct gba_eng_rx *rx, uint32_t seed,
			size_t len)
{
	size_t cap = len + 128, cnt, off;
	char *buf = malloc(cap), small[600];
	struct iovec iov[GBA_ENG_MAX_IOV], one;
	ssize_t n;
	size_t i;

	CHK(buf);
	memset(buf, CANARY, cap);
	cnt = spread(buf, len, 0, iov);
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, iov, cnt, 0), len);
	CHKEQ(check_rx(buf, cap, iov, cnt, seed, 0, len), -1);
	/* from an offset */
	off = len / 2 + 7;
	memset(small, CANARY, sizeof(small));
	one = (struct iovec){small, 500};
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, &one, 1, off), 500);
	CHKEQ(check_lin(small, 500, seed, off), -1);
	CHKEQ((uint8_t)small[500], CANARY);
	/* from an offset into several entries */
	memset(buf, CANARY, cap);
	cnt = spread(buf, 1000, 1, iov);
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, iov, cnt, 1234), 1000);
	CHKEQ(check_rx(buf, cap, iov, cnt, seed, 1234, 1000), -1);
	/* a shorter buffer: truncated */
	memset(small, CANARY, sizeof(small));
	one = (struct iovec){small, 10};
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, &one, 1, 0), 10);
	CHKEQ(check_lin(small, 10, seed, 0), -1);
	CHKEQ((uint8_t)small[10], CANARY);
	/* near the end: stops at the end of the message */
	memset(small, CANARY, sizeof(small));
	one = (struct iovec){small, 100};
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, &one, 1, len - 5), 5);
	CHKEQ(check_lin(small, 5, seed, len - 5), -1);
	for (i = 5; i < 100; i++)
		CHKEQ((uint8_t)small[i], CANARY);
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, &one, 1, len), 0);
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, &one, 1, len + 10), 0);
	CHKEQ(gba_eng_rx_copy(fe->ep, rx, NULL, 0, 0), 0);
	n = gba_eng_rx_copy(fe->ep, NULL, &one, 1, 0);
	CHKEQ(n, -EINVAL);
	free(buf);
}

static void msg_child(struct shared *sh, int arg)
{
	size_t cap = BIG + 100, k;
	char *rb = malloc(cap + 64), qbuf[64];
	struct gba_eng_rx *hi, *hl;
	struct fe fe, q;
	struct msgrec *m = &fe.last;

	(void)arg;
	CHK(rb);
	CHKEQ(fe_open(&fe, 8, 0), 0);
	sh->addr[1] = *fe_addr(&fe);
	fe.rx_mode = RX_COPY;
	fe.mark = &sh->mark;
	fe.rx_done_delay_us = 20000;
	fe.rx_iovcnt = spread(rb, cap, 1, fe.rx_iov);
	atomic_store(&sh->ready[1], 1);

	/* every size class, lockstep */
	for (k = 0; k < NSIZES; k++) {
		memset(rb, CANARY, cap + 64);
		atomic_store(&sh->cphase[1], (int)k + 1);
		C_SPIN(&fe, fe.nmsg == k + 1);
		CHKEQ(m->len, msg_sizes[k]);
		CHKEQ(m->tag, TAG0 + k);
		CHKEQ(m->data, DATA0 + k);
		CHKEQ(m->flags, MSG_FLAGS(k));
		CHKEQ(m->large, msg_sizes[k] > GBA_ENG_INLINE);
		CHK(gba_addr_equal(&m->src, &sh->addr[0]));
		CHKEQ(m->copied, msg_sizes[k]);
		CHKEQ(check_rx(rb, cap + 64, fe.rx_iov, fe.rx_iovcnt,
			       SEED0 + k, 0, msg_sizes[k]),
		      -1);
	}

	/* held messages, inline and large; their slots reused meanwhile */
	fe.rx_mode = RX_HOLD;
	atomic_store(&sh->cphase[1], 100);
	C_SPIN(&fe, fe.nheld == 2);
	hi = fe.held[0];
	hl = fe.held[1];
	CHKEQ(hi->tag, 0x4e1);
	CHK(hi->payload != NULL);
	CHKEQ(hi->len, 3000);
	CHKEQ(hi->data, 0x4e10);
	CHKEQ(hl->tag, 0x4e2);
	CHK(hl->payload == NULL);
	CHKEQ(hl->len, 100000);
	CHKEQ(hl->flags, 0x4e);
	CHK(gba_addr_equal(&hl->src, &sh->addr[0]));
	fe.rx_mode = RX_COPY;
	atomic_store(&sh->cphase[1], 101);
	C_SPIN(&fe, fe.nmsg == NSIZES + 2 + 8); /* 8 fillers */
	CHKEQ(fe.hold_fail, 0);
	verify_held(&fe, hi, 0x41, 3000);
	verify_held(&fe, hl, 0x42, 100000);
	atomic_store(&sh->mark, 0x4e2);
	gba_eng_rx_done(fe.ep, hl, 0);
	gba_eng_rx_done(fe.ep, hi, 0);
	fe.nheld = 0;

	/* FIFO order of 10000 messages */
	fe.mark = NULL;
	fe.rx_mode = RX_FIFO;
	atomic_store(&sh->cphase[1], 200);
	if (!SPIN(&fe, fe.fifo_next == NFIFO || fe.fifo_bad, 8000))
		cfail(__LINE__, "fifo timeout", (long long)fe.fifo_next, 0);
	if (fe.fifo_bad)
		cfail(__LINE__, "fifo: message (index + 1, why)",
		      (long long)fe.fifo_bad, (long long)fe.fifo_why);

	/* a full queue: rx_slots 4, not progressed until the parent saw it */
	CHKEQ(fe_open(&q, 4, 0), 0);
	q.rx_mode = RX_COPY;
	q.rx_iov[0] = (struct iovec){qbuf, sizeof(qbuf)};
	q.rx_iovcnt = 1;
	sh->addr[2] = *fe_addr(&q);
	atomic_store(&sh->cphase[1], 300);
	C_SPIN(&fe, atomic_load(&sh->phase) == 301);
	/*
	 * The 4 queued messages; the parent retries the 5th meanwhile, and
	 * it may take the first freed slot before this same call ends.
	 */
	k = (size_t)gba_eng_progress(q.ep);
	CHK(k == 4 || k == 5);
	CHKEQ(q.nmsg, k);
	atomic_store(&sh->cphase[1], 302);
	C_SPIN(&q, q.nmsg == 5);
	for (k = 0; k < 5; k++)
		CHKEQ(q.tags[k], k);
	CHKEQ(q.last.len, 16);
	CHKEQ(check_lin(qbuf, 16, 4, 0), -1);
	fe_close(&q);

	CHKEQ(finish(&fe, sh, 2), 0);
	CHKEQ(fe.dups + fe.bad_cookie, 0);
	fe_close(&fe);
	_exit(0);
}

Test(fab, messages)
{
	struct shared *sh = shared_new();
	struct iovec iov[GBA_ENG_MAX_IOV];
	struct gba_eng_peer *p, *q;
	char *sb = malloc(BIG + 64), small[64], *lb[NFIFO / 997 + 2];
	size_t k, cnt, nl = 0, nlarge = 0, len;
	uint64_t i, x = 0;
	struct fe fe;
	double t0 = gba_t_now_ms();
	int ret;

	cr_assert(sb);
	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	sh->addr[0] = *fe_addr(&fe);
	kid("receiver", msg_child, sh, 0);
	P_SPIN(&fe, atomic_load(&sh->ready[1]));
	cr_assert_eq(gba_eng_peer_get(fe.ep, &sh->addr[1], &p), 0);
	fe.mark = &sh->mark;

	for (k = 0; k < NSIZES; k++) {
		P_SPIN(&fe, atomic_load(&sh->cphase[1]) == (int)k + 1);
		cnt = spread(sb, msg_sizes[k], 0, iov);
		iov_fill(iov, cnt, SEED0 + k);
		ret = gba_eng_send(fe.ep, p, iov, cnt, TAG0 + k, DATA0 + k,
				   MSG_FLAGS(k), TAG0 + k);
		if (msg_sizes[k] <= GBA_ENG_INLINE) {
			cr_assert_eq(ret, 1, "size %zu", msg_sizes[k]);
			cr_assert_eq(gba_eng_busy(fe.ep), 0);
			continue;
		}
		nlarge++;
		cr_assert_eq(ret, 0, "size %zu", msg_sizes[k]);
		cr_assert_eq(gba_eng_busy(fe.ep), 1);
		cr_assert_eq(fe_wait(&fe, TAG0 + k, 8000), 0,
			     "size %zu", msg_sizes[k]);
		cr_assert_eq(fe.mark_at_complete, TAG0 + k,
			     "size %zu: completed before the receiver's "
			     "rx_done", msg_sizes[k]);
		cr_assert_eq(gba_eng_busy(fe.ep), 0);
	}
	cr_assert_eq(fe.ncomp, nlarge, "inline sends are not reported");

	/* held messages */
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 100);
	cnt = spread(sb, 3000, 1, iov);
	iov_fill(iov, cnt, 0x41);
	cr_assert_eq(gba_eng_send(fe.ep, p, iov, cnt, 0x4e1, 0x4e10, 0, 1), 1);
	cnt = spread(sb + 4000, 100000, 0, iov);
	iov_fill(iov, cnt, 0x42);
	cr_assert_eq(gba_eng_send(fe.ep, p, iov, cnt, 0x4e2, 0, 0x4e, 0x4e2),
		     0);
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 101);
	cr_assert_eq(fe.done[0x4e2], 0, "held, not finished yet");
	iov[0] = (struct iovec){sb + BIG - GBA_ENG_INLINE, GBA_ENG_INLINE};
	memset(iov[0].iov_base, 0xff, GBA_ENG_INLINE);
	for (k = 0; k < 8; k++) {
		P_SPIN(&fe, (ret = gba_eng_send(fe.ep, p, iov, 1, 0xf111, 0, 0,
						2)) != -EAGAIN);
		cr_assert_eq(ret, 1);
	}
	cr_assert_eq(fe_wait(&fe, 0x4e2, 8000), 0);
	cr_assert_eq(fe.mark_at_complete, 0x4e2,
		     "completed before the receiver's rx_done");
	cr_assert_eq(fe.done[1], 0, "the inline send is not reported");

	/* FIFO: 10000 messages, mostly inline, some large */
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 200);
	fe.mark = NULL;
	for (i = 0; i < NFIFO; i++) {
		len = fifo_len(i);
		if (len > GBA_ENG_INLINE) {
			cr_assert_lt(nl, sizeof(lb) / sizeof(lb[0]));
			lb[nl] = malloc(len);
			iov[0] = (struct iovec){lb[nl++], len};
		} else {
			iov[0] = (struct iovec){small, len};
		}
		iov_fill(iov, 1, (uint32_t)i);
		P_SPIN(&fe, (ret = gba_eng_send(fe.ep, p, iov, 1, i, ~i, 0,
						20000 + i)) != -EAGAIN);
		cr_assert_eq(ret, len > GBA_ENG_INLINE ? 0 : 1, "message %llu",
			     (unsigned long long)i);
		if (len > GBA_ENG_INLINE)
			x++;
	}
	P_SPIN(&fe, gba_eng_busy(fe.ep) == 0);
	for (i = 0; i < NFIFO; i++)
		if (fifo_len(i) > GBA_ENG_INLINE)
			cr_assert(fe.done[20000 + i] && !fe.status[20000 + i],
				  "large message %llu: %d",
				  (unsigned long long)i, fe.status[20000 + i]);
	cr_assert_eq(x, nl);
	while (nl)
		free(lb[--nl]);

	/* a full queue */
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 300);
	cr_assert_eq(gba_eng_peer_get(fe.ep, &sh->addr[2], &q), 0);
	for (k = 0; k < 5; k++) {
		iov[0] = (struct iovec){small, 16};
		iov_fill(iov, 1, (uint32_t)k);
		ret = gba_eng_send(fe.ep, q, iov, 1, k, 0, 0, 0);
		cr_assert_eq(ret, k < 4 ? 1 : -EAGAIN, "message %zu", k);
	}
	iov[0] = (struct iovec){sb, 5000};
	cr_assert_eq(gba_eng_send(fe.ep, q, iov, 1, 9, 0, 0, 9), -EAGAIN);
	cr_assert_eq(gba_eng_busy(fe.ep), 0, "a refused send holds nothing");
	cr_assert_eq(gba_eng_put(fe.ep, q, iov, 1, 0, 1, 0, 0, 9), -EAGAIN);
	cr_assert_eq(gba_eng_get(fe.ep, q, iov, 1, 0, 1, 0, 9), -EAGAIN);
	cr_assert_eq(gba_eng_atomic(fe.ep, q, GBA_ENG_AOP_ADD, 0, 8, 1, &x,
				    NULL, &x, 0, 1, 0, 0, 9),
		     -EAGAIN);
	cr_assert_eq(gba_eng_busy(fe.ep), 0, "a refused operation holds nothing");
	atomic_store(&sh->phase, 301);
	iov[0] = (struct iovec){small, 16};
	iov_fill(iov, 1, 4);
	P_SPIN(&fe, (ret = gba_eng_send(fe.ep, q, iov, 1, 4, 0, 0, 0)) !=
			    -EAGAIN);
	cr_assert_eq(ret, 1);
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 302);

	cr_assert_eq(finish(&fe, sh, 2), 0);
	kids_wait();
	cr_assert_eq(fe.dups + fe.bad_cookie + fe.nfail, 0);
	fe_close(&fe);
	free(sb);
	cr_log_info("messages: %.0f ms", gba_t_now_ms() - t0);
	munmap(sh, sizeof(*sh));
}

/* ---- 2b. Messages in several slots (eager_max) --------------------------- */

/* Either side of each slot count, and of eager_max itself. */
static const size_t eager_sizes[] = {
	GBA_ENG_INLINE + 1,
	GBA_ENG_INLINE + GBA_ENG_EAGER_SLOT,	 /* 2 slots, full */
	GBA_ENG_INLINE + GBA_ENG_EAGER_SLOT + 1, /* 3 slots */
	8192,
	16384,
	GBA_ENG_EAGER_MAX - 1,
	GBA_ENG_EAGER_MAX,     /* 8 slots */
	GBA_ENG_EAGER_MAX + 1, /* large */
	65536,
};
#define NEAGER (sizeof(eager_sizes) / sizeof(eager_sizes[0]))
#define EAGER_SEED 0x77
#define NEFIFO 3000

/* FIFO in a 16-slot queue: inline, several-slot and large messages. */
static size_t eager_fifo_len(uint64_t i)
{
	switch (i % 7) {
	case 0:
		return i % 101;
	case 1:
		return GBA_ENG_INLINE;
	case 2:
		return GBA_ENG_INLINE + 1 + i % 13;
	case 3:
		return 9000 + i % 777;
	case 4:
		return GBA_ENG_EAGER_MAX - i % 3;
	case 5:
		return GBA_ENG_EAGER_MAX + 1 + i % 5;
	default:
		return 20000 + i % 1000;
	}
}

/* q's messages (eager_child): the contents of each, in order */
static void eager_q_hook(struct fe *fe, struct gba_eng_rx *rx)
{
	static const size_t len[5] = {12000, 12000, 12000, 100, 16384};
	char *buf = fe->fifo_buf;
	struct iovec iov = {buf, fe->fifo_cap};
	uint64_t k = rx->tag - 40;

	if (k >= 5 || rx->len != len[k] ||
	    gba_eng_rx_copy(fe->ep, rx, &iov, 1, 0) != (ssize_t)len[k] ||
	    check_lin(buf, len[k], (uint32_t)rx->tag, 0) != -1)
		fe->msg_bad++;
}

/* Lockstep phase: partial copies of a message still in the slots */
static void eager_part_hook(struct fe *fe, struct gba_eng_rx *rx)
{
	uint32_t seed = EAGER_SEED + (uint32_t)rx->tag;
	struct iovec two[2] = {{fe->scratch, 700}, {fe->scratch + 800, 900}};
	size_t off = rx->len / 2 + 7;

	if (rx->payload || !rx->local)
		return;
	memset(fe->scratch, CANARY, 2000);
	if (gba_eng_rx_copy(fe->ep, rx, two, 2, off) != 1600 ||
	    check_lin(fe->scratch, 700, seed, off) != -1 ||
	    check_lin(fe->scratch + 800, 900, seed, off + 700) != -1 ||
	    (uint8_t)fe->scratch[700] != CANARY ||
	    gba_eng_rx_copy(fe->ep, rx, two, 1, rx->len - 5) != 5 ||
	    check_lin(fe->scratch, 5, seed, rx->len - 5) != -1 ||
	    gba_eng_rx_copy(fe->ep, rx, two, 1, rx->len) != 0)
		fe->msg_bad++;
}

static void eager_child(struct shared *sh, int arg)
{
	size_t cap = 70000, k, nq;
	char *rb = malloc(cap + 64), *qb = malloc(cap);
	struct gba_eng_rx *h1, *h2;
	struct msgrec *m;
	struct fe fe, q;

	(void)arg;
	CHK(rb && qb);
	CHKEQ(fe_open(&fe, 16, 0), 0);
	m = &fe.last;
	sh->addr[1] = *fe_addr(&fe);
	fe.rx_mode = RX_COPY;
	fe.rx_iovcnt = spread(rb, cap, 1, fe.rx_iov);
	fe.rx_hook = eager_part_hook;
	atomic_store(&sh->ready[1], 1);

	/* every size, lockstep, into a scattered buffer */
	for (k = 0; k < NEAGER; k++) {
		memset(rb, CANARY, cap + 64);
		atomic_store(&sh->cphase[1], (int)k + 1);
		C_SPIN(&fe, fe.nmsg == k + 1);
		CHKEQ(m->len, eager_sizes[k]);
		CHKEQ(m->tag, k);
		CHKEQ(m->large, 1); /* no payload in one piece */
		CHKEQ(m->copied, eager_sizes[k]);
		CHKEQ(check_rx(rb, cap + 64, fe.rx_iov, fe.rx_iovcnt,
			       EAGER_SEED + k, 0, eager_sizes[k]),
		      -1);
	}
	CHKEQ(fe.msg_bad, 0);
	fe.rx_hook = NULL;

	/* held several-slot messages, their slots reused meanwhile */
	fe.rx_mode = RX_HOLD;
	atomic_store(&sh->cphase[1], 100);
	C_SPIN(&fe, fe.nheld == 2);
	h1 = fe.held[0];
	h2 = fe.held[1];
	CHK(h1->payload != NULL); /* held: in one piece */
	CHK(h2->payload != NULL);
	CHKEQ(h1->len, 10000);
	CHKEQ(h2->len, GBA_ENG_EAGER_MAX);
	fe.rx_mode = RX_COPY;
	atomic_store(&sh->cphase[1], 101);
	C_SPIN(&fe, fe.nmsg == NEAGER + 2 + 8);
	CHKEQ(fe.hold_fail, 0);
	verify_held(&fe, h1, 0x51, 10000);
	verify_held(&fe, h2, 0x52, GBA_ENG_EAGER_MAX);
	gba_eng_rx_done(fe.ep, h1, 0);
	gba_eng_rx_done(fe.ep, h2, 0);
	fe.nheld = 0;

	/* FIFO order and contents, the queue wrapping around many times */
	fe.rx_mode = RX_FIFO;
	fe.fifo_lenf = eager_fifo_len;
	fe.fifo_buf = rb;
	fe.fifo_cap = cap;
	atomic_store(&sh->cphase[1], 200);
	if (!SPIN(&fe, fe.fifo_next == NEFIFO || fe.fifo_bad, 20000))
		cfail(__LINE__, "fifo timeout", (long long)fe.fifo_next, 0);
	if (fe.fifo_bad)
		cfail(__LINE__, "fifo: message (index + 1, why)",
		      (long long)fe.fifo_bad, (long long)fe.fifo_why);

	/*
	 * An 8-slot queue, not progressed until the parent filled it: two
	 * 3-slot messages, a third sent large (2 slots left), one inline.
	 * Then a 5-slot message (more than half the queue): large.
	 */
	CHKEQ(fe_open(&q, 8, 0), 0);
	q.rx_mode = RX_COPY;
	q.rx_iov[0] = (struct iovec){qb, cap};
	q.rx_iovcnt = 1;
	q.rx_hook = eager_q_hook;
	q.fifo_buf = malloc(cap);
	q.fifo_cap = cap;
	CHK(q.fifo_buf);
	sh->addr[2] = *fe_addr(&q);
	atomic_store(&sh->cphase[1], 300);
	C_SPIN(&fe, atomic_load(&sh->phase) == 301);
	C_SPIN(&q, q.nmsg == 5);
	for (k = 0; k < 5; k++)
		CHKEQ(q.tags[k], 40 + k);
	CHKEQ(q.last.len, 16384);
	CHKEQ(q.last.large, 1);
	CHKEQ(check_lin(qb, 16384, 44, 0), -1);
	nq = q.nmsg;
	CHKEQ(nq, 5);
	CHKEQ(q.msg_bad, 0);
	atomic_store(&sh->cphase[1], 302);
	C_SPIN(&q, gba_eng_busy(q.ep) == 0);
	free(q.fifo_buf);
	fe_close(&q);

	CHKEQ(finish(&fe, sh, 2), 0);
	CHKEQ(fe.dups + fe.bad_cookie, 0);
	fe_close(&fe);
	free(rb);
	free(qb);
	_exit(0);
}

Test(fab, eager_slots)
{
	struct shared *sh = shared_new();
	struct iovec iov[GBA_ENG_MAX_IOV];
	size_t cap = 70000, k, cnt, len;
	char *sb = malloc(cap + 64);
	struct gba_eng_peer *p, *q;
	struct gba_eng_ep_attr bad = {.ops = &fe_ops,
				      .eager_max = GBA_ENG_EAGER_MAX + 1};
	struct gba_eng_ep *ep;
	uint64_t i, nlarge = 0;
	struct fe fe;
	int ret;

	cr_assert(sb);
	cr_assert_eq(gba_eng_ep_open(&bad, &ep), -EINVAL);
	cr_assert_eq(fe_open_eager(&fe, 0, 0, GBA_ENG_EAGER_MAX, &fe_ops), 0);
	sh->addr[0] = *fe_addr(&fe);
	kid("receiver", eager_child, sh, 0);
	P_SPIN(&fe, atomic_load(&sh->ready[1]));
	cr_assert_eq(gba_eng_peer_get(fe.ep, &sh->addr[1], &p), 0);

	for (k = 0; k < NEAGER; k++) {
		P_SPIN(&fe, atomic_load(&sh->cphase[1]) == (int)k + 1);
		cnt = spread(sb, eager_sizes[k], 0, iov);
		iov_fill(iov, cnt, EAGER_SEED + k);
		ret = gba_eng_send(fe.ep, p, iov, cnt, k, 0, 0, 100 + k);
		if (eager_sizes[k] <= GBA_ENG_EAGER_MAX) {
			cr_assert_eq(ret, 1, "size %zu", eager_sizes[k]);
			cr_assert_eq(gba_eng_busy(fe.ep), 0);
			/* the sender's buffer is free at once */
			memset(sb, 0, eager_sizes[k]);
			continue;
		}
		nlarge++;
		cr_assert_eq(ret, 0, "size %zu", eager_sizes[k]);
		cr_assert_eq(fe_wait(&fe, 100 + k, 8000), 0);
	}
	cr_assert_eq(fe.ncomp, nlarge, "copied sends are not reported");

	/* two held, then 8 fillers of 7 slots over their slots */
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 100);
	cnt = spread(sb, 10000, 1, iov);
	iov_fill(iov, cnt, 0x51);
	cr_assert_eq(gba_eng_send(fe.ep, p, iov, cnt, 0x51, 0, 0, 1), 1);
	cnt = spread(sb, GBA_ENG_EAGER_MAX, 0, iov);
	iov_fill(iov, cnt, 0x52);
	cr_assert_eq(gba_eng_send(fe.ep, p, iov, cnt, 0x52, 0, 0, 2), 1);
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 101);
	iov[0] = (struct iovec){sb, GBA_ENG_EAGER_MAX - 5000};
	memset(sb, 0xff, GBA_ENG_EAGER_MAX);
	for (k = 0; k < 8; k++) {
		P_SPIN(&fe, (ret = gba_eng_send(fe.ep, p, iov, 1, 0xf111, 0, 0,
						10 + k)) != -EAGAIN);
		cr_assert_geq(ret, 0);
	}
	P_SPIN(&fe, gba_eng_busy(fe.ep) == 0);

	/* FIFO */
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 200);
	for (i = 0; i < NEFIFO; i++) {
		len = eager_fifo_len(i);
		cnt = spread(sb, len, (unsigned)i, iov);
		iov_fill(iov, cnt, (uint32_t)i);
		P_SPIN(&fe, (ret = gba_eng_send(fe.ep, p, iov, cnt, i, ~i, 0,
						1000 + i)) != -EAGAIN);
		cr_assert_geq(ret, 0, "message %llu", (unsigned long long)i);
		if (len <= GBA_ENG_INLINE)
			cr_assert_eq(ret, 1);
		else if (len > GBA_ENG_EAGER_MAX)
			cr_assert_eq(ret, 0);
		if (ret == 0) /* large: wait, the buffer is reused */
			cr_assert_eq(fe_wait(&fe, 1000 + i, 8000), 0);
	}

	/* the 8-slot queue */
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 300);
	cr_assert_eq(gba_eng_peer_get(fe.ep, &sh->addr[2], &q), 0);
	for (k = 0; k < 5; k++) {
		static const size_t len5[5] = {12000, 12000, 12000, 100, 16384};
		static const int want[5] = {1, 1, 0, 1, 0};

		iov[0] = (struct iovec){sb + k * 12500, len5[k]};
		iov_fill(iov, 1, 40 + (uint32_t)k);
		if (k == 4)
			P_SPIN(&fe,
			       (ret = gba_eng_send(fe.ep, q, iov, 1, 40 + k, 0,
						   0, 5000 + k)) != -EAGAIN);
		else
			ret = gba_eng_send(fe.ep, q, iov, 1, 40 + k, 0, 0,
					   5000 + k);
		cr_assert_eq(ret, want[k], "message %zu", k);
		if (k == 3) {
			/* full: neither several slots nor one */
			iov[0].iov_len = 16;
			cr_assert_eq(gba_eng_send(fe.ep, q, iov, 1, 9, 0, 0, 9),
				     -EAGAIN);
			iov[0].iov_len = 12000;
			cr_assert_eq(gba_eng_send(fe.ep, q, iov, 1, 9, 0, 0, 9),
				     -EAGAIN);
			atomic_store(&sh->phase, 301);
		}
	}
	cr_assert_eq(fe_wait(&fe, 5002, 8000), 0);
	cr_assert_eq(fe_wait(&fe, 5004, 8000), 0);
	P_SPIN(&fe, atomic_load(&sh->cphase[1]) == 302);

	cr_assert_eq(finish(&fe, sh, 2), 0);
	kids_wait();
	cr_assert_eq(fe.dups + fe.bad_cookie + fe.nfail, 0);
	fe_close(&fe);
	free(sb);
	munmap(sh, sizeof(*sh));
}

/* ---- 3. Puts and gets --------------------------------------------------- */

#define RBIG (1u << 20)
#define BIGSZ (RBIG + 16384)
#define ORD_OFF (4096 + RBIG + 16) /* put before a message */

static void rma_child(struct shared *sh, int arg)
{
	uint64_t big = sh->raddr[0], ro = sh->raddr[1], wo = sh->raddr[2];
	size_t bigsz = BIGSZ;
	char *b1 = malloc(RBIG + 128), *b2 = malloc(RBIG + 128);
	struct iovec iov[GBA_ENG_MAX_IOV], iov2[GBA_ENG_MAX_IOV];
	struct gba_eng_peer *p;
	size_t cnt, cnt2;
	uint64_t x;
	struct fe fe;

	(void)arg;
	CHK(b1 && b2);
	CHKEQ(fe_open(&fe, 0, 0), 0);
	sh->addr[1] = *fe_addr(&fe);
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[0], &p), 0);
	atomic_store(&sh->ready[1], 1);

	/* inline put, then get it back */
	cnt = spread(b1, 1000, 0, iov);
	iov_fill(iov, cnt, 0xa1);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov, cnt, big + 10, 0x11, 5, 0xd1,
				   COOKIE)),
	      0);
	memset(b2, CANARY, 1064);
	cnt2 = spread(b2, 1000, 1, iov2);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov2, cnt2, big + 10, 0x11, 6,
				   COOKIE)),
	      0);
	CHKEQ(check_rx(b2, 1064, iov2, cnt2, 0xa1, 0, 1000), -1);

	/* large put and get (1 MiB) */
	cnt = spread(b1, RBIG, 0, iov);
	iov_fill(iov, cnt, 0xa2);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov, cnt, big + 4096, 0x11, 7,
				   0xd2, COOKIE)),
	      0);
	memset(b2, CANARY, RBIG + 64);
	cnt2 = spread(b2, RBIG, 1, iov2);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov2, cnt2, big + 4096, 0x11, 8,
				   COOKIE)),
	      0);
	CHKEQ(check_rx(b2, RBIG + 64, iov2, cnt2, 0xa2, 0, RBIG), -1);

	/* gets at the inline boundary from the read-only region */
	memset(b2, CANARY, 8192);
	cnt2 = spread(b2, GBA_ENG_INLINE, 0, iov2);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov2, cnt2, ro + 100, 0x22, 0,
				   COOKIE)),
	      0);
	CHKEQ(check_rx(b2, 8192, iov2, cnt2, 0x22, 100, GBA_ENG_INLINE), -1);
	memset(b2, CANARY, 8192);
	cnt2 = spread(b2, GBA_ENG_INLINE + 1, 1, iov2);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov2, cnt2, ro, 0x22, 0,
				   COOKIE)),
	      0);
	CHKEQ(check_rx(b2, 8192, iov2, cnt2, 0x22, 0, GBA_ENG_INLINE + 1), -1);

	/* zero bytes, no buffers */
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, NULL, 0, big, 0x11, 0, 0,
				   COOKIE)),
	      0);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, NULL, 0, big, 0x11, 0, COOKIE)),
	      0);

	/* the target refuses */
	iov[0] = (struct iovec){b1, 100};
	iov2[0] = (struct iovec){b2, 5000};
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov, 1, big, 0x99, 0, 0, COOKIE)),
	      -ENOKEY);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov, 1, big, 0x99, 0, COOKIE)),
	      -ENOKEY);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov2, 1, big, 0x99, 0, COOKIE)),
	      -ENOKEY);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov, 1, ro, 0x22, 0, 0, COOKIE)),
	      -EACCES);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov2, 1, ro, 0x22, 0, 0, COOKIE)),
	      -EACCES);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov, 1, wo, 0x33, 0, COOKIE)),
	      -EACCES);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov, 1, big + bigsz - 10, 0x11,
				   0, 0, COOKIE)),
	      -ERANGE);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov, 1, big + bigsz, 0x11, 0, 0,
				   COOKIE)),
	      -ERANGE);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov, 1, big - 8, 0x11, 0,
				   COOKIE)),
	      -ERANGE);
	iov2[0] = (struct iovec){b2, 8192};
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov2, 1, ro + 1, 0x22, 0,
				   COOKIE)),
	      -ERANGE);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov2, 1, wo, 0x33, 0, 0,
				   COOKIE)),
	      -ERANGE);

	/* write-only is enough for a put */
	cnt = spread(b1, 100, 1, iov);
	iov_fill(iov, cnt, 0xa3);
	CHKEQ(RUN(&fe, gba_eng_put(fe.ep, p, iov, cnt, wo, 0x33, 9, 0xd3,
				   COOKIE)),
	      0);

	/* a put is executed before a message sent after it */
	iov[0] = (struct iovec){b1, 5000};
	iov_fill(iov, 1, 0xa4);
	x = fe.ck++;
	CHKEQ(gba_eng_put(fe.ep, p, iov, 1, big + ORD_OFF, 0x11, 0, 0, x), 0);
	iov[0] = (struct iovec){b2, 0};
	CHKEQ(gba_eng_send(fe.ep, p, iov, 1, 0xdd, 0, 0, 0), 1);
	CHKEQ(fe_wait(&fe, x, 5000), 0);

	CHKEQ(fe.dups + fe.bad_cookie, 0);
	CHKEQ(fe.ncomp, fe.ck - 1);
	CHKEQ(finish(&fe, sh, 2), 0);
	fe_close(&fe);
	_exit(0);
}

static int ord_seen = -1;

static void ord_hook(struct fe *fe, struct gba_eng_rx *rx)
{
	const char *big = fe->reg[0].base;

	if (rx->tag == 0xdd)
		ord_seen = check_lin(big + ORD_OFF, 5000, 0xa4, 0) == -1;
}

Test(fab, put_get)
{
	struct shared *sh = shared_new();
	size_t bigsz = BIGSZ, i;
	char *big = aligned_alloc(4096, bigsz), *ro = malloc(8192),
	     *wo = malloc(4096);
	static const struct {
		enum gba_eng_event ev;
		uint32_t flags;
		uint64_t data;
		size_t len;
	} want[] = {
		{GBA_ENG_EV_PUT, 5, 0xd1, 1000},
		{GBA_ENG_EV_GET, 6, 0, 1000},
		{GBA_ENG_EV_PUT, 7, 0xd2, RBIG},
		{GBA_ENG_EV_GET, 8, 0, RBIG},
		{GBA_ENG_EV_GET, 0, 0, GBA_ENG_INLINE},
		{GBA_ENG_EV_GET, 0, 0, GBA_ENG_INLINE + 1},
		{GBA_ENG_EV_PUT, 0, 0, 0},
		{GBA_ENG_EV_GET, 0, 0, 0},
		{GBA_ENG_EV_PUT, 9, 0xd3, 100},
		{GBA_ENG_EV_PUT, 0, 0, 5000},
	};
	struct fe fe;

	cr_assert(big && ro && wo);
	memset(big, CANARY, bigsz);
	for (i = 0; i < 8192; i++)
		ro[i] = (char)pat(0x22, i);
	memset(wo, CANARY, 4096);
	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	fe_reg(&fe, 0x11, big, bigsz, RW);
	fe_reg(&fe, 0x22, ro, 8192, GBA_ENG_ACCESS_READ);
	fe_reg(&fe, 0x33, wo, 4096, GBA_ENG_ACCESS_WRITE);
	sh->addr[0] = *fe_addr(&fe);
	sh->raddr[0] = (uintptr_t)big;
	sh->raddr[1] = (uintptr_t)ro;
	sh->raddr[2] = (uintptr_t)wo;
	fe.rx_hook = ord_hook;
	kid("initiator", rma_child, sh, 0);
	cr_assert_eq(finish(&fe, sh, 2), 0);
	kids_wait();
	cr_assert_eq(ord_seen, 1, "the message overtook the put before it");

	/* what the puts left */
	for (i = 0; i < bigsz; i++) {
		uint8_t w = i >= 10 && i < 1010 ? pat(0xa1, i - 10)
			    : i >= 4096 && i < 4096 + RBIG ? pat(0xa2, i - 4096)
			    : i >= ORD_OFF && i < ORD_OFF + 5000
				    ? pat(0xa4, i - ORD_OFF)
				    : CANARY;

		if ((uint8_t)big[i] != w)
			cr_assert_fail("big[%zu] = %#x, want %#x", i,
				       (uint8_t)big[i], w);
	}
	cr_assert_eq(check_lin(ro, 8192, 0x22, 0), -1, "read-only region");
	cr_assert_eq(check_lin(wo, 100, 0xa3, 0), -1);
	for (i = 100; i < 4096; i++)
		cr_assert_eq((uint8_t)wo[i], CANARY, "wo[%zu]", i);

	/* one remote event per executed put/get, none for refused ones */
	cr_assert_eq(fe.nev, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cr_assert_eq(fe.ev[i].ev, want[i].ev, "event %zu", i);
		cr_assert_eq(fe.ev[i].flags, want[i].flags, "event %zu", i);
		cr_assert_eq(fe.ev[i].data, want[i].data, "event %zu", i);
		cr_assert_eq(fe.ev[i].len, want[i].len, "event %zu", i);
		cr_assert(gba_addr_equal(&fe.ev[i].src, &sh->addr[1]),
			  "event %zu: source", i);
	}
	fe_close(&fe);
	free(big);
	free((void *)ro);
	free(wo);
	munmap(sh, sizeof(*sh));
}

/* ---- 4. Atomics ------------------------------------------------------------ */

struct atarget {
	uint64_t a64[8];
	uint32_t a32[8];
	uint64_t many[512];
	uint32_t many32[1024];
};

#define AT_ADDR(field) (sh->raddr[0] + offsetof(struct atarget, field))

static void atomic_child(struct shared *sh, int arg)
{
	uint64_t r64[512], o64[512], c64[512], x, y, a64 = AT_ADDR(a64[0]);
	uint32_t r32[1024], o32[1024], x32, y32;
	uint64_t a32 = AT_ADDR(a32[1]);
	uint64_t ro = sh->raddr[1], wo = sh->raddr[2];
	size_t i, max8 = gba_eng_atomic_max_count(8, 0),
		  max8c = gba_eng_atomic_max_count(8, 1),
		  max4 = gba_eng_atomic_max_count(4, 0);
	struct gba_eng_peer *p;
	uint64_t nok = 0;
	struct fe fe;

	(void)arg;
	CHKEQ(fe_open(&fe, 0, 0), 0);
	sh->addr[1] = *fe_addr(&fe);
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[0], &p), 0);
	atomic_store(&sh->ready[1], 1);

/* One 8- or 4-byte atomic (datatype: any front-end code, ignored). */
#define AT(op, es, n, o, c, r, addr, key)                                   \
	RUN(&fe, gba_eng_atomic(fe.ep, p, op, 1000 + (op), es, n, o, c, r,  \
				addr, key, 0, 0, COOKIE))
#define AT_OK(op, es, o, c, r, addr)                                        \
	do {                                                                \
		CHKEQ(AT(op, es, 1, o, c, r, addr, 0x44), 0);               \
		nok++;                                                      \
	} while (0)

	/* 64 bits: every op, fetching */
	x = 3;
	AT_OK(GBA_ENG_AOP_ADD, 8, &x, NULL, &y, a64);
	CHKEQ(y, 0x100000005ULL);
	x = 0xffffffff00000003ULL;
	AT_OK(GBA_ENG_AOP_AND, 8, &x, NULL, &y, a64);
	CHKEQ(y, 0x100000008ULL);
	x = 0x8000000000000011ULL;
	AT_OK(GBA_ENG_AOP_OR, 8, &x, NULL, &y, a64);
	CHKEQ(y, 0x100000000ULL);
	x = 0x8000000000000001ULL;
	AT_OK(GBA_ENG_AOP_XOR, 8, &x, NULL, &y, a64);
	CHKEQ(y, 0x8000000100000011ULL);
	x = 0xdeadbeefcafef00dULL;
	AT_OK(GBA_ENG_AOP_SWAP, 8, &x, NULL, &y, a64);
	CHKEQ(y, 0x100000010ULL);
	x = 9;
	y = 1;
	AT_OK(GBA_ENG_AOP_CSWAP, 8, &x, &y, &y, a64);
	CHKEQ(y, 0xdeadbeefcafef00dULL);
	x = 0x1234567890ULL;
	y = 0xdeadbeefcafef00dULL;
	AT_OK(GBA_ENG_AOP_CSWAP, 8, &x, &y, &y, a64);
	CHKEQ(y, 0xdeadbeefcafef00dULL);
	y = 0;
	AT_OK(GBA_ENG_AOP_ADD, 8, NULL, NULL, &y, a64); /* no operand: 0 */
	CHKEQ(y, 0x1234567890ULL);
	/* not fetching */
	x = 0x10;
	AT_OK(GBA_ENG_AOP_ADD, 8, &x, NULL, NULL, a64);
	x = 0;
	AT_OK(GBA_ENG_AOP_ADD, 8, &x, NULL, &y, a64);
	CHKEQ(y, 0x12345678a0ULL);
	/* flags and data reach the remote event */
	x = 1;
	CHKEQ(RUN(&fe, gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD, 0, 8, 1, &x,
				      NULL, NULL, AT_ADDR(a64[2]), 0x44, 0xa5,
				      0xfeed, COOKIE)),
	      0);
	nok++;

	/* 32 bits (a 4-byte aligned element) */
	x32 = 0x7ffffffe;
	AT_OK(GBA_ENG_AOP_ADD, 4, &x32, NULL, &y32, a32);
	CHKEQ(y32, 0x80000005u);
	x32 = 0xfffffff1u;
	AT_OK(GBA_ENG_AOP_AND, 4, &x32, NULL, &y32, a32);
	CHKEQ(y32, 3);
	x32 = 0xf0000000u;
	AT_OK(GBA_ENG_AOP_OR, 4, &x32, NULL, &y32, a32);
	CHKEQ(y32, 1);
	x32 = 0xffffffffu;
	AT_OK(GBA_ENG_AOP_XOR, 4, &x32, NULL, &y32, a32);
	CHKEQ(y32, 0xf0000001u);
	x32 = 0xabcdef01u;
	AT_OK(GBA_ENG_AOP_SWAP, 4, &x32, NULL, &y32, a32);
	CHKEQ(y32, 0x0ffffffeu);
	x32 = 5;
	y32 = 0;
	AT_OK(GBA_ENG_AOP_CSWAP, 4, &x32, &y32, &y32, a32);
	CHKEQ(y32, 0xabcdef01u);
	x32 = 0x12345678u;
	y32 = 0xabcdef01u;
	AT_OK(GBA_ENG_AOP_CSWAP, 4, &x32, &y32, &y32, a32);
	CHKEQ(y32, 0xabcdef01u);
	x32 = 0;
	AT_OK(GBA_ENG_AOP_OR, 4, &x32, NULL, &y32, a32);
	CHKEQ(y32, 0x12345678u);

	/* the largest counts */
	CHKEQ(max8, (GBA_ENG_INLINE - 16) / 8);
	CHK(max8 <= 512 && max4 <= 1024);
	for (i = 0; i < max8; i++)
		o64[i] = i + 1;
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, max8, o64, NULL, r64, AT_ADDR(many),
		 0x44),
	      0);
	nok++;
	for (i = 0; i < max8; i++)
		CHKEQ(r64[i], i * 0x100000001ULL);
	for (i = 0; i < max8; i++)
		o64[i] = 0xffff0000ffff0000ULL;
	CHKEQ(AT(GBA_ENG_AOP_XOR, 8, max8, o64, NULL, NULL, AT_ADDR(many),
		 0x44),
	      0);
	nok++;
	CHKEQ(AT(GBA_ENG_AOP_OR, 8, max8, NULL, NULL, r64, AT_ADDR(many),
		 0x44),
	      0);
	nok++;
	for (i = 0; i < max8; i++)
		CHKEQ(r64[i], (i * 0x100000001ULL + i + 1) ^
				      0xffff0000ffff0000ULL);
	/* compare-swap at the largest count: even elements match */
	for (i = 0; i < max8c; i++) {
		c64[i] = i % 2 ? 12345 : r64[i];
		o64[i] = 7 * i;
	}
	CHKEQ(AT(GBA_ENG_AOP_CSWAP, 8, max8c, o64, c64, r64, AT_ADDR(many),
		 0x44),
	      0);
	nok++;
	CHKEQ(AT(GBA_ENG_AOP_OR, 8, max8, NULL, NULL, o64, AT_ADDR(many),
		 0x44),
	      0);
	nok++;
	for (i = 0; i < max8; i++)
		CHKEQ(o64[i], i < max8c && i % 2 == 0 ? 7 * i : r64[i]);
	for (i = 0; i < max4; i++)
		o32[i] = 0x10000 + (uint32_t)i;
	CHKEQ(AT(GBA_ENG_AOP_ADD, 4, max4, o32, NULL, r32, AT_ADDR(many32),
		 0x44),
	      0);
	nok++;
	for (i = 0; i < max4; i++)
		CHKEQ(r32[i], i);

	/* refused by the initiating call */
	CHKEQ(gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD, 0, 8, max8 + 1, o64,
			     NULL, NULL, AT_ADDR(many), 0x44, 0, 0, 1),
	      -EINVAL);
	CHKEQ(gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_CSWAP, 0, 8, max8c + 1, o64,
			     c64, NULL, AT_ADDR(many), 0x44, 0, 0, 1),
	      -EINVAL);
	CHKEQ(gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD, 0, 4, max4 + 1, o32,
			     NULL, NULL, AT_ADDR(many32), 0x44, 0, 0, 1),
	      -EINVAL);
	CHKEQ(gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD, 0, 8, 0, o64, NULL,
			     NULL, a64, 0x44, 0, 0, 1),
	      -EINVAL);
	CHKEQ(gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD, 0, 0, 1, o64, NULL,
			     NULL, a64, 0x44, 0, 0, 1),
	      -EINVAL);
	CHKEQ(gba_eng_atomic(fe.ep, NULL, GBA_ENG_AOP_ADD, 0, 8, 1, o64, NULL,
			     NULL, a64, 0x44, 0, 0, 1),
	      -EINVAL);
	CHKEQ(gba_eng_busy(fe.ep), 0);

	/* refused by the target */
	x = 1;
	CHKEQ(AT(77, 8, 1, &x, NULL, &y, a64, 0x44), -EINVAL);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 2, 1, &x, NULL, &y, a64, 0x44), -EINVAL);
	CHKEQ(AT(GBA_ENG_AOP_CSWAP, 8, 1, &x, NULL, &y, a64, 0x44), -EINVAL);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 1, &x, NULL, &y, a64 + 4, 0x44), -EINVAL);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 1, &x, NULL, &y, a64, 0x99), -ENOKEY);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 1, &x, NULL, NULL, ro, 0x45), -EACCES);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 1, &x, NULL, &y, ro, 0x45), -EACCES);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 1, &x, NULL, &y, wo, 0x46), -EACCES);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 1, &x, NULL, &y,
		 sh->raddr[0] + sizeof(struct atarget) - 4, 0x44),
	      -ERANGE);
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 2, o64, NULL, NULL, wo + 8, 0x46),
	      -ERANGE);
	/* write access is enough without fetching */
	x = 5;
	CHKEQ(AT(GBA_ENG_AOP_ADD, 8, 1, &x, NULL, NULL, wo, 0x46), 0);
	nok++;

	atomic_store(&sh->val[0], nok);
	CHKEQ(fe.dups + fe.bad_cookie, 0);
	CHKEQ(finish(&fe, sh, 2), 0);
	fe_close(&fe);
	_exit(0);
#undef AT
#undef AT_OK
}

/*
 * Shared gets (GBA_ENG_EP_SHARED_GET): the parent is the target of two
 * endpoints, one sharing and one not; the child gets from both.
 */
#define SHSZ ((size_t)1 << 20)
#define SHREG (SHSZ + 3 * 4096)

static void shared_get_child(struct shared *sh, int arg)
{
	size_t cap = SHSZ + 4096, cnt, sizes[] = {SHSZ, GBA_ENG_SHARE_MIN,
						  GBA_ENG_SHARE_MIN - 1,
						  SHSZ / 2 + 4097};
	char *b = aligned_alloc(4096, cap);
	struct iovec iov[GBA_ENG_MAX_IOV], one;
	struct gba_eng_peer *p, *q;
	uint64_t base = sh->raddr[0], nshared;
	unsigned k, v;
	struct fe fe;

	(void)arg;
	CHK(b);
	CHKEQ(fe_open(&fe, 0, 0), 0);
	sh->addr[2] = *fe_addr(&fe);
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[0], &p), 0);
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[1], &q), 0);
	atomic_store(&sh->ready[1], 1);

	/* from the sharing endpoint, whole and cut into pieces, at offsets */
	for (k = 0; k < 4; k++)
		for (v = 0; v < 2; v++) {
			nshared = gba_eng_shared_gets(fe.ep);
			memset(b, CANARY, cap);
			cnt = spread(b, sizes[k], v, iov);
			CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, iov, cnt,
						   base + 4096 * k + v, 0x51,
						   0, COOKIE)),
			      0);
			CHKEQ(check_rx(b, cap, iov, cnt, 0x51, 4096 * k + v,
				       sizes[k]),
			      -1);
			/* shared from GBA_ENG_SHARE_MIN on */
			CHKEQ(gba_eng_shared_gets(fe.ep) - nshared,
			      sizes[k] >= GBA_ENG_SHARE_MIN);
		}
	/* the other endpoint copies all itself */
	nshared = gba_eng_shared_gets(fe.ep);
	memset(b, CANARY, cap);
	cnt = spread(b, SHSZ, 1, iov);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, q, iov, cnt, base, 0x51, 0,
				   COOKIE)),
	      0);
	CHKEQ(check_rx(b, cap, iov, cnt, 0x51, 0, SHSZ), -1);
	CHKEQ(gba_eng_shared_gets(fe.ep), nshared);
	/* beyond the region, a wrong key: refused before any notice */
	one.iov_base = b;
	one.iov_len = SHSZ;
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, &one, 1, base + 4 * 4096, 0x51,
				   0, COOKIE)),
	      -ERANGE);
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, &one, 1, base, 0x52, 0,
				   COOKIE)),
	      -ENOKEY);
	CHKEQ(gba_eng_shared_gets(fe.ep), nshared);
	/*
	 * Order: a put into the get's tail, issued right after it, waits
	 * (-EAGAIN) until the get's tail is copied, and the get does not
	 * see it.
	 */
	{
		char *pb = malloc(4096);
		struct iovec piov = {pb, 4096};
		uint64_t c1 = fe.ck++, c2 = fe.ck++;
		double end = gba_t_now_ms() + 5000;
		int ret;

		CHK(pb);
		for (k = 0; k < 4096; k++)
			pb[k] = (char)pat(0x99, k);
		memset(b, CANARY, cap);
		one.iov_base = b;
		one.iov_len = SHSZ;
		CHKEQ(gba_eng_get(fe.ep, p, &one, 1, base, 0x51, 0, c1), 0);
		CHKEQ(gba_eng_put(fe.ep, p, &piov, 1, base + SHSZ - 4096, 0x53,
				  0, 0, c2),
		      -EAGAIN);
		while ((ret = gba_eng_put(fe.ep, p, &piov, 1,
					  base + SHSZ - 4096, 0x53, 0, 0,
					  c2)) == -EAGAIN &&
		       gba_t_now_ms() < end)
			spin_step(&fe);
		CHKEQ(ret, 0);
		CHKEQ(fe_wait(&fe, c1, 5000), 0);
		CHKEQ(fe_wait(&fe, c2, 5000), 0);
		CHKEQ(check_lin(b, SHSZ, 0x51, 0), -1);
		CHKEQ(gba_eng_shared_gets(fe.ep), nshared + 1);
		nshared++;
		free(pb);
	}
	/* our half fails (our buffer's tail unwritable): the get fails */
	CHK(mprotect(b + 4096 * 129, 4096 * 127, PROT_READ) == 0 ||
	    !"mprotect");
	one.iov_base = b + 4096;
	one.iov_len = SHSZ - 8192;
	CHKEQ(RUN(&fe, gba_eng_get(fe.ep, p, &one, 1, base, 0x51, 0,
				   COOKIE)),
	      -EFAULT);
	CHKEQ(gba_eng_shared_gets(fe.ep), nshared);
	CHKEQ(finish(&fe, sh, 2), 0);
	fe_close(&fe);
	_exit(0);
}

Test(fab, shared_get)
{
	struct shared *sh = shared_new();
	char *reg = aligned_alloc(4096, SHREG);
	struct fe fe, plain;
	size_t i;

	cr_assert(reg);
	for (i = 0; i < SHREG; i++)
		reg[i] = (char)pat(0x51, i);
	cr_assert_eq(fe_open_flags(&fe, 0, 0, 0, 0x80, &fe_ops), -EINVAL);
	cr_assert_eq(fe_open_flags(&fe, 0, 0, 0, GBA_ENG_EP_SHARED_GET,
				   &fe_ops),
		     0);
	cr_assert_eq(fe_open(&plain, 0, 0), 0);
	fe_reg(&fe, 0x51, reg, SHREG, GBA_ENG_ACCESS_READ);
	fe_reg(&fe, 0x53, reg, SHREG, RW);
	fe_reg(&plain, 0x51, reg, SHREG, GBA_ENG_ACCESS_READ);
	sh->addr[0] = *fe_addr(&fe);
	sh->addr[1] = *fe_addr(&plain);
	sh->raddr[0] = (uintptr_t)reg;
	kid("getter", shared_get_child, sh, 0);
	/* both targets progress until the getter is through */
	while (atomic_load(&sh->done) < 1) {
		spin_step(&fe);
		spin_step(&plain);
		kids_poll();
	}
	cr_assert_eq(finish(&fe, sh, 2), 0);
	kids_wait();
	/* the source is unchanged but for the put */
	cr_assert_eq(check_lin(reg, SHSZ - 4096, 0x51, 0), -1);
	cr_assert_eq(check_lin(reg + SHSZ - 4096, 4096, 0x99, 0), -1);
	cr_assert_eq(check_lin(reg + SHSZ, SHREG - SHSZ, 0x51, SHSZ), -1);
	fe_close(&plain);
	fe_close(&fe);
	free(reg);
}

Test(fab, atomic_ops)
{
	struct shared *sh = shared_new();
	struct atarget *at = aligned_alloc(64, (sizeof(*at) + 63) & ~(size_t)63);
	uint64_t ro[2] = {11, 12}, wo[2] = {100, 200};
	size_t i;
	struct fe fe;

	cr_assert(at);
	memset(at, 0, sizeof(*at));
	at->a64[0] = 0x100000005ULL;
	at->a64[1] = 0x1111111111111111ULL;
	at->a32[0] = 0xa0a0a0a0u;
	at->a32[1] = 0x80000005u;
	at->a32[2] = 0xb0b0b0b0u;
	for (i = 0; i < 512; i++)
		at->many[i] = i * 0x100000001ULL;
	for (i = 0; i < 1024; i++)
		at->many32[i] = (uint32_t)i;
	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	fe_reg(&fe, 0x44, (char *)at, sizeof(*at), RW);
	fe_reg(&fe, 0x45, (char *)ro, sizeof(ro), GBA_ENG_ACCESS_READ);
	fe_reg(&fe, 0x46, (char *)wo, sizeof(wo), GBA_ENG_ACCESS_WRITE);
	sh->addr[0] = *fe_addr(&fe);
	sh->raddr[0] = (uintptr_t)at;
	sh->raddr[1] = (uintptr_t)ro;
	sh->raddr[2] = (uintptr_t)wo;
	kid("atomics", atomic_child, sh, 0);
	cr_assert_eq(finish(&fe, sh, 2), 0);
	kids_wait();

	cr_assert_eq(at->a64[0], 0x12345678a0ULL);
	cr_assert_eq(at->a64[1], 0x1111111111111111ULL, "neighbour touched");
	cr_assert_eq(at->a64[2], 1);
	cr_assert_eq(at->a32[0], 0xa0a0a0a0u, "neighbour touched");
	cr_assert_eq(at->a32[1], 0x12345678u);
	cr_assert_eq(at->a32[2], 0xb0b0b0b0u, "neighbour touched");
	for (i = 0; i < 1024; i++)
		cr_assert_eq(at->many32[i],
			     i < gba_eng_atomic_max_count(4, 0)
				     ? 0x10000 + 2 * (uint32_t)i
				     : (uint32_t)i,
			     "many32[%zu]", i);
	cr_assert_eq(at->many[511], 511 * 0x100000001ULL, "beyond the count");
	cr_assert_eq(ro[0], 11);
	cr_assert_eq(wo[0], 105);
	cr_assert_eq(wo[1], 200);

	/* one event per executed atomic; flags and data passed through */
	cr_assert_eq(fe.nev_type[GBA_ENG_EV_ATOMIC], atomic_load(&sh->val[0]));
	cr_assert_eq(fe.nev, fe.nev_type[GBA_ENG_EV_ATOMIC]);
	for (i = 0; i < fe.nev && i < MAX_EV; i++)
		if (fe.ev[i].data == 0xfeed)
			break;
	cr_assert_lt(i, MAX_EV, "no event with the data");
	cr_assert_eq(fe.ev[i].ev, GBA_ENG_EV_ATOMIC);
	cr_assert_eq(fe.ev[i].flags, 0xa5);
	cr_assert_eq(fe.ev[i].len, 8);
	cr_assert(gba_addr_equal(&fe.ev[i].src, &sh->addr[1]));
	fe_close(&fe);
	free(at);
	munmap(sh, sizeof(*sh));
}

/* 4 processes add to one counter, up to 16 atomics outstanding each. */
#define NADD 4
#define ADD_ITERS 2500
#define ADD_WIN 16

struct adder {
	struct shared *sh;
	uint64_t res[ADD_WIN];
	int busy[ADD_WIN];
	uint64_t done, bad, dup;
};

static void adder_hook(struct fe *fe, uint64_t cookie, int status)
{
	struct adder *ad = fe->user;
	uint64_t w = cookie & 0xff, r;
	uint8_t bit;

	ad->busy[w] = 0;
	ad->done++;
	if (status) {
		ad->bad++;
		return;
	}
	if (!(cookie & 0x100))
		return; /* the 32-bit adds do not fetch */
	r = ad->res[w];
	if (r >= NADD * ADD_ITERS) {
		ad->bad++;
		return;
	}
	bit = (uint8_t)(1u << (r % 8));
	if (atomic_fetch_or(&ad->sh->seen[r / 8], bit) & bit)
		ad->dup++;
}

static void adder_child(struct shared *sh, int id)
{
	uint64_t c64 = sh->raddr[0], c32 = sh->raddr[1], one = 1;
	uint32_t three = 3;
	struct gba_eng_peer *p;
	struct adder ad = {.sh = sh};
	uint64_t issued = 0, total = 2 * ADD_ITERS;
	double end;
	struct fe fe;
	int ret, w;

	CHKEQ(fe_open(&fe, 0, 0), 0);
	fe.hook = adder_hook;
	fe.user = &ad;
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[0], &p), 0);
	atomic_fetch_add(&sh->ready[1], 1);
	C_SPIN(&fe, atomic_load(&sh->phase) == 1);
	end = gba_t_now_ms() + 8000;
	while (ad.done < total) {
		spin_step(&fe);
		for (w = 0; w < ADD_WIN && issued < total; w++) {
			if (ad.busy[w])
				continue;
			if (issued % 2 == 0)
				ret = gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD,
						     0, 8, 1, &one, NULL,
						     &ad.res[w], c64, 0x44, 0,
						     0, 0x100 | (uint64_t)w);
			else
				ret = gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD,
						     0, 4, 1, &three, NULL,
						     NULL, c32, 0x44, 0, 0,
						     (uint64_t)w);
			if (ret == -EAGAIN)
				break;
			CHKEQ(ret, 0);
			ad.busy[w] = 1;
			issued++;
		}
		if (gba_t_now_ms() > end)
			cfail(__LINE__, "timeout (done, issued)",
			      (long long)ad.done, (long long)issued);
	}
	CHKEQ(ad.bad, 0);
	CHKEQ(ad.dup, 0);
	CHKEQ(finish(&fe, sh, NADD + 1), 0);
	fe_close(&fe);
	(void)id;
	_exit(0);
}

Test(fab, atomic_concurrent)
{
	struct shared *sh = shared_new();
	struct {
		_Alignas(64) uint64_t c64;
		uint32_t c32;
	} *ctr = aligned_alloc(64, 64);
	double t0;
	struct fe fe;
	int i;

	cr_assert(ctr);
	memset(ctr, 0, 64);
	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	fe_reg(&fe, 0x44, (char *)ctr, 64, RW);
	sh->addr[0] = *fe_addr(&fe);
	sh->raddr[0] = (uintptr_t)&ctr->c64;
	sh->raddr[1] = (uintptr_t)&ctr->c32;
	for (i = 0; i < NADD; i++)
		kid("adder", adder_child, sh, i);
	P_SPIN(&fe, atomic_load(&sh->ready[1]) == NADD);
	t0 = gba_t_now_ms();
	atomic_store(&sh->phase, 1);
	cr_assert_eq(finish(&fe, sh, NADD + 1), 0);
	kids_wait();
	cr_log_info("%d processes x %d atomics: %.0f ms", NADD, 2 * ADD_ITERS,
		    gba_t_now_ms() - t0);
	cr_assert_eq(ctr->c64, (uint64_t)NADD * ADD_ITERS);
	cr_assert_eq(ctr->c32, 3u * NADD * ADD_ITERS);
	for (i = 0; i < NADD * ADD_ITERS; i++)
		cr_assert(atomic_load(&sh->seen[i / 8]) & (1u << (i % 8)),
			  "fetched value %d never seen", i);
	cr_assert_eq(fe.nev_type[GBA_ENG_EV_ATOMIC], 2u * NADD * ADD_ITERS);
	fe_close(&fe);
	free(ctr);
	munmap(sh, sizeof(*sh));
}

/* ---- 5. Peers that die or close ------------------------------------------ */

/* Opens an endpoint and never progresses it. */
static void idle_child(struct shared *sh, int id)
{
	struct fe fe;

	CHKEQ(fe_open(&fe, 0, 0), 0);
	sh->addr[id] = *fe_addr(&fe);
	atomic_store(&sh->ready[id], 1);
	if (id == 2) {
		/* closes when told, stays alive */
		while (atomic_load(&sh->phase) < 1)
			usleep(1000);
		fe_close(&fe);
		atomic_store(&sh->cphase[2], 1);
		while (atomic_load(&sh->phase) < 3)
			usleep(1000);
		_exit(0);
	}
	for (;;)
		pause();
}

/* Has operations outstanding at child 1 when it is killed. */
static void survivor_child(struct shared *sh, int arg)
{
	static char big[200000];
	uint64_t x = 1, y = 0;
	struct gba_eng_peer *p, *p2;
	struct iovec iov = {big, sizeof(big)}, small = {big, 100};
	/* a large get, but not shared: a shared one holds the atomic back */
	struct iovec mid = {big, GBA_ENG_SHARE_MIN - 1};
	double t;
	struct fe fe;
	int i;

	(void)arg;
	CHKEQ(fe_open(&fe, 0, 0), 0);
	C_SPIN(&fe, atomic_load(&sh->ready[1]));
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[1], &p), 0);
	CHKEQ(gba_eng_send(fe.ep, p, &iov, 1, 1, 0, 0, 1), 0);
	CHKEQ(gba_eng_put(fe.ep, p, &small, 1, 0x1000, 1, 0, 0, 2), 0);
	CHKEQ(gba_eng_get(fe.ep, p, &mid, 1, 0x1000, 1, 0, 3), 0);
	CHKEQ(gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD, 0, 8, 1, &x, NULL, &y,
			     0x1000, 1, 0, 0, 4),
	      0);
	CHKEQ(gba_eng_busy(fe.ep), 4);
	/* progressing while the peer lives fails nothing */
	t = gba_t_now_ms() + 100;
	while (gba_t_now_ms() < t)
		spin_step(&fe);
	CHKEQ(fe.ncomp, 0);
	atomic_store(&sh->cphase[3], 1);
	C_SPIN(&fe, atomic_load(&sh->phase) >= 2);
	t = atomic_load(&sh->t_kill);
	if (!SPIN(&fe, fe.ncomp == 4, 5000))
		cfail(__LINE__, "not failed in 5 s (completions)",
		      (long long)fe.ncomp, 0);
	t = gba_t_now_ms() - t;
	for (i = 1; i <= 4; i++)
		if (fe.status[i] != -EPIPE)
			cfail(__LINE__, "status of op (op, status)", i,
			      fe.status[i]);
	CHKEQ(gba_eng_busy(fe.ep), 0);
	fprintf(stderr, "gba_core_eng: dead peer noticed in %.0f ms\n", t);
	CHK(t < 3000);
	/* the dead peer stays dead */
	CHKEQ(gba_eng_send(fe.ep, p, &small, 1, 1, 0, 0, 5), -EPIPE);
	CHKEQ(gba_eng_send(fe.ep, p, &iov, 1, 1, 0, 0, 5), -EPIPE);
	CHKEQ(gba_eng_put(fe.ep, p, &small, 1, 0, 1, 0, 0, 5), -EPIPE);
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[1], &p2), -EPIPE);
	CHKEQ(gba_eng_busy(fe.ep), 0);
	CHKEQ(fe.ncomp, 4);
	fe_close(&fe);
	_exit(0);
}

Test(fab, peer_killed)
{
	struct shared *sh = shared_new();
	char path[128];
	struct stat st;
	struct fe fe;
	pid_t victim;

	victim = kid("victim", idle_child, sh, 1);
	kid("survivor", survivor_child, sh, 0);
	P_SPIN(NULL, atomic_load(&sh->cphase[3]) == 1);
	cr_assert_eq(kill(victim, SIGKILL), 0);
	atomic_store(&sh->t_kill, gba_t_now_ms());
	kid_reap_killed(victim, SIGKILL);
	atomic_store(&sh->phase, 2);
	kids_wait();
	/*
	 * Its queue is left behind; the next endpoint opened reaps it (one
	 * of a test running in parallel may have done so already).
	 */
	ring_path(&sh->addr[1], path, sizeof(path));
	if (stat(path, &st))
		cr_log_info("the victim's queue was reaped already");
	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	cr_assert_eq(stat(path, &st), -1, "not reaped");
	cr_assert_eq(errno, ENOENT);
	fe_close(&fe);
	munmap(sh, sizeof(*sh));
}

Test(fab, peer_closed)
{
	struct shared *sh = shared_new();
	static char big[100000];
	struct iovec iov = {big, sizeof(big)}, small = {big, 10};
	struct gba_eng_peer *p, *p2;
	struct fe fe, f2;
	uint64_t x = 1;
	int ret, i;
	double t;

	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	kid("closer", idle_child, sh, 2);
	P_SPIN(&fe, atomic_load(&sh->ready[2]));
	cr_assert_eq(gba_eng_peer_get(fe.ep, &sh->addr[2], &p), 0);
	cr_assert_eq(gba_eng_send(fe.ep, p, &iov, 1, 1, 0, 0, 1), 0);
	cr_assert_eq(gba_eng_put(fe.ep, p, &small, 1, 0, 1, 0, 0, 2), 0);
	cr_assert_eq(gba_eng_atomic(fe.ep, p, GBA_ENG_AOP_ADD, 0, 8, 1, &x,
				    NULL, NULL, 0, 1, 0, 0, 3),
		     0);
	atomic_store(&sh->phase, 1);
	P_SPIN(&fe, atomic_load(&sh->cphase[2]) == 1);
	t = gba_t_now_ms();
	cr_assert(SPIN(&fe, fe.ncomp == 3, 5000), "outstanding operations "
						  "not failed (%llu)",
		  (unsigned long long)fe.ncomp);
	cr_log_info("closed peer noticed in %.0f ms", gba_t_now_ms() - t);
	for (i = 1; i <= 3; i++)
		cr_assert(fe.status[i] == -EPIPE ||
				  fe.status[i] == -EHOSTUNREACH,
			  "operation %d: %d", i, fe.status[i]);
	cr_assert_eq(gba_eng_busy(fe.ep), 0);
	ret = gba_eng_send(fe.ep, p, &small, 1, 1, 0, 0, 4);
	cr_assert(ret == -EHOSTUNREACH || ret == -EPIPE, "send: %d", ret);
	ret = gba_eng_get(fe.ep, p, &small, 1, 0, 1, 0, 4);
	cr_assert(ret == -EHOSTUNREACH || ret == -EPIPE, "get: %d", ret);
	cr_assert_eq(fe_open(&f2, 0, 0), 0);
	cr_assert_eq(gba_eng_peer_get(f2.ep, &sh->addr[2], &p2), -EHOSTUNREACH);
	cr_assert_eq(fe.ncomp, 3, "refused operations are not reported");
	atomic_store(&sh->phase, 3);
	kids_wait();
	fe_close(&f2);
	fe_close(&fe);
	munmap(sh, sizeof(*sh));
}

/* Gets answered into its 2-slot queue (the third waits), never progresses. */
static void getter_child(struct shared *sh, int arg)
{
	static char buf[3][64];
	struct gba_eng_peer *p;
	struct iovec iov;
	struct fe fe;
	int i;

	(void)arg;
	CHKEQ(fe_open(&fe, 2, 0), 0);
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[0], &p), 0);
	for (i = 0; i < 3; i++) {
		iov = (struct iovec){buf[i], 64};
		CHKEQ(gba_eng_get(fe.ep, p, &iov, 1, sh->raddr[0], 0x77, 0,
				  (uint64_t)i + 1),
		      0);
	}
	atomic_store(&sh->cphase[1], 1);
	for (;;)
		pause();
}

/*
 * An answer waiting for the queue of a peer that died must not hold up
 * the answers to everybody else.
 */
Test(fab, dead_peer_backlog)
{
	struct shared *sh = shared_new();
	static char region[4096];
	struct gba_eng_peer *p;
	struct iovec iov = {region, 64};
	struct fe fe, f2;
	pid_t victim;
	double end;

	cr_assert_eq(fe_open(&fe, 0, 0), 0);
	fe_reg(&fe, 0x77, region, sizeof(region), RW);
	sh->addr[0] = *fe_addr(&fe);
	sh->raddr[0] = (uintptr_t)region;
	victim = kid("getter", getter_child, sh, 0);
	P_SPIN(&fe, fe.nev_type[GBA_ENG_EV_GET] == 3);
	cr_assert_eq(gba_eng_busy(fe.ep), 1,
		     "one answer waits for room in the getter's queue");
	cr_assert_eq(kill(victim, SIGKILL), 0);
	kid_reap_killed(victim, SIGKILL);

	cr_assert_eq(fe_open(&f2, 0, 0), 0);
	cr_assert_eq(gba_eng_peer_get(f2.ep, fe_addr(&fe), &p), 0);
	cr_assert_eq(gba_eng_put(f2.ep, p, &iov, 1, (uintptr_t)region, 0x77, 0,
				 0, 1),
		     0);
	end = gba_t_now_ms() + 5000;
	while (!f2.done[1] && gba_t_now_ms() < end) {
		gba_eng_progress(fe.ep);
		gba_eng_progress(f2.ep);
		sched_yield();
	}
	cr_assert(f2.done[1], "the put's answer is stuck behind the dead "
			      "peer's");
	cr_assert_eq(f2.status[1], 0);
	P_SPIN(&fe, gba_eng_busy(fe.ep) == 0);
	fe_close(&f2);
	fe_close(&fe);
	munmap(sh, sizeof(*sh));
}

/* ---- 6. Two endpoints with 4-slot queues flooding each other ------------ */

#define NDL 3000
#define DLW 32

struct dl {
	int busy[DLW], kind[DLW];
	size_t goff[DLW];
	uint8_t buf[DLW][64];
	uint64_t res[DLW];
	uint64_t done, bad, backlog_seen, inflight;
};

static void dl_hook(struct fe *fe, uint64_t cookie, int status)
{
	struct dl *d = fe->user;
	uint64_t w = cookie;

	if (w >= DLW || !d->busy[w]) {
		d->bad++;
		return;
	}
	d->busy[w] = 0;
	d->inflight--;
	d->done++;
	if (status)
		d->bad++;
	else if (d->kind[w] == 1 &&
		 check_lin(d->buf[w], 64, 0x70, d->goff[w]) != -1)
		d->bad++;
	else if (d->kind[w] == 2 && d->res[w] >= NDL / 5)
		d->bad++;
}

/*
 * Issue NDL operations to @p (puts, gets, fetching atomics, inline and
 * large sends), up to DLW at a time, progressing all along.  @raddr: the
 * peer's put region, get region, counter.  0, or the line that failed.
 */
static int dl_run(struct fe *fe, struct gba_eng_peer *p, const uint64_t *raddr,
		  const char *large)
{
	struct dl *d = fe->user;
	uint64_t issued = 0, one = 1;
	uint8_t pbuf[64][64];
	char sbuf[32];
	struct iovec iov;
	double end = gba_t_now_ms() + 8000;
	size_t j, k;
	int ret, w, kind;

	for (j = 0; j < 64; j++)
		for (k = 0; k < 64; k++)
			pbuf[j][k] = pat(0x60, j * 64 + k);
	for (k = 0; k < sizeof(sbuf); k++)
		sbuf[k] = (char)pat(3, k);
	while (d->done < NDL) {
		spin_step(fe);
		if (gba_eng_busy(fe->ep) > d->inflight)
			d->backlog_seen++;
		for (w = 0; w < DLW && issued < NDL; w++) {
			if (d->busy[w])
				continue;
			kind = (int)(issued % 5);
			j = (issued / 5) % 64;
			switch (kind) {
			case 0:
				iov = (struct iovec){pbuf[j], 64};
				ret = gba_eng_put(fe->ep, p, &iov, 1,
						  raddr[0] + j * 64, 0x55, 0,
						  0, (uint64_t)w);
				break;
			case 1:
				iov = (struct iovec){d->buf[w], 64};
				d->goff[w] = j * 64;
				memset(d->buf[w], 0, 64);
				ret = gba_eng_get(fe->ep, p, &iov, 1,
						  raddr[1] + j * 64, 0x56, 0,
						  (uint64_t)w);
				break;
			case 2:
				ret = gba_eng_atomic(fe->ep, p,
						     GBA_ENG_AOP_ADD, 0, 8, 1,
						     &one, NULL, &d->res[w],
						     raddr[2], 0x57, 0, 0,
						     (uint64_t)w);
				break;
			case 3:
				iov = (struct iovec){sbuf, sizeof(sbuf)};
				ret = gba_eng_send(fe->ep, p, &iov, 1, 3, 0, 0,
						   (uint64_t)w);
				break;
			default:
				iov = (struct iovec){(void *)large, 5000};
				ret = gba_eng_send(fe->ep, p, &iov, 1, 4, 0, 0,
						   (uint64_t)w);
				break;
			}
			if (ret == -EAGAIN)
				break;
			if (ret < 0 || ret > 1 || (ret == 1 && kind != 3))
				return __LINE__;
			issued++;
			if (ret == 1) {
				d->done++;
				continue;
			}
			d->kind[w] = kind;
			d->busy[w] = 1;
			d->inflight++;
		}
		if (gba_t_now_ms() > end)
			return __LINE__;
	}
	return d->bad ? __LINE__ : 0;
}

/* Regions of one side of the flood: put target, get source, counter. */
struct dl_side {
	uint8_t put[64 * 64];
	uint8_t get[64 * 64];
	_Alignas(8) uint64_t counter;
	char large[5000];
	struct dl d;
};

static void dl_setup(struct fe *fe, struct dl_side *s, uint64_t *raddr)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < sizeof(s->get); i++)
		s->get[i] = pat(0x70, i);
	for (i = 0; i < sizeof(s->large); i++)
		s->large[i] = (char)pat(4, i);
	fe_reg(fe, 0x55, s->put, sizeof(s->put), GBA_ENG_ACCESS_WRITE);
	fe_reg(fe, 0x56, s->get, sizeof(s->get), GBA_ENG_ACCESS_READ);
	fe_reg(fe, 0x57, (char *)&s->counter, 8, RW);
	fe->user = &s->d;
	fe->hook = dl_hook;
	fe->rx_mode = RX_DL;
	raddr[0] = (uintptr_t)s->put;
	raddr[1] = (uintptr_t)s->get;
	raddr[2] = (uintptr_t)&s->counter;
}

/* What the peer's flood left in @s, and what arrived.  0 or the line. */
static int dl_check(const struct fe *fe, const struct dl_side *s)
{
	if (check_lin(s->put, sizeof(s->put), 0x60, 0) != -1)
		return __LINE__;
	if (s->counter != NDL / 5)
		return __LINE__;
	if (fe->nmsg != 2 * NDL / 5 || fe->msg_bad)
		return __LINE__;
	if (fe->nev != 3 * NDL / 5)
		return __LINE__;
	return 0;
}

static void dl_child(struct shared *sh, int arg)
{
	struct dl_side *s = malloc(sizeof(*s));
	struct gba_eng_peer *p;
	struct fe fe;

	(void)arg;
	CHK(s);
	CHKEQ(fe_open(&fe, 4, 0), 0);
	dl_setup(&fe, s, &sh->raddr[3]);
	sh->addr[1] = *fe_addr(&fe);
	atomic_store(&sh->ready[1], 1);
	CHKEQ(gba_eng_peer_get(fe.ep, &sh->addr[0], &p), 0);
	C_SPIN(&fe, atomic_load(&sh->phase) == 1);
	CHKEQ(dl_run(&fe, p, &sh->raddr[0], s->large), 0);
	CHKEQ(finish(&fe, sh, 2), 0);
	CHKEQ(dl_check(&fe, s), 0);
	atomic_store(&sh->val[1], s->d.backlog_seen);
	fe_close(&fe);
	_exit(0);
}

Test(fab, flood_no_deadlock)
{
	struct shared *sh = shared_new();
	struct dl_side *s = malloc(sizeof(*s));
	struct gba_eng_peer *p;
	struct fe fe;
	double t0;

	cr_assert(s);
	cr_assert_eq(fe_open(&fe, 4, 0), 0);
	dl_setup(&fe, s, &sh->raddr[0]);
	sh->addr[0] = *fe_addr(&fe);
	kid("flood", dl_child, sh, 0);
	P_SPIN(&fe, atomic_load(&sh->ready[1]));
	cr_assert_eq(gba_eng_peer_get(fe.ep, &sh->addr[1], &p), 0);
	t0 = gba_t_now_ms();
	atomic_store(&sh->phase, 1);
	cr_assert_eq(dl_run(&fe, p, &sh->raddr[3], s->large), 0,
		     "done %llu bad %llu",
		     (unsigned long long)s->d.done,
		     (unsigned long long)s->d.bad);
	cr_assert_eq(finish(&fe, sh, 2), 0);
	kids_wait();
	cr_assert_eq(dl_check(&fe, s), 0);
	cr_log_info("flood: 2 x %d operations in %.0f ms; answers backlogged "
		    "%llu + %llu times",
		    NDL, gba_t_now_ms() - t0,
		    (unsigned long long)s->d.backlog_seen,
		    (unsigned long long)atomic_load(&sh->val[1]));
	fe_close(&fe);
	free(s);
	munmap(sh, sizeof(*sh));
}

/*
 * A process that exited without closing its endpoint leaves the queue
 * behind; while it is a zombie (not yet waited for) its pid still
 * answers kill(pid, 0), and so would a recycled pid.  Its endpoint must
 * not be found by number (two "live" endpoints with the service make
 * every client fail) and the next endpoint opened reaps its queue.
 */
Test(fab, zombie_leftover_not_found)
{
	uint32_t id = 3000000 + (uint32_t)getpid() % 1000000;
	struct gba_addr addr, found;
	struct stat st;
	char path[128];
	struct fe a;
	pid_t child;
	int status;

	gba_addr_init_local(&addr);
	addr.ep_id = id;
	child = fork();
	cr_assert_geq(child, 0);
	if (!child) {
		struct gba_eng_ep_attr attr = {.ops = &fe_ops,
					       .addr = &addr,
					       .flags = GBA_ENG_EP_SERVICE};
		struct gba_eng_ep *ep;
		struct gba_addr seen;

		addr.pid = (uint32_t)getpid();
		if (gba_eng_ep_open(&attr, &ep))
			_exit(1);
		/* found while it lives */
		_exit(gba_eng_ep_find(id, &seen) || seen.pid != addr.pid ? 2
									 : 0);
	}
	addr.pid = (uint32_t)child;
	ring_path(&addr, path, sizeof(path));
	/* wait for the child to be a zombie, without reaping it */
	for (int i = 0; i < 5000; i++) {
		siginfo_t si = {0};

		cr_assert_eq(waitid(P_PID, (id_t)child, &si,
				    WEXITED | WNOWAIT | WNOHANG),
			     0);
		if (si.si_pid == child) {
			cr_assert_eq(si.si_status, 0, "child's endpoint");
			break;
		}
		usleep(1000);
	}
	cr_assert_eq(stat(path, &st), 0, "the queue is left behind");
	cr_assert_eq(kill(child, 0), 0, "a zombie answers kill(pid, 0)");
	cr_expect_eq(gba_eng_ep_find(id, &found), -ENOENT,
		     "a dead process's endpoint is not found");
	cr_assert_eq(fe_open(&a, 0, 0), 0);
	cr_expect_neq(stat(path, &st), 0, "reaped by the next endpoint");
	fe_close(&a);
	cr_assert_eq(waitpid(child, &status, 0), child);
}
