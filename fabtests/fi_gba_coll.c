/*
 * fi_gba_coll - conformance of every collective of fi_collective(3).
 *
 * -n processes (forked) join two collectives: the full set (every
 * process) and a strided subset (every other process: start_addr = the
 * rank's parity, stride 2, as fabtests' fi_multinode_coll builds its
 * sets; the even and the odd subsets run side by side).  Rank 0 joins
 * 50 ms late, progressing meanwhile, while the others already post a
 * short random stream: their messages reach it before it joined.  Then:
 *   - fi_query_collective for every collective, datatype and operation;
 *   - on each collective, every collective call (fi_barrier,
 *     fi_broadcast, fi_allreduce, fi_reduce, fi_reduce_scatter,
 *     fi_allgather, fi_alltoall, fi_scatter, fi_gather) for counts 1, 7
 *     and 1000 (per member, or per block for fi_alltoall and
 *     fi_reduce_scatter), datatypes UINT8, INT32, UINT64, DOUBLE
 *     (reductions: INT64 as well, with every operation the datatype
 *     supports), -I operations per case (rooted collectives: rounded up
 *     to a multiple of the member count, the root moving through every
 *     member), up to 8 in flight;
 *   - a stream of 64 x -I operations picked at random (the same stream
 *     in every process: any collective, datatype, supported operation,
 *     count up to 1500, root) over both collectives, up to 16 in
 *     flight; they complete in any order, members match them by their
 *     sequence;
 *   - a flood: rank 0, the root, stays away from the library while the
 *     others post 600 allreduces (then 300 of 8000 bytes) back to back,
 *     more than its receive queue holds: refused sends must be retried.
 * Every contribution is a deterministic function of (operation, process,
 * element); each process computes the expected results (reductions
 * combined in member order; DOUBLE values are multiples of 1/8 below
 * 2^20 or powers of two, so sums and products are exact) and compares
 * them byte for byte, checks that inputs are unchanged, that nothing is
 * written past a result or into the buffers a member does not own, that
 * completions carry FI_COLLECTIVE and their context, and that the
 * FI_SEND counter counts them.  NULL is passed for the buffers a member
 * does not use (fi_scatter's buf, fi_reduce's and fi_gather's result
 * away from the root) on every other operation.
 * Then: argument errors (-FI_EINVAL: count 0 or not a multiple of the
 * members, root not a member, NULL buffers, also those only the root
 * uses, coll_addr not joined; -FI_EOPNOTSUPP: every datatype/operation
 * pair fi_query_collective refuses; -FI_EBADFLAGS) post and complete
 * nothing; an allreduce whose members disagree on the count completes in
 * error (FI_EINVAL) everywhere instead of hanging; fi_close of a
 * collective with an operation in flight returns -FI_EBUSY, 0 once it
 * completed, and a closed collective is not joined any more.
 * -r R delays one post in four by up to R us.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gba_ft_common.h"

#define PROG "fi_gba_coll"
#define NSLOTS 16     /* in flight in the random stream */
#define FLOOD 600     /* in flight in the flood test */
#define CASE_WINDOW 8 /* in flight in the per-case runs */
#define GUARD 64      /* bytes checked past every buffer */
#define SENTINEL 0xa5
#define STALL_MS 20000 /* no completion for this long: fail */

struct coll_shared {
	struct ft_shared hdr;
	atomic_int busy_posted;	    /* EBUSY test: rank 0 posted */
	atomic_int flood_ready[2];  /* flood test: ranks drained */
	atomic_int flood_posted[2]; /* flood test: ranks that posted */
};

/* One joined collective as this process sees it. */
struct cset {
	const char *name;
	struct fid_av_set *avs;
	struct fid_mc *mc;
	fi_addr_t addr;		 /* fi_mc_addr */
	int m;			 /* members */
	int me;			 /* my member index */
	int ranks[FT_MAX_PROCS]; /* member index -> rank (== fi_addr) */
	uint64_t seq;		 /* operations posted on it */
};

/* What to post. */
struct desc {
	enum fi_collective_op coll;
	enum fi_datatype dt;
	enum fi_op rop; /* FI_NOOP unless a reduction */
	size_t c;	/* elements per member / per block */
	int root;	/* member index */
};

/* One operation in flight (its address is the context). */
struct op {
	struct desc d;
	struct cset *s;
	uint64_t seq;
	uint8_t *buf, *res; /* NULL: passed as NULL */
	size_t blen, rlen;  /* bytes (without the guard) */
	bool busy;
};

struct ctx {
	struct ft_res r;
	const struct ft_opts *o;
	struct coll_shared *sh;
	int rank;
	struct op *slots; /* FLOOD of them */
	int inflight;
	uint64_t posted, completed;
	uint64_t errors; /* error completions expected and seen */
	uint64_t per_coll[FI_GATHER + 1];
	uint64_t last_progress_ms;
};

static const char *coll_name(enum fi_collective_op c)
{
	static const char *const names[] = {
		[FI_BARRIER] = "barrier",
		[FI_BROADCAST] = "broadcast",
		[FI_ALLTOALL] = "alltoall",
		[FI_ALLREDUCE] = "allreduce",
		[FI_ALLGATHER] = "allgather",
		[FI_REDUCE_SCATTER] = "reduce_scatter",
		[FI_REDUCE] = "reduce",
		[FI_SCATTER] = "scatter",
		[FI_GATHER] = "gather",
	};

	return (unsigned)c <= FI_GATHER ? names[c] : "?";
}

static const char *dt_name(enum fi_datatype dt)
{
	static const char *const names[] = {
		"INT8",	  "UINT8", "INT16",  "UINT16", "INT32",
		"UINT32", "INT64", "UINT64", "FLOAT",  "DOUBLE",
	};

	return (unsigned)dt <= FI_DOUBLE ? names[dt] : "?";
}

static const char *op_name(enum fi_op op)
{
	static const char *const names[] = {
		"MIN",	"MAX", "SUM",  "PROD", "LOR",
		"LAND", "BOR", "BAND", "LXOR", "BXOR",
	};

	if (op == FI_NOOP)
		return "NOOP";
	return (unsigned)op <= FI_BXOR ? names[op] : "?";
}

static size_t dt_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8:
	case FI_UINT8:
		return 1;
	case FI_INT16:
	case FI_UINT16:
		return 2;
	case FI_INT32:
	case FI_UINT32:
	case FI_FLOAT:
		return 4;
	case FI_INT64:
	case FI_UINT64:
	case FI_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

static bool is_float(enum fi_datatype dt)
{
	return dt == FI_FLOAT || dt == FI_DOUBLE;
}

static bool is_reduction(enum fi_collective_op c)
{
	return c == FI_ALLREDUCE || c == FI_REDUCE || c == FI_REDUCE_SCATTER;
}

static bool is_rooted(enum fi_collective_op c)
{
	return c == FI_BROADCAST || c == FI_REDUCE || c == FI_SCATTER ||
	       c == FI_GATHER;
}

