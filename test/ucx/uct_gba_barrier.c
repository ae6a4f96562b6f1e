/*
 * The GBA barrier through UCT (ucx/uct_gba/uct_gba.h), as a UCT-level user
 * sees it: the program links libuct_gba.so (whose constructor registers
 * the transport) and uses UCX's public headers and uct_gba.h only.
 *
 *   uct_gba_barrier
 *       one process: the API's checks and errors (bad parameters, an
 *       interface of another transport, the switch endpoint's doorbell
 *       store and atomics, wrong addresses, sizes and keys, unsupported
 *       operations, a wrong sequence number reported by the switch as
 *       UCS_ERR_IO_ERROR, a non-member doorbell, a member id in use, the
 *       32-group limit, 708 members, a wait that times out);
 *   uct_gba_barrier -n N [-i ITERS]
 *       N member processes run ITERS barriers, arriving in turn with
 *       uct_gba_group_arrive, put_short, atomic64_post, atomic64_fetch
 *       (swap) and atomic_cswap64 on the switch endpoint, and waiting in
 *       turn with uct_gba_group_test, by polling the release flag, and
 *       with uct_gba_group_wait; a shared-memory record of the barrier
 *       each member arrived at checks that no member leaves barrier k
 *       before every member arrived at k.  Then a timed loop prints the
 *       barrier latency (for information, not checked);
 *   uct_gba_barrier -n N -k
 *       member N-1 is killed before it arrives at a barrier: every other
 *       member must get UCS_ERR_CONNECTION_RESET within 10 s;
 *   uct_gba_barrier -n 2 -x
 *       negative control: at the third barrier member 0 runs the
 *       early-release check without waiting, before member 1 arrives, so
 *       the check must fail (exit status 3).
 *
 * Every run uses a private emulated device image,
 * UCX_GBA_DEVICE=emu:/uct-gba-barrier-<pid>, removed at exit; -D DEVICE
 * names another one instead, left in place (test/core/users.sh: another
 * user's image, which must be refused).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ucs/async/async_fwd.h>
#include <uct/api/uct.h>

#include "uct_gba.h"
#include "uct_test_ctx.h"

#define MAX_MEMBERS 16
#define KILL_AT 50	       /* -k: barrier the victim never arrives at */
#define DEAD_PEER_MAX_MS 10000 /* -k: bound on the error's delay */
#define WATCHDOG_S 240	       /* a member that hangs fails the test */

static int failures;
static int member = -1; /* this process's member id, -1: parent */

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "[%d] %s:%d: check failed: %s\n",      \
				member, __FILE__, __LINE__, #cond);            \
			failures++;                                            \
		}                                                              \
	} while (0)

#define CHECK_STATUS(call, expect)                                             \
	do {                                                                   \
		ucs_status_t _s = (call), _e = (expect);                       \
		if (_s != _e) {                                                \
			fprintf(stderr, "[%d] %s:%d: %s: %s, expected %s\n",   \
				member, __FILE__, __LINE__, #call,             \
				ucs_status_string(_s), ucs_status_string(_e)); \
			failures++;                                            \
		}                                                              \
	} while (0)

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "[%d] %s:%d: required: %s\n", member,  \
				__FILE__, __LINE__, #cond);                    \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* Shared between the member processes (MAP_SHARED before fork) */
struct shared {
	struct {
		/* last barrier the member arrived at (stored before its
		 * doorbell) */
		_Atomic uint32_t arrived;
		char pad[60];
	} m[MAX_MEMBERS];
	_Atomic uint32_t start;	       /* members ready for the timed loop */
	_Atomic uint32_t early;	       /* early releases seen */
	_Atomic uint32_t control_done; /* -x: member 0 has checked */
};

static struct shared *sh;

static uct_gba_group_params_t group_params(uint64_t key, uint32_t count,
					   uint32_t id)
{
	uct_gba_group_params_t p;

	p.field_mask = UCT_GBA_GROUP_PARAM_FIELD_KEY |
		       UCT_GBA_GROUP_PARAM_FIELD_MEMBER_COUNT |
		       UCT_GBA_GROUP_PARAM_FIELD_MEMBER_ID;
	p.key = key;
	p.member_count = count;
	p.member_id = id;
	return p;
}

