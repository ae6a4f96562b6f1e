/* The start and the agreed end of a soak run; see soak_run.h. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "gba_ft_common.h"
#include "soak_run.h"

void soak_ready(int rank, long k)
{
	const char *path = getenv("SOAK_READY_FILE");
	int fd;

	if (rank || k != 1 || !path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

bool soak_stop_after(struct soak_stop *s, int rank, long k, long max_k,
		     uint64_t end_ms)
{
	long last, none = 0;

	if (max_k && k >= max_k)
		return true;
	if (rank == 0 && end_ms && ft_now_ms() >= end_ms)
		atomic_compare_exchange_strong(&s->last, &none, k + 1);
	last = atomic_load(&s->last);
	return last && k >= last;
}
