/*
 * Jobs (include/gba/gba_job.h): where the key comes from, and that two
 * jobs of one user never find, reach, join or attach each other's
 * endpoints, services, groups and regions, while one job's processes do;
 * a service held by one endpoint at a time and taken over from a dead
 * one; a queue seen under its name only once it can receive.
 *
 * Every process here is a fork()ed child that sets its environment before
 * its first use of the library (a process reads its job once).  Children
 * report through a shared page; the parent checks.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <gba/gba_eng.h>
#include <gba/gba_job.h>

#include "gba_core_util.h"
#include "gba_eng_noop.h"
#include "gba_eng_priv.h"

struct board {
	char key[8][GBA_JOB_KEY_MAX];
	uint64_t id[8];
	int ret[8];
	struct gba_addr addr[8];
	struct gba_eng_seg seg;
	uint32_t svc; /* the service number the test's processes use */
	_Atomic int stage;
};

static struct board *board_new(void)
{
	struct board *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(b, MAP_FAILED);
	b->svc = 4000000u + (uint32_t)getpid() % 1000000u;
	return b;
}

/* The environment a child starts from: no launcher, no job. */
static void env_clear(void)
{
	static const char *const vars[] = {
		"GBA_JOB",	"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
		"SLURM_JOB_ID", "SLURM_STEP_ID",  "PMI_FD",
		"PMI_PORT",
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}


/* Open an endpoint holding service @svc: 0 or the error. */
static int open_service(uint32_t svc, struct gba_eng_ep **ep)
{
	struct gba_addr addr;
	struct gba_eng_ep_attr attr = {
		.addr = &addr,
		.flags = GBA_ENG_EP_SERVICE,
		.ops = &gba_eng_noop_ops,
	};

	gba_addr_init_local(&addr);
	addr.ep_id = svc;
	return gba_eng_ep_open(&attr, ep);
}

static pid_t kid(void (*fn)(struct board *, int), struct board *b, int arg)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		env_clear();
		fn(b, arg);
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status),
		  "child status 0x%x", status);
}

/* Wait (at most 10 s) for the board's stage to reach @stage. */
static void stage_wait(struct board *b, int stage)
{
	int i;

	for (i = 0; i < 10000 && atomic_load(&b->stage) < stage; i++)
		usleep(1000);
	cr_assert_geq(atomic_load(&b->stage), stage, "stage %d", stage);
}

/* ---- Where the key comes from ------------------------------------------ */

static const char *const key_env[][4] = {
	/* variable, value, variable, value */
	{NULL, NULL, NULL, NULL},
	{"GBA_JOB", "run7", "PMIX_NAMESPACE", "4242"},
	{"PMIX_NAMESPACE", "4242", "OMPI_MCA_ess_base_jobid", "77"},
	{"OMPI_MCA_ess_base_jobid", "77", "SLURM_JOB_ID", "9"},
	{"SLURM_JOB_ID", "9", "SLURM_STEP_ID", "2"},
	{"PMI_FD", "6", NULL, NULL},
	{"GBA_JOB", "", NULL, NULL}, /* empty: not set */
};
#define NKEYS (sizeof(key_env) / sizeof(key_env[0]))

static void key_child(struct board *b, int i)
{
	if (key_env[i][0])
		setenv(key_env[i][0], key_env[i][1], 1);
	if (key_env[i][2])
		setenv(key_env[i][2], key_env[i][3], 1);
	snprintf(b->key[i], sizeof(b->key[i]), "%s", gba_job_key());
	b->id[i] = gba_job_id();
}

Test(job, key_sources)
{
	struct board *b = board_new();
	char hydra[64];
	size_t i, j;

	for (i = 0; i < NKEYS; i++)
		reap(kid(key_child, b, (int)i));
	cr_expect_str_eq(b->key[0], "default");
	cr_expect_str_eq(b->key[1], "gba:run7", "GBA_JOB wins");
	cr_expect_str_eq(b->key[2], "pmix:4242");
	cr_expect_str_eq(b->key[3], "ompi:77");
	cr_expect_str_eq(b->key[4], "slurm:9.2");
	/* hydra: the child's parent, this process */
	snprintf(hydra, sizeof(hydra), "hydra:%u.%u", (unsigned)getpid(),
		 (unsigned)GBA_SLOT_START(gba_proc_self_slot()));
	cr_expect_str_eq(b->key[5], hydra);
	cr_expect_str_eq(b->key[6], "default");
	for (i = 0; i < NKEYS; i++) {
		cr_expect_neq(b->id[i], 0);
		for (j = 0; j < i; j++)
			if (strcmp(b->key[i], b->key[j]))
				cr_expect_neq(b->id[i], b->id[j], "%s, %s",
					      b->key[i], b->key[j]);
	}
	cr_expect_eq(b->id[0], b->id[6], "one key, one id");
}

