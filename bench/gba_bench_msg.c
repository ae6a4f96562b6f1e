/*
 * gba_bench_msg - two-process tagged-message latency and streaming
 * bandwidth of libfabric providers: -p gba, -p shm, or -p gba,shm to
 * measure both in the same processes, round by round.  bench/run_bench.sh
 * runs -p gba,shm (gba next to libfabric's shm provider) and prints the
 * ratios; this program only measures.
 *
 * The program forks two processes (fabtests/gba_ft_common.c's launcher);
 * after the fork each sets FI_PROVIDER to the -p list and opens, per
 * provider, its own fabric, domain, CQ, AV and RDM endpoint; the endpoint
 * names are exchanged through a shared mapping.  shm is given a distinct
 * source address per process (fi_getinfo node "gbabench-<pid>-<rank>",
 * FI_SOURCE); the names are checked to differ, and the provider of each
 * fi_info to be the one asked for.  Both processes busy-poll fi_cq_read.
 *
 *   lat  tagged ping-pong between the two processes: fi_tinject up to the
 *        provider's inject_size (as fabtests do), fi_tsend above it, one
 *        receive always pre-posted; half the round-trip time.
 *   xlat both processes exchange a message at once, as the ranks of an
 *        MPI_Sendrecv or of HPCC's ring do over MTL-OFI: each posts
 *        fi_trecv, then fi_tsend with a completion (MTL-OFI's MPI_Isend,
 *        whatever the size), and waits for both completions; the peer's
 *        message may arrive before the receive is posted (unexpected);
 *        the time of one exchange.
 *   slat the same exchange by the first process with itself (its own
 *        address as the peer): what the provider's software costs per
 *        message, with no cache line crossing CPUs.
 *   bw   streaming: the receiver pre-posts a window of -W fi_trecv and
 *        then tells the sender (a small control message), which posts
 *        -W fi_tsend of the size and waits for their completions; MB/s
 *        (10^6 bytes), about -M MB per round.
 * Per size, after a warm-up round per provider, -r rounds per provider,
 * the providers alternating round by round (so that they share the
 * machine's conditions, which on a VM drift from second to second); the
 * figure is a provider's median round.  The payload is checked.
 *
 * With -c, completions are counted instead of queued (the objects and
 * waits of stock fi_rdm_cntr_pingpong): the CQ bound with
 * FI_SELECTIVE_COMPLETION and never read, a counter bound FI_SEND
 * and one bound FI_RECV, every wait a fi_cntr_wait; the lines are then
 * "clat" and "cbw".
 *
 * With -F, every send's payload is written right before the send, inside
 * the timed loop and alike for every provider, as an application sends
 * data it has just produced: the sender's buffer is then in its own CPU's
 * cache, modified, not a copy both CPUs keep from the last round (which
 * favours a receiver reading the sender's memory over a copy through a
 * queue); the lines are then "flat", "fbw", "fxlat" ("cflat" with -c).
 *
 * Options:
 *   -p <list>     providers, comma separated (default gba)
 *   -S <list>     latency sizes, comma separated, k/m suffixes, or "none"
 *                 (default 8)
 *   -X <list>     exchange sizes, or "none" (default none)
 *   -L <list>     self-exchange sizes, or "none" (default none)
 *   -B <list>     bandwidth sizes, or "none" (default 64k,1m)
 *   -I <n>        ping-pong iterations per round, fewer above 4 KiB
 *                 (default 2000)
 *   -r <n>        rounds per provider (default 11)
 *   -w <n>        warm-up ping-pongs (default 1000; windows: 2, or 0 if 0)
 *   -W <n>        bandwidth window (default 64)
 *   -M <MB>       bandwidth bytes per round, in MB (default 64)
 *   -T <s>        give up after this many seconds (default 60)
 *   -c            counter completions (fi_cntr_wait) instead of a CQ
 *   -F            write the payload before every send (fresh data)
 *   -v            print the names and every round's figure
 * Output (the first process), one line per provider and figure:
 *   info prov=gba fabric=gba inject_size=4032
 *   lat prov=gba size=8 iters=2000 us=0.420
 *   xlat prov=gba size=8 iters=2000 us=0.500                 (-X)
 *   slat prov=gba size=8 iters=2000 us=0.100                 (-L)
 *   bw prov=gba size=1048576 window=64 windows=1 MBps=12000.0
 *   clat prov=gba size=8 iters=2000 us=0.600             (-c)
 *   flat prov=gba size=8192 iters=1000 us=1.100          (-F)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_tagged.h>

#include "gba_ft_common.h"
#include "gba_bench_stats.h"

#define MAX_SIZES 32
#define MAX_PROVS 4
#define TAG_DATA 0x1
#define TAG_CTRL 0x2
#define CTRL_LEN 4

static struct {
	const char *prov; /* as given: FI_PROVIDER */
	char *provs[MAX_PROVS];
	int n_prov;
	size_t lat_sizes[MAX_SIZES], bw_sizes[MAX_SIZES], x_sizes[MAX_SIZES];
	size_t s_sizes[MAX_SIZES];
	int n_lat, n_bw, n_x, n_s;
	long iters, warmup, bw_warmup;
	int rounds, window, mb, timeout_s;
	int verbose;
	int cntr;	  /* -c */
	int fresh;	  /* -F */
	const char *kind; /* output prefix: "", "c", "f" or "cf" */
} opt = {
	.prov = "gba",
	.provs = {"gba"},
	.n_prov = 1,
	.lat_sizes = {8},
	.n_lat = 1,
	.bw_sizes = {65536, 1048576},
	.n_bw = 2,
	.iters = 2000,
	.warmup = 1000,
	.bw_warmup = 2,
	.rounds = 11,
	.window = 64,
	.mb = 64,
	.timeout_s = 60,
	.kind = "",
};

