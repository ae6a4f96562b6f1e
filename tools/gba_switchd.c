/*
 * gba_switchd: the emulated GBA switch as a network service (device
 * "emu+tcp://HOST:PORT", doc/design.md section 9, "The switch across
 * hosts", gba_switchd(8)).
 *
 * The switch is one emulated register map, an ordinary emu image
 * ("/gba-switchd-<port>" by default, readable with gba_stat -d emu:/NAME
 * on the switch's host) driven by the emulated device's own switch logic
 * (gba_emu_switch.c): 32 groups of up to 708 members, arrival and release
 * semantics, ERROR/ERROR_INFO, ARRIVED_MASK.  What this program adds is
 * the network: hosts' agents (gba_agent) send the members' doorbells,
 * and receive the releases and errors of the groups their host has
 * members in; member processes connect to book members (join, leave).
 *
 * Ownership: a member is owned by the connection of the process that
 * joined it.  When that connection closes without a leave (the process
 * died), or the agent of its host goes away, the member is dead: the
 * group gets ERROR_INFO = PEER_LOST (member, epoch) at once if the member
 * has not arrived in the epoch being collected, else as soon as that
 * epoch is released.  A group with no live member left is reclaimed
 * (reset, free for the next join).
 *
 * One thread, poll(): every message is handled to completion, the
 * replies and releases of one round go out together.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gba_emu.h"
#include "gba_net.h"

#define MAX_HOSTS 256
#define HOST_WORDS (MAX_HOSTS / 64)
#define MAX_CONNS 4096
/* a connection whose peer does not read is dropped beyond this backlog */
#define WBUF_MAX (64u << 20)

enum { CONN_NEW, CONN_AGENT, CONN_PROC };

struct conn {
	int fd;
	int kind;
	int host;      /* index in hosts[], -1 before HELLO */
	uint64_t slot; /* process slot (CONN_PROC) */
	size_t rlen;
	uint8_t rbuf[64 * GBA_NET_MSG_SIZE];
	uint8_t *wbuf;
	size_t wlen, wcap;
};

struct host {
	uint64_t token;
	int agent; /* connection index, -1 when none */
};

struct member {
	int conn; /* owner connection, -1 when none */
	int host;
	int dead; /* its owner went away without a leave */
};

struct group {
	uint32_t gen;  /* allocation generation, 0 when free */
	uint32_t live; /* members with an owner */
	uint32_t ndead;
	uint64_t seen[HOST_WORDS]; /* hosts told of this generation */
	struct member m[GBA_MAX_MEMBERS];
};

static struct gba_dev *sdev;
static struct gba_emu *semu;
static struct conn *conns[MAX_CONNS];
static struct host hosts[MAX_HOSTS];
static unsigned nhosts;
static struct group groups[GBA_MAX_GROUPS];
static uint32_t gen_counter;
static int conn_hi; /* connections are below this index */
static uint64_t self_slot;
static int verbose;
static volatile sig_atomic_t stop;

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "gba_switchd %ld.%03ld: ", (long)ts.tv_sec,
		ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- Output ------------------------------------------------------------- */

static void queue(int ci, const struct gba_net_msg *m)
{
	struct conn *c = conns[ci];
	uint8_t *nb;
	size_t cap;

	if (!c || c->fd < 0)
		return;
	if (c->wlen + GBA_NET_MSG_SIZE > c->wcap) {
		cap = c->wcap ? 2 * c->wcap : 64 * GBA_NET_MSG_SIZE;
		nb = cap <= WBUF_MAX ? realloc(c->wbuf, cap) : NULL;
		if (!nb) {
			logmsg("connection %d: peer does not read, dropped",
			       ci);
			shutdown(c->fd, SHUT_RDWR); /* poll sees it */
			return;
		}
		c->wbuf = nb;
		c->wcap = cap;
	}
	gba_net_msg_put(c->wbuf + c->wlen, m);
	c->wlen += GBA_NET_MSG_SIZE;
}

static void reply(int ci, int ret, unsigned g, uint64_t a, uint64_t b)
{
	struct gba_net_msg m = {
		.type = GBA_NET_REPLY, .ret = ret, .g = g, .a = a, .b = b};

	queue(ci, &m);
}

