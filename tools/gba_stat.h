/*
 * gba_stat: the device status tool (man/gba_stat.1).  One snapshot of a
 * device's groups in use and of the fabric engine's endpoints, printed as
 * text (gba_stat_text.c) or JSON (gba_stat_json.c); gba_stat.c parses
 * the command line, takes the snapshots and repeats them for --watch.
 */
#ifndef GBA_STAT_H
#define GBA_STAT_H

#include <stddef.h>
#include <stdio.h>

#include <gba/gba.h>
#include <gba/gba_eng.h>

struct gba_stat_snap {
	const char *device; /* the name given, "" for default */
	struct gba_dev_attr attr;
	int show_groups;	       /* the groups section */
	int show_eps;		       /* the endpoints section */
	uint64_t self_job;	       /* gba_job_id() of this process */
	const char *self_job_key;      /* gba_job_key() */
	size_t ngroups;		       /* groups in use */
	struct gba_group_info *groups; /* [ngroups] */
	size_t neps;
	struct gba_eng_ep_info *eps; /* [neps], sorted by job, pid, ep */
};

/* "disabled", "error", "waiting" (a barrier in progress) or "idle". */
const char *gba_stat_state(const struct gba_group_info *info);
/* Short name of ERROR_INFO's cause: "none", "not-member", "bad-seq",
 * "not-enabled", "peer-lost" or "unknown". */
const char *gba_stat_cause(uint64_t error_info);
/* The sequence number being collected: RELEASE_SEQ + 1 (32-bit). */
static inline uint32_t gba_stat_seq(const struct gba_group_info *info)
{
	return (uint32_t)info->release_seq + 1;
}

/* Print @snap as text / as one JSON document (@pretty: indented). */
int gba_stat_print_text(FILE *out, const struct gba_stat_snap *snap);
int gba_stat_print_json(FILE *out, const struct gba_stat_snap *snap,
			int pretty);

#endif /* GBA_STAT_H */
