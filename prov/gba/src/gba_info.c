/*
 * libfabric "gba" provider: fi_getinfo(3).
 *
 * One fi_info describes the provider: FI_EP_RDM endpoints with self
 * (loopback) RMA and atomics, GBA barriers (FI_COLLECTIVE) and triggered
 * operations, host-local communication only (FI_LOCAL_COMM).  Every hint
 * field is checked; a hint the provider cannot meet gives -FI_ENODATA with
 * an FI_INFO line naming the field (FI_LOG_LEVEL=info FI_LOG_PROV=gba).
 *
 * Addresses are binary struct gba_addr (48 bytes) with addr_format
 * FI_FORMAT_UNSPEC: fi_getname/fi_av_insert exchange them as opaque bytes,
 * which is what Open MPI's MTL-OFI modex and fabtests' out-of-band address
 * exchange do; fi_av_straddr prints "gba://<host>/<pid>/<ep>" and
 * node/service strings are parsed by gba_resolve().
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gba_prov.h"

/* Primary capabilities: returned only when asked for (or hints->caps 0). */
#define GBA_PRIMARY_CAPS                                                       \
	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_COLLECTIVE)
#define GBA_DIRECTION_CAPS                                                     \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |             \
	 FI_REMOTE_WRITE)
/* Secondary capabilities: always returned. */
#define GBA_SECONDARY_CAPS                                                     \
	(FI_TRIGGER | FI_LOCAL_COMM | FI_MULTI_RECV | FI_SOURCE | FI_FENCE)
/*
 * Secondary capabilities that change what the endpoint does (receives
 * matched by source, remote events counted, ...): only when asked for.
 */
#define GBA_ASKED_CAPS                                                         \
	(FI_DIRECTED_RECV | FI_RMA_EVENT | FI_REMOTE_COMM | FI_SHARED_AV)

/* Tx/rx caps that older applications set on the wrong side; ignored. */
#define GBA_IGNORED_TX_CAPS                                                    \
	(FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RECV | FI_DIRECTED_RECV |       \
	 FI_VARIABLE_MSG | FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT |          \
	 FI_SOURCE_ERR)
#define GBA_IGNORED_RX_CAPS                                                    \
	(FI_READ | FI_WRITE | FI_SEND | FI_FENCE | FI_MULTICAST |              \
	 FI_NAMED_RX_CTX | FI_TRIGGER)

/* Completion levels: self operations are complete when the call returns. */
#define GBA_TX_OP_FLAGS                                                        \
	(FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE |                      \
	 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)
#define GBA_RX_OP_FLAGS (FI_COMPLETION | FI_MULTI_RECV)

#define GBA_PROTO_VERSION 1

#define GBA_NODATA(...)                                                        \
	({                                                                     \
		FI_INFO(&gba_prov, FI_LOG_CORE, __VA_ARGS__);                  \
		-FI_ENODATA;                                                   \
	})

/*
 * gba_threading_locks - true for the threading models in which objects
 * may be used by several threads at once, so the provider must lock
 * (fi_domain(3) "Threading"): FI_THREAD_SAFE, FI_THREAD_FID,
 * FI_THREAD_ENDPOINT, and FI_THREAD_UNSPEC taken as safe.  With
 * FI_THREAD_DOMAIN or FI_THREAD_COMPLETION the application serializes.
 */
bool gba_threading_locks(enum fi_threading threading)
{
	return threading != FI_THREAD_DOMAIN &&
	       threading != FI_THREAD_COMPLETION;
}

/* True if @name is this host: "localhost", loopback, or gethostname(). */
static bool gba_is_local_host(const char *name)
{
	char host[256];

	if (!strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") ||
	    !strcmp(name, "::1") || !strcasecmp(name, "localhost.localdomain"))
		return true;
	if (gethostname(host, sizeof(host)))
		return false;
	host[sizeof(host) - 1] = '\0';
	return !strcasecmp(name, host);
}

/* Parse a decimal uint32; 0 or -FI_EINVAL. */
static int gba_parse_u32(const char *s, const char *end, uint32_t *val)
{
	unsigned long long v = 0;

	if (s == end)
		return -FI_EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -FI_EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > UINT32_MAX)
			return -FI_EINVAL;
	}
	*val = (uint32_t)v;
	return 0;
}

/*
 * gba_resolve - node/service to address (see gba_prov.h).  The host a
 * source address names by host name is this one; a destination on
 * another host is looked up there by gba_resolve_dest, or named by the
 * full "gba://" form.  Returns 0 or -FI_EINVAL.
 */
