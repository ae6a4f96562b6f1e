/*
 * fi_gba_xfer - data path conformance between processes.
 *
 * -n processes (forked, default 2) open an RDM endpoint with FI_MSG,
 * FI_TAGGED, FI_RMA, FI_ATOMIC, FI_MULTI_RECV, FI_DIRECTED_RECV,
 * FI_SOURCE (and FI_RMA_EVENT when the provider grants it) and run, one
 * phase after another (a shared-memory barrier between phases, every
 * process polling its CQ and yielding the CPU meanwhile), with ranks
 * paired 0-1, 2-3, ...:
 *
 *   pingpong   tagged ping-pong for 0 B .. 1 MiB, several iovs on both
 *              sides (gaps between them, up to iov_limit), fi_tsendmsg
 *              with FI_REMOTE_CQ_DATA, fi_tsenddata / fi_tsendv back;
 *              tag, data, length, flags and fi_cq_readfrom's source
 *              checked; messages to the process's own address;
 *   unexp      K tagged messages (small and large, tinject, tinjectdata,
 *              tsend, tsenddata) sent before any receive is posted,
 *              received in reverse tag order under an ignore mask, the
 *              last ones sharing a tag (arrival order);
 *   directed   (3+ processes) every other rank sends the same tag to one
 *              receiver, whose FI_DIRECTED_RECV receives (posted before or
 *              after the arrivals) must each get their rank's message;
 *   peek       FI_PEEK without a message (FI_ENOMSG), with one (len, tag,
 *              data; not consumed), FI_PEEK | FI_CLAIM then an FI_CLAIM
 *              receive (a wildcard receive skips the claimed message),
 *              FI_PEEK | FI_DISCARD, FI_CLAIM | FI_DISCARD;
 *   multirecv  64 KiB FI_MULTI_RECV buffers, FI_OPT_MIN_MULTI_RECV 4096,
 *              some messages unexpected: completions at increasing
 *              offsets, FI_MULTI_RECV on the last one, fi_cancel of the
 *              second buffer;
 *   trunc      100 B into 10 B (FI_ETRUNC, len 10, olen 90), 300000 B into
 *              1000 B, expected and unexpected; the next messages arrive
 *              intact, the sends succeed;
 *   cancel     fi_cancel of posted receives (FI_ECANCELED), a second
 *              fi_cancel fails, the canceled buffers stay untouched;
 *   rma        fi_write, fi_writev, fi_writedata, fi_inject_write /
 *              fi_writemsg, fi_read, fi_readv from 1 B to 1 MiB into the
 *              partner's registered memory, checked at the target (remote
 *              CQ data entry, FI_REMOTE_WRITE / FI_REMOTE_READ counters
 *              with FI_RMA_EVENT); FI_ORDER_SAW and FI_ORDER_RAW; a wrong
 *              key (FI_EKEYREJECTED), out of range (FI_EINVAL), a region
 *              without FI_REMOTE_WRITE (FI_EACCES);
 *   atomics    every rank on rank 0's words: FI_SUM on FI_UINT64 (the total
 *              must be exact), fi_fetch_atomic (every old value once),
 *              FI_CSWAP (one winner per round), FI_SUM on FI_DOUBLE,
 *              FI_ATOMIC_READ, refused atomics.
 *
 * Every byte is checked against a pattern; every failure is printed and
 * the run continues (a missing completion stops it).  NOTE lines report
 * known deviations from libfabric's own providers without failing
 * (FI_GBA_XFER_STRICT=1 makes them failures).  -I scales the iterations
 * (default 10).  Rank 0 prints the count of checks.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gba_ft_common.h"

#define PROG "fi_gba_xfer"
#define MIB ((size_t)1 << 20)
#define BUF_SIZE (MIB + 8192) /* send / receive buffers */
#define GUARD 0xA5	      /* untouched receive memory */
#define GAP_FILL 0x5A	      /* between send iov pieces */
#define RX_GAP 16	      /* between receive iov pieces */
#define SLOT_SIZE (MIB + 4096) /* RMA target areas */
#define WR_SLOTS 4
#define REGION_SIZE ((WR_SLOTS + 1) * SLOT_SIZE) /* + the read area */
#define RO_SIZE 65536
#define BAD_KEY 0xbad0000000000000ULL

/* Phases (top byte of the tags). */
enum { PH_A = 0xA1, PH_B, PH_BD, PH_C, PH_D, PH_E, PH_F, PH_G, PH_H };

/* Tag: phase, two 8/24-bit fields, 24 low bits (noise under masks). */
#define TAG(ph, a, b, c)                                                       \
	(((uint64_t)(ph) << 56) | ((uint64_t)((a) & 0xff) << 48) |             \
	 ((uint64_t)((b) & 0xffffff) << 24) | (uint64_t)((c) & 0xffffff))
#define SEED(ph, a, b, c)                                                      \
	((uint32_t)(ph) * 0x01000193u ^ (uint32_t)(a) * 0x9E3779B1u ^          \
	 (uint32_t)(b) * 0x85EBCA6Bu ^ (uint32_t)(c) * 0xC2B2AE35u)

struct xfer_mrinfo {
	uint64_t region, key; /* FI_REMOTE_READ | FI_REMOTE_WRITE */
	uint64_t ro, ro_key;  /* FI_REMOTE_READ only */
};

struct xfer_shared {
	struct ft_shared hdr;
	atomic_int bar_count;
	atomic_int bar_gen;
	atomic_long psync[FT_MAX_PROCS];
	atomic_long checks;
	atomic_long errors;
	atomic_long notes;
	struct xfer_mrinfo mr[FT_MAX_PROCS];
	uint64_t atom_addr, atom_key;
	/* then: atomic_int wins[iters]; uint64_t fetched[nprocs * iters] */
};

/* One completion (or error completion) as read. */
struct comp {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err; /* 0, or the positive FI_E* of an error entry */
	int prov_errno;
	size_t olen;
};

struct xfer_env {
	struct ft_res r; /* cq: FI_CQ_FORMAT_TAGGED; cntr: FI_SEND|WRITE|READ */
	struct fid_cntr *rcntr;	 /* FI_RECV */
	struct fid_cntr *rwcntr; /* FI_REMOTE_WRITE */
	struct fid_cntr *rrcntr; /* FI_REMOTE_READ */
	struct fid_mr *mr, *ro_mr, *atom_mr;
	uint8_t *region, *ro, *sbuf, *rbuf, *ubuf;
	uint64_t *atom;
	struct xfer_shared *sh;
	atomic_int *wins;
	uint64_t *fetched;
	const struct ft_opts *o;
	int rank, n, partner;
	bool rma_event;
	const char *phase;
	struct comp *stash;
	size_t nstash, cap;
	int wait_ms;
	long errors, checks, notes;
	unsigned noted;
};

/* ---- Reporting --------------------------------------------------------- */

/* Print one line (one write: the processes' lines do not interleave). */
static void vreport(struct xfer_env *e, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	n = snprintf(line, sizeof(line), PROG "[%d] %s: FAIL: ", e->rank,
		     e->phase);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
	e->errors++;
}

static void fail(struct xfer_env *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(e, fmt, ap);
	va_end(ap);
}

/* A failure that stops the process (missing completion, verb refused). */
static int fatal(struct xfer_env *e, const char *what, int ret)
{
	fprintf(stderr, PROG "[%d] %s: FATAL: %s: %d (%s)\n", e->rank,
		e->phase, what, ret, fi_strerror(ret < 0 ? -ret : ret));
	e->errors++;
	return ret < 0 ? ret : -FI_EOTHER;
}

/* Count a check; report it if @ok is false.  Returns @ok. */
static bool check(struct xfer_env *e, bool ok, const char *fmt, ...)
{
	va_list ap;

	e->checks++;
	if (ok)
		return true;
	va_start(ap, fmt);
	vreport(e, fmt, ap);
	va_end(ap);
	return false;
}

/*
 * A deviation from what libfabric's own providers do that the gba
 * provider is known to have: printed once per process (@id < 32), not
 * counted as a failure.
 */
static void note(struct xfer_env *e, int id, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (getenv("FI_GBA_XFER_STRICT")) {
		va_start(ap, fmt);
		vreport(e, fmt, ap);
		va_end(ap);
		return;
	}
	if (e->noted & (1u << id))
		return;
	e->noted |= 1u << id;
	e->notes++;
	n = snprintf(line, sizeof(line), PROG "[%d] %s: NOTE: ", e->rank,
		     e->phase);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}

/* ---- Patterns ---------------------------------------------------------- */

static inline uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	return x ^ (x >> 16);
}

/* Byte @i of the stream @seed: distinct inside 256-byte blocks, blocks
 * differ, so shifted or misplaced data is caught. */
static inline uint8_t pat(uint32_t seed, size_t i)
{
	return (uint8_t)((i & 0xff) ^ mix(seed + (uint32_t)(i >> 8) * 0x9E37U));
}

/* Fill @n bytes with stream @seed from index @from. */
static void fill(uint8_t *p, size_t n, uint32_t seed, size_t from)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(seed, from + i);
}

/*
 * Compare @n bytes with stream @seed from index @from; report the first
 * bad byte and the number of bad ones.  Returns true if all match.
 */
static bool check_pat(struct xfer_env *e, const char *what, const uint8_t *p,
		      size_t n, uint32_t seed, size_t from)
{
	size_t i, bad = 0, first = 0;
	uint8_t want = 0, got = 0;

	for (i = 0; i < n; i++) {
		if (p[i] == pat(seed, from + i))
			continue;
		if (!bad++) {
			first = i;
			want = pat(seed, from + i);
			got = p[i];
		}
	}
	return check(e, !bad,
		     "%s: byte %zu of %zu: expected 0x%02x, got 0x%02x "
		     "(%zu bytes differ)",
		     what, from + first, from + n, want, got, bad);
}

/* Bytes that must have kept the value @v. */
static bool check_const(struct xfer_env *e, const char *what, const uint8_t *p,
			size_t n, uint8_t v)
{
	size_t i, bad = 0, first = 0;

	for (i = 0; i < n; i++)
		if (p[i] != v && !bad++)
			first = i;
	return check(e, !bad,
		     "%s: %zu of %zu bytes overwritten (first at %zu: 0x%02x)",
		     what, bad, n, first, bad ? p[first] : 0);
}

/* ---- iov layouts --------------------------------------------------------- */

static const unsigned iov_w[8] = {1, 3, 2, 5, 1, 4, 2, 3};

/*
 * Lay @len bytes out in @parts pieces of uneven sizes in @buf, @gap bytes
 * between pieces; the gaps get @gapv.  Returns the bytes of @buf used.
 */
static size_t layout(uint8_t *buf, size_t len, int parts, size_t gap,
		     uint8_t gapv, struct iovec *iov)
{
	size_t off = 0, left = len, w = 0, piece;
	int k;

	for (k = 0; k < parts; k++)
		w += iov_w[k];
	for (k = 0; k < parts; k++) {
		piece = k == parts - 1 ? left : len * iov_w[k] / w;
		iov[k].iov_base = buf + off;
		iov[k].iov_len = piece;
		left -= piece;
		off += piece;
		if (k < parts - 1) {
			memset(buf + off, gapv, gap);
			off += gap;
		}
	}
	return off;
}

/* A send iov of @parts pieces holding @len bytes of stream @seed. */
static void send_iov(uint8_t *buf, size_t len, int parts, uint32_t seed,
		     struct iovec *iov)
{
	size_t from = 0;
	int k;

	layout(buf, len, parts, 8, GAP_FILL, iov);
	for (k = 0; k < parts; k++) {
		fill(iov[k].iov_base, iov[k].iov_len, seed, from);
		from += iov[k].iov_len;
	}
}

/*
 * A receive iov of @parts pieces for @cap bytes in @buf, everything
 * (pieces, gaps and 64 bytes after) set to GUARD.
 */
static void recv_iov(uint8_t *buf, size_t cap, int parts, struct iovec *iov)
{
	size_t used = layout(buf, cap, parts, RX_GAP, GUARD, iov);

	memset(buf, GUARD, used + 64);
}

/*
 * Check a receive into @iov (@parts pieces laid out by recv_iov): the
 * first @len bytes are stream @seed, the rest of the pieces, the gaps and
 * the 64 bytes after are GUARD.
 */
static bool check_recv_iov(struct xfer_env *e, const char *what,
			   const struct iovec *iov, int parts, size_t len,
			   uint32_t seed)
{
	size_t from = 0, n, pl;
	const uint8_t *p, *end;
	char w[160];
	bool ok = true;
	int k;

	for (k = 0; k < parts; k++) {
		p = iov[k].iov_base;
		pl = iov[k].iov_len;
		n = from < len ? (len - from < pl ? len - from : pl) : 0;
		snprintf(w, sizeof(w), "%s, iov %d", what, k);
		if (n)
			ok &= check_pat(e, w, p, n, seed, from);
		if (pl > n) {
			snprintf(w, sizeof(w), "%s, iov %d past the message",
				 what, k);
			ok &= check_const(e, w, p + n, pl - n, GUARD);
		}
		from += pl;
		end = p + pl;
		snprintf(w, sizeof(w), "%s, %s iov %d", what,
			 k < parts - 1 ? "gap after" : "64 bytes after", k);
		ok &= check_const(e, w, end, k < parts - 1 ? RX_GAP : 64,
				  GUARD);
	}
	return ok;
}