/* Send what can go without blocking; 0, or -1 if the peer is gone. */
static int flush(struct conn *c)
{
	ssize_t n;
	size_t off = 0;

	while (off < c->wlen) {
		n = send(c->fd, c->wbuf + off, c->wlen - off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -1;
		}
		off += (size_t)n;
	}
	memmove(c->wbuf, c->wbuf + off, c->wlen - off);
	c->wlen -= off;
	return 0;
}

/* Queue @m to the agent of every host told of group @g. */
static void broadcast(unsigned g, const struct gba_net_msg *m)
{
	unsigned w, h;
	uint64_t bits;

	for (w = 0; w < HOST_WORDS; w++)
		for (bits = groups[g].seen[w]; bits; bits &= bits - 1) {
			h = w * 64 + __builtin_ctzll(bits);
			if (hosts[h].agent >= 0)
				queue(hosts[h].agent, m);
		}
}

/* ---- The switch -----------------------------------------------------------
 */

static uint64_t greg(unsigned g, uint64_t off)
{
	return sdev->ops->read64(sdev, GBA_GROUP_REG_BASE(g) + off);
}

static uint32_t epoch_of(unsigned g)
{
	return atomic_load(&semu->sw[g].epoch);
}

static void set_error(unsigned g, uint64_t info)
{
	struct gba_net_msg m = {
		.type = GBA_NET_ERROR, .g = g, .a = groups[g].gen, .b = info};

	gba_emu_sw_report_error(sdev, g, info);
	broadcast(g, &m);
}

/* Protocol step 1 for group @g, as gba_group.c does on one host. */
static int program(unsigned g, uint64_t key, uint32_t n)
{
	uint64_t base = GBA_GROUP_REG_BASE(g), mask[GBA_MASK_WORDS] = {0};
	const struct gba_ops *ops = sdev->ops;
	unsigned m, w;

	for (m = 0; m < n; m++) {
		*(uint64_t *)(sdev->flags +
			      (GBA_FLAG_IOVA(g, m) - GBA_FLAG_OFFSET)) = 0;
		mask[m / 64] |= 1ULL << (m % 64);
	}
	ops->write64(sdev, base + GBA_CONTROL, GBA_CTRL_RESET);
	ops->write32(sdev, base + GBA_GROUP_ID,
		     (uint32_t)(key ^ (key >> 32))
			     ? (uint32_t)(key ^ (key >> 32))
			     : 1);
	ops->write32(sdev, base + GBA_MEMBER_COUNT, n);
	for (w = 0; w < GBA_MASK_WORDS; w++)
		ops->write64(sdev, base + GBA_MEMBER_MASK(w), mask[w]);
	for (m = 0; m < n; m++)
		ops->write64(sdev, base + GBA_RELEASE_ADDR(m),
			     GBA_FLAG_IOVA(g, m));
	ops->write64(sdev, base + GBA_CONTROL, GBA_CTRL_ENABLE | GBA_CTRL_ARM);
	return (greg(g, GBA_STATUS) & GBA_STATUS_READY) ? 0 : -EIO;
}

/* Protocol step 5: the group's last live member is gone. */
static void group_free(unsigned g)
{
	struct gba_book_group *bg = &sdev->book->group[g];
	struct group *gr = &groups[g];
	unsigned m;

	if (verbose)
		logmsg("group %u (generation %u) freed", g, gr->gen);
	sdev->ops->write64(sdev, GBA_GROUP_REG_BASE(g) + GBA_CONTROL,
			   GBA_CTRL_RESET);
	for (m = 0; m < GBA_MAX_MEMBERS; m++) {
		atomic_store(&bg->slot[m], 0);
		gr->m[m].conn = -1;
		gr->m[m].host = -1;
		gr->m[m].dead = 0;
	}
	bg->attached = 0;
	bg->member_count = 0;
	bg->group_id = 0;
	bg->job = 0;
	bg->key = 0;
	bg->state = GBA_BOOK_FREE;
	memset(gr->seen, 0, sizeof(gr->seen));
	gr->gen = 0;
	gr->live = 0;
	gr->ndead = 0;
}

