/*
 * fault_trial - one fault-injection trial (gba(7), FAILURE MODES): -n
 * members exchange checked messages, RMA writes and barriers in a loop;
 * one random member is killed (SIGKILL) or stopped (SIGSTOP): after a
 * random delay wherever it is (-P time), or at a chosen fault point
 * (include/gba/gba_fault.h: -P slot, chunk, rma, barrier or trigger),
 * the n-th time it passes it (n random, 1 to -N).  The program checks
 * what the survivors see:
 *
 *   detected  every survivor ends with an error completion (a dead
 *             member: the barrier's -FI_EIO from the device, a send's
 *             -FI_EPIPE...) or, for a stopped member, its own deadline
 *             (-w ms per wait) expiring; the time from the fault to that
 *             is reported (max over survivors).  A stopped member is then
 *             killed, as a launcher would once the job failed: what it
 *             held (a slot of a peer's queue) must not keep the messages
 *             of live members from the survivors;
 *   timeouts  survivors that ended by their own deadline, not by an error
 *             completion (for a killed member: the provider did not say,
 *             a failure);
 *   hangs     survivors still running -W ms after the fault (killed);
 *   lost      messages a live member sent in an iteration that a survivor
 *             did not receive, although the survivor waited for them;
 *   bad       messages whose checksum, sender or iteration is wrong;
 *   leftovers queue and service files of /dev/shm that no live process
 *             holds once a new endpoint was opened after the trial (the
 *             next endpoint reaps them);
 *   after     a new job (another GBA_JOB) of 3 members then runs -a
 *             fault-free iterations: 0 when it did, 1 when it failed.
 *
 * Each iteration a member sends one tagged message (rank, iteration,
 * checksum over 256 bytes in odd iterations, in one slot, or MSG_MAX
 * bytes in even ones, a medium message in consecutive slots) to every
 * other member, writes 64 bytes into its right neighbour's region (a
 * triggered fi_writemsg, which the member's own counter fires), starts a
 * barrier (fi_barrier) and waits for the n - 1 messages, the write and
 * the barrier.  Members
 * note in shared memory the last iteration whose messages they sent, so
 * that a survivor knows which messages it must still receive.
 *
 * Options (besides the common -p -n -T -v): -s seed (default: time),
 * -P point (default time), -d max delay before the fault in ms (-P time,
 * default 200), -N max passes of the point (default 40), -k
 * kill|stop|random (default random), -w per-wait deadline in ms (default
 * 2000), -W hang bound in ms after the fault (default 10000), -a
 * iterations of the job after the trial (default 20; 0: none).
 * Output, one line:
 *   fault seed=S point=P kind=kill victim=V at=D iters=I survivors=N
 *         detected=N detect_ms=X timeouts=0 hangs=0 lost=0 bad=0
 *         leftovers=0 after=0
 * (at: the delay in ms, or the pass of the point).  A fault at a point is
 * timed when this process sees the victim die or stop (it looks every
 * 100 us).  Exit status 0 when the fault happened, every survivor
 * detected it and hangs, lost, bad, leftovers and after are all 0 (and
 * timeouts, for a killed member); 1 otherwise; 2 usage.
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
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

#include "gba_ft_common.h"

#define MSG_BYTES 256	/* odd iterations: one slot */
#define MSG_MAX 6000	/* even ones: consecutive slots (a "chunk") */
#define RMA_BYTES 64
#define TAG_MSG 0x77
#define MAX_ITERS 1000000

struct fault_msg {
	uint32_t rank;
	uint32_t iter;
	uint64_t sum;
	uint8_t data[MSG_MAX];
};

/* The bytes of the message of iteration @iter. */
static size_t msg_bytes(uint32_t iter)
{
	return offsetof(struct fault_msg, data) +
	       (iter % 2 ? MSG_BYTES : MSG_MAX);
}

