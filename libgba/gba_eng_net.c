/*
 * GBA core library: the fabric engine between hosts, over TCP
 * (include/gba/gba_eng.h; doc/design.md section 9).
 *
 * Every endpoint with a network address (gba_net_local) listens on a TCP
 * port of that address; the port and address are part of its struct
 * gba_addr.  The first operation towards a peer on another host connects
 * (a blocking connect bounded by GBA_NET_CONNECT_MS: a refused or
 * timed-out connection is -EHOSTUNREACH at once), sends T_HELLO, and
 * every later operation to that peer takes that connection, so that they
 * execute in issue order.  Frames (gba_eng_wire.h) are written with one
 * sendmsg straight from the caller's memory when the connection's send
 * queue is empty; what the socket does not take is copied into the send
 * queue (one growing buffer per connection), flushed by progress.  A
 * message is complete once it is written or queued (gba_eng_send returns
 * 1); puts, gets and atomics complete when the target's T_RESP arrives.
 * Reading: each connection has one growing receive buffer holding at
 * least one whole frame; frames are executed from it (a message's payload
 * is handed to the front end in place, valid during its recv callback).
 * A connection that ends (EOF, reset: the peer closed or died) fails the
 * operations outstanding at its peer with -EPIPE, and the peer stays
 * dead.  Nothing blocks on a peer but the connect: both sides of a large
 * exchange queue what the socket does not take and read while they
 * flush, so two endpoints sending large data to each other progress.
 *
 * Cost for the shared-memory path: none while an endpoint has no
 * connection but a look at the listener (one accept4) every
 * GBA_NET_IDLE_POLLS-th progress call, at most every GBA_NET_IDLE_NS at
 * first and, while the looks find nothing, less and less often, down to
 * one every GBA_NET_IDLE_MAX_NS; with connections, one poll() per
 * progress call.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba_job.h>

#include "gba_backend.h"
#include "gba_eng_priv.h"
#include "gba_eng_wire.h"

/* A blocking connect gives up after this long (-EHOSTUNREACH). */
#define GBA_NET_CONNECT_MS 5000
/*
 * Without connections: look at the listener at most this often, at first
 * (peers on other hosts connect as a job starts); every look that finds
 * nothing doubles the period, up to GBA_NET_IDLE_MAX_NS, how long the
 * first frames of a peer that connects later may wait.  An endpoint
 * polled without a pause so makes 1000 system calls a second, not 20000.
 */
#define GBA_NET_IDLE_NS (50ULL * 1000)
#define GBA_NET_IDLE_MAX_NS (1000ULL * 1000)
/* New operations are refused (-EAGAIN) above this many queued bytes. */
#define GBA_NET_SNDQ_MAX (16UL << 20)
/* Largest frame payload accepted (a message, a put, a get's answer). */
#define GBA_NET_FRAME_MAX (1ULL << 31)
/* Bytes read at least per read() */
#define GBA_NET_READ_MIN (256UL << 10)
/* Socket buffers asked for (the kernel caps them at wmem/rmem_max) */
#define GBA_NET_SOCKBUF (4 << 20)
/* Idle polls of the sockets between two sched_yield */
#define GBA_NET_YIELD_POLLS 16
/* ep_close flushes send queues for at most this long */
#define GBA_NET_CLOSE_MS 2000

struct gba_eng_conn {
	struct gba_eng_conn *next; /* net->conns */
	int fd;
	bool hello;		   /* T_HELLO seen (accepted) or sent */
	bool closed;		   /* to be freed by the next sweep */
	bool broken;		   /* a write failed: conn_lost at the next
				      progress (not under the caller) */
	struct gba_eng_peer *peer; /* NULL until T_HELLO */
	/* send queue: bytes [shead, stail) of sbuf */
	uint8_t *sbuf;
	size_t scap, shead, stail;
	/* receive buffer: bytes [0, rlen) of rbuf, frames from rstart */
	uint8_t *rbuf;
	size_t rcap, rlen;
};

struct gba_eng_net {
	int lfd;		    /* listener */
	int family;		    /* AF_INET or AF_INET6 */
	struct gba_eng_conn *conns; /* every connection */
	uint32_t nconns;	    /* connections (ep->net_conns: a copy
				       lock-free callers read) */
	uint64_t last_ns;	    /* last look at the listener */
	uint64_t idle_ns;	    /* period of those looks */
	struct pollfd *pfds;	    /* poll() array, 1 + nconns */
	struct gba_eng_conn **pconn;
	uint32_t pcap;
	uint64_t nbad; /* protocol errors logged */
	uint32_t idle; /* progress calls that found nothing */
};

/* ---- Sockets ------------------------------------------------------------ */

static bool net_is_v4(const uint8_t net[16])
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(net, prefix, sizeof(prefix));
}

/* The sockaddr of @net/@port (network order) into @ss; its length. */
static socklen_t net_sockaddr(const uint8_t net[16], uint16_t port,
			      struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (net_is_v4(net)) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = port;
		memcpy(&in->sin_addr, net + 12, 4);
		return sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = port;
		memcpy(&in6->sin6_addr, net, 16);
		return sizeof(*in6);
	}
}

static void net_nodelay(int fd)
{
	int one = 1, buf = GBA_NET_SOCKBUF;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
}