/* A dead member that has not arrived in the epoch being collected fails
 * it; returns 1 if it did. */
static int fail_on_dead(unsigned g)
{
	struct group *gr = &groups[g];
	uint32_t epoch = epoch_of(g), n = sdev->book->group[g].member_count;
	unsigned m;

	for (m = 0; m < n && gr->ndead; m++) {
		if (!gr->m[m].dead ||
		    atomic_load(&semu->sw[g].member[m].last) == epoch)
			continue;
		logmsg("group %u: member %u lost, barrier %u fails", g, m,
		       epoch);
		set_error(g, GBA_ERROR_INFO_VALUE(GBA_ERR_PEER_LOST, m, epoch));
		return 1;
	}
	return 0;
}

static void detach(unsigned g, unsigned mid, int dead)
{
	struct gba_book_group *bg = &sdev->book->group[g];
	struct group *gr = &groups[g];

	gr->m[mid].conn = -1;
	gr->live--;
	atomic_store(&bg->slot[mid], 0);
	bg->attached--;
	if (dead) {
		gr->m[mid].dead = 1;
		gr->ndead++;
	}
	if (!gr->live)
		group_free(g);
	else if (dead)
		fail_on_dead(g);
}

static void on_join(int ci, const struct gba_net_msg *in)
{
	struct conn *c = conns[ci];
	uint64_t key = in->a, job = in->c;
	uint32_t n = (uint32_t)(in->b >> 32), mid = (uint32_t)in->b;
	unsigned g, free_g = GBA_MAX_GROUPS, h = (unsigned)c->host;
	struct gba_book_group *bg;
	struct group *gr;
	struct gba_net_msg m;
	int ret;

	if (!key || !n || n > GBA_MAX_MEMBERS || mid >= n) {
		reply(ci, -EINVAL, 0, 0, 0);
		return;
	}
	if (hosts[h].agent < 0) {
		reply(ci, -ENOTCONN, 0, 0, 0);
		return;
	}
	for (g = 0; g < GBA_MAX_GROUPS; g++) {
		bg = &sdev->book->group[g];
		if (bg->state == GBA_BOOK_FREE) {
			if (free_g == GBA_MAX_GROUPS)
				free_g = g;
			continue;
		}
		if (bg->key == key)
			break;
	}
	if (g == GBA_MAX_GROUPS) {
		if (free_g == GBA_MAX_GROUPS) {
			reply(ci, -ENOSPC, 0, 0, 0);
			return;
		}
		g = free_g;
		bg = &sdev->book->group[g];
		ret = program(g, key, n);
		if (ret) {
			reply(ci, ret, 0, 0, 0);
			return;
		}
		bg->key = key;
		bg->member_count = n;
		bg->group_id = (uint32_t)greg(g, GBA_GROUP_ID);
		bg->job = job;
		bg->attached = 0;
		bg->state = GBA_BOOK_ALLOCATED;
		if (!++gen_counter)
			++gen_counter;
		groups[g].gen = gen_counter;
		if (verbose)
			logmsg("group %u allocated: %u members, generation %u",
			       g, n, gen_counter);
	} else if (bg->member_count != n) {
		reply(ci, -EINVAL, 0, 0, 0);
		return;
	}
	gr = &groups[g];
	if (gr->m[mid].conn >= 0) {
		reply(ci, -EADDRINUSE, 0, 0, 0);
		return;
	}
	if (gr->m[mid].dead) { /* a new process takes a dead one's place */
		gr->m[mid].dead = 0;
		gr->ndead--;
	}
	gr->m[mid].conn = ci;
	gr->m[mid].host = (int)h;
	gr->live++;
	atomic_store(&bg->slot[mid], self_slot);
	bg->attached++;
	if (!(gr->seen[h / 64] & (1ULL << (h % 64)))) {
		gr->seen[h / 64] |= 1ULL << (h % 64);
		m = (struct gba_net_msg){.type = GBA_NET_ALLOC,
					 .g = g,
					 .a = gr->gen,
					 .b = epoch_of(g) - 1};
		queue(hosts[h].agent, &m);
	}
	reply(ci, 0, g, gr->gen, epoch_of(g) - 1);
}

