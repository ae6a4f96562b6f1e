/*
 * Address vectors and AV sets of the gba provider through the stock
 * libfabric: insert/remove/lookup/straddr for FI_AV_TABLE and FI_AV_MAP,
 * insertsvc/insertsym, FI_EVENT and FI_SYNC_ERR reporting, and the AV set
 * operations.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "prov_common.h"

TestSuite(av, .init = prov_setup, .fini = prov_teardown, .timeout = 60);
TestSuite(av_set, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

static struct fid_av *open_av(enum fi_av_type type, uint64_t flags)
{
	struct fi_av_attr attr = {.type = type, .count = 8, .flags = flags};
	struct fid_av *av;
	int ret;

	ret = fi_av_open(t_domain, &attr, &av, NULL);
	cr_assert_eq(ret, 0, "fi_av_open: %s", fi_strerror(-ret));
	return av;
}

static void fill(struct gba_addr *a, size_t n, uint32_t first_ep)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = prov_addr(1000, first_ep + (uint32_t)i);
}

static void check_insert_lookup(enum fi_av_type type)
{
	struct fid_av *av = open_av(type, 0);
	struct gba_addr a[300], out;
	fi_addr_t fa[300];
	size_t len;
	int i;

	fill(a, 300, 1);
	cr_assert_eq(fi_av_insert(av, a, 300, fa, 0, NULL), 300);
	for (i = 0; i < 300; i++) {
		cr_assert_neq(fa[i], FI_ADDR_NOTAVAIL);
		if (type == FI_AV_TABLE)
			cr_expect_eq(fa[i], (fi_addr_t)i,
				     "FI_AV_TABLE indices are consecutive");
		len = sizeof(out);
		cr_assert_eq(fi_av_lookup(av, fa[i], &out, &len), 0);
		cr_expect_eq(len, sizeof(out));
		cr_expect_eq(memcmp(&out, &a[i], sizeof(out)), 0);
	}
	cr_expect_eq(fi_close(&av->fid), 0);
}

/*
 * fi_av_insert's addr is any buffer of the caller's: addresses packed at
 * an odd offset (as a program passing them through a byte stream has
 * them) are inserted and looked up as aligned ones (UBSan flagged the
 * provider reading them in place).
 */
Test(av, insert_unaligned)
{
	struct fid_av *av = open_av(FI_AV_TABLE, 0);
	struct gba_addr a[3], out;
	char buf[3 * sizeof(a[0]) + 1];
	fi_addr_t fa[3];
	size_t len;
	int i;

	fill(a, 3, 40);
	memcpy(buf + 1, a, sizeof(a));
	cr_assert_eq(fi_av_insert(av, buf + 1, 3, fa, 0, NULL), 3);
	for (i = 0; i < 3; i++) {
		len = sizeof(out);
		cr_assert_eq(fi_av_lookup(av, fa[i], &out, &len), 0);
		cr_expect_eq(memcmp(&out, &a[i], sizeof(out)), 0);
	}
	cr_expect_eq(fi_close(&av->fid), 0);
}

Test(av, insert_lookup_table)
{
	check_insert_lookup(FI_AV_TABLE);
}

Test(av, insert_lookup_map)
{
	check_insert_lookup(FI_AV_MAP);
}