static uct_gba_group_attr_t group_query(uct_gba_group_h g)
{
	uct_gba_group_attr_t attr;

	memset(&attr, 0, sizeof(attr));
	attr.field_mask = UCT_GBA_GROUP_ATTR_FIELD_INDEX |
			  UCT_GBA_GROUP_ATTR_FIELD_MEMBER_ID |
			  UCT_GBA_GROUP_ATTR_FIELD_MEMBER_COUNT |
			  UCT_GBA_GROUP_ATTR_FIELD_SEQ |
			  UCT_GBA_GROUP_ATTR_FIELD_SWITCH |
			  UCT_GBA_GROUP_ATTR_FIELD_RELEASE_FLAG |
			  UCT_GBA_GROUP_ATTR_FIELD_REGS;
	REQUIRE(uct_gba_group_query(g, &attr) == UCS_OK);
	return attr;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t flag_load(const volatile uint64_t *flag)
{
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* ---- one process: the API and its errors ------------------------------- */

static void test_params(struct uct_test_ctx *c)
{
	uct_gba_group_params_t p = group_params(0x5eed, 2, 0);
	uct_gba_group_h g = (uct_gba_group_h)&p;
	struct uct_test_ctx self;

	CHECK_STATUS(uct_gba_group_create(NULL, &p, &g), UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_gba_group_create(c->iface, NULL, &g),
		     UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, NULL),
		     UCS_ERR_INVALID_PARAM);

	p.field_mask &= ~UCT_GBA_GROUP_PARAM_FIELD_MEMBER_ID;
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g),
		     UCS_ERR_INVALID_PARAM);
	p = group_params(0, 2, 0);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g),
		     UCS_ERR_INVALID_PARAM);
	p = group_params(0x5eed, 0, 0);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g),
		     UCS_ERR_INVALID_PARAM);
	p = group_params(0x5eed, UCT_GBA_GROUP_MAX_MEMBERS + 1, 0);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g),
		     UCS_ERR_INVALID_PARAM);
	p = group_params(0x5eed, 2, 2);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g),
		     UCS_ERR_INVALID_PARAM);
	p = group_params(0x5eed, 2, UINT32_MAX);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g),
		     UCS_ERR_INVALID_PARAM);

	/* an interface of another transport (UCX's own "self") */
	uct_test_ctx_open(&self, "self", NULL, NULL);
	p = group_params(0x5eed, 2, 0);
	CHECK_STATUS(uct_gba_group_create(self.iface, &p, &g),
		     UCS_ERR_INVALID_PARAM);
	uct_test_ctx_close(&self);

	/* NULL handles */
	uct_gba_group_destroy(NULL);
	CHECK_STATUS(uct_gba_group_query(NULL, NULL), UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_gba_group_arrive(NULL, NULL), UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_gba_group_test(NULL, 1), UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_gba_group_wait(NULL, 1, 0), UCS_ERR_INVALID_PARAM);

	/* wrap-safe compare */
	CHECK(uct_gba_seq_reached(1, 1));
	CHECK(!uct_gba_seq_reached(0, 1));
	CHECK(uct_gba_seq_reached(0, 0xffffffffu));
	CHECK(!uct_gba_seq_reached(0xfffffffeu, 0xffffffffu));
	CHECK(uct_gba_seq_reached(0x100000005ull, 5));
	CHECK(UCT_GBA_ARRIVAL_VALUE(3, 7) == 0x300000007ull);
}