/* ---- Completions ---------------------------------------------------------- */

/* Read everything the CQ has (progressing the endpoint) into the stash. */
static int poll_cq(struct xfer_env *e)
{
	struct fi_cq_tagged_entry buf[16];
	fi_addr_t src[16];
	struct fi_cq_err_entry err;
	int got = 0;
	ssize_t n, i;

	for (;;) {
		if (e->nstash + 16 > e->cap) {
			size_t cap = e->cap ? e->cap * 2 : 256;
			struct comp *s = realloc(e->stash, cap * sizeof(*s));

			if (!s)
				return -FI_ENOMEM;
			e->stash = s;
			e->cap = cap;
		}
		n = fi_cq_readfrom(e->r.cq, buf, 16, src);
		if (n > 0) {
			for (i = 0; i < n; i++) {
				struct comp *c = &e->stash[e->nstash++];

				memset(c, 0, sizeof(*c));
				c->e = buf[i];
				c->src = src[i];
			}
			got += (int)n;
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct comp *c = &e->stash[e->nstash];

			memset(&err, 0, sizeof(err));
			n = fi_cq_readerr(e->r.cq, &err, 0);
			if (n != 1)
				return fatal(e, "fi_cq_readerr", (int)n);
			memset(c, 0, sizeof(*c));
			c->e.op_context = err.op_context;
			c->e.flags = err.flags;
			c->e.len = err.len;
			c->e.buf = err.buf;
			c->e.data = err.data;
			c->e.tag = err.tag;
			c->src = FI_ADDR_NOTAVAIL;
			c->err = err.err ? err.err : FI_EOTHER;
			c->prov_errno = err.prov_errno;
			c->olen = err.olen;
			e->nstash++;
			got++;
			continue;
		}
		if (n == -FI_EAGAIN)
			return got;
		return fatal(e, "fi_cq_readfrom", (int)n);
	}
}

/* One round of polling; yields the CPU when nothing happened. */
static int poll_idle(struct xfer_env *e)
{
	int got = poll_cq(e);

	if (got == 0)
		sched_yield();
	return got < 0 ? got : 0;
}

/* Take the first stashed completion of @ctx (NULL: remote CQ data). */
static bool stash_take(struct xfer_env *e, void *ctx, struct comp *out)
{
	size_t i;

	for (i = 0; i < e->nstash; i++) {
		struct comp *c = &e->stash[i];

		if (c->e.op_context != ctx)
			continue;
		if (!ctx && !(c->e.flags & FI_REMOTE_CQ_DATA))
			continue;
		*out = *c;
		memmove(c, c + 1, (e->nstash - i - 1) * sizeof(*c));
		e->nstash--;
		return true;
	}
	return false;
}

/* Wait for the completion of @ctx; 0 or fatal. */
static int wait_comp(struct xfer_env *e, void *ctx, struct comp *out,
		     const char *what)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)e->wait_ms;
	int ret;

	for (;;) {
		if (stash_take(e, ctx, out))
			return 0;
		ret = poll_idle(e);
		if (ret)
			return ret;
		if (atomic_load(&e->sh->hdr.failed))
			return fatal(e, "a peer failed", -FI_EIO);
		if (ft_now_ms() > deadline) {
			fprintf(stderr,
				PROG "[%d] %s: FATAL: no completion for %s "
				     "after %d ms\n",
				e->rank, e->phase, what, e->wait_ms);
			e->errors++;
			return -FI_ETIMEDOUT;
		}
	}
}

static const char *flag_str(uint64_t f, char *buf, size_t len)
{
	static const struct {
		uint64_t f;
		const char *n;
	} names[] = {{FI_SEND, "SEND"},
		     {FI_RECV, "RECV"},
		     {FI_MSG, "MSG"},
		     {FI_TAGGED, "TAGGED"},
		     {FI_RMA, "RMA"},
		     {FI_ATOMIC, "ATOMIC"},
		     {FI_READ, "READ"},
		     {FI_WRITE, "WRITE"},
		     {FI_REMOTE_READ, "REMOTE_READ"},
		     {FI_REMOTE_WRITE, "REMOTE_WRITE"},
		     {FI_REMOTE_CQ_DATA, "REMOTE_CQ_DATA"},
		     {FI_MULTI_RECV, "MULTI_RECV"}};
	size_t i, o = 0;

	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f & names[i].f)
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? "|" : "", names[i].n);
	if (!o)
		snprintf(buf, len, "0");
	return buf;
}

/* The flags that tell what a completion is. */
#define KIND_FLAGS                                                             \
	(FI_SEND | FI_RECV | FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |         \
	 FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |               \
	 FI_REMOTE_CQ_DATA | FI_MULTI_RECV)

static bool check_flags(struct xfer_env *e, const char *what,
			const struct comp *c, uint64_t want)
{
	char a[160], b[160];

	return check(e, (c->e.flags & KIND_FLAGS) == want,
		     "%s: completion flags %s, expected %s", what,
		     flag_str(c->e.flags & KIND_FLAGS, a, sizeof(a)),
		     flag_str(want, b, sizeof(b)));
}

/*
 * Wait for @ctx, which must succeed with @flags (0: not checked here).
 * Returns 0, 1 (error entry, reported), or fatal (<0).
 */
static int wait_ok(struct xfer_env *e, void *ctx, uint64_t flags,
		   struct comp *c, const char *what)
{
	int ret = wait_comp(e, ctx, c, what);

	if (ret)
		return ret;
	if (!check(e, !c->err, "%s: error completion %d (%s), prov_errno %d",
		   what, c->err, fi_strerror(c->err), c->prov_errno))
		return 1;
	if (flags) /* else the caller checks them */
		check_flags(e, what, c, flags);
	return 0;
}

/* Wait for @ctx, which must complete in error @err.  0, 1 (not so), <0. */
static int wait_err(struct xfer_env *e, void *ctx, int err, struct comp *c,
		    const char *what)
{
	int ret = wait_comp(e, ctx, c, what);

	if (ret)
		return ret;
	if (!check(e, c->err == err,
		   "%s: expected an error entry %s, got %s%s (len %zu)", what,
		   fi_strerror(err), c->err ? "error " : "success",
		   c->err ? fi_strerror(c->err) : "", (size_t)c->e.len))
		return 1;
	return 0;
}

/* Drain the CQ; nothing may be left over at the end of a step. */
static int expect_empty(struct xfer_env *e, const char *when)
{
	char f[160];
	size_t i;
	int ret;

	ret = poll_cq(e);
	if (ret < 0)
		return ret;
	for (i = 0; i < e->nstash; i++) {
		const struct comp *c = &e->stash[i];

		fail(e,
		     "%s: unexpected %scompletion: context %p flags %s len "
		     "%zu tag 0x%llx data 0x%llx err %d",
		     when, c->err ? "error " : "", c->e.op_context,
		     flag_str(c->e.flags, f, sizeof(f)), (size_t)c->e.len,
		     (unsigned long long)c->e.tag,
		     (unsigned long long)c->e.data, c->err);
	}
	e->nstash = 0;
	return 0;
}

/* Wait until counter @c reaches @v (polling the CQ). */
static int wait_cntr(struct xfer_env *e, struct fid_cntr *cn, uint64_t v,
		     const char *what)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)e->wait_ms;
	int ret;

	while (fi_cntr_read(cn) < v) {
		ret = poll_idle(e);
		if (ret)
			return ret;
		if (ft_now_ms() > deadline) {
			fprintf(stderr,
				PROG "[%d] %s: FATAL: %s: counter at %llu, "
				     "expected %llu\n",
				e->rank, e->phase, what,
				(unsigned long long)fi_cntr_read(cn),
				(unsigned long long)v);
			e->errors++;
			return -FI_ETIMEDOUT;
		}
	}
	return 0;
}

/* Retry a verb while it returns -FI_EAGAIN (polling meanwhile). */
#define POST(e, call)                                                          \
	do {                                                                   \
		uint64_t dl_ = ft_now_ms() + (uint64_t)(e)->wait_ms;           \
		ssize_t ret_;                                                  \
		while ((ret_ = (call)) == -FI_EAGAIN &&                        \
		       ft_now_ms() < dl_)                                      \
			poll_idle(e);                                          \
		if (ret_)                                                      \
			return fatal(e, #call, (int)ret_);                     \
	} while (0)

/* Propagate fatal errors (< 0); 1 (reported failure) goes on. */
#define TRY(call)                                                              \
	do {                                                                   \
		int r_ = (call);                                               \
		if (r_ < 0)                                                    \
			return r_;                                             \
	} while (0)

/* ---- Synchronisation (shared memory, polling the CQ while waiting) ------- */

static int sync_wait(struct xfer_env *e, atomic_int *gen_p, int gen,
		     atomic_long *lp, long target, const char *what)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)e->wait_ms;
	int ret;

	for (;;) {
		if (gen_p && atomic_load(gen_p) != gen)
			return 0;
		if (lp && atomic_load(lp) >= target)
			return 0;
		if (atomic_load(&e->sh->hdr.failed) &&
		    !(gen_p && atomic_load(gen_p) != gen) &&
		    !(lp && atomic_load(lp) >= target))
			return fatal(e, "a peer failed", -FI_EIO);
		ret = poll_idle(e);
		if (ret)
			return ret;
		if (ft_now_ms() > deadline) {
			fprintf(stderr, PROG "[%d] %s: FATAL: %s timed out\n",
				e->rank, e->phase, what);
			e->errors++;
			return -FI_ETIMEDOUT;
		}
	}
}

/* All processes. */
static int barrier(struct xfer_env *e)
{
	struct xfer_shared *sh = e->sh;
	int gen = atomic_load(&sh->bar_gen);

	if (atomic_fetch_add(&sh->bar_count, 1) == e->n - 1) {
		atomic_store(&sh->bar_count, 0);
		atomic_fetch_add(&sh->bar_gen, 1);
		return 0;
	}
	return sync_wait(e, &sh->bar_gen, gen, NULL, 0, "barrier");
}

/* This process and its partner. */
static int pair_sync(struct xfer_env *e)
{
	long mine = atomic_fetch_add(&e->sh->psync[e->rank], 1) + 1;

	return sync_wait(e, NULL, 0, &e->sh->psync[e->partner], mine,
			 "pair sync");
}

/* ---- Receive checks ------------------------------------------------------- */

/* Expected attributes of a receive completion. */
struct rx_want {
	const char *what;
	uint64_t flags; /* FI_RECV | FI_TAGGED/FI_MSG [| FI_REMOTE_CQ_DATA] */
	size_t len;
	uint64_t tag;
	uint64_t data;
	fi_addr_t src;
};

static void check_rx(struct xfer_env *e, const struct comp *c,
		     const struct rx_want *w)
{
	check_flags(e, w->what, c, w->flags);
	check(e, c->e.len == w->len, "%s: len %zu, expected %zu", w->what,
	      (size_t)c->e.len, w->len);
	if (w->flags & FI_TAGGED)
		check(e, c->e.tag == w->tag, "%s: tag 0x%llx, expected 0x%llx",
		      w->what, (unsigned long long)c->e.tag,
		      (unsigned long long)w->tag);
	if (w->flags & FI_REMOTE_CQ_DATA)
		check(e, c->e.data == w->data,
		      "%s: remote CQ data 0x%llx, expected 0x%llx", w->what,
		      (unsigned long long)c->e.data,
		      (unsigned long long)w->data);
	check(e, c->src == w->src,
	      "%s: fi_cq_readfrom source %llu, expected %llu", w->what,
	      (unsigned long long)c->src, (unsigned long long)w->src);
}

/* Rounds of the phases c) to g): both roles, once more per 10 iterations. */
static int rounds(const struct xfer_env *e)
{
	return 2 * (int)((e->o->iters + 9) / 10);
}

/* ---- a) tagged ping-pong ---------------------------------------------------- */

static const size_t pp_sizes[] = {0,	 1,	8,     64,    4032, 4033,
				  16384, 32648, 32649, 65536, MIB};
#define NPP (sizeof(pp_sizes) / sizeof(pp_sizes[0]))

/* Iov entries the endpoint takes (at most the 8 layout() knows). */
static int iov_max(size_t limit)
{
	return limit < 1 ? 1 : limit > 8 ? 8 : (int)limit;
}

