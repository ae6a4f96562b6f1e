/*
 * libfabric "gba" provider: the FI_GBA_* parameters (fi_param_define(3),
 * listed by `fi_info -e`), read once when libfabric loads the provider.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gba_prov.h"

struct gba_params gba_params = {
	.device = NULL,
	.offload = 1,
	.cq_size = GBA_CQ_DEF_SIZE,
	.eq_size = GBA_EQ_DEF_SIZE,
	.barrier_timeout_ms = -1,
	.progress = FI_PROGRESS_MANUAL,
	.eager_size = GBA_EAGER_SIZE_DEF,
};

/*
 * Read the size parameter @name (the variable @var): 1..@max replaces
 * *@val; anything else is logged and *@val (the default) stays.
 */
static void gba_params_size(const char *name, const char *var, size_t max,
			    size_t *val)
{
	size_t sval;

	if (fi_param_get_size_t(&gba_prov, name, &sval))
		return;
	if (sval >= 1 && sval <= max)
		*val = sval;
	else
		FI_WARN(&gba_prov, FI_LOG_CORE,
			"%s=%zu out of range 1..%zu, using %zu\n", var, sval,
			max, *val);
}

/*
 * gba_params_define - define the FI_GBA_* parameters with fi_param_define(3)
 * (libfabric keeps every definition until fi_fini: once per load).
 */
void gba_params_define(void)
{
	fi_param_define(
		&gba_prov, "device", FI_PARAM_STRING,
		"GBA device passed to the core library's gba_dev_open: "
		"a /dev/gbaN node or register image, \"emu\" for the "
		"emulated device, \"emu:/NAME\" for a private emulated "
		"image (default: $GBA_DEVICE, else /dev/gba0 if present, "
		"else the emulated device)");
	fi_param_define(
		&gba_prov, "offload", FI_PARAM_BOOL,
		"Use the GBA device (hardware or emulated) for barriers; "
		"with 0, joins fail with -FI_EOPNOTSUPP until the "
		"software barrier exists (default: 1)");
	fi_param_define(&gba_prov, "cq_size", FI_PARAM_SIZE_T,
			"Default CQ depth in entries when fi_cq_attr.size is 0 "
			"(default: %d, max %zu)",
			GBA_CQ_DEF_SIZE, GBA_CQ_MAX_SIZE);
	fi_param_define(&gba_prov, "eq_size", FI_PARAM_SIZE_T,
			"Default EQ depth in entries when fi_eq_attr.size is 0 "
			"(default: %d, max %zu)",
			GBA_EQ_DEF_SIZE, GBA_EQ_MAX_SIZE);
	fi_param_define(
		&gba_prov, "barrier_timeout", FI_PARAM_INT,
		"Barrier completion timeout in milliseconds; the barrier "
		"completes with FI_ETIMEDOUT after it. -1 waits forever "
		"(default: -1)");
	fi_param_define(
		&gba_prov, "progress", FI_PARAM_STRING,
		"Data progress of domains that do not ask for one: "
		"\"manual\" (CQ and counter reads and waits progress; no "
		"helper thread) or \"auto\" (a progress thread per domain "
		"runs triggered and deferred work while the host computes; "
		"FI_PROGRESS_AUTO in the hints does the same) "
		"(default: manual)");
	fi_param_define(
		&gba_prov, "eager_size", FI_PARAM_SIZE_T,
		"Largest message copied through the receiver's queue (in "
		"several of its slots above %d bytes, the send complete at "
		"once); larger messages are read by the receiver from the "
		"sender's memory with cross-memory attach.  Up to %d: one "
		"slot only (default: %d, max %d)",
		GBA_ENG_INLINE, GBA_ENG_INLINE, GBA_EAGER_SIZE_DEF,
		GBA_ENG_EAGER_MAX);
	fi_param_define(
		&gba_prov, "net_addr", FI_PARAM_STRING,
		"Address (numeric or a host name) on which endpoints listen "
		"for peers on other hosts (the engine's TCP path); \"none\" "
		"disables it (peers on other hosts are then unreachable) "
		"(default: $GBA_NET_ADDR, else the address the host name "
		"resolves to)");
}

/*
 * gba_params_read - read the FI_GBA_* parameters with fi_param_get_*().
 * Out-of-range values are logged and replaced by the default, so a typo
 * never breaks the provider.
 */
void gba_params_read(void)
{
	char *str = NULL;
	int ival;

	if (!fi_param_get_str(&gba_prov, "device", &str) && str && *str) {
		gba_params.device = strdup(str);
		if (!gba_params.device)
			FI_WARN(&gba_prov, FI_LOG_CORE,
				"out of memory copying FI_GBA_DEVICE; "
				"using the default device\n");
	}
	str = NULL;
	if (!fi_param_get_str(&gba_prov, "net_addr", &str) && str && *str) {
		gba_params.net_addr = strdup(str);
		if (!gba_params.net_addr)
			FI_WARN(&gba_prov, FI_LOG_CORE,
				"out of memory copying FI_GBA_NET_ADDR; "
				"using the default address\n");
	}
	if (!fi_param_get_bool(&gba_prov, "offload", &ival))
		gba_params.offload = !!ival;
	str = NULL;
	if (!fi_param_get_str(&gba_prov, "progress", &str) && str) {
		if (!strcasecmp(str, "auto"))
			gba_params.progress = FI_PROGRESS_AUTO;
		else if (strcasecmp(str, "manual"))
			FI_WARN(&gba_prov, FI_LOG_CORE,
				"FI_GBA_PROGRESS=%s invalid (manual or auto), "
				"using manual\n",
				str);
	}
	gba_params_size("cq_size", "FI_GBA_CQ_SIZE", GBA_CQ_MAX_SIZE,
			&gba_params.cq_size);
	gba_params_size("eq_size", "FI_GBA_EQ_SIZE", GBA_EQ_MAX_SIZE,
			&gba_params.eq_size);
	gba_params_size("eager_size", "FI_GBA_EAGER_SIZE", GBA_ENG_EAGER_MAX,
			&gba_params.eager_size);
	if (!fi_param_get_int(&gba_prov, "barrier_timeout", &ival)) {
		if (ival >= -1)
			gba_params.barrier_timeout_ms = ival;
		else
			FI_WARN(&gba_prov, FI_LOG_CORE,
				"FI_GBA_BARRIER_TIMEOUT=%d invalid (ms, or -1 "
				"for no timeout), using -1\n",
				ival);
	}
	FI_INFO(&gba_prov, FI_LOG_CORE,
		"device=%s offload=%d cq_size=%zu eq_size=%zu "
		"barrier_timeout=%d ms progress=%s eager_size=%zu "
		"net_addr=%s\n",
		gba_params.device ? gba_params.device : "(default)",
		gba_params.offload, gba_params.cq_size, gba_params.eq_size,
		gba_params.barrier_timeout_ms,
		fi_tostr(&gba_params.progress, FI_TYPE_PROGRESS),
		gba_params.eager_size,
		gba_params.net_addr ? gba_params.net_addr : "(default)");
}

/*
 * gba_params_free - fi_provider.cleanup: called by libfabric before it unloads
 * the provider (fi_fini).  Frees the copied parameter strings.
 */
void gba_params_free(void)
{
	free(gba_params.device);
	gba_params.device = NULL;
	free(gba_params.net_addr);
	gba_params.net_addr = NULL;
}
