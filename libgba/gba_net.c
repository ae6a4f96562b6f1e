/*
 * GBA core library: the "emu+tcp://HOST:PORT" backend, a member's side of
 * the emulated switch served by gba_switchd (doc/design.md section 9,
 * "The switch across hosts").
 *
 * The data path stays on the host: a member's arrival is a store into its
 * doorbell register in the host image (struct gba_net_shm), its release
 * flag is in the host image's flag area.  The host's agent (gba_agent,
 * the emulated NIC) forwards doorbells to gba_switchd and stores the
 * releases it receives into the flags.  The doorbell wakes the agent
 * (futex) only when the agent sleeps.
 *
 * The control plane is RPCs on this process's own connection to
 * gba_switchd (join, leave, a dead member found on this host).  The
 * connection is also how gba_switchd learns that this process died: the
 * kernel closes it.
 *
 * The agent is started on demand by the first process that opens the
 * device on the host (posix_spawn of gba_agent, which detaches), guarded
 * by an flock on "<image>.agent" that the agent holds for its life; the
 * opener takes that lock before spawning and hands its descriptor to the
 * agent, so there is never a window in which a second opener would start
 * a second agent.  Every process using the device holds a shared flock on
 * "<image>.users"; the agent exits when it can lock that exclusively.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba_job.h>

#include "gba_emu.h"
#include "gba_net.h"

extern char **environ;

/* How long an opener waits for the agent to connect. */
#define NET_AGENT_WAIT_MS 10000
/* How long an RPC waits for gba_switchd's reply. */
#define NET_RPC_TIMEOUT_MS 10000
/* How long a join waits for the agent to learn of the group. */
#define NET_ALLOC_WAIT_MS 5000

struct gba_net {
	/* the emulated image underneath (gba_emu.c) */
	const struct gba_ops *emu_ops;
	void *emu_priv;
	struct gba_net_shm *shm;
	pthread_mutex_t rpc_lock; /* serialises RPCs of this process */
	int sock;		  /* connection to gba_switchd */
	pid_t sock_pid;		  /* process that opened it */
	int users_fd;		  /* shared flock: a user of the agent */
	int port;
	char host[256];
};

static inline struct gba_net *net_of(struct gba_dev *dev)
{
	return dev->priv;
}

#define REG(base, off) ((uint64_t *)((uint8_t *)(base) + (off)))

/* ---- Data path ----------------------------------------------------------- */

