/* Atomics, self path (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

struct fi_ops_atomic gba_ep_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
};

int gba_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags)
{
	return -FI_ENOSYS;
}