static void net_log_bad(struct gba_eng_ep *ep, struct gba_eng_conn *c,
			const char *why)
{
	char str[GBA_ADDR_STRLEN] = "an unidentified peer";

	if (ep->net->nbad++ >= GBA_ENG_BAD_LOG_MAX)
		return;
	if (c->peer)
		gba_addr_str(&c->peer->addr, str, sizeof(str));
	fprintf(stderr,
		"gba: endpoint %" PRIu32 ": TCP connection from %s closed: "
		"%s\n",
		ep->addr.ep_id, str, why);
}

/* A listening socket on @addr, port @port (network order): fd or -errno. */
static int net_listen(const uint8_t addr[16], uint16_t port,
		      struct sockaddr_storage *ss, socklen_t *lenp)
{
	socklen_t len = net_sockaddr(addr, port, ss);
	int fd, ret, one = 1;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	/* a service's port again right after its last holder closed */
	if (port)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)ss, len) || listen(fd, 128)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*lenp = len;
	return fd;
}

int gba_eng_net_open(struct gba_eng_ep *ep, const char *spec, uint32_t service)
{
	struct sockaddr_storage ss;
	struct gba_eng_net *net;
	socklen_t len;
	uint8_t addr[16];
	int ret, fd;

	ret = gba_net_local(spec, addr);
	if (ret == -ENOENT)
		return 0; /* no TCP path: other hosts are unreachable */
	if (ret)
		return gba_err_set(ret, "network address %s",
				   spec ? spec : "(GBA_NET_ADDR)");
	/*
	 * A service listens on its own number, where other hosts look it up
	 * (gba_eng_service_lookup); a port taken (another job's endpoint of
	 * the same service, another program) leaves it findable from this
	 * host only.
	 */
	fd = -EADDRINUSE;
	if (service && service <= UINT16_MAX)
		fd = net_listen(addr, htons((uint16_t)service), &ss, &len);
	if (fd < 0)
		fd = net_listen(addr, 0, &ss, &len);
	if (fd < 0) {
		if (!spec && !getenv("GBA_NET_ADDR"))
			return 0; /* the default address is not ours: none */
		return gba_err_set(fd, "TCP listener on the network address");
	}
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len)) {
		ret = -errno;
		close(fd);
		return gba_err_set(ret, "TCP listener: getsockname");
	}
	net = calloc(1, sizeof(*net));
	if (!net) {
		close(fd);
		return -ENOMEM;
	}
	net->lfd = fd;
	net->family = ss.ss_family;
	net->idle_ns = GBA_NET_IDLE_NS;
	memcpy(ep->addr.net, addr, sizeof(addr));
	ep->addr.port = ss.ss_family == AF_INET
				? ((struct sockaddr_in *)&ss)->sin_port
				: ((struct sockaddr_in6 *)&ss)->sin6_port;
	ep->net = net;
	return 0;
}

static void conn_free(struct gba_eng_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->sbuf);
	free(c->rbuf);
	free(c);
}

static struct gba_eng_conn *conn_new(struct gba_eng_ep *ep, int fd)
{
	struct gba_eng_net *net = ep->net;
	struct gba_eng_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->next = net->conns;
	net->conns = c;
	net->nconns++;
	__atomic_store_n(&ep->net_conns, net->nconns, __ATOMIC_RELAXED);
	return c;
}

/* Write out what @c has queued; 0, or a negative errno (connection lost). */
static int conn_flush(struct gba_eng_conn *c)
{
	ssize_t n;

	while (c->shead < c->stail) {
		n = send(c->fd, c->sbuf + c->shead, c->stail - c->shead,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->shead += (size_t)n;
	}
	c->shead = c->stail = 0;
	return 0;
}

/* Room for @len more bytes at the end of @c's send queue; 0 or -ENOMEM. */
static int conn_sq_reserve(struct gba_eng_conn *c, size_t len)
{
	size_t used = c->stail - c->shead, cap;
	uint8_t *p;

	if (c->scap - c->stail >= len)
		return 0;
	if (c->shead && c->scap - used >= len) {
		memmove(c->sbuf, c->sbuf + c->shead, used);
		c->shead = 0;
		c->stail = used;
		return 0;
	}
	cap = c->scap ? c->scap : 64 * 1024;
	while (cap - used < len)
		cap *= 2;
	p = malloc(cap);
	if (!p)
		return -ENOMEM;
	if (used)
		memcpy(p, c->sbuf + c->shead, used);
	free(c->sbuf);
	c->sbuf = p;
	c->scap = cap;
	c->shead = 0;
	c->stail = used;
	return 0;
}

/*
 * Send frame @hdr with the @len payload bytes of @iov (@count entries)
 * on @c: written at once if nothing is queued before it, the rest copied
 * into the send queue.  0, or a negative errno (-ENOMEM, -EPIPE: the
 * connection is lost; the caller fails the peer).
 */
static int conn_xmit(struct gba_eng_conn *c, const struct gba_net_hdr *hdr,
		     const struct iovec *iov, size_t count)
{
	struct iovec v[GBA_ENG_MAX_IOV + 1];
	size_t i, n = 1, total = sizeof(*hdr), done = 0, skip, take;
	struct msghdr mh;
	ssize_t w;
	int ret;

	v[0].iov_base = (void *)hdr;
	v[0].iov_len = sizeof(*hdr);
	for (i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		v[n++] = iov[i];
		total += iov[i].iov_len;
	}
	if (c->shead == c->stail) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = v;
		mh.msg_iovlen = n;
		for (;;) {
			w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w >= 0 || errno != EINTR)
				break;
		}
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -EPIPE;
		done = w > 0 ? (size_t)w : 0;
		if (done == total)
			return 0;
	}
	ret = conn_sq_reserve(c, total - done);
	if (ret)
		return ret;
	skip = done;
	for (i = 0; i < n; i++) {
		if (skip >= v[i].iov_len) {
			skip -= v[i].iov_len;
			continue;
		}
		take = v[i].iov_len - skip;
		memcpy(c->sbuf + c->stail, (char *)v[i].iov_base + skip, take);
		c->stail += take;
		skip = 0;
	}
	return 0;
}

