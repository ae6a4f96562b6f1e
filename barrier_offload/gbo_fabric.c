/*
 * libgba_barrier: the library's own libfabric objects and the barrier of
 * a joined collective (fi_collective(3), fi_av_set(3)).
 *
 * One RDM endpoint with FI_COLLECTIVE per process, on the provider named
 * by GBA_BARRIER_PROVIDER ("gba"), separate from whatever carries the
 * program's other traffic.  A barrier set is an AV set of the members in
 * member order joined with fi_join_collective; its barrier is fi_barrier
 * followed by fi_cq_read until the completion.  On gba the provider says,
 * through <gba/fi_ext_gba.h>, whether the set's barrier runs on a device
 * group; another provider is taken to offload its barriers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <gba/fi_ext_gba.h>
#include <uthash.h>

#include "gbo.h"

/* Polls of an unreleased barrier between calls of the idle hook. */
#define GBO_IDLE_POLLS 4096

/* An address inserted into the AV, found again by its name. */
struct gbo_peer {
	uint8_t name[GBO_NAME_MAX];
	fi_addr_t fi_addr;
	UT_hash_handle hh;
};

static struct {
	enum gbo_reason state; /* GBO_NREASONS: not opened yet */
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	struct gbo_peer *peers;
	uint8_t name[GBO_NAME_MAX];
	size_t name_len;
} gbo_fab = {.state = GBO_NREASONS};

/* Log a failed libfabric call and return GBO_NO_PROVIDER. */
static enum gbo_reason gbo_fabric_fail(const char *call, int ret)
{
	gbo_log(1, "%s: %s (%d): barriers stay in MPI/OpenSHMEM", call,
		fi_strerror(-ret), ret);
	gbo_fabric_close();
	return GBO_NO_PROVIDER;
}

static enum gbo_reason gbo_fabric_do_open(void)
{
	struct fi_eq_attr eq_attr = {.size = 64, .wait_obj = FI_WAIT_NONE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT,
				     .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_info *hints;
	int ret;

