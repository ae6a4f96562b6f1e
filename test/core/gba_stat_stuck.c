/*
 * Helper of test/core/gba_stat.sh: a deliberately stuck barrier and an
 * engine endpoint for gba_stat(1) to show.  Uses libgba's public API
 * (the shipped libgba.so); the device is $GBA_DEVICE.
 *
 *   gba_stat_stuck barrier DIR TIMEOUT_MS
 *	Forks members 0, 1 and 2 of one 3-member group.  Once all joined
 *	(DIR/pids: "P0 P1 P2"), members 0 and 1 arrive at barrier 1
 *	(DIR/arrived.M) and wait for it with TIMEOUT_MS; member 2 never
 *	arrives (it sleeps until killed).  Each waiter must time out and
 *	logs "member M: barrier S timed out after T ms; absent: <list>"
 *	(the list of gba_group_absent, as the provider and the UCX
 *	transport log it) on stdout, then DIR/timedout.M.  After DIR/again
 *	appears (member 2 killed meanwhile) they wait again, must fail
 *	with -EPIPE (a member died) and log "member M: barrier S failed:
 *	<error>; absent: <list>".  After DIR/exit they leave.  Exit 0 if
 *	both waiters saw that, 1 if not, 99 on a setup failure.
 *
 *   gba_stat_stuck endpoint DIR
 *	Opens an engine endpoint, sends one message to itself and does not
 *	progress (so one entry stays pending), writes "PID EP_ID" to
 *	DIR/ep, and closes it after DIR/exit appears.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba.h>
#include <gba/gba_eng.h>

#include "gba_eng_noop.h"

#define STUCK_KEY 0x5157a7ULL
#define STUCK_MEMBERS 3
/* Longest wait for a file of the test script. */
#define STUCK_FILE_WAIT_S 30

static const char *dir;

static void touch(const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

/* Wait for DIR/@name; 0 when it exists, -1 after STUCK_FILE_WAIT_S. */
static int await(const char *name)
{
	struct timespec ts = {0, 20 * 1000 * 1000};
	char path[512];
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < STUCK_FILE_WAIT_S * 50; i++) {
		if (!access(path, F_OK))
			return 0;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "gba_stat_stuck: %s did not appear\n", path);
	return -1;
}

/* Wait for barrier @seq with @timeout_ms and log the outcome. */
static int wait_log(struct gba_group *grp, unsigned m, uint32_t seq,
		    int timeout_ms)
{
	char absent[512];
	int ret = gba_group_wait(grp, seq, timeout_ms);

	if (gba_group_absent(grp, absent, sizeof(absent)) < 0)
		snprintf(absent, sizeof(absent), "unknown");
	if (ret == -ETIMEDOUT)
		printf("member %u: barrier %u timed out after %d ms; absent: "
		       "%s\n",
		       m, seq, timeout_ms, absent);
	else
		printf("member %u: barrier %u failed: %s; absent: %s\n", m, seq,
		       ret ? strerror(-ret) : "released (no error)", absent);
	fflush(stdout);
	return ret;
}

static int member(unsigned m, int timeout_ms, int ready_fd)
{
	struct gba_group_attr attr = {.key = STUCK_KEY,
				      .member_count = STUCK_MEMBERS,
				      .member_id = m};
	struct gba_group *grp;
	struct gba_dev *dev;
	char name[32];
	uint32_t seq;
	int ret, ok;

	ret = gba_dev_open(NULL, &dev);
	if (!ret)
		ret = gba_group_join(dev, &attr, &grp);
	if (ret) {
		fprintf(stderr, "gba_stat_stuck: member %u: %s\n", m,
			gba_last_error(ret));
		return 99;
	}
	if (write(ready_fd, "j", 1) != 1)
		return 99;
	close(ready_fd);
	if (m == 2)
		for (;;)
			pause(); /* never arrives */
	if (await("pids"))
		return 99;
	seq = gba_group_arrive(grp);
	snprintf(name, sizeof(name), "arrived.%u", m);
	touch(name);
	ok = wait_log(grp, m, seq, timeout_ms) == -ETIMEDOUT;
	snprintf(name, sizeof(name), "timedout.%u", m);
	touch(name);
	if (await("again"))
		return 99;
	ok &= wait_log(grp, m, seq, 10 * 1000) == -EPIPE;
	snprintf(name, sizeof(name), "failed.%u", m);
	touch(name);
	if (await("exit"))
		return 99;
	gba_group_leave(grp);
	gba_dev_close(dev);
	return ok ? 0 : 1;
}