int gba_resolve(const char *node, const char *service, struct gba_addr *addr)
{
	const char *slash;
	uint32_t pid, ep;

	if (!addr)
		return -FI_EINVAL;
	if (node && !strncmp(node, "gba://", 6)) {
		if (service && *service)
			return -FI_EINVAL;
		return gba_addr_parse(node, addr) ? -FI_EINVAL : 0;
	}
	if (node && *node && !gba_is_local_host(node))
		return -FI_EINVAL;

	memset(addr, 0, sizeof(*addr));
	addr->magic = GBA_ADDR_MAGIC;
	addr->version = GBA_ADDR_VERSION;
	addr->host_id = gba_host_id();
	pid = (uint32_t)getpid();
	ep = 0;
	if (service && *service) {
		slash = strchr(service, '/');
		if (slash) {
			if (gba_parse_u32(service, slash, &pid) ||
			    gba_parse_u32(slash + 1, service + strlen(service),
					  &ep) ||
			    !pid)
				return -FI_EINVAL;
		} else if (gba_parse_u32(service, service + strlen(service),
					 &ep)) {
			return -FI_EINVAL;
		}
	}
	addr->pid = pid;
	addr->ep_id = ep;
	return 0;
}

/*
 * A destination on another host: service @service of host @node, as a
 * service address (gba_addr_service; nothing is contacted here: the peer
 * may not progress until it hears from us).  fi_av_insert asks that host
 * for the endpoint's identity.  0, -FI_EINVAL (not a service number) or
 * -FI_ENODATA (@node does not resolve).
 */
static int gba_resolve_remote(const char *node, const char *service,
			      struct gba_addr *addr)
{
	uint32_t ep;
	int ret;

	if (!service || !*service || strchr(service, '/') ||
	    gba_parse_u32(service, service + strlen(service), &ep) || !ep ||
	    ep > UINT16_MAX) {
		FI_INFO(&gba_prov, FI_LOG_CORE,
			"node %s is another host: name its endpoint by a "
			"service number (1..65535) or a gba:// address\n",
			node);
		return -FI_EINVAL;
	}
	ret = gba_addr_service(node, ep, addr);
	if (ret)
		return GBA_WARN_RET(FI_LOG_CORE, -FI_ENODATA,
				    "node %s service %s: %s\n", node, service,
				    gba_last_error(ret));
	return 0;
}

/*
 * gba_resolve_dest - gba_resolve for a destination: a service "<ep>"
 * without a process names the endpoint of this job that holds service
 * <ep> on this host (fabtests' node/service mode; gba_eng_ep_find), else
 * this process's endpoint <ep>; on another host, the endpoint that holds
 * it there (gba_resolve_remote).  Returns 0, -FI_EINVAL, -FI_ENODATA or
 * the error of the lookup.
 */
int gba_resolve_dest(const char *node, const char *service,
		     struct gba_addr *addr)
{
	int ret;

	if (node && *node && strncmp(node, "gba://", 6) &&
	    !gba_is_local_host(node))
		return gba_resolve_remote(node, service, addr);
	ret = gba_resolve(node, service, addr);

	if (ret || !service || !*service || strchr(service, '/') ||
	    (node && !strncmp(node, "gba://", 6)))
		return ret;
	ret = gba_eng_ep_find(addr->ep_id, addr);
	if (ret == -ENOENT)
		return 0; /* none elsewhere: this process's endpoint <ep> */
	if (ret)
		return GBA_WARN_RET(FI_LOG_CORE, gba_errno_to_fi(ret),
				    "service %s: cannot look it up: %s\n",
				    service, strerror(-ret));
	return 0;
}

/* True if @addr can be the source address of an endpoint of this process. */
static bool gba_addr_is_mine(const struct gba_addr *addr)
{
	return addr->host_id == gba_host_id() &&
	       addr->pid == (uint32_t)getpid();
}

/* True for the fi_progress values (UNSPEC, AUTO, MANUAL). */
static bool gba_progress_valid(enum fi_progress p)
{
	return p == FI_PROGRESS_UNSPEC || p == FI_PROGRESS_AUTO ||
	       p == FI_PROGRESS_MANUAL;
}

