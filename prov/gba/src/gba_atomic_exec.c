/*
 * libfabric "gba" provider: the atomic executor.  It updates elements in
 * this process's memory for every atomic the provider runs: the verbs'
 * direct path (gba_atomic.c), a peer's atomic that the engine hands to
 * the target (gba_atomic_exec) and the software collectives' reductions
 * (gba_coll_sw.c).  Each element is updated with one compare-and-swap
 * loop (or a single atomic load / exchange) on its 1, 2, 4 or 8 bytes,
 * so it is atomic with respect to every other atomic of the provider, in
 * any thread; there is no lock.  Which types and operations it supports
 * is the table at the top of gba_atomic.c (gba_atomic_valid).
 */
#include "config.h"

#include <string.h>

#include "gba_ep.h"

/* gba_atomic_dt_size - bytes of an element of @dt, 0 if unsupported. */
size_t gba_atomic_dt_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8:
	case FI_UINT8:
		return 1;
	case FI_INT16:
	case FI_UINT16:
		return 2;
	case FI_INT32:
	case FI_UINT32:
	case FI_FLOAT:
		return 4;
	case FI_INT64:
	case FI_UINT64:
	case FI_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

/*
 * gba_atomic_valid - true if @op on @dt is supported for @kind (the
 * table at the top of gba_atomic.c).
 */
bool gba_atomic_valid(enum fi_datatype dt, enum fi_op op,
		      enum gba_atomic_kind kind)
{
	bool is_float = dt == FI_FLOAT || dt == FI_DOUBLE;

	if (!gba_atomic_dt_size(dt))
		return false;
	switch (kind) {
	case GBA_ATOMIC_WRITE:
	case GBA_ATOMIC_FETCH:
		if (op == FI_ATOMIC_READ)
			return kind == GBA_ATOMIC_FETCH;
		if (op == FI_BOR || op == FI_BAND || op == FI_BXOR)
			return !is_float;
		return (op >= FI_MIN && op <= FI_BXOR) || op == FI_ATOMIC_WRITE;
	case GBA_ATOMIC_CMP:
		if (op == FI_MSWAP)
			return !is_float;
		return op >= FI_CSWAP && op <= FI_CSWAP_GT;
	}
	return false;
}

/*
 * New value of a target element holding @old for @op with @opnd and
 * @cmp; false if the target is left unchanged.  One function per C type,
 * generated below; the bitwise ones only for integers.  Sums and
 * products of integers are computed in unsigned types (they wrap, as the
 * hardware's would, instead of overflowing: U is the unsigned twin of T,
 * W a type wide enough that promotions cannot overflow).
 */
#define GBA_ATOMIC_ARITH(T, U, W)                                              \
	case FI_MIN:                                                           \
		*out = opnd < old ? opnd : old;                                \
		return true;                                                   \
	case FI_MAX:                                                           \
		*out = opnd > old ? opnd : old;                                \
		return true;                                                   \
	case FI_SUM:                                                           \
		*out = (T)((U)old + (U)opnd);                                  \
		return true;                                                   \
	case FI_PROD:                                                          \
		*out = (T)(U)((W)(U)old * (W)(U)opnd);                         \
		return true;                                                   \
	case FI_LOR:                                                           \
		*out = (T)(old || opnd);                                       \
		return true;                                                   \
	case FI_LAND:                                                          \
		*out = (T)(old && opnd);                                       \
		return true;                                                   \
	case FI_LXOR:                                                          \
		*out = (T)(!old != !opnd);                                     \
		return true;                                                   \
	case FI_ATOMIC_WRITE:                                                  \
		*out = opnd;                                                   \
		return true;                                                   \
	case FI_CSWAP:                                                         \
		*out = opnd;                                                   \
		return cmp == old;                                             \
	case FI_CSWAP_NE:                                                      \
		*out = opnd;                                                   \
		return cmp != old;                                             \
	case FI_CSWAP_LE:                                                      \
		*out = opnd;                                                   \
		return cmp <= old;                                             \
	case FI_CSWAP_LT:                                                      \
		*out = opnd;                                                   \
		return cmp < old;                                              \
	case FI_CSWAP_GE:                                                      \
		*out = opnd;                                                   \
		return cmp >= old;                                             \
	case FI_CSWAP_GT:                                                      \
		*out = opnd;                                                   \
		return cmp > old;