static int barrier(int timeout_ms)
{
	pid_t pid[STUCK_MEMBERS];
	int fds[2], st, ret = 0;
	char path[512], c;
	unsigned m;
	FILE *f;

	if (pipe(fds))
		return 99;
	for (m = 0; m < STUCK_MEMBERS; m++) {
		pid[m] = fork();
		if (pid[m] < 0)
			return 99;
		if (!pid[m]) {
			close(fds[0]);
			_exit(member(m, timeout_ms, fds[1]));
		}
	}
	close(fds[1]);
	for (m = 0; m < STUCK_MEMBERS; m++)
		if (read(fds[0], &c, 1) != 1) {
			fprintf(stderr, "gba_stat_stuck: a member did not "
					"join\n");
			return 99;
		}
	snprintf(path, sizeof(path), "%s/pids.tmp", dir);
	f = fopen(path, "w");
	if (!f)
		return 99;
	fprintf(f, "%d %d %d\n", (int)pid[0], (int)pid[1], (int)pid[2]);
	fclose(f);
	snprintf(path, sizeof(path), "%s/pids", dir);
	{
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%s/pids.tmp", dir);
		if (rename(tmp, path))
			return 99;
	}
	/* member 2 is the script's to kill */
	for (m = 0; m < 2; m++) {
		if (waitpid(pid[m], &st, 0) != pid[m] || !WIFEXITED(st))
			ret = 99;
		else if (WEXITSTATUS(st) && !ret)
			ret = WEXITSTATUS(st);
	}
	return ret;
}

static int endpoint(void)
{
	struct gba_eng_ep_attr attr = {.ops = &gba_eng_noop_ops};
	struct gba_eng_peer *peer;
	struct gba_eng_ep *ep;
	char msg[] = "pending", path[512], tmp[512];
	struct iovec iov = {msg, sizeof(msg)};
	FILE *f;
	int ret;

	ret = gba_eng_ep_open(&attr, &ep);
	if (!ret)
		ret = gba_eng_peer_get(ep, gba_eng_ep_addr(ep), &peer);
	if (!ret)
		ret = gba_eng_send(ep, peer, &iov, 1, 0, 0, 0, 0);
	if (ret != 1) {
		fprintf(stderr, "gba_stat_stuck: endpoint: %s\n",
			gba_last_error(ret));
		return 99;
	}
	snprintf(tmp, sizeof(tmp), "%s/ep.tmp", dir);
	snprintf(path, sizeof(path), "%s/ep", dir);
	f = fopen(tmp, "w");
	if (!f)
		return 99;
	fprintf(f, "%u %u\n", (unsigned)gba_eng_ep_addr(ep)->pid,
		(unsigned)gba_eng_ep_addr(ep)->ep_id);
	fclose(f);
	if (rename(tmp, path) || await("exit"))
		return 99;
	gba_eng_ep_close(ep);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "barrier")) {
		dir = argv[2];
		return barrier(atoi(argv[3]));
	}
	if (argc == 3 && !strcmp(argv[1], "endpoint")) {
		dir = argv[2];
		return endpoint();
	}
	fprintf(stderr, "usage: gba_stat_stuck barrier DIR TIMEOUT_MS\n"
			"       gba_stat_stuck endpoint DIR\n");
	return 99;
}
