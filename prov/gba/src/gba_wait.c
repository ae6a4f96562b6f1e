/* Wait objects (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_wait_init(struct gba_wait *wait, enum fi_wait_obj type)
{
	wait->type = type;
	wait->fd = -1;
	atomic_init(&wait->waiters, 0);
	return 0;
}
void gba_wait_fini(struct gba_wait *wait)
{
}
void gba_wait_signal(struct gba_wait *wait)
{
}
int gba_wait_block(struct gba_wait *wait, int timeout_ms)
{
	return -FI_EAGAIN;
}
