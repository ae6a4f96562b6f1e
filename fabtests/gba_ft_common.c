/* Shared code of the gba conformance programs; see gba_ft_common.h. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gba_ft_common.h"

static const char *ft_prog = "fi_gba";

uint64_t ft_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

double ft_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void ft_set_prog(const char *name)
{
	ft_prog = name;
}

int ft_err(const char *what, int ret)
{
	fprintf(stderr, "%s[%d]: %s: %d (%s)\n", ft_prog, (int)getpid(), what,
		ret, fi_strerror(ret < 0 ? -ret : ret));
	return ret < 0 ? ret : -ret;
}

static void ft_usage(const char *name, const char *usage)
{
	fprintf(stderr,
		"Usage: %s [OPTIONS]\n"
		"  -p <provider>   provider (default gba)\n"
		"  -I <number>     iterations\n"
		"  -n <number>     processes (forked by the program, max %d)\n"
		"  -T <seconds>    fail if the run takes longer\n"
		"  -D <seconds>    run length, for the programs that have one\n"
		"  -R <rank> -S <file>  run only that rank of the -n, the "
		"shared area\n"
		"                  being <file> (ranks started separately, "
		"e.g. on emulated hosts)\n"
		"  -v              verbose\n"
		"  -h              this help\n%s",
		name, FT_MAX_PROCS, usage ? usage : "");
}

int ft_parse(int argc, char **argv, struct ft_opts *o, const char *name,
	     const char *usage)
{
	int c;

	ft_prog = name;
	o->rank = -1;
	o->shared_file = NULL;
	while ((c = getopt(argc, argv, "p:I:n:T:D:r:R:S:tvh")) != -1) {
		switch (c) {
		case 'p':
			o->prov = optarg;
			break;
		case 'I':
			o->iters = strtol(optarg, NULL, 0);
			break;
		case 'n':
			o->nprocs = atoi(optarg);
			break;
		case 'T':
			o->timeout_s = atoi(optarg);
			break;
		case 'D':
			o->duration_s = atoi(optarg);
			break;
		case 'r':
			o->delay_us = atoi(optarg);
			break;
		case 'R':
			o->rank = atoi(optarg);
			break;
		case 'S':
			o->shared_file = optarg;
			break;
		case 't':
			o->triggered = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			ft_usage(name, usage);
			exit(0);
		default:
			ft_usage(name, usage);
			exit(2);
		}
	}
	if (o->nprocs < 1 || o->nprocs > FT_MAX_PROCS || o->iters < 0 ||
	    o->timeout_s < 1 || o->delay_us < 0 || o->duration_s < 0 ||
	    o->rank >= o->nprocs || (o->rank >= 0) != !!o->shared_file) {
		fprintf(stderr, "%s: bad option value\n", name);
		ft_usage(name, usage);
		exit(2);
	}
	return 0;
}

/* Kill every child still running. */
static void ft_kill_all(const pid_t *pids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
}

/* -R/-S: one rank in this process, the shared area a file. */
static int ft_run_one(const struct ft_opts *o, size_t size,
		      int (*child)(int rank, void *shared,
				   const struct ft_opts *o))
{
	void *shared;
	int fd, r;

	fd = open(o->shared_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		perror(o->shared_file);
		return 1;
	}
	shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (shared == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	alarm((unsigned)o->timeout_s);
	r = child(o->rank, shared, o);
	if (r)
		atomic_store(&((struct ft_shared *)shared)->failed, 1);
	fflush(stdout);
	fflush(stderr);
	munmap(shared, size);
	return r ? 1 : 0;
}

int ft_fork_run(const struct ft_opts *o, size_t size,
		int (*child)(int rank, void *shared, const struct ft_opts *o))
{
	pid_t pids[FT_MAX_PROCS] = {0}, pid;
	int i, st, left = o->nprocs, ret = 0;
	uint64_t deadline = ft_now_ms() + (uint64_t)o->timeout_s * 1000;
	void *shared;

	/* programs that fill struct ft_opts themselves leave both zero */
	if (o->shared_file && o->rank >= 0)
		return ft_run_one(o, size, child);
	shared = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < o->nprocs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			ft_kill_all(pids, i);
			return 1;
		}
		if (pids[i] == 0) {
			int r = child(i, shared, o);

			fflush(stdout);
			fflush(stderr);

			if (r)
				atomic_store(
					&((struct ft_shared *)shared)->failed,
					1);
			_exit(r ? 1 : 0);
		}
	}
	while (left) {
		pid = waitpid(-1, &st, WNOHANG);
		if (pid < 0) {
			perror("waitpid");
			ret = 1;
			break;
		}
		if (pid == 0) {
			if (ft_now_ms() > deadline) {
				fprintf(stderr,
					"%s: timeout after %d s: killing %d "
					"processes\n",
					ft_prog, o->timeout_s, left);
				ft_kill_all(pids, o->nprocs);
				ret = 1;
				deadline = UINT64_MAX;
			}
			usleep(1000);
			continue;
		}
		for (i = 0; i < o->nprocs; i++)
			if (pids[i] == pid)
				pids[i] = 0;
		left--;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			if (!ret)
				fprintf(stderr,
					"%s: process %d %s %d: stopping the "
					"others\n",
					ft_prog, (int)pid,
					WIFEXITED(st) ? "exited with"
						      : "killed by signal",
					WIFEXITED(st) ? WEXITSTATUS(st)
						      : WTERMSIG(st));
			ret = 1;
			ft_kill_all(pids, o->nprocs);
		}
	}
	munmap(shared, size);
	return ret;
}

