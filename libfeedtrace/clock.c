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

/* This process's time namespace's CLOCK_MONOTONIC offset from the host's
 * (`unshare -T --monotonic S`; /proc/self/timens_offsets): subtracted from
 * every MONOTONIC reading a calibration pair carries, so that every
 * process of a run is on the host's clock. The ticks need nothing: the
 * TSC ignores time namespaces, and a MONOTONIC tick count is mapped
 * through the pairs. */
static int64_t mono_offset;

/* The file's "monotonic SEC NSEC" line (the clock's id, 1, on a kernel
 * that writes numbers); 0 when there is no such file (no time namespaces). */
static int64_t read_mono_offset(void)
{
	char buf[256];
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/timens_offsets",
			      O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char *p = line;
		if (!strncmp(p, "monotonic", 9))
			p += 9;
		else if (p[0] == '1' && (p[1] == ' ' || p[1] == '\t'))
			p += 1;
		else
			continue;
		char *end;
		long long sec = strtoll(p, &end, 10);
		long long nsec = strtoll(end, NULL, 10);
		return (int64_t)sec * 1000000000ll + nsec;
	}
	return 0;
}

/* In a fork child: it is in the time namespace its parent made for its
 * children, if any (unshare(CLONE_NEWTIME)). */
void ft_clock_after_fork_child(void)
{
	mono_offset = read_mono_offset();
}

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
	mono_offset = read_mono_offset();
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
	out->mono_ns = m0 + (m1 - m0) / 2 - (uint64_t)mono_offset;
	out->real_ns = ft_real_ns() + (uint64_t)real_skew;
	out->reserved = 0;
}