/* Operations fi_collective(3) reductions take on @dt (the provider's). */
static bool op_valid(enum fi_datatype dt, enum fi_op op)
{
	if (op < FI_MIN || op > FI_BXOR)
		return false;
	if (op == FI_BOR || op == FI_BAND || op == FI_BXOR)
		return !is_float(dt);
	return true;
}

/* ---- data ------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Element @e of process @rank's contribution to operation @seq (same
 * in every process).  Zero often enough for the logical operations to
 * give both answers; DOUBLE/FLOAT: multiples of 1/8 in [-2^20, 2^20)
 * (sums exact), for FI_PROD +-2^-4..2^4 (products exact).
 */
static void gen(void *out, enum fi_datatype dt, enum fi_op rop, uint64_t seq,
		int rank, size_t e)
{
	uint64_t h = mix64(mix64(seq) ^ ((uint64_t)rank << 40) ^ e);
	bool logic = rop == FI_LOR || rop == FI_LAND || rop == FI_LXOR;
	bool zero = logic ? (h & 1) : (h & 7) == 0;
	uint64_t v = zero ? 0 : h >> 3;
	double d;

	switch (dt) {
	case FI_INT8:
	case FI_UINT8:
	case FI_INT16:
	case FI_UINT16:
	case FI_INT32:
	case FI_UINT32:
	case FI_INT64:
	case FI_UINT64: {
		size_t n = dt_size(dt);

		/* the low n bytes (little-endian), non-zero unless @zero */
		if (!zero && n < 8 && !(v & ((1ULL << (8 * n)) - 1)))
			v = 1;
		memcpy(out, &v, n);
		return;
	}
	case FI_FLOAT:
	case FI_DOUBLE:
		if (zero)
			d = 0.0;
		else if (rop == FI_PROD)
			d = ldexp((h >> 12) & 1 ? -1.0 : 1.0,
				  (int)((h >> 13) % 9) - 4);
		else
			d = ((double)((h >> 40) & 0xffffff) - 8388608.0) / 8.0;
		if (dt == FI_FLOAT) {
			float f = (float)d;
			memcpy(out, &f, 4);
		} else {
			memcpy(out, &d, 8);
		}
		return;
	default:
		abort();
	}
}

/* The cases integer and floating-point reductions share. */
#define REF_CMP_LOGIC(T)                                                       \
	case FI_MIN:                                                           \
		r = b < a ? b : a;                                             \
		break;                                                         \
	case FI_MAX:                                                           \
		r = b > a ? b : a;                                             \
		break;                                                         \
	case FI_LOR:                                                           \
		r = (T)(a || b);                                               \
		break;                                                         \
	case FI_LAND:                                                          \
		r = (T)(a && b);                                               \
		break;                                                         \
	case FI_LXOR:                                                          \
		r = (T)(!a != !b);                                             \
		break

/* Integers: sums and products wrap (computed unsigned), bitwise ops. */
#define REF_INT(T, U)                                                          \
	do {                                                                   \
		T a, b, r;                                                     \
		memcpy(&a, acc, sizeof(T));                                    \
		memcpy(&b, v, sizeof(T));                                      \
		switch (op) {                                                  \
			REF_CMP_LOGIC(T);                                      \
		case FI_SUM:                                                   \
			r = (T)(U)((uint64_t)(U)a + (uint64_t)(U)b);           \
			break;                                                 \
		case FI_PROD:                                                  \
			r = (T)(U)((uint64_t)(U)a * (uint64_t)(U)b);           \
			break;                                                 \
		case FI_BOR:                                                   \
			r = (T)(a | b);                                        \
			break;                                                 \
		case FI_BAND:                                                  \
			r = (T)(a & b);                                        \
			break;                                                 \
		case FI_BXOR:                                                  \
			r = (T)(a ^ b);                                        \
			break;                                                 \
		default:                                                       \
			abort();                                               \
		}                                                              \
		memcpy(acc, &r, sizeof(T));                                    \
	} while (0)

#define REF_FLT(T)                                                             \
	do {                                                                   \
		T a, b, r;                                                     \
		memcpy(&a, acc, sizeof(T));                                    \
		memcpy(&b, v, sizeof(T));                                      \
		switch (op) {                                                  \
			REF_CMP_LOGIC(T);                                      \
		case FI_SUM:                                                   \
			r = a + b;                                             \
			break;                                                 \
		case FI_PROD:                                                  \
			r = a * b;                                             \
			break;                                                 \
		default:                                                       \
			abort();                                               \
		}                                                              \
		memcpy(acc, &r, sizeof(T));                                    \
	} while (0)

/* *@acc = @acc op @v (the reference, fi_atomic(3) semantics). */
static void combine(enum fi_datatype dt, enum fi_op op, void *acc,
		    const void *v)
{
	switch (dt) {
	case FI_INT8:
		REF_INT(int8_t, uint8_t);
		break;
	case FI_UINT8:
		REF_INT(uint8_t, uint8_t);
		break;
	case FI_INT16:
		REF_INT(int16_t, uint16_t);
		break;
	case FI_UINT16:
		REF_INT(uint16_t, uint16_t);
		break;
	case FI_INT32:
		REF_INT(int32_t, uint32_t);
		break;
	case FI_UINT32:
		REF_INT(uint32_t, uint32_t);
		break;
	case FI_INT64:
		REF_INT(int64_t, uint64_t);
		break;
	case FI_UINT64:
		REF_INT(uint64_t, uint64_t);
		break;
	case FI_FLOAT:
		REF_FLT(float);
		break;
	case FI_DOUBLE:
		REF_FLT(double);
		break;
	default:
		abort();
	}
}

/* Element @e of every member's contribution combined in member order. */
static void reduce_ref(void *out, const struct op *p, size_t e)
{
	uint8_t v[8];
	int i;

	gen(out, p->d.dt, p->d.rop, p->seq, p->s->ranks[0], e);
	for (i = 1; i < p->s->m; i++) {
		gen(v, p->d.dt, p->d.rop, p->seq, p->s->ranks[i], e);
		combine(p->d.dt, p->d.rop, out, v);
	}
}

/* ---- buffers ----------------------------------------------------------- */

/* Elements of buf and result this member passes for @d on @s. */
static void op_sizes(const struct desc *d, const struct cset *s, size_t *bn,
		     size_t *rn)
{
	size_t c = d->c, m = (size_t)s->m;

	*bn = *rn = 0;
	switch (d->coll) {
	case FI_BARRIER:
		break;
	case FI_BROADCAST:
		*bn = c;
		break;
	case FI_ALLREDUCE:
	case FI_REDUCE:
		*bn = c;
		*rn = c;
		break;
	case FI_REDUCE_SCATTER:
		*bn = c * m;
		*rn = c;
		break;
	case FI_ALLGATHER:
		*bn = c;
		*rn = c * m;
		break;
	case FI_ALLTOALL:
		*bn = c * m;
		*rn = c * m;
		break;
	case FI_SCATTER:
		*bn = c * m;
		*rn = c;
		break;
	case FI_GATHER:
		*bn = c;
		*rn = c * m;
		break;
	default:
		abort();
	}
}