/* Mark @c closed; if it was its peer's connection, the peer died. */
static void conn_lost(struct gba_eng_ep *ep, struct gba_eng_conn *c)
{
	struct gba_eng_peer *peer = c->peer;

	if (c->closed)
		return;
	c->closed = true;
	if (peer && peer->conn == c) {
		peer->conn = NULL;
		gba_eng_dead_peer(ep, peer);
	}
}

/* Free the connections conn_lost marked. */
static void conn_sweep(struct gba_eng_ep *ep)
{
	struct gba_eng_net *net = ep->net;
	struct gba_eng_conn **pp = &net->conns, *c;

	while ((c = *pp)) {
		if (!c->closed) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		net->nconns--;
		__atomic_store_n(&ep->net_conns, net->nconns, __ATOMIC_RELAXED);
		conn_free(c);
	}
}

void gba_eng_net_close(struct gba_eng_ep *ep)
{
	struct gba_eng_net *net = ep->net;
	struct gba_eng_conn *c;
	uint64_t deadline;
	struct pollfd pfd;
	char sink[4096];
	bool left;

	if (!net)
		return;
	/* what a completed send left queued must still reach its peer */
	deadline = gba_now_ns() + GBA_NET_CLOSE_MS * 1000000ULL;
	do {
		left = false;
		for (c = net->conns; c; c = c->next) {
			if (c->closed || c->shead == c->stail)
				continue;
			if (conn_flush(c)) {
				c->closed = true;
				continue;
			}
			if (c->shead == c->stail)
				continue;
			left = true;
			pfd.fd = c->fd;
			pfd.events = POLLOUT;
			/* keep the peer's data flowing too: drain it */
			while (read(c->fd, sink, sizeof(sink)) > 0)
				;
			poll(&pfd, 1, 1);
		}
	} while (left && gba_now_ns() < deadline);
	while ((c = net->conns)) {
		net->conns = c->next;
		shutdown(c->fd, SHUT_WR);
		conn_free(c);
	}
	close(net->lfd);
	free(net->pfds);
	free(net->pconn);
	free(net);
	ep->net = NULL;
	__atomic_store_n(&ep->net_conns, 0, __ATOMIC_RELAXED);
}

/* ---- Peers ----------------------------------------------------------------
 */

/* The peer of @addr in ep->peers, added (without a connection) if new. */
static struct gba_eng_peer *net_peer_find_add(struct gba_eng_ep *ep,
					      const struct gba_addr *addr)
{
	struct gba_eng_peer_key key = gba_eng_peer_key(addr);
	struct gba_eng_peer *peer;

	HASH_FIND(hh, ep->peers, &key, sizeof(key), peer);
	if (peer)
		return peer;
	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return NULL;
	peer->addr = *addr;
	peer->key = key;
	HASH_ADD(hh, ep->peers, key, sizeof(peer->key), peer);
	return peer;
}

/* Connect to @sa within @ms milliseconds; the (non-blocking) socket or a
 * negative errno (-ECONNREFUSED, -ETIMEDOUT, ...). */
static int net_connect_sa(const struct sockaddr *sa, socklen_t len, int ms)
{
	struct pollfd pfd;
	int fd, err = 0;
	socklen_t elen = sizeof(err);

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	if (connect(fd, sa, len)) {
		if (errno != EINPROGRESS) {
			err = errno;
			goto fail;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, ms) <= 0) {
			err = ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err)
			goto fail;
	}
	net_nodelay(fd);
	return fd;
fail:
	close(fd);
	return -(err ? err : ECONNREFUSED);
}

/* Connect to @addr (blocking, bounded); the socket or a negative errno. */
static int net_connect(const struct gba_addr *addr)
{
	struct sockaddr_storage ss;
	socklen_t len = net_sockaddr(addr->net, addr->port, &ss);

	return net_connect_sa((struct sockaddr *)&ss, len, GBA_NET_CONNECT_MS);
}

int gba_eng_net_peer_get(struct gba_eng_ep *ep, const struct gba_addr *addr,
			 struct gba_eng_peer **peerp)
{
	struct gba_eng_peer_key key = gba_eng_peer_key(addr);
	struct gba_addr hello[2];
	struct gba_net_hdr hdr;
	struct iovec iov;
	struct gba_eng_peer *peer;
	struct gba_eng_conn *c;
	char str[GBA_ADDR_STRLEN];
	int fd, ret;

