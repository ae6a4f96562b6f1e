/* UCT objects of one test process; see uct_test_ctx.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ucs/async/async_fwd.h>

#include "uct_test_ctx.h"

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "[pid %d] %s:%d: required: %s\n",      \
				(int)getpid(), __FILE__, __LINE__, #cond);     \
			exit(1);                                               \
		}                                                              \
	} while (0)

static uct_component_h find_component(struct uct_test_ctx *c, const char *name)
{
	uct_component_attr_t attr;
	unsigned i;

	for (i = 0; i < c->num_components; i++) {
		attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
		REQUIRE(uct_component_query(c->components[i], &attr) == UCS_OK);
		if (!strcmp(attr.name, name))
			return c->components[i];
	}
	return NULL;
}

void uct_test_ctx_open(struct uct_test_ctx *c, const char *name,
		       uct_error_handler_t err_handler, void *arg)
{
	uct_md_resource_desc_t md_resources[4];
	uct_component_attr_t cattr;
	uct_iface_params_t params;
	uct_md_config_t *md_config;
	uct_component_h comp;
	unsigned num;

	memset(c, 0, sizeof(*c));
	REQUIRE(uct_query_components(&c->components, &c->num_components) ==
		UCS_OK);
	comp = find_component(c, name);
	REQUIRE(comp != NULL);
	c->component = comp;
	cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
	REQUIRE(uct_component_query(comp, &cattr) == UCS_OK);
	REQUIRE(cattr.md_resource_count >= 1 && cattr.md_resource_count <= 4);
	cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
	cattr.md_resources = md_resources;
	REQUIRE(uct_component_query(comp, &cattr) == UCS_OK);
	REQUIRE(uct_md_config_read(comp, NULL, NULL, &md_config) == UCS_OK);
	REQUIRE(uct_md_open(comp, md_resources[0].md_name, md_config, &c->md) ==
		UCS_OK);
	uct_config_release(md_config);

	REQUIRE(uct_md_query_tl_resources(c->md, &c->resources, &num) ==
		UCS_OK);
	REQUIRE(num >= 1);
	REQUIRE(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
					 &c->async) == UCS_OK);
	REQUIRE(uct_worker_create(c->async, UCS_THREAD_MODE_SINGLE,
				  &c->worker) == UCS_OK);
	REQUIRE(uct_md_iface_config_read(c->md, c->resources[0].tl_name, NULL,
					 NULL, &c->iface_config) == UCS_OK);
	memset(&params, 0, sizeof(params));
	params.field_mask =
		UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
	params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
	params.mode.device.tl_name = c->resources[0].tl_name;
	params.mode.device.dev_name = c->resources[0].dev_name;
	if (err_handler) {
		params.field_mask |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
				     UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
				     UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
		params.err_handler = err_handler;
		params.err_handler_arg = arg;
		params.err_handler_flags = 0;
	}
	REQUIRE(uct_iface_open(c->md, c->worker, &params, c->iface_config,
			       &c->iface) == UCS_OK);
}

void uct_test_ctx_close(struct uct_test_ctx *c)
{
	uct_iface_close(c->iface);
	uct_config_release(c->iface_config);
	uct_worker_destroy(c->worker);
	ucs_async_context_destroy(c->async);
	uct_release_tl_resource_list(c->resources);
	uct_md_close(c->md);
	uct_release_component_list(c->components);
}