/* ---- Services, endpoints ------------------------------------------------ */

/* Hold service SVC in job "j<arg>" until stage 2; say where at stage 1. */
static void holder(struct board *b, int arg)
{
	struct gba_eng_ep *ep;
	char job[8];

	snprintf(job, sizeof(job), "j%d", arg);
	setenv("GBA_JOB", job, 1);
	b->ret[arg] = open_service(b->svc, &ep);
	if (!b->ret[arg])
		b->addr[arg] = *gba_eng_ep_addr(ep);
	atomic_fetch_add(&b->stage, 1);
	if (b->ret[arg])
		return;
	while (atomic_load(&b->stage) < 100)
		usleep(1000);
	gba_eng_ep_close(ep);
}

/* In job "j<arg % 10>": find SVC (slot arg), then try to reach it. */
static void finder(struct board *b, int arg)
{
	struct gba_eng_peer *peer;
	struct gba_eng_ep_attr attr = {.ops = &gba_eng_noop_ops};
	struct gba_eng_ep *ep;
	char job[8];

	snprintf(job, sizeof(job), "j%d", arg % 10);
	setenv("GBA_JOB", job, 1);
	b->ret[arg / 10] = gba_eng_ep_find(b->svc, &b->addr[arg / 10]);
	if (gba_eng_ep_open(&attr, &ep)) {
		b->ret[arg / 10] = 99;
		return;
	}
	/* reach the other job's holder: never */
	b->id[arg / 10] = (uint64_t)-gba_eng_peer_get(
		ep, &b->addr[arg % 10 == 0 ? 1 : 0], &peer);
	gba_eng_ep_close(ep);
}

Test(job, services_and_endpoints_per_job)
{
	struct board *b = board_new();
	pid_t h0, h1;

	h0 = kid(holder, b, 0);
	h1 = kid(holder, b, 1);
	stage_wait(b, 2);
	cr_assert_eq(b->ret[0], 0, "job j0 holds the service");
	cr_assert_eq(b->ret[1], 0, "job j1 holds it too: another job");
	/* finders: slot 2 in job j0, slot 3 in job j1 */
	reap(kid(finder, b, 20));
	reap(kid(finder, b, 31));
	cr_expect_eq(b->ret[2], 0);
	cr_expect_eq(b->addr[2].pid, (uint32_t)h0, "j0 finds j0's");
	cr_expect_eq(b->ret[3], 0);
	cr_expect_eq(b->addr[3].pid, (uint32_t)h1, "j1 finds j1's");
	cr_expect_eq(b->id[2], (uint64_t)EHOSTUNREACH, "j0 cannot reach j1");
	cr_expect_eq(b->id[3], (uint64_t)EHOSTUNREACH, "j1 cannot reach j0");
	atomic_store(&b->stage, 100);
	reap(h0);
	reap(h1);
}

Test(job, service_held_once_and_taken_over)
{
	struct board *b = board_new();
	struct gba_addr found;
	pid_t h0, h1, h2;

	env_clear();
	setenv("GBA_JOB", "j0", 1); /* this process: job j0 too */
	h0 = kid(holder, b, 0);
	stage_wait(b, 1);
	cr_assert_eq(b->ret[0], 0);
	/* a second endpoint of the job: like a bound port */
	h1 = kid(holder, b, 0);
	stage_wait(b, 2);
	cr_expect_eq(b->ret[0], -EADDRINUSE, "the service is held");
	reap(h1);
	/* the holder dies without closing: its claim is taken over */
	kill(h0, SIGKILL);
	cr_assert_eq(waitpid(h0, NULL, 0), h0);
	cr_expect_eq(gba_eng_ep_find(b->svc, &found), -ENOENT,
		     "a dead holder's service is not found");
	h2 = kid(holder, b, 0);
	stage_wait(b, 3);
	cr_expect_eq(b->ret[0], 0, "taken over");
	cr_expect_eq(gba_eng_ep_find(b->svc, &found), 0);
	cr_expect_eq(found.pid, (uint32_t)h2);
	atomic_store(&b->stage, 100);
	reap(h2);
	cr_expect_eq(gba_eng_ep_find(b->svc, &found), -ENOENT,
		     "released at close");
}

/* ---- A queue is named only once it can receive ------------------------- */

static void opener(struct board *b, int n)
{
	struct gba_eng_ep *ep;
	int i;

	for (i = 0; i < n; i++) {
		if (open_service(b->svc, &ep)) {
			b->ret[0] = 1;
			break;
		}
		gba_eng_ep_close(ep);
	}
	atomic_store(&b->stage, 1);
}