static void on_arrive(unsigned g, uint64_t val)
{
	uint32_t before = epoch_of(g), after;
	uint64_t status = greg(g, GBA_STATUS), info = greg(g, GBA_ERROR_INFO);
	struct gba_net_msg m;

	gba_emu_sw_arrival(sdev, g, val);
	after = epoch_of(g);
	if (after != before) {
		m = (struct gba_net_msg){.type = GBA_NET_RELEASE,
					 .g = g,
					 .a = groups[g].gen,
					 .b = after - 1};
		broadcast(g, &m);
		if (groups[g].ndead)
			fail_on_dead(g);
	}
	if (!groups[g].gen)
		return;
	if (greg(g, GBA_ERROR_INFO) != info ||
	    ((greg(g, GBA_STATUS) ^ status) & GBA_STATUS_ERROR)) {
		info = greg(g, GBA_ERROR_INFO);
		if (verbose)
			logmsg("group %u: %s (member %u, seq %u)", g,
			       gba_strerror_info(info),
			       GBA_ERROR_INFO_MEMBER(info),
			       GBA_ERROR_INFO_SEQ(info));
		m = (struct gba_net_msg){.type = GBA_NET_ERROR,
					 .g = g,
					 .a = groups[g].gen,
					 .b = info};
		broadcast(g, &m);
	}
}

/*
 * A member process found a peer lost in barrier SEQ of @info (its host
 * view, gba_barrier.c).  Only the barrier being collected can fail: an
 * older one was released here, and its release only did not reach the
 * reporter's host (its agent died with it in flight).  Storing that
 * report would overwrite ERROR_INFO naming the barrier the other hosts
 * wait in, and they would wait until their timeout.
 */
static void on_report(unsigned g, uint64_t info)
{
	uint32_t epoch = epoch_of(g), seq = GBA_ERROR_INFO_SEQ(info);

	if (seq != epoch) {
		logmsg("group %u: a host reports member %u lost in barrier "
		       "%u, already released (collecting %u): ignored",
		       g, GBA_ERROR_INFO_MEMBER(info), seq, epoch);
		return;
	}
	logmsg("group %u: a host reports member %u lost", g,
	       GBA_ERROR_INFO_MEMBER(info));
	set_error(g, info);
}

static int find_host(uint64_t token)
{
	unsigned h;

	for (h = 0; h < nhosts; h++)
		if (hosts[h].token == token)
			return (int)h;
	if (nhosts == MAX_HOSTS)
		return -1;
	hosts[nhosts].token = token;
	hosts[nhosts].agent = -1;
	return (int)nhosts++;
}

static void handle(int ci, const struct gba_net_msg *m)
{
	struct conn *c = conns[ci];
	int h;

	if (c->kind == CONN_NEW) {
		if ((m->type != GBA_NET_HELLO_AGENT &&
		     m->type != GBA_NET_HELLO_PROC) ||
		    m->b != GBA_NET_VERSION) {
			reply(ci, -EPROTO, 0, 0, 0);
			shutdown(c->fd, SHUT_RD);
			return;
		}
		h = find_host(m->a);
		if (h < 0) {
			reply(ci, -ENOSPC, 0, 0, 0);
			return;
		}
		if (m->type == GBA_NET_HELLO_AGENT) {
			if (hosts[h].agent >= 0) {
				reply(ci, -EADDRINUSE, 0, 0, 0);
				return;
			}
			hosts[h].agent = ci;
			c->kind = CONN_AGENT;
			if (verbose)
				logmsg("host %d: agent connected", h);
		} else {
			c->kind = CONN_PROC;
			c->slot = m->c;
		}
		c->host = h;
		reply(ci, 0, 0, 0, 0);
		return;
	}
	if (c->kind == CONN_AGENT) {
		if (m->type == GBA_NET_ARRIVE && m->g < GBA_MAX_GROUPS)
			on_arrive(m->g, m->a);
		return;
	}
	switch (m->type) {
	case GBA_NET_JOIN:
		on_join(ci, m);
		break;
	case GBA_NET_LEAVE:
		if (m->g < GBA_MAX_GROUPS && groups[m->g].gen == m->a &&
		    m->b < GBA_MAX_MEMBERS && groups[m->g].m[m->b].conn == ci)
			detach(m->g, (unsigned)m->b, 0);
		reply(ci, 0, 0, 0, 0);
		break;
	case GBA_NET_REPORT:
		if (m->g < GBA_MAX_GROUPS && groups[m->g].gen &&
		    groups[m->g].gen == m->a)
			on_report(m->g, m->b);
		break;
	default:
		reply(ci, -EPROTO, 0, 0, 0);
		break;
	}
}

