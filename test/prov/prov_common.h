/*
 * Helpers shared by the provider unit tests (test/prov).  The tests drive
 * the gba provider through the installed (stock) libfabric: fi_getinfo
 * with hints->fabric_attr->prov_name = "gba".  Each test program links
 * the provider's sources (prov/gba/libgba_prov.la) and points
 * FI_PROVIDER_PATH at the test-only module libgbatest-fi.so
 * (prov_shim.c), which hands libfabric that copy: objects opened through
 * libfabric and the provider's internal functions called directly by the
 * test (gba_prov.h) are the same code and share the same globals.
 */
#ifndef GBA_TEST_PROV_COMMON_H
#define GBA_TEST_PROV_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <gba/gba_addr.h>

#include "gba_ep.h"

#define TEST_VERSION FI_VERSION(1, 17)

/* Objects most tests need; filled by prov_setup(). */
extern struct fi_info *t_hints;
extern struct fi_info *t_info;
extern struct fid_fabric *t_fabric;
extern struct fid_domain *t_domain;
/* Times libfabric loaded this program's provider (prov_shim.c). */
extern int prov_ini_calls;

/* Hints selecting the gba provider (caller frees with fi_freeinfo). */
struct fi_info *prov_hints(void);
/* fi_getinfo with prov_hints() (mr_mode as given), fabric, domain. */
void prov_setup_mr_mode(int mr_mode);
void prov_setup_threading(enum fi_threading threading);
/* Criterion .init/.fini: default setup (mr_mode PROV_KEY|VIRT_ADDR). */
void prov_setup(void);
void prov_teardown(void);

/* A well-formed gba address of this host: pid @pid, endpoint @ep. */
struct gba_addr prov_addr(uint32_t pid, uint32_t ep);
/*
 * A well-formed gba address of this host that no process can hold: its pid
 * is above the kernel's PID_MAX_LIMIT (2^22). Not getpid() + 1: Criterion
 * runs each test in its own process, and the next pid is often a sibling
 * test with endpoint 1 open.
 */
struct gba_addr prov_absent_addr(void);

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t prov_now_ms(void);

#endif
