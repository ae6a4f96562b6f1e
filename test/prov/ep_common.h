/*
 * Endpoint helpers for the provider tests (test/prov): an endpoint with
 * its AV, EQ, CQ and counter, address insertion, AV sets, collective
 * joins and CQ polling.  Failures abort the calling Criterion test.
 */
#ifndef GBA_TEST_EP_COMMON_H
#define GBA_TEST_EP_COMMON_H

#include <rdma/fi_collective.h>
#include <rdma/fi_trigger.h>

#include "prov_common.h"

/* One endpoint with its AV, EQ, tx/rx CQ (FI_CQ_FORMAT_DATA) and a
 * counter bound for FI_SEND. */
struct tep {
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_cntr *cntr;
	fi_addr_t self;
};

/*
 * Criterion .init/.fini for tests that join collectives: a private
 * emulated device image (GBA_DEVICE=emu:/gba-provtest-<pid>) so that
 * parallel test workers do not share device groups; removed at .fini.
 */
void coll_setup(void);
void coll_teardown(void);

/* Open, bind and enable an endpoint (a new AV unless @shared_av). */
void tep_open(struct tep *t, struct fid_av *shared_av);
void tep_close(struct tep *t, bool close_av);
/*
 * tep_open without Criterion assertions, for forked children (Criterion
 * reports assertions of non-worker processes as errors).  0 or -FI_E*.
 */
int tep_try_open(struct tep *t);
/* Insert the name of @ep into @av; returns its fi_addr. */
fi_addr_t insert_name(struct fid_av *av, struct fid_ep *ep);
/* An AV set of the @n addresses @a of @av. */
struct fid_av_set *make_set(struct fid_av *av, const fi_addr_t *a, size_t n);
/* Join @set on @t, consume FI_JOIN_COMPLETE (checked); returns the mc. */
struct fid_mc *join(struct tep *t, struct fid_av_set *set, void *ctx);
/* Poll @cq up to @polls times: 1 (*@e filled), 0, or -FI_EAVAIL. */
int poll_cq(struct fid_cq *cq, int polls, struct fi_cq_data_entry *e);

#endif