Test(job, queue_named_only_when_ready)
{
	struct board *b = board_new();
	struct gba_eng_ring hdr;
	char dir_prefix[96], path[300];
	unsigned seen = 0, unready = 0;
	struct dirent *de;
	pid_t pid;
	DIR *dir;
	int fd;

	env_clear(); /* this process's job: the opener's, "default" */
	snprintf(dir_prefix, sizeof(dir_prefix), "gba-fab-%u-%016" PRIx64 "-",
		 (unsigned)getuid(), gba_job_id());
	pid = kid(opener, b, 2000);
	while (!atomic_load(&b->stage)) {
		dir = opendir("/dev/shm");
		cr_assert(dir);
		while ((de = readdir(dir))) {
			if (strncmp(de->d_name, dir_prefix, strlen(dir_prefix)))
				continue;
			snprintf(path, sizeof(path), "/dev/shm/%s", de->d_name);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue; /* closed meanwhile */
			if (pread(fd, &hdr, sizeof(hdr), 0) !=
				    (ssize_t)sizeof(hdr) ||
			    hdr.magic != GBA_ENG_RING_MAGIC)
				unready++;
			seen++;
			close(fd);
		}
		closedir(dir);
	}
	reap(pid);
	cr_expect_eq(b->ret[0], 0);
	cr_expect_eq(unready, 0, "%u of %u queues seen before they were ready",
		     unready, seen);
}

/* ---- Groups ------------------------------------------------------------- */

/* Join group key 77 as member 0 of 2 in job "j<arg>"; hold until 100. */
static void joiner(struct board *b, int arg)
{
	struct gba_group_attr attr = {.key = 77, .member_count = 2};
	struct gba_group *grp = NULL;
	struct gba_dev *dev;
	char job[8];

	snprintf(job, sizeof(job), "j%d", arg % 10);
	setenv("GBA_JOB", job, 1);
	b->ret[arg / 10] = gba_dev_open(gba_t_dev, &dev);
	if (!b->ret[arg / 10])
		b->ret[arg / 10] = gba_group_join(dev, &attr, &grp);
	atomic_fetch_add(&b->stage, 1);
	while (atomic_load(&b->stage) < 100)
		usleep(1000);
	if (grp)
		gba_group_leave(grp);
	if (!b->ret[arg / 10])
		gba_dev_close(dev);
}

Test(job, groups_per_job, .fini = gba_t_unlink)
{
	struct board *b = board_new();
	pid_t a, c, d;

	gba_t_image("job");
	a = kid(joiner, b, 0);	/* job j0, slot 0 */
	c = kid(joiner, b, 11); /* job j1, slot 1 */
	stage_wait(b, 2);
	d = kid(joiner, b, 20); /* job j0 again, slot 2 */
	stage_wait(b, 3);
	cr_expect_eq(b->ret[0], 0);
	cr_expect_eq(b->ret[1], 0,
		     "the same key in another job: its own group");
	cr_expect_eq(b->ret[2], -EADDRINUSE,
		     "the same key in the same job: the same group");
	atomic_store(&b->stage, 100);
	reap(a);
	reap(c);
	reap(d);
}

/* ---- Regions ------------------------------------------------------------ */

static void seg_owner(struct board *b, int arg)
{
	(void)arg;
	setenv("GBA_JOB", "j0", 1);
	b->ret[0] = gba_eng_seg_alloc(4096, NULL, &b->seg);
	atomic_store(&b->stage, 1);
	while (atomic_load(&b->stage) < 100)
		usleep(1000);
	if (!b->ret[0])
		gba_eng_seg_free(&b->seg);
}

static void seg_user(struct board *b, int arg)
{
	char job[8];
	void *addr;

	snprintf(job, sizeof(job), "j%d", arg);
	setenv("GBA_JOB", job, 1);
	b->ret[1 + arg] = gba_eng_seg_attach(b->seg.pid, b->seg.fd, b->seg.len,
					     b->seg.cookie, &addr);
	if (!b->ret[1 + arg])
		gba_eng_seg_detach(addr);
}

Test(job, regions_per_job)
{
	struct board *b = board_new();
	pid_t owner;

	owner = kid(seg_owner, b, 0);
	stage_wait(b, 1);
	cr_assert_eq(b->ret[0], 0);
	reap(kid(seg_user, b, 0));
	reap(kid(seg_user, b, 1));
	cr_expect_eq(b->ret[1], 0, "its own job attaches it");
	cr_expect_eq(b->ret[2], -ENOENT, "another job does not");
	atomic_store(&b->stage, 100);
	reap(owner);
}