#define GBA_ATOMIC_BITS(T)                                                     \
	case FI_BOR:                                                           \
		*out = (T)(old | opnd);                                        \
		return true;                                                   \
	case FI_BAND:                                                          \
		*out = (T)(old & opnd);                                        \
		return true;                                                   \
	case FI_BXOR:                                                          \
		*out = (T)(old ^ opnd);                                        \
		return true;                                                   \
	case FI_MSWAP:                                                         \
		*out = (T)((cmp & opnd) | (~cmp & old));                       \
		return true;

#define GBA_ATOMIC_INT_FN(name, T, U)                                          \
	static bool name(enum fi_op op, T old, T opnd, T cmp, T *out)          \
	{                                                                      \
		switch (op) {                                                  \
			GBA_ATOMIC_ARITH(T, U, uintmax_t)                      \
			GBA_ATOMIC_BITS(T)                                     \
		default:                                                       \
			return false;                                          \
		}                                                              \
	}

#define GBA_ATOMIC_FLOAT_FN(name, T)                                           \
	static bool name(enum fi_op op, T old, T opnd, T cmp, T *out)          \
	{                                                                      \
		switch (op) {                                                  \
			GBA_ATOMIC_ARITH(T, T, T)                              \
		default:                                                       \
			return false;                                          \
		}                                                              \
	}

GBA_ATOMIC_INT_FN(gba_op_i8, int8_t, uint8_t)
GBA_ATOMIC_INT_FN(gba_op_u8, uint8_t, uint8_t)
GBA_ATOMIC_INT_FN(gba_op_i16, int16_t, uint16_t)
GBA_ATOMIC_INT_FN(gba_op_u16, uint16_t, uint16_t)
GBA_ATOMIC_INT_FN(gba_op_i32, int32_t, uint32_t)
GBA_ATOMIC_INT_FN(gba_op_u32, uint32_t, uint32_t)
GBA_ATOMIC_INT_FN(gba_op_i64, int64_t, uint64_t)
GBA_ATOMIC_INT_FN(gba_op_u64, uint64_t, uint64_t)
GBA_ATOMIC_FLOAT_FN(gba_op_float, float)
GBA_ATOMIC_FLOAT_FN(gba_op_double, double)

/*
 * Compute the new raw value of an element (@size bytes, in the low bytes
 * of the uint64_t's) for @dt/@op.  False: leave the target unchanged.
 */
static bool gba_atomic_compute(enum fi_datatype dt, enum fi_op op, uint64_t old,
			       const void *opnd, const void *cmp, uint64_t *out)
{
	union {
		int8_t i8;
		uint8_t u8;
		int16_t i16;
		uint16_t u16;
		int32_t i32;
		uint32_t u32;
		int64_t i64;
		uint64_t u64;
		float f;
		double d;
	} o = {.u64 = old}, a = {0}, c = {0}, r = {0};
	size_t size = gba_atomic_dt_size(dt);
	bool ret = false;

	if (opnd)
		memcpy(&a, opnd, size);
	if (cmp)
		memcpy(&c, cmp, size);
	switch (dt) {
	case FI_INT8:
		ret = gba_op_i8(op, o.i8, a.i8, c.i8, &r.i8);
		break;
	case FI_UINT8:
		ret = gba_op_u8(op, o.u8, a.u8, c.u8, &r.u8);
		break;
	case FI_INT16:
		ret = gba_op_i16(op, o.i16, a.i16, c.i16, &r.i16);
		break;
	case FI_UINT16:
		ret = gba_op_u16(op, o.u16, a.u16, c.u16, &r.u16);
		break;
	case FI_INT32:
		ret = gba_op_i32(op, o.i32, a.i32, c.i32, &r.i32);
		break;
	case FI_UINT32:
		ret = gba_op_u32(op, o.u32, a.u32, c.u32, &r.u32);
		break;
	case FI_INT64:
		ret = gba_op_i64(op, o.i64, a.i64, c.i64, &r.i64);
		break;
	case FI_UINT64:
		ret = gba_op_u64(op, o.u64, a.u64, c.u64, &r.u64);
		break;
	case FI_FLOAT:
		ret = gba_op_float(op, o.f, a.f, c.f, &r.f);
		break;
	case FI_DOUBLE:
		ret = gba_op_double(op, o.d, a.d, c.d, &r.d);
		break;
	default:
		break;
	}
	*out = r.u64;
	return ret;
}

