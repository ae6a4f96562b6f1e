/*
 * tsan_criterion - lets Criterion's runner start under ThreadSanitizer
 * (make check-tsan; preloaded by the --enable-tsan build's test
 * environment, never installed or shipped in a library).
 *
 * Criterion (BoxFort) maps its inheritable arena at a random address
 * 0x2000'0000'0000 + r * 16 MiB, r = rand_r() & 0x3fffff, and gives up
 * after a few candidates that are already mapped ("Could not initialize
 * inheritable arena").  ThreadSanitizer reserves nearly all of that range
 * for its shadow, meta and trace memory; its only application range
 * there is the PIE range 0x5500'0000'0000..0x5680'0000'0000, which a
 * random r hits about once in 45 draws.  rand_r() called from
 * libcriterion returns a value whose low 22 bits fall in that range;
 * every other caller gets the C library's value unchanged.  BoxFort still
 * checks each candidate with mincore() and maps it MAP_FIXED only when
 * free, so nothing of the process is overwritten.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* r * 16 MiB + 0x2000'0000'0000 in [0x5500'0000'0000, 0x5680'0000'0000) */
#define TSAN_PIE_R_FIRST 0x350000
#define TSAN_PIE_R_COUNT 0x18000

/* Is @pc inside libcriterion? */
static int from_criterion(void *pc)
{
	Dl_info info;

	return dladdr(pc, &info) && info.dli_fname &&
	       strstr(info.dli_fname, "libcriterion.so");
}

/*
 * rand_r(3): the next value of @seed's sequence; for libcriterion, that
 * value moved into the range above (still pseudo-random).
 */
int rand_r(unsigned int *seed)
{
	static int (*next_rand_r)(unsigned int *);
	int v;

	if (!next_rand_r)
		next_rand_r =
			(int (*)(unsigned int *))dlsym(RTLD_NEXT, "rand_r");
	v = next_rand_r(seed);
	if (from_criterion(__builtin_return_address(0)))
		v = TSAN_PIE_R_FIRST + v % TSAN_PIE_R_COUNT;
	return v;
}
