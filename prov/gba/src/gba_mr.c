/* Memory registration (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}
int gba_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}
int gba_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr)
{
	return -FI_ENOSYS;
}
int gba_mr_lookup(struct gba_domain *domain, uint64_t key, uint64_t addr,
		  size_t len, uint64_t access, void **ptr)
{
	return -FI_EKEYREJECTED;
}
