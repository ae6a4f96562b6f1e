/*
 * libfabric "gba" provider: entry point, parameters, shared helpers.
 *
 * The stock libfabric (1.17) dlopen()s libgba-fi.so from FI_PROVIDER_PATH
 * (or <libdir>/libfabric) and calls fi_prov_ini(), which defines the
 * FI_GBA_* parameters (listed by `fi_info -e`), reads them once and
 * returns the provider structure.  See fi_provider(7).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
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
};

/*
 * gba_cleanup - fi_provider.cleanup: called by libfabric before it unloads
 * the provider (fi_fini).  Frees the copied parameter strings.
 */
static void gba_cleanup(void)
{
	free(gba_params.device);
	gba_params.device = NULL;
}

struct fi_provider gba_prov = {
	.name = GBA_PROV_NAME,
	.version = GBA_PROV_VERSION,
	.fi_version = GBA_FI_VERSION,
	.getinfo = gba_getinfo,
	.fabric = gba_fabric_open,
	.cleanup = gba_cleanup,
};

/*
 * gba_read_params - define the FI_GBA_* parameters with fi_param_define(3)
 * and read them with fi_param_get_*().  Out-of-range values are logged and
 * replaced by the default, so a typo never breaks the provider.
 */
static void gba_read_params(void)
{
	char *str = NULL;
	int ival;
	size_t sval;

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

	if (!fi_param_get_str(&gba_prov, "device", &str) && str && *str) {
		gba_params.device = strdup(str);
		if (!gba_params.device)
			FI_WARN(&gba_prov, FI_LOG_CORE,
				"out of memory copying FI_GBA_DEVICE; "
				"using the default device\n");
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
	if (!fi_param_get_size_t(&gba_prov, "cq_size", &sval)) {
		if (sval >= 1 && sval <= GBA_CQ_MAX_SIZE)
			gba_params.cq_size = sval;
		else
			FI_WARN(&gba_prov, FI_LOG_CORE,
				"FI_GBA_CQ_SIZE=%zu out of range 1..%zu, "
				"using %zu\n",
				sval, GBA_CQ_MAX_SIZE, gba_params.cq_size);
	}
	if (!fi_param_get_size_t(&gba_prov, "eq_size", &sval)) {
		if (sval >= 1 && sval <= GBA_EQ_MAX_SIZE)
			gba_params.eq_size = sval;
		else
			FI_WARN(&gba_prov, FI_LOG_CORE,
				"FI_GBA_EQ_SIZE=%zu out of range 1..%zu, "
				"using %zu\n",
				sval, GBA_EQ_MAX_SIZE, gba_params.eq_size);
	}
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
		"barrier_timeout=%d ms progress=%s\n",
		gba_params.device ? gba_params.device : "(default)",
		gba_params.offload, gba_params.cq_size, gba_params.eq_size,
		gba_params.barrier_timeout_ms,
		fi_tostr(&gba_params.progress, FI_TYPE_PROGRESS));
}

/*
 * gba_lock_init - initialize @lock; a disabled lock costs one predictable
 * branch per acquire/release.  Returns 0.
 */
int gba_lock_init(struct gba_lock *lock, bool enabled)
{
	lock->enabled = enabled;
	atomic_init(&lock->locked, 0);
	return 0;
}

/* gba_lock_destroy - the lock must be free; nothing to release. */
void gba_lock_destroy(struct gba_lock *lock)
{
	lock->enabled = false;
}

/* Spins on a held lock before yielding the CPU. */
#define GBA_LOCK_SPINS 256

/* A spin-wait hint to the CPU. */
static inline void gba_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/*
 * gba_lock_contended - wait for @lock: spin on a plain load (no cache
 * line ping-pong while it is held), retry the exchange when it looks
 * free, and yield the CPU after GBA_LOCK_SPINS spins.
 */
void gba_lock_contended(struct gba_lock *lock)
{
	unsigned spins = 0;

	do {
		while (atomic_load_explicit(&lock->locked,
					    memory_order_relaxed)) {
			if (++spins < GBA_LOCK_SPINS)
				gba_cpu_relax();
			else
				sched_yield();
		}
	} while (atomic_exchange_explicit(&lock->locked, 1,
					  memory_order_acquire));
}

/*
 * gba_errno_to_fi - map a negative errno from the core library (or libc)
 * to a negative FI_E* code (fi_errno(3)).  Values that have an FI_E*
 * twin pass through; EPROTO (switch flagged an error) becomes -FI_EIO,
 * EPIPE (a peer died) -FI_ECONNABORTED, unknown ones -FI_EOTHER.  Non-
 * negative values are returned unchanged.
 */
int gba_errno_to_fi(int err)
{
	if (err >= 0)
		return err;
	switch (-err) {
	case EPERM:
	case ENOENT:
	case EINTR:
	case EIO:
	case E2BIG:
	case EBADF:
	case EAGAIN:
	case ENOMEM:
	case EACCES:
	case EFAULT:
	case EBUSY:
	case ENODEV:
	case EINVAL:
	case EMFILE:
	case ENOSPC:
	case ENOSYS:
	case ENOMSG:
	case ENODATA:
	case EOVERFLOW:
	case EMSGSIZE:
	case ENOPROTOOPT:
	case EOPNOTSUPP:
	case EADDRINUSE:
	case EADDRNOTAVAIL:
	case ENETDOWN:
	case ENETUNREACH:
	case ECONNABORTED:
	case ECONNRESET:
	case ENOBUFS:
	case EISCONN:
	case ENOTCONN:
	case ESHUTDOWN:
	case ETIMEDOUT:
	case ECONNREFUSED:
	case EHOSTDOWN:
	case EHOSTUNREACH:
	case EALREADY:
	case EINPROGRESS:
	case EREMOTEIO:
	case ECANCELED:
	case EKEYREJECTED:
		return err;
	case EPROTO:
		return -FI_EIO;
	case EPIPE:
		return -FI_ECONNABORTED;
	case EEXIST:
		return -FI_EBUSY;
	case ENFILE:
		return -FI_EMFILE;
	default:
		return -FI_EOTHER;
	}
}

/* gba_no_bind - fi_ops.bind for objects that bind to nothing: -FI_ENOSYS. */
int gba_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	FI_WARN(&gba_prov, FI_LOG_CORE, "fid class %zu: bind not supported\n",
		fid ? fid->fclass : 0);
	return -FI_ENOSYS;
}

/* gba_no_control - fi_ops.control without commands: -FI_ENOSYS. */
int gba_no_control(struct fid *fid, int command, void *arg)
{
	FI_INFO(&gba_prov, FI_LOG_CORE,
		"fid class %zu: control command %d not supported\n",
		fid ? fid->fclass : 0, command);
	return -FI_ENOSYS;
}

/* gba_no_ops_open - fi_open_ops(3): the provider has no extension ops. */
int gba_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	FI_INFO(&gba_prov, FI_LOG_CORE, "no extension ops \"%s\"\n",
		name ? name : "(null)");
	return -FI_ENOSYS;
}

/* gba_no_close - fi_close on an object that cannot be closed: -FI_ENOSYS. */
int gba_no_close(struct fid *fid)
{
	return -FI_ENOSYS;
}

/*
 * fi_prov_ini - the DSO entry point (rdma/providers/fi_prov.h).  Called
 * once by libfabric when it loads libgba-fi.so.
 */
FI_EXT_INI
{
	gba_read_params();
	return &gba_prov;
}
