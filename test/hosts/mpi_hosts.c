/*
 * An MPI job across emulated hosts (test/hosts/emu_hosts.sh):
 *   mpi_hosts HOSTS
 * checks that the ranks run on HOSTS distinct hosts (hostnames, gathered
 * with MPI_Allgather) with the same number of ranks on each, and that the
 * placement is the one the launcher reports (MPI_Get_processor_name);
 * then passes 1 MiB around the ring of ranks (every byte checked) and
 * checks an MPI_Allreduce.  Rank 0 prints one line with the hosts.
 */
#include "../mpi/mpi_check.h"

#include <unistd.h>

#define NAMELEN 64
#define RING_BYTES (1 << 20)

int main(int argc, char **argv)
{
	char me[NAMELEN] = "", pname[MPI_MAX_PROCESSOR_NAME] = "";
	char *all, *sbuf, *rbuf;
	int want, plen = 0, nhosts = 0, left, right;
	long sum = 0, expect;

	chk_init(&argc, &argv);
	CHECK(argc == 2 && atoi(argv[1]) > 0, "usage: mpi_hosts HOSTS");
	want = atoi(argv[1]);

	phase("hostnames");
	CHECK(gethostname(me, sizeof(me) - 1) == 0, "gethostname failed");
	MPI_OK(MPI_Get_processor_name(pname, &plen));
	CHECK(strcmp(me, pname) == 0, "hostname %s, processor name %s", me,
	      pname);
	all = calloc(chk_size, NAMELEN);
	CHECK(all != NULL, "out of memory");
	MPI_OK(MPI_Allgather(me, NAMELEN, MPI_CHAR, all, NAMELEN, MPI_CHAR,
			     MPI_COMM_WORLD));
	/* distinct hosts, and ranks per host */
	for (int i = 0; i < chk_size; i++) {
		int first = 1, on = 0;

		for (int j = 0; j < chk_size; j++) {
			if (j < i && !strcmp(all + i * NAMELEN, all + j * NAMELEN))
				first = 0;
			if (!strcmp(all + i * NAMELEN, all + j * NAMELEN))
				on++;
		}
		nhosts += first;
		CHECK(on * want == chk_size, "%d of %d ranks on host %s", on,
		      chk_size, all + i * NAMELEN);
	}
	CHECK(nhosts == want, "ranks on %d hosts, expected %d", nhosts, want);

	phase("1 MiB around the ring");
	sbuf = xmalloc(RING_BYTES);
	rbuf = xmalloc(RING_BYTES);
	right = (chk_rank + 1) % chk_size;
	left = (chk_rank + chk_size - 1) % chk_size;
	fill(sbuf, RING_BYTES, seed_of(chk_rank, right, RING_BYTES, 7));
	memset(rbuf, 0, RING_BYTES);
	MPI_OK(MPI_Sendrecv(sbuf, RING_BYTES, MPI_BYTE, right, 7, rbuf,
			    RING_BYTES, MPI_BYTE, left, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
	CHECK(verify(rbuf, RING_BYTES, seed_of(left, chk_rank, RING_BYTES, 7)) <
		      0,
	      "ring: wrong data from rank %d (%s)", left,
	      all + left * NAMELEN);

	phase("allreduce");
	MPI_OK(MPI_Allreduce(&(long){chk_rank + 1}, &sum, 1, MPI_LONG, MPI_SUM,
			     MPI_COMM_WORLD));
	expect = (long)chk_size * (chk_size + 1) / 2;
	CHECK(sum == expect, "allreduce: %ld, expected %ld", sum, expect);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	if (chk_rank == 0) {
		printf("mpi_hosts: %d ranks on %d hosts:", chk_size, nhosts);
		for (int i = 0; i < chk_size; i++)
			printf(" %d@%s", i, all + i * NAMELEN);
		printf("; ring and allreduce correct\n");
	}
	free(sbuf);
	free(rbuf);
	free(all);
	MPI_Finalize();
	return 0;
}
