/*
 * gba_stat - status of a GBA device: its groups in use (owner job,
 * members, sequence, who has arrived and who has not, error state) and the
 * fabric engine's endpoints of this user.  man/gba_stat.1.
 *
 *   gba_stat [-d DEVICE] [--json] [--watch[=SECONDS]] [--groups|--endpoints]
 *
 * Read-only: the device is inspected with gba_dev_group_info and the
 * engine's queues with gba_eng_ep_list; nothing is stored, no group is
 * joined.  An emulated device whose image does not exist is "no such
 * device" here (opening it would create it).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba_job.h>

#include "gba_stat.h"

static volatile sig_atomic_t gba_stat_stop;
/* --watch: seconds between frames */
static double gba_stat_period = 1.0;

const char *gba_stat_state(const struct gba_group_info *info)
{
	if (!(info->control & GBA_CTRL_ENABLE))
		return "disabled";
	if (info->status & GBA_STATUS_ERROR)
		return "error";
	if (info->arrival_count && info->arrival_count < info->member_count)
		return "waiting";
	return "idle";
}

const char *gba_stat_cause(uint64_t error_info)
{
	static const char *const names[] = {
		[GBA_ERR_NONE] = "none",
		[GBA_ERR_NOT_MEMBER] = "not-member",
		[GBA_ERR_BAD_SEQ] = "bad-seq",
		[GBA_ERR_NOT_ENABLED] = "not-enabled",
		[GBA_ERR_PEER_LOST] = "peer-lost",
	};
	unsigned cause = GBA_ERROR_INFO_CAUSE(error_info);

	return cause < sizeof(names) / sizeof(names[0]) ? names[cause]
							: "unknown";
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: gba_stat [-d DEVICE] [-j|--json] "
		"[-w|--watch[=SECONDS]]\n"
		"                [-g|--groups | -e|--endpoints]\n"
		"Status of a GBA device (default: $GBA_DEVICE, else /dev/gba0 "
		"if\n"
		"it exists, else the emulated device): groups in use, absent\n"
		"members, errors; and this user's fabric engine endpoints.\n");
}

/* The emulated device's image name for @name, or NULL if not emu. */
static const char *emu_image(const char *name, char *buf, size_t len)
{
	if (!name || !*name) {
		name = getenv(GBA_DEVICE_ENV);
		if (!name || !*name)
			name = access(GBA_DEVICE_HW_DEFAULT, F_OK) ? "emu"
								   : NULL;
		if (!name)
			return NULL;
	}
	if (!strcmp(name, "emu")) {
		snprintf(buf, len, "/gba-emu-%u", (unsigned)getuid());
		return buf;
	}
	if (!strncmp(name, "emu:", 4))
		return name + 4;
	return NULL;
}

/* Open @name without creating an emulated device's image. */
static int stat_open(const char *name, struct gba_dev **devp)
{
	char buf[64], path[300], what[300];
	const char *image = emu_image(name, buf, sizeof(buf));
	const char *env = getenv(GBA_DEVICE_ENV);
	int ret;

	if (name && *name)
		snprintf(what, sizeof(what), "%s", name);
	else if (env && *env)
		snprintf(what, sizeof(what), "GBA_DEVICE=%s", env);
	else
		snprintf(what, sizeof(what), "default device");

	if (image && *image == '/' && !strchr(image + 1, '/')) {
		snprintf(path, sizeof(path), "/dev/shm%s", image);
		if (access(path, F_OK)) {
			fprintf(stderr,
				"gba_stat: %s: no such device (the emulated "
				"device's image %s does not exist: no process "
				"has used it)\n",
				what, path);
			return -ENODEV;
		}
	}
	ret = gba_dev_open(name, devp);
	if (ret)
		fprintf(stderr, "gba_stat: cannot open device %s: %s\n", what,
			gba_last_error(ret));
	return ret;
}

static int ep_add(const struct gba_eng_ep_info *info, void *arg)
{
	struct gba_stat_snap *snap = arg;
	struct gba_eng_ep_info *eps;

	eps = realloc(snap->eps, (snap->neps + 1) * sizeof(*eps));
	if (!eps)
		return -ENOMEM;
	snap->eps = eps;
	eps[snap->neps++] = *info;
	return 0;
}

