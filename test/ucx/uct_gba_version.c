/*
 * Unit test of the version check of libuct_gba.so (uct_gba_version_check):
 * only the exact UCX version the module was built against is accepted, and
 * a refusal explains itself.
 */
#include <stdio.h>
#include <string.h>

#include "gba_version.h"

static int failures;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n",         \
				__FILE__, __LINE__, #cond);                  \
			failures++;                                          \
		}                                                            \
	} while (0)

static void refused(unsigned r0, unsigned r1, unsigned r2, const char *expect)
{
	static const unsigned built[3] = {1, 13, 1};
	unsigned running[3] = {r0, r1, r2};
	char msg[256];

	memset(msg, 0, sizeof(msg));
	CHECK(uct_gba_version_check(built, running, msg, sizeof(msg)) == 0);
	if (strcmp(msg, expect)) {
		fprintf(stderr, "message:  %s\nexpected: %s\n", msg, expect);
		failures++;
	}
	/* no message buffer: still a refusal */
	CHECK(uct_gba_version_check(built, running, NULL, 0) == 0);
}

int main(void)
{
	static const unsigned built[3] = {1, 13, 1};
	char msg[256] = "untouched", small[16];

	/* the same version: accepted, the message is left alone */
	CHECK(uct_gba_version_check(built, built, msg, sizeof(msg)) == 1);
	CHECK(!strcmp(msg, "untouched"));

	/* any difference, up or down, in any part: refused */
	refused(1, 13, 2,
		"uct_gba: libuct_gba.so was built for UCX 1.13.1 but the "
		"running UCX is 1.13.2; the gba transport is not registered "
		"(rebuild libuct_gba.so against the installed UCX)");
	refused(1, 13, 0,
		"uct_gba: libuct_gba.so was built for UCX 1.13.1 but the "
		"running UCX is 1.13.0; the gba transport is not registered "
		"(rebuild libuct_gba.so against the installed UCX)");
	refused(1, 14, 1,
		"uct_gba: libuct_gba.so was built for UCX 1.13.1 but the "
		"running UCX is 1.14.1; the gba transport is not registered "
		"(rebuild libuct_gba.so against the installed UCX)");
	refused(2, 13, 1,
		"uct_gba: libuct_gba.so was built for UCX 1.13.1 but the "
		"running UCX is 2.13.1; the gba transport is not registered "
		"(rebuild libuct_gba.so against the installed UCX)");

	/* a short buffer is truncated and terminated */
	{
		unsigned running[3] = {1, 12, 0};

		memset(small, 'x', sizeof(small));
		CHECK(uct_gba_version_check(built, running, small,
					    sizeof(small)) == 0);
		CHECK(small[sizeof(small) - 1] == '\0');
		CHECK(!strncmp(small, "uct_gba: libuct", sizeof(small) - 1));
	}

	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("uct_gba_version: all checks passed\n");
	return 0;
}
