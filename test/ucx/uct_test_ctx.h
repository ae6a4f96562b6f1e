/*
 * UCT objects of one test process (test/ucx/uct_gba_barrier,
 * test/fault/ucx_fault_trial): a component's md, a worker and an
 * interface of its first transport resource.
 */
#ifndef UCT_TEST_CTX_H
#define UCT_TEST_CTX_H

#include <ucs/async/async_fwd.h>
#include <uct/api/uct.h>

struct uct_test_ctx {
	uct_component_h *components;
	unsigned num_components;
	uct_component_h component; /* the one opened */
	ucs_async_context_t *async;
	uct_worker_h worker;
	uct_md_h md;
	uct_iface_config_t *iface_config;
	uct_iface_h iface;
	uct_tl_resource_desc_t *resources;
};

/*
 * Open the first md of component @name and an interface of its first
 * transport resource into @c, with @err_handler(@arg) as the interface's
 * endpoint error handler (NULL: none).  Exits the process with status 1
 * (after a message) on failure.
 */
void uct_test_ctx_open(struct uct_test_ctx *c, const char *name,
		       uct_error_handler_t err_handler, void *arg);

/* Close what uct_test_ctx_open opened. */
void uct_test_ctx_close(struct uct_test_ctx *c);

#endif /* UCT_TEST_CTX_H */
