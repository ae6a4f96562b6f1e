/*
 * Memory registration of the gba provider through the stock libfabric:
 * reg/regv/regattr, provider and user keys, fi_mr_key/fi_mr_desc, and
 * gba_mr_lookup (the RMA path's key check) in virtual-address and offset
 * modes, including its bounds.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "prov_common.h"

#define ALL_REMOTE (FI_REMOTE_READ | FI_REMOTE_WRITE)

static char buf[4096];

static struct gba_domain *dom(void)
{
	return container_of(t_domain, struct gba_domain, domain_fid);
}

static void setup_virt(void)
{
	prov_setup_mr_mode(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
}

static void setup_offset(void)
{
	prov_setup_mr_mode(FI_MR_LOCAL); /* neither PROV_KEY nor VIRT_ADDR */
}

TestSuite(mr_virt, .init = setup_virt, .fini = prov_teardown, .timeout = 60);
TestSuite(mr_off, .init = setup_offset, .fini = prov_teardown, .timeout = 60);

Test(mr_virt, reg_keys_desc)
{
	struct fid_mr *a, *b;

	cr_assert_eq(dom()->mr_mode, FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	cr_assert_eq(fi_mr_reg(t_domain, buf, 100, ALL_REMOTE, 0, 0xC0DE, 0, &a,
			       &buf),
		     0);
	cr_assert_eq(fi_mr_reg(t_domain, buf + 100, 100, FI_REMOTE_READ, 0,
			       0xC0DE, 0, &b, NULL),
		     0, "requested key ignored with FI_MR_PROV_KEY");
	cr_expect_neq(fi_mr_key(a), fi_mr_key(b), "provider keys are unique");
	cr_expect_not_null(fi_mr_desc(a));
	cr_expect_eq(a->fid.context, &buf);
	cr_expect_eq(fi_close(&t_domain->fid), -FI_EBUSY, "MRs registered");
	cr_expect_eq(fi_close(&a->fid), 0);
	cr_expect_eq(fi_close(&b->fid), 0);
}

Test(mr_virt, lookup_bounds)
{
	struct fid_mr *mr;
	uint64_t key, base = (uintptr_t)buf + 16;
	void *p = NULL;
	struct gba_domain *d = dom();

	cr_assert_eq(fi_mr_reg(t_domain, buf + 16, 64, FI_REMOTE_WRITE, 0, 0, 0,
			       &mr, NULL),
		     0);
	key = fi_mr_key(mr);
	cr_expect_eq(gba_mr_lookup(d, key, base, 64, FI_REMOTE_WRITE, &p, NULL), 0);
	cr_expect_eq(p, buf + 16);
	cr_expect_eq(gba_mr_lookup(d, key, base + 60, 4, FI_REMOTE_WRITE, &p, NULL),
		     0);
	cr_expect_eq(p, buf + 76);
	cr_expect_eq(gba_mr_lookup(d, key, base + 64, 0, FI_REMOTE_WRITE, &p, NULL),
		     0, "empty access at the end");
	cr_expect_eq(gba_mr_lookup(d, key, base + 61, 4, FI_REMOTE_WRITE, &p, NULL),
		     -FI_EINVAL, "one byte past the end");
	cr_expect_eq(gba_mr_lookup(d, key, base - 1, 1, FI_REMOTE_WRITE, &p, NULL),
		     -FI_EINVAL, "one byte before");
	cr_expect_eq(gba_mr_lookup(d, key, base, SIZE_MAX, FI_REMOTE_WRITE, &p, NULL),
		     -FI_EINVAL, "length overflow");
	cr_expect_eq(gba_mr_lookup(d, key, UINT64_MAX, 2, FI_REMOTE_WRITE, &p, NULL),
		     -FI_EINVAL, "address overflow");
	cr_expect_eq(gba_mr_lookup(d, key, base, 8, FI_REMOTE_READ, &p, NULL),
		     -FI_EACCES, "read not granted");
	cr_expect_eq(gba_mr_lookup(d, key + 1000, base, 8, FI_REMOTE_WRITE, &p, NULL),
		     -FI_EKEYREJECTED);
	cr_expect_eq(fi_close(&mr->fid), 0);
	cr_expect_eq(gba_mr_lookup(d, key, base, 8, FI_REMOTE_WRITE, &p, NULL),
		     -FI_EKEYREJECTED, "closed region");
}

Test(mr_virt, regv_lookup_per_buffer)
{
	struct iovec iov[3] = {
		{buf, 10},
		{buf + 1000, 20},
		{buf + 2000, 30},
	};
	struct fid_mr *mr;
	void *p;
	uint64_t key;

	cr_assert_eq(fi_mr_regv(t_domain, iov, 3, FI_REMOTE_READ, 0, 0, 0, &mr,
				NULL),
		     0);
	key = fi_mr_key(mr);
	cr_expect_eq(gba_mr_lookup(dom(), key, (uintptr_t)buf + 1005, 15,
				   FI_REMOTE_READ, &p, NULL),
		     0);
	cr_expect_eq(p, buf + 1005);
	cr_expect_eq(gba_mr_lookup(dom(), key, (uintptr_t)buf + 500, 1,
				   FI_REMOTE_READ, &p, NULL),
		     -FI_EINVAL, "gap between buffers");
	cr_expect_eq(gba_mr_lookup(dom(), key, (uintptr_t)buf + 2025, 6,
				   FI_REMOTE_READ, &p, NULL),
		     -FI_EINVAL);
	cr_expect_eq(fi_close(&mr->fid), 0);
}

Test(mr_off, user_keys_and_offsets)
{
	struct iovec iov[2] = {{buf, 100}, {buf + 1000, 50}};
	struct fid_mr *a, *b, *c;
	void *p;

	cr_assert_eq(dom()->mr_mode, 0);
	cr_assert_eq(
		fi_mr_regv(t_domain, iov, 2, ALL_REMOTE, 4096, 77, 0, &a, NULL),
		0);
	cr_expect_eq(fi_mr_key(a), 77, "user key");
	cr_expect_eq(
		fi_mr_reg(t_domain, buf, 8, ALL_REMOTE, 0, 77, 0, &b, NULL),
		-FI_ENOKEY, "key in use");
	cr_assert_eq(
		fi_mr_reg(t_domain, buf, 8, ALL_REMOTE, 0, 78, 0, &b, NULL), 0);
	/* remote address = offset argument + byte offset in the region */
	cr_expect_eq(gba_mr_lookup(dom(), 77, 4096, 100, FI_REMOTE_READ, &p, NULL),
		     0);
	cr_expect_eq(p, buf);
	cr_expect_eq(
		gba_mr_lookup(dom(), 77, 4096 + 100, 50, FI_REMOTE_READ, &p, NULL),
		0);
	cr_expect_eq(p, buf + 1000, "second buffer follows the first");
	cr_expect_eq(
		gba_mr_lookup(dom(), 77, 4096 + 90, 20, FI_REMOTE_READ, &p, NULL),
		-FI_EINVAL, "access spanning two buffers");
	cr_expect_eq(gba_mr_lookup(dom(), 77, 4095, 1, FI_REMOTE_READ, &p, NULL),
		     -FI_EINVAL, "below the offset");
	cr_expect_eq(
		gba_mr_lookup(dom(), 77, 4096 + 150, 1, FI_REMOTE_READ, &p, NULL),
		-FI_EINVAL, "past the end");
	cr_expect_eq(gba_mr_lookup(dom(), 78, 0, 8, FI_REMOTE_WRITE, &p, NULL), 0);
	cr_expect_eq(p, buf);
	cr_expect_eq(fi_close(&a->fid), 0);
	cr_assert_eq(
		fi_mr_reg(t_domain, buf, 8, ALL_REMOTE, 0, 77, 0, &c, NULL), 0,
		"key free again after close");
	cr_expect_eq(fi_close(&b->fid), 0);
	cr_expect_eq(fi_close(&c->fid), 0);
}

Test(mr_virt, regattr_and_bad_args)
{
	struct iovec iov[GBA_MR_IOV_LIMIT + 1];
	struct fi_mr_attr attr = {0};
	struct fid_mr *mr;
	int i;

	for (i = 0; i <= GBA_MR_IOV_LIMIT; i++) {
		iov[i].iov_base = buf + i * 16;
		iov[i].iov_len = 16;
	}
	attr.mr_iov = iov;
	attr.iov_count = GBA_MR_IOV_LIMIT;
	attr.access = FI_REMOTE_READ | FI_SEND | FI_RECV | FI_READ | FI_WRITE;
	attr.context = &attr;
	attr.iface = FI_HMEM_SYSTEM;
	cr_assert_eq(fi_mr_regattr(t_domain, &attr, 0, &mr), 0,
		     "mr_iov_limit buffers");
	cr_expect_eq(mr->fid.context, &attr);
	cr_expect_eq(fi_close(&mr->fid), 0);

	attr.iov_count = GBA_MR_IOV_LIMIT + 1;
	cr_expect_eq(fi_mr_regattr(t_domain, &attr, 0, &mr), -FI_EINVAL,
		     "more than mr_iov_limit");
	attr.iov_count = 0;
	cr_expect_eq(fi_mr_regattr(t_domain, &attr, 0, &mr), -FI_EINVAL);
	attr.iov_count = 1;
	attr.iface = FI_HMEM_CUDA;
	cr_expect_eq(fi_mr_regattr(t_domain, &attr, 0, &mr), -FI_ENOSYS);
	attr.iface = FI_HMEM_SYSTEM;
	attr.auth_key_size = 4;
	cr_expect_eq(fi_mr_regattr(t_domain, &attr, 0, &mr), -FI_ENOSYS);
	attr.auth_key_size = 0;
	cr_expect_eq(fi_mr_regattr(t_domain, NULL, 0, &mr), -FI_EINVAL);
	cr_expect_eq(fi_mr_regattr(t_domain, &attr, FI_HMEM_DEVICE_ONLY, &mr),
		     -FI_EBADFLAGS);
	cr_expect_eq(
		fi_mr_reg(t_domain, buf, 8, 1ULL << 62, 0, 0, 0, &mr, NULL),
		-FI_EINVAL, "unknown access bit");
	cr_expect_eq(fi_mr_reg(t_domain, NULL, 8, FI_REMOTE_READ, 0, 0, 0, &mr,
			       NULL),
		     -FI_EINVAL, "NULL buffer with a length");
	cr_expect_eq(fi_mr_regv(t_domain, NULL, 1, FI_REMOTE_READ, 0, 0, 0, &mr,
				NULL),
		     -FI_EINVAL);
	cr_expect_eq(t_domain->mr->reg(&t_fabric->fid, buf, 8, FI_REMOTE_READ,
				       0, 0, 0, &mr, NULL),
		     -FI_EINVAL, "not a domain");
	cr_expect_eq(fi_mr_reg(t_domain, NULL, 0, 0, 0, 0, 0, &mr, NULL), 0,
		     "empty registration is allowed");
	cr_expect_eq(fi_mr_bind(mr, &t_domain->fid, 0), -FI_EINVAL,
		     "binds counters only");
	cr_expect_eq(fi_close(&mr->fid), 0);
}

Test(mr_virt, many_registrations)
{
	enum { N = 2000 };
	struct fid_mr **mr = calloc(N, sizeof(*mr));
	void *p;
	int i;

	for (i = 0; i < N; i++)
		cr_assert_eq(fi_mr_reg(t_domain, buf + (i % 4000), 1,
				       FI_REMOTE_READ, 0, 0, 0, &mr[i], NULL),
			     0);
	for (i = 0; i < N; i += 97)
		cr_expect_eq(gba_mr_lookup(dom(), fi_mr_key(mr[i]),
					   (uintptr_t)buf + (i % 4000), 1,
					   FI_REMOTE_READ, &p, NULL),
			     0);
	for (i = 0; i < N; i++)
		cr_assert_eq(fi_close(&mr[i]->fid), 0);
	free(mr);
}

/* v1.0 mode names map onto the modes the provider implements. */
Test(mr_names, basic_and_scalable, .timeout = 60, .fini = prov_teardown)
{
	prov_setup_mr_mode(FI_MR_BASIC);
	cr_expect_eq(t_info->domain_attr->mr_mode, FI_MR_BASIC);
	cr_expect_eq(dom()->mr_mode, FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	prov_teardown();
	prov_setup_mr_mode(FI_MR_SCALABLE);
	cr_expect_eq(t_info->domain_attr->mr_mode, FI_MR_SCALABLE);
	cr_expect_eq(dom()->mr_mode, 0);
}

Test(mr_virt, null_outputs)
{
	cr_expect_eq(fi_mr_reg(t_domain, buf, 8, FI_REMOTE_READ, 0, 0, 0, NULL,
			       NULL),
		     -FI_EINVAL);
}
