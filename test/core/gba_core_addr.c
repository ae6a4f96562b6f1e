/*
 * Endpoint addresses (gba_addr.h): local init, validation, reachability,
 * printable form and its parser, FNV-1a hashing, host id.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gba/gba_addr.h>

Test(addr, layout)
{
	cr_expect_eq(sizeof(struct gba_addr), 24);
	cr_expect_eq(GBA_ADDR_MAGIC, 0x41414247u);
}

Test(addr, init_local)
{
	struct gba_addr a, b;

	cr_assert_eq(gba_addr_init_local(&a), 0);
	cr_assert_eq(gba_addr_init_local(&b), 0);
	cr_expect_eq(a.magic, GBA_ADDR_MAGIC);
	cr_expect_eq(a.version, GBA_ADDR_VERSION);
	cr_expect_eq(a.reserved, 0);
	cr_expect_eq(a.pid, (uint32_t)getpid());
	cr_expect_eq(a.host_id, gba_host_id());
	cr_expect_neq(a.ep_id, b.ep_id);
	cr_expect(gba_addr_valid(&a, sizeof(a)));
	cr_expect_eq(gba_addr_init_local(NULL), -EINVAL);
}

#define NTHREADS 4
#define PER_THREAD 1000
static uint32_t ids[NTHREADS][PER_THREAD];

static void *mk_ids(void *arg)
{
	uint32_t *out = arg;
	struct gba_addr a;
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		gba_addr_init_local(&a);
		out[i] = a.ep_id;
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

Test(addr, ep_ids_unique_across_threads)
{
	pthread_t t[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, mk_ids, ids[i]);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	qsort(ids, NTHREADS * PER_THREAD, sizeof(uint32_t), cmp_u32);
	for (i = 1; i < NTHREADS * PER_THREAD; i++)
		cr_assert_neq(((uint32_t *)ids)[i - 1], ((uint32_t *)ids)[i]);
}

Test(addr, valid)
{
	struct gba_addr a;
	char big[sizeof(a) + 1];

	gba_addr_init_local(&a);
	cr_expect(gba_addr_valid(&a, sizeof(a)));
	cr_expect_not(gba_addr_valid(&a, sizeof(a) - 1));
	memcpy(big, &a, sizeof(a));
	cr_expect_not(gba_addr_valid(big, sizeof(big)));
	cr_expect_not(gba_addr_valid(NULL, sizeof(a)));
	a.magic ^= 1;
	cr_expect_not(gba_addr_valid(&a, sizeof(a)));
	a.magic ^= 1;
	a.version = 2;
	cr_expect_not(gba_addr_valid(&a, sizeof(a)));
}

Test(addr, reach_and_equal)
{
	struct gba_addr a, b, c;

	gba_addr_init_local(&a);
	gba_addr_init_local(&b);
	c = a;
	cr_expect_eq(gba_addr_reach(&a, &a), GBA_REACH_SELF);
	cr_expect_eq(gba_addr_reach(&a, &b), GBA_REACH_PROCESS);
	c.pid++;
	cr_expect_eq(gba_addr_reach(&a, &c), GBA_REACH_HOST);
	c.host_id++;
	cr_expect_eq(gba_addr_reach(&a, &c), GBA_REACH_NONE);
	cr_expect_eq(gba_addr_reach(NULL, &c), GBA_REACH_NONE);
	cr_expect(gba_addr_equal(&a, &a));
	cr_expect_not(gba_addr_equal(&a, &b));
	cr_expect_not(gba_addr_equal(&a, NULL));
}

Test(addr, str_parse_roundtrip)
{
	struct gba_addr a, p;
	char buf[GBA_ADDR_STRLEN], small[8];
	int n;

	gba_addr_init_local(&a);
	a.host_id = 0xfedcba9876543210ULL;
	a.pid = 4294967295u;
	a.ep_id = 4294967295u;
	n = gba_addr_str(&a, buf, sizeof(buf));
	cr_assert_eq(n, (int)strlen(buf));
	cr_expect_str_eq(buf, "gba://fedcba9876543210/4294967295/4294967295");
	cr_assert_eq(gba_addr_parse(buf, &p), 0);
	cr_expect(gba_addr_equal(&a, &p));
	cr_expect(gba_addr_valid(&p, sizeof(p)));

	/* truncation like snprintf */
	cr_expect_eq(gba_addr_str(&a, small, sizeof(small)), n);
	cr_expect_eq(strlen(small), sizeof(small) - 1);
	cr_expect_eq(gba_addr_str(&a, NULL, 0), n);
	cr_expect_eq(gba_addr_str(NULL, buf, sizeof(buf)), -EINVAL);
}

Test(addr, parse_rejects_garbage)
{
	static const char *bad[] = {
		"", "gba://", "gba:/1/2/3", "xba://1/2/3", "gba://1/2",
		"gba://1/2/3/", "gba://1//3", "gba://g/2/3", "gba://1/2/3x",
		"gba://1/-2/3", "gba://1/4294967296/3",
		"gba://1/2/99999999999", "gba://11111111111111111/2/3",
		"gba://1/2/ 3",
	};
	struct gba_addr p;
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(gba_addr_parse(bad[i], &p), -EINVAL, "'%s'",
			     bad[i]);
	cr_expect_eq(gba_addr_parse(NULL, &p), -EINVAL);
	cr_expect_eq(gba_addr_parse("gba://1/2/3", NULL), -EINVAL);
	cr_expect_eq(gba_addr_parse("gba://ABCdef/0/0", &p), 0);
	cr_expect_eq(p.host_id, 0xabcdefULL);
}

Test(addr, hash)
{
	struct gba_addr v[3];
	uint64_t h;

	memset(v, 0, sizeof(v));
	/* FNV-1a of nothing but the seed differs per seed */
	cr_expect_neq(gba_addr_hash(NULL, 0, 0), gba_addr_hash(NULL, 0, 1));
	gba_addr_init_local(&v[0]);
	gba_addr_init_local(&v[1]);
	gba_addr_init_local(&v[2]);
	h = gba_addr_hash(v, 3, 7);
	cr_expect_eq(h, gba_addr_hash(v, 3, 7));	/* deterministic */
	cr_expect_neq(h, gba_addr_hash(v, 2, 7));
	cr_expect_neq(h, gba_addr_hash(v, 3, 8));
	v[2].ep_id++;
	cr_expect_neq(h, gba_addr_hash(v, 3, 7));
}

/* host_id is the 64-bit FNV-1a hash of the kernel boot id */
Test(addr, host_id_is_boot_id_hash)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char buf[64];
	size_t n, i;
	FILE *f;

	cr_expect_neq(gba_host_id(), 0);
	cr_expect_eq(gba_host_id(), gba_host_id());
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f)
		cr_skip_test("no boot_id");
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (n && buf[n - 1] == '\n')
		n--;
	for (i = 0; i < n; i++) {
		h ^= (unsigned char)buf[i];
		h *= 0x100000001b3ULL;
	}
	cr_expect_eq(gba_host_id(), h);
}