	HASH_FIND(hh, ep->peers, &key, sizeof(key), peer);
	if (peer && (peer->conn || peer->dead)) {
		*peerp = peer;
		return peer->dead ? -EPIPE : 0;
	}
	if (!ep->net || gba_addr_reach(&ep->addr, addr) != GBA_REACH_NET) {
		gba_addr_str(addr, str, sizeof(str));
		return gba_err_set(-EHOSTUNREACH, "%s: on another host, and %s",
				   str,
				   ep->net ? "it has no network address"
					   : "this endpoint has no TCP path "
					     "(GBA_NET_ADDR)");
	}
	fd = net_connect(addr);
	if (fd < 0) {
		gba_addr_str(addr, str, sizeof(str));
		return gba_err_set(-EHOSTUNREACH, "%s: TCP connect: %s", str,
				   strerror(-fd));
	}
	if (!peer)
		peer = net_peer_find_add(ep, addr);
	c = peer ? conn_new(ep, fd) : NULL;
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->hello = true;
	c->peer = peer;
	peer->conn = c;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = GBA_NET_MAGIC;
	hdr.type = GBA_NET_T_HELLO;
	hdr.len = sizeof(hello);
	hello[0] = ep->addr;
	hello[1] = *addr;
	iov.iov_base = hello;
	iov.iov_len = sizeof(hello);
	ret = conn_xmit(c, &hdr, &iov, 1);
	if (ret) {
		c->broken = true;
		return -EHOSTUNREACH;
	}
	*peerp = peer;
	return 0;
}

/* ---- Initiator ------------------------------------------------------------
 */

/* @peer's connection, ready for a new operation: 0, -EPIPE, -EAGAIN. */
static int net_ready(struct gba_eng_peer *peer)
{
	struct gba_eng_conn *c = peer->conn;

	if (peer->dead || !c || c->closed || c->broken)
		return -EPIPE;
	if (c->stail - c->shead > GBA_NET_SNDQ_MAX)
		return -EAGAIN;
	return 0;
}

/*
 * Send a frame of @ep to @peer.  When the connection turns out lost, the
 * caller's operation fails with -EPIPE now and the others at the next
 * progress (conn_lost), so that nothing is reported twice.
 */
static int net_xmit(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		    const struct gba_net_hdr *hdr, const struct iovec *iov,
		    size_t count)
{
	int ret = conn_xmit(peer->conn, hdr, iov, count);

	(void)ep;
	if (ret == -EPIPE)
		peer->conn->broken = true;
	return ret;
}

static ssize_t net_iov_len(const struct iovec *iov, size_t count)
{
	return gba_eng_iov_len(iov, count, GBA_ENG_MAX_IOV, GBA_NET_FRAME_MAX,
			       NULL);
}

int gba_eng_net_send(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		     const struct iovec *iov, size_t count, uint64_t tag,
		     uint64_t data, uint32_t flags)
{
	ssize_t len = net_iov_len(iov, count);
	struct gba_net_hdr hdr;
	int ret;

	if (len < 0)
		return len == -EMSGSIZE ? -EMSGSIZE : -EINVAL;
	ret = net_ready(peer);
	if (ret)
		return ret;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = GBA_NET_MAGIC;
	hdr.type = GBA_NET_T_MSG;
	hdr.flags = flags;
	hdr.len = (uint64_t)len;
	hdr.tag = tag;
	hdr.data = data;
	ret = net_xmit(ep, peer, &hdr, iov, count);
	return ret ? ret : 1;
}

