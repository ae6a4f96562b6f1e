/*
 * GBA core library: process identity and liveness of group members.
 *
 * A member is recorded as (pid, start time).  kill(pid, 0) alone is not
 * enough: it succeeds for zombies (a member that exited but has not been
 * reaped by its parent is dead for our purposes) and for a recycled pid.
 * /proc/PID/stat gives both the state and the start time.  These checks
 * cost syscalls; they run only on the control plane and in the slow,
 * rate-limited part of waiting.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gba_backend.h"

uint64_t gba_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Read state and start time (low 32 bits) of @pid from /proc/PID/stat.
 * Returns 0, or -ESRCH if the process does not exist, or another negative
 * errno if /proc cannot be read.
 */
static int proc_stat(pid_t pid, char *state, uint32_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n == 0 ? -ESRCH : -errno;
	buf[n] = '\0';

	/* "pid (comm) S ..."; comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	*state = *p;
	/* the state is field 3; the start time is field 22 */
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return -EINVAL;
	st = strtoull(p, NULL, 10);
	*start = (uint32_t)st;
	return 0;
}

uint64_t gba_proc_slot(pid_t pid)
{
	uint32_t start = 0;
	char state;

	if (pid <= 0)
		return 0;
	if (proc_stat(pid, &state, &start))
		return pid == getpid() ? (uint32_t)pid : 0;
	return ((uint64_t)start << 32) | (uint32_t)pid;
}

uint64_t gba_proc_self_slot(void)
{
	return gba_proc_slot(getpid());
}

int gba_proc_slot_alive(uint64_t slot)
{
	pid_t pid = GBA_SLOT_PID(slot);
	uint32_t start;
	char state;
	int ret;

	if (!slot || pid <= 0)
		return 0;
	if (pid == getpid())
		return 1;
	if (kill(pid, 0) && errno == ESRCH)
		return 0;
	ret = proc_stat(pid, &state, &start);
	if (ret == -ESRCH)
		return 0;
	if (ret)
		return 1;	/* cannot tell (no /proc): kill() said alive */
	if (state == 'Z' || state == 'X')
		return 0;
	/* a start time of 0 was recorded when /proc was unreadable */
	if (GBA_SLOT_START(slot) && start != GBA_SLOT_START(slot))
		return 0;	/* pid recycled */
	return 1;
}