/* The switch endpoint of a one-member group: every arrival releases */
static void test_switch_ep(struct uct_test_ctx *c)
{
	uct_gba_group_params_t p = group_params(0xabc, 1, 0);
	uct_gba_group_attr_t a, b;
	uct_gba_group_h g, g2;
	uint64_t doorbell, result;
	uint32_t seq = 0;
	int i;

	REQUIRE(uct_gba_group_create(c->iface, &p, &g) == UCS_OK);
	a = group_query(g);
	CHECK(a.index < UCT_GBA_MAX_GROUPS);
	CHECK(a.member_id == 0 && a.member_count == 1);
	CHECK(a.seq == 0);
	CHECK(a.switch_ep != NULL);
	CHECK(a.window_addr == 0x10000 + a.index * 0x2000ull);
	CHECK(a.window_length == 0x2000);
	CHECK(a.arrival_addr == a.window_addr + 0x70);
	CHECK(a.release_flag != NULL && *a.release_flag == 0);
	CHECK(a.release_flag_iova != 0);
	CHECK(a.status & 1);	/* READY */
	CHECK(!(a.status & 8)); /* no ERROR */
	CHECK(a.release_seq == 0);

	/* a field not asked for is left alone */
	memset(&b, 0xa5, sizeof(b));
	b.field_mask = UCT_GBA_GROUP_ATTR_FIELD_SEQ;
	CHECK_STATUS(uct_gba_group_query(g, &b), UCS_OK);
	CHECK(b.seq == 0 && b.index == 0xa5a5a5a5u);
	CHECK_STATUS(uct_gba_group_query(g, NULL), UCS_ERR_INVALID_PARAM);

	/* protocol steps 2 and 4 */
	CHECK_STATUS(uct_gba_group_arrive(g, &seq), UCS_OK);
	CHECK(seq == 1);
	CHECK_STATUS(uct_gba_group_test(g, seq), UCS_OK);
	CHECK(flag_load(a.release_flag) == 1);
	CHECK_STATUS(uct_gba_group_test(g, seq + 1), UCS_INPROGRESS);

	/* the doorbell as the hardware presents it: a remote store ... */
	doorbell = UCT_GBA_ARRIVAL_VALUE(0, 2);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, sizeof(doorbell),
				      a.arrival_addr, a.rkey),
		     UCS_OK);
	CHECK(flag_load(a.release_flag) == 2);
	CHECK_STATUS(uct_gba_group_test(g, 2), UCS_OK);
	CHECK(group_query(g).seq == 2);
	/* ... or an atomic on a register that reads as zero */
	CHECK_STATUS(uct_ep_atomic64_post(a.switch_ep, UCT_ATOMIC_OP_ADD,
					  UCT_GBA_ARRIVAL_VALUE(0, 3),
					  a.arrival_addr, a.rkey),
		     UCS_OK);
	CHECK(flag_load(a.release_flag) == 3);
	result = 0xdead;
	CHECK_STATUS(uct_ep_atomic64_fetch(a.switch_ep, UCT_ATOMIC_OP_SWAP,
					   UCT_GBA_ARRIVAL_VALUE(0, 4), &result,
					   a.arrival_addr, a.rkey, NULL),
		     UCS_OK);
	CHECK(result == 0);
	CHECK(flag_load(a.release_flag) == 4);
	result = 0xdead;
	CHECK_STATUS(uct_ep_atomic_cswap64(
			     a.switch_ep, 0, UCT_GBA_ARRIVAL_VALUE(0, 5),
			     a.arrival_addr, a.rkey, &result, NULL),
		     UCS_OK);
	CHECK(result == 0);
	CHECK(flag_load(a.release_flag) == 5);
	/* a compare-and-swap that does not match stores nothing */
	CHECK_STATUS(uct_ep_atomic_cswap64(
			     a.switch_ep, 1, UCT_GBA_ARRIVAL_VALUE(0, 6),
			     a.arrival_addr, a.rkey, &result, NULL),
		     UCS_OK);
	CHECK(result == 0);
	CHECK_STATUS(uct_gba_group_test(g, 6), UCS_INPROGRESS);
	CHECK(group_query(g).seq == 5);
	CHECK_STATUS(uct_ep_flush(a.switch_ep, 0, NULL), UCS_OK);
	CHECK_STATUS(uct_ep_fence(a.switch_ep, 0), UCS_OK);

	/* wrong addresses, sizes, keys and operations: refused, the switch
	 * sees nothing (no ERROR below) */
	doorbell = UCT_GBA_ARRIVAL_VALUE(0, 6);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 4, a.arrival_addr,
				      a.rkey),
		     UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 16,
				      a.arrival_addr, a.rkey),
		     UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8,
				      a.arrival_addr + 8, a.rkey),
		     UCS_ERR_INVALID_ADDR); /* RELEASE_SEQ */
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8,
				      a.arrival_addr + 4, a.rkey),
		     UCS_ERR_INVALID_ADDR);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8, a.window_addr,
				      a.rkey),
		     UCS_ERR_INVALID_ADDR); /* GROUP_ID */
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8,
				      a.window_addr + 0x1800, a.rkey),
		     UCS_ERR_INVALID_ADDR); /* CONTROL: no member resets */
	CHECK_STATUS(uct_ep_atomic64_post(a.switch_ep, UCT_ATOMIC_OP_OR,
					  doorbell, a.window_addr + 0x1808,
					  a.rkey),
		     UCS_ERR_INVALID_ADDR); /* STATUS */
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8,
				      a.window_addr + a.window_length, a.rkey),
		     UCS_ERR_OUT_OF_RANGE);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8,
				      a.window_addr + a.window_length - 4,
				      a.rkey),
		     UCS_ERR_OUT_OF_RANGE);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8,
				      a.window_addr - 8, a.rkey),
		     UCS_ERR_OUT_OF_RANGE);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8, 0, a.rkey),
		     UCS_ERR_OUT_OF_RANGE);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8, a.arrival_addr,
				      UCT_INVALID_RKEY),
		     UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8, a.arrival_addr,
				      a.rkey + 8),
		     UCS_ERR_INVALID_PARAM);
	CHECK_STATUS(uct_ep_atomic64_post(a.switch_ep, UCT_ATOMIC_OP_AND,
					  doorbell, a.arrival_addr, a.rkey),
		     UCS_ERR_UNSUPPORTED);
	CHECK_STATUS(uct_ep_atomic32_post(a.switch_ep, UCT_ATOMIC_OP_ADD, 6,
					  a.arrival_addr, a.rkey),
		     UCS_ERR_UNSUPPORTED);
	CHECK_STATUS(uct_ep_atomic64_fetch(a.switch_ep, UCT_ATOMIC_OP_CSWAP,
					   doorbell, &result, a.arrival_addr,
					   a.rkey, NULL),
		     UCS_ERR_UNSUPPORTED);
	CHECK_STATUS(uct_ep_get_zcopy(a.switch_ep, NULL, 0, a.arrival_addr,
				      a.rkey, NULL),
		     UCS_ERR_UNSUPPORTED);
	CHECK_STATUS(uct_ep_am_short(a.switch_ep, 0, 0, NULL, 0),
		     UCS_ERR_UNSUPPORTED);
	CHECK_STATUS(uct_ep_pending_add(a.switch_ep, NULL, 0), UCS_ERR_BUSY);
	/* owned by the group: destroying it does nothing */
	uct_ep_destroy(a.switch_ep);
	/* nor is the switch endpoint's interface a gba interface */
	CHECK_STATUS(uct_gba_group_create(a.switch_ep->iface, &p, &g2),
		     UCS_ERR_INVALID_PARAM);

	b = group_query(g);
	CHECK(b.seq == 5 && b.release_seq == 5);
	CHECK(!(b.status & 8));
	CHECK_STATUS(uct_gba_group_arrive(g, &seq), UCS_OK);
	CHECK(seq == 6);
	CHECK_STATUS(uct_gba_group_test(g, seq), UCS_OK);

	/* a wrong sequence number: the switch drops it, sets STATUS.ERROR
	 * and ERROR_INFO (BAD_SEQ, member 0, seq 8), and the test of that
	 * arrival reports the switch's error */
	doorbell = UCT_GBA_ARRIVAL_VALUE(0, 8);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8, a.arrival_addr,
				      a.rkey),
		     UCS_OK);
	CHECK_STATUS(uct_gba_group_test(g, 8), UCS_ERR_IO_ERROR);
	b = group_query(g);
	CHECK(b.status & 8);
	CHECK(b.error_info == ((2ull << 56) | 8));
	CHECK(b.seq == 6 && b.release_seq == 6);
	CHECK(flag_load(a.release_flag) == 6);
	/* a non-member's doorbell: NOT_MEMBER, ours are unaffected */
	doorbell = UCT_GBA_ARRIVAL_VALUE(5, 7);
	CHECK_STATUS(uct_ep_put_short(a.switch_ep, &doorbell, 8, a.arrival_addr,
				      a.rkey),
		     UCS_OK);
	b = group_query(g);
	CHECK(b.error_info == ((1ull << 56) | (5ull << 32) | 7));
	/* the group goes on */
	for (i = 0; i < 100; i++) {
		CHECK_STATUS(uct_gba_group_arrive(g, &seq), UCS_OK);
		CHECK_STATUS(uct_gba_group_wait(g, seq, 1000), UCS_OK);
	}
	CHECK(seq == 106 && flag_load(a.release_flag) == 106);

	/* the member id is taken by a live process (this one); the key
	 * belongs to a group of another size */
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g2),
		     UCS_ERR_ALREADY_EXISTS);
	p = group_params(0xabc, 2, 1);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g2),
		     UCS_ERR_INVALID_PARAM);
	uct_gba_group_destroy(g);
}