static void net_wake(struct gba_net_shm *s)
{
	uint32_t one = 1;

	if (atomic_compare_exchange_strong(&s->sleeping, &one, 0))
		syscall(SYS_futex, &s->sleeping, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/*
 * A store to ARRIVAL: the member's doorbell register in the host image,
 * its pending bit, the group's summary bit; a wake-up only if the agent
 * sleeps.  No lock, no allocation, no syscall while the agent is awake.
 */
static void net_doorbell(struct gba_dev *dev, unsigned g, uint64_t val)
{
	struct gba_net_shm *s = net_of(dev)->shm;
	uint32_t m = GBA_ARRIVAL_MEMBER(val);
	unsigned i = m < GBA_MAX_MEMBERS ? m : GBA_MAX_MEMBERS;

	if (g >= GBA_MAX_GROUPS)
		return;
	atomic_store_explicit(&s->db[g][i], val, memory_order_relaxed);
	atomic_fetch_or_explicit(&s->pending[g][i / 64], 1ULL << (i % 64),
				 memory_order_release);
	/* seq_cst pairs with the agent's store of sleeping then load of
	 * summary: either it sees our bit or we see it asleep */
	atomic_fetch_or_explicit(&s->summary, 1u << g, memory_order_seq_cst);
	if (atomic_load_explicit(&s->sleeping, memory_order_seq_cst))
		net_wake(s);
}

/* Register loads: the host image holds this host's view (the agent keeps
 * RELEASE_SEQ, STATUS and ERROR_INFO as the switch has them). */
static uint64_t net_read64(struct gba_dev *dev, uint64_t off)
{
	if (off >= GBA_BAR_SIZE || (off & 7))
		return UINT64_MAX;
	return __atomic_load_n(REG(dev->bar, off), __ATOMIC_ACQUIRE);
}

static uint32_t net_read32(struct gba_dev *dev, uint64_t off)
{
	if (off >= GBA_BAR_SIZE || (off & 3))
		return UINT32_MAX;
	return __atomic_load_n((uint32_t *)(dev->bar + off), __ATOMIC_ACQUIRE);
}

/* Stores: ARRIVAL is the doorbell; the group is programmed by gba_switchd
 * at join, so other stores from a member are ignored. */
static void net_write64(struct gba_dev *dev, uint64_t off, uint64_t val)
{
	uint64_t r;

	if (off < GBA_GROUP_REG_OFFSET || off >= GBA_BAR_SIZE || (off & 7))
		return;
	r = (off - GBA_GROUP_REG_OFFSET) % GBA_GROUP_REG_STRIDE;
	if (r == GBA_ARRIVAL)
		net_doorbell(dev,
			     (off - GBA_GROUP_REG_OFFSET) /
				     GBA_GROUP_REG_STRIDE,
			     val);
}

static void net_write32(struct gba_dev *dev, uint64_t off, uint32_t val)
{
	(void)dev;
	(void)off;
	(void)val;
}

/* ---- RPCs ------------------------------------------------------------------
 */

static int net_hello(struct gba_net *net, int fd)
{
	struct gba_net_msg m = {.type = GBA_NET_HELLO_PROC,
				.a = net->shm->host_token,
				.b = GBA_NET_VERSION,
				.c = gba_proc_self_slot()};
	int ret = gba_net_send(fd, &m);

	if (!ret)
		ret = gba_net_recv(fd, &m, NET_RPC_TIMEOUT_MS);
	if (!ret && m.type != GBA_NET_REPLY)
		ret = -EPROTO;
	if (!ret)
		ret = m.ret;
	return ret;
}

/* This process's connection (a forked child makes its own).  Called with
 * rpc_lock held. */
static int net_sock(struct gba_net *net)
{
	int fd, ret;

	if (net->sock >= 0 && net->sock_pid == getpid())
		return net->sock;
	if (net->sock >= 0)
		close(net->sock); /* the parent's: ours is a copy */
	net->sock = -1;
	fd = gba_net_connect(net->host, net->port, NET_RPC_TIMEOUT_MS);
	if (fd < 0)
		return fd;
	ret = net_hello(net, fd);
	if (ret) {
		close(fd);
		return gba_err_set(ret,
				   "emu+tcp: gba_switchd %s:%d refused "
				   "this process",
				   net->host, net->port);
	}
	net->sock = fd;
	net->sock_pid = getpid();
	return fd;
}

/* Send @m and, if @reply, wait for the reply into it.  Returns 0, the
 * reply's error, or a transport error (-EPIPE: gba_switchd went away). */
static int net_rpc(struct gba_net *net, struct gba_net_msg *m, int reply)
{
	int fd, ret;

	pthread_mutex_lock(&net->rpc_lock);
	fd = net_sock(net);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = gba_net_send(fd, m);
	if (!ret && reply) {
		ret = gba_net_recv(fd, m, NET_RPC_TIMEOUT_MS);
		if (!ret && m->type != GBA_NET_REPLY)
			ret = -EPROTO;
		if (!ret)
			ret = m->ret;
		else if (ret == -ETIMEDOUT || ret == -EPROTO) {
			/* out of step with the switch: start over */
			close(net->sock);
			net->sock = -1;
		}
	}
out:
	pthread_mutex_unlock(&net->rpc_lock);
	return ret;
}

/* ---- Control plane hooks (gba_group.c calls them under the lock) -------- */

static inline _Atomic uint64_t *net_flag(struct gba_dev *dev, unsigned g,
					 unsigned m)
{
	return (_Atomic uint64_t *)(dev->flags +
				    (GBA_FLAG_IOVA(g, m) - GBA_FLAG_OFFSET));
}

/* RELEASE_SEQ of group @g's host view := @seq unless it is already later. */
static void net_release_seq_max(struct gba_dev *dev, unsigned g, uint32_t seq)
{
	uint64_t *reg = REG(dev->bar, GBA_GROUP_REG_BASE(g) + GBA_RELEASE_SEQ);
	uint64_t cur = __atomic_load_n(reg, __ATOMIC_ACQUIRE);

	while (!gba_seq_reached((uint32_t)cur, seq) &&
	       !__atomic_compare_exchange_n(reg, &cur, seq, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
}

/* Wait until the agent has taken generation @gen of group @g (it resets
 * the host view of the group when it does). */
static int net_wait_alloc(struct gba_dev *dev, unsigned g, uint32_t gen)
{
	struct gba_net_shm *s = net_of(dev)->shm;
	struct timespec ts = {0, 100000};
	uint64_t deadline = gba_now_ns() + NET_ALLOC_WAIT_MS * 1000000ULL;

	while (atomic_load_explicit(&s->gen[g], memory_order_acquire) != gen) {
		if (atomic_load(&s->agent_state) != GBA_NET_AGENT_UP ||
		    gba_now_ns() > deadline)
			return gba_err_set(-EPIPE,
					   "emu+tcp: the host's agent "
					   "did not take group %u",
					   g);
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int net_group_join(struct gba_dev *dev,
			  const struct gba_group_attr *attr, uint64_t self,
			  unsigned *gp)
{
	struct gba_net *net = net_of(dev);
	struct gba_net_msg m = {.type = GBA_NET_JOIN,
				.a = attr->key,
				.b = ((uint64_t)attr->member_count << 32) |
				     attr->member_id,
				.c = gba_job_id()};
	uint64_t base, agent = atomic_load(&net->shm->agent_slot);
	struct gba_book_group *bg;
	unsigned g, i, mid = attr->member_id;
	uint32_t gen, seq;
	int ret;

	ret = net_rpc(net, &m, 1);
	if (ret)
		return ret;
	g = m.g;
	gen = (uint32_t)m.a;
	seq = (uint32_t)m.b;
	if (g >= GBA_MAX_GROUPS)
		return -EPROTO;
	ret = net_wait_alloc(dev, g, gen);
	if (ret) {
		/* the switch booked us: undo it (best effort) */
		m = (struct gba_net_msg){
			.type = GBA_NET_LEAVE, .g = g, .a = gen, .b = mid};
		net_rpc(net, &m, 1);
		return ret;
	}

	/* the host's table: our slot; the others are the agent's as long
	 * as the agent lives (gba_barrier.c's dead-peer check then sees
	 * the remote members alive exactly while the agent is) */
	bg = &dev->book->group[g];
	if (bg->state == GBA_BOOK_FREE || bg->reserved[0] != gen) {
		bg->key = attr->key;
		bg->member_count = attr->member_count;
		bg->group_id = (uint32_t)(attr->key ^ (attr->key >> 32));
		bg->job = gba_job_id();
		bg->reserved[0] = gen;
		bg->attached = 0;
		for (i = 0; i < GBA_MAX_MEMBERS; i++)
			atomic_store_explicit(&bg->slot[i],
					      i < attr->member_count ? agent
								     : 0,
					      memory_order_relaxed);
		bg->state = GBA_BOOK_ALLOCATED;
	}
	atomic_store_explicit(&bg->slot[mid], self, memory_order_release);
	bg->attached++;

	base = GBA_GROUP_REG_BASE(g);
	__atomic_store_n((uint32_t *)(dev->bar + base + GBA_GROUP_ID),
			 bg->group_id, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)(dev->bar + base + GBA_MEMBER_COUNT),
			 attr->member_count, __ATOMIC_RELAXED);
	__atomic_store_n(REG(dev->bar, base + GBA_RELEASE_ADDR(mid)),
			 GBA_FLAG_IOVA(g, mid), __ATOMIC_RELAXED);
	atomic_store_explicit(net_flag(dev, g, mid), seq, memory_order_relaxed);
	atomic_store_explicit(net_flag(dev, g, mid) + 1, 0,
			      memory_order_relaxed);
	net_release_seq_max(dev, g, seq);
	/* from here the agent stores our flag */
	__atomic_fetch_or(REG(dev->bar, base + GBA_MEMBER_MASK(mid / 64)),
			  1ULL << (mid % 64), __ATOMIC_RELEASE);
	*gp = g;
	return 0;
}

static void net_group_leave(struct gba_dev *dev, unsigned g, uint32_t mid,
			    uint64_t key, uint64_t self)
{
	struct gba_book_group *bg = &dev->book->group[g];
	struct gba_net_msg m = {
		.type = GBA_NET_LEAVE, .g = g, .a = bg->reserved[0], .b = mid};
	uint64_t expect = self;

	if (bg->state == GBA_BOOK_FREE || bg->key != key)
		return;
	__atomic_fetch_and(REG(dev->bar, GBA_GROUP_REG_BASE(g) +
						 GBA_MEMBER_MASK(mid / 64)),
			   ~(1ULL << (mid % 64)), __ATOMIC_RELEASE);
	/* the switch may be gone: the host's table is cleaned regardless */
	net_rpc(net_of(dev), &m, 1);
	if (atomic_compare_exchange_strong(&bg->slot[mid], &expect, 0) &&
	    bg->attached)
		bg->attached--;
	if (!bg->attached) {
		bg->key = 0;
		bg->state = GBA_BOOK_FREE;
		bg->reserved[0] = 0;
	}
}

/* A member of this host found another one dead (gba_barrier.c): record it
 * here, and tell the switch so that every host learns it. */
static void net_report_error(struct gba_dev *dev, unsigned g, uint64_t info)
{
	struct gba_net_msg m = {.type = GBA_NET_REPORT, .g = g, .b = info};
	volatile uint64_t *regs;

	if (g >= GBA_MAX_GROUPS)
		return;
	regs = gba_group_regs(dev, g);
	__atomic_store_n(REG(regs, GBA_ERROR_INFO), info, __ATOMIC_RELAXED);
	__atomic_fetch_or(REG(regs, GBA_STATUS), GBA_STATUS_ERROR,
			  __ATOMIC_RELEASE);
	m.a = dev->book->group[g].reserved[0];
	net_rpc(net_of(dev), &m, 0);
}

/* ---- Lock, fini ------------------------------------------------------------
 */

static int net_lock(struct gba_dev *dev)
{
	return net_of(dev)->emu_ops->lock(dev);
}

static void net_unlock(struct gba_dev *dev)
{
	net_of(dev)->emu_ops->unlock(dev);
}

static void net_fini(struct gba_dev *dev)
{
	struct gba_net *net = net_of(dev);

	if (!net)
		return;
	if (net->sock >= 0)
		close(net->sock);
	if (net->users_fd >= 0)
		close(net->users_fd); /* drops the shared flock */
	pthread_mutex_destroy(&net->rpc_lock);
	dev->priv = net->emu_priv;
	net->emu_ops->fini(dev);
	free(net);
}

static const struct gba_ops gba_net_ops = {
	.name = "emu+tcp",
	.spans_hosts = true,
	.read64 = net_read64,
	.read32 = net_read32,
	.write64 = net_write64,
	.write32 = net_write32,
	.doorbell = net_doorbell,
	.report_error = net_report_error,
	.lock = net_lock,
	.unlock = net_unlock,
	.fini = net_fini,
	.group_join = net_group_join,
	.group_leave = net_group_leave,
};

/* ---- The agent -------------------------------------------------------------
 */

static int net_lockfile(const char *image, const char *suffix)
{
	char name[PATH_MAX];
	int fd;

	snprintf(name, sizeof(name), "%s%s", image, suffix);
	fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return fd < 0 ? gba_err_set(-errno, "shm_open /dev/shm%s", name) : fd;
}

/*
 * Start the agent if none holds "<image>.agent".  Called under the image
 * lock, so that two openers do not both find the lock free.  The lock is
 * taken here and its descriptor handed to the agent as descriptor 3: it
 * is held without a gap from this check to the agent's exit.
 */
static int net_agent_start(struct gba_dev *dev, const char *name)
{
	struct gba_net_shm *s = net_of(dev)->shm;
	posix_spawn_file_actions_t fa;
	const char *path = gba_net_agent_path();
	char *argv[] = {(char *)path, "--daemon", (char *)name, dev->path,
			NULL};
	int fd, ret, status;
	pid_t pid;

	fd = net_lockfile(dev->path, ".agent");
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd); /* an agent holds it */
		return 0;
	}
	atomic_store(&s->agent_state, GBA_NET_AGENT_STARTING);
	atomic_store(&s->agent_slot, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 3);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	ret = posix_spawn(&pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd); /* the agent's copy keeps the lock */
	if (ret) {
		atomic_store(&s->agent_state, GBA_NET_AGENT_NONE);
		return gba_err_set(-ret, "emu+tcp: cannot start %s", path);
	}
	/* the agent forks and its first process exits at once */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* Wait until the host's agent is connected. */
static int net_agent_wait(struct gba_dev *dev)
{
	struct gba_net_shm *s = net_of(dev)->shm;
	struct timespec ts = {0, 1000000};
	uint64_t deadline = gba_now_ns() + NET_AGENT_WAIT_MS * 1000000ULL;
	uint32_t state;
	uint64_t slot;

	for (;;) {
		state = atomic_load(&s->agent_state);
		slot = atomic_load(&s->agent_slot);
		if (state == GBA_NET_AGENT_UP && slot &&
		    gba_proc_slot_alive(slot))
			return 0;
		if (state == GBA_NET_AGENT_FAILED)
			return gba_err_set(atomic_load(&s->agent_error),
					   "emu+tcp: the host's agent cannot "
					   "reach gba_switchd at %s:%d",
					   net_of(dev)->host,
					   net_of(dev)->port);
		if (gba_now_ns() > deadline)
			return gba_err_set(-ETIMEDOUT,
					   "emu+tcp: the host's agent (%s) "
					   "did not come up",
					   gba_net_agent_path());
		nanosleep(&ts, NULL);
	}
}

/* First use of a host image by this backend: the switch-private area of
 * the emu image becomes struct gba_net_shm.  Under the image lock. */
static int net_shm_init(struct gba_net_shm *s)
{
	uint64_t token = 0;

	if (s->magic == GBA_NET_SHM_MAGIC)
		return 0;
	memset(s, 0, sizeof(*s));
	while (!token) {
		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			token = gba_now_ns() ^ ((uint64_t)getpid() << 32);
	}
	s->host_token = token;
	atomic_thread_fence(memory_order_release);
	s->magic = GBA_NET_SHM_MAGIC;
	return 0;
}

int gba_net_init(struct gba_dev *dev, const char *name)
{
	char local[128];
	struct gba_net *net;
	int ret;

	net = calloc(1, sizeof(*net));
	if (!net)
		return -ENOMEM;
	net->sock = net->users_fd = -1;
	pthread_mutex_init(&net->rpc_lock, NULL);
	ret = gba_net_parse(name, net->host, sizeof(net->host), &net->port);
	if (ret) {
		gba_err_set(ret, "device %s: not emu+tcp://HOST[:PORT]", name);
		goto err_free;
	}
	gba_net_local_name(net->host, net->port, local, sizeof(local));
	ret = gba_emu_init(dev, local);
	if (ret)
		goto err_free;
	net->emu_ops = dev->ops;
	net->emu_priv = dev->priv;
	net->shm = gba_net_shm_of(gba_emu(dev)->base);
	dev->ops = &gba_net_ops;
	dev->priv = net;

	ret = net_lockfile(local, ".users");
	if (ret < 0)
		goto err;
	net->users_fd = ret;
	while ((ret = flock(net->users_fd, LOCK_SH)) && errno == EINTR)
		;
	if (ret) {
		ret = -errno;
		goto err;
	}
	ret = net_lock(dev);
	if (ret)
		goto err;
	ret = net_shm_init(net->shm);
	if (!ret)
		ret = net_agent_start(dev, name);
	net_unlock(dev);
	if (!ret)
		ret = net_agent_wait(dev);
	if (!ret) {
		pthread_mutex_lock(&net->rpc_lock);
		ret = net_sock(net);
		pthread_mutex_unlock(&net->rpc_lock);
		ret = ret < 0 ? ret : 0;
	}
	if (ret)
		goto err;
	return 0;

err:
	net_fini(dev);
	return ret;
err_free:
	pthread_mutex_destroy(&net->rpc_lock);
	free(net);
	return ret;
}
