/*
 * GBA core library: opening a device and choosing its backend.
 *
 * Name resolution (gba_dev_open):
 *   NULL or ""    $GBA_DEVICE if set and non-empty, else /dev/gba0 if it
 *                 exists, else the emulated device
 *   "emu"         emulated device, image "/gba-emu-<uid>"
 *   "emu:/NAME"   emulated device, image "/NAME"
 *   "emu+tcp://HOST:PORT"
 *                 emulated switch served by gba_switchd on HOST:PORT for
 *                 many hosts (gba_net.c)
 *   "hw:PATH"     hardware backend on PATH
 *   anything else hardware backend on that path
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <gba/gba_fault.h>

#include "gba_backend.h"

/* Longest image name accepted after "emu:" (POSIX shm names live in a
 * directory, so NAME_MAX applies). */
#define GBA_EMU_NAME_MAX 250

static int emu_name_valid(const char *name)
{
	size_t len = strlen(name);

	return len >= 2 && len <= GBA_EMU_NAME_MAX && name[0] == '/' &&
	       !strchr(name + 1, '/');
}

static int dev_open_backend(struct gba_dev *dev, const char *name)
{
	char emu_default[64];

	if (!strcmp(name, "emu")) {
		snprintf(emu_default, sizeof(emu_default), "/gba-emu-%u",
			 (unsigned)geteuid());
		return gba_emu_init(dev, emu_default);
	}
	if (!strncmp(name, "emu+tcp://", 10))
		return gba_net_init(dev, name);
	if (!strncmp(name, "emu:", 4)) {
		if (!emu_name_valid(name + 4))
			return -EINVAL;
		return gba_emu_init(dev, name + 4);
	}
	if (!strncmp(name, "hw:", 3))
		name += 3;
	if (!*name)
		return -EINVAL;
	return gba_hw_init(dev, name);
}

int gba_dev_open(const char *name, struct gba_dev **devp)
{
	struct gba_dev *dev;
	const char *env;
	int ret;

	gba_err_clear();
	gba_fault_init();
	if (!devp)
		return -EINVAL;
	*devp = NULL;
	if (!name || !*name) {
		env = getenv(GBA_DEVICE_ENV);
		if (env && *env)
			name = env;
		else if (!access(GBA_DEVICE_HW_DEFAULT, F_OK))
			name = GBA_DEVICE_HW_DEFAULT;
		else
			name = "emu";
	}

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->fd = -1;
	dev->lock_fd = -1;
	pthread_mutex_init(&dev->mutex, NULL);

	ret = dev_open_backend(dev, name);
	if (ret) {
		pthread_mutex_destroy(&dev->mutex);
		free(dev->path);
		free(dev);
		return ret;
	}
	*devp = dev;
	return 0;
}

void gba_dev_close(struct gba_dev *dev)
{
	if (!dev)
		return;
	while (dev->groups)
		gba_group_leave(dev->groups);
	dev->ops->fini(dev);
	pthread_mutex_destroy(&dev->mutex);
	free(dev->path);
	free(dev);
}

int gba_dev_query(const struct gba_dev *cdev, struct gba_dev_attr *attr)
{
	struct gba_dev *dev = (struct gba_dev *)cdev;

	if (!dev || !attr)
		return -EINVAL;
	attr->id = dev->ops->read64(dev, GBA_REG_ID);
	attr->version = dev->ops->read64(dev, GBA_REG_VERSION);
	attr->num_groups = (uint32_t)dev->ops->read64(dev, GBA_REG_NUM_GROUPS);
	attr->max_members =
		(uint32_t)dev->ops->read64(dev, GBA_REG_MAX_MEMBERS);
	attr->network_addr = dev->ops->read64(dev, GBA_REG_NETWORK_ADDR);
	attr->backend = dev->ops->name;
	attr->path = dev->path;
	return 0;
}

int gba_dev_spans_hosts(const struct gba_dev *dev)
{
	return dev && dev->ops->spans_hosts;
}

const char *gba_strerror_info(uint64_t error_info)
{
	switch (GBA_ERROR_INFO_CAUSE(error_info)) {
	case GBA_ERR_NONE:
		return "no error";
	case GBA_ERR_NOT_MEMBER:
		return "arrival from a non-member";
	case GBA_ERR_BAD_SEQ:
		return "arrival with a sequence number outside the current epoch";
	case GBA_ERR_NOT_ENABLED:
		return "arrival while the group is not enabled";
	case GBA_ERR_PEER_LOST:
		return "a member of the group went away";
	default:
		return "unknown error cause";
	}
}

/*
 * Control-plane lock: the pthread mutex serialises threads of this process
 * (flock does not: they share the open file description), the flock
 * serialises processes and is dropped by the kernel if the holder dies.
 * After fork the child shares the parent's open file description, so
 * flock would not exclude the two: the child reopens its own descriptor.
 */
int gba_flock(struct gba_dev *dev, int (*reopen)(struct gba_dev *dev))
{
	int ret;

	pthread_mutex_lock(&dev->mutex);
	if (dev->lock_pid != getpid()) {
		ret = reopen(dev);
		if (ret < 0) {
			pthread_mutex_unlock(&dev->mutex);
			return ret;
		}
		/* the inherited descriptor is the parent's; don't close
		 * the parent's shared one if it is also dev->fd */
		if (dev->lock_fd >= 0 && dev->lock_fd != dev->fd)
			close(dev->lock_fd);
		dev->lock_fd = ret;
		dev->lock_pid = getpid();
	}
	while (flock(dev->lock_fd, LOCK_EX)) {
		if (errno != EINTR) {
			ret = -errno;
			pthread_mutex_unlock(&dev->mutex);
			return ret;
		}
	}
	return 0;
}

void gba_funlock(struct gba_dev *dev)
{
	flock(dev->lock_fd, LOCK_UN);
	pthread_mutex_unlock(&dev->mutex);
}