/* 32 hardware groups, then UCS_ERR_NO_RESOURCE; 708 members; a wait that
 * times out */
static void test_limits(struct uct_test_ctx *c)
{
	uct_gba_group_h g[UCT_GBA_MAX_GROUPS + 1], big;
	uct_gba_group_params_t p;
	uint64_t t0;
	uint32_t seq;
	int i, n;

	for (n = 0; n < UCT_GBA_MAX_GROUPS + 1; n++) {
		p = group_params(0x1000 + n, 1, 0);
		if (uct_gba_group_create(c->iface, &p, &g[n]) != UCS_OK)
			break;
	}
	CHECK(n == UCT_GBA_MAX_GROUPS);
	p = group_params(0x2000, 1, 0);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &big),
		     UCS_ERR_NO_RESOURCE);
	/* every one of them works */
	for (i = 0; i < n; i++) {
		CHECK_STATUS(uct_gba_group_arrive(g[i], &seq), UCS_OK);
		CHECK_STATUS(uct_gba_group_test(g[i], seq), UCS_OK);
	}
	/* a freed group is reused */
	uct_gba_group_destroy(g[7]);
	CHECK_STATUS(uct_gba_group_create(c->iface, &p, &g[7]), UCS_OK);
	for (i = 0; i < n; i++)
		uct_gba_group_destroy(g[i]);

	p = group_params(0x3000, UCT_GBA_GROUP_MAX_MEMBERS,
			 UCT_GBA_GROUP_MAX_MEMBERS - 1);
	REQUIRE(uct_gba_group_create(c->iface, &p, &big) == UCS_OK);
	CHECK(group_query(big).member_count == 708);
	CHECK(group_query(big).member_id == 707);
	/* the others never arrive (they are not attached: not dead either) */
	CHECK_STATUS(uct_gba_group_arrive(big, &seq), UCS_OK);
	t0 = now_ns();
	CHECK_STATUS(uct_gba_group_wait(big, seq, 50), UCS_ERR_TIMED_OUT);
	CHECK(now_ns() - t0 < 5000000000ull);
	CHECK_STATUS(uct_gba_group_test(big, seq), UCS_INPROGRESS);
	uct_gba_group_destroy(big);
}

