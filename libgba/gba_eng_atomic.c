/*
 * GBA core library: the fabric engine's built-in atomic executor
 * (doc/design.md section 4: 32/64-bit add, and, or, xor, swap, compare-swap
 * and their fetching forms), used when the front end brings no executor
 * of its own (struct gba_eng_ops.atomic).  Elements are updated with CPU
 * atomics, so they are atomic also against the target's own threads.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "gba_eng_priv.h"

/*
 * gba_eng_atomic_builtin - @count elements of @size (4 or 8) bytes.
 * Returns 0, or -EINVAL (unknown op or size, CSWAP without @compare,
 * misaligned @dst).
 */
int gba_eng_atomic_builtin(uint32_t op, uint32_t size, void *dst,
			   const void *operand, const void *compare,
			   void *result, size_t count)
{
	size_t i;

	if (op > GBA_ENG_AOP_CSWAP || (op == GBA_ENG_AOP_CSWAP && !compare))
		return -EINVAL;
	if ((size != 4 && size != 8) || ((uintptr_t)dst & (size - 1)))
		return -EINVAL;
	for (i = 0; i < count; i++)
		gba_eng_atomic_one(op, size, (char *)dst + i * size,
				   (const char *)operand + i * size,
				   compare ? (const char *)compare + i * size
					   : NULL,
				   result ? (char *)result + i * size : NULL);
	return 0;
}
