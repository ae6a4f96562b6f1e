/*
 * gba_agent: the emulated NIC of one host for the networked emulated
 * switch (device "emu+tcp://HOST:PORT", doc/design.md section 9, "The
 * switch across hosts").
 *
 *   gba_agent [--daemon] emu+tcp://HOST:PORT /HOST-IMAGE
 *
 * Started by libgba (gba_net.c) from the first process of a user that
 * opens the device on a host, with descriptor 3 holding the exclusive
 * flock on "/dev/shm/HOST-IMAGE.agent" (one agent per host, user and
 * switch); started by hand it takes that lock itself and exits at once if
 * another agent holds it.  --daemon: fork, detach (setsid) and let the
 * starting process reap the first process at once.
 *
 * Two threads:
 *   - the forwarder (main thread) takes the doorbells the members stored
 *     into the host image (struct gba_net_shm) and sends them to
 *     gba_switchd as ARRIVE messages, several per send; with nothing to
 *     do it spins GBA_AGENT_SPIN_US microseconds (default 20), then sleeps
 *     on a futex that the next doorbell wakes;
 *   - the receiver stores what gba_switchd sends into the host image:
 *     RELEASE into the release flags of the host's members of the group
 *     (and RELEASE_SEQ), ERROR into ERROR_INFO and STATUS.ERROR, ALLOC
 *     resets the host's view of a newly allocated group.
 * When gba_switchd goes away (end of stream, keepalive), every group of
 * the host gets ERROR_INFO = PEER_LOST for the barrier it is collecting,
 * the agent state reads LOST, and the agent exits.  It also exits when no
 * process holds the shared lock on "HOST-IMAGE.users" (checked while
 * asleep, every 200 ms).
 * Exit status: 0, 1 (could not connect: the reason is in the image for
 * the starting process, and on stderr), 2 (usage).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gba_emu.h"
#include "gba_net.h"

#define AGENT_SLEEP_MS 200
/* ARRIVE messages sent per send() at most */
#define AGENT_BATCH 256

static struct gba_dev *dev;
static struct gba_net_shm *shm;
static int sock = -1;
static int agent_fd = -1, users_fd = -1;
static char *image;

#define REG(base, off) ((uint64_t *)((uint8_t *)(base) + (off)))

static inline uint64_t *greg(unsigned g, uint64_t off)
{
	return REG(dev->bar, GBA_GROUP_REG_BASE(g) + off);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/* gba_switchd is gone: fail the barriers in progress on this host. */
static void __attribute__((noreturn)) agent_lost(const char *why, int err)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	unsigned g;

	pthread_mutex_lock(&once); /* both threads may get here */
	fprintf(stderr, "gba_agent %s: lost gba_switchd (%s: %s)\n", image, why,
		strerror(-err));
	for (g = 0; g < GBA_MAX_GROUPS; g++) {
		uint32_t seq;

		if (!atomic_load(&shm->gen[g]))
			continue;
		seq = (uint32_t)__atomic_load_n(greg(g, GBA_RELEASE_SEQ),
						__ATOMIC_ACQUIRE) +
		      1;
		__atomic_store_n(
			greg(g, GBA_ERROR_INFO),
			GBA_ERROR_INFO_VALUE(GBA_ERR_PEER_LOST, 0xffffff, seq),
			__ATOMIC_RELAXED);
		__atomic_fetch_or(greg(g, GBA_STATUS), GBA_STATUS_ERROR,
				  __ATOMIC_RELEASE);
		/* the next join on this host waits for a new generation */
		atomic_store(&shm->gen[g], 0);
	}
	atomic_store(&shm->agent_state, GBA_NET_AGENT_LOST);
	close(agent_fd); /* the next opener starts a new agent */
	_exit(0);
}

/* ---- Receiver ----------------------------------------------------------- */

