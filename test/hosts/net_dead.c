/*
 * A peer on another host dies (test/hosts/net_fabric.sh): over provider
 * gba between two emulated hosts,
 *   net_dead server DIR   publishes its pid (DIR/server.pid), its name
 *                         and a registered region,
 *                         answers until DIR/hold appears, then stops
 *                         progressing (writes DIR/held) and waits to be
 *                         killed;
 *   net_dead client DIR   ping-pongs a message, reads and adds to the
 *                         region (data checked), creates DIR/hold, and
 *                         once the server holds posts a read and a
 *                         fetching atomic (they stay outstanding: the
 *                         server does not progress), writes DIR/posted;
 *                         the driver kills the server (SIGKILL), and both
 *                         operations must complete with an error entry,
 *                         then a send must fail (at once or with an error
 *                         entry), all within 10 s.
 * Names travel through files in DIR (the hosts share the file system).
 * Prints one line and exits 0, or prints what failed and exits 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define WAIT_MS 10000
#define REGION 4096

static const char *role = "net_dead";

#define FAIL(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "net_dead %s: ", role);                        \
		fprintf(stderr, __VA_ARGS__);                                  \
		fprintf(stderr, "\n");                                         \
		exit(1);                                                       \
	} while (0)
#define CHK(call)                                                              \
	do {                                                                   \
		int r_ = (int)(call);                                          \
		if (r_)                                                        \
			FAIL("%s: %d (%s)", #call, r_, fi_strerror(-r_));      \
	} while (0)

struct pub {
	char name[64];
	size_t len;
	uint64_t addr, key;
};

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_cq *cq;
static struct fid_av *av;
static struct fid_ep *ep;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void path(char *buf, const char *dir, const char *name)
{
	snprintf(buf, 512, "%s/%s", dir, name);
}

static void put_file(const char *dir, const char *name, const void *p,
		     size_t len)
{
	char tmp[600], fin[512];
	FILE *f;

	path(fin, dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fin);
	f = fopen(tmp, "w");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f) || rename(tmp, fin))
		FAIL("cannot write %s", fin);
}

static void get_file(const char *dir, const char *name, void *p, size_t len)
{
	uint64_t end = now_ms() + WAIT_MS;
	char fin[512];
	FILE *f;

	path(fin, dir, name);
	while (!(f = fopen(fin, "r"))) {
		if (now_ms() > end)
			FAIL("no %s after %d ms", fin, WAIT_MS);
		usleep(2000);
	}
	if (len && fread(p, 1, len, f) != len)
		FAIL("short %s", fin);
	fclose(f);
}

static int has_file(const char *dir, const char *name)
{
	char fin[512];

	path(fin, dir, name);
	return access(fin, F_OK) == 0;
}

static void open_all(void)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->domain_attr->mr_mode =
		FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("gba");
	CHK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	CHK(fi_fabric(info->fabric_attr, &fabric, NULL));
	CHK(fi_domain(fabric, info, &domain, NULL));
	CHK(fi_cq_open(domain, &cq_attr, &cq, NULL));
	CHK(fi_av_open(domain, &av_attr, &av, NULL));
	CHK(fi_endpoint(domain, info, &ep, NULL));
	CHK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	CHK(fi_ep_bind(ep, &av->fid, 0));
	CHK(fi_enable(ep));
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* One completion within @ms: 0 (ok), or the error entry's err (> 0). */
static int wait_comp(struct fi_cq_data_entry *e, uint64_t ms)
{
	struct fi_cq_err_entry err;
	uint64_t end = now_ms() + ms;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(cq, e, 1);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cq, &err, 0) != 1)
				FAIL("fi_cq_readerr failed");
			return err.err ? err.err : -1;
		}
		if (n != -FI_EAGAIN)
			FAIL("fi_cq_read: %zd", n);
		if (now_ms() > end)
			FAIL("no completion within %" PRIu64 " ms (a hang)",
			     ms);
	}
}

static void publish(const char *dir, const char *who, void *region,
		    struct fid_mr *mr)
{
	struct pub me = {0};

	me.len = sizeof(me.name);
	CHK(fi_getname(&ep->fid, me.name, &me.len));
	me.addr = (uint64_t)(uintptr_t)region;
	me.key = mr ? fi_mr_key(mr) : 0;
	put_file(dir, who, &me, sizeof(me));
}

static fi_addr_t peer_of(const char *dir, const char *who, struct pub *p)
{
	fi_addr_t fa;

	get_file(dir, who, p, sizeof(*p));
	if (fi_av_insert(av, p->name, 1, &fa, 0, NULL) != 1)
		FAIL("fi_av_insert of the %s's name", who);
	return fa;
}

