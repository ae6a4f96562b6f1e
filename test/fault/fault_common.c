/* Common part of the fault-injection trials; see fault_common.h. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba_fault.h>
#include <gba/gba_job.h>

#include "fault_common.h"

struct fault_opts fault_opts = {.nprocs = 4, .timeout_s = 60, .wait_ms = 2000};

uint64_t fault_now_ms(void)
{
	return (uint64_t)(fault_now_us() / 1000);
}

double fault_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

size_t fault_msg_bytes(uint32_t iter)
{
	return offsetof(struct fault_msg, data) +
	       (iter % 2 ? FAULT_MSG_SMALL : FAULT_MSG_MAX);
}

static uint64_t checksum(const struct fault_msg *m)
{
	uint64_t h =
		0xcbf29ce484222325ULL ^ m->rank ^ ((uint64_t)m->iter << 32);
	size_t i,
		n = fault_msg_bytes(m->iter) - offsetof(struct fault_msg, data);

	for (i = 0; i < n; i++)
		h = (h ^ m->data[i]) * 0x100000001b3ULL;
	return h;
}

void fault_msg_fill(struct fault_msg *m, uint32_t rank, uint32_t iter)
{
	size_t i, n = fault_msg_bytes(iter) - offsetof(struct fault_msg, data);

	m->rank = rank;
	m->iter = iter;
	for (i = 0; i < n; i++)
		m->data[i] = (uint8_t)(rank * 31 + iter * 7 + i);
	m->sum = checksum(m);
}

bool fault_msg_valid(const struct fault_msg *m, size_t len, uint32_t iter,
		     int n, int *from)
{
	static struct fault_msg want;

	if (len < offsetof(struct fault_msg, data) || m->iter != iter ||
	    len != fault_msg_bytes(iter) || m->rank >= (uint32_t)n)
		return false;
	fault_msg_fill(&want, m->rank, m->iter);
	if (m->sum != checksum(m) || memcmp(m, &want, len))
		return false;
	*from = (int)m->rank;
	return true;
}

void fault_detected(struct fault_shared *sh, int rank, bool timed_out)
{
	atomic_store(&sh->timed_out[rank], timed_out);
	atomic_store(&sh->detect_us[rank], (int64_t)fault_now_us());
}

/*
 * This member counted: stay (progressing) until the other survivors of
 * @n counted too, up to FAULT_LOST_WAIT_MS: a message still unread may
 * be in this process's memory (a UCX chunk).
 */
static void fault_linger(struct fault_shared *sh, int n, void (*poll)(void *),
			 void *arg)
{
	uint64_t deadline = fault_now_ms() + FAULT_LOST_WAIT_MS;

	atomic_fetch_add(&sh->counted, 1);
	while (atomic_load(&sh->counted) < n - 1 && fault_now_ms() < deadline)
		poll(arg);
}

void fault_finish(struct fault_shared *sh, int n, void (*poll)(void *),
		  void *arg)
{
	uint64_t deadline = fault_now_ms() + (uint64_t)fault_opts.wait_ms +
			    FAULT_LOST_WAIT_MS;

	atomic_fetch_add(&sh->finished, 1);
	while (atomic_load(&sh->finished) < n && fault_now_ms() < deadline)
		poll(arg);
}

void fault_count_lost(struct fault_shared *sh, int rank, int n, uint32_t iter,
		      const bool *got, void (*poll)(void *), void *arg)
{
	uint64_t deadline = fault_now_ms() + FAULT_LOST_WAIT_MS;
	int s, missing;

	do {
		missing = 0;
		for (s = 0; s < n; s++)
			if (s != rank && !got[s] &&
			    atomic_load(&sh->sent[s]) >= (int64_t)iter)
				missing++;
		if (!missing)
			break;
		poll(arg);
	} while (fault_now_ms() < deadline);
	if (!missing) {
		fault_linger(sh, n, poll, arg);
		return;
	}
	for (s = 0; s < n && fault_opts.verbose; s++)
		if (s != rank && !got[s] &&
		    atomic_load(&sh->sent[s]) >= (int64_t)iter)
			fprintf(stderr,
				"fault[%d]: lost the message of %d, "
				"iteration %u\n",
				rank, s, iter);
	for (s = 0; s < n; s++)
		if (s != rank && !got[s] &&
		    atomic_load(&sh->sent[s]) >= (int64_t)iter)
			atomic_fetch_add(&sh->lost[s], 1);
	fault_linger(sh, n, poll, arg);
}

