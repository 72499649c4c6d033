/*
 * clock.h: the recorder's time source. Reads the TSC when it is invariant
 * (about 10 ns), else CLOCK_MONOTONIC through the vDSO. Raw units go into
 * records; calibration pairs in the trace turn them into nanoseconds later.
 */
#ifndef FT_CLOCK_H
#define FT_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FT_HAVE_TSC 1
#endif

extern int ft_clock_kind;       /* FT_CLOCK_TSC or FT_CLOCK_MONO */

static inline uint64_t ft_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ft_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) uint64_t ft_now(void)
{
#ifdef FT_HAVE_TSC
	if (__builtin_expect(ft_clock_kind == 1, 1))
		return __rdtsc();
#endif
	return ft_mono_ns();
}

struct ft_clock_pair;
void ft_clock_init(void);
void ft_clock_sample(struct ft_clock_pair *out);

#endif