/* ---- N processes ------------------------------------------------------------
 */

/* Arrive at barrier @k in one of five ways; returns its sequence number */
static uint32_t member_arrive(uct_gba_group_h g, const uct_gba_group_attr_t *a,
			      uint32_t k, unsigned how)
{
	static const unsigned post_ops[] = {UCT_ATOMIC_OP_ADD, UCT_ATOMIC_OP_OR,
					    UCT_ATOMIC_OP_XOR};
	uint64_t doorbell = UCT_GBA_ARRIVAL_VALUE(a->member_id, k);
	uint64_t result = 1;
	uint32_t seq = 0;

	switch (how % 5) {
	case 0:
		CHECK_STATUS(uct_gba_group_arrive(g, &seq), UCS_OK);
		return seq;
	case 1:
		CHECK_STATUS(uct_ep_put_short(a->switch_ep, &doorbell,
					      sizeof(doorbell), a->arrival_addr,
					      a->rkey),
			     UCS_OK);
		break;
	case 2:
		CHECK_STATUS(uct_ep_atomic64_post(a->switch_ep, post_ops[k % 3],
						  doorbell, a->arrival_addr,
						  a->rkey),
			     UCS_OK);
		break;
	case 3:
		CHECK_STATUS(uct_ep_atomic64_fetch(
				     a->switch_ep, UCT_ATOMIC_OP_SWAP, doorbell,
				     &result, a->arrival_addr, a->rkey, NULL),
			     UCS_OK);
		CHECK(result == 0);
		break;
	default:
		CHECK_STATUS(uct_ep_atomic_cswap64(a->switch_ep, 0, doorbell,
						   a->arrival_addr, a->rkey,
						   &result, NULL),
			     UCS_OK);
		CHECK(result == 0);
		break;
	}
	return k;
}