int fault_publish(struct fault_shared *sh, int rank, int n, const void *addr,
		  size_t len)
{
	uint64_t deadline =
		fault_now_ms() + (uint64_t)fault_opts.timeout_s * 1000;

	if (len > FAULT_ADDR_MAX)
		return -1;
	memcpy(sh->addr[rank], addr, len);
	sh->addr_len[rank] = len;
	atomic_fetch_add(&sh->published, 1);
	while (atomic_load(&sh->published) < n) {
		if (fault_now_ms() > deadline)
			return -1;
		usleep(100);
	}
	return 0;
}

/* Queue and service files of this user and job that no process holds. */
static int count_leftovers(void)
{
	char fab[64], svc[64], path[300];
	struct dirent *de;
	int fd, n = 0;
	DIR *dir;

	snprintf(fab, sizeof(fab), "gba-fab-%u-%016" PRIx64 "-",
		 (unsigned)getuid(), gba_job_id());
	snprintf(svc, sizeof(svc), "gba-svc-%u-%016" PRIx64 "-",
		 (unsigned)getuid(), gba_job_id());
	dir = opendir("/dev/shm");
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, fab, strlen(fab)) &&
		    strncmp(de->d_name, svc, strlen(svc)))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB)) {
			n++;
			if (fault_opts.verbose)
				fprintf(stderr, "fault: leftover %s\n", path);
		}
		close(fd);
	}
	closedir(dir);
	return n;
}

/* @stack's reap in a new process: 0 or -1. */
static int reap_by_new_endpoint(const struct fault_stack *stack)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(stack->reap() ? 1 : 0);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			       !WEXITSTATUS(status)
		       ? 0
		       : -1;
}

/*
 * Fork @n members of @stack (GBA_JOB=@job when not NULL) running @iters
 * iterations into @pids; the one of rank @victim (-1: none) with
 * GBA_FAULT_POINT=@fault (NULL: none).  0 or -1.
 */
static int start_members(const struct fault_stack *stack,
			 struct fault_shared *sh, int n, pid_t *pids,
			 const char *job, uint32_t iters, int victim,
			 const char *fault)
{
	int i;

	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return -1;
		if (pids[i])
			continue;
		if (job)
			setenv("GBA_JOB", job, 1);
		if (i == victim && fault)
			setenv("GBA_FAULT_POINT", fault, 1);
		_exit(stack->member(i, n, sh, iters));
	}
	return 0;
}

static struct fault_shared *shared_map(void)
{
	struct fault_shared *sh =
		mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return sh == MAP_FAILED ? NULL : sh;
}

/*
 * A new job after the trial: 3 members, @iters fault-free iterations,
 * within @hang_ms.  0 when all completed, 1 otherwise.  Its members are
 * verbose (-v): a fault-free job has nothing to say unless it fails, and
 * then says why (which error, which deadline).
 */
