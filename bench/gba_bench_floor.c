/*
 * gba_bench_floor - the floor under the GBA barrier on the emulated
 * device: a counter-and-release barrier in plain shared memory, the
 * pattern of the emulated switch with nothing around it.  Each member
 * adds one to an arrival counter on a shared cache line; the arrival that
 * completes the count stores the sequence number into every member's
 * release flag (one cache line per member); members spin on their own
 * flag, yielding the CPU the way the provider's waiting does: after a
 * spin budget when the members can all run at once; when there are more
 * members than CPUs, at once unless every member still to arrive last
 * arrived on another CPU (each member notes where it arrives in its flag
 * line, as gba_group_should_yield reads it), and then not for up to 25 us
 * per member per CPU.
 *
 * The -n members are forked processes sharing an anonymous mapping.
 * Rounds alternate between pinned (member i on the i-th allowed CPU,
 * modulo their number: sched_setaffinity) and unpinned (every allowed
 * CPU), in the same processes, so that both share the machine's
 * conditions; a round's figure is the slowest member's mean, the
 * reported figure the median round.  bench/run_bench.sh prints it next
 * to the provider's fi_barrier and Open MPI's MPI_Barrier.
 *
 * Options: -n members (default 2, at most 64), -I barriers per round
 *          (default 20000), -r rounds of each kind (default 5).
 * Output (one line per kind):
 *   floor np=N pin=0 iters=I floor_us=X
 *   floor np=N pin=1 iters=I floor_us=X
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gba_bench_stats.h"

#define MAX_MEMBERS 64
#define LINE 64
/* Unreleased polls before yielding when members <= CPUs (the provider's
 * spin budget). */
#define SPIN_POLLS 128
/* Longest a member keeps its CPU, per member per CPU (more members than
 * CPUs). */
#define KEEP_NS_PER_MEMBER 25000

struct floor_shm {
	/* the arrival counter: the only line every member writes */
	_Atomic uint64_t count __attribute__((aligned(LINE)));
	/* release flags, one line each; where: (cpu << 32) | last arrival */
	struct {
		_Atomic uint64_t seq;
		_Atomic uint64_t where;
	} __attribute__((aligned(LINE))) flag[MAX_MEMBERS];
	/* each member's mean of the last round, in microseconds */
	double mean_us[MAX_MEMBERS] __attribute__((aligned(LINE)));
};

struct floor_member {
	struct floor_shm *shm;
	int id, n;
	uint64_t seq;
	uint64_t keep_ns;   /* more members than CPUs: longest keep */
	cpu_set_t all;	    /* the CPUs allowed at start */
	int cpu;	    /* the one pinned rounds use */
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline bool floor_released(struct floor_member *fm, uint64_t seq)
{
	return (int64_t)(atomic_load_explicit(&fm->shm->flag[fm->id].seq,
					      memory_order_acquire) -
			 seq) >= 0;
}

/* More members than CPUs: may a member still to arrive need our CPU? */
static bool floor_needed_here(struct floor_member *fm, uint64_t seq)
{
	uint64_t cpu = (uint32_t)sched_getcpu(), w;
	int m;

	for (m = 0; m < fm->n; m++) {
		w = atomic_load_explicit(&fm->shm->flag[m].where,
					 memory_order_relaxed);
		if ((uint32_t)w != (uint32_t)seq && w >> 32 == cpu)
			return true;
	}
	return false;
}

/* One barrier: arrive (one atomic add), release if last, wait. */
static void floor_barrier(struct floor_member *fm)
{
	struct floor_shm *shm = fm->shm;
	uint64_t seq = ++fm->seq;
	unsigned polls = 0;
	double t0;
	int m;

	if (fm->keep_ns)	/* where we arrive: (cpu << 32) | seq */
		atomic_store_explicit(&shm->flag[fm->id].where,
				      (uint64_t)(uint32_t)sched_getcpu() << 32 |
					      (uint32_t)seq,
				      memory_order_relaxed);
	if (atomic_fetch_add_explicit(&shm->count, 1, memory_order_acq_rel) +
		    1 == seq * fm->n) {
		for (m = 0; m < fm->n; m++)
			atomic_store_explicit(&shm->flag[m].seq, seq,
					      memory_order_release);
		return;
	}
	while (!floor_released(fm, seq)) {
		if (!fm->keep_ns) {
			if (++polls > SPIN_POLLS)
				sched_yield();
			else
				cpu_relax();
		} else if (floor_needed_here(fm, seq)) {
			sched_yield();
		} else {
			t0 = now_us();
			while (!floor_released(fm, seq) &&
			       now_us() - t0 < fm->keep_ns / 1e3)
				cpu_relax();
			if (!floor_released(fm, seq))
				sched_yield();
		}
	}
}

/* Pin the caller to its CPU (@pin) or let it run on every allowed one. */
static void floor_pin(struct floor_member *fm, int pin)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(fm->cpu, &one);
	if (sched_setaffinity(0, sizeof(cpu_set_t), pin ? &one : &fm->all))
		perror("sched_setaffinity");
}

