/*
 * clock.c: chooses the clock (TSC only when the kernel itself trusts it as
 * its clocksource) and takes calibration pairs (ticks, MONOTONIC, REALTIME).
 * Runs at start-up and on the flusher thread, never inside a hook.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "clock.h"
#include "format.h"
#include "log.h"

int ft_clock_kind = FT_CLOCK_MONO;

/* FEEDTRACE_TEST_REALTIME_SKEW_NS (test-only): added to every REALTIME
 * reading this process records, as on a host whose wall clock is off by
 * that much (tests of the ranks' clock alignment across hosts) */
static int64_t real_skew;

/* The kernel picks "tsc" as clocksource only when the TSC is invariant and
 * synchronised across CPUs: the same guarantee we need. */
static int kernel_trusts_tsc(void)
{
	char buf[32] = {0};
	int fd = (int)syscall(SYS_openat, AT_FDCWD,
		"/sys/devices/system/clocksource/clocksource0/current_clocksource",
		O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	return n >= 3 && strncmp(buf, "tsc", 3) == 0;
}

void ft_clock_init(void)
{
	const char *v = getenv("FEEDTRACE_TEST_REALTIME_SKEW_NS");
	if (v && *v) {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (*end || errno || end == v)
			ft_log("feedtrace: FEEDTRACE_TEST_REALTIME_SKEW_NS=\"%.40s\" is not a whole "
			       "number of nanoseconds; using 0", v);
		else
			real_skew = x;
	}
#ifdef FT_HAVE_TSC
	if (kernel_trusts_tsc())
		ft_clock_kind = FT_CLOCK_TSC;
#endif
}

/* One pair: ticks read between two MONOTONIC reads, stamped at their middle. */
void ft_clock_sample(struct ft_clock_pair *out)
{
	uint64_t m0 = ft_mono_ns();
	uint64_t t = ft_now();
	uint64_t m1 = ft_mono_ns();
	out->ticks = t;
	out->mono_ns = m0 + (m1 - m0) / 2;
	out->real_ns = ft_real_ns() + (uint64_t)real_skew;
	out->reserved = 0;
}
