/*
 * The fabric engine's shared-memory regions (include/gba/gba_eng.h,
 * gba_eng_seg_*): allocation rounded to pages and zero-filled, placement at
 * a fixed address (never over a mapping), a second process attaching the
 * region and seeing and making stores, its cache of attached regions (one
 * mapping per region, a later region with the same file number told apart
 * by its cookie), the checks that keep it from mapping anything else (a
 * file that is not a region, a wrong cookie, a region too short, its own
 * pid, a dead pid), and the built-in atomic executor on an attached region.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <gba/gba_eng.h>
#include <gba/gba_job.h>

TestSuite(seg, .timeout = 30);

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

Test(seg, alloc_rounds_and_zeroes)
{
	struct gba_eng_seg seg, other;
	size_t i;

	cr_assert_eq(gba_eng_seg_alloc(page() + 1, NULL, &seg), 0);
	cr_expect_eq(seg.len, 2 * page());
	cr_expect_eq((uintptr_t)seg.addr % page(), 0);
	cr_expect_geq(seg.fd, 0);
	cr_expect_eq(seg.pid, (uint32_t)getpid());
	for (i = 0; i < seg.len; i++)
		if (((unsigned char *)seg.addr)[i])
			break;
	cr_expect_eq(i, seg.len, "byte %zu of a new region is not 0", i);
	cr_assert_eq(gba_eng_seg_alloc(1, NULL, &other), 0);
	cr_expect_neq(seg.cookie, other.cookie);
	gba_eng_seg_free(&other);
	gba_eng_seg_free(&seg);
	cr_expect_null(seg.addr);
	gba_eng_seg_free(&seg); /* twice: nothing */
}

Test(seg, bad_arguments)
{
	struct gba_eng_seg seg;
	void *addr;

	cr_expect_eq(gba_eng_seg_alloc(0, NULL, &seg), -EINVAL);
	cr_expect_eq(gba_eng_seg_alloc(SIZE_MAX, NULL, &seg), -EINVAL);
	cr_expect_eq(gba_eng_seg_alloc(8, (void *)(uintptr_t)(page() + 8), &seg),
		     -EINVAL);
	cr_expect_eq(gba_eng_seg_alloc(8, NULL, NULL), -EINVAL);
	cr_expect_eq(gba_eng_seg_attach(getppid(), 0, 0, 1, &addr), -EINVAL);
	cr_expect_eq(gba_eng_seg_attach(getppid(), -1, 8, 1, &addr), -EINVAL);
	cr_expect_eq(gba_eng_seg_attach(getppid(), 0, 8, 1, NULL), -EINVAL);
	cr_expect_eq(gba_eng_seg_attach(getpid(), 0, 8, 1, &addr), -ENOENT);
	gba_eng_seg_detach(NULL); /* nothing */
}