/* The mapping both processes share (ft_fork_run's). */
struct bench_shared {
	struct ft_shared ft[MAX_PROVS]; /* one name exchange per provider */
	atomic_int self_done; /* the first process ran its -L rounds */
};

static struct bench_shared *shared_area;

/* One process's objects and its completion counts. */
struct bench {
	int rank;
	const char *prov;
	struct ft_res r; /* fabric, domain, CQ, AV, endpoint (no EQ) */
	struct fid_mr *tx_mr, *rx_mr;
	void *tx_desc, *rx_desc;
	char *tx_buf, *rx_buf, ctrl_tx[64], ctrl_rx[64];
	size_t max_size, inject_size;
	fi_addr_t peer;
	struct fi_context *tx_ctx, *rx_ctx; /* rings: window, window + 1 */
	uint64_t tx_posted, tx_done, rx_posted, rx_done;
	uint64_t deadline_ms;
};

static int err(struct bench *b, const char *what, long ret)
{
	fprintf(stderr, "gba_bench_msg[%d] rank %d (%s): %s: %ld (%s)\n",
		(int)getpid(), b->rank, b->prov, what, ret,
		fi_strerror((int)(ret < 0 ? -ret : ret)));
	return ret < 0 ? (int)ret : -1;
}

#define CHECK(b, call)                                                         \
	do {                                                                   \
		long ret_ = (long)(call);                                      \
		if (ret_)                                                      \
			return err(b, #call, ret_);                            \
	} while (0)

/* -c: an error counted by @c (of the sends or the receives) */
static int cntr_error(struct bench *b, struct fid_cntr *c, const char *what)
{
	uint64_t n = fi_cntr_readerr(c);

	if (!n)
		return 0;
	fprintf(stderr, "gba_bench_msg rank %d (%s): %" PRIu64 " error "
			"completions of %s\n", b->rank, b->prov, n, what);
	return -FI_EIO;
}

/* -c: read both counters once (which progresses the endpoint) */
static int poll_cntr(struct bench *b)
{
	b->tx_done = fi_cntr_read(b->r.cntr);
	b->rx_done = fi_cntr_read(b->r.rcntr);
	if (cntr_error(b, b->r.cntr, "sends") ||
	    cntr_error(b, b->r.rcntr, "receives"))
		return -FI_EIO;
	return 0;
}

/* -c: fi_cntr_wait until @c reaches @v (0 at once if it has) */
static int wait_cntr(struct bench *b, struct fid_cntr *c, uint64_t v,
		     const char *what)
{
	uint64_t now = ft_now_ms();
	int ret;

	if (now > b->deadline_ms)
		return err(b, "waiting for completions", -FI_ETIMEDOUT);
	ret = fi_cntr_wait(c, v, (int)(b->deadline_ms - now));
	if (ret == -FI_EAVAIL || (!ret && cntr_error(b, c, what)))
		return cntr_error(b, c, what) ? -FI_EIO : err(b, what, ret);
	if (ret)
		return err(b, "fi_cntr_wait", ret);
	return 0;
}

/* Read the CQ once; count send and receive completions. */
static int poll_cq(struct bench *b)
{
	struct fi_cq_entry comp[16];
	struct fi_cq_err_entry e;
	ssize_t n, i;

	if (opt.cntr)
		return poll_cntr(b);
	n = fi_cq_read(b->r.cq, comp, 16);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		memset(&e, 0, sizeof(e));
		fi_cq_readerr(b->r.cq, &e, 0);
		fprintf(stderr, "gba_bench_msg rank %d (%s): error completion: "
				"%s (prov_errno %d, len %zu)\n",
			b->rank, b->prov, fi_strerror(e.err), e.prov_errno,
			e.len);
		return -e.err;
	}
	if (n < 0)
		return err(b, "fi_cq_read", n);
	for (i = 0; i < n; i++) {
		struct fi_context *c = comp[i].op_context;

		if (c >= b->tx_ctx && c < b->tx_ctx + opt.window)
			b->tx_done++;
		else
			b->rx_done++;
	}
	return 0;
}