/* True if this member's buffer for @p is an input (not an output). */
static bool buf_is_input(const struct op *p)
{
	bool root = p->s->me == p->d.root;

	if (p->d.coll == FI_BROADCAST || p->d.coll == FI_SCATTER)
		return root;
	return true;
}

/* True if this member's result for @p is written. */
static bool res_is_output(const struct op *p)
{
	bool root = p->s->me == p->d.root;

	if (p->d.coll == FI_REDUCE || p->d.coll == FI_GATHER)
		return root;
	return p->d.coll != FI_BROADCAST && p->d.coll != FI_BARRIER;
}

/* Fill @out (@p->blen bytes) with this member's contribution. */
static void fill_input(const struct op *p, uint8_t *out)
{
	size_t es = dt_size(p->d.dt), i, n = p->blen / es;

	for (i = 0; i < n; i++)
		gen(out + i * es, p->d.dt, p->d.rop, p->seq,
		    p->s->ranks[p->s->me], i);
}

/* Fill @out (@p->rlen bytes, or blen for broadcast) with the answer. */
static void fill_expected(const struct op *p, uint8_t *out)
{
	size_t es = dt_size(p->d.dt), c = p->d.c, me = (size_t)p->s->me;
	const int *rk = p->s->ranks;
	size_t e, n;

	switch (p->d.coll) {
	case FI_BROADCAST:
		for (e = 0; e < c; e++)
			gen(out + e * es, p->d.dt, p->d.rop, p->seq,
			    rk[p->d.root], e);
		break;
	case FI_ALLREDUCE:
	case FI_REDUCE:
		for (e = 0; e < c; e++)
			reduce_ref(out + e * es, p, e);
		break;
	case FI_REDUCE_SCATTER:
		for (e = 0; e < c; e++)
			reduce_ref(out + e * es, p, me * c + e);
		break;
	case FI_ALLGATHER:
	case FI_GATHER:
		n = p->rlen / es;
		for (e = 0; e < n; e++)
			gen(out + e * es, p->d.dt, p->d.rop, p->seq, rk[e / c],
			    e % c);
		break;
	case FI_ALLTOALL:
		n = p->rlen / es;
		for (e = 0; e < n; e++)
			gen(out + e * es, p->d.dt, p->d.rop, p->seq, rk[e / c],
			    me * c + e % c);
		break;
	case FI_SCATTER:
		for (e = 0; e < c; e++)
			gen(out + e * es, p->d.dt, p->d.rop, p->seq,
			    rk[p->d.root], me * c + e);
		break;
	default:
		break;
	}
}

static void op_print(FILE *f, const struct op *p)
{
	fprintf(f,
		"%s on the %s set (member %d of %d), sequence %llu, %s %s, "
		"count %zu, root member %d",
		coll_name(p->d.coll), p->s->name, p->s->me, p->s->m,
		(unsigned long long)p->seq, dt_name(p->d.dt), op_name(p->d.rop),
		p->d.c, p->d.root);
}

/* Compare @got with @want (@len bytes plus GUARD sentinel bytes). */
static int cmp_bytes(const struct op *p, const char *what, const uint8_t *got,
		     const uint8_t *want, size_t len)
{
	size_t es = dt_size(p->d.dt), i;

	for (i = 0; i < len + GUARD; i++) {
		uint8_t w = i < len ? want[i] : SENTINEL;

		if (got[i] == w)
			continue;
		fprintf(stderr, PROG "[%d]: ", (int)getpid());
		op_print(stderr, p);
		if (i < len)
			fprintf(stderr,
				": %s element %zu byte %zu is 0x%02x, "
				"0x%02x expected\n",
				what, i / es, i % es, got[i], w);
		else
			fprintf(stderr, ": %s written %zu bytes past its end\n",
				what, i - len);
		return -FI_EOTHER;
	}
	return 0;
}

/* Check the buffers of completed @p. */
static int op_check(const struct op *p)
{
	size_t len = p->blen > p->rlen ? p->blen : p->rlen;
	uint8_t *want = malloc(len ? len : 1);
	int ret = 0;

	if (!want)
		return ft_err("malloc", -FI_ENOMEM);
	if (p->buf) {
		if (p->d.coll == FI_BROADCAST)
			fill_expected(p, want);
		else if (buf_is_input(p))
			fill_input(p, want);
		else
			memset(want, SENTINEL, p->blen);
		ret = cmp_bytes(p, "buf", p->buf, want, p->blen);
	}
	if (!ret && p->res) {
		if (res_is_output(p))
			fill_expected(p, want);
		else
			memset(want, SENTINEL, p->rlen);
		ret = cmp_bytes(p, "result", p->res, want, p->rlen);
	}
	free(want);
	return ret;
}

/* ---- posting and completions ------------------------------------------ */

/* Post @p; returns the provider's answer. */
static ssize_t op_post(struct ctx *x, struct op *p)
{
	struct fid_ep *ep = x->r.ep;
	fi_addr_t ca = p->s->addr, root = (fi_addr_t)p->s->ranks[p->d.root];
	size_t c = p->d.c, m = (size_t)p->s->m;
	enum fi_datatype dt = p->d.dt;

	switch (p->d.coll) {
	case FI_BARRIER:
		return fi_barrier(ep, ca, p);
	case FI_BROADCAST:
		return fi_broadcast(ep, p->buf, c, NULL, ca, root, dt, 0, p);
	case FI_ALLREDUCE:
		return fi_allreduce(ep, p->buf, c, NULL, p->res, NULL, ca, dt,
				    p->d.rop, 0, p);
	case FI_REDUCE:
		return fi_reduce(ep, p->buf, c, NULL, p->res, NULL, ca, root,
				 dt, p->d.rop, 0, p);
	case FI_REDUCE_SCATTER:
		return fi_reduce_scatter(ep, p->buf, c * m, NULL, p->res, NULL,
					 ca, dt, p->d.rop, 0, p);
	case FI_ALLGATHER:
		return fi_allgather(ep, p->buf, c, NULL, p->res, NULL, ca, dt,
				    0, p);
	case FI_ALLTOALL:
		return fi_alltoall(ep, p->buf, c * m, NULL, p->res, NULL, ca,
				   dt, 0, p);
	case FI_SCATTER:
		return fi_scatter(ep, p->buf, c, NULL, p->res, NULL, ca, root,
				  dt, 0, p);
	case FI_GATHER:
		return fi_gather(ep, p->buf, c, NULL, p->res, NULL, ca, root,
				 dt, 0, p);
	default:
		return -FI_EINVAL;
	}
}

