/*
 * Another user's objects are refused (gba(7), SECURITY), through the core
 * library's public API; driven by test/core/users.sh.
 *
 *   gba_users serve DIR    (the first user) opens the emulated device
 *       image emu:/gba-users-<pid>, joins a group of 2 on it as member 0,
 *       opens an engine endpoint and allocates a region, and writes what a
 *       peer needs (image, address, region) to DIR/addr.  Then it waits
 *       for DIR/spoof (objects the second user planted under names this
 *       user's processes use) and checks that it refuses them: the planted
 *       image with -EACCES, the planted receive queues with -EACCES (one
 *       under a peer's name, one under the name of its own next
 *       endpoint).  It creates DIR/done when finished.
 *   gba_users probe DIR    (the second user) reads DIR/addr and checks
 *       that it can neither open the first user's image (gba_dev_open, so
 *       no join or arrival in its groups), nor open it or its receive
 *       queue with shm_open, nor reach its endpoint, nor attach its region
 *       (gba_eng_seg_attach), nor read its memory by cross-memory attach;
 *       then it plants an image and a receive queue for the first user
 *       (DIR/spoof) and waits for DIR/done.
 *
 * Each check prints "ok: ..." or "FAIL: ..." with the error and
 * gba_last_error; the exit status is the number of failures (99: setup).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba.h>
#include <gba/gba_addr.h>
#include <gba/gba_eng.h>
#include <gba/gba_job.h>

#include "gba_eng_noop.h"

#define USERS_KEY 0x55534552ULL /* "USER" */
#define SPOOF_EP 7

static int failures;

/*
 * Report check @what: @ok, with the error @err (a negative errno) of a
 * library call (@lib: its gba_last_error text) or a system call
 */
static void check(int ok, const char *what, int err, int lib)
{
	printf("%s: %s (%s)\n", ok ? "ok" : "FAIL", what,
	       lib ? gba_last_error(err) : strerror(-err));
	failures += !ok;
}

/* Wait up to 60 s for file @path */
static int wait_file(const char *path)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	int i;

	for (i = 0; i < 6000; i++) {
		if (!access(path, F_OK))
			return 0;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "gba_users: %s did not appear\n", path);
	return -1;
}

/* Write @text to DIR/@name, readable by everyone, atomically */
static int put_file(const char *dir, const char *name, const char *text)
{
	char tmp[512], path[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) || chmod(tmp, 0644) ||
	    rename(tmp, path)) {
		perror(path);
		return -1;
	}
	return 0;
}


static int serve(const char *dir)
{
	struct gba_eng_ep_attr attr = {.ops = &gba_eng_noop_ops};
	struct gba_group_attr gattr = {
		.key = USERS_KEY,
		.member_count = 2,
		.member_id = 0,
	};
	char image[64], text[512], path[512];
	unsigned spoof_pid;
	struct gba_eng_peer *peer;
	struct gba_eng_seg seg;
	struct gba_eng_ep *ep;
	struct gba_group *grp;
	struct gba_addr addr;
	struct gba_dev *dev;
	FILE *f;
	int ret;

	snprintf(image, sizeof(image), "/gba-users-%d", (int)getpid());
	shm_unlink(image);
	snprintf(text, sizeof(text), "emu:%s", image);
	if ((ret = gba_dev_open(text, &dev)) ||
	    (ret = gba_group_join(dev, &gattr, &grp)) ||
	    (ret = gba_eng_ep_open(&attr, &ep)) ||
	    (ret = gba_eng_seg_alloc(4096, NULL, &seg))) {
		fprintf(stderr, "gba_users serve: setup failed: %s\n",
			gba_last_error(ret));
		return 99;
	}
	memset(seg.addr, 0x5a, seg.len);
	addr = *gba_eng_ep_addr(ep);
	snprintf(text, sizeof(text), "%s %u %u %u %d %zu %llu %llx\n", image,
		 (unsigned)getuid(), addr.pid, addr.ep_id, seg.fd, seg.len,
		 (unsigned long long)seg.cookie,
		 (unsigned long long)gba_job_id());
	if (put_file(dir, "addr", text))
		return 99;

	/* the second user's planted objects */
	snprintf(path, sizeof(path), "%s/spoof", dir);
	if (wait_file(path))
		return 99;
	f = fopen(path, "r");
	if (!f || fscanf(f, "%63s %u", image, &spoof_pid) != 2) {
		fprintf(stderr, "gba_users serve: bad %s\n", path);
		return 99;
	}
	fclose(f);
	snprintf(text, sizeof(text), "emu:%s", image);
	{
		struct gba_dev *dev2;

		ret = gba_dev_open(text, &dev2);
		check(ret == -EACCES,
		      "an image another user planted is refused", ret, 1);
		if (!ret)
			gba_dev_close(dev2);
	}
	addr.pid = spoof_pid;
	addr.ep_id = SPOOF_EP;
	ret = gba_eng_peer_get(ep, &addr, &peer);
	check(ret == -EACCES,
	      "a receive queue another user planted under this user's name "
	      "is refused",
	      ret, 1);
	{
		struct gba_eng_ep_attr attr2 = {.ops = &gba_eng_noop_ops,
						 .addr = &addr};
		struct gba_eng_ep *ep2;

		addr = *gba_eng_ep_addr(ep);
		addr.ep_id = SPOOF_EP;
		ret = gba_eng_ep_open(&attr2, &ep2);
		check(ret == -EACCES,
		      "an endpoint whose queue name another user took is "
		      "refused",
		      ret, 1);
		if (!ret)
			gba_eng_ep_close(ep2);
	}

	gba_eng_seg_free(&seg);
	gba_eng_ep_close(ep);
	gba_group_leave(grp);
	gba_dev_close(dev);
	snprintf(image, sizeof(image), "/gba-users-%d", (int)getpid());
	shm_unlink(image);
	if (put_file(dir, "done", "done\n"))
		return 99;
	return failures;
}