/* ---- Connections ----------------------------------------------------------
 */

static void conn_close(int ci)
{
	struct conn *c = conns[ci];
	unsigned g, mid;
	int agent = c->kind == CONN_AGENT;

	if (agent) {
		logmsg("host %d: agent gone, its members are lost", c->host);
		hosts[c->host].agent = -1;
		/* a new agent of the host is told of the groups again */
		for (g = 0; g < GBA_MAX_GROUPS; g++)
			groups[g].seen[c->host / 64] &=
				~(1ULL << (c->host % 64));
	}
	for (g = 0; g < GBA_MAX_GROUPS; g++) {
		for (mid = 0; groups[g].gen && mid < GBA_MAX_MEMBERS; mid++) {
			struct member *mb = &groups[g].m[mid];

			if (mb->conn < 0 ||
			    (mb->conn != ci && !(agent && mb->host == c->host)))
				continue;
			if (!agent)
				logmsg("group %u: member %u's process went "
				       "away",
				       g, mid);
			detach(g, mid, 1);
		}
	}
	close(c->fd);
	free(c->wbuf);
	free(c);
	conns[ci] = NULL;
}

static void conn_read(int ci)
{
	struct conn *c = conns[ci];
	struct gba_net_msg m;
	size_t off = 0;
	ssize_t n;

	n = recv(c->fd, c->rbuf + c->rlen, sizeof(c->rbuf) - c->rlen,
		 MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		conn_close(ci);
		return;
	}
	c->rlen += (size_t)n;
	while (c->rlen - off >= GBA_NET_MSG_SIZE && conns[ci]) {
		gba_net_msg_get(c->rbuf + off, &m);
		off += GBA_NET_MSG_SIZE;
		handle(ci, &m);
	}
	memmove(c->rbuf, c->rbuf + off, c->rlen - off);
	c->rlen -= off;
}

static void conn_accept(int lfd)
{
	struct conn *c;
	int fd, ci;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (ci = 0; ci < MAX_CONNS && conns[ci]; ci++)
		;
	c = ci < MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		logmsg("too many connections, one refused");
		close(fd);
		return;
	}
	gba_net_tune(fd);
	c->fd = fd;
	c->host = -1;
	conns[ci] = c;
	if (ci >= conn_hi)
		conn_hi = ci + 1;
}

static int listen_on(const char *addr, int port)
{
	struct addrinfo hints = {0}, *res;
	char svc[16];
	int fd, one = 1, ret;

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(svc, sizeof(svc), "%d", port);
	ret = getaddrinfo(addr, svc, &hints, &res);
	if (ret) {
		fprintf(stderr, "gba_switchd: %s: %s\n", addr ? addr : "*",
			gai_strerror(ret));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 128)) {
		fprintf(stderr, "gba_switchd: listen on %s:%d: %s\n",
			addr ? addr : "*", port, strerror(errno));
		freeaddrinfo(res);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	freeaddrinfo(res);
	return fd;
}