static void check_remove(enum fi_av_type type)
{
	struct fid_av *av = open_av(type, 0);
	struct gba_addr a[4], out;
	fi_addr_t fa[4], again;
	size_t len = sizeof(out);

	fill(a, 4, 10);
	cr_assert_eq(fi_av_insert(av, a, 4, fa, 0, NULL), 4);
	cr_expect_eq(fi_av_remove(av, &fa[1], 1, 0), 0);
	cr_expect_eq(fi_av_lookup(av, fa[1], &out, &len), -FI_EINVAL,
		     "removed address must not be found");
	cr_expect_eq(fi_av_remove(av, &fa[1], 1, 0), -FI_EINVAL,
		     "double remove");
	len = sizeof(out);
	cr_expect_eq(fi_av_lookup(av, fa[2], &out, &len), 0);
	cr_expect_eq(memcmp(&out, &a[2], sizeof(out)), 0);
	/* reinsert */
	cr_assert_eq(fi_av_insert(av, &a[1], 1, &again, 0, NULL), 1);
	if (type == FI_AV_TABLE)
		cr_expect_eq(again, 4, "FI_AV_TABLE does not reuse indices");
	else
		cr_expect_eq(again, fa[1], "FI_AV_MAP reuses the free slot");
	cr_expect_eq(fi_av_remove(av, fa, 1, 1), -FI_EBADFLAGS);
	cr_expect_eq(fi_av_remove(av, NULL, 1, 0), -FI_EINVAL);
	{
		fi_addr_t bogus = 12345;

		cr_expect_eq(fi_av_remove(av, &bogus, 1, 0), -FI_EINVAL);
	}
	cr_expect_eq(fi_close(&av->fid), 0);
}

Test(av, remove_table)
{
	check_remove(FI_AV_TABLE);
}

Test(av, remove_map)
{
	check_remove(FI_AV_MAP);
}