/* The slowest member's mean of a timed round of @iters barriers. */
static double floor_round(struct floor_member *fm, int iters, int pin)
{
	double t0, slowest = 0;
	int i;

	floor_pin(fm, pin);
	floor_barrier(fm);
	t0 = now_us();
	for (i = 0; i < iters; i++)
		floor_barrier(fm);
	fm->shm->mean_us[fm->id] = (now_us() - t0) / iters;
	floor_barrier(fm);
	for (i = 0; i < fm->n; i++)
		if (fm->shm->mean_us[i] > slowest)
			slowest = fm->shm->mean_us[i];
	floor_barrier(fm);	/* nobody overwrites a mean still read */
	return slowest;
}

/* The @index-th CPU of @set, modulo the number of CPUs in it. */
static int floor_cpu(const cpu_set_t *set, int index)
{
	int count = CPU_COUNT(set), cpu, k = 0;

	index %= count;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, set) && k++ == index)
			return cpu;
	return 0;
}

/* Member @id: warm up, then -r rounds of each kind; the first prints. */
static void floor_member_run(struct floor_shm *shm, int id, int n, int iters,
			     int rounds)
{
	struct floor_member fm = {.shm = shm, .id = id, .n = n};
	double *us[2];
	int r, pin;

	sched_getaffinity(0, sizeof(fm.all), &fm.all);
	fm.cpu = floor_cpu(&fm.all, id);
	if (n > CPU_COUNT(&fm.all))
		fm.keep_ns = (uint64_t)(n + CPU_COUNT(&fm.all) - 1) /
			     CPU_COUNT(&fm.all) * KEEP_NS_PER_MEMBER;
	us[0] = calloc(rounds, sizeof(double));
	us[1] = calloc(rounds, sizeof(double));
	floor_round(&fm, iters / 10 + 1, 0);
	floor_round(&fm, iters / 10 + 1, 1);
	for (r = 0; r < rounds; r++)
		for (pin = 0; pin < 2; pin++)
			us[pin][r] = floor_round(&fm, iters, pin);
	if (id == 0)
		for (pin = 0; pin < 2; pin++)
			printf("floor np=%d pin=%d iters=%d floor_us=%.3f\n", n,
			       pin, iters, gba_bench_median(us[pin], rounds));
	free(us[0]);
	free(us[1]);
}

int main(int argc, char **argv)
{
	int n = 2, iters = 20000, rounds = 5, op, i, status, ret = 0;
	struct floor_shm *shm;
	pid_t pids[MAX_MEMBERS];

	while ((op = getopt(argc, argv, "n:I:r:h")) != -1) {
		switch (op) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'I':
			iters = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n members] [-I iters] "
				"[-r rounds]\n", argv[0]);
			return op == 'h' ? 0 : 2;
		}
	}
	if (n < 1 || n > MAX_MEMBERS || iters <= 0 || rounds <= 0) {
		fprintf(stderr, "-n must be 1..%d, -I and -r positive\n",
			MAX_MEMBERS);
		return 2;
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			while (i-- > 0)	/* they would wait for it forever */
				kill(pids[i], SIGKILL);
			return 1;
		}
		if (!pids[i]) {
			floor_member_run(shm, i, n, iters, rounds);
			fflush(stdout);
			_exit(0);
		}
	}
	for (i = 0; i < n; i++)
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			ret = 1;
	return ret;
}
