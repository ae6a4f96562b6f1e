/*
 * Shared code of the gba conformance programs (fi_gba_*), in the style of
 * libfabric's fabtests: option parsing (-p provider, -I iterations, -n
 * processes, -T timeout, -D run length, -v), a launcher that forks the processes of a
 * test and exchanges their endpoint names through a shared mapping, the
 * usual objects (fabric, domain, EQ, CQ, AV, endpoint, counter) and
 * waits with timeouts.  Every helper prints what failed and returns a
 * negative libfabric error code (or exits the child).
 */
#ifndef GBA_FT_COMMON_H
#define GBA_FT_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_trigger.h>

#define FT_MAX_PROCS 64
#define FT_NAME_LEN 64

struct ft_opts {
	const char *prov; /* -p, default "gba" */
	long iters;	  /* -I */
	int nprocs;	  /* -n */
	int timeout_s;	  /* -T: whole run */
	int duration_s;	  /* -D: run length (0: by -I only) */
	int delay_us;	  /* -r: random delay bound */
	bool triggered;	  /* -t */
	bool verbose;	  /* -v */
	int rank;	  /* -R: run only this rank here (-1: fork all) */
	const char *shared_file; /* -S: the shared area, a file (with -R) */
};

/*
 * Parse the common options into @o (defaults already set by the caller).
 * @usage is printed for -h and errors, after the common options.
 * Returns 0, or exits (-h: 0, errors: 2).
 */
int ft_parse(int argc, char **argv, struct ft_opts *o, const char *name,
	     const char *usage);

/* Names of all processes, filled by ft_exchange (in the shared mapping). */
struct ft_shared {
	atomic_int ready;
	atomic_int failed;
	size_t name_len;
	char names[FT_MAX_PROCS][FT_NAME_LEN];
};

/*
 * Fork @o->nprocs processes, each running @child(rank, shared, o) with
 * @shared a MAP_SHARED zeroed area of @size bytes (starting with struct
 * ft_shared) created before the fork.  Waits for all; if one fails or
 * the run exceeds @o->timeout_s, the others are killed.  Returns 0 if
 * every child exited 0, else 1.  Libfabric must not be initialised in
 * the caller.
 *
 * With -R rank and -S file (o->shared_file set), runs only @child(o->rank) in
 * this process, the shared area being @o->shared_file mapped MAP_SHARED
 * (created and sized by the first process; it must not exist before
 * the run): the ranks are started separately, on emulated hosts that
 * share the file system and the kernel (scripts/emu_hosts.sh), and talk
 * over the fabric between hosts.  SIGALRM ends the process after
 * @o->timeout_s.
 */
int ft_fork_run(const struct ft_opts *o, size_t size,
		int (*child)(int rank, void *shared, const struct ft_opts *o));

/* The objects of one process. */
struct ft_res {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_cntr *cntr; /* bound FI_SEND | FI_WRITE | FI_READ */
	struct fid_cntr *rcntr; /* FI_RMA_EVENT: bound FI_REMOTE_WRITE;
				   cntr_only: bound FI_RECV */
};

/*
 * What ft_open_attr opens: an RDM endpoint of provider @prov with @caps
 * (fi_getinfo with @node and @flags, NULL and 0 usually); hints' @mode,
 * @mr_mode and @threading (FI_THREAD_UNSPEC: the provider's); an
 * EQ of @eq_size entries (wait object FI_WAIT_UNSPEC; 0: none); a CQ of
 * @cq_attr
 * bound FI_TRANSMIT | FI_RECV; an AV (FI_AV_TABLE); with @cntr also the
 * counters of struct ft_res (rcntr only when @caps has FI_RMA_EVENT).
 * With @cntr_only, counters instead of CQ entries (the objects of stock
 * fi_rdm_cntr_pingpong): the CQ bound with FI_SELECTIVE_COMPLETION (so
 * operations posted without FI_COMPLETION queue nothing), cntr bound
 * FI_SEND, rcntr bound FI_RECV, both with a wait object (FI_WAIT_UNSPEC:
 * fi_cntr_wait).
 */
struct ft_open_attr {
	const char *prov;
	const char *node;	/* fi_getinfo's node and flags (FI_SOURCE) */
	uint64_t flags;
	uint64_t caps;
	uint64_t mode;		/* hints' mode (FI_CONTEXT, ...) */
	int mr_mode;
	enum fi_threading threading;
	size_t eq_size;
	struct fi_cq_attr cq_attr;
	bool cntr;
	bool cntr_only;
};

/*
 * Open and enable the endpoint and objects of @attr into @r (zeroed
 * first): fi_getinfo (FI_VERSION(1, 17)), fi_fabric, fi_domain, EQ, CQ,
 * counters, AV, fi_endpoint, binds, fi_enable.  0 or a negative error
 * (printed); what was opened stays in @r for ft_close.
 */
int ft_open_attr(struct ft_res *r, const struct ft_open_attr *attr);

/*
 * ft_open_attr with the conformance programs' choices: @prov, @caps,
 * mr_mode FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, EQ of 64,
 * CQ format DATA of 4096 entries, counters.
 */
int ft_open(struct ft_res *r, const char *prov, uint64_t caps);

/*
 * Close what ft_open/ft_open_attr opened (NULL members skipped) and zero
 * @r.  Returns 0 or the first fi_close error (every object is closed
 * anyway).
 */
int ft_close(struct ft_res *r);

/*
 * Publish this process's name, wait (up to @timeout_s) for every
 * process's, insert all in rank order into the AV (fi_addr == rank).
 */
int ft_exchange(struct ft_res *r, struct ft_shared *sh, int rank, int n,
		int timeout_s);

/* Join the collective of AV set @set; wait for FI_JOIN_COMPLETE. */
int ft_join(struct ft_res *r, struct fid_av_set *set, struct fid_mc **mc);
/*
 * An AV set of the @n processes (fi_addr 0 .. n - 1, as ft_exchange
 * inserts them) into *@set, and ft_join on it.  0 or a negative error.
 */
int ft_join_all(struct ft_res *r, int n, struct fid_av_set **set,
		struct fid_mc **mc);
/* The address peers give RMA to reach @buf of a region (per mr_mode). */
uint64_t ft_rma_addr(const struct ft_res *r, const void *buf,
		     const void *region);

/*
 * Wait up to @timeout_ms for one completion into @comp.  Returns 0,
 * -FI_ETIMEDOUT, or the error of an error completion (printed, with
 * err_data for barrier errors).
 */
int ft_wait_comp(struct ft_res *r, struct fi_cq_data_entry *comp,
		 int timeout_ms);

/* Milliseconds / microseconds of CLOCK_MONOTONIC. */
uint64_t ft_now_ms(void);
double ft_now_us(void);

/* Print "<prog>[<pid>]: <call>: <err>" and return @ret (negative). */
int ft_err(const char *what, int ret);

/* The <prog> of ft_err's lines, for programs without ft_parse. */
void ft_set_prog(const char *name);

#define FT_CHECK(call)                                                         \
	do {                                                                   \
		int ret_ = (int)(call);                                        \
		if (ret_)                                                      \
			return ft_err(#call, ret_);                            \
	} while (0)

#endif
