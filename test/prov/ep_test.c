/*
 * The gba endpoint through the stock libfabric: open, binds and their
 * errors, fi_enable, fi_getname, ops flags, source addresses, the
 * operations it does not offer, and that binds keep objects open.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rdma/fi_tagged.h>

#include "ep_common.h"

TestSuite(ep, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

Test(ep, open_arguments)
{
	struct fi_info *info;
	struct fid_ep *ep;

	cr_expect_eq(fi_endpoint(t_domain, NULL, &ep, NULL), -FI_EINVAL);
	cr_expect_eq(fi_endpoint(t_domain, t_info, NULL, NULL), -FI_EINVAL);
	info = fi_dupinfo(t_info);
	info->ep_attr->type = FI_EP_MSG;
	cr_expect_eq(fi_endpoint(t_domain, info, &ep, NULL), -FI_ENODATA);
	info->ep_attr->type = FI_EP_RDM;
	info->caps |= FI_MULTICAST;
	cr_expect_eq(fi_endpoint(t_domain, info, &ep, NULL), -FI_ENODATA);
	fi_freeinfo(info);
	cr_expect_eq(fi_endpoint2(t_domain, t_info, &ep, 1, NULL), -FI_EINVAL);
	cr_assert_eq(fi_endpoint2(t_domain, t_info, &ep, 0, NULL), 0);
	cr_expect_eq(fi_close(&ep->fid), 0);
}

Test(ep, binds)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
	struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_eq_attr eq_attr = {.size = 8};
	struct fid_cntr *cntr, *cntr2;
	struct fid_cq *cq, *cq2;
	struct fid_av *av, *av2;
	struct fid_eq *eq;
	struct fid_ep *ep;

	cr_assert_eq(fi_endpoint(t_domain, t_info, &ep, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &av, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &av2, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &cq, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &cq2, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cntr_attr, &cntr, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cntr_attr, &cntr2, NULL), 0);
	cr_assert_eq(fi_eq_open(t_fabric, &eq_attr, &eq, NULL), 0);

	cr_expect_eq(fi_enable(ep), -FI_ENOAV, "enable without an AV");
	cr_expect_eq(fi_ep_bind(ep, NULL, 0), -FI_EINVAL);
	cr_expect_eq(fi_ep_bind(ep, &t_domain->fid, 0), -FI_ENOSYS);
	cr_expect_eq(fi_ep_bind(ep, &cq->fid, 0), -FI_EBADFLAGS);
	cr_expect_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_READ),
		     -FI_EBADFLAGS);
	cr_expect_eq(fi_ep_bind(ep, &cntr->fid, 0), -FI_EBADFLAGS);
	cr_expect_eq(fi_ep_bind(ep, &cntr->fid, FI_SELECTIVE_COMPLETION),
		     -FI_EBADFLAGS);

	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_expect_eq(fi_ep_bind(ep, &av2->fid, 0), -FI_EINVAL, "second AV");
	cr_assert_eq(
		fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION),
		0);
	cr_expect_eq(fi_ep_bind(ep, &cq2->fid, FI_TRANSMIT), -FI_EINVAL);
	cr_assert_eq(fi_ep_bind(ep, &cq2->fid, FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(ep, &cntr->fid, FI_WRITE | FI_READ), 0);
	cr_expect_eq(fi_ep_bind(ep, &cntr2->fid, FI_READ), -FI_EINVAL);
	cr_assert_eq(fi_ep_bind(ep, &cntr2->fid, FI_SEND | FI_REMOTE_WRITE), 0);
	cr_assert_eq(fi_ep_bind(ep, &eq->fid, 0), 0);

	/* bound objects stay open */
	cr_expect_eq(fi_close(&cq->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&cntr->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&av->fid), -FI_EBUSY);

	cr_assert_eq(fi_enable(ep), 0);
	cr_expect_eq(fi_enable(ep), 0, "enable twice");
	cr_expect_eq(fi_ep_bind(ep, &cntr2->fid, FI_RECV), -FI_EOPBADSTATE);

	cr_expect_eq(fi_close(&ep->fid), 0);
	cr_expect_eq(fi_close(&cq->fid), 0);
	cr_expect_eq(fi_close(&cq2->fid), 0);
	cr_expect_eq(fi_close(&cntr->fid), 0);
	cr_expect_eq(fi_close(&cntr2->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
	cr_expect_eq(fi_close(&av2->fid), 0);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(ep, getname)
{
	struct gba_addr addr, addr2;
	struct fid_ep *ep, *ep2;
	size_t len;

	cr_assert_eq(fi_endpoint(t_domain, t_info, &ep, NULL), 0);
	cr_assert_eq(fi_endpoint(t_domain, t_info, &ep2, NULL), 0);
	len = 4;
	cr_expect_eq(fi_getname(&ep->fid, &addr, &len), -FI_ETOOSMALL);
	cr_expect_eq(len, sizeof(struct gba_addr));
	len = 0;
	cr_expect_eq(fi_getname(&ep->fid, NULL, &len), -FI_ETOOSMALL);
	cr_expect_eq(len, sizeof(struct gba_addr));
	cr_expect_eq(fi_getname(&ep->fid, &addr, NULL), -FI_EINVAL);
	len = sizeof(addr);
	cr_assert_eq(fi_getname(&ep->fid, &addr, &len), 0);
	cr_expect_eq(addr.magic, GBA_ADDR_MAGIC);
	cr_expect_eq(addr.pid, (uint32_t)getpid());
	cr_expect_eq(addr.host_id, gba_host_id());
	len = sizeof(addr2);
	cr_assert_eq(fi_getname(&ep2->fid, &addr2, &len), 0);
	cr_expect_neq(addr.ep_id, addr2.ep_id, "endpoints have distinct ids");
	cr_expect_eq(fi_close(&ep->fid), 0);
	cr_expect_eq(fi_close(&ep2->fid), 0);
}

Test(ep, source_address_from_service)
{
	struct fi_info *hints = prov_hints(), *info;
	struct fid_ep *ep, *ep2;
	struct gba_addr addr;
	size_t len = sizeof(addr);

	cr_assert_eq(
		fi_getinfo(TEST_VERSION, NULL, "4242", FI_SOURCE, hints, &info),
		0);
	cr_assert_eq(fi_endpoint(t_domain, info, &ep, NULL), 0);
	cr_assert_eq(fi_getname(&ep->fid, &addr, &len), 0);
	cr_expect_eq(addr.ep_id, 4242);
	cr_expect_eq(fi_endpoint(t_domain, info, &ep2, NULL), -FI_EADDRINUSE);
	cr_expect_eq(fi_close(&ep->fid), 0);
	cr_assert_eq(fi_endpoint(t_domain, info, &ep2, NULL), 0,
		     "address free again after close");
	cr_expect_eq(fi_close(&ep2->fid), 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

Test(ep, ops_flags)
{
	struct fid_ep *ep;
	uint64_t flags;

	cr_assert_eq(fi_endpoint(t_domain, t_info, &ep, NULL), 0);
	flags = FI_TRANSMIT;
	cr_assert_eq(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), 0);
	cr_expect_eq(flags, t_info->tx_attr->op_flags);
	flags = FI_TRANSMIT | FI_COMPLETION | FI_DELIVERY_COMPLETE;
	cr_assert_eq(fi_control(&ep->fid, FI_SETOPSFLAG, &flags), 0);
	flags = FI_TRANSMIT;
	cr_assert_eq(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), 0);
	cr_expect_eq(flags, FI_COMPLETION | FI_DELIVERY_COMPLETE);
	flags = FI_TRANSMIT | FI_RECV;
	cr_expect_eq(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), -FI_EINVAL);
	cr_expect_eq(fi_control(&ep->fid, FI_GETOPSFLAG, NULL), -FI_EINVAL);
	cr_expect_eq(fi_control(&ep->fid, FI_BACKLOG, &flags), -FI_ENOSYS);
	cr_expect_eq(fi_close(&ep->fid), 0);
}

Test(ep, unoffered_operations)
{
	struct fi_cq_data_entry e;
	char buf[8];
	struct tep t;
	size_t optlen = sizeof(buf);

	tep_open(&t, NULL);
	t.self = insert_name(t.av, t.ep);
	cr_expect_eq(fi_connect(t.ep, buf, NULL, 0), -FI_ENOSYS);
	cr_expect_eq(fi_getopt(&t.ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
			       buf, &optlen),
		     -FI_ENOPROTOOPT);
	cr_expect_eq(fi_cancel(&t.ep->fid, buf), -FI_ENOENT);
	cr_expect_eq(fi_allreduce(t.ep, buf, 1, NULL, buf, NULL, 0, FI_UINT64,
				  FI_SUM, 0, NULL),
		     -FI_EINVAL, "coll_addr 0 was never joined");
	cr_expect_eq(fi_cq_read(t.cq, &e, 1), -FI_EAGAIN, "nothing queued");
	tep_close(&t, true);
}