int gba_eng_net_rma(struct gba_eng_ep *ep, struct gba_eng_peer *peer, bool put,
		    const struct iovec *iov, size_t count, uint64_t addr,
		    uint64_t key, uint32_t flags, uint64_t data,
		    uint64_t cookie)
{
	ssize_t len = net_iov_len(iov, count);
	struct gba_net_hdr hdr;
	struct gba_eng_op *op;
	int ret;

	if (len < 0)
		return -EINVAL;
	ret = net_ready(peer);
	if (ret)
		return ret;
	op = gba_eng_op_alloc(ep, peer, put ? GBA_ENG_T_PUT : GBA_ENG_T_GET,
			      cookie);
	if (!op)
		return -EAGAIN;
	if (!put && count) {
		op->iov_count = (uint8_t)count;
		memcpy(op->iov, iov, count * sizeof(*iov));
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = GBA_NET_MAGIC;
	hdr.type = put ? GBA_NET_T_PUT : GBA_NET_T_GET;
	hdr.flags = flags;
	hdr.op = gba_eng_op_id(ep, op);
	hdr.len = put ? (uint64_t)len : 0;
	hdr.rlen = (uint64_t)len;
	hdr.tag = key;
	hdr.data = data;
	hdr.addr = addr;
	ret = net_xmit(ep, peer, &hdr, iov, put ? count : 0);
	if (ret) {
		gba_eng_op_free(ep, op);
		return ret;
	}
	return 0;
}

int gba_eng_net_atomic(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		       uint32_t aop, uint32_t datatype, size_t elem_size,
		       size_t count, const void *operand, const void *compare,
		       void *result, uint64_t addr, uint64_t key,
		       uint32_t flags, uint64_t data, uint64_t cookie)
{
	size_t bytes = count * elem_size;
	struct gba_eng_atomic_req req;
	static const uint8_t zero[GBA_ENG_INLINE];
	struct gba_net_hdr hdr;
	struct iovec iov[3];
	struct gba_eng_op *op;
	int ret;

	ret = net_ready(peer);
	if (ret)
		return ret;
	op = gba_eng_op_alloc(ep, peer, GBA_ENG_T_ATOMIC, cookie);
	if (!op)
		return -EAGAIN;
	op->result = result;
	op->result_len = result ? bytes : 0;
	req.op = aop;
	req.datatype = datatype;
	req.elem_size = (uint32_t)elem_size;
	req.count = (uint32_t)count;
	iov[0].iov_base = &req;
	iov[0].iov_len = sizeof(req);
	iov[1].iov_base = (void *)(operand ? operand : zero);
	iov[1].iov_len = bytes;
	iov[2].iov_base = (void *)compare;
	iov[2].iov_len = compare ? bytes : 0;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = GBA_NET_MAGIC;
	hdr.type = GBA_NET_T_ATOMIC;
	hdr.xflags =
		(result ? GBA_NET_X_FETCH : 0) | (compare ? GBA_NET_X_CMP : 0);
	hdr.flags = flags;
	hdr.op = gba_eng_op_id(ep, op);
	hdr.len = sizeof(req) + bytes * (compare ? 2 : 1);
	hdr.rlen = bytes;
	hdr.tag = key;
	hdr.data = data;
	hdr.addr = addr;
	ret = net_xmit(ep, peer, &hdr, iov, 3);
	if (ret) {
		gba_eng_op_free(ep, op);
		return ret;
	}
	return 0;
}

/* ---- Target ----------------------------------------------------------------
 */

/* Answer operation @op of @c's peer with @status and @len bytes at @p. */
static void net_answer(struct gba_eng_ep *ep, struct gba_eng_conn *c,
		       uint32_t op, int status, const void *p, size_t len)
{
	struct gba_net_hdr hdr;
	struct iovec iov = {(void *)p, len};

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = GBA_NET_MAGIC;
	hdr.type = GBA_NET_T_RESP;
	hdr.op = op;
	hdr.status = status;
	hdr.len = len;
	(void)ep;
	if (conn_xmit(c, &hdr, &iov, len ? 1 : 0))
		c->broken = true;
}

static void net_event(struct gba_eng_ep *ep, struct gba_eng_conn *c,
		      enum gba_eng_event ev, const struct gba_net_hdr *hdr,
		      size_t len)
{
	if (ep->ops.remote_event)
		ep->ops.remote_event(ep->ctx, ev, &c->peer->addr, hdr->flags,
				     hdr->data, len);
}

static void net_exec_msg(struct gba_eng_ep *ep, struct gba_eng_conn *c,
			 const struct gba_net_hdr *hdr, const uint8_t *payload)
{
	struct gba_eng_rx rx;

	rx.src = c->peer->addr;
	rx.len = hdr->len;
	rx.tag = hdr->tag;
	rx.data = hdr->data;
	rx.flags = hdr->flags;
	rx.payload = payload; /* never NULL: the engine answers nobody */
	rx.src_op = 0;
	rx.iov_count = 0;
	rx.held = 0;
	rx.local = 0;
	ep->ops.recv(ep->ctx, &rx);
}

static void net_exec_rma(struct gba_eng_ep *ep, struct gba_eng_conn *c,
			 const struct gba_net_hdr *hdr, const uint8_t *payload)
{
	bool put = hdr->type == GBA_NET_T_PUT;
	void *ptr = NULL;
	int ret;

	if (put && hdr->rlen != hdr->len) {
		net_answer(ep, c, hdr->op, -EPROTO, NULL, 0);
		return;
	}
	ret = ep->ops.mr_lookup(
		ep->ctx, hdr->tag, hdr->addr, hdr->rlen,
		put ? GBA_ENG_ACCESS_WRITE : GBA_ENG_ACCESS_READ, &ptr);
	if (ret) {
		net_answer(ep, c, hdr->op, ret, NULL, 0);
		return;
	}
	gba_fault(GBA_FAULT_RMA);
	if (put && hdr->len)
		memcpy(ptr, payload, hdr->len);
	net_event(ep, c, put ? GBA_ENG_EV_PUT : GBA_ENG_EV_GET, hdr, hdr->rlen);
	net_answer(ep, c, hdr->op, 0, put ? NULL : ptr, put ? 0 : hdr->rlen);
}

static void net_exec_atomic(struct gba_eng_ep *ep, struct gba_eng_conn *c,
			    const struct gba_net_hdr *hdr,
			    const uint8_t *payload)
{
	struct gba_eng_atomic_req req;
	bool fetch = hdr->xflags & GBA_NET_X_FETCH;
	bool cmp = hdr->xflags & GBA_NET_X_CMP;
	/* 8-byte aligned: the executor reads and writes whole elements */
	uint64_t result[GBA_ENG_INLINE / 8], ops[GBA_ENG_INLINE / 8];
	size_t bytes = hdr->rlen;
	void *ptr;
	int ret;

	if (hdr->len < sizeof(req) || hdr->len > GBA_ENG_INLINE) {
		ret = -EPROTO;
		goto out;
	}
	memcpy(&req, payload, sizeof(req));
	/* the operands (and compare values) as the ring's slot holds them */
	if (!req.count || (uint64_t)req.count * req.elem_size != bytes ||
	    hdr->len != sizeof(req) + bytes * (cmp ? 2 : 1)) {
		ret = -EPROTO;
		goto out;
	}
	ret = ep->ops.mr_lookup(
		ep->ctx, hdr->tag, hdr->addr, bytes,
		GBA_ENG_ACCESS_WRITE | (fetch ? GBA_ENG_ACCESS_READ : 0), &ptr);
	if (ret)
		goto out;
	/* operands sit unaligned in the receive buffer: copy them */
	memcpy(ops, payload + sizeof(req), bytes * (cmp ? 2 : 1));
	if (ep->ops.atomic)
		ret = ep->ops.atomic(ep->ctx, req.op, req.datatype, ptr, ops,
				     cmp ? (uint8_t *)ops + bytes : NULL,
				     fetch ? result : NULL, req.count);
	else
		ret = gba_eng_atomic_builtin(req.op, req.elem_size, ptr, ops,
					     cmp ? (uint8_t *)ops + bytes
						 : NULL,
					     fetch ? result : NULL, req.count);
	if (!ret)
		net_event(ep, c, GBA_ENG_EV_ATOMIC, hdr, bytes);
out:
	net_answer(ep, c, hdr->op, ret, result, !ret && fetch ? bytes : 0);
}

static void net_resp(struct gba_eng_ep *ep, struct gba_eng_conn *c,
		     const struct gba_net_hdr *hdr, const uint8_t *payload)
{
	struct gba_eng_op *op = gba_eng_op_find(ep, hdr->op);
	int status = hdr->status;
	size_t len = hdr->len, i, take;
	const uint8_t *p = payload;

	if (!op)
		return; /* already failed */
	if (op->peer != c->peer) {
		net_log_bad(ep, c, "an answer to another's operation");
		return;
	}
	if (status > 0 || status < -GBA_ENG_ERRNO_MAX) {
		status = -EPROTO;
		len = 0;
	}
	if (!status && len && op->type == GBA_ENG_T_GET) {
		for (i = 0; i < op->iov_count && len; i++) {
			take = op->iov[i].iov_len < len ? op->iov[i].iov_len
							: len;
			if (take)
				memcpy(op->iov[i].iov_base, p, take);
			p += take;
			len -= take;
		}
	} else if (!status && len && op->type == GBA_ENG_T_ATOMIC &&
		   op->result) {
		memcpy(op->result, p,
		       len < op->result_len ? len : op->result_len);
	}
	gba_eng_op_finish(ep, op, status);
}

/* The first frame of an accepted connection: who is calling whom. */
static int net_hello(struct gba_eng_ep *ep, struct gba_eng_conn *c,
		     const struct gba_net_hdr *hdr, const uint8_t *payload)
{
	struct gba_addr a[2];
	struct gba_eng_peer *peer;

	if (hdr->type != GBA_NET_T_HELLO || hdr->len != sizeof(a))
		return -EPROTO;
	memcpy(a, payload, sizeof(a));
	if (!gba_addr_valid(&a[0], sizeof(a[0])) ||
	    !gba_addr_equal(&a[1], &ep->addr) ||
	    a[0].host_id == ep->addr.host_id)
		return -EPROTO;
	peer = net_peer_find_add(ep, &a[0]);
	if (!peer)
		return -ENOMEM;
	if (peer->dead)
		return -EPIPE;
	if (!peer->conn)
		peer->conn = c;
	c->peer = peer;
	c->hello = true;
	return 0;
}

/*
 * T_WHOIS on a connection of its own: answer with this endpoint's address
 * if it holds service hdr->tag for job hdr->data, else -ENOENT; the
 * connection then closes (-ECONNABORTED: quietly).  The answer is 112
 * bytes on a fresh connection: the socket takes it at once, or the asker
 * reads nothing and says so.
 */
static int net_whois(struct gba_eng_ep *ep, struct gba_eng_conn *c,
		     const struct gba_net_hdr *hdr)
{
	struct {
		struct gba_net_hdr hdr;
		struct gba_addr addr;
	} ans;

	memset(&ans, 0, sizeof(ans));
	ans.hdr.magic = GBA_NET_MAGIC;
	ans.hdr.type = GBA_NET_T_RESP;
	ans.hdr.tag = hdr->tag;
	if (hdr->len || !ep->service || hdr->tag != ep->addr.ep_id ||
	    hdr->data != gba_job_id()) {
		ans.hdr.status = -ENOENT;
	} else {
		ans.hdr.len = sizeof(ans.addr);
		ans.addr = ep->addr;
	}
	(void)!send(c->fd, &ans, sizeof(ans.hdr) + ans.hdr.len,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
	return -ECONNABORTED;
}

/* Execute one whole frame of @c.  0, or -EPROTO (close the connection). */
static int net_frame(struct gba_eng_ep *ep, struct gba_eng_conn *c,
		     const struct gba_net_hdr *hdr, const uint8_t *payload)
{
	if (!c->peer && !c->hello && hdr->type == GBA_NET_T_WHOIS)
		return net_whois(ep, c, hdr);
	if (!c->peer)
		return net_hello(ep, c, hdr, payload);
	switch (hdr->type) {
	case GBA_NET_T_MSG:
		net_exec_msg(ep, c, hdr, payload);
		return 0;
	case GBA_NET_T_PUT:
	case GBA_NET_T_GET:
		net_exec_rma(ep, c, hdr, payload);
		return 0;
	case GBA_NET_T_ATOMIC:
		net_exec_atomic(ep, c, hdr, payload);
		return 0;
	case GBA_NET_T_RESP:
		net_resp(ep, c, hdr, payload);
		return 0;
	default:
		return -EPROTO;
	}
}

/*
 * Read what @c has and execute its whole frames.  Returns the frames
 * handled, or a negative errno when the connection is lost.
 */
static int conn_read(struct gba_eng_ep *ep, struct gba_eng_conn *c)
{
	struct gba_net_hdr hdr;
	size_t off, need, cap;
	uint8_t *p;
	ssize_t r;
	int n = 0, reads = 0, ret;

	for (;;) {
		/* room: a whole frame of what is announced, at least a chunk */
		need = c->rlen + GBA_NET_READ_MIN;
		if (c->rlen >= sizeof(hdr)) {
			memcpy(&hdr, c->rbuf, sizeof(hdr));
			if (hdr.magic != GBA_NET_MAGIC ||
			    hdr.len > GBA_NET_FRAME_MAX) {
				net_log_bad(ep, c, "not a frame");
				return -EPROTO;
			}
			if (sizeof(hdr) + hdr.len > need)
				need = sizeof(hdr) + hdr.len;
		}
		if (need > c->rcap) {
			cap = c->rcap ? c->rcap : GBA_NET_READ_MIN * 2;
			while (cap < need)
				cap *= 2;
			p = realloc(c->rbuf, cap);
			if (!p)
				return -ENOMEM;
			c->rbuf = p;
			c->rcap = cap;
		}
		r = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen,
			 MSG_DONTWAIT);
		if (r == 0)
			return -EPIPE;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -EPIPE;
		}
		c->rlen += (size_t)r;
		/* execute the whole frames */
		off = 0;
		while (c->rlen - off >= sizeof(hdr)) {
			memcpy(&hdr, c->rbuf + off, sizeof(hdr));
			if (hdr.magic != GBA_NET_MAGIC ||
			    hdr.len > GBA_NET_FRAME_MAX) {
				net_log_bad(ep, c, "not a frame");
				return -EPROTO;
			}
			if (c->rlen - off - sizeof(hdr) < hdr.len)
				break;
			ret = net_frame(ep, c, &hdr,
					c->rbuf + off + sizeof(hdr));
			if (!ret && c->broken)
				return -EPIPE;
			if (ret == -ECONNABORTED)
				return -EPIPE; /* done with (T_WHOIS) */
			if (ret) {
				net_log_bad(ep, c,
					    ret == -EPROTO ? "protocol error"
							   : strerror(-ret));
				return ret;
			}
			off += sizeof(hdr) + hdr.len;
			n++;
		}
		if (off) {
			memmove(c->rbuf, c->rbuf + off, c->rlen - off);
			c->rlen -= off;
		}
		/* a big frame on its way: keep reading while it flows */
		if (++reads >= 16 || (size_t)r < GBA_NET_READ_MIN / 2)
			break;
	}
	return n;
}

