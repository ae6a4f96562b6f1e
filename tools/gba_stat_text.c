/*
 * gba_stat: the text output, in columns (gba_stat.h).
 *
 *   device emu /gba-emu-1000: ID 0x47424130 VERSION 1, 32 groups, 708 members
 * max GROUP GROUP_ID   JOB              MEMBERS ATTACHED SEQ ARRIVED STATE
 * ERROR 0 0x9a1c33f0 3d6e0c2b2f41a9c8       3        3   1     2/3 waiting none
 *         absent: member 2 (pid 4244)
 *
 *   ENDPOINT                                      JOB              PID   EP
 * ALIVE SLOTS PENDING gba-fab-1000-3d6e0c2b2f41a9c8-4245-0 3d6e0c2b2f41a9c8
 * 4245  0 yes     256       0
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "gba_stat.h"

/* Room for the absent list of a group of GBA_MAX_MEMBERS members. */
#define GBA_STAT_ABSENT_LEN 4096

static void text_job(char *buf, size_t len, uint64_t job)
{
	if (job)
		snprintf(buf, len, "%016" PRIx64, job);
	else
		snprintf(buf, len, "%-16s", "-");
}

static void text_group(FILE *out, const struct gba_group_info *g, char *absent)
{
	char job[20], arrived[24], attached[12];

	text_job(job, sizeof(job), g->job);
	snprintf(arrived, sizeof(arrived), "%" PRIu64 "/%u", g->arrival_count,
		 g->member_count);
	if (g->table)
		snprintf(attached, sizeof(attached), "%u", g->attached);
	else
		snprintf(attached, sizeof(attached), "-");
	fprintf(out, "%5u 0x%08x %s %7u %8s %10" PRIu32 " %7s %-8s %s\n",
		g->index, g->group_id, job, g->member_count, attached,
		gba_stat_seq(g), arrived, gba_stat_state(g),
		gba_stat_cause(g->error_info));
	if (g->absent) {
		gba_group_info_absent(g, absent, GBA_STAT_ABSENT_LEN);
		fprintf(out, "      absent: %s\n", absent);
	}
	if (GBA_ERROR_INFO_CAUSE(g->error_info) != GBA_ERR_NONE)
		fprintf(out,
			"      error: ERROR_INFO 0x%016" PRIx64 ": %s (member "
			"%u, sequence %u)\n",
			g->error_info, gba_strerror_info(g->error_info),
			GBA_ERROR_INFO_MEMBER(g->error_info),
			GBA_ERROR_INFO_SEQ(g->error_info));
}

static void text_groups(FILE *out, const struct gba_stat_snap *snap)
{
	char *absent = malloc(GBA_STAT_ABSENT_LEN);
	size_t i;

	if (!snap->ngroups) {
		fprintf(out, "no group in use\n");
		free(absent);
		return;
	}
	fprintf(out, "%5s %-10s %-16s %7s %8s %10s %7s %-8s %s\n", "GROUP",
		"GROUP_ID", "JOB", "MEMBERS", "ATTACHED", "SEQ", "ARRIVED",
		"STATE", "ERROR");
	for (i = 0; i < snap->ngroups; i++) {
		if (absent)
			text_group(out, &snap->groups[i], absent);
	}
	free(absent);
}

static void text_eps(FILE *out, const struct gba_stat_snap *snap)
{
	const struct gba_eng_ep_info *e;
	char job[20];
	size_t i;

	if (!snap->neps) {
		fprintf(out, "no engine endpoint\n");
		return;
	}
	fprintf(out, "%-40s %-16s %7s %4s %-5s %5s %7s\n", "ENDPOINT", "JOB",
		"PID", "EP", "ALIVE", "SLOTS", "PENDING");
	for (i = 0; i < snap->neps; i++) {
		e = &snap->eps[i];
		text_job(job, sizeof(job), e->job);
		if (e->valid)
			fprintf(out, "%-40s %s %7u %4u %-5s %5u %7u\n", e->name,
				job, e->pid, e->ep_id, e->alive ? "yes" : "no",
				e->slots, e->pending);
		else
			fprintf(out, "%-40s %s %7u %4u %-5s %5s %7s\n", e->name,
				job, e->pid, e->ep_id, e->alive ? "yes" : "no",
				"-", "-");
	}
}

int gba_stat_print_text(FILE *out, const struct gba_stat_snap *snap)
{
	const struct gba_dev_attr *a = &snap->attr;

	fprintf(out,
		"device %s %s: ID 0x%08" PRIx64 " VERSION %" PRIu64
		", %u groups, %u members max\n",
		a->backend, a->path, a->id, a->version, a->num_groups,
		a->max_members);
	fprintf(out, "this job: %016" PRIx64 " (%s)\n", snap->self_job,
		snap->self_job_key);
	if (snap->show_groups) {
		fprintf(out, "\n");
		text_groups(out, snap);
	}
	if (snap->show_eps) {
		fprintf(out, "\n");
		text_eps(out, snap);
	}
	return fflush(out) ? -1 : 0;
}
