/*
 * Built by test/install/installed.sh with `pkg-config --cflags --libs
 * uct-gba` against the installed <gba/uct_gba.h> (and UCX's headers) and
 * libuct_gba.so: links the group API and prints its limits.
 * Prints "uct_gba_pc: ok <groups>x<members>" and exits 0.
 */
#include <stdio.h>

#include <gba/uct_gba.h>

int main(void)
{
	/* referenced, so the link must resolve it in libuct_gba.so */
	ucs_status_t (*arrive)(uct_gba_group_h, uint32_t *) =
		uct_gba_group_arrive;

	if (!arrive)
		return 1;
	printf("uct_gba_pc: ok %dx%d\n", UCT_GBA_MAX_GROUPS,
	       UCT_GBA_GROUP_MAX_MEMBERS);
	return 0;
}
