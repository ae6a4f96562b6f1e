/*
 * A collective whose member process dies: the survivor's barrier
 * completes with FI_ECONNABORTED within a bounded time instead of
 * hanging (doc/design.md section 3, crash safety).  Multi-process, so not in
 * check-valgrind.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ep_common.h"

TestSuite(coll, .init = coll_setup, .fini = coll_teardown, .timeout = 60);

/* Address exchange with a forked member. */
struct fork_shared {
	char name[2][64];
	size_t len[2];
	volatile int child_ready;
	volatile int parent_joined;
	volatile int child_joined;
};

/* The child: its own endpoint, join, then die without arriving. */
static void fork_child(struct fork_shared *sh)
{
	struct fi_av_set_attr attr = {
		.start_addr = FI_ADDR_NOTAVAIL,
		.end_addr = FI_ADDR_NOTAVAIL,
	};
	struct fi_eq_entry entry;
	struct fid_av_set *set;
	fi_addr_t addrs[2];
	struct fid_mc *mc;
	uint32_t event;
	struct tep t;

	/* fi_getinfo's source address names the parent process */
	free(t_info->src_addr);
	t_info->src_addr = NULL;
	t_info->src_addrlen = 0;
	if (tep_try_open(&t))
		_exit(1);
	sh->len[1] = sizeof(sh->name[1]);
	if (fi_getname(&t.ep->fid, sh->name[1], &sh->len[1]))
		_exit(2);
	if (fi_av_insert(t.av, sh->name[0], 1, &addrs[0], 0, NULL) != 1 ||
	    fi_av_insert(t.av, sh->name[1], 1, &addrs[1], 0, NULL) != 1)
		_exit(3);
	if (fi_av_set(t.av, &attr, &set, NULL) ||
	    fi_av_set_insert(set, addrs[0]) || fi_av_set_insert(set, addrs[1]))
		_exit(5);
	sh->child_ready = 1;
	while (!sh->parent_joined)
		usleep(100);
	if (fi_join_collective(t.ep, FI_ADDR_NOTAVAIL, set, 0, &mc, NULL) ||
	    fi_eq_read(t.eq, &event, &entry, sizeof(entry), 0) != sizeof(entry))
		_exit(4);
	sh->child_joined = 1;
	_exit(0); /* dies attached, never arrives */
}

Test(coll, member_process_dies)
{
	struct fork_shared *sh;
	struct fi_cq_err_entry err;
	struct fi_cq_data_entry e;
	struct fid_av_set *set;
	fi_addr_t addrs[2];
	struct fid_mc *mc;
	uint64_t t0;
	struct tep t;
	pid_t pid;
	int st, x;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(sh, MAP_FAILED);
	tep_open(&t, NULL);
	sh->len[0] = sizeof(sh->name[0]);
	cr_assert_eq(fi_getname(&t.ep->fid, sh->name[0], &sh->len[0]), 0);

	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		fork_child(sh);
	t0 = prov_now_ms();
	while (!sh->child_ready) {
		cr_assert_eq(waitpid(pid, &st, WNOHANG), 0,
			     "child exited early, status 0x%x", st);
		cr_assert_lt(prov_now_ms() - t0, 10000, "child not ready");
		usleep(100);
	}
	cr_assert_eq(fi_av_insert(t.av, sh->name[0], 1, &addrs[0], 0, NULL), 1);
	cr_assert_eq(fi_av_insert(t.av, sh->name[1], 1, &addrs[1], 0, NULL), 1);
	set = make_set(t.av, addrs, 2);
	mc = join(&t, set, NULL);
	sh->parent_joined = 1;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	cr_assert(sh->child_joined);

	t0 = prov_now_ms();
	cr_assert_eq(fi_barrier(t.ep, fi_mc_addr(mc), &x), 0);
	while (poll_cq(t.cq, 1, &e) == 0)
		cr_assert_lt(prov_now_ms() - t0, 10000,
			     "barrier with a dead member still waits");
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(t.cq, &err, 0), 1);
	cr_expect_eq(err.op_context, &x);
	cr_expect_eq(err.err, FI_ECONNABORTED, "err %d (%s)", err.err,
		     fi_strerror(err.err));
	cr_expect_eq(fi_close(&mc->fid), 0);
	cr_expect_eq(fi_close(&set->fid), 0);
	tep_close(&t, true);
	munmap(sh, sizeof(*sh));
}