Test(av, bad_addresses_sync)
{
	struct fid_av *av = open_av(FI_AV_TABLE, 0);
	struct gba_addr a[3];
	fi_addr_t fa[3];
	int err[3] = {-1, -1, -1};

	fill(a, 3, 1);
	a[1].magic = 0xdeadbeef;
	cr_expect_eq(fi_av_insert(av, a, 3, fa, 0, NULL), 2);
	cr_expect_neq(fa[0], FI_ADDR_NOTAVAIL);
	cr_expect_eq(fa[1], FI_ADDR_NOTAVAIL);
	cr_expect_neq(fa[2], FI_ADDR_NOTAVAIL);
	cr_expect_eq(fi_av_insert(av, a, 3, NULL, FI_SYNC_ERR, err), 2);
	cr_expect_eq(err[0], 0);
	cr_expect_eq(err[1], FI_EINVAL);
	cr_expect_eq(err[2], 0);
	cr_expect_eq(fi_av_insert(av, a, 3, NULL, FI_SYNC_ERR, NULL),
		     -FI_EINVAL);
	cr_expect_eq(fi_av_insert(av, NULL, 3, fa, 0, NULL), -FI_EINVAL);
	cr_expect_eq(fi_av_insert(av, a, 1, fa, FI_AV_USER_ID, NULL),
		     -FI_EBADFLAGS);
	cr_expect_eq(fi_av_insert(av, a, 0, fa, 0, NULL), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
}

Test(av, async_events)
{
	struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};
	struct fid_av *av = open_av(FI_AV_MAP, FI_EVENT);
	struct fi_eq_err_entry err = {0};
	struct fi_eq_entry entry;
	struct gba_addr a[3];
	fi_addr_t fa[3];
	struct fid_eq *eq;
	uint32_t event;
	int ctx;

	fill(a, 3, 1);
	a[2].version = 99;
	cr_expect_eq(fi_av_insert(av, a, 3, fa, 0, &ctx), -FI_ENOEQ,
		     "FI_EVENT AV without EQ");
	cr_assert_eq(fi_eq_open(t_fabric, &eq_attr, &eq, NULL), 0);
	cr_expect_eq(fi_av_bind(av, &t_domain->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_av_bind(av, &eq->fid, 0), 0);
	cr_expect_eq(fi_av_bind(av, &eq->fid, 0), -FI_EINVAL, "rebind");
	cr_expect_eq(fi_av_insert(av, a, 3, fa, 0, &ctx), 0,
		     "FI_EVENT inserts return 0");
	cr_expect_eq(fi_av_insert(av, a, 1, NULL, FI_SYNC_ERR, &ctx),
		     -FI_EBADFLAGS);
	/* error entry for index 2 first, then FI_AV_COMPLETE with 2 */
	cr_assert_eq(fi_eq_sread(eq, &event, &entry, sizeof(entry), 1000, 0),
		     -FI_EAVAIL);
	cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
	cr_expect_eq(err.fid, &av->fid);
	cr_expect_eq(err.context, &ctx);
	cr_expect_eq(err.data, 2);
	cr_expect_eq(err.err, FI_EINVAL);
	cr_assert_eq(fi_eq_sread(eq, &event, &entry, sizeof(entry), 1000, 0),
		     sizeof(entry));
	cr_expect_eq(event, FI_AV_COMPLETE);
	cr_expect_eq(entry.fid, &av->fid);
	cr_expect_eq(entry.context, &ctx);
	cr_expect_eq(entry.data, 2);
	cr_expect_neq(fa[0], FI_ADDR_NOTAVAIL);
	cr_expect_eq(fa[2], FI_ADDR_NOTAVAIL);
	/* zero addresses still complete */
	cr_expect_eq(fi_av_insert(av, a, 0, NULL, 0, &ctx), 0);
	cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     sizeof(entry));
	cr_expect_eq(entry.data, 0);
	cr_expect_eq(fi_close(&eq->fid), -FI_EBUSY, "EQ bound to the AV");
	cr_expect_eq(fi_close(&av->fid), 0);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

/*
 * FI_EVENT inserts into an EQ smaller than their results: every
 * per-address error entry and the FI_AV_COMPLETE arrive.
 */
Test(av, async_events_full_eq)
{
	struct fi_eq_attr eq_attr = {.size = 4, .wait_obj = FI_WAIT_NONE};
	struct fid_av *av = open_av(FI_AV_MAP, FI_EVENT);
	struct fi_eq_err_entry err;
	struct fi_eq_entry entry;
	struct gba_addr a[32];
	fi_addr_t fa[32];
	struct fid_eq *eq;
	uint32_t event;
	size_t i;
	int ctx;

	fill(a, 32, 1);
	for (i = 0; i < 32; i += 2)
		a[i].version = 99; /* 16 invalid addresses */
	cr_assert_eq(fi_eq_open(t_fabric, &eq_attr, &eq, NULL), 0);
	cr_assert_eq(fi_av_bind(av, &eq->fid, 0), 0);
	cr_expect_eq(fi_av_insert(av, a, 32, fa, 0, &ctx), 0);
	for (i = 0; i < 32; i += 2) {
		cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
			     -FI_EAVAIL, "error entry of address %zu", i);
		memset(&err, 0, sizeof(err));
		cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
		cr_expect_eq(err.data, i);
		cr_expect_eq(err.err, FI_EINVAL);
		cr_expect_eq(err.context, &ctx);
	}
	cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     sizeof(entry), "FI_AV_COMPLETE after the errors");
	cr_expect_eq(event, FI_AV_COMPLETE);
	cr_expect_eq(entry.data, 16);
	cr_expect_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     -FI_EAGAIN);
	cr_expect_eq(fi_close(&av->fid), 0);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(av, lookup_bounds)
{
	struct fid_av *av = open_av(FI_AV_TABLE, 0);
	struct gba_addr a = prov_addr(77, 5), out;
	uint8_t small[8];
	fi_addr_t fa;
	size_t len;

	cr_assert_eq(fi_av_insert(av, &a, 1, &fa, 0, NULL), 1);
	memset(small, 0xee, sizeof(small));
	len = 4;
	cr_expect_eq(fi_av_lookup(av, fa, small, &len), 0);
	cr_expect_eq(len, sizeof(struct gba_addr), "needed size reported");
	cr_expect_eq(memcmp(small, &a, 4), 0);
	cr_expect_eq(small[4], 0xee, "no write beyond the given length");
	cr_expect_eq(fi_av_lookup(av, fa, NULL, NULL), -FI_EINVAL);
	len = sizeof(out);
	cr_expect_eq(fi_av_lookup(av, fa, NULL, &len), -FI_EINVAL);
	len = 0;
	cr_expect_eq(fi_av_lookup(av, fa, NULL, &len), 0);
	cr_expect_eq(len, sizeof(struct gba_addr));
	len = sizeof(out);
	cr_expect_eq(fi_av_lookup(av, 99, &out, &len), -FI_EINVAL);
	cr_expect_eq(fi_av_lookup(av, FI_ADDR_NOTAVAIL, &out, &len),
		     -FI_EINVAL);
	cr_expect_eq(fi_close(&av->fid), 0);
}

