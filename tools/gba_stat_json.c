/*
 * gba_stat: the --json output (json-c), the same content as the text
 * (gba_stat.h).  64-bit register values are hex strings ("0x..."), so
 * that no JSON reader rounds them; counts and ids are numbers.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "gba_stat.h"

/* Add @key: a hex string of @v ("0x%0<width>x"). */
static void json_hex(json_object *o, const char *key, uint64_t v, int width)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%0*" PRIx64, width, v);
	json_object_object_add(o, key, json_object_new_string(buf));
}

static void json_job(json_object *o, const char *key, uint64_t job)
{
	if (job)
		json_hex(o, key, job, 16);
	else
		json_object_object_add(o, key, NULL);
}

static json_object *json_device(const struct gba_stat_snap *snap)
{
	const struct gba_dev_attr *a = &snap->attr;
	json_object *o = json_object_new_object();

	json_object_object_add(o, "backend",
			       json_object_new_string(a->backend));
	json_object_object_add(o, "path", json_object_new_string(a->path));
	json_hex(o, "id", a->id, 8);
	json_object_object_add(o, "version",
			       json_object_new_int64((int64_t)a->version));
	json_object_object_add(o, "num_groups",
			       json_object_new_int64(a->num_groups));
	json_object_object_add(o, "max_members",
			       json_object_new_int64(a->max_members));
	json_hex(o, "network_addr", a->network_addr, 16);
	return o;
}

static json_object *json_member(const struct gba_group_info *g, unsigned m)
{
	const struct gba_member_info *mi = &g->member[m];
	json_object *o = json_object_new_object();

	json_object_object_add(o, "member", json_object_new_int64(m));
	if (mi->pid)
		json_object_object_add(o, "pid",
				       json_object_new_int64(mi->pid));
	else
		json_object_object_add(o, "pid", NULL);
	/* null: unknown (a device without a control-plane table) */
	json_object_object_add(o, "alive",
			       g->table ? json_object_new_boolean(mi->alive)
					: NULL);
	json_object_object_add(o, "arrived",
			       json_object_new_boolean(mi->arrived));
	return o;
}

static int json_bit(const uint64_t *mask, unsigned m)
{
	return (mask[m / 64] >> (m % 64)) & 1;
}

static json_object *json_error(const struct gba_group_info *g)
{
	json_object *o = json_object_new_object();

	json_hex(o, "error_info", g->error_info, 16);
	json_object_object_add(
		o, "cause",
		json_object_new_string(gba_stat_cause(g->error_info)));
	json_object_object_add(
		o, "text",
		json_object_new_string(gba_strerror_info(g->error_info)));
	json_object_object_add(
		o, "member",
		json_object_new_int64(GBA_ERROR_INFO_MEMBER(g->error_info)));
	json_object_object_add(
		o, "seq",
		json_object_new_int64(GBA_ERROR_INFO_SEQ(g->error_info)));
	return o;
}

static json_object *json_group(const struct gba_group_info *g)
{
	json_object *o = json_object_new_object();
	json_object *members = json_object_new_array();
	json_object *absent = json_object_new_array();
	unsigned m;

	json_object_object_add(o, "index", json_object_new_int64(g->index));
	json_hex(o, "group_id", g->group_id, 8);
	json_job(o, "job", g->job);
	json_hex(o, "key", g->key, 16);
	json_object_object_add(o, "member_count",
			       json_object_new_int64(g->member_count));
	json_object_object_add(o, "attached",
			       g->table ? json_object_new_int64(g->attached)
					: NULL);
	json_object_object_add(o, "seq",
			       json_object_new_int64(gba_stat_seq(g)));
	json_object_object_add(
		o, "release_seq",
		json_object_new_int64((int64_t)(uint32_t)g->release_seq));
	json_object_object_add(
		o, "arrived", json_object_new_int64((int64_t)g->arrival_count));
	json_object_object_add(o, "state",
			       json_object_new_string(gba_stat_state(g)));
	json_hex(o, "control", g->control, 1);
	json_hex(o, "status", g->status, 1);
	json_object_object_add(o, "error", json_error(g));
	for (m = 0; m < g->member_count && m < GBA_MAX_MEMBERS; m++) {
		json_object_array_add(members, json_member(g, m));
		if (g->absent && json_bit(g->member_mask, m) &&
		    !g->member[m].arrived)
			json_object_array_add(absent, json_member(g, m));
	}
	json_object_object_add(o, "absent", absent);
	json_object_object_add(o, "members", members);
	return o;
}

static json_object *json_ep(const struct gba_eng_ep_info *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(e->name));
	json_job(o, "job", e->job);
	json_object_object_add(o, "pid", json_object_new_int64(e->pid));
	json_object_object_add(o, "ep", json_object_new_int64(e->ep_id));
	json_object_object_add(o, "alive", json_object_new_boolean(e->alive));
	json_object_object_add(
		o, "slots", e->valid ? json_object_new_int64(e->slots) : NULL);
	json_object_object_add(o, "pending",
			       e->valid ? json_object_new_int64(e->pending)
					: NULL);
	return o;
}

int gba_stat_print_json(FILE *out, const struct gba_stat_snap *snap, int pretty)
{
	json_object *root = json_object_new_object(), *a;
	size_t i;
	int ret;

	if (!root)
		return -1;
	json_object_object_add(root, "device", json_device(snap));
	json_hex(root, "self_job", snap->self_job, 16);
	json_object_object_add(root, "self_job_key",
			       json_object_new_string(snap->self_job_key));
	if (snap->show_groups) {
		a = json_object_new_array();
		for (i = 0; i < snap->ngroups; i++)
			json_object_array_add(a, json_group(&snap->groups[i]));
		json_object_object_add(root, "groups", a);
	}
	if (snap->show_eps) {
		a = json_object_new_array();
		for (i = 0; i < snap->neps; i++)
			json_object_array_add(a, json_ep(&snap->eps[i]));
		json_object_object_add(root, "endpoints", a);
	}
	ret = fprintf(out, "%s\n",
		      json_object_to_json_string_ext(
			      root, (pretty ? JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_SPACED
					    : JSON_C_TO_STRING_PLAIN) |
					    JSON_C_TO_STRING_NOSLASHESCAPE)) <
	      0;
	json_object_put(root);
	return ret || fflush(out) ? -1 : 0;
}
