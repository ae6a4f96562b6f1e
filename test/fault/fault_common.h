/*
 * Common part of the fault-injection trials (gba(7), FAILURE MODES):
 * test/fault/fault_trial (libfabric) and test/fault/ucx_fault_trial
 * (UCP over the UCX transport).  A trial forks -n members of one stack,
 * which exchange checked messages in iterations; one of them, the
 * victim, is killed (SIGKILL) or stopped (SIGSTOP) after a random delay
 * (-P time) or at a fault point (include/gba/gba_fault.h), the n-th time
 * it passes it.  fault_main runs the trial and checks what the survivors
 * saw:
 *
 *   detected  every survivor ends its run with an error (a dead member:
 *             an error completion, an endpoint's error handler...) or,
 *             for a stopped member, its own deadline (-w ms per wait)
 *             expiring; the time from the fault to that is reported (max
 *             over survivors).  A stopped member is then killed, as a
 *             launcher would once the job failed: what it held (a slot of
 *             a peer's queue, a chunk) must not keep the messages of live
 *             members from the survivors;
 *   timeouts  survivors that ended by their own deadline, not by an error
 *             (for a killed member: the stack did not say, a failure);
 *   hangs     survivors still running -W ms after the fault (killed);
 *   lost      messages a member sent in an iteration that a survivor did
 *             not receive, although it waited 2 s for them (survivors
 *             stay until all have counted): from a
 *             live member, or from the victim when the stack delivers the
 *             messages of a dead sender (libfabric);
 *   dropped   the victim's messages that did not come where the stack
 *             may drop them (UCX: a chunk its receiver had not mapped
 *             yet when its sender died, uct_gba(7)), not a failure;
 *   bad       messages whose checksum, sender, size or iteration is
 *             wrong;
 *   leftovers queue and service files of the trial's job in /dev/shm
 *             that no live process holds once a new endpoint was opened
 *             after the trial (the next endpoint reaps them).  The trial
 *             is job GBA_JOB=fault-<seed>, so that the files of other
 *             programs the user runs meanwhile (make check's other
 *             tests, which kill processes too) are not counted;
 *   after     a new job (another GBA_JOB) of 3 members then runs -a
 *             fault-free iterations: 0 when it did, 1 when it failed.
 *
 * Members note in shared memory the last iteration whose messages they
 * sent, so that a survivor knows which messages it must still receive.
 * A message is fault_msg_bytes(iter) long: 256 payload bytes in odd
 * iterations, FAULT_MSG_MAX in even ones (several queue slots, a UCX
 * chunk).
 *
 * Options: -n members (3..16, default 4), -T setup timeout in s (default
 * 60), -s seed (default: time), -P point (default time), -d max delay
 * before the fault in ms (-P time, default 200), -N max passes of the
 * point (default 40), -k kill|stop|random (default random), -w per-wait
 * deadline in ms (default 2000), -W hang bound in ms after the fault
 * (default 10000), -a iterations of the job after the trial (default 20;
 * 0: none), -v.  Output, one line:
 *   fault seed=S point=P kind=kill victim=V at=D iters=I survivors=N
 *         detected=N detect_ms=X timeouts=0 hangs=0 lost=0 dropped=0
 *         bad=0 leftovers=0 after=0
 * (at: the delay in ms, or the pass of the point).  A fault at a point is
 * timed when the driver sees the victim die or stop (it looks every
 * 100 us).  Exit status 0 when the fault happened, every survivor
 * detected it and hangs, lost, bad, leftovers and after are all 0 (and
 * timeouts, for a killed member); 1 otherwise; 2 usage.
 */
#ifndef FAULT_COMMON_H
#define FAULT_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAULT_MAX_PROCS 16
#define FAULT_MSG_SMALL 256 /* odd iterations: one queue slot */
#define FAULT_MSG_MAX 6000  /* even ones: several slots, a chunk */
#define FAULT_MAX_ITERS 1000000
#define FAULT_ADDR_MAX 1024	/* a member's address, for the stack */
#define FAULT_DETECTED 10	/* exit status of a member that saw it */
#define FAULT_LOST_WAIT_MS 2000 /* a survivor waits for missing messages */

struct fault_msg {
	uint32_t rank;
	uint32_t iter;
	uint64_t sum;
	uint8_t data[FAULT_MSG_MAX];
};