/* Wait for barrier @seq in one of three ways */
static ucs_status_t member_wait(uct_gba_group_h g,
				const uct_gba_group_attr_t *a, uint32_t seq,
				unsigned how)
{
	ucs_status_t status;
	unsigned spins = 0;

	switch (how % 3) {
	case 0:
		/* poll; spin a little, then let the others have the CPU */
		while ((status = uct_gba_group_test(g, seq)) ==
		       UCS_INPROGRESS) {
			if (++spins > 64)
				sched_yield();
		}
		return status;
	case 1:
		/* the release flag, like any remote store into memory */
		while (!uct_gba_seq_reached(flag_load(a->release_flag), seq)) {
			if (++spins > 64)
				sched_yield();
		}
		return UCS_OK;
	default:
		return uct_gba_group_wait(g, seq, 60000);
	}
}

/* Barrier @k left: every member must have arrived at k, none beyond k+1 */
static void check_arrivals(int n, uint32_t k)
{
	uint32_t v;
	int j;

	for (j = 0; j < n; j++) {
		v = atomic_load(&sh->m[j].arrived);
		if (v < k || v > k + 1) {
			fprintf(stderr,
				"[%d] left barrier %u when member %d had "
				"arrived at %u\n",
				member, k, j, v);
			atomic_fetch_add(&sh->early, 1);
			failures++;
		}
	}
}

static int member_main(int n, int iters, int kill_mode, int control)
{
	uct_gba_group_params_t p = group_params(0xba771e5, n, member);
	ucs_status_t status;
	uct_gba_group_attr_t a;
	uct_gba_group_h g;
	struct uct_test_ctx c;
	uint64_t t0, dt;
	uint32_t k, seq;
	int lat_iters = 2000 / n;

	alarm(WATCHDOG_S);
	uct_test_ctx_open(&c, "gba", NULL, NULL);
	REQUIRE(uct_gba_group_create(c.iface, &p, &g) == UCS_OK);
	a = group_query(g);
	CHECK(a.member_id == (uint32_t)member);
	CHECK(a.member_count == (uint32_t)n);
	CHECK(a.seq == 0);

	for (k = 1; k <= (uint32_t)iters; k++) {
		if (kill_mode && member == n - 1 && k == KILL_AT) {
			/* dies attached, without arriving */
			raise(SIGKILL);
		}
		if (control && member == 1 && k == (uint32_t)iters) {
			/* arrive only once member 0 has looked */
			while (!atomic_load(&sh->control_done))
				usleep(1000);
		}
		atomic_store(&sh->m[member].arrived, k);
		seq = member_arrive(g, &a, k, k + member);
		CHECK(seq == k);
		if (control && member == 0 && k == (uint32_t)iters) {
			/* the negative control: leave without waiting */
			check_arrivals(n, k);
			atomic_store(&sh->control_done, 1);
			/* then wait, so that member 1 is released */
			CHECK_STATUS(member_wait(g, &a, seq, 2), UCS_OK);
			break;
		}
		if (kill_mode && k == KILL_AT) {
			t0 = now_ns();
			status = member_wait(g, &a, seq, member ? 0 : 2);
			dt = (now_ns() - t0) / 1000000;
			CHECK_STATUS(status, UCS_ERR_CONNECTION_RESET);
			CHECK(dt < DEAD_PEER_MAX_MS);
			/* latched */
			CHECK_STATUS(uct_gba_group_test(g, seq),
				     UCS_ERR_CONNECTION_RESET);
			printf("[%d] member %d died: %s after %" PRIu64 " ms\n",
			       member, n - 1, ucs_status_string(status), dt);
			break;
		}
		status = member_wait(g, &a, seq, k / 5 + member);
		if (status != UCS_OK) {
			fprintf(stderr, "[%d] barrier %u: %s\n", member, k,
				ucs_status_string(status));
			failures++;
			break;
		}
		check_arrivals(n, k);
		if (failures)
			break;
	}
	if (!failures && !kill_mode && !control) {
		a = group_query(g);
		CHECK(a.seq == (uint32_t)iters);
		CHECK(uct_gba_seq_reached(a.release_seq, iters));
		CHECK(!(a.status & 8));

		/* latency, for information: arrive + wait */
		atomic_fetch_add(&sh->start, 1);
		while (atomic_load(&sh->start) < (uint32_t)n)
			sched_yield();
		t0 = now_ns();
		for (k = 0; k < (uint32_t)lat_iters; k++) {
			CHECK_STATUS(uct_gba_group_arrive(g, &seq), UCS_OK);
			CHECK_STATUS(uct_gba_group_wait(g, seq, 60000), UCS_OK);
		}
		dt = now_ns() - t0;
		if (member == 0)
			printf("%d processes: %.2f us/barrier (%d barriers, "
			       "arrive + wait)\n",
			       n, dt / 1e3 / lat_iters, lat_iters);
	}

	/* no member leaves in the middle of a barrier: the last one releases
	 * only when all arrived, and everyone has been released */
	uct_gba_group_destroy(g);
	uct_test_ctx_close(&c);
	return failures ? 3 : 0;
}