static int server(const char *dir)
{
	static uint64_t region[REGION / 8];
	struct fi_cq_data_entry e;
	struct fid_mr *mr;
	uint64_t buf;
	struct pub cl;
	fi_addr_t peer;
	int i;

	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	put_file(dir, "server.pid", pid, strlen(pid));
	for (i = 0; i < REGION / 8; i++)
		region[i] = 1000 + i;
	CHK(fi_mr_reg(domain, region, sizeof(region),
		      FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	publish(dir, "server", region, mr);
	peer = peer_of(dir, "client", &cl);
	/* the ping: a tagged message back */
	CHK(fi_trecv(ep, &buf, sizeof(buf), NULL, peer, 7, 0, NULL));
	if (wait_comp(&e, WAIT_MS))
		FAIL("ping: error completion");
	CHK(fi_tsend(ep, &buf, sizeof(buf), NULL, peer, 8, NULL));
	if (wait_comp(&e, WAIT_MS))
		FAIL("pong: error completion");
	/* answer the client's RMA until it says hold */
	while (!has_file(dir, "hold"))
		fi_cq_read(cq, &e, 1);
	put_file(dir, "held", "", 0);
	for (;;)
		pause(); /* killed by the driver */
	return 0;
}

static int client(const char *dir)
{
	struct fi_cq_data_entry e;
	struct pub sv;
	fi_addr_t peer;
	uint64_t buf = 0x1234, rd[4] = {0}, old = 0, one = 1, t0;
	int err1, err2, err3 = 0, i;
	ssize_t r;

	publish(dir, "client", NULL, NULL);
	peer = peer_of(dir, "server", &sv);
	CHK(fi_trecv(ep, &rd[0], sizeof(rd[0]), NULL, peer, 8, 0, NULL));
	CHK(fi_tsend(ep, &buf, sizeof(buf), NULL, peer, 7, NULL));
	for (i = 0; i < 2; i++)
		if (wait_comp(&e, WAIT_MS))
			FAIL("ping-pong: error completion");
	if (rd[0] != 0x1234)
		FAIL("pong carried 0x%" PRIx64, rd[0]);
	/* a read and an atomic that the server executes */
	CHK(fi_read(ep, rd, sizeof(rd), NULL, peer, sv.addr + 8, sv.key, NULL));
	if (wait_comp(&e, WAIT_MS))
		FAIL("read: error completion");
	for (i = 0; i < 4; i++)
		if (rd[i] != (uint64_t)(1001 + i))
			FAIL("read word %d: %" PRIu64, i, rd[i]);
	CHK(fi_fetch_atomic(ep, &one, 1, NULL, &old, NULL, peer, sv.addr,
			    sv.key, FI_UINT64, FI_SUM, NULL));
	if (wait_comp(&e, WAIT_MS) || old != 1000)
		FAIL("fetch-add: old value %" PRIu64, old);
	/* the server stops progressing; two operations stay outstanding */
	put_file(dir, "hold", "", 0);
	get_file(dir, "held", NULL, 0);
	CHK(fi_read(ep, rd, sizeof(rd), NULL, peer, sv.addr, sv.key, NULL));
	CHK(fi_fetch_atomic(ep, &one, 1, NULL, &old, NULL, peer, sv.addr,
			    sv.key, FI_UINT64, FI_SUM, NULL));
	put_file(dir, "posted", "", 0);
	t0 = now_ms();
	err1 = wait_comp(&e, WAIT_MS);
	err2 = wait_comp(&e, WAIT_MS);
	if (err1 <= 0 || err2 <= 0)
		FAIL("outstanding read/atomic at the dead peer: errors %d, %d "
		     "(an error entry expected for both)",
		     err1, err2);
	/* a new operation fails, at once or with an error entry */
	r = fi_tsend(ep, &buf, sizeof(buf), NULL, peer, 9, NULL);
	if (r == 0)
		err3 = wait_comp(&e, WAIT_MS);
	if (r == 0 && err3 <= 0)
		FAIL("a send to the dead peer succeeded");
	printf("net_dead: peer on another host killed: outstanding read and "
	       "atomic failed (%s, %s) %" PRIu64 " ms after the kill was "
	       "due; a new send: %s\n",
	       fi_strerror(err1), fi_strerror(err2), now_ms() - t0,
	       r ? fi_strerror((int)-r) : fi_strerror(err3));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: net_dead server|client DIR\n");
		return 2;
	}
	role = argv[1];
	open_all();
	return !strcmp(role, "server") ? server(argv[2]) : client(argv[2]);
}