Test(av, straddr)
{
	struct fid_av *av = open_av(FI_AV_TABLE, 0);
	struct gba_addr a = prov_addr(1234, 56), back;
	char buf[GBA_ADDR_STRLEN], tiny[8], expect[GBA_ADDR_STRLEN];
	size_t len = sizeof(buf);
	const char *s;

	gba_addr_str(&a, expect, sizeof(expect));
	s = fi_av_straddr(av, &a, buf, &len);
	cr_assert_eq(s, buf);
	cr_expect_str_eq(buf, expect);
	cr_expect_eq(len, strlen(expect) + 1);
	cr_expect_eq(strncmp(buf, "gba://", 6), 0);
	cr_expect_eq(gba_addr_parse(buf, &back), 0);
	cr_expect(gba_addr_equal(&back, &a));

	len = sizeof(tiny);
	s = fi_av_straddr(av, &a, tiny, &len);
	cr_assert_eq(s, tiny);
	cr_expect_eq(strlen(tiny), sizeof(tiny) - 1, "truncated, terminated");
	cr_expect_eq(len, strlen(expect) + 1, "needed size reported");

	memset(&back, 0, sizeof(back));
	len = sizeof(buf);
	s = fi_av_straddr(av, &back, buf, &len);
	cr_expect_str_eq(s, "gba://invalid");
	cr_expect_null(fi_av_straddr(av, &a, NULL, &len));
	cr_expect_null(fi_av_straddr(av, &a, buf, NULL));
	cr_expect_eq(fi_close(&av->fid), 0);
}

Test(av, insertsvc_insertsym)
{
	struct fid_av *av = open_av(FI_AV_TABLE, 0);
	struct gba_addr a = prov_addr(4321, 9), out;
	char name[GBA_ADDR_STRLEN];
	fi_addr_t fa[4];
	size_t len = sizeof(out);
	int i;

	gba_addr_str(&a, name, sizeof(name));
	cr_assert_eq(fi_av_insertsvc(av, name, NULL, &fa[0], 0, NULL), 1);
	cr_assert_eq(fi_av_lookup(av, fa[0], &out, &len), 0);
	cr_expect(gba_addr_equal(&out, &a));

	cr_assert_eq(fi_av_insertsvc(av, "localhost", "77", &fa[0], 0, NULL),
		     1);
	len = sizeof(out);
	cr_assert_eq(fi_av_lookup(av, fa[0], &out, &len), 0);
	cr_expect_eq(out.pid, (uint32_t)getpid());
	cr_expect_eq(out.ep_id, 77);

	cr_assert_eq(fi_av_insertsvc(av, NULL, "55/3", &fa[0], 0, NULL), 1);
	len = sizeof(out);
	cr_assert_eq(fi_av_lookup(av, fa[0], &out, &len), 0);
	cr_expect_eq(out.pid, 55);
	cr_expect_eq(out.ep_id, 3);

	cr_expect_eq(fi_av_insertsvc(av, "no.such.host.invalid", "1", &fa[0], 0,
				     NULL),
		     -FI_EINVAL);
	cr_expect_eq(fa[0], FI_ADDR_NOTAVAIL);
	cr_expect_eq(fi_av_insertsvc(av, NULL, NULL, &fa[0], 0, NULL),
		     -FI_EINVAL);
	cr_expect_eq(fi_av_insertsvc(av, name, "1", &fa[0], 0, NULL),
		     -FI_EINVAL, "gba:// node with a service");

	cr_assert_eq(fi_av_insertsym(av, "localhost", 1, "100", 4, fa, 0, NULL),
		     4);
	for (i = 0; i < 4; i++) {
		len = sizeof(out);
		cr_assert_eq(fi_av_lookup(av, fa[i], &out, &len), 0);
		cr_expect_eq(out.ep_id, 100 + (uint32_t)i);
	}
	cr_expect_eq(fi_av_insertsym(av, "localhost", 2, "1", 1, fa, 0, NULL),
		     -FI_EINVAL, "only one node can be named");
	cr_expect_eq(fi_av_insertsym(av, "localhost", 1, "1", 0, fa, 0, NULL),
		     -FI_EINVAL);
	cr_expect_eq(fi_close(&av->fid), 0);
}

