/*
 * libgba_barrier: the offload decision of an MPI communicator.
 *
 * The first barrier of a communicator decides, with all its members at
 * once, whether its barriers run on a device group:
 *
 *  1. Each member states whether it can offload (the library enabled, a
 *     provider with collectives opened, the program not in
 *     MPI_THREAD_MULTIPLE, no earlier failed join) and its endpoint name:
 *     one PMPI_Allgather.  If any member cannot, none offloads.
 *  2. Each member joins the collective of the members in rank order
 *     (fi_join_collective) and asks the provider whether its barrier runs
 *     on a device group: no device, every group in use (across all the
 *     jobs of the device), or more members than the device takes leave it
 *     in software.  One PMPI_Allreduce (MAX) agrees: if any member's
 *     barrier would not run on the device, all leave the collective and
 *     fall back to PMPI_Barrier.  So a communicator is never half on the
 *     device and half in software, even when another job takes or frees
 *     a group between two members' joins.
 *
 * Communicators with identical membership (MPI_Comm_dup) get distinct
 * groups: the provider's rendezvous counts the joins of an identical
 * member list, and every member makes the same decisions in the same
 * order because they are collective.  A join that fails in one member
 * only (an error, not a fallback) would put its count out of step with
 * the others', so after one the members of that communicator offload
 * nothing more (GBO_OUT_OF_ORDER).  MPI_THREAD_MULTIPLE programs are not
 * offloaded for the same reason: two threads of a process may create the
 * groups of two communicators in an order that differs between processes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gbo_comm.h"

/* What a member says of itself in step 1 (64 bytes). */
struct gbo_card {
	int32_t reason;
	uint32_t name_len;
	uint8_t name[GBO_NAME_MAX];
};

static struct gbo_comm *gbo_live;
static int gbo_out_of_order;
static int gbo_finalize_done;

static void gbo_live_add(struct gbo_comm *c)
{
	c->prev = NULL;
	c->next = gbo_live;
	if (gbo_live)
		gbo_live->prev = c;
	gbo_live = c;
}

static void gbo_live_del(struct gbo_comm *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (gbo_live == c)
		gbo_live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

/* Step 1 for this member: GBO_OFFLOADED if it can offload. */
static enum gbo_reason gbo_local_reason(void)
{
	int level;

	if (!gbo_params.enable)
		return GBO_DISABLED;
	if (gbo_out_of_order)
		return GBO_OUT_OF_ORDER;
	if (PMPI_Query_thread(&level) == MPI_SUCCESS &&
	    level == MPI_THREAD_MULTIPLE)
		return GBO_THREAD_MULTIPLE;
	return gbo_fabric_open();
}

/* Step 2: join, ask the provider, agree.  Returns the decision. */
static int gbo_comm_join(MPI_Comm comm, struct gbo_comm *c,
			 const struct gbo_card *cards, int size, int rank)
{
	uint32_t *lens;
	int mine, agreed, ret, i;

	lens = malloc(size * sizeof(*lens));
	if (!lens)
		return MPI_ERR_NO_MEM;
	for (i = 0; i < size; i++)
		lens[i] = cards[i].name_len;
	mine = gbo_set_join(&c->set, cards[0].name, sizeof(*cards), lens,
			    (uint32_t)size, (uint32_t)rank);
	free(lens);
	ret = PMPI_Allreduce(&mine, &agreed, 1, MPI_INT, MPI_MAX, comm);
	if (ret != MPI_SUCCESS)
		agreed = GBO_JOIN_FAILED;
	if (agreed != GBO_OFFLOADED && mine != GBO_JOIN_FAILED)
		gbo_set_leave(&c->set, 0);
	if (agreed == GBO_JOIN_FAILED) {
		gbo_out_of_order = 1;
		gbo_log(0, "a member's join failed: no more offload for the "
			   "members of this communicator");
	}
	c->reason = agreed;
	return ret;
}

int gbo_comm_create(MPI_Comm comm, struct gbo_comm **cp)
{
	struct gbo_card mine = {0}, *cards;
	int size, rank, inter, ret, i;
	struct gbo_comm *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		return MPI_ERR_NO_MEM;
	ret = PMPI_Comm_test_inter(comm, &inter);
	if (ret == MPI_SUCCESS && inter) {
		c->reason = GBO_INTERCOMM; /* not collective: no agreement */
		goto out;
	}
	if (ret == MPI_SUCCESS)
		ret = PMPI_Comm_size(comm, &size);
	if (ret == MPI_SUCCESS)
		ret = PMPI_Comm_rank(comm, &rank);
	if (ret != MPI_SUCCESS) {
		free(c);
		return ret;
	}
	if (size == 1) {
		c->reason = GBO_ONE_MEMBER;
		goto out;
	}
	mine.reason = gbo_local_reason();
	if (mine.reason == GBO_OFFLOADED)
		gbo_fabric_name(mine.name, &mine.name_len);
	cards = malloc(size * sizeof(*cards));
	if (!cards) {
		free(c);
		return MPI_ERR_NO_MEM;
	}
	ret = PMPI_Allgather(&mine, sizeof(mine), MPI_BYTE, cards,
			     sizeof(mine), MPI_BYTE, comm);
	if (ret == MPI_SUCCESS) {
		c->reason = GBO_OFFLOADED;
		for (i = 0; i < size && c->reason == GBO_OFFLOADED; i++)
			c->reason = cards[i].reason;
		if (c->reason == GBO_OFFLOADED)
			ret = gbo_comm_join(comm, c, cards, size, rank);
	}
	free(cards);
	if (ret != MPI_SUCCESS) {
		free(c);
		return ret;
	}
	if (c->reason == GBO_OFFLOADED) {
		gbo_stats.sets++;
		if (++gbo_stats.held > gbo_stats.held_max)
			gbo_stats.held_max = gbo_stats.held;
		gbo_log(2, "%d members: barrier on device group %u", size,
			c->set.group_index);
	} else if (rank == 0) {
		gbo_log(1, "%d members: barrier stays in software: %s", size,
			gbo_reason_str(c->reason));
	}
out:
	gbo_live_add(c);
	*cp = c;
	return MPI_SUCCESS;
}

/* Leave @c's group, if it holds one. */
static void gbo_comm_leave(struct gbo_comm *c)
{
	if (c->reason != GBO_OFFLOADED)
		return;
	gbo_set_leave(&c->set, 1);
	gbo_stats.held--;
}

void gbo_comm_free(struct gbo_comm *c)
{
	if (!c)
		return;
	gbo_comm_leave(c);
	gbo_live_del(c);
	free(c);
}

void gbo_comm_finalize(void)
{
	struct gbo_comm *c;

	if (gbo_finalize_done)
		return;
	gbo_finalize_done = 1;
	while ((c = gbo_live)) {
		gbo_comm_leave(c);
		c->reason = GBO_FINALIZED;
		gbo_live_del(c);
	}
	gbo_stats_report();
	gbo_fabric_close();
}

void gbo_comm_idle(void)
{
	int flag;

	PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag,
		    MPI_STATUS_IGNORE);
}

int gbo_comm_finalized(void)
{
	return gbo_finalize_done;
}