static int write_pidfile(const char *path, pid_t pid)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%d\n", (int)pid) < 0 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gba_switchd [-l ADDR] [-p PORT] [-n /IMAGE] "
		"[--daemon] [--pidfile FILE] [-v]\n"
		"  -l, --listen ADDR   address to listen on (default: all)\n"
		"  -p, --port PORT     TCP port (default %d)\n"
		"  -n, --image /NAME   the switch's register image "
		"(default /gba-switchd-PORT)\n"
		"  -d, --daemon        detach once listening\n"
		"  -P, --pidfile FILE  write the daemon's pid to FILE\n"
		"  -v, --verbose       log allocations and errors\n",
		GBA_NET_DEFAULT_PORT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"port", required_argument, NULL, 'p'},
		{"image", required_argument, NULL, 'n'},
		{"daemon", no_argument, NULL, 'd'},
		{"pidfile", required_argument, NULL, 'P'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *addr = NULL, *pidfile = NULL;
	char image[128] = "", devname[160];
	struct pollfd *pfd;
	struct sigaction sa = {0};
	int port = GBA_NET_DEFAULT_PORT, daemon = 0, lfd, opt, ret, ci, n;
	unsigned g, m;

	while ((opt = getopt_long(argc, argv, "l:p:n:dP:vh", opts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'l':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			if (port < 1 || port > 65535) {
				fprintf(stderr, "gba_switchd: bad port %s\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			if (optarg[0] != '/' || strchr(optarg + 1, '/') ||
			    strlen(optarg) >= sizeof(image)) {
				fprintf(stderr,
					"gba_switchd: bad image name "
					"%s\n",
					optarg);
				return 2;
			}
			snprintf(image, sizeof(image), "%s", optarg);
			break;
		case 'd':
			daemon = 1;
			break;
		case 'P':
			pidfile = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!image[0])
		snprintf(image, sizeof(image), "/gba-switchd-%d", port);

	lfd = listen_on(addr, port);
	if (lfd < 0)
		return 1;
	/* a fresh switch: power-on state */
	shm_unlink(image);
	snprintf(devname, sizeof(devname), "emu:%s", image);
	ret = gba_dev_open(devname, &sdev);
	if (ret) {
		fprintf(stderr, "gba_switchd: %s: %s\n", devname,
			gba_last_error(ret));
		return 1;
	}
	semu = gba_emu(sdev);
	for (g = 0; g < GBA_MAX_GROUPS; g++)
		for (m = 0; m < GBA_MAX_MEMBERS; m++)
			groups[g].m[m].conn = groups[g].m[m].host = -1;

	if (daemon) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("gba_switchd: fork");
			return 1;
		}
		if (pid) {
			/* the pid file exists when the command returns */
			if (pidfile && write_pidfile(pidfile, pid)) {
				kill(pid, SIGTERM);
				return 1;
			}
			_exit(0);
		}
		setsid();
		if (!freopen("/dev/null", "r", stdin) ||
		    !freopen("/dev/null", "w", stdout))
			return 1;
	} else if (pidfile && write_pidfile(pidfile, getpid())) {
		return 1;
	}
	self_slot = gba_proc_self_slot();
	/*
	 * Generations start anywhere: a host image may still hold those of
	 * an earlier switch on this port (its agent killed, not told).
	 */
	gen_counter = (uint32_t)(gba_now_ns() ^ ((uint64_t)getpid() << 20));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (verbose || !daemon)
		logmsg("listening on %s:%d, image %s", addr ? addr : "*", port,
		       image);
	fflush(stdout);

	pfd = calloc(MAX_CONNS + 1, sizeof(*pfd));
	if (!pfd)
		return 1;
	while (!stop) {
		int idx[MAX_CONNS + 1];

		n = 0;
		pfd[n].fd = lfd;
		pfd[n].events = POLLIN;
		idx[n++] = -1;
		for (ci = 0; ci < conn_hi; ci++) {
			if (!conns[ci])
				continue;
			pfd[n].fd = conns[ci]->fd;
			pfd[n].events =
				POLLIN | (conns[ci]->wlen ? POLLOUT : 0);
			idx[n++] = ci;
		}
		ret = poll(pfd, (nfds_t)n, -1);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			perror("gba_switchd: poll");
			break;
		}
		for (int i = 0; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (idx[i] < 0) {
				conn_accept(lfd);
				continue;
			}
			ci = idx[i];
			if (conns[ci] &&
			    (pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
				conn_read(ci);
		}
		for (ci = 0; ci < conn_hi; ci++)
			if (conns[ci] && conns[ci]->wlen && flush(conns[ci]))
				conn_close(ci);
	}
	logmsg("stopping");
	for (ci = 0; ci < MAX_CONNS; ci++)
		if (conns[ci])
			close(conns[ci]->fd);
	gba_dev_close(sdev);
	shm_unlink(image);
	if (pidfile)
		unlink(pidfile);
	return 0;
}