Test(av, open_bad_args)
{
	struct fi_av_attr attr = {.type = FI_AV_TABLE};
	struct fid_av *av;

	cr_expect_eq(fi_av_open(t_domain, NULL, &av, NULL), -FI_EINVAL);
	attr.type = (enum fi_av_type)9;
	cr_expect_eq(fi_av_open(t_domain, &attr, &av, NULL), -FI_EINVAL);
	attr.type = FI_AV_TABLE;
	attr.name = "gba-av-test-nobody-created-this";
	attr.flags = FI_READ;
	cr_expect_eq(fi_av_open(t_domain, &attr, &av, NULL), -FI_ENOENT);
	attr.flags = 0;
	attr.name = NULL;
	attr.rx_ctx_bits = 4;
	cr_expect_eq(fi_av_open(t_domain, &attr, &av, NULL), -FI_ENOSYS);
	attr.rx_ctx_bits = 0;
	attr.flags = FI_READ;
	cr_expect_eq(fi_av_open(t_domain, &attr, &av, NULL), -FI_EINVAL);
	attr.flags = 0;
	attr.count = GBA_AV_MAX_SIZE + 1;
	cr_expect_eq(fi_av_open(t_domain, &attr, &av, NULL), -FI_EINVAL);
	attr.count = 0;
	attr.type = FI_AV_UNSPEC;
	cr_assert_eq(fi_av_open(t_domain, &attr, &av, NULL), 0);
	cr_expect_eq(fi_av_bind(av, NULL, 0), -FI_EINVAL);
	cr_expect_eq(fi_close(&t_domain->fid), -FI_EBUSY, "AV open");
	cr_expect_eq(fi_close(&av->fid), 0);
}

Test(av, reverse_lookup_internal_contract)
{
	/* gba_av_find is the provider's; check it through the object. */
	struct fid_av *av_fid = open_av(FI_AV_TABLE, 0);
	struct gba_av *av = container_of(av_fid, struct gba_av, av_fid);
	struct gba_addr a[3];
	fi_addr_t fa[3];

	fill(a, 3, 40);
	cr_assert_eq(fi_av_insert(av_fid, a, 3, fa, 0, NULL), 3);
	cr_expect_eq(gba_av_find(av, &a[1]), fa[1]);
	cr_expect_not_null(gba_av_addr(av, fa[2]));
	cr_expect_null(gba_av_addr(av, 3));
	cr_expect_null(gba_av_addr(av, FI_ADDR_NOTAVAIL));
	/* duplicate: the first copy is found, then the second once removed */
	cr_assert_eq(fi_av_insert(av_fid, &a[1], 1, &fa[0], 0, NULL), 1);
	cr_expect_eq(gba_av_find(av, &a[1]), fa[1]);
	cr_assert_eq(fi_av_remove(av_fid, &fa[1], 1, 0), 0);
	cr_expect_eq(gba_av_find(av, &a[1]), fa[0]);
	cr_assert_eq(fi_av_remove(av_fid, &fa[0], 1, 0), 0);
	cr_expect_eq(gba_av_find(av, &a[1]), FI_ADDR_NOTAVAIL);
	cr_expect_eq(fi_close(&av_fid->fid), 0);
}

/* ---- AV sets ------------------------------------------------------------ */

static struct fid_av *t_av;
static fi_addr_t t_fa[10];

static void av10(void)
{
	struct gba_addr a[10];

	t_av = open_av(FI_AV_TABLE, 0);
	fill(a, 10, 1);
	cr_assert_eq(fi_av_insert(t_av, a, 10, t_fa, 0, NULL), 10);
}