struct fault_shared {
	struct ft_shared ft;			 /* first: names */
	_Atomic int64_t sent[FT_MAX_PROCS];	 /* last iteration sent */
	_Atomic int64_t detect_us[FT_MAX_PROCS]; /* 0: not yet */
	_Atomic int result[FT_MAX_PROCS];	 /* error that ended it */
	_Atomic uint32_t lost[FT_MAX_PROCS];
	_Atomic uint32_t bad[FT_MAX_PROCS];
	_Atomic int64_t iters[FT_MAX_PROCS];
	uint64_t rma_key[FT_MAX_PROCS];
	uint64_t rma_addr[FT_MAX_PROCS];
	_Atomic int go;
};

static struct ft_opts opts;
static int wait_ms = 2000;

static uint64_t checksum(const struct fault_msg *m)
{
	uint64_t h =
		0xcbf29ce484222325ULL ^ m->rank ^ ((uint64_t)m->iter << 32);
	size_t i, n = msg_bytes(m->iter) - offsetof(struct fault_msg, data);

	for (i = 0; i < n; i++)
		h = (h ^ m->data[i]) * 0x100000001b3ULL;
	return h;
}

static void fill(struct fault_msg *m, uint32_t rank, uint32_t iter)
{
	size_t i, n = msg_bytes(iter) - offsetof(struct fault_msg, data);

	m->rank = rank;
	m->iter = iter;
	for (i = 0; i < n; i++)
		m->data[i] = (uint8_t)(rank * 31 + iter * 7 + i);
	m->sum = checksum(m);
}

/* Is @m, @len bytes received, what member m->rank sends in m->iter? */
static bool valid(const struct fault_msg *m, size_t len)
{
	static struct fault_msg want;

	if (len < offsetof(struct fault_msg, data) ||
	    len != msg_bytes(m->iter))
		return false;
	fill(&want, m->rank, m->iter);
	return m->sum == checksum(m) && !memcmp(m, &want, len);
}

struct member {
	struct ft_res r;
	struct fault_shared *sh;
	int rank, n;
	struct fid_mc *mc;
	struct fid_mr *mr;
	struct fid_cntr *go; /* fires the iteration's triggered write */
	struct fi_triggered_context tctx;
	uint8_t *region;
	struct fault_msg *rx, tx;
	bool *got;   /* this iteration, per sender */
	int pending; /* completions still expected this iteration */
};

/* Record the end of this member's run: error @err at this moment. */
static void detected(struct member *m, int err)
{
	atomic_store(&m->sh->result[m->rank], err);
	atomic_store(&m->sh->detect_us[m->rank], (int64_t)ft_now_us());
}

/* A completion of iteration @iter: count it, check a message. */
static void take(struct member *m, const struct fi_cq_data_entry *comp,
		 uint32_t iter)
{
	const struct fault_msg *msg = comp->op_context;

	m->pending--;
	if (!(comp->flags & FI_RECV))
		return;
	if (!valid(msg, comp->len) || msg->iter != iter || (int)msg->rank >= m->n ||
	    m->got[msg->rank])
		atomic_fetch_add(&m->sh->bad[m->rank], 1);
	else
		m->got[msg->rank] = true;
}

/*
 * Take the completions there are, without waiting.  Returns 0, or the
 * (negative) error of an error completion or of fi_cq_read.
 */
static int poll_cq(struct member *m, uint32_t iter)
{
	struct fi_cq_data_entry comp;
	struct fi_cq_err_entry err;
	ssize_t n;

	while ((n = fi_cq_read(m->r.cq, &comp, 1)) == 1)
		take(m, &comp, iter);
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(m->r.cq, &err, 0);
		if (opts.verbose)
			fprintf(stderr,
				"fault_trial[%d]: error completion: %s\n",
				m->rank, fi_strerror(err.err));
		return -(int)err.err;
	}
	return n == -FI_EAGAIN ? 0 : (int)n;
}

