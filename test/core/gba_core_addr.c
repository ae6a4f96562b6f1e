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
#include <arpa/inet.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gba/gba_addr.h>

Test(addr, layout)
{
	cr_expect_eq(sizeof(struct gba_addr), 48);
	cr_expect_eq(GBA_ADDR_MAGIC, 0x41414247u);
	cr_expect_eq(GBA_ADDR_VERSION, 2);
	cr_expect_eq(offsetof(struct gba_addr, net), GBA_ADDR_ID_LEN);
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
	a.version = 1;
	cr_expect_not(gba_addr_valid(&a, sizeof(a)));
	a.version = 3;
	cr_expect_not(gba_addr_valid(&a, sizeof(a)));
	a.version = GBA_ADDR_VERSION;
	a.reserved2[1] = 1;
	cr_expect_not(gba_addr_valid(&a, sizeof(a)));
}

/* gba_addr_check says why: a version 1 address (24 bytes) is refused */
Test(addr, check_old_version)
{
	struct {
		uint32_t magic;
		uint16_t version, reserved;
		uint32_t pid, ep_id;
		uint64_t host_id;
	} v1 = {GBA_ADDR_MAGIC, 1, 0, 1, 2, 3};
	struct gba_addr a;
	const char *why = NULL;

	cr_expect_eq(gba_addr_check(&v1, sizeof(v1), &why), -EINVAL);
	cr_assert_not_null(why);
	cr_expect(strstr(why, "older version") != NULL, "%s", why);
	gba_addr_init_local(&a);
	cr_expect_eq(gba_addr_check(&a, sizeof(a), &why), 0);
	cr_expect_null(why);
	cr_expect_eq(gba_addr_check(&a, sizeof(a) - 1, &why), -EINVAL);
	cr_expect(strstr(why, "size") != NULL, "%s", why);
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
	/* another host with network addresses on both sides: TCP */
	a.net[10] = a.net[11] = c.net[10] = c.net[11] = 0xff;
	a.net[12] = c.net[12] = 10;
	a.net[15] = 1;
	c.net[15] = 2;
	cr_expect_eq(gba_addr_reach(&a, &c), GBA_REACH_NONE); /* no port */
	a.port = c.port = 0x3412;
	cr_expect_eq(gba_addr_reach(&a, &c), GBA_REACH_NET);
	c.host_id--;
	cr_expect_eq(gba_addr_reach(&a, &c), GBA_REACH_HOST);
	/* equal: the identity, not how it is reached */
	c = a;
	c.port++;
	cr_expect(gba_addr_equal(&a, &c));
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

	/* with a network address: "@a.b.c.d:port", "@[v6]:port" */
	a.net[10] = a.net[11] = 0xff;
	a.net[12] = 10;
	a.net[13] = 77;
	a.net[15] = 2;
	a.port = htons(40000);
	cr_expect_eq(gba_addr_str(&a, buf, sizeof(buf)), (int)strlen(buf));
	cr_expect_str_eq(buf, "gba://fedcba9876543210/4294967295/4294967295"
			      "@10.77.0.2:40000");
	cr_assert_eq(gba_addr_parse(buf, &p), 0);
	cr_expect_eq(memcmp(&a, &p, sizeof(a)), 0);
	memset(a.net, 0, sizeof(a.net));
	a.net[0] = 0xfd;
	a.net[15] = 1;
	gba_addr_str(&a, buf, sizeof(buf));
	cr_expect_str_eq(buf, "gba://fedcba9876543210/4294967295/4294967295"
			      "@[fd00::1]:40000");
	cr_assert_eq(gba_addr_parse(buf, &p), 0);
	cr_expect_eq(memcmp(&a, &p, sizeof(a)), 0);
	memset(a.net, 0, sizeof(a.net));
	a.port = 0;
	n = gba_addr_str(&a, buf, sizeof(buf));

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
		"gba://1/2/ 3", "gba://1/2/3@", "gba://1/2/3@10.0.0.1",
		"gba://1/2/3@10.0.0.1:", "gba://1/2/3@10.0.0.1:0",
		"gba://1/2/3@10.0.0.1:65536", "gba://1/2/3@10.0.0:1",
		"gba://1/2/3@[fd00::1:1", "gba://1/2/3@fd00::1:1",
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

/*
 * host_id is the 64-bit FNV-1a hash of the kernel boot id, continued over
 * /dev/shm's device and inode (two 64-bit words) and the host name
 */
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
	{
		uint64_t di[2] = {0, 0};
		const unsigned char *p = (const unsigned char *)di;
		char name[256];
		struct stat st;

		if (!stat("/dev/shm", &st)) {
			di[0] = (uint64_t)st.st_dev;
			di[1] = (uint64_t)st.st_ino;
		}
		for (i = 0; i < sizeof(di); i++) {
			h ^= p[i];
			h *= 0x100000001b3ULL;
		}
		cr_assert_eq(gethostname(name, sizeof(name)), 0);
		name[sizeof(name) - 1] = '\0';
		for (i = 0; i < strlen(name); i++) {
			h ^= (unsigned char)name[i];
			h *= 0x100000001b3ULL;
		}
	}
	cr_expect_eq(gba_host_id(), h);
}