static struct fid_av_set *set_range(fi_addr_t start, fi_addr_t end,
				    uint64_t stride, uint64_t flags)
{
	struct fi_av_set_attr attr = {
		.count = 10,
		.start_addr = start,
		.end_addr = end,
		.stride = stride,
		.flags = flags,
	};
	struct fid_av_set *set;
	int ret = fi_av_set(t_av, &attr, &set, NULL);

	cr_assert_eq(ret, 0, "fi_av_set: %s", fi_strerror(-ret));
	return set;
}

static void expect_members(struct fid_av_set *fid, const fi_addr_t *m, size_t n)
{
	struct gba_av_set *set =
		container_of(fid, struct gba_av_set, av_set_fid);
	size_t i;

	cr_assert_eq(set->count, n, "set has %zu members, expected %zu",
		     set->count, n);
	for (i = 0; i < n; i++)
		cr_expect_eq(set->members[i], m[i], "member %zu", i);
}

Test(av_set, range_and_universe)
{
	struct fid_av_set *s;
	fi_addr_t coll;

	av10();
	s = set_range(0, 9, 2, 0);
	expect_members(s, (fi_addr_t[]){0, 2, 4, 6, 8}, 5);
	cr_expect_eq(fi_av_set_addr(s, &coll), 0);
	cr_expect_eq(gba_av_set_from_addr(coll),
		     container_of(s, struct gba_av_set, av_set_fid));
	cr_expect_eq(fi_close(&s->fid), 0);

	s = set_range(3, 3, 0, 0);
	expect_members(s, (fi_addr_t[]){3}, 1);
	cr_expect_eq(fi_close(&s->fid), 0);

	s = set_range(0, 0, 0, FI_UNIVERSE);
	expect_members(s, t_fa, 10);
	cr_expect_eq(fi_close(&s->fid), 0);

	s = set_range(FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL, 0, 0);
	expect_members(s, NULL, 0);
	cr_expect_eq(fi_close(&s->fid), 0);

	cr_expect_eq(fi_close(&t_av->fid), 0);
}

Test(av_set, bad_attrs)
{
	struct fi_av_set_attr attr = {
		.start_addr = 0, .end_addr = 20, .stride = 1};
	struct fid_av_set *s;

	av10();
	cr_expect_eq(fi_av_set(t_av, &attr, &s, NULL), -FI_EINVAL,
		     "range beyond the AV");
	attr.end_addr = 5;
	attr.stride = 0;
	cr_expect_eq(fi_av_set(t_av, &attr, &s, NULL), -FI_EINVAL, "stride 0");
	attr.start_addr = 6;
	attr.stride = 1;
	cr_expect_eq(fi_av_set(t_av, &attr, &s, NULL), -FI_EINVAL,
		     "end before start");
	attr.start_addr = 0;
	attr.comm_key_size = 4;
	cr_expect_eq(fi_av_set(t_av, &attr, &s, NULL), -FI_ENOSYS);
	attr.comm_key_size = 0;
	attr.flags = FI_SYNC_ERR;
	cr_expect_eq(fi_av_set(t_av, &attr, &s, NULL), -FI_EINVAL);
	cr_expect_eq(fi_av_set(t_av, NULL, &s, NULL), -FI_EINVAL);
	cr_expect_eq(fi_close(&t_av->fid), 0);
}

Test(av_set, insert_remove)
{
	struct fid_av_set *s;

	av10();
	s = set_range(FI_ADDR_NOTAVAIL, 0, 0, 0);
	cr_expect_eq(fi_av_set_insert(s, 4), 0);
	cr_expect_eq(fi_av_set_insert(s, 1), 0);
	cr_expect_eq(fi_av_set_insert(s, 7), 0);
	cr_expect_eq(fi_av_set_insert(s, 1), -FI_EINVAL, "duplicate");
	cr_expect_eq(fi_av_set_insert(s, 10), -FI_EINVAL, "not in the AV");
	expect_members(s, (fi_addr_t[]){4, 1, 7}, 3);
	cr_expect_eq(fi_av_set_remove(s, 1), 0);
	cr_expect_eq(fi_av_set_remove(s, 1), -FI_EINVAL);
	expect_members(s, (fi_addr_t[]){4, 7}, 2);
	/* an address removed from the AV cannot be inserted */
	cr_assert_eq(fi_av_remove(t_av, &t_fa[9], 1, 0), 0);
	cr_expect_eq(fi_av_set_insert(s, 9), -FI_EINVAL);
	cr_expect_eq(fi_close(&t_av->fid), -FI_EBUSY, "AV set open");
	cr_expect_eq(fi_close(&s->fid), 0);
	cr_expect_eq(fi_close(&t_av->fid), 0);
}

