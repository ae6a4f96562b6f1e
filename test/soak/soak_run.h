/*
 * The start and the end of a soak run.  The start: once every member is
 * set up and past its first round, rank 0 creates the file named by
 * SOAK_READY_FILE (soak_sample.sh's cue to start its warm-up).  The end,
 * agreed by all members without a message: rank 0 decides, the others
 * learn it from shared memory.  Every member calls soak_stop_after()
 * once it completed the collective step (a barrier) of round @k; all
 * members stop after the same round.
 */
#ifndef SOAK_RUN_H
#define SOAK_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct soak_stop {
	atomic_long last; /* 0, or the last round of the run */
};

/*
 * Called by every member after it completed round @k's barrier.  The run
 * ends after round @max_k (0: no bound) or, decided by rank 0, after the
 * round following the one it completed at @end_ms (0: no bound).
 * Rank 0 publishes last = k + 1 before it arrives at barrier k + 1, so
 * that every member completing barrier k + 1 sees it, and no member can
 * have completed k + 1 before.  Returns true when @k was the last round.
 */
bool soak_stop_after(struct soak_stop *s, int rank, long k, long max_k,
		     uint64_t end_ms);

/*
 * Called by every member after round @k: rank 0 creates SOAK_READY_FILE
 * (if set) after round 1, when every member has joined and run a round.
 */
void soak_ready(int rank, long k);

#endif
