/*
 * GBA core library: the wire of the networked emulated switch -- message
 * encoding, "emu+tcp://HOST:PORT" parsing, TCP connections, host image
 * names.  Shared by the backend (gba_net.c), gba_agent and gba_switchd.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gba_net.h"

void gba_net_msg_put(uint8_t *buf, const struct gba_net_msg *m)
{
	uint32_t w32[4] = {htole32(m->type), htole32((uint32_t)m->ret),
			   htole32(m->g), 0};
	uint64_t w64[3] = {htole64(m->a), htole64(m->b), htole64(m->c)};

	memcpy(buf, w32, sizeof(w32));
	memcpy(buf + sizeof(w32), w64, sizeof(w64));
}

void gba_net_msg_get(const uint8_t *buf, struct gba_net_msg *m)
{
	uint32_t w32[4];
	uint64_t w64[3];

	memcpy(w32, buf, sizeof(w32));
	memcpy(w64, buf + sizeof(w32), sizeof(w64));
	m->type = le32toh(w32[0]);
	m->ret = (int32_t)le32toh(w32[1]);
	m->g = le32toh(w32[2]);
	m->pad = 0;
	m->a = le64toh(w64[0]);
	m->b = le64toh(w64[1]);
	m->c = le64toh(w64[2]);
}

int gba_net_parse(const char *name, char *host, size_t hlen, int *port)
{
	const char *h, *end, *colon;
	size_t n;
	char *tail;
	long p = GBA_NET_DEFAULT_PORT;

	if (!name || strncmp(name, GBA_NET_PREFIX, strlen(GBA_NET_PREFIX)))
		return -EINVAL;
	h = name + strlen(GBA_NET_PREFIX);
	if (*h == '[') { /* [v6]:port */
		end = strchr(h, ']');
		if (!end)
			return -EINVAL;
		h++;
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] && !colon)
			return -EINVAL;
	} else {
		colon = strrchr(h, ':');
		end = colon ? colon : h + strlen(h);
	}
	n = (size_t)(end - h);
	if (!n || n >= hlen || memchr(h, '/', n))
		return -EINVAL;
	if (colon) {
		errno = 0;
		p = strtol(colon + 1, &tail, 10);
		if (errno || *tail || tail == colon + 1 || p < 1 || p > 65535)
			return -EINVAL;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	*port = (int)p;
	return 0;
}

void gba_net_tune(int fd)
{
	int one = 1, idle = 1, intvl = 1, cnt = GBA_NET_KEEPALIVE_S - 1;
	unsigned int user_ms = GBA_NET_KEEPALIVE_S * 1000;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	/* unacknowledged data: give up as keepalive would */
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms,
		   sizeof(user_ms));
}

/* Connect @fd to @ai within @timeout_ms. */
static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, flags;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		return -errno;
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		if (errno != EINPROGRESS) {
			err = -errno;
			goto fail;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		do {
			err = poll(&pfd, 1, timeout_ms);
		} while (err < 0 && errno == EINTR);
		if (err == 0) {
			err = -ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			err = -(err ? err : errno);
			goto fail;
		}
	}
	fcntl(fd, F_SETFL, flags);
	gba_net_tune(fd);
	return fd;
fail:
	close(fd);
	return err;
}

int gba_net_connect(const char *host, int port, int timeout_ms)
{
	struct addrinfo hints = {0}, *res, *ai;
	char svc[16];
	int ret;

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_family = AF_UNSPEC;
	snprintf(svc, sizeof(svc), "%d", port);
	ret = getaddrinfo(host, svc, &hints, &res);
	if (ret)
		return gba_err_set(-EINVAL, "emu+tcp: cannot resolve %s (%s)",
				   host, gai_strerror(ret));
	ret = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		ret = connect_one(ai, timeout_ms);
		if (ret >= 0)
			break;
	}
	freeaddrinfo(res);
	if (ret < 0)
		gba_err_set(ret, "emu+tcp: connect to gba_switchd at %s:%d",
			    host, port);
	return ret;
}

int gba_net_write(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int gba_net_read(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t n;
	int ret;

	while (len) {
		if (timeout_ms >= 0) {
			ret = poll(&pfd, 1, timeout_ms);
			if (ret < 0 && errno == EINTR)
				continue;
			if (ret < 0)
				return -errno;
			if (ret == 0)
				return -ETIMEDOUT;
		}
		n = recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int gba_net_send(int fd, const struct gba_net_msg *m)
{
	uint8_t buf[GBA_NET_MSG_SIZE];

	gba_net_msg_put(buf, m);
	return gba_net_write(fd, buf, sizeof(buf));
}

int gba_net_recv(int fd, struct gba_net_msg *m, int timeout_ms)
{
	uint8_t buf[GBA_NET_MSG_SIZE];
	int ret = gba_net_read(fd, buf, sizeof(buf), timeout_ms);

	if (!ret)
		gba_net_msg_get(buf, m);
	return ret;
}

void gba_net_local_name(const char *host, int port, char *buf, size_t len)
{
	uint64_t h = gba_fnv1a(GBA_FNV64_OFFSET, host, strlen(host));

	h = gba_fnv1a(h, &port, sizeof(port));
	snprintf(buf, len, "/gba-net-%u-%016llx", (unsigned)geteuid(),
		 (unsigned long long)h);
}

const char *gba_net_agent_path(void)
{
	const char *env = getenv("GBA_AGENT");

	return env && *env ? env : GBA_AGENT_PATH;
}
