/* What every benchmark in bench/ shares: the clock it measures with and
 * the median it quotes. Thread CPU time, not wall-clock: the machines are
 * shared, and wall-clock time counts the time a process waits for a core.
 * Benchmarks print figures and assert nothing about speed. */
#ifndef VMSPLIT_BENCH_UTIL_H
#define VMSPLIT_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* The calling thread's CPU time, in seconds. */
static inline double bench_thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* qsort comparison of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