/*
 * gba_mr_mode - the mr_mode returned for an application that supports
 * @hint_mode at API @version, or -1 if it cannot be met.  The provider
 * requires no mode; it uses FI_MR_PROV_KEY when the application supports
 * it, and FI_MR_VIRT_ADDR only together with FI_MR_PROV_KEY (the two
 * classic modes: provider keys with virtual addresses, as FI_MR_BASIC,
 * or user keys with offsets, as FI_MR_SCALABLE).  An application that
 * chooses its keys thus addresses regions by offset, as fi_mr(3) lets
 * a provider decide ("a provider will clear an mr_mode bit if it is not
 * needed"; stock fi_rdm_deferred_wq relies on it).  The FI_MR_BASIC and
 * FI_MR_SCALABLE (v1.0) names are honoured as such.
 */
static int64_t gba_mr_mode(uint32_t version, int hint_mode)
{
	if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		switch (hint_mode) {
		case FI_MR_UNSPEC:
		case FI_MR_SCALABLE:
			return FI_MR_SCALABLE;
		case FI_MR_BASIC:
			return FI_MR_BASIC;
		default:
			return -1;
		}
	}
	if (hint_mode & FI_MR_BASIC)
		return (hint_mode & ~FI_MR_BASIC) ? -1 : FI_MR_BASIC;
	if (hint_mode & FI_MR_SCALABLE)
		return (hint_mode & ~FI_MR_SCALABLE) ? -1 : FI_MR_SCALABLE;
	if (!(hint_mode & FI_MR_PROV_KEY))
		return 0;
	return hint_mode & (FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
}

/*
 * Fabric attribute hints: name, provider name, version.  0 or
 * -FI_ENODATA (logged).
 */
static int gba_check_fabric_attr(const struct fi_fabric_attr *attr)
{
	const char *p;
	size_t n;

	if (attr->name && strcmp(attr->name, GBA_FABRIC_NAME))
		return GBA_NODATA("fabric name \"%s\" is not \"%s\"\n",
				  attr->name, GBA_FABRIC_NAME);
	if (attr->prov_name) {
		/* "gba" alone, or as one ';'-separated component */
		p = attr->prov_name;
		for (;;) {
			n = strcspn(p, ";");
			if (n == strlen(GBA_PROV_NAME) &&
			    !strncasecmp(p, GBA_PROV_NAME, n))
				break;
			if (!p[n])
				return GBA_NODATA(
					"provider name \"%s\" is not \"%s\"\n",
					attr->prov_name, GBA_PROV_NAME);
			p += n + 1;
		}
	}
	if (attr->prov_version > GBA_PROV_VERSION)
		return GBA_NODATA("provider version %u.%u > %u.%u\n",
				  FI_MAJOR(attr->prov_version),
				  FI_MINOR(attr->prov_version),
				  FI_MAJOR(GBA_PROV_VERSION),
				  FI_MINOR(GBA_PROV_VERSION));
	return 0;
}

/*
 * Domain attribute hints against the GBA_* limits (fi_domain(3)).
 * 0 or -FI_ENODATA (logged).
 */