static int ep_cmp(const void *pa, const void *pb)
{
	const struct gba_eng_ep_info *a = pa, *b = pb;

	if (a->job != b->job)
		return a->job < b->job ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->ep_id < b->ep_id ? -1 : a->ep_id > b->ep_id;
}

/* Take a snapshot of @dev into @snap (groups and endpoints freed first). */
static int snap_take(struct gba_dev *dev, struct gba_stat_snap *snap)
{
	struct gba_group_info *info;
	unsigned g;
	int ret;

	snap->ngroups = 0;
	snap->neps = 0;
	ret = gba_dev_query(dev, &snap->attr);
	if (ret)
		return ret;
	if (snap->show_groups) {
		if (!snap->groups) {
			snap->groups =
				calloc(GBA_MAX_GROUPS, sizeof(*snap->groups));
			if (!snap->groups)
				return -ENOMEM;
		}
		for (g = 0; g < snap->attr.num_groups && g < GBA_MAX_GROUPS;
		     g++) {
			info = &snap->groups[snap->ngroups];
			ret = gba_dev_group_info(dev, g, info);
			if (ret)
				return ret;
			if (info->in_use)
				snap->ngroups++;
		}
	}
	if (snap->show_eps) {
		ret = gba_eng_ep_list(ep_add, snap);
		if (ret)
			return ret;
		if (snap->neps)
			qsort(snap->eps, snap->neps, sizeof(*snap->eps),
			      ep_cmp);
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	gba_stat_stop = 1;
}

/* Sleep @seconds unless interrupted. */
static void watch_sleep(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (!gba_stat_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int print_frame(const struct gba_stat_snap *snap, int json, int watch)
{
	char stamp[64];
	time_t now;

	if (json)
		return gba_stat_print_json(stdout, snap, !watch);
	if (watch) {
		now = time(NULL);
		strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S",
			 localtime(&now));
		if (isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout);
		printf("gba_stat %s, every %g s (interrupt to stop)\n", stamp,
		       gba_stat_period);
	}
	return gba_stat_print_text(stdout, snap);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"device", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},
		{"watch", optional_argument, NULL, 'w'},
		{"groups", no_argument, NULL, 'g'},
		{"endpoints", no_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct gba_stat_snap snap = {0};
	const char *device = NULL;
	int c, json = 0, watch = 0, only = 0, ret;
	struct gba_dev *dev;
	char *end;

	while ((c = getopt_long(argc, argv, "d:jw::geh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			device = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'w':
			watch = 1;
			if (optarg) {
				errno = 0;
				gba_stat_period = strtod(optarg, &end);
				if (errno || end == optarg || *end ||
				    !(gba_stat_period >= 0.01 &&
				      gba_stat_period <= 86400)) {
					fprintf(stderr,
						"gba_stat: --watch=%s: "
						"seconds between 0.01 and "
						"86400\n",
						optarg);
					return 1;
				}
			}
			break;
		case 'g':
			only |= 1;
			break;
		case 'e':
			only |= 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gba_stat: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 1;
	}
	snap.device = device ? device : "";
	snap.show_groups = !only || (only & 1);
	snap.show_eps = !only || (only & 2);
	snap.self_job = gba_job_id();
	snap.self_job_key = gba_job_key();
	if (stat_open(device, &dev))
		return 1;

	if (watch) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		setvbuf(stdout, NULL, _IOLBF, 0);
	}
	do {
		ret = snap_take(dev, &snap);
		if (ret) {
			fprintf(stderr,
				"gba_stat: cannot read the status: %s\n",
				strerror(-ret));
			break;
		}
		if (print_frame(&snap, json, watch)) {
			ret = -EIO;
			break;
		}
		if (watch)
			watch_sleep(gba_stat_period);
	} while (watch && !gba_stat_stop);

	free(snap.groups);
	free(snap.eps);
	gba_dev_close(dev);
	return ret ? 1 : 0;
}
