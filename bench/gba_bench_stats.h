/*
 * Statistics the benchmarks in bench/ share.
 */
#ifndef GBA_BENCH_STATS_H
#define GBA_BENCH_STATS_H

#include <stdlib.h>

static int gba_bench_cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, c = *(const double *)y;

	return (a > c) - (a < c);
}

/* gba_bench_median - median of the @n (> 0) values of @v; sorts @v. */
static inline double gba_bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), gba_bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* GBA_BENCH_STATS_H */