static int gba_check_domain_attr(uint32_t version,
				 const struct fi_domain_attr *attr)
{
	if (attr->name && strcmp(attr->name, GBA_DOMAIN_NAME))
		return GBA_NODATA("domain name \"%s\" is not \"%s\"\n",
				  attr->name, GBA_DOMAIN_NAME);
	switch (attr->threading) {
	case FI_THREAD_UNSPEC:
	case FI_THREAD_SAFE:
	case FI_THREAD_FID:
	case FI_THREAD_DOMAIN:
	case FI_THREAD_COMPLETION:
	case FI_THREAD_ENDPOINT:
		break;
	default:
		return GBA_NODATA("invalid threading %d\n", attr->threading);
	}
	if (!gba_progress_valid(attr->control_progress))
		return GBA_NODATA("invalid control_progress %d\n",
				  attr->control_progress);
	if (!gba_progress_valid(attr->data_progress))
		return GBA_NODATA("invalid data_progress %d\n",
				  attr->data_progress);
	if (attr->resource_mgmt != FI_RM_UNSPEC &&
	    attr->resource_mgmt != FI_RM_ENABLED &&
	    attr->resource_mgmt != FI_RM_DISABLED)
		return GBA_NODATA("invalid resource_mgmt %d\n",
				  attr->resource_mgmt);
	if (attr->av_type != FI_AV_UNSPEC && attr->av_type != FI_AV_MAP &&
	    attr->av_type != FI_AV_TABLE)
		return GBA_NODATA("invalid av_type %d\n", attr->av_type);
	if (gba_mr_mode(version, attr->mr_mode) < 0)
		return GBA_NODATA("mr_mode %s cannot be met\n",
				  fi_tostr(&attr->mr_mode, FI_TYPE_MR_MODE));
	if (attr->mr_key_size > GBA_MR_KEY_SIZE)
		return GBA_NODATA("mr_key_size %zu > %d\n", attr->mr_key_size,
				  GBA_MR_KEY_SIZE);
	if (attr->cq_data_size > GBA_CQ_DATA_SIZE)
		return GBA_NODATA("cq_data_size %zu > %d\n", attr->cq_data_size,
				  GBA_CQ_DATA_SIZE);
	if (attr->cq_cnt > GBA_CQ_CNT)
		return GBA_NODATA("cq_cnt %zu > %d\n", attr->cq_cnt,
				  GBA_CQ_CNT);
	if (attr->ep_cnt > GBA_EP_CNT)
		return GBA_NODATA("ep_cnt %zu > %d\n", attr->ep_cnt,
				  GBA_EP_CNT);
	if (attr->tx_ctx_cnt > 1 || attr->rx_ctx_cnt > 1 ||
	    attr->max_ep_tx_ctx > 1 || attr->max_ep_rx_ctx > 1)
		return GBA_NODATA("scalable endpoints (more than one tx/rx "
				  "context) not supported\n");
	if (attr->max_ep_stx_ctx || attr->max_ep_srx_ctx)
		return GBA_NODATA("shared contexts not supported\n");
	if (attr->cntr_cnt > GBA_CNTR_CNT)
		return GBA_NODATA("cntr_cnt %zu > %d\n", attr->cntr_cnt,
				  GBA_CNTR_CNT);
	if (attr->mr_iov_limit > GBA_MR_IOV_LIMIT)
		return GBA_NODATA("mr_iov_limit %zu > %d\n", attr->mr_iov_limit,
				  GBA_MR_IOV_LIMIT);
	if (attr->caps & ~GBA_DOMAIN_CAPS)
		return GBA_NODATA("domain caps %s not supported\n",
				  fi_tostr(&attr->caps, FI_TYPE_CAPS));
	if (attr->auth_key || attr->auth_key_size)
		return GBA_NODATA("authentication keys not supported\n");
	if (attr->max_err_data > GBA_MAX_ERR_DATA)
		return GBA_NODATA("max_err_data %zu > %d\n", attr->max_err_data,
				  GBA_MAX_ERR_DATA);
	if (attr->mr_cnt > GBA_MR_CNT)
		return GBA_NODATA("mr_cnt %zu > %d\n", attr->mr_cnt,
				  GBA_MR_CNT);
	if (attr->tclass != FI_TC_UNSPEC && attr->tclass != FI_TC_BEST_EFFORT)
		return GBA_NODATA("traffic class 0x%x not supported\n",
				  attr->tclass);
	return 0;
}

/*
 * Endpoint attribute hints (fi_endpoint(3)): type, protocol, sizes,
 * contexts.  0 or -FI_ENODATA (logged).
 */
static int gba_check_ep_attr(const struct fi_ep_attr *attr)
{
	if (attr->type != FI_EP_UNSPEC && attr->type != FI_EP_RDM)
		return GBA_NODATA(
			"endpoint type %s not supported (FI_EP_RDM)\n",
			fi_tostr(&attr->type, FI_TYPE_EP_TYPE));
	if (attr->protocol != FI_PROTO_UNSPEC)
		return GBA_NODATA("protocol %s not supported\n",
				  fi_tostr(&attr->protocol, FI_TYPE_PROTOCOL));
	if (attr->protocol_version > GBA_PROTO_VERSION)
		return GBA_NODATA("protocol_version %u > %d\n",
				  attr->protocol_version, GBA_PROTO_VERSION);
	if (attr->max_msg_size > GBA_MAX_MSG_SIZE)
		return GBA_NODATA("max_msg_size %zu > %zu\n",
				  attr->max_msg_size, GBA_MAX_MSG_SIZE);
	if (attr->msg_prefix_size)
		return GBA_NODATA("message prefixes not supported\n");
	if (attr->max_order_raw_size > GBA_MAX_MSG_SIZE ||
	    attr->max_order_war_size > GBA_MAX_MSG_SIZE ||
	    attr->max_order_waw_size > GBA_MAX_MSG_SIZE)
		return GBA_NODATA("max_order_{raw,war,waw}_size %zu/%zu/%zu > "
				  "%zu\n",
				  attr->max_order_raw_size,
				  attr->max_order_war_size,
				  attr->max_order_waw_size, GBA_MAX_MSG_SIZE);
	if (attr->tx_ctx_cnt > 1 || attr->rx_ctx_cnt > 1)
		return GBA_NODATA("tx_ctx_cnt/rx_ctx_cnt %zu/%zu: scalable or "
				  "shared contexts not supported\n",
				  attr->tx_ctx_cnt, attr->rx_ctx_cnt);
	if (attr->auth_key_size || attr->auth_key)
		return GBA_NODATA("authentication keys not supported\n");
	return 0;
}