static void op_free(struct op *p)
{
	free(p->buf);
	free(p->res);
	p->buf = p->res = NULL;
	p->busy = false;
}

static void print_outstanding(struct ctx *x)
{
	int i;

	for (i = 0; i < FLOOD; i++) {
		if (!x->slots[i].busy)
			continue;
		fprintf(stderr, PROG "[%d]: outstanding: ", x->rank);
		op_print(stderr, &x->slots[i]);
		fprintf(stderr, "\n");
	}
}

/*
 * Read the CQ once: check and retire what completed.  Yields the CPU when
 * nothing did.  Returns 0 or a negative error.
 */
static int poll_once(struct ctx *x)
{
	struct fi_cq_data_entry comp[16];
	struct fi_cq_err_entry err;
	struct op *p;
	ssize_t n, i;
	int ret;

	n = fi_cq_read(x->r.cq, comp, 16);
	if (n == -FI_EAGAIN) {
		if (ft_now_ms() - x->last_progress_ms > STALL_MS) {
			fprintf(stderr, PROG "[%d]: no completion for %d s\n",
				x->rank, STALL_MS / 1000);
			print_outstanding(x);
			return -FI_ETIMEDOUT;
		}
		sched_yield();
		return 0;
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(x->r.cq, &err, 0);
		fprintf(stderr, PROG "[%d]: error completion %s (%d) for ",
			x->rank, fi_strerror(err.err), err.prov_errno);
		p = err.op_context;
		if (p >= x->slots && p < x->slots + FLOOD)
			op_print(stderr, p);
		else
			fprintf(stderr, "context %p", err.op_context);
		fprintf(stderr, "\n");
		return -err.err;
	}
	if (n < 0)
		return ft_err("fi_cq_read", (int)n);
	x->last_progress_ms = ft_now_ms();
	for (i = 0; i < n; i++) {
		p = comp[i].op_context;
		if (p < x->slots || p >= x->slots + FLOOD || !p->busy) {
			fprintf(stderr,
				PROG "[%d]: completion with unknown or "
				     "already completed context %p\n",
				x->rank, comp[i].op_context);
			return -FI_EOTHER;
		}
		if (!(comp[i].flags & FI_COLLECTIVE)) {
			fprintf(stderr,
				PROG "[%d]: completion flags 0x%llx lack "
				     "FI_COLLECTIVE\n",
				x->rank, (unsigned long long)comp[i].flags);
			return -FI_EOTHER;
		}
		ret = op_check(p);
		if (ret)
			return ret;
		x->completed++;
		x->per_coll[p->d.coll]++;
		x->inflight--;
		op_free(p);
	}
	return 0;
}

/* Wait until at most @max operations are in flight. */
static int drain(struct ctx *x, int max)
{
	int ret;

	x->last_progress_ms = ft_now_ms();
	while (x->inflight > max) {
		ret = poll_once(x);
		if (ret)
			return ret;
	}
	return 0;
}

static uint8_t *alloc_fill(size_t len, int byte)
{
	uint8_t *b = malloc(len + GUARD);

	if (b)
		memset(b, byte, len + GUARD);
	return b;
}

/* Post operation @d on @s as soon as fewer than @window are in flight. */
static int submit(struct ctx *x, struct cset *s, const struct desc *d,
		  int window)
{
	bool root = s->me == d->root, odd;
	size_t es = dt_size(d->dt), bn, rn;
	struct op *p = NULL;
	ssize_t ret;
	int i;

	ret = drain(x, window - 1);
	if (ret)
		return (int)ret;
	for (i = 0; i < FLOOD && !p; i++)
		if (!x->slots[i].busy)
			p = &x->slots[i];
	p->d = *d;
	p->s = s;
	p->seq = s->seq;
	odd = p->seq & 1;
	op_sizes(d, s, &bn, &rn);
	p->blen = bn * es;
	p->rlen = rn * es;
	if (bn && !(odd && !root && d->coll == FI_SCATTER)) {
		p->buf = alloc_fill(p->blen, SENTINEL);
		if (!p->buf)
			return ft_err("malloc", -FI_ENOMEM);
		if (buf_is_input(p))
			fill_input(p, p->buf);
	}
	if (rn &&
	    !(odd && !root && (d->coll == FI_REDUCE || d->coll == FI_GATHER))) {
		p->res = alloc_fill(p->rlen, SENTINEL);
		if (!p->res)
			return ft_err("malloc", -FI_ENOMEM);
	}
	p->busy = true;
	if (x->o->delay_us && !(rand() & 3))
		usleep((useconds_t)(rand() % (x->o->delay_us + 1)));
	for (;;) {
		ret = op_post(x, p);
		if (ret != -FI_EAGAIN)
			break;
		ret = poll_once(x);
		if (ret)
			break;
	}
	if (ret) {
		fprintf(stderr, PROG "[%d]: posting ", x->rank);
		op_print(stderr, p);
		fprintf(stderr, ": %zd (%s)\n", ret, fi_strerror((int)-ret));
		return (int)(ret < 0 ? ret : -FI_EOTHER);
	}
	s->seq++;
	x->posted++;
	x->inflight++;
	return 0;
}

/* ---- the sweeps ------------------------------------------------------- */

static const size_t counts[] = {1, 7, 1000};
static const enum fi_datatype move_dts[] = {FI_UINT8, FI_INT32, FI_UINT64,
					    FI_DOUBLE};
static const enum fi_datatype red_dts[] = {FI_UINT8, FI_INT32, FI_INT64,
					   FI_UINT64, FI_DOUBLE};
static const enum fi_collective_op data_colls[] = {
	FI_BROADCAST, FI_ALLREDUCE, FI_REDUCE,	FI_REDUCE_SCATTER,
	FI_ALLGATHER, FI_ALLTOALL,  FI_SCATTER, FI_GATHER,
};

/* -I operations of @d (every root in turn), CASE_WINDOW in flight. */
static int run_case(struct ctx *x, struct cset *s, struct desc d)
{
	long k, nops = x->o->iters ? x->o->iters : 1;
	int ret;

	if (is_rooted(d.coll))
		nops = (nops + s->m - 1) / s->m * s->m;
	for (k = 0; k < nops; k++) {
		d.root = is_rooted(d.coll) ? (int)(k % s->m) : 0;
		ret = submit(x, s, &d, CASE_WINDOW);
		if (ret)
			return ret;
	}
	return 0;
}