/* Messages to this process's own address, through the engine. */
static int self_send(struct xfer_env *e)
{
	static const size_t sz[2] = {64, 100000};
	struct fi_context sctx[2], rctx[2];
	struct comp c;
	char what[160];
	int k, r;

	for (k = 0; k < 2; k++) {
		fill(e->sbuf + (size_t)k * 110000, sz[k],
		     SEED(PH_A, e->rank, 0xff, k), 0);
		POST(e, fi_tsend(e->r.ep, e->sbuf + (size_t)k * 110000, sz[k],
				 NULL, (fi_addr_t)e->rank,
				 TAG(PH_A, 0xff, k, 0), &sctx[k]));
	}
	for (k = 0; k < 2; k++) {
		memset(e->rbuf + (size_t)k * 110000, GUARD, sz[k] + 64);
		POST(e, fi_trecv(e->r.ep, e->rbuf + (size_t)k * 110000,
				 sz[k] + 32, NULL, (fi_addr_t)e->rank,
				 TAG(PH_A, 0xff, k, 0), 0, &rctx[k]));
	}
	for (k = 0; k < 2; k++) {
		snprintf(what, sizeof(what),
			 "message of %zu B to this process's own address",
			 sz[k]);
		TRY(r = wait_ok(e, &rctx[k], FI_RECV | FI_TAGGED, &c, what));
		if (!r) {
			check(e, c.e.len == sz[k] && c.src == (fi_addr_t)e->rank,
			      "%s: len %zu source %llu", what, (size_t)c.e.len,
			      (unsigned long long)c.src);
			check_pat(e, what, e->rbuf + (size_t)k * 110000, sz[k],
				  SEED(PH_A, e->rank, 0xff, k), 0);
			check_const(e, what,
				    e->rbuf + (size_t)k * 110000 + sz[k], 64,
				    GUARD);
		}
		TRY(wait_ok(e, &sctx[k], FI_SEND | FI_TAGGED, &c,
			    "send to this process's own address"));
	}
	return 0;
}

static int phase_pingpong(struct xfer_env *e)
{
	int tx_max = iov_max(e->r.info->tx_attr->iov_limit);
	int rx_max = iov_max(e->r.info->rx_attr->iov_limit);
	bool pinger = !(e->rank & 1);
	struct fi_context sctx, rctx;
	struct iovec siov[8], riov[8];
	struct fi_msg_tagged msg;
	uint64_t recv0, recvs = 0;
	struct rx_want w;
	struct comp c;
	char what[160];
	size_t si, n;
	long it;
	int r;

	TRY(self_send(e));
	if (e->partner < 0)
		return 0;
	recv0 = fi_cntr_read(e->rcntr);
	for (si = 0; si < NPP; si++) {
		n = pp_sizes[si];
		for (it = 0; it < e->o->iters; it++) {
			int ping_from = pinger ? e->rank : e->partner;
			int pong_from = pinger ? e->partner : e->rank;
			uint32_t sping = SEED(PH_A, ping_from, si, it);
			uint32_t spong = SEED(PH_A, pong_from, si, it);
			/* noise in bits 8..23, under the receivers' mask */
			uint64_t tping =
				TAG(PH_A, si, it, 0 | (it * 37 & 0xffff) << 8);
			uint64_t tpong =
				TAG(PH_A, si, it, 1 | (it * 91 & 0xffff) << 8);
			uint64_t mask = 0xffff00;
			uint64_t dping = 0xD000000000000000ULL | sping;
			uint64_t dpong = 0xE000000000000000ULL | spong;
			bool pong_data = !(it & 1);
			/* every third iteration: as many iovs as allowed */
			int ns = it % 3 == 2 ? tx_max : 3;
			int nr = it % 3 == 2 ? rx_max : 4;

			if (pinger) {
				recv_iov(e->rbuf, n + 64, nr, riov);
				POST(e, fi_trecvv(e->r.ep, riov, NULL,
						  (size_t)nr, e->partner,
						  tpong ^ mask, mask, &rctx));
				send_iov(e->sbuf, n, ns, sping, siov);
				msg = (struct fi_msg_tagged){
					.msg_iov = siov,
					.iov_count = (size_t)ns,
					.addr = e->partner,
					.tag = tping,
					.context = &sctx,
					.data = dping};
				POST(e, fi_tsendmsg(e->r.ep, &msg,
						    FI_REMOTE_CQ_DATA |
							    FI_COMPLETION));
				snprintf(what, sizeof(what),
					 "ping of %zu B (iteration %ld) send",
					 n, it);
				TRY(wait_ok(e, &sctx, FI_SEND | FI_TAGGED, &c,
					    what));
				snprintf(what, sizeof(what),
					 "pong of %zu B (iteration %ld, %s, "
					 "%d receive iovs)",
					 n, it,
					 pong_data ? "fi_tsenddata"
						   : "fi_tsendv, 4 iovs",
					 nr);
				TRY(r = wait_ok(e, &rctx, 0, &c, what));
				if (!r) {
					w = (struct rx_want){
						what,
						FI_RECV | FI_TAGGED |
							(pong_data
								 ? FI_REMOTE_CQ_DATA
								 : 0),
						n,
						tpong,
						dpong,
						(fi_addr_t)e->partner};
					check_rx(e, &c, &w);
					check_recv_iov(e, what, riov, nr, n,
						       spong);
				}
				recvs++;
			} else {
				recv_iov(e->rbuf, n + 64, nr, riov);
				POST(e, fi_trecvv(e->r.ep, riov, NULL,
						  (size_t)nr, FI_ADDR_UNSPEC,
						  tping ^ mask, mask, &rctx));
				snprintf(what, sizeof(what),
					 "ping of %zu B (iteration %ld, "
					 "fi_tsendmsg, %d send iovs, %d "
					 "receive iovs)",
					 n, it, ns, nr);
				TRY(r = wait_ok(e, &rctx, 0, &c, what));
				if (!r) {
					w = (struct rx_want){
						what,
						FI_RECV | FI_TAGGED |
							FI_REMOTE_CQ_DATA,
						n,
						tping,
						dping,
						(fi_addr_t)e->partner};
					check_rx(e, &c, &w);
					check_recv_iov(e, what, riov, nr, n,
						       sping);
				}
				recvs++;
				if (pong_data) {
					fill(e->sbuf, n, spong, 0);
					POST(e, fi_tsenddata(e->r.ep, e->sbuf, n,
							     NULL, dpong,
							     e->partner, tpong,
							     &sctx));
				} else {
					send_iov(e->sbuf, n, 4, spong, siov);
					POST(e, fi_tsendv(e->r.ep, siov, NULL, 4,
							  e->partner, tpong,
							  &sctx));
				}
				snprintf(what, sizeof(what),
					 "pong of %zu B (iteration %ld) send",
					 n, it);
				TRY(wait_ok(e, &sctx, FI_SEND | FI_TAGGED, &c,
					    what));
			}
		}
	}
	check(e, fi_cntr_read(e->rcntr) - recv0 == recvs,
	      "FI_RECV counter counted %llu receives, expected %llu",
	      (unsigned long long)(fi_cntr_read(e->rcntr) - recv0),
	      (unsigned long long)recvs);
	return 0;
}

/* ---- b) unexpected messages, FI_DIRECTED_RECV --------------------------------- */

#define UNEXP_K 12
#define UNEXP_SAME 3 /* the last ones share a tag: arrival order */
static const size_t unexp_sizes[] = {0,	  1,	  100,	  4032,
				     4033, 20000, 300000, 2048};

static size_t unexp_size(int k, long round)
{
	return unexp_sizes[(size_t)(k + round) % 8];
}

static int phase_unexp(struct xfer_env *e)
{
	struct fi_context sctx[UNEXP_K], rctx[UNEXP_K];
	struct iovec riov[UNEXP_K][2];
	size_t off[UNEXP_K], cap[UNEXP_K], n, o;
	bool data[UNEXP_K], inject[UNEXP_K];
	uint64_t tag[UNEXP_K];
	const uint64_t mask = 0xff;
	struct rx_want w;
	struct comp c;
	char what[160];
	long round;
	int k, i, ret;

	if (e->partner < 0)
		return 0;
	for (round = 0; round < e->o->iters; round++) {
		bool sender = (e->rank & 1) == (round & 1);
		int from = sender ? e->rank : e->partner;

		for (k = 0, o = 0; k < UNEXP_K; k++) {
			n = unexp_size(k, round);
			off[k] = o;
			cap[k] = n + 32;
			o += cap[k] + 64 + RX_GAP;
			/* k in bits 24.., noise in the low byte (masked) */
			tag[k] = k < UNEXP_K - UNEXP_SAME
					 ? TAG(PH_B, round, k, (k * 29 + round) & 0xff)
					 : TAG(PH_B, round, 0xfff, round & 0xff);
			data[k] = k % 3 == 1;
			inject[k] = k % 4 == 3 && n <= 4032;
		}
		if (sender) {
			for (k = 0; k < UNEXP_K; k++) {
				uint8_t *b = e->ubuf + off[k];
				uint32_t s = SEED(PH_B, from, round, k);

				n = unexp_size(k, round);
				fill(b, n, s, 0);
				if (inject[k] && data[k])
					POST(e, fi_tinjectdata(e->r.ep, b, n, s,
							       e->partner,
							       tag[k]));
				else if (inject[k])
					POST(e, fi_tinject(e->r.ep, b, n,
							   e->partner, tag[k]));
				else if (data[k])
					POST(e, fi_tsenddata(e->r.ep, b, n, NULL,
							     s, e->partner,
							     tag[k], &sctx[k]));
				else
					POST(e, fi_tsend(e->r.ep, b, n, NULL,
							 e->partner, tag[k],
							 &sctx[k]));
			}
		}
		TRY(pair_sync(e)); /* all sent before any receive */
		if (!sender) {
			/* let them all arrive: they are unexpected */
			for (i = 0; i < 64; i++) {
				ret = poll_cq(e);
				if (ret < 0)
					return ret;
			}
			/*
			 * distinct tags in reverse order, then the ones with
			 * the same tag in order: the first posted gets the
			 * first sent
			 */
			for (i = 0; i < UNEXP_K; i++) {
				uint64_t t;

				k = i < UNEXP_K - UNEXP_SAME
					    ? UNEXP_K - UNEXP_SAME - 1 - i
					    : i;
				t = (tag[k] & ~mask) | (~tag[k] & mask);

				recv_iov(e->ubuf + off[k], cap[k], 2, riov[k]);
				if (k & 1)
					POST(e, fi_trecvv(e->r.ep, riov[k], NULL,
							  2, FI_ADDR_UNSPEC, t,
							  mask, &rctx[k]));
				else
					POST(e, fi_trecv(e->r.ep,
							 e->ubuf + off[k],
							 cap[k], NULL,
							 FI_ADDR_UNSPEC, t, mask,
							 &rctx[k]));
			}
			for (k = UNEXP_K - 1; k >= 0; k--) {
				uint32_t s = SEED(PH_B, from, round, k);

				n = unexp_size(k, round);
				snprintf(what, sizeof(what),
					 "unexpected message %d (%zu B, %s%s) "
					 "of round %ld",
					 k, n,
					 k >= UNEXP_K - UNEXP_SAME
						 ? "tag shared with 2 others, "
						 : "",
					 inject[k] && data[k] ? "fi_tinjectdata"
					 : inject[k]	       ? "fi_tinject"
					 : data[k]	       ? "fi_tsenddata"
							       : "fi_tsend",
					 round);
				TRY(ret = wait_ok(e, &rctx[k], 0, &c, what));
				if (ret)
					continue;
				w = (struct rx_want){
					what,
					FI_RECV | FI_TAGGED |
						(data[k] ? FI_REMOTE_CQ_DATA : 0),
					n,
					tag[k],
					s,
					(fi_addr_t)e->partner};
				check_rx(e, &c, &w);
				if (k & 1) {
					check_recv_iov(e, what, riov[k], 2, n, s);
				} else {
					check_pat(e, what, e->ubuf + off[k], n, s,
						  0);
					check_const(e, what,
						    e->ubuf + off[k] + n,
						    cap[k] - n + 64, GUARD);
				}
			}
		} else {
			for (k = 0; k < UNEXP_K; k++) {
				if (inject[k])
					continue;
				snprintf(what, sizeof(what),
					 "send of unexpected message %d", k);
				TRY(wait_ok(e, &sctx[k], FI_SEND | FI_TAGGED, &c,
					    what));
			}
		}
		TRY(expect_empty(e, "after the round"));
		TRY(pair_sync(e));
	}
	return 0;
}

static size_t directed_size(int rank)
{
	return rank & 1 ? 5000 + (size_t)rank * 3 : 100 + (size_t)rank;
}

/* Every rank sends the same tag to @recvr; each directed receive must get
 * its source's message.  @posted: receives posted before the sends. */