/*
 * Transmit attribute hints: caps, op_flags, ordering, sizes.  0 or
 * -FI_ENODATA (logged).
 */
static int gba_check_tx_attr(const struct fi_tx_attr *attr)
{
	uint64_t caps = attr->caps & ~GBA_IGNORED_TX_CAPS;

	if (caps & ~GBA_TX_CAPS)
		return GBA_NODATA("tx caps %s not supported\n",
				  fi_tostr(&caps, FI_TYPE_CAPS));
	if (attr->op_flags & ~GBA_TX_OP_FLAGS)
		return GBA_NODATA("tx op_flags %s not supported\n",
				  fi_tostr(&attr->op_flags, FI_TYPE_OP_FLAGS));
	if (attr->msg_order & ~GBA_MSG_ORDER)
		return GBA_NODATA(
			"tx msg_order %s not supported\n",
			fi_tostr(&attr->msg_order, FI_TYPE_MSG_ORDER));
	if (attr->comp_order & ~FI_ORDER_NONE)
		return GBA_NODATA(
			"tx comp_order %s not supported\n",
			fi_tostr(&attr->comp_order, FI_TYPE_MSG_ORDER));
	if (attr->inject_size > GBA_INJECT_SIZE)
		return GBA_NODATA("inject_size %zu > %d\n", attr->inject_size,
				  GBA_INJECT_SIZE);
	if (attr->size > GBA_TX_SIZE)
		return GBA_NODATA("tx size %zu > %d\n", attr->size,
				  GBA_TX_SIZE);
	if (attr->iov_limit > GBA_IOV_LIMIT)
		return GBA_NODATA("tx iov_limit %zu > %d\n", attr->iov_limit,
				  GBA_IOV_LIMIT);
	if (attr->rma_iov_limit > GBA_RMA_IOV_LIMIT)
		return GBA_NODATA("rma_iov_limit %zu > %d\n",
				  attr->rma_iov_limit, GBA_RMA_IOV_LIMIT);
	/* one class of service serves them all: every libfabric class */
	if (attr->tclass != FI_TC_UNSPEC &&
	    (attr->tclass < FI_TC_DSCP || attr->tclass > FI_TC_NETWORK_CTRL) &&
	    (attr->tclass & ~0xffu) != FI_TC_DSCP)
		return GBA_NODATA("tx traffic class 0x%x not supported\n",
				  attr->tclass);
	return 0;
}

/*
 * Receive attribute hints: caps, op_flags, ordering, sizes.  0 or
 * -FI_ENODATA (logged).
 */
static int gba_check_rx_attr(const struct fi_rx_attr *attr)
{
	uint64_t caps = attr->caps & ~GBA_IGNORED_RX_CAPS;

	if (caps & ~GBA_RX_CAPS)
		return GBA_NODATA("rx caps %s not supported\n",
				  fi_tostr(&caps, FI_TYPE_CAPS));
	if (attr->op_flags & ~GBA_RX_OP_FLAGS)
		return GBA_NODATA("rx op_flags %s not supported\n",
				  fi_tostr(&attr->op_flags, FI_TYPE_OP_FLAGS));
	if (attr->msg_order & ~GBA_MSG_ORDER)
		return GBA_NODATA(
			"rx msg_order %s not supported\n",
			fi_tostr(&attr->msg_order, FI_TYPE_MSG_ORDER));
	if (attr->comp_order & ~FI_ORDER_NONE)
		return GBA_NODATA(
			"rx comp_order %s not supported\n",
			fi_tostr(&attr->comp_order, FI_TYPE_MSG_ORDER));
	if (attr->total_buffered_recv)
		return GBA_NODATA("total_buffered_recv %zu: no buffered "
				  "receives\n",
				  attr->total_buffered_recv);
	if (attr->size > GBA_RX_SIZE)
		return GBA_NODATA("rx size %zu > %d\n", attr->size,
				  GBA_RX_SIZE);
	if (attr->iov_limit > GBA_IOV_LIMIT)
		return GBA_NODATA("rx iov_limit %zu > %d\n", attr->iov_limit,
				  GBA_IOV_LIMIT);
	return 0;
}