static int sweep(struct ctx *x, struct cset *s)
{
	struct desc d = {.coll = FI_BARRIER, .dt = FI_UINT8, .rop = FI_NOOP};
	size_t ci, di, ki, ndt;
	const enum fi_datatype *dts;
	int op, ret;

	ret = run_case(x, s, d); /* barriers */
	if (ret)
		return ret;
	for (ci = 0; ci < sizeof(data_colls) / sizeof(data_colls[0]); ci++) {
		d.coll = data_colls[ci];
		dts = is_reduction(d.coll) ? red_dts : move_dts;
		ndt = is_reduction(d.coll) ? 5 : 4;
		for (di = 0; di < ndt; di++) {
			d.dt = dts[di];
			for (op = FI_MIN; op <= FI_BXOR; op++) {
				if (is_reduction(d.coll) &&
				    !op_valid(d.dt, (enum fi_op)op))
					continue;
				d.rop = is_reduction(d.coll) ? (enum fi_op)op
							     : FI_NOOP;
				for (ki = 0; ki < 3; ki++) {
					d.c = counts[ki];
					ret = run_case(x, s, d);
					if (ret)
						return ret;
				}
				if (!is_reduction(d.coll))
					break;
			}
		}
		if (x->o->verbose && x->rank == 0)
			printf(PROG ": %s set: %s checked\n", s->name,
			       coll_name(d.coll));
	}
	return drain(x, 0);
}

/*
 * A random stream (the same in every process: @seed) of @nops operations
 * over @full and @sub, NSLOTS in flight.
 */
static int stream(struct ctx *x, struct cset *full, struct cset *sub, long nops,
		  uint64_t seed)
{
	static const enum fi_collective_op all[] = {
		FI_BARRIER,  FI_BROADCAST,	FI_ALLREDUCE,
		FI_REDUCE,   FI_REDUCE_SCATTER, FI_ALLGATHER,
		FI_ALLTOALL, FI_SCATTER,	FI_GATHER,
	};
	static const size_t scounts[] = {1, 2, 3, 7, 64, 1000, 1500};
	struct cset *s;
	struct desc d;
	uint64_t h;
	long k;
	int ret;

	for (k = 0; k < nops; k++) {
		h = mix64(seed + (uint64_t)k);
		s = (h & 1) ? sub : full;
		h >>= 1;
		d.coll = all[h % 9];
		h /= 9;
		d.dt = (enum fi_datatype)(h % 10);
		h /= 10;
		d.rop = FI_NOOP;
		if (is_reduction(d.coll)) {
			d.rop = (enum fi_op)(h % 10);
			if (!op_valid(d.dt, d.rop))
				d.rop = FI_SUM;
		}
		h /= 10;
		d.c = scounts[h % 7];
		h /= 7;
		d.root = (int)((h & 0xffff) % (uint64_t)s->m);
		ret = submit(x, s, &d, NSLOTS);
		if (ret)
			return ret;
	}
	return drain(x, 0);
}

/*
 * Wait until *@flag reaches @value (other processes set it).  With
 * @progress the endpoint is progressed meanwhile (manual progress: the
 * answers our peers' large sends wait for go out only then); nothing is
 * in flight, so a completion is an error.
 */
static int wait_flag(struct ctx *x, atomic_int *flag, int value, bool progress)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)x->o->timeout_s * 1000;
	struct fi_cq_data_entry comp;
	ssize_t n;

	while (atomic_load(flag) < value) {
		if (atomic_load(&x->sh->hdr.failed))
			return ft_err("a peer failed", -FI_EIO);
		if (ft_now_ms() > deadline)
			return ft_err("waiting for the others", -FI_ETIMEDOUT);
		if (progress) {
			n = fi_cq_read(x->r.cq, &comp, 1);
			if (n != -FI_EAGAIN)
				return ft_err("unexpected completion",
					      n < 0 ? (int)n : -FI_EOTHER);
		}
		usleep(progress ? 20 : 200);
	}
	return 0;
}

/*
 * Flood: the root (rank 0) stays away from the library while every other
 * member posts @nops allreduces of @c elements back to back, more
 * contributions than the root's receive queue holds (256): the members
 * must retry the sends the full queue refused.  Then the root posts its
 * own and everything completes.
 */
static int flood(struct ctx *x, struct cset *full, int round, size_t c,
		 int nops)
{
	struct desc d = {
		.coll = FI_ALLREDUCE, .dt = FI_UINT64, .rop = FI_SUM, .c = c};
	int k, ret;

	if (full->m < 2)
		return 0;
	if (x->rank == 0) {
		/* progress until nobody needs us, then stay away */
		ret = wait_flag(x, &x->sh->flood_ready[round], full->m - 1,
				true);
		if (!ret)
			ret = wait_flag(x, &x->sh->flood_posted[round],
					full->m - 1, false);
		if (ret)
			return ret;
	} else {
		atomic_fetch_add(&x->sh->flood_ready[round], 1);
	}
	for (k = 0; k < nops; k++) {
		ret = submit(x, full, &d, FLOOD);
		if (ret)
			return ret;
	}
	if (x->rank != 0)
		atomic_fetch_add(&x->sh->flood_posted[round], 1);
	return drain(x, 0);
}

/* ---- local checks: query, argument errors ----------------------------- */

static int expect(const char *what, ssize_t got, int want)
{
	if (got == want)
		return 0;
	fprintf(stderr, PROG "[%d]: %s returned %zd (%s), %d (%s) expected\n",
		(int)getpid(), what, got, fi_strerror((int)-got), want,
		fi_strerror(-want));
	return -FI_EOTHER;
}