	hints = fi_allocinfo();
	if (!hints)
		return gbo_fabric_fail("fi_allocinfo", -FI_ENOMEM);
	hints->caps = FI_COLLECTIVE | FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	hints->fabric_attr->prov_name = strdup(gbo_params.provider);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
			 &gbo_fab.info);
	fi_freeinfo(hints);
	if (ret) {
		gbo_log(1,
			"no provider \"%s\" with FI_COLLECTIVE (fi_getinfo: "
			"%s; is FI_PROVIDER_PATH set, FI_PROVIDER unset?)",
			gbo_params.provider, fi_strerror(-ret));
		return GBO_NO_PROVIDER;
	}
	ret = fi_fabric(gbo_fab.info->fabric_attr, &gbo_fab.fabric, NULL);
	if (ret)
		return gbo_fabric_fail("fi_fabric", ret);
	ret = fi_domain(gbo_fab.fabric, gbo_fab.info, &gbo_fab.domain, NULL);
	if (ret)
		return gbo_fabric_fail("fi_domain", ret);
	ret = fi_eq_open(gbo_fab.fabric, &eq_attr, &gbo_fab.eq, NULL);
	if (ret)
		return gbo_fabric_fail("fi_eq_open", ret);
	ret = fi_cq_open(gbo_fab.domain, &cq_attr, &gbo_fab.cq, NULL);
	if (ret)
		return gbo_fabric_fail("fi_cq_open", ret);
	ret = fi_av_open(gbo_fab.domain, &av_attr, &gbo_fab.av, NULL);
	if (ret)
		return gbo_fabric_fail("fi_av_open", ret);
	ret = fi_endpoint(gbo_fab.domain, gbo_fab.info, &gbo_fab.ep, NULL);
	if (ret)
		return gbo_fabric_fail("fi_endpoint", ret);
	ret = fi_ep_bind(gbo_fab.ep, &gbo_fab.eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(gbo_fab.ep, &gbo_fab.av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(gbo_fab.ep, &gbo_fab.cq->fid,
				 FI_TRANSMIT | FI_RECV);
	if (ret)
		return gbo_fabric_fail("fi_ep_bind", ret);
	ret = fi_enable(gbo_fab.ep);
	if (ret)
		return gbo_fabric_fail("fi_enable", ret);
	gbo_fab.name_len = sizeof(gbo_fab.name);
	ret = fi_getname(&gbo_fab.ep->fid, gbo_fab.name, &gbo_fab.name_len);
	if (ret)
		return gbo_fabric_fail("fi_getname (name above 56 bytes?)", ret);
	gbo_log(2, "opened provider %s, endpoint name %zu bytes",
		gbo_fab.info->fabric_attr->prov_name, gbo_fab.name_len);
	return GBO_OFFLOADED;
}

enum gbo_reason gbo_fabric_open(void)
{
	if (gbo_fab.state == GBO_NREASONS)
		gbo_fab.state = gbo_fabric_do_open();
	return gbo_fab.state;
}

void gbo_fabric_name(uint8_t name[GBO_NAME_MAX], uint32_t *len)
{
	memcpy(name, gbo_fab.name, GBO_NAME_MAX);
	*len = (uint32_t)gbo_fab.name_len;
}

/* The fi_addr of @name (@len bytes), inserted into the AV on first use. */
static int gbo_peer_addr(const uint8_t *name, uint32_t len, fi_addr_t *addr)
{
	struct gbo_peer *p;
	int ret;

	if (len > GBO_NAME_MAX)
		return -FI_EINVAL;
	HASH_FIND(hh, gbo_fab.peers, name, len, p);
	if (p) {
		*addr = p->fi_addr;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -FI_ENOMEM;
	memcpy(p->name, name, len);
	ret = fi_av_insert(gbo_fab.av, p->name, 1, &p->fi_addr, 0, NULL);
	if (ret != 1) {
		free(p);
		return ret < 0 ? ret : -FI_EINVAL;
	}
	HASH_ADD(hh, gbo_fab.peers, name, len, p);
	*addr = p->fi_addr;
	return 0;
}

/* Wait for the FI_JOIN_COMPLETE of @set's join (progressing the CQ). */
static int gbo_join_wait(struct gbo_set *set)
{
	struct fi_eq_err_entry err = {0};
	struct fi_eq_entry entry;
	struct fi_cq_entry c;
	uint32_t event;
	ssize_t n;

	for (;;) {
		n = fi_eq_read(gbo_fab.eq, &event, &entry, sizeof(entry), 0);
		if (n == -FI_EAGAIN) {
			(void)fi_cq_read(gbo_fab.cq, &c, 0);
			continue;
		}
		if (n == -FI_EAVAIL) {
			(void)fi_eq_readerr(gbo_fab.eq, &err, 0);
			return err.err ? -err.err : -FI_EOTHER;
		}
		if (n < 0)
			return (int)n;
		if (event == FI_JOIN_COMPLETE && entry.fid == &set->mc->fid)
			return 0;
	}
}

/* The provider's report on @set (<gba/fi_ext_gba.h>): 0, or not gba. */
static int gbo_set_query(struct gbo_set *set, struct fi_gba_mc_attr *attr)
{
	struct fi_gba_mc_ops *ops;
	int ret;

	ret = fi_open_ops(&set->mc->fid, FI_GBA_MC_OPS_1, 0, (void **)&ops,
			  NULL);
	return ret ? ret : ops->query(set->mc, attr);
}

/* Where the provider runs @set's barriers (GBO_OFFLOADED: the device). */
static enum gbo_reason gbo_set_path(struct gbo_set *set)
{
	static const enum gbo_reason why[] = {
		[FI_GBA_BARRIER_DEVICE] = GBO_OFFLOADED,
		[FI_GBA_BARRIER_SW_DISABLED] = GBO_PROV_DISABLED,
		[FI_GBA_BARRIER_SW_MEMBERS] = GBO_MEMBERS,
		[FI_GBA_BARRIER_SW_NO_DEVICE] = GBO_NO_DEVICE,
		[FI_GBA_BARRIER_SW_NO_GROUP] = GBO_NO_GROUP,
	};
	struct fi_gba_mc_attr attr;

	if (gbo_set_query(set, &attr))
		return GBO_OFFLOADED; /* another provider: trust its barrier */
	set->ext = 1;
	set->group_index = attr.group_index;
	if (attr.barrier >= sizeof(why) / sizeof(why[0]))
		return GBO_NO_DEVICE;
	return why[attr.barrier];
}

enum gbo_reason gbo_set_join(struct gbo_set *set, const uint8_t *names,
			     size_t stride, const uint32_t *lens,
			     uint32_t count, uint32_t me)
{
	struct fi_av_set_attr attr = {
		.count = count,
		.start_addr = FI_ADDR_NOTAVAIL,
		.end_addr = FI_ADDR_NOTAVAIL,
		.stride = 1,
	};
	fi_addr_t addr;
	uint32_t i;
	int ret;

	memset(set, 0, sizeof(*set));
	set->member_count = count;
	ret = fi_av_set(gbo_fab.av, &attr, &set->av_set, NULL);
	if (ret)
		goto fail;
	for (i = 0; i < count && !ret; i++) {
		ret = gbo_peer_addr(names + i * stride, lens[i], &addr);
		if (!ret)
			ret = fi_av_set_insert(set->av_set, addr);
	}
	if (ret)
		goto fail;
	ret = fi_join_collective(gbo_fab.ep, FI_ADDR_NOTAVAIL, set->av_set, 0,
				 &set->mc, set);
	if (ret)
		goto fail;
	ret = gbo_join_wait(set);
	if (ret)
		goto fail;
	set->coll_addr = fi_mc_addr(set->mc);
	return gbo_set_path(set);

fail:
	gbo_log(1, "joining %u members as member %u: %s (%d)", count, me,
		fi_strerror(-ret), ret);
	if (set->mc)
		fi_close(&set->mc->fid);
	if (set->av_set)
		fi_close(&set->av_set->fid);
	memset(set, 0, sizeof(*set));
	return GBO_JOIN_FAILED;
}

void gbo_set_leave(struct gbo_set *set, int offloaded)
{
	struct fi_gba_mc_attr attr;
	int ret;

	if (!set->mc)
		return;
	if (offloaded && set->ext && !gbo_set_query(set, &attr)) {
		/* every member arrived at our last barrier: RELEASE_SEQ
		 * is its sequence, the count of barriers on the group */
		if ((uint32_t)attr.release_seq == (uint32_t)set->barriers)
			gbo_stats.confirmed += set->barriers;
		else
			gbo_log(0,
				"group %u: %llu barriers here, the device "
				"released %llu",
				attr.group_index,
				(unsigned long long)set->barriers,
				(unsigned long long)attr.release_seq);
	}
	ret = fi_close(&set->mc->fid);
	if (ret)
		gbo_log(0, "leaving group %u: %s", set->group_index,
			fi_strerror(-ret));
	fi_close(&set->av_set->fid);
	memset(set, 0, sizeof(*set));
}

int gbo_set_barrier(struct gbo_set *set, void (*idle)(void))
{
	struct fi_cq_err_entry err;
	struct fi_cq_entry c;
	uint32_t polls = 0;
	ssize_t n;

	n = fi_barrier(gbo_fab.ep, set->coll_addr, set);
	if (n) {
		gbo_log(0, "fi_barrier: %s", fi_strerror((int)-n));
		return (int)n;
	}
	while ((n = fi_cq_read(gbo_fab.cq, &c, 1)) == -FI_EAGAIN) {
		if (idle && ++polls == GBO_IDLE_POLLS) {
			polls = 0;
			idle();
		}
	}
	set->barriers++;
	if (n == 1)
		return 0;
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(gbo_fab.cq, &err, 0) == 1) {
			gbo_log(0,
				"barrier on group %u failed: %s (ERROR_INFO "
				"0x%llx in err_data when the provider gives "
				"it)",
				set->group_index, fi_strerror(err.err),
				err.err_data && err.err_data_size >= 8
					? (unsigned long long)*(uint64_t *)
						  err.err_data
					: 0ULL);
			return -err.err;
		}
	}
	gbo_log(0, "fi_cq_read: %s", fi_strerror((int)-n));
	return n < 0 ? (int)n : -FI_EOTHER;
}

void gbo_fabric_close(void)
{
	struct gbo_peer *p, *tmp;

	if (gbo_fab.ep)
		fi_close(&gbo_fab.ep->fid);
	if (gbo_fab.av)
		fi_close(&gbo_fab.av->fid);
	if (gbo_fab.cq)
		fi_close(&gbo_fab.cq->fid);
	if (gbo_fab.eq)
		fi_close(&gbo_fab.eq->fid);
	if (gbo_fab.domain)
		fi_close(&gbo_fab.domain->fid);
	if (gbo_fab.fabric)
		fi_close(&gbo_fab.fabric->fid);
	if (gbo_fab.info)
		fi_freeinfo(gbo_fab.info);
	HASH_ITER(hh, gbo_fab.peers, p, tmp) {
		HASH_DEL(gbo_fab.peers, p);
		free(p);
	}
	memset(&gbo_fab, 0, sizeof(gbo_fab));
	gbo_fab.state = GBO_NO_PROVIDER; /* closed: never reopened */
}