Test(seg, fixed_address)
{
	struct gba_eng_seg seg;
	char *hole;

	hole = mmap(NULL, 4 * page(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	cr_assert_neq(hole, MAP_FAILED);
	/* in use: refused, and the mapping there is left alone */
	cr_expect_eq(gba_eng_seg_alloc(page(), hole + page(), &seg), -EEXIST);
	/* the trailer page must be free too */
	cr_expect_eq(munmap(hole + page(), page()), 0);
	cr_expect_eq(gba_eng_seg_alloc(page(), hole + page(), &seg), -EEXIST);
	cr_expect_eq(munmap(hole + 2 * page(), page()), 0);
	cr_assert_eq(gba_eng_seg_alloc(page(), hole + page(), &seg), 0);
	cr_expect_eq(seg.addr, hole + page());
	((volatile char *)seg.addr)[page() - 1] = 1;
	gba_eng_seg_free(&seg);
	munmap(hole, 4 * page());
}

/* Child: attach @seg's region (twice: one mapping), check its first word
 * is 41, store 42 into the second, add 5 to the third with the executor,
 * then the refusals; exit 0 or a step number */
static int child_attach(const struct gba_eng_seg *seg)
{
	uint64_t *m, five = 5, old = 0;
	void *addr, *again;

	if (gba_eng_seg_attach(seg->pid, seg->fd, seg->len, seg->cookie,
			       &addr))
		return 1;
	if (gba_eng_seg_attach(seg->pid, seg->fd, 8, seg->cookie, &again) ||
	    again != addr)
		return 2;
	gba_eng_seg_detach(again);
	m = addr;
	if (m[0] != 41)
		return 3;
	m[1] = 42;
	if (gba_eng_atomic_builtin(GBA_ENG_AOP_ADD, 8, &m[2], &five, NULL,
				   &old, 1) ||
	    old != 100)
		return 4;
	gba_eng_seg_detach(addr);
	/* idle, still cached: the same mapping */
	if (gba_eng_seg_attach(seg->pid, seg->fd, seg->len, seg->cookie,
			       &again) ||
	    again != addr)
		return 5;
	gba_eng_seg_detach(again);
	/* longer than the region, another cookie, not a region: refused */
	if (gba_eng_seg_attach(seg->pid, seg->fd, seg->len + page(),
			       seg->cookie, &addr) != -ERANGE)
		return 6;
	if (gba_eng_seg_attach(seg->pid, seg->fd, seg->len, seg->cookie + 1,
			       &addr) != -ESTALE)
		return 7;
	if (gba_eng_seg_attach(seg->pid, 0, page(), seg->cookie, &addr) !=
	    -ENOENT)
		return 8;
	return 0;
}

Test(seg, attached_by_another_process)
{
	struct gba_eng_seg seg;
	uint64_t *m;
	void *addr;
	int status;
	pid_t pid;

	cr_assert_eq(gba_eng_seg_alloc(3 * sizeof(uint64_t), NULL, &seg), 0);
	m = seg.addr;
	m[0] = 41;
	m[2] = 100;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child_attach(&seg));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child failed at step %d", WEXITSTATUS(status));
	cr_expect_eq(m[1], 42);
	cr_expect_eq(m[2], 105);

	/* a process that is gone has nothing to map */
	cr_expect_eq(gba_eng_seg_attach(pid, seg.fd, seg.len, seg.cookie,
					&addr),
		     -ENOENT);
	gba_eng_seg_free(&seg);
}

/* Child: attach the region (@seg), then, once the parent replaced it by
 * another with the same file number (@next, read after the pipe says so),
 * attach again: the new region, not the cached old one */
static int child_replaced(const struct gba_eng_seg *seg,
			  const struct gba_eng_seg *next, int rfd, int wfd)
{
	void *addr, *again;
	char c = 0;

	if (gba_eng_seg_attach(seg->pid, seg->fd, seg->len, seg->cookie,
			       &addr) ||
	    *(uint64_t *)addr != 1)
		return 1;
	if (write(wfd, &c, 1) != 1 || read(rfd, &c, 1) != 1)
		return 2;
	/* the old region, still attached, still reads as before */
	if (*(uint64_t *)addr != 1)
		return 3;
	if (gba_eng_seg_attach(next->pid, next->fd, next->len, next->cookie,
			       &again))
		return 4;
	if (again == addr || *(uint64_t *)again != 2)
		return 5;
	gba_eng_seg_detach(addr);
	gba_eng_seg_detach(again);
	return 0;
}

Test(seg, file_number_reused)
{
	struct gba_eng_seg *segs;
	int status, to_child[2], to_parent[2], old_fd;
	char c;
	pid_t pid;

	segs = mmap(NULL, page(), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(segs, MAP_FAILED);
	cr_assert_eq(pipe(to_child), 0);
	cr_assert_eq(pipe(to_parent), 0);
	cr_assert_eq(gba_eng_seg_alloc(page(), NULL, &segs[0]), 0);
	*(uint64_t *)segs[0].addr = 1;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child_replaced(&segs[0], &segs[1], to_child[0],
				     to_parent[1]));
	cr_assert_eq(read(to_parent[0], &c, 1), 1);
	old_fd = segs[0].fd;
	gba_eng_seg_free(&segs[0]);
	cr_assert_eq(gba_eng_seg_alloc(page(), NULL, &segs[1]), 0);
	if (segs[1].fd != old_fd) {
		/* give the new region the old file number */
		cr_assert_eq(dup2(segs[1].fd, old_fd), old_fd);
		close(segs[1].fd);
		segs[1].fd = old_fd;
	}
	*(uint64_t *)segs[1].addr = 2;
	cr_assert_eq(write(to_child[1], &c, 1), 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child failed at step %d", WEXITSTATUS(status));
	gba_eng_seg_free(&segs[1]);
	munmap(segs, page());
}

/* A region's size is sealed: its owner cannot shrink it under a peer's
 * mapping (whose accesses would fault), and a memory file of the same name
 * whose size is not sealed is not mapped. */
Test(seg, size_sealed)
{
	struct gba_eng_seg seg;
	uint64_t cookie = 42;
	char name[64];
	void *addr;
	int fd;

	cr_assert_eq(gba_eng_seg_alloc(page(), NULL, &seg), 0);
	cr_expect_neq(ftruncate(seg.fd, 0), 0, "the owner shrank its region");
	cr_expect_eq(errno, EPERM);
	cr_expect_neq(ftruncate(seg.fd, (off_t)(8 * page())), 0);
	cr_expect_eq(gba_eng_seg_attach(getpid(), seg.fd, seg.len, seg.cookie,
					&addr),
		     0);
	gba_eng_seg_detach(addr);
	gba_eng_seg_free(&seg);

	/* the same name and layout, unsealed */
	snprintf(name, sizeof(name), "gba-seg-%016" PRIx64, gba_job_id());
	fd = memfd_create(name, MFD_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)(2 * page())), 0);
	cr_assert_eq(pwrite(fd, &cookie, sizeof(cookie), (off_t)page()),
		     (ssize_t)sizeof(cookie));
	cr_expect_eq(gba_eng_seg_attach(getpid(), fd, page(), cookie, &addr),
		     -EACCES);
	close(fd);
}