static int directed_round(struct xfer_env *e, int recvr, bool posted)
{
	struct fi_context ctx[FT_MAX_PROCS], sctx;
	uint64_t tag = TAG(PH_BD, recvr, posted, 0);
	const size_t cap = 5000 + 3 * FT_MAX_PROCS + 64;
	struct rx_want w;
	struct comp c;
	char what[160];
	int x, ret, i;

	if (posted && e->rank == recvr)
		for (x = e->n - 1; x >= 0; x--) {
			if (x == recvr)
				continue;
			memset(e->ubuf + (size_t)x * cap, GUARD, cap);
			POST(e, fi_trecv(e->r.ep, e->ubuf + (size_t)x * cap, cap,
					 NULL, (fi_addr_t)x, tag, 0, &ctx[x]));
		}
	TRY(barrier(e));
	if (e->rank != recvr) {
		size_t n = directed_size(e->rank);

		fill(e->sbuf, n, SEED(PH_BD, e->rank, recvr, posted), 0);
		POST(e, fi_tsenddata(e->r.ep, e->sbuf, n, NULL,
				     (uint64_t)e->rank, (fi_addr_t)recvr, tag,
				     &sctx));
	}
	TRY(barrier(e)); /* all sent */
	if (e->rank == recvr) {
		if (!posted) {
			for (i = 0; i < 64; i++)
				if ((ret = poll_cq(e)) < 0)
					return ret;
			for (x = e->n - 1; x >= 0; x--) {
				if (x == recvr)
					continue;
				memset(e->ubuf + (size_t)x * cap, GUARD, cap);
				POST(e, fi_trecv(e->r.ep,
						 e->ubuf + (size_t)x * cap, cap,
						 NULL, (fi_addr_t)x, tag, 0,
						 &ctx[x]));
			}
		}
		for (x = 0; x < e->n; x++) {
			size_t n = directed_size(x);

			if (x == recvr)
				continue;
			snprintf(what, sizeof(what),
				 "receive directed at rank %d (%s)", x,
				 posted ? "posted first" : "unexpected");
			TRY(ret = wait_ok(e, &ctx[x], 0, &c, what));
			if (ret)
				continue;
			w = (struct rx_want){what,
					     FI_RECV | FI_TAGGED |
						     FI_REMOTE_CQ_DATA,
					     n,
					     tag,
					     (uint64_t)x,
					     (fi_addr_t)x};
			check_rx(e, &c, &w);
			check_pat(e, what, e->ubuf + (size_t)x * cap, n,
				  SEED(PH_BD, x, recvr, posted), 0);
			check_const(e, what, e->ubuf + (size_t)x * cap + n,
				    cap - n, GUARD);
		}
	} else {
		TRY(wait_ok(e, &sctx, FI_SEND | FI_TAGGED, &c,
			    "send to the directed receiver"));
	}
	TRY(expect_empty(e, "after a directed round"));
	return barrier(e);
}

static int phase_directed(struct xfer_env *e)
{
	int recvr;

	if (e->n < 3)
		return 0;
	for (recvr = 0; recvr < e->n; recvr++) {
		TRY(directed_round(e, recvr, false));
		TRY(directed_round(e, recvr, true));
	}
	return 0;
}

/* ---- c) FI_PEEK, FI_CLAIM, FI_DISCARD ------------------------------------------- */

static const size_t peek_sizes[6] = {0, 500, 70000, 3000, 50000, 20000};

/* A tagged receive with @flags (FI_PEEK...) of @tag; 0 or fatal. */
static int trecvmsg(struct xfer_env *e, void *buf, size_t len, uint64_t tag,
		    uint64_t ignore, void *ctx, uint64_t flags)
{
	struct iovec iov = {buf, len};
	struct fi_msg_tagged msg = {.msg_iov = len ? &iov : NULL,
				    .iov_count = len ? 1 : 0,
				    .addr = FI_ADDR_UNSPEC,
				    .tag = tag,
				    .ignore = ignore,
				    .context = ctx};

	POST(e, fi_trecvmsg(e->r.ep, &msg, flags));
	return 0;
}

/*
 * Peek (@flags includes FI_PEEK) until the message of @tag is found (the
 * endpoint may not have taken it in yet: FI_ENOMSG then); its completion
 * into @c.  Returns 0, 1 (failure reported), or fatal.
 */
static int peek_until(struct xfer_env *e, uint64_t tag, struct fi_context *ctx,
		      uint64_t flags, struct comp *c, const char *what)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)e->wait_ms;

	for (;;) {
		TRY(trecvmsg(e, NULL, 0, tag, 0, ctx, flags));
		TRY(wait_comp(e, ctx, c, what));
		if (!c->err)
			return 0;
		if (c->err != FI_ENOMSG)
			return check(e, false, "%s: error entry %s", what,
				     fi_strerror(c->err))
				       ? 0
				       : 1;
		if (ft_now_ms() > deadline)
			return fatal(e, what, -FI_ETIMEDOUT);
		TRY(poll_idle(e));
	}
}

