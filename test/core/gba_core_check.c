/*
 * The checks the front ends share (include/gba/gba_eng.h): a remote
 * access against a registered region (gba_eng_region_check and its parts
 * gba_eng_range_check, gba_eng_access_check: unknown key, missing access
 * bits, out of range, an access or a region that wraps around the end of
 * the address space, zero lengths) and an I/O vector (gba_eng_iov_len:
 * count limit, NULL array, NULL buffer with a length, total limit without
 * wrap-around).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>

#include <criterion/criterion.h>

#include <gba/gba_eng.h>

TestSuite(check, .timeout = 30);

#define RW (GBA_ENG_ACCESS_READ | GBA_ENG_ACCESS_WRITE)

Test(check, region_inside)
{
	struct gba_eng_region r = {.base = 0x1000, .size = 0x100, .access = RW};

	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 0x100, RW), 0);
	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 1, GBA_ENG_ACCESS_READ),
		     0);
	cr_expect_eq(gba_eng_region_check(&r, 0x10ff, 1, GBA_ENG_ACCESS_WRITE),
		     0);
	cr_expect_eq(gba_eng_region_check(&r, 0x1080, 0x80, 0), 0);
}

Test(check, bad_key)
{
	cr_expect_eq(gba_eng_region_check(NULL, 0x1000, 8, 0), -ENOKEY);
	cr_expect_eq(gba_eng_region_check(NULL, 0, 0, RW), -ENOKEY);
}

Test(check, missing_access)
{
	struct gba_eng_region r = {.base = 0x1000, .size = 0x100,
				   .access = GBA_ENG_ACCESS_READ};

	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 8, GBA_ENG_ACCESS_WRITE),
		     -EACCES);
	/* every needed bit: read alone is not read and write */
	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 8, RW), -EACCES);
	/* access is checked before the range */
	cr_expect_eq(gba_eng_region_check(&r, 0, 8, GBA_ENG_ACCESS_WRITE),
		     -EACCES);
	r.access = 0;
	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 8, GBA_ENG_ACCESS_READ),
		     -EACCES);
	cr_expect_eq(gba_eng_access_check(0x30, 0x10), 0);
	cr_expect_eq(gba_eng_access_check(0x30, 0x50), -EACCES);
	cr_expect_eq(gba_eng_access_check(0, 0), 0);
}

Test(check, out_of_range)
{
	struct gba_eng_region r = {.base = 0x1000, .size = 0x100, .access = RW};

	cr_expect_eq(gba_eng_region_check(&r, 0xfff, 1, RW), -ERANGE);
	cr_expect_eq(gba_eng_region_check(&r, 0xfff, 2, RW), -ERANGE);
	cr_expect_eq(gba_eng_region_check(&r, 0x10ff, 2, RW), -ERANGE);
	cr_expect_eq(gba_eng_region_check(&r, 0x1100, 1, RW), -ERANGE);
	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 0x101, RW), -ERANGE);
	cr_expect_eq(gba_eng_range_check(0, 0, 0, 1), -ERANGE);
}

Test(check, wrapping)
{
	struct gba_eng_region r = {.base = 0x1000, .size = 0x100, .access = RW};

	/* addr + len wraps to inside the region */
	cr_expect_eq(gba_eng_region_check(&r, 0x1010, UINT64_MAX - 0xf, RW),
		     -ERANGE);
	cr_expect_eq(gba_eng_region_check(&r, UINT64_MAX, 0x1002, RW),
		     -ERANGE);
	cr_expect_eq(gba_eng_range_check(0, UINT64_MAX, 1, UINT64_MAX),
		     -ERANGE);
	/* the whole address space but the last byte, and its last bytes */
	cr_expect_eq(gba_eng_range_check(0, UINT64_MAX, UINT64_MAX - 8, 8), 0);
	/* a region whose end wraps contains nothing */
	cr_expect_eq(gba_eng_range_check(UINT64_MAX - 0xf, 0x20,
					 UINT64_MAX - 0xf, 1),
		     -ERANGE);
}

Test(check, zero_length)
{
	struct gba_eng_region r = {.base = 0x1000, .size = 0x100, .access = RW};

	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 0, RW), 0);
	cr_expect_eq(gba_eng_region_check(&r, 0x1100, 0, RW), 0); /* end */
	cr_expect_eq(gba_eng_region_check(&r, 0x1101, 0, RW), -ERANGE);
	cr_expect_eq(gba_eng_region_check(&r, 0xfff, 0, RW), -ERANGE);
	/* an empty region holds only empty accesses at its base */
	r.size = 0;
	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 0, RW), 0);
	cr_expect_eq(gba_eng_region_check(&r, 0x1000, 1, RW), -ERANGE);
}

Test(check, iov_total)
{
	char a[16], b[32];
	struct iovec iov[3] = {{a, sizeof(a)}, {NULL, 0}, {b, sizeof(b)}};
	size_t bad = 99;

	cr_expect_eq(gba_eng_iov_len(iov, 3, 8, SSIZE_MAX, &bad), 48);
	cr_expect_eq(bad, 99);
	cr_expect_eq(gba_eng_iov_len(iov, 3, 3, 48, NULL), 48);
	cr_expect_eq(gba_eng_iov_len(NULL, 0, 8, SSIZE_MAX, NULL), 0);
	cr_expect_eq(gba_eng_iov_len(iov, 0, 0, 0, NULL), 0);
}

Test(check, iov_count)
{
	char a[16];
	struct iovec iov[1] = {{a, sizeof(a)}};
	size_t bad = 99;

	cr_expect_eq(gba_eng_iov_len(iov, 9, 8, SSIZE_MAX, &bad), -E2BIG);
	cr_expect_eq(bad, 99);
	/* the count is checked before the array */
	cr_expect_eq(gba_eng_iov_len(NULL, 9, 8, SSIZE_MAX, NULL), -E2BIG);
	cr_expect_eq(gba_eng_iov_len(NULL, 1, 8, SSIZE_MAX, &bad), -EINVAL);
	cr_expect_eq(bad, 99);
}

Test(check, iov_null_buffer)
{
	char a[16];
	struct iovec iov[2] = {{a, sizeof(a)}, {NULL, 1}};
	size_t bad = 99;

	cr_expect_eq(gba_eng_iov_len(iov, 2, 8, SSIZE_MAX, &bad), -EFAULT);
	cr_expect_eq(bad, 1);
	cr_expect_eq(gba_eng_iov_len(iov, 1, 8, SSIZE_MAX, &bad), 16);
}

Test(check, iov_too_long)
{
	char a[16];
	struct iovec iov[3] = {{a, sizeof(a)}, {a, sizeof(a)}, {a, SIZE_MAX}};
	size_t bad = 99;

	cr_expect_eq(gba_eng_iov_len(iov, 2, 8, 31, &bad), -EMSGSIZE);
	cr_expect_eq(bad, 1);
	cr_expect_eq(gba_eng_iov_len(iov, 2, 8, 32, NULL), 32);
	/* a sum that would wrap around */
	cr_expect_eq(gba_eng_iov_len(iov, 3, 8, SSIZE_MAX, &bad), -EMSGSIZE);
	cr_expect_eq(bad, 2);
	iov[0].iov_len = SSIZE_MAX;
	iov[1].iov_len = 1;
	cr_expect_eq(gba_eng_iov_len(iov, 2, 8, SSIZE_MAX, &bad), -EMSGSIZE);
	cr_expect_eq(bad, 1);
}
