/*
 * Helpers shared by the test/mpi programs: a CHECK that names the rank,
 * the file and the line and aborts the whole job, and deterministic byte
 * patterns so that every receiver can verify what it got.
 */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int chk_rank = -1;
static int chk_size = 0;
static const char *chk_phase = "init";

static void chk_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

static void chk_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL rank %d/%d [%s] %s:%d: ", chk_rank, chk_size,
		chk_phase, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond))                                                   \
			chk_fail(__FILE__, __LINE__, __VA_ARGS__);             \
	} while (0)

/* An MPI call that must succeed (also under MPI_ERRORS_RETURN). */
#define MPI_OK(call)                                                           \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ != MPI_SUCCESS) {                                      \
			char s_[MPI_MAX_ERROR_STRING];                         \
			int l_ = 0;                                            \
			MPI_Error_string(rc_, s_, &l_);                        \
			chk_fail(__FILE__, __LINE__, "%s: %s", #call, s_);     \
		}                                                              \
	} while (0)

static void chk_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &chk_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &chk_size);
}

/* Announce a phase (rank 0 prints it) and remember it for failures. */
static void phase(const char *name)
{
	chk_phase = name;
	if (chk_rank == 0) {
		printf("[%d ranks] %s\n", chk_size, name);
		fflush(stdout);
	}
}

static inline unsigned char pat(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u +
		     (uint32_t)(i >> 12) * 977u;
	return (unsigned char)(x ^ (x >> 13) ^ (x >> 24));
}

static inline uint32_t seed_of(int src, int dst, size_t len, int tag)
{
	return (uint32_t)src * 131u + (uint32_t)dst * 8191u +
	       (uint32_t)len * 7u + (uint32_t)tag * 524287u;
}

static void fill(void *buf, size_t len, uint32_t seed)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

/* Index of the first wrong byte, or -1. */
static long verify(const void *buf, size_t len, uint32_t seed)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			return (long)i;
	return -1;
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	CHECK(p, "malloc(%zu) failed", len);
	return p;
}

#endif