static int query_checks(struct ctx *x)
{
	static const enum fi_collective_op colls[] = {
		FI_BARRIER,   FI_BROADCAST, FI_ALLTOALL,
		FI_ALLREDUCE, FI_ALLGATHER, FI_REDUCE_SCATTER,
		FI_REDUCE,    FI_SCATTER,   FI_GATHER,
	};
	struct fi_collective_attr attr;
	char what[160];
	size_t ci;
	int dt, op, want, ret, fails = 0, checked = 0;
	bool ok;

	memset(&attr, 0, sizeof(attr));
	attr.op = FI_NOOP;
	ret = fi_query_collective(x->r.domain, FI_BARRIER, &attr, 0);
	fails += !!expect("fi_query_collective(FI_BARRIER, FI_NOOP)", ret, 0);
	attr.op = FI_SUM;
	ret = fi_query_collective(x->r.domain, FI_BARRIER, &attr, 0);
	fails += !!expect("fi_query_collective(FI_BARRIER, FI_SUM)", ret,
			  -FI_EOPNOTSUPP);
	fails += !!expect(
		"fi_query_collective(NULL attr)",
		fi_query_collective(x->r.domain, FI_ALLREDUCE, NULL, 0),
		-FI_EINVAL);
	for (ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++) {
		if (colls[ci] == FI_BARRIER)
			continue;
		for (dt = FI_INT8; dt <= FI_LONG_DOUBLE_COMPLEX + 2; dt++) {
			for (op = FI_MIN; op <= FI_NOOP; op++) {
				if (op > FI_MSWAP && op < FI_NOOP)
					op = FI_NOOP;
				ok = dt_size((enum fi_datatype)dt) &&
				     (is_reduction(colls[ci])
					      ? op_valid((enum fi_datatype)dt,
							 (enum fi_op)op)
					      : op == FI_NOOP);
				want = ok ? 0 : -FI_EOPNOTSUPP;
				memset(&attr, 0, sizeof(attr));
				attr.op = (enum fi_op)op;
				attr.datatype = (enum fi_datatype)dt;
				ret = fi_query_collective(x->r.domain,
							  colls[ci], &attr, 0);
				snprintf(what, sizeof(what),
					 "fi_query_collective(%s, %d, %d)",
					 coll_name(colls[ci]), dt, op);
				checked++;
				if (expect(what, ret, want)) {
					fails++;
					continue;
				}
				if (ret)
					continue;
				if (attr.datatype_attr.size !=
					    dt_size((enum fi_datatype)dt) ||
				    !attr.datatype_attr.count ||
				    attr.max_members < (size_t)x->o->nprocs) {
					fprintf(stderr,
						PROG ": %s: size %zu count %zu "
						     "max_members %zu\n",
						what, attr.datatype_attr.size,
						attr.datatype_attr.count,
						attr.max_members);
					fails++;
				}
			}
		}
	}
	/* bitwise operations are for integers only */
	memset(&attr, 0, sizeof(attr));
	attr.op = FI_BXOR;
	attr.datatype = FI_DOUBLE;
	fails += !!expect(
		"fi_query_collective(allreduce, BXOR, DOUBLE)",
		fi_query_collective(x->r.domain, FI_ALLREDUCE, &attr, 0),
		-FI_EOPNOTSUPP);
	attr.op = FI_SUM;
	attr.datatype = FI_DOUBLE;
	fails += !!expect("fi_query_collective(reduce_scatter, SUM, DOUBLE, "
			  "FI_SCATTER)",
			  fi_query_collective(x->r.domain, FI_REDUCE_SCATTER,
					      &attr, FI_SCATTER),
			  0);
	if (x->o->verbose && x->rank == 0)
		printf(PROG ": %d fi_query_collective answers checked\n",
		       checked);
	return fails ? -FI_EOTHER : 0;
}

/*
 * Calls that must fail at once, post nothing, complete nothing and not
 * consume a sequence number (the operations that follow still match).
 */
