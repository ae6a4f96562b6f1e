/*
 * MPI point-to-point over the provider (run by test/mpi/mpi.sh with
 * --mca pml cm --mca mtl ofi, FI_PROVIDER=gba), every result checked:
 *   - blocking and nonblocking send/recv of 0, 1, 8, 4032, 4033 bytes,
 *     64 KiB, 1 MiB and 4 MiB between all pairs of ranks (4032 is the
 *     provider's inline size, 4033 the first single-copy size);
 *   - MPI_ANY_SOURCE and MPI_ANY_TAG;
 *   - MPI_Probe / MPI_Iprobe and MPI_Mprobe / MPI_Improbe / MPI_Mrecv /
 *     MPI_Imrecv (FI_PEEK and FI_PEEK | FI_CLAIM in the provider);
 *   - MPI_Ssend / MPI_Issend (may not complete before the receive);
 *   - many messages sent before their receives (the unexpected path),
 *     received out of order by tag and then in order with MPI_ANY_TAG;
 *   - truncation: MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN, then the
 *     communicator still works.
 */
#include "mpi_check.h"

static const size_t sizes[] = {0,    1,		8,	 4032,
			       4033, 64 * 1024, 1 << 20, 4 << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int rank, np;

static void check_status(const MPI_Status *st, int src, int tag, size_t len)
{
	int count = -1;

	MPI_Get_count(st, MPI_BYTE, &count);
	CHECK(st->MPI_SOURCE == src, "status source %d, expected %d",
	      st->MPI_SOURCE, src);
	CHECK(st->MPI_TAG == tag, "status tag %d, expected %d", st->MPI_TAG,
	      tag);
	CHECK(count == (int)len, "count %d, expected %zu (from %d tag %d)",
	      count, len, src, tag);
}

static void check_data(const void *buf, size_t len, int src, int dst, int tag)
{
	long bad = verify(buf, len, seed_of(src, dst, len, tag));

	CHECK(bad < 0, "%zu-byte message %d->%d tag %d: wrong byte at %ld", len,
	      src, dst, tag, bad);
}

/* Partners for all pairs: round r (1 .. pow2 - 1) pairs rank with rank^r. */
static int pow2_above(int n)
{
	int p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static void test_blocking_pairs(void)
{
	unsigned char *sbuf = xmalloc(4 << 20), *rbuf = xmalloc(4 << 20);
	int P = pow2_above(np);

	phase("blocking send/recv, all pairs, 0 B .. 4 MiB");
	for (int r = 1; r < P; r++) {
		int peer = rank ^ r;
		MPI_Status st;

		if (peer >= np)
			continue;
		for (size_t k = 0; k < NSIZES; k++) {
			size_t len = sizes[k];
			int tag = (int)k + 1;

			fill(sbuf, len, seed_of(rank, peer, len, tag));
			memset(rbuf, 0xee, len);
			/* lower rank sends first: no cycle of blocking sends */
			if (rank < peer) {
				MPI_OK(MPI_Send(sbuf, (int)len, MPI_BYTE, peer,
						tag, MPI_COMM_WORLD));
				MPI_OK(MPI_Recv(rbuf, (int)len, MPI_BYTE, peer,
						tag, MPI_COMM_WORLD, &st));
			} else {
				MPI_OK(MPI_Recv(rbuf, (int)len, MPI_BYTE, peer,
						tag, MPI_COMM_WORLD, &st));
				MPI_OK(MPI_Send(sbuf, (int)len, MPI_BYTE, peer,
						tag, MPI_COMM_WORLD));
			}
			check_status(&st, peer, tag, len);
			check_data(rbuf, len, peer, rank, tag);
		}
	}
	free(sbuf);
	free(rbuf);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Every size at once to every peer: all receives posted, then all sends. */
static void test_nonblocking_pairs(void)
{
	size_t total = 0;

	phase("nonblocking Isend/Irecv, all sizes to all peers at once");
	for (size_t k = 0; k < NSIZES; k++)
		total += sizes[k];

	/* rounds of (rank + r) / (rank - r) so that every rank sends to one
	 * and receives from another at a time (bounded memory) */
	for (int r = 1; r < np; r++) {
		int dst = (rank + r) % np, src = (rank - r + np) % np;
		unsigned char *sbuf = xmalloc(total), *rbuf = xmalloc(total);
		MPI_Request req[2 * NSIZES];
		MPI_Status st[2 * NSIZES];
		size_t off = 0;

		memset(rbuf, 0xee, total);
		for (size_t k = 0; k < NSIZES; k++) {
			MPI_OK(MPI_Irecv(rbuf + off, (int)sizes[k], MPI_BYTE,
					 src, 100 + (int)k, MPI_COMM_WORLD,
					 &req[k]));
			off += sizes[k];
		}
		/* send in reverse size order: the receives match by tag */
		off = total;
		for (size_t j = NSIZES; j-- > 0;) {
			off -= sizes[j];
			fill(sbuf + off, sizes[j],
			     seed_of(rank, dst, sizes[j], 100 + (int)j));
			MPI_OK(MPI_Isend(sbuf + off, (int)sizes[j], MPI_BYTE,
					 dst, 100 + (int)j, MPI_COMM_WORLD,
					 &req[NSIZES + j]));
		}
		MPI_OK(MPI_Waitall(2 * NSIZES, req, st));
		off = 0;
		for (size_t k = 0; k < NSIZES; k++) {
			check_status(&st[k], src, 100 + (int)k, sizes[k]);
			check_data(rbuf + off, sizes[k], src, rank,
				   100 + (int)k);
			off += sizes[k];
		}
		free(sbuf);
		free(rbuf);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Each rank in turn receives one message from everybody else with
 * MPI_ANY_SOURCE / MPI_ANY_TAG; sizes alternate inline and single-copy. */
static void test_any_source_tag(void)
{
	phase("MPI_ANY_SOURCE / MPI_ANY_TAG");
	for (int root = 0; root < np; root++) {
		size_t len = (root & 1) ? 65536 : 100;
		unsigned char *buf = xmalloc(len);

		if (rank == root) {
			char *seen = calloc(np, 1);

			for (int i = 0; i < np - 1; i++) {
				MPI_Status st;
				int count;

				MPI_OK(MPI_Recv(buf, (int)len, MPI_BYTE,
						MPI_ANY_SOURCE, MPI_ANY_TAG,
						MPI_COMM_WORLD, &st));
				CHECK(st.MPI_SOURCE >= 0 &&
					      st.MPI_SOURCE < np &&
					      st.MPI_SOURCE != root,
				      "bad source %d", st.MPI_SOURCE);
				CHECK(!seen[st.MPI_SOURCE], "source %d twice",
				      st.MPI_SOURCE);
				seen[st.MPI_SOURCE] = 1;
				CHECK(st.MPI_TAG == 1000 + st.MPI_SOURCE,
				      "tag %d from %d", st.MPI_TAG,
				      st.MPI_SOURCE);
				MPI_Get_count(&st, MPI_BYTE, &count);
				CHECK(count == (int)len - st.MPI_SOURCE,
				      "count %d from %d", count, st.MPI_SOURCE);
				check_data(buf, (size_t)count, st.MPI_SOURCE,
					   root, st.MPI_TAG);
			}
			free(seen);
		} else {
			size_t n = len - (size_t)rank;

			fill(buf, n, seed_of(rank, root, n, 1000 + rank));
			MPI_OK(MPI_Send(buf, (int)n, MPI_BYTE, root,
					1000 + rank, MPI_COMM_WORLD));
		}
		free(buf);
	}
	/* a specific source with MPI_ANY_TAG, and MPI_ANY_SOURCE with a
	 * specific tag, while another message waits */
	if (np >= 2) {
		unsigned char b[64];
		MPI_Status st;

		if (rank == 1) {
			fill(b, 10, seed_of(1, 0, 10, 7));
			MPI_OK(MPI_Send(b, 10, MPI_BYTE, 0, 7, MPI_COMM_WORLD));
			fill(b, 20, seed_of(1, 0, 20, 9));
			MPI_OK(MPI_Send(b, 20, MPI_BYTE, 0, 9, MPI_COMM_WORLD));
		} else if (rank == 0) {
			MPI_OK(MPI_Recv(b, 64, MPI_BYTE, MPI_ANY_SOURCE, 9,
					MPI_COMM_WORLD, &st));
			check_status(&st, 1, 9, 20);
			check_data(b, 20, 1, 0, 9);
			MPI_OK(MPI_Recv(b, 64, MPI_BYTE, 1, MPI_ANY_TAG,
					MPI_COMM_WORLD, &st));
			check_status(&st, 1, 7, 10);
			check_data(b, 10, 1, 0, 7);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static const size_t probe_sizes[] = {0, 1, 4032, 4033, 1 << 20};
#define NPROBE (sizeof(probe_sizes) / sizeof(probe_sizes[0]))

/* Nonblocking: a send above the inline size completes only when the
 * receiver has the data, and the receiver takes them in reverse order. */
static void send_probe_msgs(int dst, int base_tag)
{
	MPI_Request req[NPROBE];
	unsigned char *b[NPROBE];

	for (size_t k = 0; k < NPROBE; k++) {
		size_t len = probe_sizes[k];
		int tag = base_tag + (int)k;

		b[k] = xmalloc(len);
		fill(b[k], len, seed_of(rank, dst, len, tag));
		MPI_OK(MPI_Isend(b[k], (int)len, MPI_BYTE, dst, tag,
				 MPI_COMM_WORLD, &req[k]));
	}
	MPI_OK(MPI_Waitall(NPROBE, req, MPI_STATUSES_IGNORE));
	for (size_t k = 0; k < NPROBE; k++)
		free(b[k]);
}

static void test_probe(void)
{
	int dst = (rank + 1) % np, src = (rank - 1 + np) % np;
	MPI_Request sreq;
	MPI_Status st;
	int count, flag;

	phase("MPI_Probe / MPI_Iprobe");
	/* Probe with the exact source and tag, in reverse tag order: the
	 * peeked message is the right one, and it stays until received */
	for (int pass = 0; pass < 2; pass++) {
		int base = 2000 + 100 * pass;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank % 2 == 0) {
			send_probe_msgs(dst, base);
		}
		for (size_t j = NPROBE; j-- > 0;) {
			int tag = base + (int)j;
			unsigned char *b;

			if (pass == 0) {
				MPI_OK(MPI_Probe(src, tag, MPI_COMM_WORLD,
						 &st));
			} else {
				flag = 0;
				while (!flag)
					MPI_OK(MPI_Iprobe(src, tag,
							  MPI_COMM_WORLD, &flag,
							  &st));
			}
			check_status(&st, src, tag, probe_sizes[j]);
			/* probing again sees the same message */
			MPI_OK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag,
					  &st));
			CHECK(flag, "second Iprobe did not see tag %d", tag);
			check_status(&st, src, tag, probe_sizes[j]);
			MPI_Get_count(&st, MPI_BYTE, &count);
			b = xmalloc((size_t)count);
			MPI_OK(MPI_Recv(b, count, MPI_BYTE, src, tag,
					MPI_COMM_WORLD, &st));
			check_status(&st, src, tag, probe_sizes[j]);
			check_data(b, (size_t)count, src, rank, tag);
			free(b);
			/* and it is gone */
			MPI_OK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag,
					  &st));
			CHECK(!flag, "tag %d still probed after its receive",
			      tag);
		}
		if (rank % 2 != 0) {
			send_probe_msgs(dst, base);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* Iprobe on nothing */
	MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 2999, MPI_COMM_WORLD, &flag, &st));
	CHECK(!flag, "Iprobe found a message that was never sent");

	/* Probe with MPI_ANY_SOURCE / MPI_ANY_TAG, message from everyone */
	if (rank == 0) {
		for (int i = 1; i < np; i++) {
			unsigned char *b;
			int s, t;

			MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG,
					 MPI_COMM_WORLD, &st));
			s = st.MPI_SOURCE;
			t = st.MPI_TAG;
			CHECK(t == 2500 + s, "probed tag %d from %d", t, s);
			MPI_Get_count(&st, MPI_BYTE, &count);
			CHECK(count == 5000 * s, "probed count %d from %d",
			      count, s);
			b = xmalloc((size_t)count);
			MPI_OK(MPI_Recv(b, count, MPI_BYTE, s, t,
					MPI_COMM_WORLD, &st));
			check_status(&st, s, t, (size_t)count);
			check_data(b, (size_t)count, s, 0, t);
			free(b);
		}
	} else {
		size_t n = 5000 * (size_t)rank;
		unsigned char *b = xmalloc(n);

		fill(b, n, seed_of(rank, 0, n, 2500 + rank));
		MPI_OK(MPI_Isend(b, (int)n, MPI_BYTE, 0, 2500 + rank,
				 MPI_COMM_WORLD, &sreq));
		MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
		free(b);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void test_mprobe(void)
{
	int dst = (rank + 1) % np, src = (rank - 1 + np) % np;
	MPI_Message msg;
	MPI_Request req;
	MPI_Status st;
	int count, flag;

	phase("MPI_Mprobe / MPI_Improbe / MPI_Mrecv / MPI_Imrecv");
	for (int pass = 0; pass < 2; pass++) {
		int base = 3000 + 100 * pass;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank % 2 == 0)
			send_probe_msgs(dst, base);
		/* matched in reverse tag order: each claim takes its own */
		for (size_t j = NPROBE; j-- > 0;) {
			int tag = base + (int)j;
			unsigned char *b;

			if (pass == 0) {
				MPI_OK(MPI_Mprobe(src, tag, MPI_COMM_WORLD,
						  &msg, &st));
			} else {
				flag = 0;
				while (!flag)
					MPI_OK(MPI_Improbe(src, tag,
							   MPI_COMM_WORLD,
							   &flag, &msg, &st));
			}
			CHECK(msg != MPI_MESSAGE_NULL, "null message");
			check_status(&st, src, tag, probe_sizes[j]);
			/* a matched message is invisible to further probes */
			MPI_OK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag,
					  MPI_STATUS_IGNORE));
			CHECK(!flag, "matched message (tag %d) probed again",
			      tag);
			MPI_Get_count(&st, MPI_BYTE, &count);
			b = xmalloc((size_t)count);
			memset(b, 0xee, (size_t)count);
			if (pass == 0) {
				MPI_OK(MPI_Mrecv(b, count, MPI_BYTE, &msg,
						 &st));
			} else {
				MPI_OK(MPI_Imrecv(b, count, MPI_BYTE, &msg,
						  &req));
				MPI_OK(MPI_Wait(&req, &st));
			}
			CHECK(msg == MPI_MESSAGE_NULL,
			      "message handle not reset by the receive");
			check_status(&st, src, tag, probe_sizes[j]);
			check_data(b, (size_t)count, src, rank, tag);
			free(b);
		}
		if (rank % 2 != 0)
			send_probe_msgs(dst, base);
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* MPI_ANY_SOURCE: rank 0 matches everybody's two messages one at a
	 * time; a message once matched is never matched again */
	if (rank == 0) {
		int *got = calloc(np, sizeof(int));

		for (int i = 0; i < 2 * (np - 1); i++) {
			unsigned char *b;
			int s;

			MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG,
					  MPI_COMM_WORLD, &msg, &st));
			s = st.MPI_SOURCE;
			CHECK(s > 0 && s < np, "source %d", s);
			/* non-overtaking: first tag 3500+s, then 3600+s */
			CHECK(st.MPI_TAG == 3500 + 100 * got[s] + s,
			      "tag %d from %d (message %d of it)", st.MPI_TAG,
			      s, got[s]);
			MPI_Get_count(&st, MPI_BYTE, &count);
			b = xmalloc((size_t)count);
			MPI_OK(MPI_Mrecv(b, count, MPI_BYTE, &msg, &st));
			check_data(b, (size_t)count, s, 0, st.MPI_TAG);
			free(b);
			got[s]++;
		}
		for (int s = 1; s < np; s++)
			CHECK(got[s] == 2, "%d messages from %d", got[s], s);
		free(got);
	} else {
		for (int m = 0; m < 2; m++) {
			size_t n = m ? 70000 : 300 + (size_t)rank;
			int tag = 3500 + 100 * m + rank;
			unsigned char *b = xmalloc(n);

			fill(b, n, seed_of(rank, 0, n, tag));
			MPI_OK(MPI_Send(b, (int)n, MPI_BYTE, 0, tag,
					MPI_COMM_WORLD));
			free(b);
		}
	}
	/* MPI_Mprobe on MPI_PROC_NULL */
	MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
	CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL)");
	MPI_Barrier(MPI_COMM_WORLD);
}

