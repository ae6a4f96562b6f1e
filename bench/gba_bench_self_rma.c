/*
 * gba_bench_self_rma - latency of loopback ("self") RMA through the
 * libfabric gba provider next to the memcpy it is built on, in one process
 * and one run.
 *
 *   inject_write  fi_inject_write of -S bytes (default 8) to the endpoint's
 *                 own address: complete on return, no completion entry.
 *   write+cq      fi_write of -S bytes plus the fi_cq_read of its completion.
 *   memcpy        memcpy of -S bytes (the anchor).
 *
 * Options: -I iterations (default 2000000), -S size in bytes, -p provider.
 * Output: one line per operation: name, ns/op, ratio to memcpy.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "gba_ft_common.h"

#define CHECK(call)                                                          \
	do {                                                                 \
		int ret_ = (int)(call);                                      \
		if (ret_) {                                                  \
			fprintf(stderr, "%s:%d: %s: %d (%s)\n", __FILE__,     \
				__LINE__, #call, ret_, fi_strerror(-ret_));  \
			exit(1);                                             \
		}                                                            \
	} while (0)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct ft_open_attr attr = {
		.caps = FI_RMA | FI_WRITE | FI_REMOTE_WRITE | FI_LOCAL_COMM,
		.mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
		.cq_attr = {.format = FI_CQ_FORMAT_CONTEXT},
	};
	struct ft_res r;
	struct fid_mr *mr;
	struct fi_cq_entry comp;
	const char *prov = "gba";
	long iters = 2000000, i;
	size_t size = 8, len;
	char name[256], *src, *dst;
	volatile char *sink;
	fi_addr_t self;
	uint64_t raddr, key;
	double t0, inject_ns, write_ns, memcpy_ns;
	ssize_t n;
	int op;

	while ((op = getopt(argc, argv, "I:S:p:h")) != -1) {
		switch (op) {
		case 'I':
			iters = atol(optarg);
			break;
		case 'S':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			prov = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-I iters] [-S size] "
				"[-p provider]\n", argv[0]);
			return op == 'h' ? 0 : 2;
		}
	}
	if (iters <= 0 || size == 0) {
		fprintf(stderr, "-I and -S must be positive\n");
		return 2;
	}

	ft_set_prog("gba_bench_self_rma");
	attr.prov = prov;
	CHECK(ft_open_attr(&r, &attr));
	if (size > r.info->tx_attr->inject_size) {
		fprintf(stderr, "-S %zu exceeds inject_size %zu\n", size,
			r.info->tx_attr->inject_size);
		ft_close(&r);
		return 2;
	}
	len = sizeof(name);
	CHECK(fi_getname(&r.ep->fid, name, &len));
	if (fi_av_insert(r.av, name, 1, &self, 0, NULL) != 1) {
		fprintf(stderr, "fi_av_insert of own address failed\n");
		return 1;
	}

	src = calloc(1, size);
	dst = calloc(1, size);
	memset(src, 0x5a, size);
	CHECK(fi_mr_reg(r.domain, dst, size, FI_REMOTE_WRITE, 0, 0, 0, &mr,
			NULL));
	if (r.info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
		CHECK(fi_mr_bind(mr, &r.ep->fid, 0));
		CHECK(fi_mr_enable(mr));
	}
	key = fi_mr_key(mr);
	raddr = (r.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
			(uint64_t)(uintptr_t)dst : 0;

	/* Warm up, and check that data really lands. */
	for (i = 0; i < 1000; i++)
		CHECK(fi_inject_write(r.ep, src, size, self, raddr, key));
	if (memcmp(src, dst, size)) {
		fprintf(stderr, "inject_write did not write the target\n");
		return 1;
	}

	t0 = now_ns();
	for (i = 0; i < iters; i++)
		CHECK(fi_inject_write(r.ep, src, size, self, raddr, key));
	inject_ns = (now_ns() - t0) / iters;

	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		CHECK(fi_write(r.ep, src, size, NULL, self, raddr, key, NULL));
		while ((n = fi_cq_read(r.cq, &comp, 1)) == -FI_EAGAIN)
			;
		if (n != 1) {
			fprintf(stderr, "fi_cq_read: %zd\n", n);
			return 1;
		}
	}
	write_ns = (now_ns() - t0) / iters;

	sink = dst;
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		memcpy(dst, src, size);
		/* keep the copy: the compiler may not elide or hoist it */
		__asm__ volatile("" : : "r"(sink), "r"(src) : "memory");
	}
	memcpy_ns = (now_ns() - t0) / iters;

	printf("self_rma size=%zu iters=%ld\n", size, iters);
	printf("  %-14s %8.1f ns  %6.1fx memcpy\n", "inject_write",
	       inject_ns, inject_ns / memcpy_ns);
	printf("  %-14s %8.1f ns  %6.1fx memcpy\n", "write+cq_read",
	       write_ns, write_ns / memcpy_ns);
	printf("  %-14s %8.1f ns  %6.1fx memcpy\n", "memcpy", memcpy_ns,
	       1.0);

	CHECK(fi_close(&mr->fid));
	CHECK(ft_close(&r));
	free(src);
	free(dst);
	return 0;
}