static int after_job(const struct fault_stack *stack, unsigned seed,
		     uint32_t iters, long hang_ms)
{
	uint64_t end = fault_now_ms() + (uint64_t)hang_ms;
	struct fault_shared *sh = shared_map();
	int i, status, bad = 0;
	bool verbose;
	pid_t pids[3];
	char job[32];

	if (!sh)
		return 1;
	snprintf(job, sizeof(job), "fault-after-%u", seed);
	verbose = fault_opts.verbose;
	fault_opts.verbose = true; /* for the members forked here */
	if (start_members(stack, sh, 3, pids, job, iters, -1, NULL))
		bad = 1;
	fault_opts.verbose = verbose;
	for (i = 0; i < 3 && !bad; i++) {
		while (waitpid(pids[i], &status, WNOHANG) == 0 &&
		       fault_now_ms() < end)
			usleep(1000);
		if (fault_now_ms() >= end) {
			fprintf(stderr,
				"fault: the job after: member %d still "
				"running after %ld ms\n",
				i, hang_ms);
			bad = 1;
			break;
		}
		bad = !WIFEXITED(status) || WEXITSTATUS(status);
		if (bad)
			fprintf(stderr,
				"fault: the job after: member %d ended "
				"with status 0x%x\n",
				i, status);
	}
	for (i = 0; i < 3; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	munmap(sh, sizeof(*sh));
	return bad;
}

/*
 * Wait for the victim @pid to reach its fault point (die or stop), while
 * the survivors run, up to @limit_ms.  Returns the time it was seen, 0 if
 * it never was (it exited, or the time ran out).
 */
static double wait_fault(pid_t pid, long limit_ms)
{
	double start = fault_now_us();
	int status;

	while (fault_now_us() - start < limit_ms * 1000.0) {
		pid_t got = waitpid(pid, &status, WNOHANG | WUNTRACED);

		if (got == pid)
			return WIFSIGNALED(status) || WIFSTOPPED(status)
				       ? fault_now_us()
				       : 0;
		usleep(100);
	}
	return 0;
}

/* Has a survivor (not @victim) of @n ended its run? */
static bool any_detected(struct fault_shared *sh, int n, int victim)
{
	int i;

	for (i = 0; i < n; i++)
		if (i != victim && atomic_load(&sh->detect_us[i]))
			return true;
	return false;
}

/* Point named @name of @stack (-1: "time"; -2: none such). */
static int point_of(const struct fault_stack *stack, const char *name)
{
	int p;

	if (!strcmp(name, "time"))
		return -1;
	for (p = 0; p < GBA_FAULT_NPOINTS; p++)
		if (!strcmp(name, gba_fault_name(p)) &&
		    (stack->points & (1u << p)))
			return p;
	return -2;
}

struct trial {
	int victim, stop, point;
	long delay; /* ms, or the pass */
	long hang_ms;
	pid_t pids[FAULT_MAX_PROCS];
	double fault_us;
	/* results */
	int survivors, detected, hangs, timeouts;
	uint32_t lost, dropped, bad;
	double worst_us;
	int64_t iters;
};

/* Reap the survivors as they end, kill the ones that hang. */
static void watch_survivors(struct trial *t, struct fault_shared *sh)
{
	int i, n = fault_opts.nprocs;
	bool alive[FAULT_MAX_PROCS], killed = false;

	for (i = 0; i < n; i++)
		alive[i] = i != t->victim;
	for (;;) {
		int status, left = 0;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		for (i = 0; i < n; i++) {
			if (pid == t->pids[i] && alive[i]) {
				alive[i] = false;
				t->survivors++;
				if (WIFEXITED(status) &&
				    WEXITSTATUS(status) == FAULT_DETECTED)
					t->detected++;
			}
			left += alive[i];
		}
		if (!left)
			break;
		if (pid > 0)
			continue;
		/* a launcher kills the stopped member once the job failed */
		if (t->stop && !killed && any_detected(sh, n, t->victim)) {
			kill(t->pids[t->victim], SIGKILL);
			killed = true;
		}
		if (t->fault_us &&
		    fault_now_us() - t->fault_us > t->hang_ms * 1000.0) {
			for (i = 0; i < n; i++)
				if (alive[i]) {
					t->hangs++;
					t->survivors++;
					kill(t->pids[i], SIGKILL);
					waitpid(t->pids[i], NULL, 0);
					alive[i] = false;
				}
			break;
		}
		if (!t->fault_us) /* the fault never came: stop the trial */
			for (i = 0; i < n; i++)
				if (alive[i])
					kill(t->pids[i], SIGKILL);
		usleep(1000);
	}
	kill(t->pids[t->victim], SIGKILL);
	waitpid(t->pids[t->victim], NULL, 0);
}

/* Sum up what the survivors noted. */
static void collect(struct trial *t, struct fault_shared *sh,
		    const struct fault_stack *stack)
{
	int i;

	for (i = 0; i < fault_opts.nprocs; i++) {
		int64_t us = atomic_load(&sh->detect_us[i]);

		if (i == t->victim) {
			if (stack->delivers_dead)
				t->lost += atomic_load(&sh->lost[i]);
			else
				t->dropped += atomic_load(&sh->lost[i]);
			continue;
		}
		t->timeouts += us && atomic_load(&sh->timed_out[i]);
		t->lost += atomic_load(&sh->lost[i]);
		t->bad += atomic_load(&sh->bad[i]);
		if (us && t->fault_us && us - t->fault_us > t->worst_us)
			t->worst_us = (double)us - t->fault_us;
		if (atomic_load(&sh->iters[i]) > t->iters)
			t->iters = atomic_load(&sh->iters[i]);
	}
}

int fault_main(int argc, char **argv, const struct fault_stack *stack)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	struct trial t = {.stop = -1, .point = -1, .hang_ms = 10000};
	long delay_max = 200, passes_max = 40;
	uint32_t after_iters = 20;
	struct fault_shared *sh;
	int c, i, leftovers, after = 0;
	char fault[64], job[32], key[40];

	while ((c = getopt(argc, argv, "n:T:s:P:d:N:k:w:W:a:vh")) != -1) {
		switch (c) {
		case 'n':
			fault_opts.nprocs = atoi(optarg);
			break;
		case 'T':
			fault_opts.timeout_s = atoi(optarg);
			break;
		case 's':
			seed = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'P':
			t.point = point_of(stack, optarg);
			break;
		case 'd':
			delay_max = atol(optarg);
			break;
		case 'N':
			passes_max = atol(optarg);
			break;
		case 'k':
			t.stop = !strcmp(optarg, "stop")     ? 1
				 : !strcmp(optarg, "kill")   ? 0
				 : !strcmp(optarg, "random") ? -1
							     : -2;
			break;
		case 'w':
			fault_opts.wait_ms = atoi(optarg);
			break;
		case 'W':
			t.hang_ms = atol(optarg);
			break;
		case 'a':
			after_iters = (uint32_t)atol(optarg);
			break;
		case 'v':
			fault_opts.verbose = true;
			break;
		default:
			goto usage;
		}
	}
	if (fault_opts.nprocs < 3 || fault_opts.nprocs > FAULT_MAX_PROCS ||
	    t.stop == -2 || t.point == -2 || delay_max < 0 || passes_max < 1 ||
	    fault_opts.wait_ms <= 0 || t.hang_ms <= fault_opts.wait_ms)
		goto usage;
	/* the trial's own job (key "gba:fault-<seed>"), for its members
	 * and count_leftovers */
	snprintf(job, sizeof(job), "fault-%u", seed);
	snprintf(key, sizeof(key), "gba:%s", job);
	if (setenv("GBA_JOB", job, 1) || strcmp(gba_job_key(), key)) {
		fprintf(stderr, "fault: job %s, not %s\n", gba_job_key(), key);
		return 1;
	}
	srand(seed);
	t.victim = rand() % fault_opts.nprocs;
	t.delay = t.point < 0 ? (delay_max ? rand() % (delay_max + 1) : 0)
			      : 1 + rand() % passes_max;
	if (t.stop < 0)
		t.stop = rand() % 2;
	snprintf(fault, sizeof(fault), "%s:%ld%s",
		 t.point < 0 ? "" : gba_fault_name(t.point), t.delay,
		 t.stop ? ":stop" : "");

	sh = shared_map();
	if (!sh || start_members(stack, sh, fault_opts.nprocs, t.pids, NULL, 0,
				 t.victim, t.point < 0 ? NULL : fault))
		return 1;
	if (t.point < 0) {
		/* all in the loop, then the fault */
		for (i = 0; i < fault_opts.timeout_s * 1000 &&
			    atomic_load(&sh->go) < fault_opts.nprocs;
		     i++)
			usleep(1000);
		usleep((useconds_t)t.delay * 1000);
		t.fault_us = fault_now_us();
		kill(t.pids[t.victim], t.stop ? SIGSTOP : SIGKILL);
	} else {
		t.fault_us = wait_fault(t.pids[t.victim],
					fault_opts.timeout_s * 1000L);
	}
	watch_survivors(&t, sh);
	collect(&t, sh, stack);
	leftovers = reap_by_new_endpoint(stack) ? -1 : count_leftovers();
	if (after_iters)
		after = after_job(stack, seed, after_iters, t.hang_ms);
	printf("fault seed=%u stack=%s point=%s kind=%s victim=%d at=%ld "
	       "iters=%lld survivors=%d detected=%d detect_ms=%.1f "
	       "timeouts=%d hangs=%d lost=%u dropped=%u bad=%u leftovers=%d "
	       "after=%d%s\n",
	       seed, stack->name,
	       t.point < 0 ? "time" : gba_fault_name(t.point),
	       t.stop ? "stop" : "kill", t.victim, t.delay, (long long)t.iters,
	       t.survivors, t.detected, t.worst_us / 1000.0, t.timeouts,
	       t.hangs, t.lost, t.dropped, t.bad, leftovers, after,
	       t.fault_us ? "" : " NO-FAULT");
	return t.fault_us && t.detected == fault_opts.nprocs - 1 && !t.hangs &&
			       !t.lost && !t.bad && !leftovers && !after &&
			       (t.stop || !t.timeouts)
		       ? 0
		       : 1;
usage:
	fprintf(stderr,
		"usage: %s [-n members (3..%d)] [-T s] [-s seed] [-P time",
		argv[0], FAULT_MAX_PROCS);
	for (i = 0; i < GBA_FAULT_NPOINTS; i++)
		if (stack->points & (1u << i))
			fprintf(stderr, "|%s", gba_fault_name(i));
	fprintf(stderr, "] [-d max delay ms] [-N max passes] "
			"[-k kill|stop|random] [-w wait ms] [-W hang ms] "
			"[-a iterations after] [-v]\n");
	return 2;
}