/* Until this iteration's completions are all in: 0, error, timeout. */
static int drain(struct member *m, uint32_t iter, uint64_t deadline_ms)
{
	int ret;

	while (m->pending > 0) {
		ret = poll_cq(m, iter);
		if (ret)
			return ret;
		if (ft_now_ms() > deadline_ms)
			return -FI_ETIMEDOUT;
	}
	return 0;
}

/*
 * After the fault: every member that posted all its messages of @iter
 * (sent[] >= @iter; they complete at once, inline) must have delivered
 * the one to this member, dead or alive since.  Wait up to a second for
 * them; count the ones that never come.
 */
static void count_lost(struct member *m, uint32_t iter)
{
	uint64_t deadline = ft_now_ms() + 1000;
	int s, missing;

	do {
		missing = 0;
		for (s = 0; s < m->n; s++)
			if (s != m->rank && !m->got[s] &&
			    atomic_load(&m->sh->sent[s]) >= (int64_t)iter)
				missing++;
		if (!missing)
			return;
		poll_cq(m, iter); /* errors again: still taking the rest */
	} while (ft_now_ms() < deadline);
	atomic_fetch_add(&m->sh->lost[m->rank], (uint32_t)missing);
}

/*
 * Queue this iteration's write of RMA_BYTES into member @dest's region
 * (fi_writemsg, FI_TRIGGER on m->go reaching @iter) and fire it.
 */
static int triggered_write(struct member *m, int dest, uint32_t iter)
{
	struct iovec iov = {m->tx.data, RMA_BYTES};
	struct fi_rma_iov rma = {m->sh->rma_addr[dest], RMA_BYTES,
				 m->sh->rma_key[dest]};
	struct fi_msg_rma msg = {.msg_iov = &iov,
				 .iov_count = 1,
				 .addr = (fi_addr_t)dest,
				 .rma_iov = &rma,
				 .rma_iov_count = 1,
				 .context = &m->tctx};
	int ret;

	m->tctx.event_type = FI_TRIGGER_THRESHOLD;
	m->tctx.trigger.threshold.cntr = m->go;
	m->tctx.trigger.threshold.threshold = iter;
	ret = (int)fi_writemsg(m->r.ep, &msg, FI_TRIGGER);
	return ret ? ret : fi_cntr_add(m->go, 1);
}

static int iteration(struct member *m, uint32_t iter)
{
	uint64_t deadline = ft_now_ms() + (uint64_t)wait_ms;
	int s, dest = (m->rank + 1) % m->n, ret;

	memset(m->got, 0, sizeof(bool) * (size_t)m->n);
	m->pending = 0;
	for (s = 0; s < m->n; s++) {
		if (s == m->rank)
			continue;
		ret = (int)fi_trecv(m->r.ep, &m->rx[s], sizeof(m->rx[s]), NULL,
				    (fi_addr_t)s, TAG_MSG, 0, &m->rx[s]);
		if (ret)
			return ret;
		m->pending++;
	}
	fill(&m->tx, (uint32_t)m->rank, iter);
	for (s = 0; s < m->n; s++) {
		if (s == m->rank)
			continue;
		while ((ret = (int)fi_tsend(m->r.ep, &m->tx, msg_bytes(iter),
					    NULL, (fi_addr_t)s, TAG_MSG,
					    &m->tx)) == -FI_EAGAIN) {
			ret = poll_cq(m, iter);
			if (!ret && ft_now_ms() > deadline)
				ret = -FI_ETIMEDOUT;
			if (ret)
				return ret;
		}
		if (ret)
			return ret;
		m->pending++;
	}
	atomic_store(&m->sh->sent[m->rank], iter);
	ret = triggered_write(m, dest, iter);
	if (ret)
		return ret;
	m->pending++;
	ret = (int)fi_barrier(m->r.ep, (fi_addr_t)m->mc, &m->mc);
	if (ret)
		return ret;
	m->pending++;
	return drain(m, iter, deadline);
}