static int phase_peek(struct xfer_env *e)
{
	struct fi_context sctx[6], pctx, claim_ctx, rctx;
	uint64_t tag[6];
	struct rx_want w;
	struct comp c;
	char what[160];
	int round, k, ret;

	if (e->partner < 0)
		return 0;
	for (round = 0; round < rounds(e); round++) {
		bool sender = (e->rank & 1) == (round & 1);
		int from = sender ? e->rank : e->partner;

		for (k = 1; k < 6; k++)
			tag[k] = TAG(PH_C, round, k, 0);
		if (!sender) {
			/* nothing sent yet: FI_ENOMSG */
			TRY(trecvmsg(e, NULL, 0, tag[1], 0, &pctx, FI_PEEK));
			TRY(wait_err(e, &pctx, FI_ENOMSG, &c,
				     "FI_PEEK with no message"));
			TRY(trecvmsg(e, NULL, 0, TAG(PH_C, round, 0, 0),
				     0xffffffffULL, &pctx, FI_PEEK));
			TRY(wait_err(e, &pctx, FI_ENOMSG, &c,
				     "FI_PEEK (ignore mask) with no message"));
		}
		TRY(pair_sync(e));
		if (sender) {
			for (k = 1; k < 6; k++) {
				uint8_t *b = e->ubuf + (size_t)k * 80000;

				fill(b, peek_sizes[k], SEED(PH_C, from, round, k),
				     0);
				POST(e, fi_tsenddata(e->r.ep, b, peek_sizes[k],
						     NULL, 0xC0 + (uint64_t)k,
						     e->partner, tag[k],
						     &sctx[k]));
			}
			for (k = 1; k < 6; k++) {
				snprintf(what, sizeof(what),
					 "send %d of the peek round", k);
				TRY(wait_ok(e, &sctx[k], FI_SEND | FI_TAGGED, &c,
					    what));
			}
			TRY(pair_sync(e));
			continue;
		}
		/* 1: peeked twice, then received: not consumed by a peek */
		for (k = 0; k < 2; k++) {
			snprintf(what, sizeof(what), "FI_PEEK #%d of message 1",
				 k + 1);
			TRY(ret = peek_until(e, tag[1], &pctx, FI_PEEK, &c,
					     what));
			if (ret)
				continue;
			w = (struct rx_want){what,
					     FI_RECV | FI_TAGGED |
						     FI_REMOTE_CQ_DATA,
					     peek_sizes[1],
					     tag[1],
					     0xC1,
					     (fi_addr_t)e->partner};
			check_rx(e, &c, &w);
		}
		memset(e->rbuf, GUARD, peek_sizes[1] + 64);
		POST(e, fi_trecv(e->r.ep, e->rbuf, peek_sizes[1] + 32, NULL,
				 FI_ADDR_UNSPEC, tag[1], 0, &rctx));
		TRY(ret = wait_ok(e, &rctx, FI_RECV | FI_TAGGED |
						    FI_REMOTE_CQ_DATA,
				  &c, "receive of message 1 after FI_PEEK"));
		if (!ret) {
			check(e, c.e.len == peek_sizes[1],
			      "receive after FI_PEEK: len %zu, expected %zu",
			      (size_t)c.e.len, peek_sizes[1]);
			check_pat(e, "receive after FI_PEEK", e->rbuf,
				  peek_sizes[1], SEED(PH_C, from, round, 1), 0);
		}

		/* 2 (large): FI_PEEK | FI_CLAIM */
		TRY(ret = peek_until(e, tag[2], &claim_ctx, FI_PEEK | FI_CLAIM,
				     &c, "FI_PEEK | FI_CLAIM of message 2"));
		if (!ret) {
			w = (struct rx_want){"FI_PEEK | FI_CLAIM of message 2",
					     FI_RECV | FI_TAGGED |
						     FI_REMOTE_CQ_DATA,
					     peek_sizes[2],
					     tag[2],
					     0xC2,
					     (fi_addr_t)e->partner};
			check_rx(e, &c, &w);
		}
		/* a receive matching any tag of the round skips the claimed
		 * message 2: it gets message 3 */
		memset(e->rbuf, GUARD, 80000);
		POST(e, fi_trecv(e->r.ep, e->rbuf, 80000 - 64, NULL,
				 FI_ADDR_UNSPEC, TAG(PH_C, round, 0, 0),
				 0xffffffffffffULL, &rctx));
		TRY(ret = wait_ok(e, &rctx, FI_RECV | FI_TAGGED |
						    FI_REMOTE_CQ_DATA,
				  &c, "wildcard receive after FI_CLAIM"));
		if (!ret && check(e, c.e.tag == tag[3],
				  "wildcard receive after FI_PEEK | FI_CLAIM "
				  "got tag 0x%llx (len %zu), expected message "
				  "3 (tag 0x%llx): the claimed message was "
				  "not reserved",
				  (unsigned long long)c.e.tag, (size_t)c.e.len,
				  (unsigned long long)tag[3]))
			check_pat(e, "wildcard receive of message 3", e->rbuf,
				  peek_sizes[3], SEED(PH_C, from, round, 3), 0);
		/* the claim itself */
		memset(e->rbuf, GUARD, 80000);
		TRY(trecvmsg(e, e->rbuf, peek_sizes[2] + 16, tag[2], 0,
			     &claim_ctx, FI_CLAIM));
		TRY(ret = wait_ok(e, &claim_ctx,
				  FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, &c,
				  "FI_CLAIM receive of message 2"));
		if (!ret) {
			check(e, c.e.len == peek_sizes[2] && c.e.tag == tag[2],
			      "FI_CLAIM receive: len %zu tag 0x%llx, "
			      "expected %zu 0x%llx",
			      (size_t)c.e.len, (unsigned long long)c.e.tag,
			      peek_sizes[2], (unsigned long long)tag[2]);
			check_pat(e, "FI_CLAIM receive of message 2", e->rbuf,
				  peek_sizes[2], SEED(PH_C, from, round, 2), 0);
			check_const(e, "FI_CLAIM receive of message 2",
				    e->rbuf + peek_sizes[2], 16, GUARD);
		}

		/* 4 (large): FI_PEEK | FI_DISCARD, then gone */
		TRY(ret = peek_until(e, tag[4], &pctx, FI_PEEK | FI_DISCARD, &c,
				     "FI_PEEK | FI_DISCARD of message 4"));
		if (!ret) {
			check_flags(e, "FI_PEEK | FI_DISCARD", &c,
				    FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
			check(e, c.e.tag == tag[4],
			      "FI_PEEK | FI_DISCARD: tag 0x%llx, expected "
			      "0x%llx",
			      (unsigned long long)c.e.tag,
			      (unsigned long long)tag[4]);
		}
		TRY(trecvmsg(e, NULL, 0, tag[4], 0, &pctx, FI_PEEK));
		TRY(wait_err(e, &pctx, FI_ENOMSG, &c,
			     "FI_PEEK of the discarded message 4"));

		/* 5: FI_PEEK | FI_CLAIM, then FI_CLAIM | FI_DISCARD */
		TRY(ret = peek_until(e, tag[5], &claim_ctx, FI_PEEK | FI_CLAIM,
				     &c, "FI_PEEK | FI_CLAIM of message 5"));
		TRY(trecvmsg(e, NULL, 0, tag[5], 0, &claim_ctx,
			     FI_CLAIM | FI_DISCARD));
		TRY(ret = wait_ok(e, &claim_ctx, 0, &c,
				  "FI_CLAIM | FI_DISCARD of message 5"));
		if (!ret)
			check(e, (c.e.flags & (FI_RECV | FI_TAGGED)) ==
					 (FI_RECV | FI_TAGGED),
			      "FI_CLAIM | FI_DISCARD: flags 0x%llx",
			      (unsigned long long)c.e.flags);
		TRY(trecvmsg(e, NULL, 0, tag[5], 0, &pctx, FI_PEEK));
		TRY(wait_err(e, &pctx, FI_ENOMSG, &c,
			     "FI_PEEK of the discarded message 5"));
		TRY(expect_empty(e, "after the peek round"));
		TRY(pair_sync(e));
	}
	return 0;
}

/* ---- d) FI_MULTI_RECV --------------------------------------------------------------- */

#define MR_BUF 65536
#define MR_MIN 4096
static const size_t mrecv_sizes[12] = {100, 4032, 4033, 0,  1,  3000,
				       4096, 2500, 777,	 4000, 64, 3333};

static size_t mrecv_size(int m, int round)
{
	return mrecv_sizes[(size_t)(m + 5 * round) % 12];
}

#define MR_UNEXP 6 /* messages sent before the buffers are posted */

/* Send multi-recv message @m of @round from sbuf + *@off. */
static int mrecv_send(struct xfer_env *e, int m, int round, size_t *off,
		      struct fi_context *sctx)
{
	uint32_t s = SEED(PH_D, e->rank, round, m);
	size_t n = mrecv_size(m, round);
	uint8_t *p = e->sbuf + *off;
	struct iovec siov[2];

	*off += n + 16;
	fill(p, n, s, 0);
	if (m % 3 == 2 && n <= 4032)
		POST(e, fi_inject(e->r.ep, p, n, e->partner));
	else if (m % 3 == 1)
		POST(e, fi_senddata(e->r.ep, p, n, NULL, s, e->partner,
				    &sctx[m]));
	else if (m % 4 == 0) {
		send_iov(e->ubuf + *off * 2, n, 2, s, siov);
		POST(e, fi_sendv(e->r.ep, siov, NULL, 2, e->partner, &sctx[m]));
	} else {
		POST(e, fi_send(e->r.ep, p, n, NULL, e->partner, &sctx[m]));
	}
	return 0;
}

static int phase_multirecv(struct xfer_env *e)
{
	struct fi_context ctx[2], sctx[128];
	size_t min = MR_MIN, len = sizeof(min), off, off0 = 0, n;
	struct iovec iov[2];
	struct fi_msg msg;
	uint8_t *base[2];
	struct comp c;
	char what[160];
	int round, m, b, count1, total;

	if (e->partner < 0)
		return 0;
	for (round = 0; round < rounds(e); round++) {
		bool sender = (e->rank & 1) == (round & 1);
		int from = sender ? e->rank : e->partner;

		/* messages that fill the first buffer, then 5 more */
		for (count1 = 0, off = 0;;) {
			off += mrecv_size(count1++, round);
			if (MR_BUF - off < MR_MIN)
				break;
		}
		total = count1 + 5;
		if (!sender) {
			min = MR_MIN;
			FT_CHECK(fi_setopt(&e->r.ep->fid, FI_OPT_ENDPOINT,
					   FI_OPT_MIN_MULTI_RECV, &min,
					   sizeof(min)));
			min = 0;
			FT_CHECK(fi_getopt(&e->r.ep->fid, FI_OPT_ENDPOINT,
					   FI_OPT_MIN_MULTI_RECV, &min, &len));
			check(e, min == MR_MIN,
			      "FI_OPT_MIN_MULTI_RECV reads back %zu", min);
		}
		TRY(pair_sync(e));
		/* the first MR_UNEXP messages arrive before the buffers */
		if (sender)
			for (m = 0, off = 0; m < MR_UNEXP; m++)
				TRY(mrecv_send(e, m, round, &off, sctx));
		TRY(pair_sync(e));
		if (!sender) {
			for (m = 0; m < 64; m++)
				TRY(poll_cq(e));
			for (b = 0; b < 2; b++) {
				base[b] = e->rbuf + (size_t)b * (MR_BUF + 256);
				memset(base[b], GUARD, MR_BUF + 64);
				iov[b] = (struct iovec){base[b], MR_BUF};
				msg = (struct fi_msg){.msg_iov = &iov[b],
						      .iov_count = 1,
						      .addr = FI_ADDR_UNSPEC,
						      .context = &ctx[b]};
				POST(e, fi_recvmsg(e->r.ep, &msg,
						   FI_MULTI_RECV |
							   FI_COMPLETION));
			}
		}
		TRY(pair_sync(e));
		if (sender) {
			for (m = MR_UNEXP; m < total; m++)
				TRY(mrecv_send(e, m, round, &off, sctx));
			for (m = 0; m < total; m++) {
				if (m % 3 == 2 && mrecv_size(m, round) <= 4032)
					continue;
				snprintf(what, sizeof(what),
					 "multi-recv send %d", m);
				TRY(wait_ok(e, &sctx[m], FI_SEND | FI_MSG, &c,
					    what));
			}
		} else {
			for (m = 0, off = 0; m < total; m++) {
				bool last = m == count1 - 1;
				uint32_t s = SEED(PH_D, from, round, m);

				b = m < count1 ? 0 : 1;
				if (m == count1) {
					off0 = off;
					off = 0;
				}
				n = mrecv_size(m, round);
				snprintf(what, sizeof(what),
					 "multi-recv message %d (%zu B) into "
					 "buffer %d at offset %zu",
					 m, n, b, off);
				TRY(wait_comp(e, &ctx[b], &c, what));
				if (!check(e, !c.err, "%s: error entry %s",
					   what, fi_strerror(c.err))) {
					off += n;
					continue;
				}
				check_flags(e, what, &c,
					    FI_RECV | FI_MSG |
						    (m % 3 == 1
							     ? FI_REMOTE_CQ_DATA
							     : 0) |
						    (last ? FI_MULTI_RECV : 0));
				check(e, c.e.len == n, "%s: len %zu", what,
				      (size_t)c.e.len);
				check(e, (uint8_t *)c.e.buf == base[b] + off,
				      "%s: buf %p, expected %p (base + %zu)",
				      what, c.e.buf, (void *)(base[b] + off),
				      off);
				check(e, c.src == (fi_addr_t)e->partner,
				      "%s: source %llu", what,
				      (unsigned long long)c.src);
				if (m % 3 == 1)
					check(e, c.e.data == s,
					      "%s: data 0x%llx", what,
					      (unsigned long long)c.e.data);
				check_pat(e, what, base[b] + off, n, s, 0);
				off += n;
			}
			check_const(e, "multi-recv buffer 0 past the messages",
				    base[0] + off0, MR_BUF - off0 + 64, GUARD);
			check_const(e, "multi-recv buffer 1 past the messages",
				    base[1] + off, MR_BUF - off + 64, GUARD);
			/* the second buffer is still posted: cancel it */
			FT_CHECK(fi_cancel(&e->r.ep->fid, &ctx[1]));
			TRY(wait_err(e, &ctx[1], FI_ECANCELED, &c,
				     "fi_cancel of a partly used multi-recv "
				     "buffer"));
			min = 64; /* back to the default */
			FT_CHECK(fi_setopt(&e->r.ep->fid, FI_OPT_ENDPOINT,
					   FI_OPT_MIN_MULTI_RECV, &min,
					   sizeof(min)));
		}
		TRY(expect_empty(e, "after the multi-recv round"));
		TRY(pair_sync(e));
	}
	return 0;
}

/* ---- e) truncation ------------------------------------------------------------------- */

static int phase_trunc(struct xfer_env *e)
{
	static const size_t sz[6] = {0, 100, 4500, 300000, 64, 100};
	static const size_t cap[6] = {0, 10, 4532, 1000, 96, 10};
	struct fi_context rctx[6], sctx[6];
	uint64_t tag[6], err0;
	uint8_t *rb[6];
	struct comp c;
	char what[160];
	size_t o;
	int round, k, ret;

	if (e->partner < 0)
		return 0;
	for (round = 0; round < rounds(e); round++) {
		bool sender = (e->rank & 1) == (round & 1);
		int from = sender ? e->rank : e->partner;

		for (k = 1, o = 0; k < 6; k++) {
			tag[k] = TAG(PH_E, round, k, 0);
			rb[k] = e->rbuf + o;
			o += cap[k] + 128;
		}
		err0 = fi_cntr_readerr(e->rcntr);
		if (!sender) {
			for (k = 1; k < 5; k++) {
				memset(rb[k], GUARD, cap[k] + 64);
				if (k == 3 || k == 4) /* untagged, in order */
					POST(e, fi_recv(e->r.ep, rb[k], cap[k],
							NULL, FI_ADDR_UNSPEC,
							&rctx[k]));
				else
					POST(e, fi_trecv(e->r.ep, rb[k], cap[k],
							 NULL, FI_ADDR_UNSPEC,
							 tag[k], 0, &rctx[k]));
			}
		}
		TRY(pair_sync(e));
		if (sender) {
			for (k = 1; k < 6; k++) {
				uint8_t *b = e->ubuf + (size_t)k * 310000;

				uint32_t sd = SEED(PH_E, from, round, k);

				/* the truncated ones carry remote CQ data */
				fill(b, sz[k], sd, 0);
				if (k == 3)
					POST(e, fi_senddata(e->r.ep, b, sz[k],
							    NULL, sd, e->partner,
							    &sctx[k]));
				else if (k == 4)
					POST(e, fi_send(e->r.ep, b, sz[k], NULL,
							e->partner, &sctx[k]));
				else if (k == 2)
					POST(e, fi_tsend(e->r.ep, b, sz[k], NULL,
							 e->partner, tag[k],
							 &sctx[k]));
				else
					POST(e, fi_tsenddata(e->r.ep, b, sz[k],
							     NULL, sd,
							     e->partner, tag[k],
							     &sctx[k]));
			}
			for (k = 1; k < 6; k++) {
				snprintf(what, sizeof(what),
					 "send %d of %zu B (truncated at the "
					 "receiver or not)",
					 k, sz[k]);
				TRY(wait_ok(e, &sctx[k],
					    FI_SEND |
						    (k == 3 || k == 4 ? FI_MSG
								      : FI_TAGGED),
					    &c, what));
			}
		}
		TRY(pair_sync(e)); /* all sent: message 5 is unexpected */
		if (!sender) {
			memset(rb[5], GUARD, cap[5] + 64);
			POST(e, fi_trecv(e->r.ep, rb[5], cap[5], NULL,
					 FI_ADDR_UNSPEC, tag[5], 0, &rctx[5]));
			for (k = 1; k < 6; k++) {
				uint32_t s = SEED(PH_E, from, round, k);
				bool trunc = sz[k] > cap[k];
				size_t got = trunc ? cap[k] : sz[k];

				snprintf(what, sizeof(what),
					 "%s%s message of %zu B into %zu B",
					 k == 5 ? "unexpected " : "",
					 k == 3 || k == 4 ? "untagged" : "tagged",
					 sz[k], cap[k]);
				if (trunc) {
					TRY(ret = wait_err(e, &rctx[k], FI_ETRUNC,
							   &c, what));
					if (ret)
						continue;
					check(e, c.olen == sz[k] - cap[k],
					      "%s: olen %zu, expected %zu", what,
					      c.olen, sz[k] - cap[k]);
					check(e, c.e.len == cap[k],
					      "%s: len %zu, expected %zu", what,
					      (size_t)c.e.len, cap[k]);
					check_flags(e, what, &c,
						    FI_RECV | FI_REMOTE_CQ_DATA |
							    (k == 3 ? FI_MSG
								    : FI_TAGGED));
					/*
					 * libfabric's own providers
					 * (ofi_cq_write_error_trunc) fill tag
					 * and data; Open MPI's MTL takes
					 * MPI_SOURCE of a truncated receive
					 * from them
					 */
					if (k != 3 && c.e.tag != tag[k])
						note(e, 1,
						     "%s: FI_ETRUNC error entry "
						     "tag 0x%llx, the message's "
						     "is 0x%llx",
						     what,
						     (unsigned long long)c.e.tag,
						     (unsigned long long)tag[k]);
					if (c.e.data != s)
						note(e, 2,
						     "%s: FI_ETRUNC error entry "
						     "(flags FI_REMOTE_CQ_DATA) "
						     "data 0x%llx, the "
						     "message's is 0x%llx",
						     what,
						     (unsigned long long)c.e.data,
						     (unsigned long long)s);
				} else {
					TRY(ret = wait_ok(
						    e, &rctx[k],
						    FI_RECV |
							    (k == 3 || k == 4
								     ? FI_MSG
								     : FI_TAGGED),
						    &c, what));
					if (ret)
						continue;
					check(e, c.e.len == sz[k],
					      "%s: len %zu", what,
					      (size_t)c.e.len);
				}
				check_pat(e, what, rb[k], got, s, 0);
				check_const(e, what, rb[k] + got,
					    cap[k] - got + 64, GUARD);
			}
			check(e, fi_cntr_readerr(e->rcntr) - err0 == 3,
			      "FI_RECV counter errors went up by %llu, "
			      "expected 3 truncations",
			      (unsigned long long)(fi_cntr_readerr(e->rcntr) -
						   err0));
		}
		TRY(expect_empty(e, "after the truncation round"));
		TRY(pair_sync(e));
	}
	return 0;
}

/* ---- f) fi_cancel ----------------------------------------------------------------------- */

static int phase_cancel(struct xfer_env *e)
{
	struct fi_context c1, c2, r1, r2, s1, s2;
	uint8_t *b1 = e->rbuf, *b2 = e->rbuf + 1024, *b3 = e->rbuf + 2048,
		*b4 = e->rbuf + 3072;
	uint64_t my_tag = TAG(PH_F, e->rank, 0, 0);
	uint32_t s_t = SEED(PH_F, e->partner, 1, 0),
		 s_u = SEED(PH_F, e->partner, 2, 0);
	struct comp c;
	ssize_t ret;
	int r;

	if (e->partner < 0)
		return 0;
	memset(e->rbuf, GUARD, 4096 + 64);
	POST(e, fi_trecv(e->r.ep, b1, 256, NULL, FI_ADDR_UNSPEC, my_tag, 0,
			 &c1));
	POST(e, fi_recv(e->r.ep, b2, 256, NULL, FI_ADDR_UNSPEC, &c2));
	ret = fi_cancel(&e->r.ep->fid, &c1);
	check(e, ret == 0, "fi_cancel of a posted tagged receive: %zd", ret);
	ret = fi_cancel(&e->r.ep->fid, &c2);
	check(e, ret == 0, "fi_cancel of a posted receive: %zd", ret);
	TRY(r = wait_err(e, &c1, FI_ECANCELED, &c,
			 "canceled tagged receive"));
	if (!r)
		check(e, (c.e.flags & (FI_RECV | FI_TAGGED)) ==
				 (FI_RECV | FI_TAGGED),
		      "canceled tagged receive: flags 0x%llx",
		      (unsigned long long)c.e.flags);
	TRY(r = wait_err(e, &c2, FI_ECANCELED, &c, "canceled receive"));
	if (!r)
		check(e, (c.e.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG),
		      "canceled receive: flags 0x%llx",
		      (unsigned long long)c.e.flags);
	ret = fi_cancel(&e->r.ep->fid, &c1);
	check(e, ret != 0,
	      "second fi_cancel of the same receive returned 0 (expected "
	      "-FI_ENOENT)");
	TRY(expect_empty(e, "after fi_cancel"));
	TRY(pair_sync(e));
	/* messages for the canceled receives go elsewhere */
	fill(e->sbuf, 200, SEED(PH_F, e->rank, 1, 0), 0);
	fill(e->sbuf + 256, 100, SEED(PH_F, e->rank, 2, 0), 0);
	POST(e, fi_tsend(e->r.ep, e->sbuf, 200, NULL, e->partner,
			 TAG(PH_F, e->partner, 0, 0), &s1));
	POST(e, fi_send(e->r.ep, e->sbuf + 256, 100, NULL, e->partner, &s2));
	POST(e, fi_trecv(e->r.ep, b3, 256, NULL, FI_ADDR_UNSPEC, my_tag, 0,
			 &r1));
	POST(e, fi_recv(e->r.ep, b4, 256, NULL, FI_ADDR_UNSPEC, &r2));
	TRY(wait_ok(e, &s1, FI_SEND | FI_TAGGED, &c, "tagged send"));
	TRY(wait_ok(e, &s2, FI_SEND | FI_MSG, &c, "send"));
	TRY(r = wait_ok(e, &r1, FI_RECV | FI_TAGGED, &c,
			"tagged receive after a cancel"));
	if (!r)
		check_pat(e, "tagged receive after a cancel", b3, 200, s_t, 0);
	TRY(r = wait_ok(e, &r2, FI_RECV | FI_MSG, &c,
			"receive after a cancel"));
	if (!r)
		check_pat(e, "receive after a cancel", b4, 100, s_u, 0);
	check_const(e, "canceled tagged receive buffer", b1, 256, GUARD);
	check_const(e, "canceled receive buffer", b2, 256, GUARD);
	TRY(expect_empty(e, "after the cancel phase"));
	return pair_sync(e);
}

/* ---- g) RMA -------------------------------------------------------------------------- */

static const size_t rma_sizes[] = {1, 64, 4032, 4033, 65536, MIB};
#define NRMA (sizeof(rma_sizes) / sizeof(rma_sizes[0]))

static uint8_t *slot_of(struct xfer_env *e, int k)
{
	return e->region + (size_t)k * SLOT_SIZE;
}

/* Initiator: one RMA error case. */
static int rma_error(struct xfer_env *e, bool write, size_t n, uint64_t addr,
		     uint64_t key, int err, const char *what)
{
	struct fi_context ctx;
	struct comp c;
	int r;

	if (write)
		POST(e, fi_write(e->r.ep, e->sbuf, n, NULL, e->partner, addr,
				 key, &ctx));
	else
		POST(e, fi_read(e->r.ep, e->rbuf, n, NULL, e->partner, addr, key,
				&ctx));
	TRY(r = wait_err(e, &ctx, err, &c, what));
	if (!r)
		check(e, (c.e.flags & (FI_RMA | FI_WRITE | FI_READ)) ==
				 (FI_RMA | (write ? FI_WRITE : FI_READ)),
		      "%s: error entry flags 0x%llx", what,
		      (unsigned long long)c.e.flags);
	return 0;
}

/* msg_order promises send after write and read after write. */
static bool ordered(const struct xfer_env *e)
{
	uint64_t want = FI_ORDER_SAW | FI_ORDER_RAW;

	return (e->r.info->tx_attr->msg_order & want) == want;
}

#define ORDER_BIG MIB
#define ORDER_SMALL 3000

/*
 * Ordering (FI_ORDER_SAW, FI_ORDER_RAW): a 1 MiB fi_write and an
 * fi_inject_write, then at once a tagged message; the target looks at
 * its memory as soon as the message is there.  Then a write read back
 * at once.
 */
static int order_initiator(struct xfer_env *e, int round)
{
	const struct xfer_mrinfo *t = &e->sh->mr[e->partner];
	struct fi_context wctx, sctx, rctx;
	uint8_t *rb = e->rbuf, *sb = e->sbuf;
	uint64_t v0 = fi_cntr_read(e->r.cntr);
	struct comp c;
	int r;

	TRY(pair_sync(e)); /* the target's receive is posted */
	fill(e->ubuf, ORDER_BIG, SEED(PH_G, round, 0xfff, 0), 0);
	fill(sb, ORDER_SMALL, SEED(PH_G, round, 0xfff, 1), 0);
	POST(e, fi_write(e->r.ep, e->ubuf, ORDER_BIG, NULL, e->partner,
			 t->region + 16, t->key, &wctx));
	POST(e, fi_inject_write(e->r.ep, sb, ORDER_SMALL, e->partner,
				t->region + SLOT_SIZE + 16, t->key));
	POST(e, fi_tsend(e->r.ep, sb, 0, NULL, e->partner,
			 TAG(PH_G, round, 0xfff, 0), &sctx));
	TRY(wait_ok(e, &wctx, FI_RMA | FI_WRITE, &c, "ordered fi_write"));
	TRY(wait_ok(e, &sctx, FI_SEND | FI_TAGGED, &c,
		    "send after fi_write"));
	TRY(wait_cntr(e, e->r.cntr, v0 + 3, "ordered fi_inject_write"));
	/* read after write, not waiting for the write */
	fill(sb, 4033, SEED(PH_G, round, 0xfff, 2), 0);
	memset(rb, 0, 4033);
	POST(e, fi_write(e->r.ep, sb, 4033, NULL, e->partner,
			 t->region + 2 * SLOT_SIZE + 16, t->key, &wctx));
	POST(e, fi_read(e->r.ep, rb, 4033, NULL, e->partner,
			t->region + 2 * SLOT_SIZE + 16, t->key, &rctx));
	TRY(wait_ok(e, &wctx, FI_RMA | FI_WRITE, &c, "fi_write before a read"));
	TRY(r = wait_ok(e, &rctx, FI_RMA | FI_READ, &c,
			"fi_read right after fi_write (FI_ORDER_RAW)"));
	if (!r)
		check_pat(e, "fi_read right after fi_write (FI_ORDER_RAW)", rb,
			  4033, SEED(PH_G, round, 0xfff, 2), 0);
	return pair_sync(e); /* the target checked and cleaned */
}

static int order_target(struct xfer_env *e, int round)
{
	struct fi_context rctx;
	struct comp c;
	int r;

	POST(e, fi_trecv(e->r.ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
			 TAG(PH_G, round, 0xfff, 0), 0, &rctx));
	TRY(pair_sync(e));
	TRY(r = wait_ok(e, &rctx, FI_RECV | FI_TAGGED, &c,
			"message sent after writes"));
	/* nothing else polled: the writes must be there already */
	if (!r) {
		check_pat(e, "1 MiB fi_write seen when a later message arrived "
			     "(FI_ORDER_SAW)",
			  slot_of(e, 0) + 16, ORDER_BIG,
			  SEED(PH_G, round, 0xfff, 0), 0);
		check_pat(e, "fi_inject_write seen when a later message "
			     "arrived (FI_ORDER_SAW)",
			  slot_of(e, 1) + 16, ORDER_SMALL,
			  SEED(PH_G, round, 0xfff, 1), 0);
	}
	TRY(pair_sync(e));
	memset(slot_of(e, 0) + 16, GUARD, ORDER_BIG);
	memset(slot_of(e, 1) + 16, GUARD, ORDER_SMALL);
	memset(slot_of(e, 2) + 16, GUARD, 4033);
	return 0;
}

static int rma_initiator(struct xfer_env *e, int round)
{
	const struct xfer_mrinfo *t = &e->sh->mr[e->partner];
	struct fi_context ctx;
	struct iovec iov[4];
	struct comp c;
	char what[160];
	size_t si, n, off;
	uint64_t v0;
	int r, k;

	for (si = 0; si < NRMA; si++) {
		n = rma_sizes[si];
		off = 16 + si * 7;
		/* slot 0: fi_write */
		fill(e->sbuf, n, SEED(PH_G, round, si, 0), 0);
		POST(e, fi_write(e->r.ep, e->sbuf, n, NULL, e->partner,
				 t->region + off, t->key, &ctx));
		snprintf(what, sizeof(what), "fi_write of %zu B", n);
		TRY(wait_ok(e, &ctx, FI_RMA | FI_WRITE, &c, what));
		/* slot 1: fi_writev, 3 pieces */
		send_iov(e->sbuf, n, 3, SEED(PH_G, round, si, 1), iov);
		POST(e, fi_writev(e->r.ep, iov, NULL, 3, e->partner,
				  t->region + SLOT_SIZE + off, t->key, &ctx));
		snprintf(what, sizeof(what), "fi_writev of %zu B", n);
		TRY(wait_ok(e, &ctx, FI_RMA | FI_WRITE, &c, what));
		/* slot 2: fi_writedata */
		fill(e->sbuf, n, SEED(PH_G, round, si, 2), 0);
		POST(e, fi_writedata(e->r.ep, e->sbuf, n, NULL,
				     0xDA7A000000000000ULL | si, e->partner,
				     t->region + 2 * SLOT_SIZE + off, t->key,
				     &ctx));
		snprintf(what, sizeof(what), "fi_writedata of %zu B", n);
		TRY(wait_ok(e, &ctx, FI_RMA | FI_WRITE, &c, what));
		/* slot 3: fi_inject_write, or fi_writemsg of 2 pieces */
		if (n <= e->r.info->tx_attr->inject_size) {
			v0 = fi_cntr_read(e->r.cntr);
			fill(e->sbuf, n, SEED(PH_G, round, si, 3), 0);
			POST(e, fi_inject_write(e->r.ep, e->sbuf, n, e->partner,
						t->region + 3 * SLOT_SIZE + off,
						t->key));
			memset(e->sbuf, 0, n); /* the buffer is free again */
			snprintf(what, sizeof(what), "fi_inject_write of %zu B",
				 n);
			TRY(wait_cntr(e, e->r.cntr, v0 + 1, what));
		} else {
			struct fi_rma_iov rma = {t->region + 3 * SLOT_SIZE + off,
						 n, t->key};
			struct fi_msg_rma msg = {.msg_iov = iov,
						 .iov_count = 2,
						 .addr = e->partner,
						 .rma_iov = &rma,
						 .rma_iov_count = 1,
						 .context = &ctx};

			send_iov(e->sbuf, n, 2, SEED(PH_G, round, si, 3), iov);
			POST(e, fi_writemsg(e->r.ep, &msg,
					    FI_COMPLETION |
						    FI_DELIVERY_COMPLETE));
			snprintf(what, sizeof(what), "fi_writemsg of %zu B", n);
			TRY(wait_ok(e, &ctx, FI_RMA | FI_WRITE, &c, what));
		}
		/* reads of the target's read area */
		memset(e->rbuf, GUARD, n + 64);
		POST(e, fi_read(e->r.ep, e->rbuf, n, NULL, e->partner,
				t->region + WR_SLOTS * SLOT_SIZE + off, t->key,
				&ctx));
		snprintf(what, sizeof(what), "fi_read of %zu B", n);
		TRY(r = wait_ok(e, &ctx, FI_RMA | FI_READ, &c, what));
		if (!r) {
			check_pat(e, what, e->rbuf, n,
				  SEED(PH_G, e->partner, round, 99), off);
			check_const(e, what, e->rbuf + n, 64, GUARD);
		}
		recv_iov(e->rbuf, n, 4, iov);
		POST(e, fi_readv(e->r.ep, iov, NULL, 4, e->partner,
				 t->region + WR_SLOTS * SLOT_SIZE + off + 1,
				 t->key, &ctx));
		snprintf(what, sizeof(what), "fi_readv of %zu B", n);
		TRY(r = wait_ok(e, &ctx, FI_RMA | FI_READ, &c, what));
		if (!r) {
			/* stream from index off + 1: shift the pieces */
			size_t from = off + 1;

			for (k = 0; k < 4; k++) {
				check_pat(e, what, iov[k].iov_base,
					  iov[k].iov_len,
					  SEED(PH_G, e->partner, round, 99),
					  from);
				from += iov[k].iov_len;
			}
		}
		TRY(pair_sync(e)); /* the target checks */
		TRY(pair_sync(e));
	}
	if (ordered(e))
		TRY(order_initiator(e, round));
	/* errors */
	TRY(rma_error(e, true, 64, t->region + 64, BAD_KEY,
		      FI_EKEYREJECTED, "fi_write of 64 B with a wrong key"));
	TRY(rma_error(e, true, 65536, t->region + 64, BAD_KEY,
		      FI_EKEYREJECTED, "fi_write of 64 KiB with a wrong key"));
	TRY(rma_error(e, false, 64, t->region + 64, t->key ^ BAD_KEY,
		      FI_EKEYREJECTED, "fi_read with a wrong key"));
	TRY(rma_error(e, true, 64, t->region + REGION_SIZE - 32, t->key,
		      FI_EINVAL, "fi_write past the end of the region"));
	TRY(rma_error(e, true, 65536, t->region + REGION_SIZE - 32768,
		      t->key, FI_EINVAL,
		      "fi_write of 64 KiB past the end of the region"));
	TRY(rma_error(e, false, 64, t->region - 32, t->key, FI_EINVAL,
		      "fi_read before the start of the region"));
	TRY(rma_error(e, true, 64, t->ro, t->ro_key, FI_EACCES,
		      "fi_write to a region without FI_REMOTE_WRITE"));
	TRY(rma_error(e, true, 8192, t->ro + 100, t->ro_key, FI_EACCES,
		      "fi_write of 8 KiB to a region without "
		      "FI_REMOTE_WRITE"));
	/* the read-only region reads */
	memset(e->rbuf, 0, RO_SIZE);
	POST(e, fi_read(e->r.ep, e->rbuf, RO_SIZE, NULL, e->partner, t->ro,
			t->ro_key, &ctx));
	TRY(r = wait_ok(e, &ctx, FI_RMA | FI_READ, &c,
			"fi_read of the FI_REMOTE_READ-only region"));
	if (!r)
		check_pat(e, "fi_read of the FI_REMOTE_READ-only region",
			  e->rbuf, RO_SIZE, SEED(PH_G, e->partner, 98, 0), 0);
	TRY(expect_empty(e, "after the RMA round"));
	return pair_sync(e);
}

/* @w0, @r0: the FI_REMOTE_WRITE / READ counters before the initiator
 * started. */
static int rma_target(struct xfer_env *e, int round, uint64_t w0, uint64_t r0)
{
	struct comp c;
	char what[160];
	size_t si, n, off;
	int k, r;

	for (si = 0; si < NRMA; si++) {
		n = rma_sizes[si];
		off = 16 + si * 7;
		TRY(pair_sync(e)); /* the initiator's operations completed */
		TRY(poll_cq(e));
		for (k = 0; k < WR_SLOTS; k++) {
			static const char *const verb[WR_SLOTS] = {
				"fi_write", "fi_writev", "fi_writedata",
				"fi_inject_write/fi_writemsg"};
			uint8_t *p = slot_of(e, k) + off;

			snprintf(what, sizeof(what),
				 "%s of %zu B, seen at the target", verb[k], n);
			check_pat(e, what, p, n, SEED(PH_G, round, si, k), 0);
			check_const(e, what, p - 16, 16, GUARD);
			check_const(e, what, p + n, 16, GUARD);
			memset(p, GUARD, n);
		}
		snprintf(what, sizeof(what),
			 "remote CQ data of fi_writedata of %zu B", n);
		TRY(r = wait_comp(e, NULL, &c, what));
		if (!r) {
			check_flags(e, what, &c,
				    FI_RMA | FI_REMOTE_WRITE |
					    FI_REMOTE_CQ_DATA);
			check(e, c.e.data == (0xDA7A000000000000ULL | si),
			      "%s: data 0x%llx", what,
			      (unsigned long long)c.e.data);
			check(e, c.src == (fi_addr_t)e->partner,
			      "%s: fi_cq_readfrom source %llu, expected %d",
			      what, (unsigned long long)c.src, e->partner);
		}
		TRY(expect_empty(e, "at the RMA target"));
		TRY(pair_sync(e));
	}
	if (ordered(e))
		TRY(order_target(e, round));
	TRY(pair_sync(e)); /* error cases done */
	/* the refused writes aimed past the end, at the read area */
	check_pat(e, "read area after refused writes",
		  e->region + WR_SLOTS * SLOT_SIZE, SLOT_SIZE,
		  SEED(PH_G, e->rank, round, 99), 0);
	check_const(e, "write areas after refused writes", e->region,
		    WR_SLOTS * SLOT_SIZE, GUARD);
	check_pat(e, "FI_REMOTE_READ-only region after refused writes", e->ro,
		  RO_SIZE, SEED(PH_G, e->rank, 98, 0), 0);
	if (e->rma_event) {
		/* the refused writes do not count */
		size_t want = WR_SLOTS * NRMA + (ordered(e) ? 3 : 0);

		check(e, fi_cntr_read(e->rwcntr) - w0 == want,
		      "FI_REMOTE_WRITE counter (FI_RMA_EVENT) counted %llu "
		      "writes, expected %zu",
		      (unsigned long long)(fi_cntr_read(e->rwcntr) - w0), want);
		want = 2 * NRMA + 1 + (ordered(e) ? 1 : 0);
		check(e, fi_cntr_read(e->rrcntr) - r0 == want,
		      "FI_REMOTE_READ counter (FI_RMA_EVENT) counted %llu "
		      "reads, expected %zu",
		      (unsigned long long)(fi_cntr_read(e->rrcntr) - r0), want);
	}
	TRY(expect_empty(e, "after the RMA round"));
	return 0;
}

static int phase_rma(struct xfer_env *e)
{
	uint64_t w0 = 0, r0 = 0;
	int round;

	if (e->partner < 0)
		return 0;
	for (round = 0; round < rounds(e); round++) {
		bool initiator = (e->rank & 1) == (round & 1);

		if (!initiator) {
			/* the read area, and what must stay untouched */
			memset(e->region, GUARD, WR_SLOTS * SLOT_SIZE);
			fill(e->region + WR_SLOTS * SLOT_SIZE, SLOT_SIZE,
			     SEED(PH_G, e->rank, round, 99), 0);
			w0 = fi_cntr_read(e->rwcntr);
			r0 = fi_cntr_read(e->rrcntr);
		}
		TRY(pair_sync(e));
		TRY(initiator ? rma_initiator(e, round)
			      : rma_target(e, round, w0, r0));
	}
	return 0;
}

/* ---- h) atomics on rank 0 ---------------------------------------------------------------- */

/* One atomic (@fetch: fi_fetch_atomic) on rank 0 that must fail with @err. */
static int atomic_error(struct xfer_env *e, bool fetch, uint64_t addr,
			uint64_t key, enum fi_datatype dt, enum fi_op op,
			int err, const char *what)
{
	uint64_t v = 1, res = 0;
	struct fi_context ctx;
	struct comp c;
	int r;

	if (fetch)
		POST(e, fi_fetch_atomic(e->r.ep, &v, 1, NULL, &res, NULL, 0,
					addr, key, dt, op, &ctx));
	else
		POST(e, fi_atomic(e->r.ep, &v, 1, NULL, 0, addr, key, dt, op,
				  &ctx));
	TRY(r = wait_err(e, &ctx, err, &c, what));
	if (!r)
		check(e, (c.e.flags & FI_ATOMIC) != 0,
		      "%s: error entry flags 0x%llx", what,
		      (unsigned long long)c.e.flags);
	return 0;
}

static int phase_atomics(struct xfer_env *e)
{
	uint64_t a = e->sh->atom_addr, key = e->sh->atom_key, one = 1, old,
		 cmp, swp, total = (uint64_t)e->n * (uint64_t)e->o->iters;
	double dv = 0.5 + e->rank, dsum = 0;
	struct fi_context c1, c2, c3;
	size_t count = 0;
	struct comp c;
	char what[160];
	long it;
	int r, i;

	check(e, !fi_atomicvalid(e->r.ep, FI_UINT64, FI_SUM, &count) &&
			 count >= 1,
	      "fi_atomicvalid(FI_UINT64, FI_SUM) refused");
	check(e, !fi_fetch_atomicvalid(e->r.ep, FI_UINT64, FI_SUM, &count),
	      "fi_fetch_atomicvalid(FI_UINT64, FI_SUM) refused");
	check(e, !fi_compare_atomicvalid(e->r.ep, FI_UINT64, FI_CSWAP, &count),
	      "fi_compare_atomicvalid(FI_UINT64, FI_CSWAP) refused");
	check(e, !fi_atomicvalid(e->r.ep, FI_DOUBLE, FI_SUM, &count),
	      "fi_atomicvalid(FI_DOUBLE, FI_SUM) refused");
	/* errors first: a wrongly executed one shows in the totals below */
	TRY(atomic_error(e, false, a, BAD_KEY, FI_UINT64, FI_SUM,
			 FI_EKEYREJECTED, "fi_atomic with a wrong key"));
	TRY(atomic_error(e, false, a + 4, key, FI_UINT64, FI_SUM, FI_EINVAL,
			 "fi_atomic FI_UINT64 at a misaligned address"));
	TRY(atomic_error(e, true, a + 4096, key, FI_UINT64, FI_SUM, FI_EINVAL,
			 "fi_fetch_atomic past the end of the region"));
	TRY(atomic_error(e, false, e->sh->mr[0].ro, e->sh->mr[0].ro_key,
			 FI_UINT64, FI_SUM, FI_EACCES,
			 "fi_atomic on a region without FI_REMOTE_WRITE"));
	/* FI_ATOMIC_READ needs FI_REMOTE_READ only (fi_gba(7)) */
	old = 0;
	POST(e, fi_fetch_atomic(e->r.ep, &one, 1, NULL, &old, NULL, 0,
				e->sh->mr[0].ro + 64, e->sh->mr[0].ro_key,
				FI_UINT64, FI_ATOMIC_READ, &c1));
	TRY(wait_comp(e, &c1, &c,
		      "fi_fetch_atomic FI_ATOMIC_READ of rank 0's "
		      "FI_REMOTE_READ-only region"));
	if (c.err) {
		note(e, 3,
		     "fi_fetch_atomic FI_ATOMIC_READ of rank 0's region "
		     "registered with FI_REMOTE_READ only: error entry %s, "
		     "but fi_gba(7) says FI_ATOMIC_READ needs "
		     "FI_REMOTE_READ (and rank 0's own read is accepted)",
		     fi_strerror(c.err));
	} else {
		uint8_t want[8];

		fill(want, 8, SEED(PH_G, 0, 98, 0), 64);
		check(e, !memcmp(&old, want, 8),
		      "FI_ATOMIC_READ of rank 0's read-only region: 0x%llx",
		      (unsigned long long)old);
	}
	TRY(barrier(e));
	for (it = 0; it < e->o->iters; it++) {
		POST(e, fi_atomic(e->r.ep, &one, 1, NULL, 0, a, key, FI_UINT64,
				  FI_SUM, &c1));
		old = ~0ULL;
		POST(e, fi_fetch_atomic(e->r.ep, &one, 1, NULL, &old, NULL, 0,
					a + 8, key, FI_UINT64, FI_SUM, &c2));
		POST(e, fi_atomic(e->r.ep, &dv, 1, NULL, 0, a + 24, key,
				  FI_DOUBLE, FI_SUM, &c3));
		TRY(wait_ok(e, &c1, FI_ATOMIC | FI_WRITE, &c,
			    "fi_atomic FI_SUM FI_UINT64"));
		TRY(r = wait_ok(e, &c2, FI_ATOMIC | FI_READ, &c,
				"fi_fetch_atomic FI_SUM FI_UINT64"));
		e->fetched[(size_t)e->rank * (size_t)e->o->iters + (size_t)it] =
			r ? ~0ULL : old;
		TRY(wait_ok(e, &c3, FI_ATOMIC | FI_WRITE, &c,
			    "fi_atomic FI_SUM FI_DOUBLE"));
	}
	TRY(barrier(e));
	/* everybody reads the totals back */
	POST(e, fi_fetch_atomic(e->r.ep, &one, 1, NULL, &old, NULL, 0, a, key,
				FI_UINT64, FI_ATOMIC_READ, &c1));
	TRY(r = wait_ok(e, &c1, FI_ATOMIC | FI_READ, &c,
			"fi_fetch_atomic FI_ATOMIC_READ"));
	if (!r)
		check(e, old == total,
		      "FI_SUM total read with FI_ATOMIC_READ: %llu, expected "
		      "%llu",
		      (unsigned long long)old, (unsigned long long)total);
	if (e->rank == 0) {
		uint64_t *f = e->fetched, j;
		uint8_t *seen = calloc(total ? total : 1, 1);
		double want = 0;

		if (!seen)
			return fatal(e, "calloc", -FI_ENOMEM);
		check(e, e->atom[0] == total,
		      "fi_atomic FI_SUM FI_UINT64 from %d ranks x %ld: %llu, "
		      "expected %llu",
		      e->n, e->o->iters, (unsigned long long)e->atom[0],
		      (unsigned long long)total);
		check(e, e->atom[1] == total,
		      "fi_fetch_atomic FI_SUM total %llu, expected %llu",
		      (unsigned long long)e->atom[1],
		      (unsigned long long)total);
		for (j = 0; j < total; j++) {
			if (f[j] >= total || seen[f[j]]) {
				fail(e,
				     "fi_fetch_atomic of rank %llu, iteration "
				     "%llu returned %llu: %s",
				     (unsigned long long)(j / e->o->iters),
				     (unsigned long long)(j % e->o->iters),
				     (unsigned long long)f[j],
				     f[j] >= total ? "out of range"
						   : "returned twice");
				continue;
			}
			seen[f[j]] = 1;
		}
		e->checks++;
		free(seen);
		for (i = 0; i < e->n; i++)
			want += (0.5 + i) * (double)e->o->iters;
		memcpy(&dsum, &e->atom[3], sizeof(dsum));
		check(e, dsum == want,
		      "fi_atomic FI_SUM FI_DOUBLE total %.17g, expected %.17g",
		      dsum, want);
	}
	/* compare-and-swap: one winner per round */
	for (it = 0; it < e->o->iters; it++) {
		cmp = (uint64_t)it;
		swp = (uint64_t)it + 1;
		old = ~0ULL;
		POST(e, fi_compare_atomic(e->r.ep, &swp, 1, NULL, &cmp, NULL, &old,
					  NULL, 0, a + 16, key, FI_UINT64,
					  FI_CSWAP, &c1));
		snprintf(what, sizeof(what), "fi_compare_atomic round %ld", it);
		TRY(r = wait_ok(e, &c1, FI_ATOMIC | FI_READ, &c, what));
		if (!r) {
			if (old == cmp)
				atomic_fetch_add(&e->wins[it], 1);
			else
				check(e, old == swp,
				      "%s: old value %llu, expected %llu or "
				      "%llu",
				      what, (unsigned long long)old,
				      (unsigned long long)cmp,
				      (unsigned long long)swp);
		}
		TRY(barrier(e));
		if (e->rank == 0) {
			check(e, atomic_load(&e->wins[it]) == 1,
			      "%s: %d ranks swapped, expected exactly 1", what,
			      atomic_load(&e->wins[it]));
			check(e, e->atom[2] == swp,
			      "%s: value %llu after the round, expected %llu",
			      what, (unsigned long long)e->atom[2],
			      (unsigned long long)swp);
		}
		TRY(barrier(e));
	}
	TRY(expect_empty(e, "after the atomics"));
	return 0;
}

/* ---- Setup ---------------------------------------------------------------------------- */

static int xfer_getinfo(struct xfer_env *e, uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = caps;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode =
		FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(e->o->prov);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &e->r.info);
	fi_freeinfo(hints);
	return ret;
}