/*
 * An address hint must be a whole, valid struct gba_addr (or absent).
 * 0 or -FI_ENODATA (logged).
 */
static int gba_check_addr(const void *addr, size_t len, const char *what)
{
	if (!addr && !len)
		return 0;
	if (!addr || len != sizeof(struct gba_addr) ||
	    !gba_addr_valid(addr, len))
		return GBA_NODATA("%s address (%zu bytes) is not a gba "
				  "address\n",
				  what, len);
	return 0;
}

/*
 * gba_info_check - every field of @info that a provider can be asked to
 * honour (fi_getinfo(3), fi_domain(3), fi_endpoint(3)).  Returns 0 or
 * -FI_ENODATA with an FI_INFO line.
 */
int gba_info_check(uint32_t version, const struct fi_info *info)
{
	int ret;

	if (!info)
		return 0;
	if (info->caps & ~GBA_CAPS) {
		uint64_t bad = info->caps & ~GBA_CAPS;

		return GBA_NODATA("caps %s not supported\n",
				  fi_tostr(&bad, FI_TYPE_CAPS));
	}
	if (info->addr_format != FI_FORMAT_UNSPEC)
		return GBA_NODATA(
			"addr_format %s not supported (gba addresses "
			"are FI_FORMAT_UNSPEC binary)\n",
			fi_tostr(&info->addr_format, FI_TYPE_ADDR_FORMAT));
	ret = gba_check_addr(info->src_addr, info->src_addrlen, "source");
	if (ret)
		return ret;
	if (info->src_addr && !gba_addr_is_mine(info->src_addr))
		return GBA_NODATA("source address is not of this process\n");
	ret = gba_check_addr(info->dest_addr, info->dest_addrlen,
			     "destination");
	if (ret)
		return ret;
	if (info->nic)
		return GBA_NODATA("nic attributes not supported\n");
	if (info->fabric_attr) {
		ret = gba_check_fabric_attr(info->fabric_attr);
		if (ret)
			return ret;
	}
	if (info->domain_attr) {
		ret = gba_check_domain_attr(version, info->domain_attr);
		if (ret)
			return ret;
	}
	if (info->ep_attr) {
		ret = gba_check_ep_attr(info->ep_attr);
		if (ret)
			return ret;
	}
	if (info->tx_attr) {
		ret = gba_check_tx_attr(info->tx_attr);
		if (ret)
			return ret;
	}
	if (info->rx_attr) {
		ret = gba_check_rx_attr(info->rx_attr);
		if (ret)
			return ret;
	}
	return 0;
}

/* Capabilities returned for @hint_caps (fi_getinfo(3) "Capabilities"). */
static uint64_t gba_info_caps(uint64_t hint_caps)
{
	uint64_t caps;

	if (!(hint_caps & (GBA_PRIMARY_CAPS | GBA_DIRECTION_CAPS)))
		return (GBA_CAPS & ~GBA_ASKED_CAPS) |
		       (hint_caps & GBA_ASKED_CAPS);
	caps = hint_caps & (GBA_PRIMARY_CAPS | GBA_DIRECTION_CAPS);
	if (!(caps & GBA_DIRECTION_CAPS)) {
		if (caps & (FI_MSG | FI_TAGGED))
			caps |= FI_SEND | FI_RECV;
		if (caps & (FI_RMA | FI_ATOMIC))
			caps |= FI_READ | FI_WRITE | FI_REMOTE_READ |
				FI_REMOTE_WRITE;
	}
	return caps | GBA_SECONDARY_CAPS | (hint_caps & GBA_ASKED_CAPS);
}

/* malloc copy of @len bytes of @p; NULL when out of memory. */
static void *gba_memdup(const void *p, size_t len)
{
	void *q = malloc(len);

	if (q)
		memcpy(q, p, len);
	return q;
}