/*
 * Member @rank of @n: open, join, then @iters iterations (0: until an
 * error).  Exit status 0 (all done), 10 (an error ended it: detected) or
 * 1 (setup failed).
 */
static int member_run(int rank, int n, void *shared, uint32_t iters)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fault_shared *sh = shared;
	struct member m = {.sh = sh, .rank = rank, .n = n};
	struct fid_av_set *set;
	uint32_t iter;
	int ret;

	m.rx = calloc((size_t)m.n, sizeof(*m.rx));
	m.got = calloc((size_t)m.n, sizeof(*m.got));
	m.region = calloc(1, RMA_BYTES);
	if (!m.rx || !m.got || !m.region)
		return 1;
	ret = ft_open(&m.r, opts.prov,
		      FI_MSG | FI_TAGGED | FI_RMA | FI_COLLECTIVE | FI_TRIGGER);
	if (!ret)
		ret = fi_cntr_open(m.r.domain, &cattr, &m.go, NULL);
	if (!ret)
		ret = fi_mr_reg(m.r.domain, m.region, RMA_BYTES,
				FI_REMOTE_WRITE, 0, 0, 0, &m.mr, NULL);
	if (ret)
		return 1;
	sh->rma_key[rank] = fi_mr_key(m.mr);
	sh->rma_addr[rank] = ft_rma_addr(&m.r, m.region, m.region);
	if (ft_exchange(&m.r, &sh->ft, rank, m.n, opts.timeout_s) ||
	    ft_join_all(&m.r, m.n, &set, &m.mc))
		return 1;
	atomic_fetch_add(&sh->go, 1);
	for (iter = 1; iter < (iters ? iters + 1 : MAX_ITERS); iter++) {
		ret = iteration(&m, iter);
		atomic_store(&sh->iters[rank], iter);
		if (ret) {
			detected(&m, ret);
			count_lost(&m, iter);
			return 10;
		}
	}
	return 0;
}

/* Queue and service files of this user that no live process holds. */
static int count_leftovers(void)
{
	char fab[32], svc[32], path[300];
	struct dirent *de;
	int fd, n = 0;
	DIR *dir;

	snprintf(fab, sizeof(fab), "gba-fab-%u-", (unsigned)getuid());
	snprintf(svc, sizeof(svc), "gba-svc-%u-", (unsigned)getuid());
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
			if (opts.verbose)
				fprintf(stderr, "fault_trial: leftover %s\n",
					path);
		}
		close(fd);
	}
	closedir(dir);
	return n;
}

/*
 * Fork @n members of a job (GBA_JOB=@job when not NULL) running @iters
 * iterations (0: until an error) into @pids; the one of rank @victim (-1:
 * none) with GBA_FAULT_POINT=@fault (NULL: none).  0 or -1.
 */
static int start_members(struct fault_shared *sh, int n, pid_t *pids,
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
		_exit(member_run(i, n, sh, iters));
	}
	return 0;
}

/*
 * A new job after the trial: 3 members, @iters fault-free iterations,
 * within the hang bound @hang_ms.  0 when all completed, 1 otherwise.
 */
