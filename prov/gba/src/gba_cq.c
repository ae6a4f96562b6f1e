/* Completion queues (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

int gba_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context)
{
	return -FI_ENOSYS;
}
int gba_cq_write(struct gba_cq *cq, void *context, uint64_t flags, size_t len,
		 void *buf, uint64_t data, uint64_t tag, fi_addr_t src)
{
	return -FI_ENOSYS;
}
int gba_cq_write_error(struct gba_cq *cq, void *context, uint64_t flags,
		       int err, int prov_errno, size_t len, size_t olen)
{
	return -FI_ENOSYS;
}
bool gba_cq_has_space(struct gba_cq *cq, size_t n)
{
	return false;
}
int gba_cq_add_ep(struct gba_cq *cq, struct gba_ep *ep)
{
	return -FI_ENOSYS;
}
void gba_cq_del_ep(struct gba_cq *cq, struct gba_ep *ep)
{
}