Test(av_set, union_intersect_diff)
{
	struct fid_av_set *a, *b, *c, *other;
	struct fid_av *av2;
	struct gba_addr x = prov_addr(1, 1);
	fi_addr_t fx;

	av10();
	a = set_range(0, 4, 1, 0); /* 0 1 2 3 4 */
	b = set_range(3, 9, 3, 0); /* 3 6 9 */
	c = set_range(0, 9, 2, 0); /* 0 2 4 6 8 */

	cr_expect_eq(fi_av_set_union(a, b), 0);
	expect_members(a, (fi_addr_t[]){0, 1, 2, 3, 4, 6, 9}, 7);
	cr_expect_eq(fi_av_set_intersect(a, c), 0);
	expect_members(a, (fi_addr_t[]){0, 2, 4, 6}, 4);
	cr_expect_eq(fi_av_set_diff(c, a), 0);
	expect_members(c, (fi_addr_t[]){8}, 1);
	cr_expect_eq(fi_av_set_union(a, a), 0);
	expect_members(a, (fi_addr_t[]){0, 2, 4, 6}, 4);
	cr_expect_eq(fi_av_set_diff(b, b), 0);
	expect_members(b, NULL, 0);

	av2 = open_av(FI_AV_TABLE, 0);
	cr_assert_eq(fi_av_insert(av2, &x, 1, &fx, 0, NULL), 1);
	{
		struct fi_av_set_attr attr = {.start_addr = 0, .end_addr = 0};

		cr_assert_eq(fi_av_set(av2, &attr, &other, NULL), 0);
	}
	cr_expect_eq(fi_av_set_union(a, other), -FI_EINVAL, "other AV");
	cr_expect_eq(fi_av_set_intersect(a, other), -FI_EINVAL);
	cr_expect_eq(fi_av_set_diff(a, other), -FI_EINVAL);
	cr_expect_eq(fi_av_set_union(a, (struct fid_av_set *)&t_av->fid),
		     -FI_EINVAL, "not a set");
	cr_expect_eq(fi_av_set_addr(a, NULL), -FI_EINVAL);

	cr_expect_eq(fi_close(&other->fid), 0);
	cr_expect_eq(fi_close(&av2->fid), 0);
	cr_expect_eq(fi_close(&a->fid), 0);
	cr_expect_eq(fi_close(&b->fid), 0);
	cr_expect_eq(fi_close(&c->fid), 0);
	cr_expect_eq(fi_close(&t_av->fid), 0);
}

