/*
 * soak_barrier - the barrier soak of make soak (gba(7), TESTS): -n
 * processes (forked) run barriers (fi_barrier on the collective of all
 * of them) for -D seconds or -I barriers, whichever ends first (0: no
 * bound), with a random delay of 0..-r us before one arrival in four.
 *
 * Early release: before arriving at barrier k a member stores k in its
 * slot of a shared array; once released from barrier k every slot must
 * be >= k, else a member left barrier k before everybody arrived.  Early
 * releases are counted (the run goes on), not only the first.
 *
 * Output (rank 0), one line:
 *   soak_barrier: 8 processes, 1000000 barriers, 0 early releases,
 *                 95.1 s, 95.1 us per barrier
 * Exit status 0 when every member did every barrier and nobody was
 * released early; 1 otherwise; 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gba_ft_common.h"
#include "soak_run.h"

struct soak_barrier_shared {
	struct ft_shared hdr; /* first: names */
	struct soak_stop stop;
	atomic_long slot[FT_MAX_PROCS];
	atomic_long early;
};

/* Members whose slot is still below @k: each is an early release. */
static long count_early(struct soak_barrier_shared *sh, int n, int rank, long k)
{
	long early = 0, v;
	int i;

	for (i = 0; i < n; i++) {
		v = atomic_load(&sh->slot[i]);
		if (v >= k)
			continue;
		if (!atomic_load(&sh->early))
			fprintf(stderr,
				"soak_barrier[%d]: released from barrier %ld "
				"while member %d had only reached %ld\n",
				rank, k, i, v);
		early++;
	}
	return early;
}

static int soak_barrier_child(int rank, void *shared, const struct ft_opts *o)
{
	struct soak_barrier_shared *sh = shared;
	uint64_t end_ms = 0;
	struct fi_cq_data_entry comp;
	struct fid_av_set *set;
	struct fid_mc *mc;
	struct ft_res r;
	double t0, s;
	long k, early;
	int ret;

	srand((unsigned)getpid());
	ret = ft_open(&r, o->prov, FI_COLLECTIVE);
	if (!ret)
		ret = ft_exchange(&r, &sh->hdr, rank, o->nprocs, o->timeout_s);
	if (!ret)
		ret = ft_join_all(&r, o->nprocs, &set, &mc);
	if (ret)
		return ret;
	t0 = ft_now_us();
	if (o->duration_s)
		end_ms = ft_now_ms() + (uint64_t)o->duration_s * 1000;
	for (k = 1;; k++) {
		if (o->delay_us && !(rand() & 3))
			usleep((useconds_t)(rand() % (o->delay_us + 1)));
		atomic_store(&sh->slot[rank], k);
		FT_CHECK(fi_barrier(r.ep, fi_mc_addr(mc), &sh->slot[rank]));
		ret = ft_wait_comp(&r, &comp, o->timeout_s * 1000);
		if (ret)
			return ret;
		if (comp.op_context != &sh->slot[rank] ||
		    !(comp.flags & FI_COLLECTIVE))
			return ft_err("barrier completion context/flags",
				      -FI_EOTHER);
		early = count_early(sh, o->nprocs, rank, k);
		if (early)
			atomic_fetch_add(&sh->early, early);
		soak_ready(rank, k);
		if (soak_stop_after(&sh->stop, rank, k, o->iters, end_ms))
			break;
	}
	s = (ft_now_us() - t0) / 1e6;
	FT_CHECK(fi_close(&mc->fid));
	FT_CHECK(fi_close(&set->fid));
	ft_close(&r);
	if (rank == 0)
		printf("soak_barrier: %d processes, %ld barriers, %ld early "
		       "releases, %.1f s, %.1f us per barrier\n",
		       o->nprocs, k, atomic_load(&sh->early), s, s * 1e6 / k);
	/* a member that counted an early release fails the run */
	return atomic_load(&sh->early) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {.prov = "gba",
			    .iters = 0,
			    .nprocs = 8,
			    .timeout_s = 3600,
			    .delay_us = 50};

	ft_parse(argc, argv, &o, "soak_barrier",
		 "  -r <us>         random delay bound before one arrival in "
		 "four (default 50)\n"
		 "  (-I and -D bound the run; at least one is needed)\n");
	if (!o.iters && !o.duration_s) {
		fprintf(stderr, "soak_barrier: give -I or -D\n");
		return 2;
	}
	return ft_fork_run(&o, sizeof(struct soak_barrier_shared),
			   soak_barrier_child);
}
