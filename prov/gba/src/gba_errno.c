/*
 * libfabric "gba" provider: error codes of the core library and libc
 * mapped to libfabric's (fi_errno(3)).
 */
#include "config.h"

#include <errno.h>

#include "gba_prov.h"

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

/*
 * gba_xfer_errno_to_fi - the negative FI_E* a transfer completes with
 * for the engine's status (a negative errno of include/gba/gba_eng.h),
 * as its CQ error entry reports it (fi_cq(3) err, positive there): a
 * key the target does not know is -FI_EKEYREJECTED, a denied access
 * -FI_EACCES, an address outside the region or a bad argument
 * -FI_EINVAL, a peer gone -FI_EIO, -FI_EOTHER for anything else.  It
 * differs from gba_errno_to_fi, which maps the control path's errors
 * (opening a device, joining a group), where EPERM, EFAULT and
 * ECONNRESET keep their own FI_E* codes and a lost peer is
 * -FI_ECONNABORTED: the two keep the codes each path has reported
 * since it was written.  0 stays 0.
 */
int gba_xfer_errno_to_fi(int status)
{
	switch (status) {
	case 0:
		return 0;
	case -ENOKEY:
		return -FI_EKEYREJECTED;
	case -EACCES:
	case -EPERM:
		return -FI_EACCES;
	case -ERANGE:
	case -EFAULT:
	case -EINVAL:
		return -FI_EINVAL;
	case -EPIPE:
	case -ESRCH:
	case -ECONNRESET:
		return -FI_EIO;
	case -EHOSTUNREACH:
		return -FI_EHOSTUNREACH;
	case -ECANCELED:
		return -FI_ECANCELED;
	case -ENOMEM:
		return -FI_ENOMEM;
	default:
		return -FI_EOTHER;
	}
}
