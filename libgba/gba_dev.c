/* Temporary stubs: the device layer is being implemented. */
#include "config.h"
#include <errno.h>
#include "gba_backend.h"

int gba_dev_open(const char *name, struct gba_dev **devp) { return -ENOSYS; }
void gba_dev_close(struct gba_dev *dev) { }
int gba_dev_query(const struct gba_dev *dev, struct gba_dev_attr *attr) { return -ENOSYS; }
int gba_group_join(struct gba_dev *dev, const struct gba_group_attr *attr,
		   struct gba_group **grpp) { return -ENOSYS; }
int gba_group_leave(struct gba_group *grp) { return -ENOSYS; }
uint32_t gba_group_arrive(struct gba_group *grp) { return 0; }
int gba_group_test(struct gba_group *grp, uint32_t seq) { return -ENOSYS; }
int gba_group_wait(struct gba_group *grp, uint32_t seq, int timeout_ms) { return -ENOSYS; }
int gba_group_barrier(struct gba_group *grp) { return -ENOSYS; }
void gba_group_ring(struct gba_group *grp, uint64_t doorbell) { }
int gba_group_diag(const struct gba_group *grp, struct gba_group_diag *diag) { return -ENOSYS; }
const char *gba_strerror_info(uint64_t error_info) { return "unknown"; }