/*
 * One element: apply @op at @target atomically; the previous value goes
 * to @result (may be NULL).
 */
#define GBA_ATOMIC_ELEM(T)                                                     \
	do {                                                                   \
		T *t = target, old, nv;                                        \
		uint64_t o64 = 0, n64;                                         \
		if (op == FI_ATOMIC_READ) {                                    \
			old = __atomic_load_n(t, __ATOMIC_ACQUIRE);            \
		} else if (op == FI_ATOMIC_WRITE) {                            \
			memcpy(&nv, opnd, sizeof(T));                          \
			old = __atomic_exchange_n(t, nv, __ATOMIC_ACQ_REL);    \
		} else {                                                       \
			old = __atomic_load_n(t, __ATOMIC_RELAXED);            \
			do {                                                   \
				memcpy(&o64, &old, sizeof(T));                 \
				if (!gba_atomic_compute(dt, op, o64, opnd,     \
							cmp, &n64))            \
					break;                                 \
				memcpy(&nv, &n64, sizeof(T));                  \
			} while (!__atomic_compare_exchange_n(                 \
				t, &old, nv, false, __ATOMIC_ACQ_REL,          \
				__ATOMIC_RELAXED));                            \
		}                                                              \
		if (result)                                                    \
			memcpy(result, &old, sizeof(T));                       \
	} while (0)

void gba_atomic_elem(enum fi_datatype dt, enum fi_op op, void *target,
		     const void *opnd, const void *cmp, void *result)
{
	switch (gba_atomic_dt_size(dt)) {
	case 1:
		GBA_ATOMIC_ELEM(uint8_t);
		break;
	case 2:
		GBA_ATOMIC_ELEM(uint16_t);
		break;
	case 4:
		GBA_ATOMIC_ELEM(uint32_t);
		break;
	case 8:
		GBA_ATOMIC_ELEM(uint64_t);
		break;
	}
}

/*
 * gba_atomic_exec - the target side of a peer's atomic (gba_prov.h):
 * @count elements of @op on @dt at @dst, old values into @result.
 */
int gba_atomic_exec(void *ctx, uint32_t op, uint32_t dt, void *dst,
		    const void *operand, const void *compare, void *result,
		    size_t count)
{
	size_t size = gba_atomic_dt_size(dt), i;
	enum gba_atomic_kind kind;
	uint8_t *t = dst;

	(void)ctx;
	if (op >= FI_CSWAP && op <= FI_MSWAP)
		kind = GBA_ATOMIC_CMP;
	else if (op == FI_ATOMIC_READ || result)
		kind = GBA_ATOMIC_FETCH;
	else
		kind = GBA_ATOMIC_WRITE;
	if (!gba_atomic_valid(dt, op, kind) || ((uintptr_t)dst & (size - 1)) ||
	    (kind == GBA_ATOMIC_CMP && !compare))
		return -EINVAL;
	for (i = 0; i < count; i++, t += size)
		gba_atomic_elem(dt, op, t,
				op == FI_ATOMIC_READ
					? NULL
					: (const uint8_t *)operand + i * size,
				compare ? (const uint8_t *)compare + i * size
					: NULL,
				result ? (uint8_t *)result + i * size : NULL);
	return 0;
}