/* Build the fi_info answering @hints (already checked). */
static struct fi_info *gba_info_alloc(uint32_t version,
				      const struct fi_info *hints,
				      const struct gba_addr *src,
				      const struct gba_addr *dest)
{
	const struct fi_domain_attr *hd = hints ? hints->domain_attr : NULL;
	const struct fi_ep_attr *he = hints ? hints->ep_attr : NULL;
	const struct fi_tx_attr *ht = hints ? hints->tx_attr : NULL;
	const struct fi_rx_attr *hr = hints ? hints->rx_attr : NULL;
	struct fi_info *info;
	uint64_t caps;

	info = fi_allocinfo();
	if (!info)
		return NULL;

	caps = gba_info_caps(hints ? hints->caps : 0);
	info->caps = caps;
	info->mode = 0;
	info->addr_format = FI_FORMAT_UNSPEC;
	info->src_addrlen = sizeof(*src);
	info->src_addr = gba_memdup(src, sizeof(*src));
	if (!info->src_addr)
		goto err;
	if (dest) {
		info->dest_addrlen = sizeof(*dest);
		info->dest_addr = gba_memdup(dest, sizeof(*dest));
		if (!info->dest_addr)
			goto err;
	}

	info->tx_attr->caps = caps & GBA_TX_CAPS;
	info->tx_attr->mode = 0;
	info->tx_attr->op_flags = ht ? ht->op_flags : 0;
	info->tx_attr->msg_order = GBA_MSG_ORDER;
	info->tx_attr->comp_order = FI_ORDER_NONE;
	info->tx_attr->inject_size =
		ht && ht->inject_size ? ht->inject_size : GBA_INJECT_SIZE;
	info->tx_attr->size = ht && ht->size ? ht->size : GBA_TX_SIZE;
	info->tx_attr->iov_limit =
		ht && ht->iov_limit ? ht->iov_limit : GBA_IOV_LIMIT;
	info->tx_attr->rma_iov_limit =
		ht && ht->rma_iov_limit ? ht->rma_iov_limit : GBA_RMA_IOV_LIMIT;
	info->tx_attr->tclass = ht ? ht->tclass : FI_TC_UNSPEC;

	info->rx_attr->caps = caps & GBA_RX_CAPS;
	info->rx_attr->mode = 0;
	info->rx_attr->op_flags = hr ? hr->op_flags : 0;
	info->rx_attr->msg_order = GBA_MSG_ORDER;
	info->rx_attr->comp_order = FI_ORDER_NONE;
	info->rx_attr->total_buffered_recv = 0;
	info->rx_attr->size = hr && hr->size ? hr->size : GBA_RX_SIZE;
	info->rx_attr->iov_limit =
		hr && hr->iov_limit ? hr->iov_limit : GBA_IOV_LIMIT;

	info->ep_attr->type = FI_EP_RDM;
	info->ep_attr->protocol = FI_PROTO_UNSPEC;
	info->ep_attr->protocol_version = GBA_PROTO_VERSION;
	info->ep_attr->max_msg_size = GBA_MAX_MSG_SIZE;
	info->ep_attr->msg_prefix_size = 0;
	info->ep_attr->max_order_raw_size = he && he->max_order_raw_size
						    ? he->max_order_raw_size
						    : GBA_MAX_MSG_SIZE;
	info->ep_attr->max_order_war_size = he && he->max_order_war_size
						    ? he->max_order_war_size
						    : GBA_MAX_MSG_SIZE;
	info->ep_attr->max_order_waw_size = he && he->max_order_waw_size
						    ? he->max_order_waw_size
						    : GBA_MAX_MSG_SIZE;
	/* 64-bit tags, any layout: the application's format is kept */
	info->ep_attr->mem_tag_format =
		he && he->mem_tag_format ? he->mem_tag_format
					    : 0xaaaaaaaaaaaaaaaaULL; /* FI_TAG_GENERIC */
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;

	info->domain_attr->name = strdup(GBA_DOMAIN_NAME);
	if (!info->domain_attr->name)
		goto err;
	info->domain_attr->threading =
		hd && hd->threading ? hd->threading : FI_THREAD_SAFE;
	info->domain_attr->control_progress = hd && hd->control_progress
						      ? hd->control_progress
						      : FI_PROGRESS_MANUAL;
	info->domain_attr->data_progress = hd && hd->data_progress
						   ? hd->data_progress
						   : gba_params.progress;
	info->domain_attr->resource_mgmt =
		hd && hd->resource_mgmt ? hd->resource_mgmt : FI_RM_ENABLED;
	info->domain_attr->av_type =
		hd && hd->av_type ? hd->av_type : FI_AV_UNSPEC;
	info->domain_attr->mr_mode =
		(int)gba_mr_mode(version, hd ? hd->mr_mode : 0);
	info->domain_attr->mr_key_size = GBA_MR_KEY_SIZE;
	info->domain_attr->cq_data_size = GBA_CQ_DATA_SIZE;
	info->domain_attr->cq_cnt = GBA_CQ_CNT;
	info->domain_attr->ep_cnt = GBA_EP_CNT;
	info->domain_attr->tx_ctx_cnt = 1;
	info->domain_attr->rx_ctx_cnt = 1;
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->max_ep_stx_ctx = 0;
	info->domain_attr->max_ep_srx_ctx = 0;
	info->domain_attr->cntr_cnt = GBA_CNTR_CNT;
	info->domain_attr->mr_iov_limit = GBA_MR_IOV_LIMIT;
	/* asked for in hints->caps or in hints->domain_attr->caps */
	info->domain_attr->caps =
		FI_LOCAL_COMM | ((caps | (hd ? hd->caps : 0)) &
				 (FI_REMOTE_COMM | FI_SHARED_AV));
	info->domain_attr->mode = 0;
	info->domain_attr->max_err_data = GBA_MAX_ERR_DATA;
	info->domain_attr->mr_cnt = GBA_MR_CNT;
	info->domain_attr->tclass = hd ? hd->tclass : FI_TC_UNSPEC;

	/* prov_name stays NULL: libfabric fills it (a name set here would
	 * be taken for a core provider under a utility one: "gba;gba"). */
	info->fabric_attr->name = strdup(GBA_FABRIC_NAME);
	if (!info->fabric_attr->name)
		goto err;
	info->fabric_attr->prov_version = GBA_PROV_VERSION;
	info->fabric_attr->api_version = version;
	return info;
err:
	fi_freeinfo(info);
	return NULL;
}