static int xfer_open(struct xfer_env *e)
{
	const uint64_t caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |
			      FI_MULTI_RECV | FI_DIRECTED_RECV | FI_SOURCE;
	struct fi_eq_attr eq_attr = {.size = 64, .wait_obj = FI_WAIT_UNSPEC};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED,
				     .size = 16384};
	struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct ft_res *r = &e->r;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = xfer_getinfo(e, caps | FI_RMA_EVENT);
	if (ret == -FI_ENODATA)
		ret = xfer_getinfo(e, caps);
	if (ret)
		return ft_err("fi_getinfo", ret);
	e->rma_event = r->info->caps & FI_RMA_EVENT;
	if ((r->info->caps & caps) != caps)
		return ft_err("fi_getinfo: capabilities missing", -FI_ENODATA);
	FT_CHECK(fi_fabric(r->info->fabric_attr, &r->fabric, NULL));
	FT_CHECK(fi_domain(r->fabric, r->info, &r->domain, NULL));
	FT_CHECK(fi_eq_open(r->fabric, &eq_attr, &r->eq, NULL));
	FT_CHECK(fi_cq_open(r->domain, &cq_attr, &r->cq, NULL));
	FT_CHECK(fi_cntr_open(r->domain, &cntr_attr, &r->cntr, NULL));
	FT_CHECK(fi_cntr_open(r->domain, &cntr_attr, &e->rcntr, NULL));
	FT_CHECK(fi_cntr_open(r->domain, &cntr_attr, &e->rwcntr, NULL));
	FT_CHECK(fi_cntr_open(r->domain, &cntr_attr, &e->rrcntr, NULL));
	FT_CHECK(fi_av_open(r->domain, &av_attr, &r->av, NULL));
	FT_CHECK(fi_endpoint(r->domain, r->info, &r->ep, NULL));
	FT_CHECK(fi_ep_bind(r->ep, &r->eq->fid, 0));
	FT_CHECK(fi_ep_bind(r->ep, &r->av->fid, 0));
	FT_CHECK(fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV));
	FT_CHECK(fi_ep_bind(r->ep, &r->cntr->fid, FI_SEND | FI_WRITE | FI_READ));
	FT_CHECK(fi_ep_bind(r->ep, &e->rcntr->fid, FI_RECV));
	FT_CHECK(fi_ep_bind(r->ep, &e->rwcntr->fid, FI_REMOTE_WRITE));
	FT_CHECK(fi_ep_bind(r->ep, &e->rrcntr->fid, FI_REMOTE_READ));
	FT_CHECK(fi_enable(r->ep));
	return 0;
}