static void on_release(unsigned g, uint32_t seq)
{
	uint64_t *rs = greg(g, GBA_RELEASE_SEQ), cur, bits;
	unsigned w;

	cur = __atomic_load_n(rs, __ATOMIC_ACQUIRE);
	while (!gba_seq_reached((uint32_t)cur, seq) &&
	       !__atomic_compare_exchange_n(rs, &cur, seq, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
	if (!(__atomic_load_n(greg(g, GBA_STATUS), __ATOMIC_RELAXED) &
	      GBA_STATUS_COMPLETE))
		__atomic_fetch_or(greg(g, GBA_STATUS), GBA_STATUS_COMPLETE,
				  __ATOMIC_RELAXED);
	for (w = 0; w < GBA_MASK_WORDS; w++) {
		bits = __atomic_load_n(greg(g, GBA_MEMBER_MASK(w)),
				       __ATOMIC_ACQUIRE);
		for (; bits; bits &= bits - 1) {
			unsigned m = w * 64 + __builtin_ctzll(bits);

			if (m >= GBA_MAX_MEMBERS)
				break;
			__atomic_store_n(
				(uint64_t *)(dev->flags + (GBA_FLAG_IOVA(g, m) -
							   GBA_FLAG_OFFSET)),
				(uint64_t)seq, __ATOMIC_RELEASE);
		}
	}
}

static void on_alloc(unsigned g, uint32_t gen, uint32_t seq)
{
	unsigned w;

	atomic_store(&shm->gen[g], 0);
	for (w = 0; w < GBA_MASK_WORDS; w++) {
		__atomic_store_n(greg(g, GBA_MEMBER_MASK(w)), 0,
				 __ATOMIC_RELAXED);
		__atomic_store_n(greg(g, GBA_ARRIVED_MASK(w)), 0,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(greg(g, GBA_ERROR_INFO), 0, __ATOMIC_RELAXED);
	__atomic_store_n(greg(g, GBA_ARRIVAL_COUNT), 0, __ATOMIC_RELAXED);
	__atomic_store_n(greg(g, GBA_RELEASE_SEQ), seq, __ATOMIC_RELAXED);
	__atomic_store_n(greg(g, GBA_CONTROL), GBA_CTRL_ENABLE | GBA_CTRL_ARM,
			 __ATOMIC_RELAXED);
	__atomic_store_n(greg(g, GBA_STATUS),
			 GBA_STATUS_READY | GBA_STATUS_ACTIVE,
			 __ATOMIC_RELAXED);
	atomic_store_explicit(&shm->gen[g], gen, memory_order_release);
}

static void *receiver(void *arg)
{
	struct gba_net_msg m;
	int ret;

	(void)arg;
	for (;;) {
		ret = gba_net_recv(sock, &m, -1);
		if (ret)
			agent_lost("receive", ret);
		if (m.g >= GBA_MAX_GROUPS)
			continue;
		switch (m.type) {
		case GBA_NET_ALLOC:
			on_alloc(m.g, (uint32_t)m.a, (uint32_t)m.b);
			break;
		case GBA_NET_RELEASE:
			if (atomic_load_explicit(&shm->gen[m.g],
						 memory_order_acquire) ==
			    (uint32_t)m.a)
				on_release(m.g, (uint32_t)m.b);
			break;
		case GBA_NET_ERROR:
			if (atomic_load(&shm->gen[m.g]) != (uint32_t)m.a)
				break;
			__atomic_store_n(greg(m.g, GBA_ERROR_INFO), m.b,
					 __ATOMIC_RELAXED);
			__atomic_fetch_or(greg(m.g, GBA_STATUS),
					  GBA_STATUS_ERROR, __ATOMIC_RELEASE);
			break;
		default:
			break;
		}
	}
	return NULL;
}

/* ---- Forwarder ---------------------------------------------------------- */

/* Send the pending doorbells; returns how many. */
static unsigned forward(void)
{
	static uint8_t buf[AGENT_BATCH * GBA_NET_MSG_SIZE];
	uint32_t sum = atomic_exchange(&shm->summary, 0);
	unsigned n = 0, total = 0, g, w;
	struct gba_net_msg m = {.type = GBA_NET_ARRIVE};
	uint64_t bits;
	int ret;

	for (; sum; sum &= sum - 1) {
		g = __builtin_ctz(sum);
		for (w = 0; w < GBA_MASK_WORDS; w++) {
			if (!atomic_load_explicit(&shm->pending[g][w],
						  memory_order_relaxed))
				continue;
			bits = atomic_exchange_explicit(&shm->pending[g][w], 0,
							memory_order_acquire);
			for (; bits; bits &= bits - 1) {
				unsigned i = w * 64 + __builtin_ctzll(bits);

				if (i >= GBA_NET_DB_SLOTS)
					break;
				m.g = g;
				m.a = atomic_load_explicit(
					&shm->db[g][i], memory_order_relaxed);
				gba_net_msg_put(buf + n * GBA_NET_MSG_SIZE, &m);
				total++;
				if (++n == AGENT_BATCH) {
					ret = gba_net_write(sock, buf,
							    sizeof(buf));
					if (ret)
						agent_lost("send", ret);
					n = 0;
				}
			}
		}
	}
	if (n) {
		ret = gba_net_write(sock, buf, n * GBA_NET_MSG_SIZE);
		if (ret)
			agent_lost("send", ret);
	}
	return total;
}

/* No process uses the device any more: exit (keeping the users lock
 * until the agent lock is gone, so a new user starts a new agent). */
static void exit_if_unused(void)
{
	if (flock(users_fd, LOCK_EX | LOCK_NB))
		return;
	atomic_store(&shm->agent_state, GBA_NET_AGENT_NONE);
	close(sock);
	close(agent_fd);
	_exit(0);
}

static void forwarder(void)
{
	const char *env = getenv("GBA_AGENT_SPIN_US");
	uint64_t spin_ns = (env ? strtoull(env, NULL, 10) : 20) * 1000ULL;
	struct timespec tmo = {0, AGENT_SLEEP_MS * 1000000L};
	uint64_t idle_since = 0;
	unsigned i;

	for (;;) {
		if (forward()) {
			idle_since = 0;
			continue;
		}
		if (!idle_since)
			idle_since = gba_now_ns();
		if (gba_now_ns() - idle_since < spin_ns) {
			for (i = 0; i < 64; i++)
				cpu_relax();
			continue;
		}
		atomic_store_explicit(&shm->sleeping, 1, memory_order_seq_cst);
		if (atomic_load_explicit(&shm->summary, memory_order_seq_cst)) {
			atomic_store(&shm->sleeping, 0);
			continue;
		}
		if (syscall(SYS_futex, &shm->sleeping, FUTEX_WAIT, 1, &tmo,
			    NULL, 0) &&
		    errno == ETIMEDOUT)
			exit_if_unused();
		atomic_store(&shm->sleeping, 0);
		idle_since = 0;
	}
}

/* ---- Start-up -------------------------------------------------------------
 */

static int lockfile(const char *suffix)
{
	char name[PATH_MAX];
	int fd;

	snprintf(name, sizeof(name), "%s%s", image, suffix);
	fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		fprintf(stderr, "gba_agent: shm_open /dev/shm%s: %s\n", name,
			strerror(errno));
	return fd;
}

static int hello(const char *url)
{
	struct gba_net_msg m = {.type = GBA_NET_HELLO_AGENT,
				.b = GBA_NET_VERSION};
	char host[256];
	int port, ret;

	ret = gba_net_parse(url, host, sizeof(host), &port);
	if (ret)
		return ret;
	sock = gba_net_connect(host, port, 5000);
	if (sock < 0)
		return sock;
	m.a = shm->host_token;
	ret = gba_net_send(sock, &m);
	if (!ret)
		ret = gba_net_recv(sock, &m, 10000);
	if (!ret && m.type != GBA_NET_REPLY)
		ret = -EPROTO;
	return ret ? ret : m.ret;
}

int main(int argc, char **argv)
{
	char devname[PATH_MAX];
	pthread_t thr;
	int daemon = 0, ret;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--daemon")) {
		daemon = 1;
		argc--;
		argv++;
	}
	if (argc != 3 ||
	    strncmp(argv[1], GBA_NET_PREFIX, strlen(GBA_NET_PREFIX)) ||
	    argv[2][0] != '/') {
		fprintf(stderr, "usage: gba_agent [--daemon] "
				"emu+tcp://HOST:PORT /HOST-IMAGE\n");
		return 2;
	}
	image = argv[2];
	if (daemon) {
		/* the lock, taken by the starting process */
		agent_fd = 3;
		if (fcntl(3, F_SETFD, FD_CLOEXEC)) {
			perror("gba_agent --daemon: descriptor 3");
			return 2;
		}
	} else {
		agent_fd = lockfile(".agent");
		if (agent_fd < 0)
			return 1;
		if (flock(agent_fd, LOCK_EX | LOCK_NB))
			return 0; /* another agent serves the host */
	}
	if (daemon) {
		pid = fork();
		if (pid < 0) {
			perror("gba_agent: fork");
			return 1;
		}
		if (pid)
			_exit(0);
		setsid();
	}
	snprintf(devname, sizeof(devname), "emu:%s", image);
	ret = gba_dev_open(devname, &dev);
	if (ret) {
		fprintf(stderr, "gba_agent: open %s: %s\n", devname,
			gba_last_error(ret));
		return 1;
	}
	shm = gba_net_shm_of(gba_emu(dev)->base);
	users_fd = lockfile(".users");
	if (users_fd < 0)
		return 1;
	atomic_store(&shm->agent_slot, gba_proc_self_slot());
	atomic_store(&shm->agent_state, GBA_NET_AGENT_STARTING);

	ret = hello(argv[1]);
	if (ret) {
		fprintf(stderr, "gba_agent: gba_switchd at %s: %s\n", argv[1],
			strerror(-ret));
		atomic_store(&shm->agent_error, ret);
		atomic_store(&shm->agent_state, GBA_NET_AGENT_FAILED);
		return 1;
	}
	atomic_store(&shm->agent_state, GBA_NET_AGENT_UP);
	ret = pthread_create(&thr, NULL, receiver, NULL);
	if (ret)
		agent_lost("pthread_create", -ret);
	forwarder();
	return 0;
}