/* What the members and the driver share (anonymous, before the fork). */
struct fault_shared {
	_Atomic int64_t sent[FAULT_MAX_PROCS];	    /* last iteration sent */
	_Atomic int64_t detect_us[FAULT_MAX_PROCS]; /* 0: not yet */
	_Atomic int timed_out[FAULT_MAX_PROCS];	    /* ended by deadline */
	_Atomic uint32_t lost[FAULT_MAX_PROCS];	    /* by sender */
	_Atomic uint32_t bad[FAULT_MAX_PROCS];
	_Atomic int64_t iters[FAULT_MAX_PROCS];
	_Atomic int go;	     /* members in their loop */
	_Atomic int counted; /* survivors done counting lost messages */
	_Atomic int finished; /* members done with all their iterations */
	/* the stack's: addresses and keys the members publish */
	_Atomic int published;
	/* aligned: the stacks read their records in place */
	uint8_t addr[FAULT_MAX_PROCS][FAULT_ADDR_MAX]
		__attribute__((aligned(8)));
	size_t addr_len[FAULT_MAX_PROCS];
	uint64_t rma_key[FAULT_MAX_PROCS];
	uint64_t rma_addr[FAULT_MAX_PROCS];
};

/* Options every member sees (set by fault_main before the fork). */
struct fault_opts {
	int nprocs;
	int timeout_s; /* setup */
	int wait_ms;   /* per wait of an iteration */
	bool verbose;
};
extern struct fault_opts fault_opts;

/* One stack under test. */
struct fault_stack {
	const char *name; /* "fi", "ucx" */
	/*
	 * Member @rank of @n: set up, then @iters iterations (0: until an
	 * error, FAULT_MAX_ITERS at most).  Returns its exit status: 0 (all
	 * done), FAULT_DETECTED (an error or its deadline ended it, noted
	 * with fault_detected), 1 (setup failed).
	 */
	int (*member)(int rank, int n, struct fault_shared *sh, uint32_t iters);
	/* Open and close an endpoint in this process (reaps leftovers). */
	int (*reap)(void);
	/* Fault points the stack passes (bit per enum gba_fault_point). */
	unsigned points;
	/* Messages a member sent before it died are all delivered. */
	bool delivers_dead;
};

uint64_t fault_now_ms(void);
double fault_now_us(void);

/* Bytes of the message of iteration @iter. */
size_t fault_msg_bytes(uint32_t iter);
/* Fill @m as member @rank's message of iteration @iter. */
void fault_msg_fill(struct fault_msg *m, uint32_t rank, uint32_t iter);
/*
 * Is @m, @len bytes received in iteration @iter, a message of another
 * member of @n, sent in @iter?  Its sender then in *@from.
 */
bool fault_msg_valid(const struct fault_msg *m, size_t len, uint32_t iter,
		     int n, int *from);

/* Member @rank's run ended now: by an error, or by its deadline. */
void fault_detected(struct fault_shared *sh, int rank, bool timed_out);

/*
 * A member that completed all its iterations (a fault-free run: the job
 * after a trial) stays, calling @poll(@arg), until every member of @n
 * completed them too, for at most the wait of an iteration plus
 * FAULT_LOST_WAIT_MS: a peer may still have an operation outstanding on
 * it (a put not yet executed, a flush), which its exit would fail
 * ("Connection reset", an error completion).
 */
void fault_finish(struct fault_shared *sh, int n, void (*poll)(void *),
		  void *arg);
/*
 * After the fault: every member that posted all its messages of @iter
 * (sent[] >= @iter) must have delivered the one to @rank, dead or alive
 * since.  Wait up to FAULT_LOST_WAIT_MS for them, calling @poll(@arg)
 * (which updates @got[sender]); count the ones that never come into
 * lost[] (by sender).  Then stay, polling, until the other survivors
 * counted too (up to FAULT_LOST_WAIT_MS).
 */
void fault_count_lost(struct fault_shared *sh, int rank, int n, uint32_t iter,
		      const bool *got, void (*poll)(void *), void *arg);

/*
 * Publish this member's address (@len bytes) and wait until all @n did
 * (up to fault_opts.timeout_s).  0 or -1.
 */
int fault_publish(struct fault_shared *sh, int rank, int n, const void *addr,
		  size_t len);

/* Run one trial of @stack from the command line; the program's status. */
int fault_main(int argc, char **argv, const struct fault_stack *stack);

#endif /* FAULT_COMMON_H */
