/*
 * clock.h: the recorder's time source. Reads the TSC when it is invariant
 * (about 10 ns), else CLOCK_MONOTONIC through the vDSO. Raw units go into
 * records; calibration pairs in the trace turn them into nanoseconds later.
 * A TSC that parts from CLOCK_MONOTONIC during the run is given up: ticks
 * are then CLOCK_MONOTONIC mapped onto the ticks' line (clock.c).
 */
#ifndef FT_CLOCK_H
#define FT_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FT_HAVE_TSC 1
#endif

/* FT_CLOCK_TSC or FT_CLOCK_MONO (format.h), or one of these, whose
 * readings are ticks too (clock kind 1 in the file): */
#define FT_CLOCK_MAPPED 3       /* CLOCK_MONOTONIC on the ticks' line: after a fall-back */
#define FT_CLOCK_TEST   4       /* FEEDTRACE_TEST_TICK_DRIFT_PPM's tick source */
extern int ft_clock_kind;

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

uint64_t ft_clock_read(void);

/* The TSC inline; any other clock out of line (it costs a system call's
 * vDSO path anyway), so that the hooks stay small. */
static inline __attribute__((always_inline)) uint64_t ft_now(void)
{
#ifdef FT_HAVE_TSC
	if (__builtin_expect(ft_clock_kind == 1, 1))
		return __rdtsc();
#endif
	return ft_clock_read();
}

struct ft_clock_pair;
void ft_clock_init(void);
void ft_clock_after_fork_child(void);   /* its time namespace, again */
void ft_clock_sample(struct ft_clock_pair *out);
void ft_clock_file_start(const struct ft_clock_pair *c);
void ft_clock_written(const struct ft_clock_pair *c);
int ft_clock_check(struct ft_clock_pair *fell_back);
uint32_t ft_clock_file_kind(void);

#endif