static void test_ssend(void)
{
	int dst = (rank + 1) % np, src = (rank - 1 + np) % np;
	size_t lens[] = {0, 8, 4033, 1 << 20};

	phase("MPI_Ssend / MPI_Issend");
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k];
		unsigned char *sb = xmalloc(len), *rb = xmalloc(len);
		MPI_Request req;
		MPI_Status st;
		int tag = 4000 + (int)k, flag;

		fill(sb, len, seed_of(rank, dst, len, tag));
		/* blocking: even ranks send first */
		if (rank % 2 == 0) {
			MPI_OK(MPI_Ssend(sb, (int)len, MPI_BYTE, dst, tag,
					 MPI_COMM_WORLD));
			MPI_OK(MPI_Recv(rb, (int)len, MPI_BYTE, src, tag,
					MPI_COMM_WORLD, &st));
		} else {
			MPI_OK(MPI_Recv(rb, (int)len, MPI_BYTE, src, tag,
					MPI_COMM_WORLD, &st));
			MPI_OK(MPI_Ssend(sb, (int)len, MPI_BYTE, dst, tag,
					 MPI_COMM_WORLD));
		}
		check_status(&st, src, tag, len);
		check_data(rb, len, src, rank, tag);

		/* an Issend does not complete before its receive is posted:
		 * the receives are posted only after the barrier */
		tag += 50;
		fill(sb, len, seed_of(rank, dst, len, tag));
		MPI_OK(MPI_Issend(sb, (int)len, MPI_BYTE, dst, tag,
				  MPI_COMM_WORLD, &req));
		for (int i = 0; i < 200; i++) {
			MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
			CHECK(!flag,
			      "Issend of %zu bytes completed before the "
			      "receive was posted",
			      len);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_OK(MPI_Recv(rb, (int)len, MPI_BYTE, src, tag,
				MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		check_status(&st, src, tag, len);
		check_data(rb, len, src, rank, tag);
		free(sb);
		free(rb);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* N messages to the next rank before it posts any receive; it receives
 * the upper half by tag in reverse order, then the lower half with
 * MPI_ANY_TAG, which must come in sending order (non-overtaking). */
#define NUNEXP 600
static size_t unexp_len(int i)
{
	static const size_t l[] = {0, 1, 8, 64, 256, 1000, 4032, 4033};

	return (i % 97 == 0) ? 65536 : l[i % 8];
}

static void test_unexpected(void)
{
	int dst = (rank + 1) % np, src = (rank - 1 + np) % np;
	MPI_Request *req = xmalloc(NUNEXP * sizeof(*req));
	unsigned char **sb = xmalloc(NUNEXP * sizeof(*sb));
	unsigned char *rb = xmalloc(65536);
	MPI_Status st;

	phase("unexpected messages: 600 sends before their receives");
	for (int i = 0; i < NUNEXP; i++) {
		size_t n = unexp_len(i);

		sb[i] = xmalloc(n);
		fill(sb[i], n, seed_of(rank, dst, n, i));
		MPI_OK(MPI_Isend(sb[i], (int)n, MPI_BYTE, dst, i,
				 MPI_COMM_WORLD, &req[i]));
	}
	/* all ranks have issued their sends before any receive is posted */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = NUNEXP - 1; i >= NUNEXP / 2; i--) {
		MPI_OK(MPI_Recv(rb, 65536, MPI_BYTE, src, i, MPI_COMM_WORLD,
				&st));
		check_status(&st, src, i, unexp_len(i));
		check_data(rb, unexp_len(i), src, rank, i);
	}
	for (int i = 0; i < NUNEXP / 2; i++) {
		MPI_OK(MPI_Recv(rb, 65536, MPI_BYTE, src, MPI_ANY_TAG,
				MPI_COMM_WORLD, &st));
		check_status(&st, src, i, unexp_len(i));
		check_data(rb, unexp_len(i), src, rank, i);
	}
	MPI_OK(MPI_Waitall(NUNEXP, req, MPI_STATUSES_IGNORE));
	for (int i = 0; i < NUNEXP; i++)
		free(sb[i]);
	free(sb);
	free(req);
	free(rb);
	MPI_Barrier(MPI_COMM_WORLD);
}

static void test_truncate(void)
{
	int dst = (rank + 1) % np, src = (rank - 1 + np) % np;
	/* {sent, posted}: inline, single-copy, single-copy into inline */
	static const size_t cases[][2] = {
		{100, 10}, {4032, 4031}, {65536, 4033}, {1 << 20, 4000}};
	unsigned char *sb = xmalloc(1 << 20), *rb = xmalloc(1 << 20);

	phase("truncation: MPI_ERR_TRUNCATE with MPI_ERRORS_RETURN");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t slen = cases[k][0], rlen = cases[k][1];
		int tag = 5000 + (int)k, rc, cls = -1;
		MPI_Request rreq, sreq;
		MPI_Status st;

		/* blocking receive */
		fill(sb, slen, seed_of(rank, dst, slen, tag));
		MPI_OK(MPI_Isend(sb, (int)slen, MPI_BYTE, dst, tag,
				 MPI_COMM_WORLD, &sreq));
		rc = MPI_Recv(rb, (int)rlen, MPI_BYTE, src, tag, MPI_COMM_WORLD,
			      &st);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_TRUNCATE,
		      "MPI_Recv of %zu bytes into %zu: error class %d, "
		      "expected MPI_ERR_TRUNCATE (%d)",
		      slen, rlen, cls, MPI_ERR_TRUNCATE);
		/* the send itself succeeds */
		MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

		/* nonblocking receive posted before the send */
		tag += 10;
		MPI_OK(MPI_Irecv(rb, (int)rlen, MPI_BYTE, src, tag,
				 MPI_COMM_WORLD, &rreq));
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_OK(MPI_Isend(sb, (int)slen, MPI_BYTE, dst, tag,
				 MPI_COMM_WORLD, &sreq));
		rc = MPI_Wait(&rreq, &st);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_TRUNCATE,
		      "MPI_Irecv+Wait of %zu bytes into %zu: error class %d, "
		      "expected MPI_ERR_TRUNCATE (%d)",
		      slen, rlen, cls, MPI_ERR_TRUNCATE);
		MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

		/* the pair still works afterwards */
		tag += 10;
		fill(sb, slen, seed_of(rank, dst, slen, tag));
		MPI_OK(MPI_Sendrecv(sb, (int)slen, MPI_BYTE, dst, tag, rb,
				    (int)slen, MPI_BYTE, src, tag,
				    MPI_COMM_WORLD, &st));
		check_status(&st, src, tag, slen);
		check_data(rb, slen, src, rank, tag);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	free(sb);
	free(rb);
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	chk_init(&argc, &argv);
	rank = chk_rank;
	np = chk_size;
	CHECK(np >= 2, "needs at least 2 ranks");

	test_blocking_pairs();
	test_nonblocking_pairs();
	test_any_source_tag();
	test_probe();
	test_mprobe();
	test_ssend();
	test_unexpected();
	test_truncate();

	phase("done");
	if (rank == 0)
		printf("mpi_p2p: PASS (%d ranks)\n", np);
	MPI_Finalize();
	return 0;
}
