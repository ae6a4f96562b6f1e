/*
 * fi_getinfo of the gba provider through the stock libfabric: the
 * advertised attributes, hint narrowing, and -FI_ENODATA for every hint
 * field the provider cannot meet.  Also fi_fabric/fi_domain argument
 * checks and parameters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "prov_common.h"

TestSuite(info, .timeout = 60);

static int getinfo(struct fi_info *hints, struct fi_info **info)
{
	return fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, info);
}

/* Expect -FI_ENODATA for @hints; frees them. */
static void expect_nodata(struct fi_info *hints, const char *what)
{
	struct fi_info *info = NULL;
	int ret = getinfo(hints, &info);

	cr_expect_eq(ret, -FI_ENODATA, "%s: fi_getinfo returned %d (%s)", what,
		     ret, fi_strerror(-ret));
	if (!ret)
		fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* Expect success for @hints; returns the info (hints freed). */
static struct fi_info *expect_info(struct fi_info *hints, const char *what)
{
	struct fi_info *info = NULL;
	int ret = getinfo(hints, &info);

	cr_assert_eq(ret, 0, "%s: fi_getinfo returned %d (%s)", what, ret,
		     fi_strerror(-ret));
	cr_assert_not_null(info);
	cr_assert_null(info->next, "%s: one fi_info expected", what);
	fi_freeinfo(hints);
	return info;
}

Test(info, defaults)
{
	struct fi_info *info = expect_info(prov_hints(), "defaults");
	const struct gba_addr *src = info->src_addr;

	cr_expect_str_eq(info->fabric_attr->prov_name, "gba");
	cr_expect_str_eq(info->fabric_attr->name, "gba");
	cr_expect_str_eq(info->domain_attr->name, "gba");
	cr_expect_eq(info->fabric_attr->prov_version, FI_VERSION(0, 1));
	cr_expect_eq(info->fabric_attr->api_version, TEST_VERSION);
	cr_expect_eq(info->ep_attr->type, FI_EP_RDM);
	cr_expect_eq(info->addr_format, FI_FORMAT_UNSPEC);
	cr_expect_eq(info->caps,
		     FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_COLLECTIVE |
			     FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			     FI_REMOTE_READ | FI_REMOTE_WRITE | FI_TRIGGER |
			     FI_LOCAL_COMM | FI_MULTI_RECV | FI_SOURCE |
			     FI_FENCE);
	cr_expect_eq(info->caps & (FI_DIRECTED_RECV | FI_RMA_EVENT |
				   FI_REMOTE_COMM | FI_SHARED_AV | FI_HMEM),
		     0, "behaviour-changing caps only when asked for");
	cr_expect_eq(info->mode, 0);
	cr_expect_eq(info->tx_attr->caps & ~info->caps, 0);
	cr_expect_eq(info->rx_attr->caps & ~info->caps, 0);
	cr_expect_eq(info->tx_attr->caps & FI_LOCAL_COMM, 0);
	cr_expect_eq(info->domain_attr->caps, FI_LOCAL_COMM);
	cr_assert_eq(info->src_addrlen, sizeof(struct gba_addr));
	cr_assert_not_null(src);
	cr_expect(gba_addr_valid(src, info->src_addrlen));
	cr_expect_eq(src->pid, (uint32_t)getpid());
	cr_expect_eq(src->host_id, gba_host_id());
	cr_expect_null(info->dest_addr);
	cr_expect_eq(info->domain_attr->threading, FI_THREAD_SAFE);
	cr_expect_eq(info->domain_attr->data_progress, FI_PROGRESS_MANUAL);
	cr_expect_eq(info->domain_attr->control_progress, FI_PROGRESS_MANUAL);
	cr_expect_eq(info->domain_attr->resource_mgmt, FI_RM_ENABLED);
	cr_expect_eq(info->domain_attr->av_type, FI_AV_UNSPEC);
	cr_expect_eq(info->domain_attr->mr_mode, 0, "no mode bits required");
	cr_expect_eq(info->domain_attr->mr_key_size, 8);
	cr_expect_eq(info->domain_attr->mr_iov_limit, GBA_MR_IOV_LIMIT);
	cr_expect_eq(info->domain_attr->cq_cnt, GBA_CQ_CNT);
	cr_expect_eq(info->domain_attr->cntr_cnt, GBA_CNTR_CNT);
	cr_expect_eq(info->domain_attr->max_err_data, GBA_MAX_ERR_DATA);
	cr_expect_eq(info->domain_attr->max_ep_tx_ctx, 1);
	cr_expect_eq(info->domain_attr->max_ep_stx_ctx, 0);
	cr_expect_eq(info->ep_attr->max_msg_size, GBA_MAX_MSG_SIZE);
	cr_expect_eq(info->tx_attr->inject_size, GBA_INJECT_SIZE);
	cr_expect_eq(info->tx_attr->iov_limit, GBA_IOV_LIMIT);
	cr_expect_eq(info->tx_attr->rma_iov_limit, GBA_RMA_IOV_LIMIT);
	cr_expect_eq(info->tx_attr->comp_order, FI_ORDER_NONE);
	cr_expect_eq(info->rx_attr->total_buffered_recv, 0);
	fi_freeinfo(info);
}

Test(info, caps_narrowing)
{
	struct fi_info *hints = prov_hints(), *info;

	hints->caps = FI_RMA;
	info = expect_info(hints, "FI_RMA");
	cr_expect_eq(info->caps & (FI_ATOMIC | FI_COLLECTIVE), 0,
		     "primary caps not asked for must not be returned");
	cr_expect_eq(info->caps & (FI_READ | FI_WRITE | FI_REMOTE_READ |
				   FI_REMOTE_WRITE),
		     FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
	cr_expect(info->caps & FI_LOCAL_COMM);
	fi_freeinfo(info);

	hints = prov_hints();
	hints->caps = FI_RMA | FI_READ;
	info = expect_info(hints, "FI_RMA|FI_READ");
	cr_expect_eq(info->caps & (FI_WRITE | FI_REMOTE_WRITE), 0);
	cr_expect(info->caps & FI_READ);
	fi_freeinfo(info);

	hints = prov_hints();
	hints->caps = FI_COLLECTIVE;
	info = expect_info(hints, "FI_COLLECTIVE");
	cr_expect(info->caps & FI_COLLECTIVE);
	cr_expect_eq(info->caps & (FI_RMA | FI_ATOMIC), 0);
	cr_expect(info->tx_attr->caps & FI_COLLECTIVE);
	fi_freeinfo(info);
}

Test(info, unsupported_caps)
{
	static const uint64_t bad[] = {
		FI_MULTICAST,	 FI_HMEM,	 FI_NAMED_RX_CTX, FI_RMA_PMEM,
		FI_VARIABLE_MSG, FI_SOURCE_ERR,
	};
	struct fi_info *hints;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		hints = prov_hints();
		hints->caps = FI_RMA | bad[i];
		expect_nodata(hints, fi_tostr(&bad[i], FI_TYPE_CAPS));
	}
	hints = prov_hints();
	hints->tx_attr->caps = FI_MULTICAST;
	expect_nodata(hints, "tx FI_MULTICAST");
	hints = prov_hints();
	hints->rx_attr->caps = FI_HMEM;
	expect_nodata(hints, "rx FI_HMEM");
	hints = prov_hints();
	hints->domain_attr->caps = FI_MULTICAST;
	expect_nodata(hints, "domain FI_MULTICAST");
	hints = prov_hints();
	hints->domain_attr->caps = FI_LOCAL_COMM;
	fi_freeinfo(expect_info(hints, "domain FI_LOCAL_COMM"));
}

/*
 * Every combination of the domain capabilities asked for in
 * domain_attr->caps comes back in domain_attr->caps (fabtests'
 * getinfo_caps3); FI_LOCAL_COMM always does.
 */
Test(info, domain_caps_combinations)
{
	static const uint64_t bits[] = {FI_LOCAL_COMM, FI_REMOTE_COMM,
					FI_SHARED_AV};
	struct fi_info *hints, *info;
	uint64_t want;
	unsigned m, b;

	for (m = 0; m < 8; m++) {
		for (want = 0, b = 0; b < 3; b++)
			if (m & (1u << b))
				want |= bits[b];
		hints = prov_hints();
		hints->domain_attr->caps = want;
		info = expect_info(hints, fi_tostr(&want, FI_TYPE_CAPS));
		cr_expect_eq(info->domain_attr->caps & want, want,
			     "asked %s, got %s", fi_tostr(&want, FI_TYPE_CAPS),
			     fi_tostr(&info->domain_attr->caps, FI_TYPE_CAPS));
		cr_expect(info->domain_attr->caps & FI_LOCAL_COMM);
		fi_freeinfo(info);
	}
}

Test(info, endpoint_type)
{
	struct fi_info *hints = prov_hints();

	hints->ep_attr->type = FI_EP_MSG;
	expect_nodata(hints, "FI_EP_MSG");
	hints = prov_hints();
	hints->ep_attr->type = FI_EP_DGRAM;
	expect_nodata(hints, "FI_EP_DGRAM");
	hints = prov_hints();
	hints->ep_attr->type = FI_EP_RDM;
	fi_freeinfo(expect_info(hints, "FI_EP_RDM"));
}

Test(info, addr_format)
{
	struct fi_info *hints = prov_hints();

	hints->addr_format = FI_SOCKADDR_IN;
	expect_nodata(hints, "FI_SOCKADDR_IN");
	hints = prov_hints();
	hints->addr_format = FI_ADDR_STR;
	expect_nodata(hints, "FI_ADDR_STR");
}

Test(info, names)
{
	struct fi_info *hints = prov_hints();

	hints->fabric_attr->name = strdup("other");
	expect_nodata(hints, "fabric name");
	hints = prov_hints();
	hints->domain_attr->name = strdup("mlx5_0");
	expect_nodata(hints, "domain name");
	hints = prov_hints();
	hints->fabric_attr->name = strdup("gba");
	hints->domain_attr->name = strdup("gba");
	fi_freeinfo(expect_info(hints, "gba names"));
	hints = prov_hints();
	hints->fabric_attr->prov_version = FI_VERSION(9, 0);
	expect_nodata(hints, "prov_version");
}

Test(info, domain_attr_limits)
{
	struct fi_info *hints;

#define NODATA_DOM(field, value)                                               \
	do {                                                                   \
		hints = prov_hints();                                          \
		hints->domain_attr->field = (value);                           \
		expect_nodata(hints, #field);                                  \
	} while (0)
	NODATA_DOM(cq_cnt, GBA_CQ_CNT + 1);
	NODATA_DOM(cntr_cnt, GBA_CNTR_CNT + 1);
	NODATA_DOM(ep_cnt, GBA_EP_CNT + 1);
	NODATA_DOM(mr_cnt, GBA_MR_CNT + 1);
	NODATA_DOM(mr_iov_limit, GBA_MR_IOV_LIMIT + 1);
	NODATA_DOM(mr_key_size, 16);
	NODATA_DOM(cq_data_size, 16);
	NODATA_DOM(max_err_data, GBA_MAX_ERR_DATA + 1);
	NODATA_DOM(tx_ctx_cnt, 2);
	NODATA_DOM(rx_ctx_cnt, 2);
	NODATA_DOM(max_ep_tx_ctx, 2);
	NODATA_DOM(max_ep_stx_ctx, 1);
	NODATA_DOM(max_ep_srx_ctx, 1);
	NODATA_DOM(auth_key_size, 8);
	NODATA_DOM(av_type, (enum fi_av_type)7);
	NODATA_DOM(threading, (enum fi_threading)99);
	NODATA_DOM(data_progress, (enum fi_progress)9);
	NODATA_DOM(control_progress, (enum fi_progress)9);
	NODATA_DOM(resource_mgmt, (enum fi_resource_mgmt)9);
	NODATA_DOM(tclass, FI_TC_LOW_LATENCY);
	NODATA_DOM(mr_mode, FI_MR_BASIC | FI_MR_LOCAL);
#undef NODATA_DOM
}

Test(info, ep_tx_rx_limits)
{
	struct fi_info *hints;

#define NODATA(attr, field, value)                                             \
	do {                                                                   \
		hints = prov_hints();                                          \
		hints->attr->field = (value);                                  \
		expect_nodata(hints, #attr "." #field);                        \
	} while (0)
	NODATA(ep_attr, protocol, FI_PROTO_SHM);
	NODATA(ep_attr, protocol_version, 2);
	NODATA(ep_attr, max_msg_size, GBA_MAX_MSG_SIZE + 1);
	NODATA(ep_attr, msg_prefix_size, 8);
	NODATA(ep_attr, max_order_raw_size, GBA_MAX_MSG_SIZE + 1);
	NODATA(ep_attr, max_order_war_size, GBA_MAX_MSG_SIZE + 1);
	NODATA(ep_attr, max_order_waw_size, GBA_MAX_MSG_SIZE + 1);
	NODATA(ep_attr, tx_ctx_cnt, 2);
	NODATA(ep_attr, rx_ctx_cnt, FI_SHARED_CONTEXT);
	NODATA(ep_attr, auth_key_size, 4);
	NODATA(tx_attr, inject_size, GBA_INJECT_SIZE + 1);
	NODATA(tx_attr, size, GBA_TX_SIZE + 1);
	NODATA(tx_attr, iov_limit, GBA_IOV_LIMIT + 1);
	NODATA(tx_attr, rma_iov_limit, GBA_RMA_IOV_LIMIT + 1);
	NODATA(tx_attr, msg_order, FI_ORDER_DATA);
	NODATA(tx_attr, comp_order, FI_ORDER_STRICT);
	NODATA(tx_attr, op_flags, FI_MULTICAST);
	NODATA(tx_attr, op_flags, FI_COMMIT_COMPLETE);
	NODATA(rx_attr, size, GBA_RX_SIZE + 1);
	NODATA(rx_attr, iov_limit, GBA_IOV_LIMIT + 1);
	NODATA(rx_attr, total_buffered_recv, 1);
	NODATA(rx_attr, msg_order, FI_ORDER_DATA);
	NODATA(rx_attr, op_flags, FI_INJECT);
#undef NODATA
}

Test(info, hints_narrow_sizes)
{
	struct fi_info *hints = prov_hints(), *info;

	hints->tx_attr->size = 16;
	hints->tx_attr->inject_size = 8;
	hints->rx_attr->size = 32;
	hints->ep_attr->max_order_raw_size = 100;
	hints->tx_attr->msg_order = FI_ORDER_RAW | FI_ORDER_WAW;
	info = expect_info(hints, "sizes");
	cr_expect_eq(info->tx_attr->size, 16);
	cr_expect_eq(info->tx_attr->inject_size, 8);
	cr_expect_eq(info->rx_attr->size, 32);
	cr_expect_eq(info->ep_attr->max_order_raw_size, 100);
	cr_expect((info->tx_attr->msg_order & (FI_ORDER_RAW | FI_ORDER_WAW)) ==
		  (FI_ORDER_RAW | FI_ORDER_WAW));
	fi_freeinfo(info);
}

Test(info, threading_and_progress_follow_hints)
{
	static const enum fi_threading th[] = {
		FI_THREAD_SAFE,	      FI_THREAD_FID,	  FI_THREAD_DOMAIN,
		FI_THREAD_COMPLETION, FI_THREAD_ENDPOINT,
	};
	struct fi_info *hints, *info;
	size_t i;

	for (i = 0; i < sizeof(th) / sizeof(th[0]); i++) {
		hints = prov_hints();
		hints->domain_attr->threading = th[i];
		info = expect_info(hints, "threading");
		cr_expect_eq(info->domain_attr->threading, th[i]);
		fi_freeinfo(info);
	}
	hints = prov_hints();
	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	info = expect_info(hints, "progress");
	cr_expect_eq(info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	cr_expect_eq(info->domain_attr->control_progress, FI_PROGRESS_MANUAL);
	fi_freeinfo(info);
	hints = prov_hints();
	hints->domain_attr->av_type = FI_AV_MAP;
	info = expect_info(hints, "av_type");
	cr_expect_eq(info->domain_attr->av_type, FI_AV_MAP);
	fi_freeinfo(info);
}

Test(info, mr_modes)
{
	struct fi_info *hints, *info;
	int all = FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		  FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |
		  FI_MR_ENDPOINT;

	hints = prov_hints();
	hints->domain_attr->mr_mode = all;
	info = expect_info(hints, "all mr_mode bits");
	cr_expect_eq(info->domain_attr->mr_mode,
		     FI_MR_VIRT_ADDR | FI_MR_PROV_KEY,
		     "only the modes the provider uses are returned");
	fi_freeinfo(info);

	hints = prov_hints();
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT;
	info = expect_info(hints, "no key/address modes");
	cr_expect_eq(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);

	hints = prov_hints();
	hints->domain_attr->mr_mode = FI_MR_BASIC;
	info = expect_info(hints, "FI_MR_BASIC");
	cr_expect_eq(info->domain_attr->mr_mode, FI_MR_BASIC);
	fi_freeinfo(info);

	hints = prov_hints();
	hints->domain_attr->mr_mode = FI_MR_SCALABLE;
	info = expect_info(hints, "FI_MR_SCALABLE");
	cr_expect_eq(info->domain_attr->mr_mode, FI_MR_SCALABLE);
	fi_freeinfo(info);

	/* v1.0 API: FI_MR_UNSPEC becomes one of the v1.0 modes */
	hints = prov_hints();
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 0), NULL, NULL, 0, hints, &info),
		     0);
	cr_expect(info->domain_attr->mr_mode == FI_MR_SCALABLE ||
		  info->domain_attr->mr_mode == FI_MR_BASIC);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

Test(info, node_service)
{
	struct fi_info *hints, *info;
	const struct gba_addr *a;
	char node[GBA_ADDR_STRLEN];
	struct gba_addr peer = prov_addr(4242, 7);
	int ret;

	/* destination: this process's endpoint 9228 */
	hints = prov_hints();
	ret = fi_getinfo(TEST_VERSION, "localhost", "9228", 0, hints, &info);
	cr_assert_eq(ret, 0, "%s", fi_strerror(-ret));
	cr_assert_eq(info->dest_addrlen, sizeof(struct gba_addr));
	a = info->dest_addr;
	cr_expect_eq(a->ep_id, 9228);
	cr_expect_eq(a->pid, (uint32_t)getpid());
	cr_expect_not_null(info->src_addr);
	fi_freeinfo(info);

	/* source with FI_SOURCE */
	ret = fi_getinfo(TEST_VERSION, NULL, "12", FI_SOURCE, hints, &info);
	cr_assert_eq(ret, 0);
	a = info->src_addr;
	cr_expect_eq(a->ep_id, 12);
	cr_expect_null(info->dest_addr);
	fi_freeinfo(info);

	/* full gba:// destination of another process */
	gba_addr_str(&peer, node, sizeof(node));
	ret = fi_getinfo(TEST_VERSION, node, NULL, 0, hints, &info);
	cr_assert_eq(ret, 0, "%s: %s", node, fi_strerror(-ret));
	cr_expect_eq(memcmp(info->dest_addr, &peer, sizeof(peer)), 0);
	fi_freeinfo(info);

	/* FI_NUMERICHOST wants the gba:// form */
	cr_expect_eq(fi_getinfo(TEST_VERSION, "localhost", NULL, FI_NUMERICHOST,
				hints, &info),
		     -FI_ENODATA);
	ret = fi_getinfo(TEST_VERSION, node, NULL, FI_NUMERICHOST, hints,
			 &info);
	cr_expect_eq(ret, 0);
	if (!ret)
		fi_freeinfo(info);

	/* a source address of another process cannot be opened here */
	cr_expect_eq(
		fi_getinfo(TEST_VERSION, node, NULL, FI_SOURCE, hints, &info),
		-FI_ENODATA);
	/* unknown host names and malformed services */
	cr_expect_eq(fi_getinfo(TEST_VERSION, "no-such-host.invalid", "1", 0,
				hints, &info),
		     -FI_ENODATA);
	cr_expect_eq(
		fi_getinfo(TEST_VERSION, "localhost", "abc", 0, hints, &info),
		-FI_ENODATA);
	cr_expect_eq(fi_getinfo(TEST_VERSION, "localhost", "99999999999", 0,
				hints, &info),
		     -FI_ENODATA);
	cr_expect_eq(
		fi_getinfo(TEST_VERSION, "gba://zz/1/2", NULL, 0, hints, &info),
		-FI_ENODATA);
	fi_freeinfo(hints);
}

Test(info, hint_addresses)
{
	struct fi_info *hints, *info;
	struct gba_addr mine = prov_addr((uint32_t)getpid(), 3);
	struct gba_addr other = prov_addr(1, 1);
	char junk[24] = "not an address at all";

	hints = prov_hints();
	hints->src_addr = malloc(sizeof(mine));
	memcpy(hints->src_addr, &mine, sizeof(mine));
	hints->src_addrlen = sizeof(mine);
	info = expect_info(hints, "own src_addr");
	cr_expect_eq(memcmp(info->src_addr, &mine, sizeof(mine)), 0);
	fi_freeinfo(info);

	hints = prov_hints();
	hints->src_addr = malloc(sizeof(other));
	memcpy(hints->src_addr, &other, sizeof(other));
	hints->src_addrlen = sizeof(other);
	expect_nodata(hints, "foreign src_addr");

	hints = prov_hints();
	hints->dest_addr = malloc(sizeof(junk));
	memcpy(hints->dest_addr, junk, sizeof(junk));
	hints->dest_addrlen = sizeof(junk);
	expect_nodata(hints, "junk dest_addr");

	hints = prov_hints();
	hints->dest_addr = malloc(8);
	memset(hints->dest_addr, 0, 8);
	hints->dest_addrlen = 8;
	expect_nodata(hints, "short dest_addr");
}

Test(info, fabric_domain_bad_args)
{
	struct fi_info *info = expect_info(prov_hints(), "defaults");
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fi_info *bad;

	cr_assert_eq(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	cr_expect_eq(fi_domain(fabric, NULL, &domain, NULL), -FI_EINVAL);
	bad = fi_dupinfo(info);
	bad->caps |= FI_MULTICAST;
	cr_expect_eq(fi_domain(fabric, bad, &domain, NULL), -FI_EINVAL);
	fi_freeinfo(bad);
	bad = fi_dupinfo(info);
	bad->ep_attr->type = FI_EP_MSG;
	cr_expect_eq(fi_domain(fabric, bad, &domain, NULL), -FI_EINVAL);
	fi_freeinfo(bad);
	cr_expect_eq(fi_domain2(fabric, info, &domain, 1, NULL), -FI_EINVAL);
	cr_expect_eq(fi_passive_ep(fabric, info, NULL, NULL), -FI_ENOSYS);
	cr_expect_eq(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

Test(info, fabric_busy_until_children_closed)
{
	struct fi_info *info = expect_info(prov_hints(), "defaults");
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_NONE};

	cr_assert_eq(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	cr_assert_eq(fi_domain(fabric, info, &domain, NULL), 0);
	cr_assert_eq(fi_eq_open(fabric, &eq_attr, &eq, NULL), 0);
	cr_expect_eq(fi_close(&fabric->fid), -FI_EBUSY);
	cr_assert_eq(fi_domain_bind(domain, &eq->fid, 0), 0);
	cr_expect_eq(fi_close(&eq->fid), -FI_EBUSY, "EQ bound to the domain");
	cr_expect_eq(fi_domain_bind(domain, &eq->fid, 0), -FI_EINVAL,
		     "second EQ bind");
	cr_expect_eq(fi_close(&domain->fid), 0);
	cr_expect_eq(fi_close(&fabric->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&eq->fid), 0);
	cr_expect_eq(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

Test(info, domain_ops_not_supported)
{
	struct fi_info *info = expect_info(prov_hints(), "defaults");
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_stx *stx;
	struct fi_tx_attr txattr = {0};
	void *ops;

	cr_assert_eq(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	cr_assert_eq(fi_domain(fabric, info, &domain, NULL), 0);
	cr_expect_eq(fi_scalable_ep(domain, info, &ep, NULL), -FI_ENOSYS);
	cr_expect_eq(fi_stx_context(domain, &txattr, &stx, NULL), -FI_ENOSYS);
	cr_expect_eq(fi_srx_context(domain, info->rx_attr, &ep, NULL),
		     -FI_ENOSYS);
	cr_expect_eq(fi_open_ops(&domain->fid, "nothing", 0, &ops, NULL),
		     -FI_ENOSYS);
	cr_expect_eq(
		fi_open_ops(&domain->fid, "gba_internal_v1", 0, &ops, NULL),
		-FI_ENOSYS, "the former test-only ops are gone");
	cr_expect_eq(fi_domain_bind(domain, &fabric->fid, 0), -FI_EINVAL);
	cr_expect_eq(fi_close(&domain->fid), 0);
	cr_expect_eq(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

/*
 * libfabric runs the provider linked into this program (prov_shim.c), and
 * only it: an endpoint opened through libfabric uses this copy's tables.
 */
Test(info, one_provider_copy, .init = prov_setup, .fini = prov_teardown)
{
	struct fi_info *hints = prov_hints(), *info, *i;
	struct fid_ep *ep;
	int n = 0;

	cr_assert_eq(fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info), 0);
	for (i = info; i; i = i->next)
		n += !strcmp(i->fabric_attr->prov_name, "gba");
	cr_expect_eq(n, 1, "one gba provider, one fi_info");
	fi_freeinfo(info);
	fi_freeinfo(hints);
	cr_expect_eq(prov_ini_calls, 1, "loaded once, from libgbatest-fi.so");
	cr_assert_eq(fi_endpoint(t_domain, t_info, &ep, NULL), 0);
	cr_expect_eq(ep->msg, &gba_ep_msg_ops, "another copy of the provider");
	cr_expect_eq(fi_close(&ep->fid), 0);
}

/* ---- FI_GBA_* parameters (each test runs in a fresh process) ----------- */

TestSuite(params, .timeout = 60, .fini = prov_teardown);

Test(params, defaults)
{
	unsetenv("FI_GBA_CQ_SIZE");
	unsetenv("FI_GBA_EQ_SIZE");
	unsetenv("FI_GBA_OFFLOAD");
	unsetenv("FI_GBA_BARRIER_TIMEOUT");
	unsetenv("FI_GBA_DEVICE");
	unsetenv("FI_GBA_PROGRESS");
	prov_setup();
	cr_expect_eq(gba_params.cq_size, (size_t)GBA_CQ_DEF_SIZE);
	cr_expect_eq(gba_params.eq_size, (size_t)GBA_EQ_DEF_SIZE);
	cr_expect_eq(gba_params.offload, 1);
	cr_expect_eq(gba_params.barrier_timeout_ms, -1);
	cr_expect_null(gba_params.device);
	cr_expect_eq(gba_params.progress, FI_PROGRESS_MANUAL);
	cr_expect_eq(t_info->domain_attr->data_progress, FI_PROGRESS_MANUAL);
}

/* FI_GBA_PROGRESS=auto: domains that do not ask get FI_PROGRESS_AUTO. */
Test(params, progress_auto)
{
	setenv("FI_GBA_PROGRESS", "AUTO", 1);
	prov_setup();
	cr_expect_eq(gba_params.progress, FI_PROGRESS_AUTO);
	cr_expect_eq(t_info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	cr_expect_eq(container_of(t_domain, struct gba_domain, domain_fid)
			     ->data_progress,
		     FI_PROGRESS_AUTO);
}

Test(params, progress_invalid_is_manual)
{
	setenv("FI_GBA_PROGRESS", "sometimes", 1);
	prov_setup();
	cr_expect_eq(gba_params.progress, FI_PROGRESS_MANUAL);
}

Test(params, read_from_environment)
{
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
	struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_NONE};
	struct fid_cq *cq;
	struct fid_eq *eq;

	setenv("FI_GBA_CQ_SIZE", "37", 1);
	setenv("FI_GBA_EQ_SIZE", "5", 1);
	setenv("FI_GBA_OFFLOAD", "0", 1);
	setenv("FI_GBA_BARRIER_TIMEOUT", "2500", 1);
	setenv("FI_GBA_DEVICE", "emu:/gba-test-params", 1);
	prov_setup();
	cr_expect_eq(gba_params.cq_size, 37);
	cr_expect_eq(gba_params.eq_size, 5);
	cr_expect_eq(gba_params.offload, 0);
	cr_expect_eq(gba_params.barrier_timeout_ms, 2500);
	cr_expect_str_eq(gba_params.device, "emu:/gba-test-params");
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &cq, NULL), 0);
	cr_expect_eq(container_of(cq, struct gba_cq, cq_fid)->size, 37);
	cr_expect_eq(fi_close(&cq->fid), 0);
	cr_assert_eq(fi_eq_open(t_fabric, &eq_attr, &eq, NULL), 0);
	cr_expect_eq(container_of(eq, struct gba_eq, eq_fid)->size, 5);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(params, out_of_range_values_fall_back)
{
	setenv("FI_GBA_CQ_SIZE", "0", 1);
	setenv("FI_GBA_EQ_SIZE", "99999999999", 1);
	setenv("FI_GBA_BARRIER_TIMEOUT", "-7", 1);
	setenv("FI_GBA_OFFLOAD", "maybe", 1);
	prov_setup();
	cr_expect_eq(gba_params.cq_size, (size_t)GBA_CQ_DEF_SIZE);
	cr_expect_eq(gba_params.eq_size, (size_t)GBA_EQ_DEF_SIZE);
	cr_expect_eq(gba_params.barrier_timeout_ms, -1);
	cr_expect_eq(gba_params.offload, 1);
}

Test(params, device_open_errors_are_reported)
{
	struct gba_dev *dev = NULL;
	struct gba_domain *d;

	setenv("FI_GBA_DEVICE", "/nonexistent/gba-device", 1);
	prov_setup();
	d = container_of(t_domain, struct gba_domain, domain_fid);
	cr_expect_lt(gba_domain_dev(d, &dev), 0,
		     "a missing device node is an error, not a crash");
	cr_expect_null(d->dev);
}

Test(params, device_opens_lazily)
{
	struct gba_dev *dev = NULL, *again = NULL;
	struct gba_domain *d;
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "emu:/gba-test-dev-%d", (int)getpid());
	setenv("FI_GBA_DEVICE", name, 1);
	prov_setup();
	d = container_of(t_domain, struct gba_domain, domain_fid);
	cr_expect_null(d->dev, "no device before the first use");
	ret = gba_domain_dev(d, &dev);
	cr_assert_eq(ret, 0, "gba_domain_dev(%s): %s", name, fi_strerror(-ret));
	cr_expect_not_null(dev);
	cr_expect_eq(gba_domain_dev(d, &again), 0);
	cr_expect_eq(again, dev, "opened once per domain");
	cr_expect_eq(gba_domain_dev(NULL, &dev), -FI_EINVAL);
	prov_teardown(); /* closes the device */
	shm_unlink(name + strlen("emu:"));
}