/* Poll until tx_done >= tx and rx_done >= rx. */
static int wait_for(struct bench *b, uint64_t tx, uint64_t rx)
{
	unsigned polls = 0;
	int ret;

	if (opt.cntr) {
		if (b->tx_done < tx &&
		    (ret = wait_cntr(b, b->r.cntr, tx, "sends")))
			return ret;
		if (b->rx_done < rx &&
		    (ret = wait_cntr(b, b->r.rcntr, rx, "receives")))
			return ret;
		b->tx_done = b->tx_done < tx ? tx : b->tx_done;
		b->rx_done = b->rx_done < rx ? rx : b->rx_done;
		return 0;
	}
	while (b->tx_done < tx || b->rx_done < rx) {
		ret = poll_cq(b);
		if (ret)
			return ret;
		if (!(++polls & 0xffff) && ft_now_ms() > b->deadline_ms)
			return err(b, "waiting for completions", -FI_ETIMEDOUT);
	}
	return 0;
}

/* Retry a post while the provider says -FI_EAGAIN, progressing the CQ. */
#define POST(b, call)                                                          \
	do {                                                                   \
		ssize_t r_;                                                    \
		while ((r_ = (call)) == -FI_EAGAIN) {                          \
			int p_ = poll_cq(b);                                   \
			if (p_)                                                \
				return p_;                                     \
		}                                                              \
		if (r_)                                                        \
			return err(b, #call, r_);                              \
	} while (0)

/* What run_size measures. */
enum mode { MODE_LAT, MODE_BW, MODE_XCHG, MODE_SELF };

/* A context per outstanding operation (FI_CONTEXT mode). */
#define RX_CTX(b) (&(b)->rx_ctx[(b)->rx_posted % (opt.window + 1)])

static int post_recv(struct bench *b, size_t size)
{
	POST(b, fi_trecv(b->r.ep, b->rx_buf, size, b->rx_desc, b->peer, TAG_DATA,
			 0, RX_CTX(b)));
	b->rx_posted++;
	return 0;
}

/* -F: write the @size bytes of the next send's payload (the pattern
 * check_payload expects), as an application produces its data. */
static void fresh_payload(struct bench *b, size_t size)
{
	if (opt.fresh)
		memset(b->tx_buf, 0xa0 | b->rank, size);
}

static int post_send(struct bench *b, size_t size)
{
	fresh_payload(b, size);
	if (size <= b->inject_size) {
		POST(b, fi_tinject(b->r.ep, b->tx_buf, size, b->peer, TAG_DATA));
		return 0;
	}
	POST(b, fi_tsend(b->r.ep, b->tx_buf, size, b->tx_desc, b->peer, TAG_DATA,
			 &b->tx_ctx[b->tx_posted % opt.window]));
	b->tx_posted++;
	return 0;
}

static int send_ctrl(struct bench *b)
{
	POST(b, fi_tinject(b->r.ep, b->ctrl_tx, CTRL_LEN, b->peer, TAG_CTRL));
	return 0;
}

static int recv_ctrl(struct bench *b)
{
	POST(b, fi_trecv(b->r.ep, b->ctrl_rx, CTRL_LEN, NULL, b->peer, TAG_CTRL,
			 0, RX_CTX(b)));
	b->rx_posted++;
	return wait_for(b, b->tx_posted, b->rx_posted);
}

/* The payload of process @from: every byte (0xa0 | @from). */
static int check_payload(struct bench *b, int from, size_t size,
			 const char *what)
{
	char want = (char)(0xa0 | from);
	size_t i;

	for (i = 0; i < size; i++)
		if (b->rx_buf[i] != want) {
			fprintf(stderr, "gba_bench_msg rank %d (%s): %s size "
					"%zu: byte %zu is 0x%02x, not 0x%02x\n",
				b->rank, b->prov, what, size, i,
				(unsigned char)b->rx_buf[i],
				(unsigned char)want);
			return -FI_EIO;
		}
	return 0;
}

/* Ping-pong iterations per round for @size (fewer for large messages). */
static long lat_iters(size_t size)
{
	long n = opt.iters;

	if (size > 4096) {
		n = (long)((double)opt.iters * 4096 / size);
		if (n < 100)
			n = 100;
		if (n > opt.iters)
			n = opt.iters;
	}
	return n;
}

/*
 * One ping-pong round of @iters iterations on @b (self-contained: one
 * receive pre-posted at its start, none left at its end).  Rank 0 stores
 * the half round-trip time in *us.
 */
static int pp_round(struct bench *b, size_t size, long iters, double *us)
{
	double t0 = ft_now_us();
	long i;
	int ret;

	ret = post_recv(b, size);
	for (i = 0; !ret && i < iters; i++) {
		if (b->rank == 0) {
			ret = post_send(b, size);
			if (!ret)
				ret = wait_for(b, b->tx_posted, b->rx_posted);
			if (!ret && i + 1 < iters)
				ret = post_recv(b, size);
		} else {
			ret = wait_for(b, b->tx_posted, b->rx_posted);
			if (!ret && i + 1 < iters)
				ret = post_recv(b, size);
			if (!ret)
				ret = post_send(b, size);
		}
	}
	if (!ret)
		ret = wait_for(b, b->tx_posted, b->rx_posted);
	*us = (ft_now_us() - t0) / iters / 2;
	return ret;
}

/*
 * One exchange round of @iters iterations on @b with @peer (the other
 * process, or this one): each iteration posts a receive and a send with
 * a completion (never an inject: MTL-OFI's MPI_Isend) and waits for
 * both.  *us: the time of one exchange.
 */
static int xchg_round(struct bench *b, fi_addr_t peer, size_t size,
		      long iters, double *us)
{
	double t0 = ft_now_us();
	long i;
	int ret = 0;

	for (i = 0; !ret && i < iters; i++) {
		POST(b, fi_trecv(b->r.ep, b->rx_buf, size, b->rx_desc, peer,
				 TAG_DATA, 0, RX_CTX(b)));
		b->rx_posted++;
		fresh_payload(b, size);
		POST(b, fi_tsend(b->r.ep, b->tx_buf, size, b->tx_desc, peer,
				 TAG_DATA,
				 &b->tx_ctx[b->tx_posted % opt.window]));
		b->tx_posted++;
		ret = wait_for(b, b->tx_posted, b->rx_posted);
	}
	*us = (ft_now_us() - t0) / iters;
	return ret;
}

/*
 * One streaming round of @windows windows on @b.  Window w: the receiver
 * (rank 1) posts -W receives and sends a control message; the sender
 * (rank 0) waits for it, sends -W messages and waits for their
 * completions.  After the last window the receiver sends one more control
 * message.  Rank 0's clock runs from the first control message to the
 * last; *mbps is its figure.
 */
static int stream_round(struct bench *b, size_t size, long windows,
			double *mbps)
{
	double t0 = 0;
	long w;
	int k, ret = 0;

	for (w = 0; !ret && w <= windows; w++) {
		if (b->rank == 1) {
			for (k = 0; !ret && w < windows && k < opt.window; k++)
				ret = post_recv(b, size);
			if (!ret)
				ret = send_ctrl(b);
			if (!ret && w < windows)
				ret = wait_for(b, b->tx_posted, b->rx_posted);
			continue;
		}
		ret = recv_ctrl(b);
		if (w == 0)
			t0 = ft_now_us();
		for (k = 0; !ret && w < windows && k < opt.window; k++)
			ret = post_send(b, size);
		if (!ret)
			ret = wait_for(b, b->tx_posted, b->rx_posted);
	}
	*mbps = (double)size * opt.window * windows / (ft_now_us() - t0);
	return ret;
}

/* Run one round of @mode on @b; *fig: its figure. */
static int mode_round(struct bench *b, enum mode mode, size_t size, long n,
		      double *fig)
{
	switch (mode) {
	case MODE_LAT:
		return pp_round(b, size, n, fig);
	case MODE_XCHG:
		return xchg_round(b, b->peer, size, n, fig);
	case MODE_SELF: /* the first process alone: fi_addr 0 is its own */
		return xchg_round(b, 0, size, n, fig);
	default:
		return stream_round(b, size, n, fig);
	}
}

/*
 * Run one size on every provider: a warm-up round each, then -r rounds
 * each, alternating the providers round by round (the order reversed
 * every other round) so that they share the machine's conditions.
 * Rank 0 prints one line per provider: the median round.
 */
static int run_size(struct bench *bs, int nb, size_t size, enum mode mode)
{
	static const char *const name[] = {"lat", "bw", "xlat", "slat"};
	double fig[MAX_PROVS][64], dummy;
	long n, warm;
	int p, q, r, ret = 0;

	if (mode == MODE_BW) {
		n = (long)((double)opt.mb * 1e6 / ((double)size * opt.window));
		if (n < 1)
			n = 1;
		warm = opt.bw_warmup;
	} else {
		n = lat_iters(size);
		warm = opt.warmup;
	}
	for (p = 0; p < nb; p++)
		memset(bs[p].rx_buf, 0, size);
	for (p = 0; !ret && p < nb && warm; p++)
		ret = mode_round(&bs[p], mode, size, warm, &dummy);
	for (r = 0; !ret && r < opt.rounds; r++)
		for (q = 0; !ret && q < nb; q++) {
			p = r % 2 ? nb - 1 - q : q;
			ret = mode_round(&bs[p], mode, size, n, &fig[p][r]);
		}
	for (p = 0; !ret && p < nb; p++)
		if (mode != MODE_BW || bs[p].rank == 1)
			ret = check_payload(&bs[p],
					    mode == MODE_SELF ? 0
							      : 1 - bs[p].rank,
					    size, name[mode]);
	if (ret || bs[0].rank)
		return ret;
	for (p = 0; p < nb; p++) {
		if (opt.verbose) {
			printf("# %s%s prov=%s size=%zu rounds:", opt.kind,
			       name[mode], bs[p].prov, size);
			for (r = 0; r < opt.rounds; r++)
				printf(mode == MODE_BW ? " %.0f" : " %.3f",
				       fig[p][r]);
			printf("\n");
		}
		if (mode == MODE_BW)
			printf("%sbw prov=%s size=%zu window=%d windows=%ld "
			       "MBps=%.1f\n", opt.kind, bs[p].prov,
			       size, opt.window, n,
			       gba_bench_median(fig[p], opt.rounds));
		else
			printf("%s%s prov=%s size=%zu iters=%ld us=%.3f\n",
			       opt.kind, name[mode], bs[p].prov, size, n,
			       gba_bench_median(fig[p], opt.rounds));
	}
	fflush(stdout);
	return 0;
}

static int bench_open(struct bench *b)
{
	struct ft_open_attr attr = {
		.prov = b->prov,
		.caps = FI_TAGGED,
		.mode = FI_CONTEXT,
		.mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
			   FI_MR_PROV_KEY,
		.threading = FI_THREAD_DOMAIN,
		.cq_attr = {.format = FI_CQ_FORMAT_CONTEXT,
			    .size = 4 * opt.window + 64},
		.cntr_only = opt.cntr,
	};
	char node[64];

	if (!strcmp(b->prov, "shm")) {
		/* a distinct source address per process */
		snprintf(node, sizeof(node), "gbabench-%d-%d", (int)getppid(),
			 b->rank);
		attr.node = node;
		attr.flags = FI_SOURCE;
	}
	CHECK(b, ft_open_attr(&b->r, &attr));
	if (strcmp(b->r.info->fabric_attr->prov_name, b->prov)) {
		fprintf(stderr, "gba_bench_msg: asked for provider %s, got %s\n",
			b->prov, b->r.info->fabric_attr->prov_name);
		return -FI_ENODATA;
	}
	b->inject_size = b->r.info->tx_attr->inject_size;

	b->tx_ctx = calloc(opt.window, sizeof(*b->tx_ctx));
	b->rx_ctx = calloc(opt.window + 1, sizeof(*b->rx_ctx));
	if (!b->tx_ctx || !b->rx_ctx ||
	    posix_memalign((void **)&b->tx_buf, 4096, b->max_size) ||
	    posix_memalign((void **)&b->rx_buf, 4096, b->max_size))
		return err(b, "posix_memalign", -FI_ENOMEM);
	memset(b->tx_buf, 0xa0 | b->rank, b->max_size);
	memset(b->rx_buf, 0, b->max_size);
	if (b->r.info->domain_attr->mr_mode & FI_MR_LOCAL) {
		CHECK(b, fi_mr_reg(b->r.domain, b->tx_buf, b->max_size, FI_SEND,
				   0, 1, 0, &b->tx_mr, NULL));
		CHECK(b, fi_mr_reg(b->r.domain, b->rx_buf, b->max_size, FI_RECV,
				   0, 2, 0, &b->rx_mr, NULL));
		b->tx_desc = fi_mr_desc(b->tx_mr);
		b->rx_desc = fi_mr_desc(b->rx_mr);
	}
	return 0;
}

static void bench_close(struct bench *b)
{
	if (b->tx_mr)
		fi_close(&b->tx_mr->fid);
	if (b->rx_mr)
		fi_close(&b->rx_mr->fid);
	ft_close(&b->r);
	free(b->tx_buf);
	free(b->rx_buf);
	free(b->tx_ctx);
	free(b->rx_ctx);
}

/*
 * Set up like ft_exchange (which needs the AV and endpoint of struct
 * ft_res): publish the name, wait for the peer's, insert both in rank
 * order, check that they differ.
 */
static int exchange(struct bench *b, struct ft_shared *sh)
{
	size_t len = FT_NAME_LEN;
	fi_addr_t a;
	int i;

	CHECK(b, fi_getname(&b->r.ep->fid, sh->names[b->rank], &len));
	sh->name_len = len;
	atomic_fetch_add(&sh->ready, 1);
	while (atomic_load(&sh->ready) < 2) {
		if (atomic_load(&sh->failed))
			return err(b, "peer failed during setup", -FI_EIO);
		if (ft_now_ms() > b->deadline_ms)
			return err(b, "address exchange", -FI_ETIMEDOUT);
		usleep(100);
	}
	if (!memcmp(sh->names[0], sh->names[1], FT_NAME_LEN)) {
		fprintf(stderr, "gba_bench_msg (%s): both processes have the "
				"same endpoint name\n", b->prov);
		return -FI_EADDRINUSE;
	}
	for (i = 0; i < 2; i++)
		if (fi_av_insert(b->r.av, sh->names[i], 1, &a, 0, NULL) != 1 ||
		    a != (fi_addr_t)i)
			return err(b, "fi_av_insert", -FI_EINVAL);
	b->peer = 1 - b->rank;
	if (b->rank == 0 && opt.verbose) {
		if (b->r.info->addr_format == FI_ADDR_STR)
			printf("# names: %.*s %.*s\n", FT_NAME_LEN,
			       sh->names[0], FT_NAME_LEN, sh->names[1]);
		else
			printf("# names: %zu bytes each, distinct\n", len);
	}
	return 0;
}

/* The largest of @n @sizes and @floor. */
static size_t max_of(const size_t *sizes, int n, size_t floor)
{
	int i;

	for (i = 0; i < n; i++)
		if (sizes[i] > floor)
			floor = sizes[i];
	return floor;
}

static int child(int rank, void *shared, const struct ft_opts *o)
{
	struct bench bs[MAX_PROVS];
	size_t max_size = 64;
	int i, p, ret = 0;

	(void)o;
	shared_area = shared;
	max_size = max_of(opt.lat_sizes, opt.n_lat, max_size);
	max_size = max_of(opt.bw_sizes, opt.n_bw, max_size);
	max_size = max_of(opt.x_sizes, opt.n_x, max_size);
	max_size = max_of(opt.s_sizes, opt.n_s, max_size);
	/* the providers under test, whatever the caller's environment */
	setenv("FI_PROVIDER", opt.prov, 1);
	memset(bs, 0, sizeof(bs));
	for (p = 0; p < opt.n_prov; p++) {
		bs[p].rank = rank;
		bs[p].prov = opt.provs[p];
		bs[p].max_size = max_size;
		bs[p].deadline_ms =
			ft_now_ms() + (uint64_t)opt.timeout_s * 1000;
	}
	for (p = 0; !ret && p < opt.n_prov; p++) {
		ret = bench_open(&bs[p]);
		if (!ret)
			ret = exchange(&bs[p], &shared_area->ft[p]);
		if (!ret && rank == 0)
			printf("info prov=%s fabric=%s inject_size=%zu\n",
			       bs[p].r.info->fabric_attr->prov_name,
			       bs[p].r.info->fabric_attr->name,
			       bs[p].inject_size);
	}
	fflush(stdout);
	for (i = 0; !ret && i < opt.n_lat; i++)
		ret = run_size(bs, opt.n_prov, opt.lat_sizes[i], MODE_LAT);
	for (i = 0; !ret && i < opt.n_x; i++)
		ret = run_size(bs, opt.n_prov, opt.x_sizes[i], MODE_XCHG);
	/*
	 * The second process sleeps meanwhile: a busy one would share the
	 * first's core when the two CPUs are hyperthreads of one core.
	 */
	for (i = 0; !ret && rank == 0 && i < opt.n_s; i++)
		ret = run_size(bs, opt.n_prov, opt.s_sizes[i], MODE_SELF);
	if (rank == 0)
		atomic_store(&shared_area->self_done, 1);
	while (!ret && rank == 1 && opt.n_s &&
	       !atomic_load(&shared_area->self_done)) {
		if (ft_now_ms() > bs[0].deadline_ms)
			ret = err(&bs[0], "waiting for -L", -FI_ETIMEDOUT);
		usleep(1000);
	}
	for (i = 0; !ret && i < opt.n_bw; i++)
		ret = run_size(bs, opt.n_prov, opt.bw_sizes[i], MODE_BW);
	for (p = 0; p < opt.n_prov; p++)
		bench_close(&bs[p]);
	return ret ? 1 : 0;
}

static int parse_sizes(const char *s, size_t *v, int *n)
{
	char *end;

	*n = 0;
	if (!strcmp(s, "none"))
		return 0;
	while (*s) {
		if (*n == MAX_SIZES)
			return -1;
		v[*n] = strtoul(s, &end, 0);
		if (end == s || v[*n] == 0)
			return -1;
		if (*end == 'k' || *end == 'K')
			v[*n] <<= 10, end++;
		else if (*end == 'm' || *end == 'M')
			v[*n] <<= 20, end++;
		(*n)++;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return 0;
}

/* "gba,shm" into opt.provs */
static int parse_provs(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	opt.n_prov = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (opt.n_prov == MAX_PROVS)
			return -1;
		opt.provs[opt.n_prov++] = tok;
	}
	return opt.n_prov ? 0 : -1;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-p prov[,prov]] [-S sizes|none] [-X sizes|none]"
		"\n\t[-L sizes|none] [-B sizes|none] [-I iters]"
		"\n\t[-r rounds] [-w warmup] [-W window] [-M MB] [-T s] [-c] [-F]"
		"\n\t[-v]\n"
		"sizes: comma separated, k and m suffixes (8,4k,1m)\n",
		argv0);
}