static int run_members(int n, int iters, int kill_mode, int control)
{
	pid_t pids[MAX_MEMBERS], pid;
	int i, st, fail = 0;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	fflush(NULL);
	for (i = 0; i < n; i++) {
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			member = i;
			_exit(member_main(n, iters, kill_mode, control));
		}
		pids[i] = pid;
	}
	for (i = 0; i < n; i++) {
		REQUIRE(waitpid(pids[i], &st, 0) == pids[i]);
		if (kill_mode && i == n - 1) {
			if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
				fprintf(stderr, "member %d: not killed\n", i);
				fail = 1;
			}
		} else if (WIFSIGNALED(st)) {
			fprintf(stderr, "member %d: signal %d%s\n", i,
				WTERMSIG(st),
				WTERMSIG(st) == SIGALRM ? " (hung)" : "");
			fail = 1;
		} else if (WEXITSTATUS(st) != 0) {
			fprintf(stderr, "member %d: exit status %d\n", i,
				WEXITSTATUS(st));
			fail = WEXITSTATUS(st) == 3 && !fail ? 3 : 1;
		}
	}
	if (atomic_load(&sh->early))
		fprintf(stderr, "%u early release(s) seen\n",
			atomic_load(&sh->early));
	munmap(sh, sizeof(*sh));
	return fail;
}

static char image[64];

static void remove_image(void)
{
	shm_unlink(image);
}

int main(int argc, char **argv)
{
	int opt, n = 0, iters = 1000, kill_mode = 0, control = 0;
	const char *named = NULL;
	char device[300];
	struct uct_test_ctx c;

	while ((opt = getopt(argc, argv, "n:i:kxD:")) != -1) {
		switch (opt) {
		case 'D':
			named = optarg;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'i':
			iters = atoi(optarg);
			break;
		case 'k':
			kill_mode = 1;
			break;
		case 'x':
			control = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n members [-i iterations] "
				"[-k | -x]] [-D device]\n",
				argv[0]);
			return 2;
		}
	}
	if (n < 0 || n > MAX_MEMBERS || (n && n < 2) || iters < 1 ||
	    (kill_mode && (n < 2 || iters < KILL_AT)) || (control && n != 2)) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	if (control)
		iters = 3;

	if (named) {
		/* -D: that device, left as it is */
		snprintf(device, sizeof(device), "%s", named);
	} else {
		/* a private emulated device image */
		snprintf(image, sizeof(image), "/uct-gba-barrier-%d",
			 (int)getpid());
		snprintf(device, sizeof(device), "emu:%s", image);
		shm_unlink(image);
		atexit(remove_image);
	}
	setenv("UCX_GBA_DEVICE", device, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (n)
		return run_members(n, iters, kill_mode, control);

	/* on stdout, where UCX logs */
	printf("(errors about bad group parameters, a foreign interface and "
	       "member id 0 are expected)\n");
	uct_test_ctx_open(&c, "gba", NULL, NULL);
	test_params(&c);
	test_switch_ep(&c);
	test_limits(&c);
	uct_test_ctx_close(&c);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("uct_gba_barrier: all checks passed\n");
	return 0;
}