static int probe(const char *dir)
{
	struct gba_eng_ep_attr attr = {.ops = &gba_eng_noop_ops};
	char image[64], name[128], name2[128], path[512], text[512];
	unsigned uid, pid, ep_id;
	unsigned long long cookie, job;
	struct gba_eng_peer *peer;
	struct gba_eng_ep *ep;
	struct gba_dev *dev;
	struct gba_addr addr;
	struct iovec local, remote;
	char buf[64];
	size_t len;
	void *map;
	FILE *f;
	int fd, fd2, ret;

	snprintf(path, sizeof(path), "%s/addr", dir);
	if (wait_file(path))
		return 99;
	f = fopen(path, "r");
	if (!f || fscanf(f, "%63s %u %u %u %d %zu %llu %llx", image, &uid, &pid,
			 &ep_id, &fd, &len, &cookie, &job) != 8) {
		fprintf(stderr, "gba_users probe: bad %s\n", path);
		return 99;
	}
	fclose(f);
	if (uid == getuid()) {
		fprintf(stderr, "gba_users probe: run it as another user\n");
		return 99;
	}

	/* the device image: no open, so no join and no arrival */
	snprintf(text, sizeof(text), "emu:%s", image);
	ret = gba_dev_open(text, &dev);
	check(ret == -EACCES,
	      "gba_dev_open of the other user's image (join, arrive)", ret, 1);
	if (!ret)
		gba_dev_close(dev);
	ret = shm_open(image, O_RDONLY, 0);
	check(ret < 0 && errno == EACCES,
	      "shm_open of the other user's image, read-only",
	      ret < 0 ? -errno : 0, 0);

	/* its receive queue */
	ret = gba_eng_ep_open(&attr, &ep);
	if (ret) {
		fprintf(stderr, "gba_users probe: own endpoint: %s\n",
			gba_last_error(ret));
		return 99;
	}
	memset(&addr, 0, sizeof(addr));
	addr = *gba_eng_ep_addr(ep);
	addr.pid = pid;
	addr.ep_id = ep_id;
	ret = gba_eng_peer_get(ep, &addr, &peer);
	check(ret == -EHOSTUNREACH || ret == -EACCES,
	      "gba_eng_peer_get of the other user's endpoint", ret, 1);
	snprintf(name, sizeof(name), "/gba-fab-%u-%016llx-%u-%u", uid, job, pid,
		 ep_id);
	ret = shm_open(name, O_RDWR, 0);
	check(ret < 0 && errno == EACCES,
	      "shm_open of the other user's receive queue",
	      ret < 0 ? -errno : 0, 0);

	/* its region, and its memory by cross-memory attach */
	ret = gba_eng_seg_attach(pid, fd, len, (uint64_t)cookie, &map);
	check(ret == -EACCES || ret == -EPERM,
	      "gba_eng_seg_attach of the other user's region", ret, 1);
	if (!ret)
		gba_eng_seg_detach(map);
	local.iov_base = buf;
	local.iov_len = sizeof(buf);
	remote.iov_base = &addr; /* any address: the check comes first */
	remote.iov_len = sizeof(buf);
	ret = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) < 0
		      ? -errno
		      : 0;
	check(ret == -EPERM || ret == -EACCES,
	      "process_vm_readv of the other user's process", ret, 0);

	/*
	 * Plant, for the first user: a valid image of this user under a
	 * name it is told to use, and a receive queue open to all under the
	 * first user's queue names
	 */
	snprintf(image, sizeof(image), "/gba-users-spoof-%d", (int)getpid());
	snprintf(text, sizeof(text), "emu:%s", image);
	shm_unlink(image);
	ret = gba_dev_open(text, &dev);
	if (ret) {
		fprintf(stderr, "gba_users probe: own image: %s\n",
			gba_last_error(ret));
		return 99;
	}
	snprintf(name, sizeof(name), "/gba-fab-%u-%016llx-%d-%d", uid, job,
		 (int)getpid(), SPOOF_EP);
	/*
	 * held with a shared flock, as an owner holds its queue, so that the
	 * first user's reaping leaves it (root could remove it otherwise)
	 */
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
	if (fd < 0 || fchmod(fd, 0666) || ftruncate(fd, 4096 + 4 * 4096) ||
	    flock(fd, LOCK_SH)) {
		perror(name);
		return 99;
	}
	/* and the name of the first user's next endpoint */
	snprintf(name2, sizeof(name2), "/gba-fab-%u-%016llx-%u-%d", uid, job,
		 pid, SPOOF_EP);
	fd2 = shm_open(name2, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd2 < 0 || flock(fd2, LOCK_SH)) {
		perror(name2);
		return 99;
	}
	snprintf(text, sizeof(text), "%s %d\n", image, (int)getpid());
	if (put_file(dir, "spoof", text))
		return 99;
	snprintf(path, sizeof(path), "%s/done", dir);
	ret = wait_file(path);
	shm_unlink(name);
	shm_unlink(name2);
	close(fd);
	close(fd2);
	gba_dev_close(dev);
	shm_unlink(image);
	gba_eng_ep_close(ep);
	return ret ? 99 : failures;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "probe"))
		return probe(argv[2]);
	fprintf(stderr, "usage: %s serve|probe DIR\n", argv[0]);
	return 99;
}