int main(int argc, char **argv)
{
	struct ft_opts o = {0};
	int c, warm_set = 0;

	while ((c = getopt(argc, argv, "p:S:X:L:B:I:r:w:W:M:T:cFvh")) != -1) {
		switch (c) {
		case 'p':
			opt.prov = optarg;
			if (parse_provs(optarg))
				goto bad;
			break;
		case 'S':
			if (parse_sizes(optarg, opt.lat_sizes, &opt.n_lat))
				goto bad;
			break;
		case 'X':
			if (parse_sizes(optarg, opt.x_sizes, &opt.n_x))
				goto bad;
			break;
		case 'L':
			if (parse_sizes(optarg, opt.s_sizes, &opt.n_s))
				goto bad;
			break;
		case 'B':
			if (parse_sizes(optarg, opt.bw_sizes, &opt.n_bw))
				goto bad;
			break;
		case 'I':
			opt.iters = atol(optarg);
			break;
		case 'r':
			opt.rounds = atoi(optarg);
			break;
		case 'w':
			opt.warmup = atol(optarg);
			warm_set = 1;
			break;
		case 'W':
			opt.window = atoi(optarg);
			break;
		case 'M':
			opt.mb = atoi(optarg);
			break;
		case 'T':
			opt.timeout_s = atoi(optarg);
			break;
		case 'c':
			opt.cntr = 1;
			break;
		case 'F':
			opt.fresh = 1;
			break;
		case 'v':
			opt.verbose = 1;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			goto bad;
		}
	}
	opt.kind = opt.cntr ? (opt.fresh ? "cf" : "c") : (opt.fresh ? "f" : "");
	if (warm_set)
		opt.bw_warmup = opt.warmup < 2 ? opt.warmup : 2;
	if (opt.iters < 1 || opt.rounds < 1 || opt.rounds > 64 ||
	    opt.warmup < 0 || opt.window < 1 || opt.window > 4096 ||
	    opt.mb < 1 || opt.timeout_s < 1 || optind != argc)
		goto bad;
	o.prov = opt.prov;
	o.nprocs = 2;
	o.timeout_s = opt.timeout_s + 5; /* the processes time out first */
	return ft_fork_run(&o, sizeof(struct bench_shared), child);
bad:
	usage(argv[0]);
	return 2;
}