/*
 * gba_getinfo - fi_provider.getinfo, called by fi_getinfo(3).
 * @version: API version the application asked for.
 * @node, @service: optional; with FI_SOURCE they name the local address,
 *        otherwise the destination (see gba_resolve for the syntax).
 * @flags: FI_SOURCE, FI_NUMERICHOST (node must then be "gba://...").
 * @hints: optional constraints, all checked.
 * @info: receives one fi_info (free with fi_freeinfo).
 * Returns 0, -FI_ENODATA (hints or node/service cannot be met, logged at
 * FI_LOG_INFO), -FI_EINVAL (NULL @info), -FI_ENOMEM.
 */
int gba_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	struct gba_addr src, dest, *destp = NULL;
	int ret;

	if (!info) {
		FI_WARN(&gba_prov, FI_LOG_CORE, "NULL info pointer\n");
		return -FI_EINVAL;
	}
	*info = NULL;

	if ((flags & FI_NUMERICHOST) && node && strncmp(node, "gba://", 6))
		return GBA_NODATA("FI_NUMERICHOST: node \"%s\" is not a "
				  "gba:// address\n",
				  node);

	/* Local address: ep_id 0 asks fi_endpoint for a fresh one. */
	ret = gba_resolve(NULL, NULL, &src);
	if (ret)
		return GBA_NODATA("cannot form a local address\n");
	if (hints && hints->src_addr) {
		ret = gba_check_addr(hints->src_addr, hints->src_addrlen,
				     "hints source");
		if (ret)
			return ret;
		memcpy(&src, hints->src_addr, sizeof(src));
	}
	if (hints && hints->dest_addr) {
		ret = gba_check_addr(hints->dest_addr, hints->dest_addrlen,
				     "hints destination");
		if (ret)
			return ret;
		memcpy(&dest, hints->dest_addr, sizeof(dest));
		destp = &dest;
	}
	if (node || service) {
		if (flags & FI_SOURCE) {
			if (gba_resolve(node, service, &src))
				return GBA_NODATA("cannot resolve source "
						  "%s/%s\n",
						  node ? node : "",
						  service ? service : "");
		} else {
			if (gba_resolve_dest(node, service, &dest))
				return GBA_NODATA("cannot resolve destination "
						  "%s/%s\n",
						  node ? node : "",
						  service ? service : "");
			destp = &dest;
		}
	}
	if (!gba_addr_is_mine(&src))
		return GBA_NODATA("source address is not of this process\n");

	ret = gba_info_check(version, hints);
	if (ret)
		return ret;

	*info = gba_info_alloc(version, hints, &src, destp);
	if (!*info) {
		FI_WARN(&gba_prov, FI_LOG_CORE, "out of memory\n");
		return -FI_ENOMEM;
	}
	return 0;
}
