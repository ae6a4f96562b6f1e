/*
 * Fuzz harnesses (fuzz/): what every harness shares.
 *
 * Each harness is one program defining LLVMFuzzerTestOneInput (and, when it
 * needs set-up, LLVMFuzzerInitialize).  Built with --enable-fuzzing it links
 * libFuzzer's main; otherwise fuzz_main.c, which replays the files it is
 * given (make check replays fuzz/corpus/<harness>/ in every build).
 *
 * struct fuzz_in takes typed values from the front of the input; once the
 * input is used up every value reads as zero, so a harness never reads
 * outside it.
 */
#ifndef GBA_FUZZ_H
#define GBA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_in {
	const uint8_t *data;
	size_t size;
};

/* Copy the next @len bytes of @in into @buf (zeros past its end). */
static inline void fuzz_take(struct fuzz_in *in, void *buf, size_t len)
{
	size_t n = len < in->size ? len : in->size;

	memcpy(buf, in->data, n);
	memset((uint8_t *)buf + n, 0, len - n);
	in->data += n;
	in->size -= n;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

#endif /* GBA_FUZZ_H */
