/* Triggered operations (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_trigger_queue(struct gba_cntr *cntr, struct gba_trigger *trig)
{
	return -FI_ENOSYS;
}
void gba_trigger_fire(struct gba_cntr *cntr)
{
}
void gba_trigger_drain(struct gba_cntr *cntr)
{
}