/*
 * After fi_getinfo failed for provider @prov with hints: say whether @prov
 * answers without them (then a hint was not met; the provider's reason is
 * at FI_LOG_LEVEL=info) or not at all (not loaded, or no local address).
 */
static void ft_getinfo_why(const char *prov)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints)
		return;
	hints->fabric_attr->prov_name = strdup(prov);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fprintf(stderr, "%s[%d]: fi_getinfo of %s without hints: %s\n", ft_prog,
		(int)getpid(), prov,
		ret ? fi_strerror(-ret)
		    : "it answers (a hint was not met; FI_LOG_LEVEL=info "
		      "says which)");
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

int ft_open_attr(struct ft_res *r, const struct ft_open_attr *attr)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_eq_attr eq_attr = {.size = attr->eq_size,
				     .wait_obj = FI_WAIT_UNSPEC};
	struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_cntr_attr wait_cntr_attr = {.events = FI_CNTR_EVENTS_COMP,
					      .wait_obj = FI_WAIT_UNSPEC};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = attr->cq_attr;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!hints)
		return ft_err("fi_allocinfo", -FI_ENOMEM);
	hints->caps = attr->caps;
	hints->mode = attr->mode;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = attr->mr_mode;
	hints->domain_attr->threading = attr->threading;
	hints->fabric_attr->prov_name = strdup(attr->prov);
	ret = fi_getinfo(FI_VERSION(1, 17), attr->node, NULL, attr->flags,
			 hints, &r->info);
	fi_freeinfo(hints);
	if (ret) {
		ret = ft_err("fi_getinfo", ret);
		ft_getinfo_why(attr->prov);
		return ret;
	}
	FT_CHECK(fi_fabric(r->info->fabric_attr, &r->fabric, NULL));
	FT_CHECK(fi_domain(r->fabric, r->info, &r->domain, NULL));
	if (attr->eq_size)
		FT_CHECK(fi_eq_open(r->fabric, &eq_attr, &r->eq, NULL));
	FT_CHECK(fi_cq_open(r->domain, &cq_attr, &r->cq, NULL));
	if (attr->cntr_only) {
		FT_CHECK(fi_cntr_open(r->domain, &wait_cntr_attr, &r->cntr,
				      NULL));
		FT_CHECK(fi_cntr_open(r->domain, &wait_cntr_attr, &r->rcntr,
				      NULL));
	}
	if (attr->cntr && !attr->cntr_only)
		FT_CHECK(fi_cntr_open(r->domain, &cntr_attr, &r->cntr, NULL));
	FT_CHECK(fi_av_open(r->domain, &av_attr, &r->av, NULL));
	FT_CHECK(fi_endpoint(r->domain, r->info, &r->ep, NULL));
	if (r->eq)
		FT_CHECK(fi_ep_bind(r->ep, &r->eq->fid, 0));
	FT_CHECK(fi_ep_bind(r->ep, &r->av->fid, 0));
	FT_CHECK(fi_ep_bind(r->ep, &r->cq->fid,
			    FI_TRANSMIT | FI_RECV |
				    (attr->cntr_only ? FI_SELECTIVE_COMPLETION
						     : 0)));
	if (attr->cntr_only) {
		FT_CHECK(fi_ep_bind(r->ep, &r->cntr->fid, FI_SEND));
		FT_CHECK(fi_ep_bind(r->ep, &r->rcntr->fid, FI_RECV));
	}
	if (attr->cntr && !attr->cntr_only)
		FT_CHECK(fi_ep_bind(r->ep, &r->cntr->fid,
				    FI_SEND | FI_WRITE | FI_READ));
	if (attr->cntr && !attr->cntr_only && (attr->caps & FI_RMA_EVENT)) {
		FT_CHECK(fi_cntr_open(r->domain, &cntr_attr, &r->rcntr, NULL));
		FT_CHECK(fi_ep_bind(r->ep, &r->rcntr->fid, FI_REMOTE_WRITE));
	}
	FT_CHECK(fi_enable(r->ep));
	return 0;
}

