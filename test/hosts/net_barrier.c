/*
 * net_barrier: barriers of one process's members of a group on the GBA
 * device named by $GBA_DEVICE (test/hosts/switchd.sh runs it on emulated
 * hosts against gba_switchd, device emu+tcp://HOST:PORT).
 *
 *   net_barrier -n N -f FIRST -c COUNT -i ITERS -k KEY -C FILE [-t MS]
 *       members FIRST .. FIRST+COUNT-1 of an N-member group (key KEY),
 *       ITERS barriers.  Early-release check: FILE (a file on a file
 *       system all hosts share, /tmp) holds a counter every member adds 1
 *       to before each arrival; after barrier k every member must read at
 *       least N * k (nobody left barrier k before all arrived at k).
 *       A failed barrier prints "ERROR member M barrier K: <error> at
 *       <CLOCK_REALTIME seconds>" and exits 3.
 *   net_barrier -n N -f ME -G GROUPS -k KEY -i ITERS [-X]
 *       member ME of GROUPS groups of N members (keys KEY .. KEY+GROUPS-1),
 *       ITERS barriers on each; -X (one member): then join key KEY+GROUPS
 *       and print its result ("extra join: -ENOSPC ..."); a last barrier
 *       on the first group keeps everyone until then.
 * Prints "OK ..." and exits 0 on success; 1 on a failed check, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba.h>

#define MAX_LOCAL 708

static double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static _Atomic uint64_t *map_counter(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	void *p;

	if (fd < 0 || ftruncate(fd, 4096)) {
		perror(path);
		exit(2);
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static int join(struct gba_dev *dev, uint64_t key, uint32_t n, uint32_t id,
		struct gba_group **grp)
{
	struct gba_group_attr attr = {
		.key = key, .member_count = n, .member_id = id};
	int ret = gba_group_join(dev, &attr, grp);

	if (ret)
		fprintf(stderr, "join key %llu member %u of %u: %s\n",
			(unsigned long long)key, id, n, gba_last_error(ret));
	return ret;
}

static int groups_mode(struct gba_dev *dev, uint32_t n, uint32_t me,
		       unsigned ngroups, uint64_t key, unsigned iters,
		       int extra, int tmo)
{
	struct gba_group *grp[64], *x = NULL;
	struct gba_group_attr attr = {.member_count = n, .member_id = me};
	unsigned g, i;
	int ret;

	if (ngroups > 64)
		return 2;
	for (g = 0; g < ngroups; g++)
		if (join(dev, key + g, n, me, &grp[g]))
			return 1;
	for (i = 0; i < iters; i++)
		for (g = 0; g < ngroups; g++) {
			ret = gba_group_wait(grp[g], gba_group_arrive(grp[g]),
					     tmo);
			if (ret) {
				printf("ERROR group %u barrier %u: %s\n", g, i,
				       strerror(-ret));
				return 3;
			}
		}
	if (extra) {
		attr.key = key + ngroups;
		ret = gba_group_join(dev, &attr, &x);
		printf("extra join: %d (%s)\n", ret,
		       ret ? strerror(-ret) : "joined");
		if (x)
			gba_group_leave(x);
	}
	ret = gba_group_wait(grp[0], gba_group_arrive(grp[0]), tmo);
	if (ret) {
		printf("ERROR last barrier: %s\n", strerror(-ret));
		return 3;
	}
	for (g = 0; g < ngroups; g++)
		gba_group_leave(grp[g]);
	printf("OK member %u: %u groups x %u barriers\n", me, ngroups, iters);
	return 0;
}

int main(int argc, char **argv)
{
	static struct gba_group *grp[MAX_LOCAL];
	static uint32_t seq[MAX_LOCAL];
	uint32_t n = 0, first = 0, count = 1, iters = 1000, ngroups = 0;
	uint64_t key = 1;
	const char *cfile = NULL;
	_Atomic uint64_t *counter = NULL;
	int tmo = 30000, extra = 0, opt, ret;
	struct gba_dev *dev;
	double t0, t1;
	uint32_t i, k;

	while ((opt = getopt(argc, argv, "n:f:c:i:k:C:t:G:X")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'f':
			first = atoi(optarg);
			break;
		case 'c':
			count = atoi(optarg);
			break;
		case 'i':
			iters = atoi(optarg);
			break;
		case 'k':
			key = strtoull(optarg, NULL, 0);
			break;
		case 'C':
			cfile = optarg;
			break;
		case 't':
			tmo = atoi(optarg);
			break;
		case 'G':
			ngroups = atoi(optarg);
			break;
		case 'X':
			extra = 1;
			break;
		default:
			return 2;
		}
	}
	if (!n || (!ngroups && (!cfile || !count || count > MAX_LOCAL ||
				first + count > n))) {
		fprintf(stderr, "net_barrier: bad arguments\n");
		return 2;
	}
	ret = gba_dev_open(NULL, &dev);
	if (ret) {
		fprintf(stderr, "gba_dev_open: %s\n", gba_last_error(ret));
		return 1;
	}
	if (ngroups) {
		ret = groups_mode(dev, n, first, ngroups, key, iters, extra,
				  tmo);
		gba_dev_close(dev);
		return ret;
	}
	counter = map_counter(cfile);
	for (i = 0; i < count; i++)
		if (join(dev, key, n, first + i, &grp[i]))
			return 1;
	t0 = now_mono();
	for (k = 1; k <= iters; k++) {
		for (i = 0; i < count; i++) {
			atomic_fetch_add(counter, 1);
			seq[i] = gba_group_arrive(grp[i]);
		}
		for (i = 0; i < count; i++) {
			ret = gba_group_wait(grp[i], seq[i], tmo);
			if (ret) {
				printf("ERROR member %u barrier %u: %s at "
				       "%.6f\n",
				       first + i, k, strerror(-ret),
				       now_real());
				fflush(stdout);
				return 3;
			}
			if (atomic_load(counter) < (uint64_t)n * k) {
				printf("FAIL early release: member %u left "
				       "barrier %u with %llu arrivals < %llu\n",
				       first + i, k,
				       (unsigned long long)atomic_load(counter),
				       (unsigned long long)n * k);
				return 1;
			}
		}
	}
	t1 = now_mono();
	for (i = 0; i < count; i++)
		gba_group_leave(grp[i]);
	gba_dev_close(dev);
	printf("OK members %u..%u of %u: %u barriers, %.2f us each\n", first,
	       first + count - 1, n, iters, (t1 - t0) * 1e6 / iters);
	return 0;
}