static void xfer_close(struct xfer_env *e)
{
	if (e->r.ep)
		fi_close(&e->r.ep->fid);
	e->r.ep = NULL;
	if (e->mr)
		fi_close(&e->mr->fid);
	if (e->ro_mr)
		fi_close(&e->ro_mr->fid);
	if (e->atom_mr)
		fi_close(&e->atom_mr->fid);
	if (e->rcntr)
		fi_close(&e->rcntr->fid);
	if (e->rwcntr)
		fi_close(&e->rwcntr->fid);
	if (e->rrcntr)
		fi_close(&e->rrcntr->fid);
	ft_close(&e->r);
	free(e->region);
	free(e->ro);
	free(e->sbuf);
	free(e->rbuf);
	free(e->ubuf);
	free(e->atom);
	free(e->stash);
}

static int xfer_mem(struct xfer_env *e)
{
	struct xfer_mrinfo *mi = &e->sh->mr[e->rank];

	if (posix_memalign((void **)&e->region, 4096, REGION_SIZE) ||
	    posix_memalign((void **)&e->ro, 4096, RO_SIZE) ||
	    posix_memalign((void **)&e->atom, 4096, 4096))
		return ft_err("posix_memalign", -FI_ENOMEM);
	e->sbuf = malloc(BUF_SIZE);
	e->rbuf = malloc(BUF_SIZE);
	e->ubuf = malloc(2 * BUF_SIZE);
	if (!e->sbuf || !e->rbuf || !e->ubuf)
		return ft_err("malloc", -FI_ENOMEM);
	memset(e->region, GUARD, REGION_SIZE);
	fill(e->ro, RO_SIZE, SEED(PH_G, e->rank, 98, 0), 0);
	memset(e->atom, 0, 4096);
	FT_CHECK(fi_mr_reg(e->r.domain, e->region, REGION_SIZE,
			   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &e->mr,
			   NULL));
	FT_CHECK(fi_mr_reg(e->r.domain, e->ro, RO_SIZE, FI_REMOTE_READ, 0, 0,
			   0, &e->ro_mr, NULL));
	mi->region = (uint64_t)(uintptr_t)e->region;
	mi->key = fi_mr_key(e->mr);
	mi->ro = (uint64_t)(uintptr_t)e->ro;
	mi->ro_key = fi_mr_key(e->ro_mr);
	if (e->rank == 0) {
		FT_CHECK(fi_mr_reg(e->r.domain, e->atom, 4096,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				   &e->atom_mr, NULL));
		e->sh->atom_addr = (uint64_t)(uintptr_t)e->atom;
		e->sh->atom_key = fi_mr_key(e->atom_mr);
	}
	return 0;
}

