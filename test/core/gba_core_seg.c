/*
 * The fabric engine's shared-memory regions (include/gba/gba_fab.h,
 * gba_fab_seg_*): allocation rounded to pages and zero-filled, placement at
 * a fixed address (never over a mapping), a second process mapping the
 * region through /proc and seeing and making stores, the checks that keep
 * it from mapping anything else (a file that is not a region, a region too
 * short, its own pid, a dead pid), and the built-in atomic executor on a
 * mapped region.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <gba/gba_fab.h>

TestSuite(seg, .timeout = 30);

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

Test(seg, alloc_rounds_and_zeroes)
{
	struct gba_fab_seg seg;
	size_t i;

	cr_assert_eq(gba_fab_seg_alloc(page() + 1, NULL, &seg), 0);
	cr_expect_eq(seg.len, 2 * page());
	cr_expect_eq((uintptr_t)seg.addr % page(), 0);
	cr_expect_geq(seg.fd, 0);
	cr_expect_eq(seg.pid, (uint32_t)getpid());
	for (i = 0; i < seg.len; i++)
		if (((unsigned char *)seg.addr)[i])
			break;
	cr_expect_eq(i, seg.len, "byte %zu of a new region is not 0", i);
	gba_fab_seg_free(&seg);
	cr_expect_null(seg.addr);
	gba_fab_seg_free(&seg); /* twice: nothing */
}

Test(seg, bad_arguments)
{
	struct gba_fab_seg seg;
	void *addr;

	cr_expect_eq(gba_fab_seg_alloc(0, NULL, &seg), -EINVAL);
	cr_expect_eq(gba_fab_seg_alloc(SIZE_MAX, NULL, &seg), -EINVAL);
	cr_expect_eq(gba_fab_seg_alloc(8, (void *)(uintptr_t)(page() + 8), &seg),
		     -EINVAL);
	cr_expect_eq(gba_fab_seg_alloc(8, NULL, NULL), -EINVAL);
	cr_expect_eq(gba_fab_seg_map(getppid(), 0, 0, &addr), -EINVAL);
	cr_expect_eq(gba_fab_seg_map(getppid(), -1, 8, &addr), -EINVAL);
	cr_expect_eq(gba_fab_seg_map(getppid(), 0, 8, NULL), -EINVAL);
	cr_expect_eq(gba_fab_seg_map(getpid(), 0, 8, &addr), -EINVAL);
}

Test(seg, fixed_address)
{
	struct gba_fab_seg seg;
	char *hole;

	hole = mmap(NULL, 3 * page(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	cr_assert_neq(hole, MAP_FAILED);
	/* in use: refused, and the mapping there is left alone */
	cr_expect_eq(gba_fab_seg_alloc(page(), hole + page(), &seg), -EEXIST);
	cr_expect_eq(munmap(hole + page(), page()), 0);
	cr_assert_eq(gba_fab_seg_alloc(page(), hole + page(), &seg), 0);
	cr_expect_eq(seg.addr, hole + page());
	((volatile char *)seg.addr)[page() - 1] = 1;
	gba_fab_seg_free(&seg);
	munmap(hole, 3 * page());
}

/* Child: map @seg's region, check its first word is 41, store 42 into the
 * second, add 5 to the third with the executor; exit 0 or a step number */
static int child_map(const struct gba_fab_seg *seg)
{
	uint64_t *m, five = 5, old = 0;
	void *addr;

	if (gba_fab_seg_map(seg->pid, seg->fd, seg->len, &addr))
		return 1;
	m = addr;
	if (m[0] != 41)
		return 2;
	m[1] = 42;
	if (gba_fab_atomic_builtin(GBA_FAB_AOP_ADD, 8, &m[2], &five, NULL,
				   &old, 1) ||
	    old != 100)
		return 3;
	gba_fab_seg_unmap(addr, seg->len);
	/* longer than the region: refused */
	if (gba_fab_seg_map(seg->pid, seg->fd, seg->len + page(), &addr) !=
	    -ERANGE)
		return 4;
	/* the parent's standard input is not a region */
	if (gba_fab_seg_map(seg->pid, 0, page(), &addr) != -ENOENT)
		return 5;
	return 0;
}

Test(seg, mapped_by_another_process)
{
	struct gba_fab_seg seg;
	uint64_t *m;
	int status;
	pid_t pid;

	cr_assert_eq(gba_fab_seg_alloc(3 * sizeof(uint64_t), NULL, &seg), 0);
	m = seg.addr;
	m[0] = 41;
	m[2] = 100;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child_map(&seg));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child failed at step %d", WEXITSTATUS(status));
	cr_expect_eq(m[1], 42);
	cr_expect_eq(m[2], 105);

	/* a process that is gone has nothing to map */
	cr_expect_eq(gba_fab_seg_map(pid, seg.fd, seg.len, (void **)&m),
		     -ENOENT);
	gba_fab_seg_free(&seg);
}