int ft_open(struct ft_res *r, const char *prov, uint64_t caps)
{
	struct ft_open_attr attr = {
		.prov = prov,
		.caps = caps,
		.mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
		.eq_size = 64,
		.cq_attr = {.format = FI_CQ_FORMAT_DATA, .size = 4096},
		.cntr = true,
	};

	return ft_open_attr(r, &attr);
}

/* fi_close(@fid) unless NULL; the first error into *@ret */
static void ft_close_one(struct fid *fid, int *ret)
{
	int err;

	if (!fid)
		return;
	err = fi_close(fid);
	if (err && !*ret)
		*ret = err;
}

int ft_close(struct ft_res *r)
{
	int ret = 0;

	ft_close_one(r->ep ? &r->ep->fid : NULL, &ret);
	ft_close_one(r->av ? &r->av->fid : NULL, &ret);
	ft_close_one(r->cntr ? &r->cntr->fid : NULL, &ret);
	ft_close_one(r->rcntr ? &r->rcntr->fid : NULL, &ret);
	ft_close_one(r->cq ? &r->cq->fid : NULL, &ret);
	ft_close_one(r->eq ? &r->eq->fid : NULL, &ret);
	ft_close_one(r->domain ? &r->domain->fid : NULL, &ret);
	ft_close_one(r->fabric ? &r->fabric->fid : NULL, &ret);
	fi_freeinfo(r->info);
	memset(r, 0, sizeof(*r));
	return ret;
}

int ft_exchange(struct ft_res *r, struct ft_shared *sh, int rank, int n,
		int timeout_s)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)timeout_s * 1000;
	size_t len = FT_NAME_LEN;
	int i;

	FT_CHECK(fi_getname(&r->ep->fid, sh->names[rank], &len));
	sh->name_len = len;
	atomic_fetch_add(&sh->ready, 1);
	while (atomic_load(&sh->ready) < n) {
		if (atomic_load(&sh->failed))
			return ft_err("peer failed during setup", -FI_EIO);
		if (ft_now_ms() > deadline)
			return ft_err("address exchange", -FI_ETIMEDOUT);
		usleep(100);
	}
	for (i = 0; i < n; i++) {
		fi_addr_t a;

		if (fi_av_insert(r->av, sh->names[i], 1, &a, 0, NULL) != 1 ||
		    a != (fi_addr_t)i)
			return ft_err("fi_av_insert", -FI_EINVAL);
	}
	return 0;
}

int ft_join(struct ft_res *r, struct fid_av_set *set, struct fid_mc **mc)
{
	struct fi_eq_entry entry;
	uint32_t event;
	ssize_t n;

	FT_CHECK(fi_join_collective(r->ep, FI_ADDR_NOTAVAIL, set, 0, mc, NULL));
	n = fi_eq_sread(r->eq, &event, &entry, sizeof(entry), 10000, 0);
	if (n != sizeof(entry) || event != FI_JOIN_COMPLETE ||
	    entry.fid != &(*mc)->fid)
		return ft_err("join completion", n < 0 ? (int)n : -FI_EOTHER);
	return 0;
}

int ft_wait_comp(struct ft_res *r, struct fi_cq_data_entry *comp,
		 int timeout_ms)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)timeout_ms;
	struct fi_cq_err_entry err;
	uint64_t info = 0;
	unsigned polls = 0;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(r->cq, comp, 1);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			err.err_data = &info;
			err.err_data_size = sizeof(info);
			fi_cq_readerr(r->cq, &err, 0);
			fprintf(stderr,
				"%s[%d]: error completion: %s (prov_errno %d, "
				"err_data 0x%llx)\n",
				ft_prog, (int)getpid(), fi_strerror(err.err),
				err.prov_errno, (unsigned long long)info);
			return -err.err;
		}
		if (n != -FI_EAGAIN)
			return ft_err("fi_cq_read", (int)n);
		if (!(++polls & 1023) && ft_now_ms() > deadline)
			return ft_err("completion", -FI_ETIMEDOUT);
	}
}

int ft_join_all(struct ft_res *r, int n, struct fid_av_set **set,
		struct fid_mc **mc)
{
	struct fi_av_set_attr attr = {0};

	attr.count = (size_t)n;
	attr.start_addr = 0;
	attr.end_addr = (fi_addr_t)n - 1;
	attr.stride = 1;
	FT_CHECK(fi_av_set(r->av, &attr, set, NULL));
	return ft_join(r, *set, mc);
}

uint64_t ft_rma_addr(const struct ft_res *r, const void *buf,
		     const void *region)
{
	if (r->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uint64_t)(uintptr_t)buf;
	return (uint64_t)((const char *)buf - (const char *)region);
}
