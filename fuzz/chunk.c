/*
 * Fuzz harness: the notices of the UCX transport's chunks
 * (ucx/uct_gba/gba_chunk.c), which name a region of the sender's memory
 * the receiver maps and reads.
 *
 * This process is both sides: a sender's transmit region (the real file,
 * cookie and length) and a receiver.  An input is a sequence of notices,
 * each a byte of choices (take the region's file, cookie or length) and
 * the notice's bytes; every notice the receiver accepts is read whole.
 * The receiver's mappings are dropped after each input.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "gba_chunk.h"

#define FUZZ_CHUNK_SIZE 8192
#define FUZZ_CHUNKS 4

static uct_gba_chunks_t tx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	void *data;

	uct_gba_chunks_init(&tx, FUZZ_CHUNK_SIZE, FUZZ_CHUNKS);
	if (uct_gba_chunk_get(&tx, &data) != UCS_OK) {
		fprintf(stderr, "cannot allocate the transmit region\n");
		exit(1);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	static uint8_t copy[FUZZ_CHUNKS * (FUZZ_CHUNK_SIZE + 64)];
	uct_gba_chunk_notice_t notice;
	uct_gba_chunks_t rx;
	uint8_t choice;
	uint32_t pid;
	void *msg;

	uct_gba_chunks_init(&rx, FUZZ_CHUNK_SIZE, 0);
	while (in.size) {
		choice = fuzz_u8(&in);
		fuzz_take(&in, &notice, sizeof(notice));
		if (choice & 1)
			notice.fd = tx.tx.fd;
		if (choice & 2)
			notice.cookie = tx.tx.cookie;
		if (choice & 4)
			notice.seg_len = tx.tx.len;
		/* this process, or one that cannot exist: never another's */
		pid = (choice & 8) ? 0x7fffffffu : (uint32_t)getpid();
		if (uct_gba_chunk_recv(&rx, pid, &notice, &msg) != UCS_OK)
			continue;
		memcpy(copy, msg,
		       notice.length < sizeof(copy) ? notice.length
						    : sizeof(copy));
		if (notice.length > sizeof(copy))
			memcpy(copy, (uint8_t *)msg + notice.length - 1, 1);
		uct_gba_chunk_release(msg);
	}
	uct_gba_chunks_cleanup(&rx);
	return 0;
}