static int error_checks(struct ctx *x, struct cset *full, struct cset *sub)
{
	uint64_t b[64] = {0}, r[64 * FT_MAX_PROCS] = {0};
	struct fi_cq_data_entry comp;
	struct fid_ep *ep = x->r.ep;
	fi_addr_t ca = full->addr, me = (fi_addr_t)x->rank, set_addr;
	fi_addr_t bogus = (fi_addr_t)0x1234, notmember;
	size_t n = (size_t)full->m;
	int fails = 0, dt, op;
	ssize_t ret;

#define EXPECT(call, want) (fails += !!expect(#call, (call), (want)))
	/* counts */
	EXPECT(fi_allreduce(ep, b, 0, NULL, r, NULL, ca, FI_INT64, FI_SUM, 0,
			    NULL),
	       -FI_EINVAL);
	EXPECT(fi_broadcast(ep, b, 0, NULL, ca, 0, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	if (n > 1) {
		EXPECT(fi_alltoall(ep, r, n + 1, NULL, r + 32, NULL, ca,
				   FI_INT64, 0, NULL),
		       -FI_EINVAL);
		EXPECT(fi_reduce_scatter(ep, r, n + 1, NULL, b, NULL, ca,
					 FI_INT64, FI_SUM, 0, NULL),
		       -FI_EINVAL);
		EXPECT(fi_alltoall(ep, r, 1, NULL, r + 32, NULL, ca, FI_INT64,
				   0, NULL),
		       -FI_EINVAL);
		EXPECT(fi_reduce_scatter(ep, r, 2 * n - 1, NULL, b, NULL, ca,
					 FI_UINT8, FI_SUM, 0, NULL),
		       -FI_EINVAL);
	}
	/* roots that are not members */
	EXPECT(fi_broadcast(ep, b, 1, NULL, ca, (fi_addr_t)x->o->nprocs,
			    FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_reduce(ep, b, 1, NULL, r, NULL, ca, bogus, FI_INT64, FI_SUM,
			 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_scatter(ep, r, 1, NULL, b, NULL, ca, FI_ADDR_UNSPEC - 1,
			  FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_gather(ep, b, 1, NULL, r, NULL, ca, bogus, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	if (sub->m < x->o->nprocs) {
		/* in the AV, not in the subset: the other parity */
		notmember = (fi_addr_t)(x->rank ^ 1);
		if ((int)notmember >= x->o->nprocs)
			notmember = (fi_addr_t)(x->rank - 1);
		EXPECT(fi_broadcast(ep, b, 1, NULL, sub->addr, notmember,
				    FI_INT64, 0, NULL),
		       -FI_EINVAL);
		EXPECT(fi_reduce(ep, b, 1, NULL, r, NULL, sub->addr, notmember,
				 FI_INT64, FI_SUM, 0, NULL),
		       -FI_EINVAL);
		EXPECT(fi_scatter(ep, r, 1, NULL, b, NULL, sub->addr, notmember,
				  FI_INT64, 0, NULL),
		       -FI_EINVAL);
		EXPECT(fi_gather(ep, b, 1, NULL, r, NULL, sub->addr, notmember,
				 FI_INT64, 0, NULL),
		       -FI_EINVAL);
	}
	/* NULL buffers a member needs */
	EXPECT(fi_broadcast(ep, NULL, 1, NULL, ca, me, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_broadcast(ep, NULL, 1, NULL, ca, 0, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_allreduce(ep, NULL, 1, NULL, r, NULL, ca, FI_INT64, FI_SUM, 0,
			    NULL),
	       -FI_EINVAL);
	EXPECT(fi_allreduce(ep, b, 1, NULL, NULL, NULL, ca, FI_INT64, FI_SUM, 0,
			    NULL),
	       -FI_EINVAL);
	EXPECT(fi_allgather(ep, NULL, 1, NULL, r, NULL, ca, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_allgather(ep, b, 1, NULL, NULL, NULL, ca, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_alltoall(ep, NULL, n, NULL, r, NULL, ca, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_alltoall(ep, r, n, NULL, NULL, NULL, ca, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_reduce_scatter(ep, NULL, n, NULL, b, NULL, ca, FI_INT64,
				 FI_SUM, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_reduce_scatter(ep, r, n, NULL, NULL, NULL, ca, FI_INT64,
				 FI_SUM, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_reduce(ep, NULL, 1, NULL, r, NULL, ca, 0, FI_INT64, FI_SUM, 0,
			 NULL),
	       -FI_EINVAL);
	EXPECT(fi_gather(ep, NULL, 1, NULL, r, NULL, ca, 0, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_scatter(ep, r, 1, NULL, NULL, NULL, ca, 0, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	/* ... at the root, the buffers only the root uses */
	EXPECT(fi_reduce(ep, b, 1, NULL, NULL, NULL, ca, me, FI_INT64, FI_SUM,
			 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_gather(ep, b, 1, NULL, NULL, NULL, ca, me, FI_INT64, 0, NULL),
	       -FI_EINVAL);
	EXPECT(fi_scatter(ep, NULL, 1, NULL, r, NULL, ca, me, FI_INT64, 0,
			  NULL),
	       -FI_EINVAL);
	/* coll_addr not joined */
	EXPECT(fi_barrier(ep, bogus, NULL), -FI_EINVAL);
	EXPECT(fi_allreduce(ep, b, 1, NULL, r, NULL, bogus, FI_INT64, FI_SUM, 0,
			    NULL),
	       -FI_EINVAL);
	EXPECT(fi_broadcast(ep, b, 1, NULL, FI_ADDR_NOTAVAIL, 0, FI_INT64, 0,
			    NULL),
	       -FI_EINVAL);
	if (fi_av_set_addr(full->avs, &set_addr) == 0) {
		EXPECT(fi_allgather(ep, b, 1, NULL, r, NULL, set_addr, FI_INT64,
				    0, NULL),
		       -FI_EINVAL);
		EXPECT(fi_barrier(ep, set_addr, NULL), -FI_EINVAL);
	}
	/* datatypes, operations, flags */
	EXPECT(fi_allreduce(ep, b, 1, NULL, r, NULL, ca, FI_DOUBLE, FI_BXOR, 0,
			    NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_reduce(ep, b, 1, NULL, r, NULL, ca, 0, FI_FLOAT, FI_BAND, 0,
			 NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_reduce_scatter(ep, r, n, NULL, b, NULL, ca, FI_DOUBLE, FI_BOR,
				 0, NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_allreduce(ep, b, 1, NULL, r, NULL, ca, FI_INT32,
			    FI_ATOMIC_WRITE, 0, NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_allreduce(ep, b, 1, NULL, r, NULL, ca, FI_INT32, FI_CSWAP, 0,
			    NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_allreduce(ep, b, 1, NULL, r, NULL, ca, FI_INT32, FI_NOOP, 0,
			    NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_broadcast(ep, b, 1, NULL, ca, 0, FI_LONG_DOUBLE, 0, NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_allgather(ep, b, 1, NULL, r, NULL, ca, FI_DOUBLE_COMPLEX, 0,
			    NULL),
	       -FI_EOPNOTSUPP);
	EXPECT(fi_allreduce(ep, b, 1, NULL, r, NULL, ca, FI_INT64, FI_SUM,
			    FI_INJECT, NULL),
	       -FI_EBADFLAGS);
	/* every pair fi_query_collective refuses is refused by the call */
	for (dt = FI_INT8; dt <= FI_LONG_DOUBLE_COMPLEX + 2; dt++) {
		for (op = FI_MIN; op <= FI_NOOP; op++) {
			struct fi_collective_attr attr = {0};

			if (op > FI_MSWAP && op < FI_NOOP)
				op = FI_NOOP;
			attr.op = (enum fi_op)op;
			attr.datatype = (enum fi_datatype)dt;
			if (!fi_query_collective(x->r.domain, FI_ALLREDUCE,
						 &attr, 0))
				continue;
			ret = fi_allreduce(ep, b, 1, NULL, r, NULL, ca,
					   (enum fi_datatype)dt, (enum fi_op)op,
					   0, NULL);
			if (ret != -FI_EOPNOTSUPP) {
				fprintf(stderr,
					PROG "[%d]: fi_allreduce of datatype "
					     "%d op %d (refused by "
					     "fi_query_collective) returned "
					     "%zd, -FI_EOPNOTSUPP expected\n",
					x->rank, dt, op, ret);
				fails++;
			}
		}
	}
#undef EXPECT
	/* nothing was posted: nothing completes */
	if (fi_cq_read(x->r.cq, &comp, 1) != -FI_EAGAIN) {
		fprintf(stderr,
			PROG "[%d]: a refused call produced a completion\n",
			x->rank);
		fails++;
	}
	return fails ? -FI_EOTHER : 0;
}

/*
 * Members that disagree on a call (member 1 passes count 2 to an
 * allreduce, the others 1) must all get an FI_EINVAL error completion,
 * not wait for ever; the collective stays usable (the next operations,
 * checked, still match).
 */
static int disagree_check(struct ctx *x, struct cset *full)
{
	int64_t b[2] = {1, 2}, r[2];
	struct fi_cq_data_entry comp;
	struct fi_cq_err_entry err;
	uint64_t t0;
	ssize_t n;

	if (full->m < 2)
		return 0;
	n = fi_allreduce(x->r.ep, b, full->me == 1 ? 2 : 1, NULL, r, NULL,
			 full->addr, FI_INT64, FI_SUM, 0, b);
	if (n)
		return ft_err("fi_allreduce (disagreeing counts)", (int)n);
	full->seq++;
	for (t0 = ft_now_ms();;) {
		n = fi_cq_read(x->r.cq, &comp, 1);
		if (n == -FI_EAVAIL)
			break;
		if (n != -FI_EAGAIN) {
			fprintf(stderr,
				PROG "[%d]: an allreduce the members disagree "
				     "on: fi_cq_read %zd, an FI_EINVAL error "
				     "completion expected\n",
				x->rank, n);
			return -FI_EOTHER;
		}
		if (ft_now_ms() - t0 > STALL_MS) {
			fprintf(stderr,
				PROG "[%d]: an allreduce the members disagree "
				     "on never completed\n",
				x->rank);
			return -FI_ETIMEDOUT;
		}
		sched_yield();
	}
	memset(&err, 0, sizeof(err));
	fi_cq_readerr(x->r.cq, &err, 0);
	if (err.err != FI_EINVAL || err.op_context != b ||
	    !(err.flags & FI_COLLECTIVE)) {
		fprintf(stderr,
			PROG "[%d]: disagreeing allreduce: error %d (%s), "
			     "context %p, flags 0x%llx; FI_EINVAL, %p, "
			     "FI_COLLECTIVE expected\n",
			x->rank, err.err, fi_strerror(err.err), err.op_context,
			(unsigned long long)err.flags, (void *)b);
		return -FI_EOTHER;
	}
	x->errors++;
	return 0;
}

/*
 * fi_close of a collective with an operation in flight: -FI_EBUSY.  Rank
 * 0 (the root of the allreduce) posts first: its operation cannot have
 * completed before the others post theirs; the others' need the root's
 * answer, which only their progress takes in.  Then everybody completes
 * it (its result checked) and fi_close succeeds after the final barrier.
 */
static int busy_check(struct ctx *x, struct cset *full)
{
	struct desc d = {
		.coll = FI_ALLREDUCE, .dt = FI_INT64, .rop = FI_SUM, .c = 7};
	int ret;

	if (full->m < 2)
		return 0;
	if (x->rank != 0) {
		ret = wait_flag(x, &x->sh->busy_posted, 1, true);
		if (ret)
			return ret;
	}
	ret = submit(x, full, &d, NSLOTS);
	if (ret)
		return ret;
	ret = fi_close(&full->mc->fid);
	if (ret != -FI_EBUSY) {
		fprintf(stderr,
			PROG "[%d]: fi_close of a collective with an "
			     "allreduce in flight returned %d (%s), -FI_EBUSY "
			     "expected\n",
			x->rank, ret, fi_strerror(-ret));
		return -FI_EOTHER;
	}
	if (x->rank == 0)
		atomic_store(&x->sh->busy_posted, 1);
	return drain(x, 0);
}

/* ---- process ----------------------------------------------------------- */

static int set_join(struct ctx *x, struct cset *s, const char *name, int start,
		    int stride)
{
	struct fi_av_set_attr attr = {0};
	int i, n = x->o->nprocs;

	s->name = name;
	s->m = 0;
	s->me = -1;
	for (i = start; i < n; i += stride) {
		if (i == x->rank)
			s->me = s->m;
		s->ranks[s->m++] = i;
	}
	attr.count = (size_t)s->m;
	attr.start_addr = (fi_addr_t)start;
	attr.end_addr = (fi_addr_t)s->ranks[s->m - 1];
	attr.stride = (uint64_t)stride;
	FT_CHECK(fi_av_set(x->r.av, &attr, &s->avs, NULL));
	FT_CHECK(ft_join(&x->r, s->avs, &s->mc));
	s->addr = fi_mc_addr(s->mc);
	return 0;
}

static int coll_child(int rank, void *shared, const struct ft_opts *o)
{
	struct ctx *x = calloc(1, sizeof(*x));
	struct cset full = {0}, sub = {0};
	double t0 = ft_now_us();
	long nstream;
	int ret;

	if (!x || !(x->slots = calloc(FLOOD, sizeof(*x->slots))))
		return ft_err("calloc", -FI_ENOMEM);
	x->o = o;
	x->sh = shared;
	x->rank = rank;
	srand((unsigned)getpid());
	ret = ft_open(&x->r, o->prov, FI_COLLECTIVE);
	if (ret)
		return ret;
	ret = ft_exchange(&x->r, &x->sh->hdr, rank, o->nprocs, o->timeout_s);
	if (ret)
		return ret;
	/*
	 * Rank 0 joins late, progressing meanwhile: the first operations of
	 * the others (a short random stream) reach it before it joined and
	 * must be kept for the collective it joins next.
	 */
	if (rank == 0 && o->nprocs > 1) {
		uint64_t until = ft_now_ms() + 50;
		struct fi_cq_data_entry comp;

		while (ft_now_ms() < until) {
			if (fi_cq_read(x->r.cq, &comp, 1) != -FI_EAGAIN)
				return ft_err("completion before joining",
					      -FI_EOTHER);
			usleep(100);
		}
	}
	ret = set_join(x, &full, "full", 0, 1);
	if (!ret)
		ret = set_join(x, &sub, rank & 1 ? "odd" : "even", rank & 1, 2);
	if (ret)
		return ret;

	ret = stream(x, &full, &sub, 32, 0xea71);
	if (!ret)
		ret = query_checks(x);
	if (!ret)
		ret = sweep(x, &full);
	if (!ret)
		ret = sweep(x, &sub);
	nstream = 64 * (o->iters ? o->iters : 1);
	if (!ret)
		ret = stream(x, &full, &sub, nstream, 0x5eed);
	if (!ret)
		ret = flood(x, &full, 0, 1, FLOOD);
	if (!ret)
		ret = flood(x, &full, 1, 1000, FLOOD / 2);
	if (!ret)
		ret = error_checks(x, &full, &sub);
	if (!ret)
		ret = disagree_check(x, &full);
	if (!ret)
		ret = busy_check(x, &full);
	if (!ret) {
		/* everybody drained everything: closing is safe */
		struct desc d = {
			.coll = FI_BARRIER, .dt = FI_UINT8, .rop = FI_NOOP};

		ret = submit(x, &full, &d, 1);
		if (!ret)
			ret = drain(x, 0);
	}
	if (ret) {
		fprintf(stderr, PROG "[%d]: failed\n", rank);
		return ret;
	}
	if (fi_cntr_read(x->r.cntr) != x->completed ||
	    fi_cntr_readerr(x->r.cntr) != x->errors) {
		fprintf(stderr,
			PROG "[%d]: FI_SEND counter %llu (errors %llu), %llu "
			     "collectives completed (%llu in error)\n",
			rank, (unsigned long long)fi_cntr_read(x->r.cntr),
			(unsigned long long)fi_cntr_readerr(x->r.cntr),
			(unsigned long long)x->completed,
			(unsigned long long)x->errors);
		return -FI_EOTHER;
	}
	FT_CHECK(fi_close(&sub.mc->fid));
	FT_CHECK(fi_close(&full.mc->fid));
	/* a closed collective is not joined any more */
	ret = (int)fi_barrier(x->r.ep, full.addr, NULL);
	if (ret != -FI_EINVAL)
		return expect("fi_barrier on a closed collective", ret,
			      -FI_EINVAL);
	{
		uint64_t b = 1, r = 0;

		ret = (int)fi_allreduce(x->r.ep, &b, 1, NULL, &r, NULL,
					sub.addr, FI_UINT64, FI_SUM, 0, NULL);
		if (ret != -FI_EINVAL)
			return expect("fi_allreduce on a closed collective",
				      ret, -FI_EINVAL);
	}
	FT_CHECK(fi_close(&sub.avs->fid));
	FT_CHECK(fi_close(&full.avs->fid));
	ft_close(&x->r);
	if (rank == 0) {
		int c;

		printf(PROG ": %d processes, %s set of %d and %s set of %d: "
			    "%llu collectives checked (",
		       o->nprocs, full.name, full.m, sub.name, sub.m,
		       (unsigned long long)x->completed);
		for (c = FI_BARRIER; c <= FI_GATHER; c++)
			printf("%s%s %llu", c == FI_BARRIER ? "" : ", ",
			       coll_name((enum fi_collective_op)c),
			       (unsigned long long)x->per_coll[c]);
		printf("); queries, argument errors%s ok, %.1f s\n",
		       full.m > 1 ? ", flood, disagreement, -FI_EBUSY" : "",
		       (ft_now_us() - t0) / 1e6);
	}
	free(x->slots);
	free(x);
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {
		.prov = "gba", .iters = 4, .nprocs = 4, .timeout_s = 120};

	ft_parse(argc, argv, &o, PROG,
		 "  -I <number>     operations per case (rooted: rounded up "
		 "to every root),\n"
		 "                  64 x that in the random stream\n"
		 "  -r <us>         random delay bound before posts\n");
	return ft_fork_run(&o, sizeof(struct coll_shared), coll_child);
}
