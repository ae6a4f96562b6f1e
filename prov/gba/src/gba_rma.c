/* RMA, self path (stub; being implemented). */
#include "config.h"

#include "gba_prov.h"

struct fi_ops_rma gba_ep_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
};