/* A named AV: another opener with FI_READ sees its entries, read-only. */
Test(av, shared_named)
{
	struct fi_av_attr attr = {.type = FI_AV_TABLE}, rattr;
	struct gba_addr a[3], got;
	struct fid_av *av, *rav;
	fi_addr_t fa[3], *map;
	size_t len = sizeof(got);
	char name[64];
	int i;

	snprintf(name, sizeof(name), "av-test-%d", (int)getpid());
	attr.name = name;
	cr_assert_eq(fi_av_open(t_domain, &attr, &av, NULL), 0);
	for (i = 0; i < 3; i++)
		a[i] = prov_addr(getpid(), 500 + (uint32_t)i);
	cr_assert_eq(fi_av_insert(av, a, 3, fa, 0, NULL), 3);
	cr_assert_eq(fi_av_remove(av, &fa[1], 1, 0), 0);

	rattr = attr;
	rattr.flags = FI_READ;
	cr_assert_eq(fi_av_open(t_domain, &rattr, &rav, NULL), 0);
	map = rattr.map_addr;
	cr_assert_not_null(map);
	cr_expect_eq(map[0], fa[0]);
	cr_expect_eq(map[2], fa[2]);
	cr_assert_eq(fi_av_lookup(rav, map[2], &got, &len), 0);
	cr_expect_eq(memcmp(&got, &a[2], sizeof(got)), 0);
	cr_expect_eq(fi_av_lookup(rav, map[1], &got, &len), -FI_EINVAL,
		     "removed before the import");
	/* an entry the creator adds later is seen by the reader */
	cr_assert_eq(fi_av_insert(av, &a[1], 1, &fa[1], 0, NULL), 1);
	cr_expect_eq(map[fa[1]], fa[1]);
	cr_assert_eq(fi_av_lookup(rav, map[fa[1]], &got, &len), 0);
	cr_expect_eq(memcmp(&got, &a[1], sizeof(got)), 0);
	cr_expect_eq(fi_av_insert(rav, a, 1, fa, 0, NULL), -FI_EACCES,
		     "read-only");
	cr_expect_eq(fi_av_remove(rav, &map[0], 1, 0), -FI_EACCES);
	cr_expect_eq(fi_close(&rav->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
	/* the creator's close removed the name */
	cr_expect_eq(fi_av_open(t_domain, &rattr, &rav, NULL), -FI_ENOENT);
}

/* The table of a named AV as gba_av_shared.c lays it out. */
struct shm_view {
	uint64_t magic;
	uint32_t capacity;
	uint32_t count;
	struct {
		struct gba_addr addr;
		uint32_t used;
		uint32_t pad;
	} entries[];
};

/*
 * A reader of a named AV does not trust the table, which any process of
 * the user can write: a capacity and count grown after the import (the
 * reader's refresh read past its mapping) and an entry that is not a gba
 * address (imported as one) are refused.
 */
Test(av, shared_named_corrupt_table)
{
	struct fi_av_attr attr = {.type = FI_AV_TABLE, .count = 4}, rattr;
	struct gba_addr a = prov_addr(getpid(), 600), got;
	struct fid_av *av, *rav;
	struct shm_view *view;
	size_t len = sizeof(got);
	char name[64], shm[128];
	fi_addr_t fa;
	int fd;

	snprintf(name, sizeof(name), "av-corrupt-%d", (int)getpid());
	snprintf(shm, sizeof(shm), "/gba-av-%u-%s", (unsigned)getuid(), name);
	attr.name = name;
	cr_assert_eq(fi_av_open(t_domain, &attr, &av, NULL), 0);
	cr_assert_eq(fi_av_insert(av, &a, 1, &fa, 0, NULL), 1);
	rattr = attr;
	rattr.flags = FI_READ;
	cr_assert_eq(fi_av_open(t_domain, &rattr, &rav, NULL), 0);

	fd = shm_open(shm, O_RDWR, 0);
	cr_assert_geq(fd, 0, "%s", shm);
	view = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	cr_assert_neq(view, MAP_FAILED);
	cr_assert_eq(view->capacity, 4);
	memset(&view->entries[1].addr, 0x5a, sizeof(view->entries[1].addr));
	view->entries[1].used = 1;
	view->capacity = 1u << 30;
	view->count = 1u << 30;

	cr_expect_eq(fi_av_lookup(rav, 1, &got, &len), -FI_EINVAL,
		     "an entry that is not an address is not imported");
	cr_expect_eq(fi_av_lookup(rav, 3000, &got, &len), -FI_EINVAL);
	cr_expect_eq(fi_av_lookup(rav, 0, &got, &len), 0);
	cr_expect_eq(memcmp(&got, &a, sizeof(got)), 0);
	/* the creator does not write past its table either: fi_addr 4 is
	 * not shared (entries 0..3) */
	for (fd = 1; fd <= 4; fd++) {
		a = prov_addr(getpid(), 600 + (uint32_t)fd);
		cr_assert_eq(fi_av_insert(av, &a, 1, &fa, 0, NULL), 1);
		cr_assert_eq(fa, (fi_addr_t)fd);
	}
	cr_expect_eq(view->entries[3].used, 1);
	cr_expect_eq(view->entries[4].used, 0);
	munmap(view, 4096);
	cr_expect_eq(fi_close(&rav->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
}
