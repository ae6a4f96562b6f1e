/*
 * Fuzz harness: endpoint addresses, as a process receives them from others
 * (out of band, or in a named AV's shared table): libgba's gba_addr_valid
 * and gba_addr_parse, and the provider's fi_av_insert, fi_av_insertsvc,
 * fi_av_insertsym, fi_av_straddr, fi_av_lookup, fi_av_remove and the
 * import of a named AV (FI_READ) through the stock libfabric, which loads
 * the build's provider (FI_PROVIDER_PATH).
 *
 * The first byte of an input chooses the path; the rest is its bytes.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <gba/gba_addr.h>

#include "fuzz.h"

#define FUZZ_AV_ADDRS 8
#define FUZZ_AV_TABLE 4096

static struct fid_fabric *fabric;
static struct fid_domain *domain;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	setenv("FI_PROVIDER_PATH", GBA_FUZZ_PROV_DIR, 0);
	setenv("FI_PROVIDER", "gba", 1);
	if (!hints)
		exit(1);
	hints->fabric_attr->prov_name = strdup("gba");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (!ret)
		ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	if (!ret)
		ret = fi_domain(fabric, info, &domain, NULL);
	if (ret) {
		fprintf(stderr,
			"gba provider not usable (FI_PROVIDER_PATH=%s): "
			"%s\n",
			getenv("FI_PROVIDER_PATH"), fi_strerror(-ret));
		exit(1);
	}
	fi_freeinfo(hints);
	fi_freeinfo(info);
	return 0;
}

/* The rest of the input as two strings (split at the first NUL). */
static void two_strings(struct fuzz_in *in, char **a, char **b)
{
	char *s = malloc(in->size + 2);
	size_t n;

	memcpy(s, in->data, in->size);
	s[in->size] = s[in->size + 1] = '\0';
	n = strlen(s);
	*a = s;
	*b = s + n + 1;
}

static void straddr(struct fid_av *av, const void *addr, size_t len)
{
	char buf[GBA_ADDR_STRLEN + 8];
	size_t n = len % sizeof(buf);

	fi_av_straddr(av, addr, buf, &n);
}

/* Insert, look up, print and remove addresses of any bytes. */
static void av_binary(struct fuzz_in *in)
{
	struct fi_av_attr attr = {
		.type = (fuzz_u8(in) & 1) ? FI_AV_MAP : FI_AV_TABLE,
		.count = fuzz_u8(in),
	};
	struct gba_addr addrs[FUZZ_AV_ADDRS], got;
	fi_addr_t fa[FUZZ_AV_ADDRS];
	uint64_t flags = fuzz_u8(in) & 1 ? FI_MORE : 0;
	size_t count = fuzz_u8(in) % (FUZZ_AV_ADDRS + 1), i, len;
	struct fid_av *av;
	int ret;

	fuzz_take(in, addrs, sizeof(addrs));
	if (fi_av_open(domain, &attr, &av, NULL))
		return;
	ret = fi_av_insert(av, addrs, count, fa, flags, NULL);
	for (i = 0; ret > 0 && i < count; i++) {
		straddr(av, &addrs[i], fuzz_u8(in));
		len = fuzz_u8(in) % (sizeof(got) + 1);
		fi_av_lookup(av, fa[i], &got, &len);
		len = sizeof(got);
		if (fa[i] != FI_ADDR_NOTAVAIL &&
		    (fi_av_lookup(av, fa[i], &got, &len) ||
		     !gba_addr_valid(&got, len)))
			abort(); /* inserted, so valid and found */
	}
	fa[0] = fuzz_u64(in);
	fi_av_lookup(av, fa[0], &got, &len);
	fi_av_remove(av, fa, count ? count : 1, 0);
	fi_close(&av->fid);
}

/* fi_av_insertsvc and fi_av_insertsym: node and service strings. */
static void av_names(struct fuzz_in *in, int sym)
{
	struct fi_av_attr attr = {.type = FI_AV_TABLE};
	size_t svccnt = fuzz_u8(in) % 65;
	char *node, *service;
	fi_addr_t fa[64];
	struct fid_av *av;

	two_strings(in, &node, &service);
	if (!fi_av_open(domain, &attr, &av, NULL)) {
		if (sym)
			fi_av_insertsym(av, *node ? node : NULL, 1,
					*service ? service : NULL, svccnt, fa,
					0, NULL);
		else
			fi_av_insertsvc(av, *node ? node : NULL,
					*service ? service : NULL, fa, 0, NULL);
		fi_close(&av->fid);
	}
	free(node);
}

/* gba_addr_parse of any string; what it accepts prints back the same. */
static void addr_text(struct fuzz_in *in)
{
	char str[GBA_ADDR_STRLEN], *s, *unused;
	struct gba_addr addr, again;

	two_strings(in, &s, &unused);
	if (!gba_addr_parse(s, &addr)) {
		if (!gba_addr_valid(&addr, sizeof(addr)) ||
		    gba_addr_str(&addr, str, sizeof(str)) >= (int)sizeof(str) ||
		    gba_addr_parse(str, &again) ||
		    !gba_addr_equal(&addr, &again))
			abort();
	}
	free(s);
}

/*
 * A named AV's table written by another process: the reader imports it,
 * then the table changes (any bytes) and the reader refreshes.
 */
static void av_shared(struct fuzz_in *in)
{
	struct fi_av_attr attr = {.type = FI_AV_TABLE, .flags = FI_READ};
	size_t size = fuzz_u32(in) % FUZZ_AV_TABLE, off, len;
	char name[64], shm[128];
	struct gba_addr got;
	struct fid_av *av;
	uint8_t *table;
	fi_addr_t fa;
	int fd;

	snprintf(name, sizeof(name), "fuzz-%d", (int)getpid());
	snprintf(shm, sizeof(shm), "/gba-av-%u-%s", (unsigned)getuid(), name);
	attr.name = name;
	fd = shm_open(shm, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		perror(shm);
		exit(1);
	}
	table = mmap(NULL, FUZZ_AV_TABLE, PROT_READ | PROT_WRITE, MAP_SHARED,
		     fd, 0);
	close(fd);
	if (table == MAP_FAILED)
		exit(1);
	fuzz_take(in, table, size);
	if (!fi_av_open(domain, &attr, &av, NULL)) {
		while (in->size) {
			off = fuzz_u32(in) % FUZZ_AV_TABLE;
			if (off + 8 <= size) {
				uint64_t val = fuzz_u64(in);

				memcpy(table + off, &val, sizeof(val));
			}
			fa = fuzz_u32(in);
			len = sizeof(got);
			fi_av_lookup(av, fa, &got, &len);
		}
		fi_close(&av->fid);
	}
	munmap(table, FUZZ_AV_TABLE);
	shm_unlink(shm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};

	switch (fuzz_u8(&in) % 5) {
	case 0:
		av_binary(&in);
		break;
	case 1:
		av_names(&in, 0);
		break;
	case 2:
		av_names(&in, 1);
		break;
	case 3:
		addr_text(&in);
		break;
	case 4:
		av_shared(&in);
		break;
	}
	return 0;
}
