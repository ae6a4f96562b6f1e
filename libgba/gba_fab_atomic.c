/*
 * GBA core library: the fabric engine's built-in atomic executor
 * (DESIGN.md section 4: 32/64-bit add, and, or, xor, swap, compare-swap
 * and their fetching forms), used when the front end brings no executor
 * of its own (struct gba_fab_ops.atomic).  Elements are updated with CPU
 * atomics, so they are atomic also against the target's own threads.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "gba_fab_priv.h"

#define GBA_FAB_ATOMIC_LOOP(type)                                              \
	do {                                                                   \
		type *d = dst, *r = result, old;                               \
		const type *o = operand, *c = compare;                         \
		size_t i;                                                      \
		for (i = 0; i < count; i++) {                                  \
			switch (op) {                                          \
			case GBA_FAB_AOP_ADD:                                  \
				old = __atomic_fetch_add(&d[i], o[i],          \
							 __ATOMIC_SEQ_CST);    \
				break;                                         \
			case GBA_FAB_AOP_AND:                                  \
				old = __atomic_fetch_and(&d[i], o[i],          \
							 __ATOMIC_SEQ_CST);    \
				break;                                         \
			case GBA_FAB_AOP_OR:                                   \
				old = __atomic_fetch_or(&d[i], o[i],           \
							__ATOMIC_SEQ_CST);     \
				break;                                         \
			case GBA_FAB_AOP_XOR:                                  \
				old = __atomic_fetch_xor(&d[i], o[i],          \
							 __ATOMIC_SEQ_CST);    \
				break;                                         \
			case GBA_FAB_AOP_SWAP:                                 \
				old = __atomic_exchange_n(&d[i], o[i],         \
							  __ATOMIC_SEQ_CST);   \
				break;                                         \
			default: /* GBA_FAB_AOP_CSWAP */                       \
				old = c[i];                                    \
				__atomic_compare_exchange_n(                   \
					&d[i], &old, o[i], false,              \
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
				break;                                         \
			}                                                      \
			if (r)                                                 \
				r[i] = old;                                    \
		}                                                              \
	} while (0)

/*
 * gba_fab_atomic_builtin - @count elements of @size (4 or 8) bytes.
 * Returns 0, or -EINVAL (unknown op or size, CSWAP without @compare,
 * misaligned @dst).
 */
int gba_fab_atomic_builtin(uint32_t op, uint32_t size, void *dst,
			   const void *operand, const void *compare,
			   void *result, size_t count)
{
	if (op > GBA_FAB_AOP_CSWAP || (op == GBA_FAB_AOP_CSWAP && !compare))
		return -EINVAL;
	if ((size != 4 && size != 8) || ((uintptr_t)dst & (size - 1)))
		return -EINVAL;
	if (size == 4)
		GBA_FAB_ATOMIC_LOOP(uint32_t);
	else
		GBA_FAB_ATOMIC_LOOP(uint64_t);
	return 0;
}
