/*
 * libfabric "gba" provider: the object locks (struct gba_lock), enabled
 * or not by the domain's threading model.
 */
#include "config.h"

#include <sched.h>

#include "gba_prov.h"

/* Spins on a held lock before yielding the CPU. */
#define GBA_LOCK_SPINS 256

/*
 * gba_lock_init - initialize @lock; a disabled lock costs one predictable
 * branch per acquire/release.  Returns 0.
 */
int gba_lock_init(struct gba_lock *lock, bool enabled)
{
	lock->enabled = enabled;
	atomic_init(&lock->locked, 0);
	return 0;
}

/* gba_lock_destroy - the lock must be free; nothing to release. */
void gba_lock_destroy(struct gba_lock *lock)
{
	lock->enabled = false;
}

/* A spin-wait hint to the CPU. */
static inline void gba_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/*
 * gba_lock_contended - wait for @lock: spin on a plain load (no cache
 * line ping-pong while it is held), retry the exchange when it looks
 * free, and yield the CPU after GBA_LOCK_SPINS spins.
 */
void gba_lock_contended(struct gba_lock *lock)
{
	unsigned spins = 0;

	do {
		while (atomic_load_explicit(&lock->locked,
					    memory_order_relaxed)) {
			if (++spins < GBA_LOCK_SPINS)
				gba_cpu_relax();
			else
				sched_yield();
		}
	} while (atomic_exchange_explicit(&lock->locked, 1,
					  memory_order_acquire));
}