/* Accept the connections waiting on the listener. */
static void net_accept(struct gba_eng_ep *ep)
{
	struct gba_eng_net *net = ep->net;
	int fd;

	for (;;) {
		fd = accept4(net->lfd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		net_nodelay(fd);
		if (!conn_new(ep, fd))
			close(fd);
	}
}

bool gba_eng_net_due(struct gba_eng_ep *ep)
{
	struct gba_eng_net *net = ep->net;
	uint64_t now = gba_now_ns();

	if (now - net->last_ns < net->idle_ns)
		return false;
	net->last_ns = now;
	return true;
}

int gba_eng_net_progress(struct gba_eng_ep *ep)
{
	struct gba_eng_net *net = ep->net;
	struct gba_eng_conn *c;
	uint32_t i, np = 0;
	int n = 0, ret;

	if (!net->nconns) {
		net_accept(ep);
		if (!net->nconns) {
			/* nobody: look again later than this time */
			net->idle_ns = net->idle_ns * 2 < GBA_NET_IDLE_MAX_NS
					       ? net->idle_ns * 2
					       : GBA_NET_IDLE_MAX_NS;
			return 0;
		}
	}
	/* look at the listener again when idle, and soon */
	net->last_ns = 0;
	net->idle_ns = GBA_NET_IDLE_NS;
	if (net->pcap < net->nconns + 1) {
		uint32_t cap = (net->nconns + 1) * 2;
		struct pollfd *pf = realloc(net->pfds, cap * sizeof(*pf));
		struct gba_eng_conn **pc;

		if (!pf)
			return 0;
		net->pfds = pf;
		pc = realloc(net->pconn, cap * sizeof(*pc));
		if (!pc)
			return 0;
		net->pconn = pc;
		net->pcap = cap;
	}
	net->pfds[np].fd = net->lfd;
	net->pfds[np].events = POLLIN;
	net->pconn[np++] = NULL;
	for (c = net->conns; c; c = c->next) {
		if (c->broken)
			conn_lost(ep, c);
		if (c->closed)
			continue;
		net->pfds[np].fd = c->fd;
		net->pfds[np].events =
			POLLIN | (c->shead != c->stail ? POLLOUT : 0);
		net->pconn[np++] = c;
	}
	if (poll(net->pfds, np, 0) <= 0) {
		/*
		 * Nothing on the sockets.  A frame in flight may wait for the
		 * kernel's network softirq, which, once deferred to
		 * ksoftirqd, a spinning process starves of the CPU (a ping
		 * took a scheduler tick on a loaded machine): give the CPU
		 * away now and then.
		 */
		if (++net->idle % GBA_NET_YIELD_POLLS == 0)
			sched_yield();
		return 0;
	}
	net->idle = 0;
	for (i = 1; i < np; i++) {
		c = net->pconn[i];
		if (c->closed || !net->pfds[i].revents)
			continue;
		if (net->pfds[i].revents & POLLOUT) {
			if (conn_flush(c)) {
				conn_lost(ep, c);
				continue;
			}
		}
		if (net->pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
			ret = conn_read(ep, c);
			if (ret < 0 || c->broken) {
				conn_lost(ep, c);
				continue;
			}
			n += ret;
		}
		/* answers queued by what ran: send them now */
		if (!c->closed && c->shead != c->stail && conn_flush(c))
			conn_lost(ep, c);
	}
	if (net->pfds[0].revents & POLLIN)
		net_accept(ep);
	conn_sweep(ep);
	return n;
}

/* ---- Services of other hosts ---------------------------------------------
 */

/* Milliseconds left until @deadline (ns), at least 1 while not past it. */
static int ms_left(uint64_t deadline)
{
	uint64_t now = gba_now_ns();

	if (now >= deadline)
		return 0;
	return (int)((deadline - now + 999999) / 1000000);
}

/* Read @len bytes of @fd into @buf by @deadline: 0, -ETIMEDOUT, -EPROTO. */
static int read_by(int fd, void *buf, size_t len, uint64_t deadline)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = recv(fd, (char *)buf + got, len - got, MSG_DONTWAIT);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0 ||
		    (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return -EPROTO; /* closed before a whole answer */
		if (!ms_left(deadline) || poll(&pfd, 1, ms_left(deadline)) < 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/* Ask the endpoint listening at @fd who it is (T_WHOIS). */
static int whois(int fd, uint32_t service, uint64_t deadline,
		 struct gba_addr *addr)
{
	struct gba_net_hdr hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = GBA_NET_MAGIC;
	hdr.type = GBA_NET_T_WHOIS;
	hdr.tag = service;
	hdr.data = gba_job_id();
	if (send(fd, &hdr, sizeof(hdr), MSG_NOSIGNAL) != sizeof(hdr))
		return -EPROTO;
	if (read_by(fd, &hdr, sizeof(hdr), deadline))
		return ms_left(deadline) ? -EPROTO : -ETIMEDOUT;
	if (hdr.magic != GBA_NET_MAGIC || hdr.type != GBA_NET_T_RESP ||
	    hdr.tag != service)
		return -EPROTO;
	if (hdr.status)
		return hdr.status == -ENOENT ? -ENOENT : -EPROTO;
	if (hdr.len != sizeof(*addr) ||
	    read_by(fd, addr, sizeof(*addr), deadline) ||
	    !gba_addr_valid(addr, sizeof(*addr)) || addr->ep_id != service)
		return -EPROTO;
	return 0;
}

int gba_eng_service_lookup(const struct gba_addr *svc, int timeout_ms,
			   struct gba_addr *addr)
{
	struct timespec pause = {0, 100000000};
	struct sockaddr_storage ss;
	char str[GBA_ADDR_STRLEN];
	uint64_t deadline;
	socklen_t len;
	int fd, ret;

	if (!svc || !gba_addr_is_service(svc) || timeout_ms < 0 || !addr)
		return -EINVAL;
	gba_addr_str(svc, str, sizeof(str));
	len = net_sockaddr(svc->net, svc->port, &ss);
	deadline = gba_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	for (;;) {
		fd = net_connect_sa((struct sockaddr *)&ss, len,
				    ms_left(deadline) ? ms_left(deadline) : 1);
		/* refused: the endpoint may not be open yet */
		if (fd != -ECONNREFUSED || !ms_left(deadline))
			break;
		nanosleep(&pause, NULL);
	}
	if (fd < 0)
		return gba_err_set(-EHOSTUNREACH, "service %s: TCP connect: %s",
				   str, strerror(-fd));
	ret = whois(fd, svc->ep_id, deadline, addr);
	close(fd);
	if (ret == -ENOENT)
		return gba_err_set(ret,
				   "service %s: the endpoint there is not "
				   "of this job (GBA_JOB)",
				   str);
	if (ret)
		return gba_err_set(ret, "service %s: %s", str,
				   ret == -EPROTO ? "not a gba endpoint"
						  : strerror(-ret));
	return 0;
}