static int after_job(unsigned seed, uint32_t iters, long hang_ms)
{
	struct fault_shared *sh;
	pid_t pids[3];
	char job[32];
	int i, status, bad = 0;
	uint64_t end = ft_now_ms() + (uint64_t)hang_ms;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	snprintf(job, sizeof(job), "fault-after-%u", seed);
	if (start_members(sh, 3, pids, job, iters, -1, NULL))
		bad = 1;
	for (i = 0; i < 3 && !bad; i++) {
		while (waitpid(pids[i], &status, WNOHANG) == 0 &&
		       ft_now_ms() < end)
			usleep(1000);
		if (ft_now_ms() >= end) {
			bad = 1;
			break;
		}
		bad = !WIFEXITED(status) || WEXITSTATUS(status);
	}
	for (i = 0; i < 3; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	munmap(sh, sizeof(*sh));
	return bad;
}

/* A new endpoint after the trial, in a new process: reaps leftovers. */
static int reap_by_new_endpoint(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		struct ft_res r;

		_exit(ft_open(&r, opts.prov, FI_MSG | FI_TAGGED) || ft_close(&r)
			      ? 1
			      : 0);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			       !WEXITSTATUS(status)
		       ? 0
		       : -1;
}

/*
 * Wait for the victim @pid to reach its fault point (die or stop), while
 * the survivors run, up to @limit_ms.  Returns the time it was seen, 0 if
 * it never was (it exited, or the time ran out).
 */
static double wait_fault(pid_t pid, long limit_ms)
{
	double start = ft_now_us();
	int status;

	while (ft_now_us() - start < limit_ms * 1000.0) {
		pid_t got = waitpid(pid, &status, WNOHANG | WUNTRACED);

		if (got == pid)
			return WIFSIGNALED(status) || WIFSTOPPED(status)
				       ? ft_now_us()
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

/* Point named @name (or -1 for "time", -2 none such). */
static int point_of(const char *name)
{
	int p;

	if (!strcmp(name, "time"))
		return -1;
	for (p = 0; p < GBA_FAULT_NPOINTS; p++)
		if (!strcmp(name, gba_fault_name(p)))
			return p;
	return -2;
}

int main(int argc, char **argv)
{
	int c, i, victim, stop = -1, survivors = 0, detected_n = 0, hangs = 0;
	int timeouts = 0, point = -1, after = 0;
	bool killed = false;
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	long delay_max = 200, hang_ms = 10000, delay, passes_max = 40;
	uint32_t lost = 0, bad = 0, after_iters = 20;
	pid_t pids[FT_MAX_PROCS];
	struct fault_shared *sh;
	double fault_us, worst = 0;
	int64_t iters = 0;
	bool alive[FT_MAX_PROCS];
	char fault[64];

	opts = (struct ft_opts){.prov = "gba", .nprocs = 4, .timeout_s = 60};
	ft_set_prog("fault_trial");
	while ((c = getopt(argc, argv, "p:n:T:s:P:d:N:k:w:W:a:vh")) != -1) {
		switch (c) {
		case 'p':
			opts.prov = optarg;
			break;
		case 'n':
			opts.nprocs = atoi(optarg);
			break;
		case 'T':
			opts.timeout_s = atoi(optarg);
			break;
		case 's':
			seed = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'P':
			point = point_of(optarg);
			break;
		case 'd':
			delay_max = atol(optarg);
			break;
		case 'N':
			passes_max = atol(optarg);
			break;
		case 'k':
			stop = !strcmp(optarg, "stop")	   ? 1
			       : !strcmp(optarg, "kill")   ? 0
			       : !strcmp(optarg, "random") ? -1
							   : -2;
			break;
		case 'w':
			wait_ms = atoi(optarg);
			break;
		case 'W':
			hang_ms = atol(optarg);
			break;
		case 'a':
			after_iters = (uint32_t)atol(optarg);
			break;
		case 'v':
			opts.verbose = true;
			break;
		default:
			goto usage;
		}
	}
	if (opts.nprocs < 3 || opts.nprocs > FT_MAX_PROCS || stop == -2 ||
	    point == -2 || delay_max < 0 || passes_max < 1 || wait_ms <= 0 ||
	    hang_ms <= wait_ms)
		goto usage;
	srand(seed);
	victim = rand() % opts.nprocs;
	delay = point < 0 ? (delay_max ? rand() % (delay_max + 1) : 0)
			  : 1 + rand() % passes_max;
	if (stop < 0)
		stop = rand() % 2;
	snprintf(fault, sizeof(fault), "%s:%ld%s",
		 point < 0 ? "" : gba_fault_name(point), delay,
		 stop ? ":stop" : "");

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	if (start_members(sh, opts.nprocs, pids, NULL, 0, victim,
			  point < 0 ? NULL : fault))
		return 1;
	for (i = 0; i < opts.nprocs; i++)
		alive[i] = true;
	if (point < 0) {
		/* all in the loop, then the fault */
		for (i = 0; i < opts.timeout_s * 1000 &&
			    atomic_load(&sh->go) < opts.nprocs;
		     i++)
			usleep(1000);
		usleep((useconds_t)delay * 1000);
		fault_us = ft_now_us();
		kill(pids[victim], stop ? SIGSTOP : SIGKILL);
	} else {
		fault_us = wait_fault(pids[victim], opts.timeout_s * 1000L);
	}
	alive[victim] = false;

	/* the survivors end by themselves within the bound, or hang */
	for (;;) {
		int status, left = 0;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		for (i = 0; i < opts.nprocs; i++) {
			if (pid == pids[i] && i != victim) {
				alive[i] = false;
				survivors++;
				if (WIFEXITED(status) &&
				    WEXITSTATUS(status) == 10)
					detected_n++;
			}
			left += alive[i];
		}
		if (!left)
			break;
		if (pid > 0)
			continue;
		if (stop && !killed && survivors < opts.nprocs - 1 &&
		    any_detected(sh, opts.nprocs, victim)) {
			kill(pids[victim], SIGKILL);
			killed = true;
		}
		if (fault_us && ft_now_us() - fault_us > hang_ms * 1000.0) {
			for (i = 0; i < opts.nprocs; i++)
				if (alive[i] && i != victim) {
					hangs++;
					survivors++;
					kill(pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
					alive[i] = false;
				}
			break;
		}
		if (!fault_us) /* the fault never came: stop the trial */
			for (i = 0; i < opts.nprocs; i++)
				if (alive[i])
					kill(pids[i], SIGKILL);
		usleep(1000);
	}
	kill(pids[victim], SIGKILL);
	waitpid(pids[victim], NULL, 0);

	for (i = 0; i < opts.nprocs; i++) {
		if (i == victim)
			continue;
		timeouts += atomic_load(&sh->result[i]) == -FI_ETIMEDOUT;
		lost += atomic_load(&sh->lost[i]);
		bad += atomic_load(&sh->bad[i]);
		if (atomic_load(&sh->detect_us[i]) &&
		    atomic_load(&sh->detect_us[i]) - fault_us > worst)
			worst = (double)atomic_load(&sh->detect_us[i]) -
				fault_us;
		if (atomic_load(&sh->iters[i]) > iters)
			iters = atomic_load(&sh->iters[i]);
	}
	c = reap_by_new_endpoint() ? -1 : count_leftovers();
	if (after_iters)
		after = after_job(seed, after_iters, hang_ms);
	printf("fault seed=%u point=%s kind=%s victim=%d at=%ld iters=%lld "
	       "survivors=%d detected=%d detect_ms=%.1f timeouts=%d hangs=%d "
	       "lost=%u bad=%u leftovers=%d after=%d%s\n",
	       seed, point < 0 ? "time" : gba_fault_name(point),
	       stop ? "stop" : "kill", victim, delay, (long long)iters,
	       survivors, detected_n, worst / 1000.0, timeouts, hangs, lost,
	       bad, c, after, fault_us ? "" : " NO-FAULT");
	return fault_us && detected_n == opts.nprocs - 1 && !hangs && !lost &&
			       !bad && !c && !after && (stop || !timeouts)
		       ? 0
		       : 1;
usage:
	fprintf(stderr,
		"usage: %s [-p prov] [-n members (3..%d)] [-T s] [-s seed] "
		"[-P time|slot|chunk|rma|barrier|trigger] [-d max delay ms] "
		"[-N max passes] [-k kill|stop|random] [-w wait ms] "
		"[-W hang ms] [-a iterations after] [-v]\n",
		argv[0], FT_MAX_PROCS);
	return 2;
}
