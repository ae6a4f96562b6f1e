/*
 * GBA core library: test-only fault points (gba(7), FAILURE MODES).
 * NOT part of the public API and not installed.
 *
 * A fault point is a named place in libgba, the libfabric provider or the
 * UCX transport where a process can be made to die (SIGKILL) or stop
 * (SIGSTOP) on purpose, to test what its peers see.  They are armed by
 * the environment of the process, read when it opens its first device or
 * endpoint:
 *
 *	GBA_FAULT_POINT=<point>:<n>[:stop]
 *
 * raises SIGKILL (or SIGSTOP) the <n>-th time (from 1) the process passes
 * <point>.  Unarmed, a point costs a load of a flag that is never
 * written and a branch predicted not taken (gba_fault); the counting is
 * out of line (gba_fault_reached).
 */
#ifndef GBA_FAULT_H
#define GBA_FAULT_H

#ifdef __cplusplus
extern "C" {
#endif

enum gba_fault_point {
	/* a producer between claiming a slot of a queue and publishing it */
	GBA_FAULT_SLOT,
	/* a sender with the consecutive slots of a medium message claimed,
	 * half copied (libgba); a receiver holding a sender's chunk, not
	 * yet handed to the handler nor freed (UCX) */
	GBA_FAULT_CHUNK,
	/* a target executing a peer's put or get, before the copy */
	GBA_FAULT_RMA,
	/* an arrival in the emulated switch: counted as arrived in its
	 * member's word, not yet in the group's count */
	GBA_FAULT_BARRIER,
	/* a triggered operation that fired, before it is issued (provider) */
	GBA_FAULT_TRIGGER,
	GBA_FAULT_NPOINTS
};

/* Nonzero once GBA_FAULT_POINT armed a point (gba_fault_init). */
extern int gba_fault_armed;
#ifdef GBA_FAULT_INTERNAL
/* The same flag for libgba's own points: no GOT load in libgba.so */
extern int gba_fault_armed_local __attribute__((visibility("hidden")));
#define GBA_FAULT_FLAG gba_fault_armed_local
#else
#define GBA_FAULT_FLAG gba_fault_armed
#endif

/* Read GBA_FAULT_POINT, once per process; 0 or -EINVAL (a bad value). */
int gba_fault_init(void);

/* Count a pass at @point: SIGKILL or SIGSTOP if it is the armed one's n-th. */
void gba_fault_reached(enum gba_fault_point point);

/* Name of @point as GBA_FAULT_POINT spells it, NULL if none. */
const char *gba_fault_name(enum gba_fault_point point);

/* A fault point: nothing but a predicted branch unless armed. */
static inline void gba_fault(enum gba_fault_point point)
{
	if (__builtin_expect(GBA_FAULT_FLAG, 0))
		gba_fault_reached(point);
}

#ifdef __cplusplus
}
#endif

#endif /* GBA_FAULT_H */
