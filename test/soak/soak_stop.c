/* The agreed end of a soak run; see soak_stop.h. */
#include "soak_stop.h"
#include "gba_ft_common.h"

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