static size_t xfer_shared_size(const struct ft_opts *o)
{
	return sizeof(struct xfer_shared) +
	       (size_t)o->iters * sizeof(atomic_int) + 64 +
	       (size_t)o->nprocs * (size_t)o->iters * sizeof(uint64_t);
}

struct xfer_phase {
	const char *name;
	int (*run)(struct xfer_env *e);
};

static const struct xfer_phase phases[] = {
	{"pingpong", phase_pingpong}, {"unexp", phase_unexp},
	{"directed", phase_directed}, {"peek", phase_peek},
	{"multirecv", phase_multirecv}, {"trunc", phase_trunc},
	{"cancel", phase_cancel},     {"rma", phase_rma},
	{"atomics", phase_atomics},
};

static int xfer_child(int rank, void *shared, const struct ft_opts *o)
{
	struct xfer_env e;
	size_t i;
	double t0, t;
	int ret;

	memset(&e, 0, sizeof(e));
	e.sh = shared;
	e.o = o;
	e.rank = rank;
	e.n = o->nprocs;
	e.partner = (rank ^ 1) < o->nprocs ? rank ^ 1 : -1;
	e.phase = "setup";
	e.wait_ms = o->timeout_s * 1000 / 2;
	e.wins = (atomic_int *)(e.sh + 1);
	e.fetched = (uint64_t *)(((uintptr_t)(e.wins + o->iters) + 63) &
				 ~(uintptr_t)63);
	ret = xfer_open(&e);
	if (!ret)
		ret = xfer_mem(&e);
	if (!ret)
		ret = ft_exchange(&e.r, &e.sh->hdr, rank, o->nprocs,
				  o->timeout_s);
	if (!ret)
		ret = barrier(&e); /* keys and addresses published */
	if (ret) {
		xfer_close(&e);
		return 1;
	}
	if (rank == 0 && o->verbose)
		printf(PROG ": %d processes, FI_RMA_EVENT %s\n", o->nprocs,
		       e.rma_event ? "granted" : "not granted: counter "
						 "check skipped");
	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		e.phase = phases[i].name;
		t0 = ft_now_us();
		ret = phases[i].run(&e);
		if (!ret)
			ret = expect_empty(&e, "at the end of the phase");
		if (!ret)
			ret = barrier(&e);
		if (ret) {
			fprintf(stderr, PROG "[%d]: phase %s stopped\n", rank,
				e.phase);
			break;
		}
		t = (ft_now_us() - t0) / 1e3;
		if (rank == 0 && o->verbose)
			printf(PROG ": %-9s %8.1f ms\n", e.phase, t);
	}
	atomic_fetch_add(&e.sh->checks, e.checks);
	atomic_fetch_add(&e.sh->errors, e.errors);
	atomic_fetch_add(&e.sh->notes, e.notes);
	if (!ret) {
		e.phase = "end";
		ret = barrier(&e); /* every process's counts are in */
	}
	if (!ret) {
		if (rank == 0)
			printf(PROG ": %d processes, %ld iterations: tagged "
				    "ping-pong 0 B..1 MiB, unexpected%s, "
				    "peek/claim/discard, multi-recv, "
				    "truncation, cancel, RMA%s, atomics: %ld "
				    "checks, %ld failed, %ld notes\n",
			       o->nprocs, o->iters,
			       o->nprocs >= 3 ? ", directed" : "",
			       e.rma_event ? " (FI_RMA_EVENT)" : "",
			       atomic_load(&e.sh->checks),
			       atomic_load(&e.sh->errors),
			       atomic_load(&e.sh->notes));
		fflush(stdout);
		ret = barrier(&e); /* printed before anybody exits */
	}
	xfer_close(&e);
	return ret || e.errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {
		.prov = "gba", .iters = 10, .nprocs = 2, .timeout_s = 120};

	ft_parse(argc, argv, &o, PROG,
		 "  (-I: iterations per size and rounds, default 10; -n: "
		 "2 or more)\n");
	if (o.nprocs < 2 || o.iters < 1) {
		fprintf(stderr, PROG ": needs -n 2 or more and -I 1 or more\n");
		return 2;
	}
	return ft_fork_run(&o, xfer_shared_size(&o), xfer_child);
}
