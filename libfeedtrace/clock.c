/*
 * clock.c: chooses the clock (the TSC wherever it is invariant and the
 * kernel has not found it unstable), takes calibration pairs (ticks,
 * MONOTONIC, REALTIME), checks at every flush that ticks and MONOTONIC
 * still agree, and falls back to MONOTONIC for the rest of the run when
 * they part. Runs at start-up and on the flusher thread (and in the raw
 * drain, which only takes pairs), never inside a hook but for
 * ft_clock_read, the readings when the clock is not the TSC.
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
#ifdef FT_HAVE_TSC
#include <cpuid.h>
#endif

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

/* FEEDTRACE_TEST_TICK_DRIFT_PPM (test-only): ticks from a test source
 * instead of the TSC: two a nanosecond of MONOTONIC until 300 ms after
 * start-up, then that many ppm faster (negative: slower), as a TSC that
 * parts from MONOTONIC (a live migration) would. */
#define TEST_DRIFT_AFTER_NS 300000000ull
static int64_t test_ppm;
static uint64_t test_onset_ns;

/* The ticks' line after a fall-back: ticks = t0 + (mono - m0) * mul / 2^32,
 * at the rate the calibration had before the clocks parted. */
static struct { uint64_t t0, m0, mul; } map;

/* The pairs of the file being written: its first (the header's) and the
 * latest; a check predicts MONOTONIC from ticks on the line through them. */
static struct ft_clock_pair cal_first, cal_last;
static int parted_once;                 /* the previous check found them apart */
static uint64_t sample_window_ns;       /* the last pair's MONOTONIC reads, apart */

#ifdef FT_HAVE_TSC
static long read_small(const char *path, char *buf, size_t cap)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = syscall(SYS_read, fd, buf, cap - 1);
	syscall(SYS_close, fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

static int has_word(const char *text, const char *word)
{
	size_t k = strlen(word);
	for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
		if ((p == text || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[k] == ' ' || p[k] == '\n' || p[k] == 0))
			return 1;
	return 0;
}

/* The CPU says its TSC runs at a constant rate in every power state:
 * CPUID 0x80000007 EDX bit 8, or, where a hypervisor hides that leaf, the
 * kernel's flags for the first CPU (constant_tsc and nonstop_tsc, or
 * tsc_reliable). */
static int tsc_invariant(void)
{
	unsigned a, b, c, d;
	if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
	    __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)))
		return 1;
	static char info[8192];
	if (read_small("/proc/cpuinfo", info, sizeof info) <= 0)
		return 0;
	char *flags = strstr(info, "\nflags");
	if (!flags)
		return 0;
	char *eol = strchr(flags + 1, '\n');
	if (eol)
		*eol = 0;
	return (has_word(flags, "constant_tsc") && has_word(flags, "nonstop_tsc")) ||
	       has_word(flags, "tsc_reliable");
}

/* The TSC serves when the kernel uses it as its clocksource, or when it
 * is invariant and still among the kernel's clocksources (a TSC the
 * kernel's watchdog found unstable leaves that list): a KVM guest's
 * kvm-clock is a TSC read plus the hypervisor's scaling, chosen for its
 * rating, not because the TSC was distrusted. */
static int tsc_usable(void)
{
	char cur[64], avail[512];
	const char *dir = "/sys/devices/system/clocksource/clocksource0/";
	char path[128];
	strcpy(path, dir);
	strcat(path, "current_clocksource");
	if (read_small(path, cur, sizeof cur) >= 3 && strncmp(cur, "tsc", 3) == 0 &&
	    (cur[3] == '\n' || cur[3] == 0))
		return 1;
	strcpy(path, dir);
	strcat(path, "available_clocksource");
	if (read_small(path, avail, sizeof avail) <= 0 || !has_word(avail, "tsc"))
		return 0;
	return tsc_invariant();
}
#endif

static void read_test_drift(void)
{
	const char *v = getenv("FEEDTRACE_TEST_TICK_DRIFT_PPM");
	if (!v || !*v)
		return;
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (*end || errno || end == v || x <= -1000000 || x > 1000000) {
		ft_log("feedtrace: FEEDTRACE_TEST_TICK_DRIFT_PPM=\"%.40s\" is not a whole "
		       "number of ppm from -999999 to 1000000; using the TSC", v);
		return;
	}
	test_ppm = x;
	test_onset_ns = ft_mono_ns() + TEST_DRIFT_AFTER_NS;
	ft_clock_kind = FT_CLOCK_TEST;
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
	if (tsc_usable())
		ft_clock_kind = FT_CLOCK_TSC;
#endif
	read_test_drift();
}

/* The clock kind a file's header gives: every kind but MONOTONIC's counts
 * ticks on one line (a fork child after a fall-back included). */
uint32_t ft_clock_file_kind(void)
{
	return ft_clock_kind == FT_CLOCK_MONO ? FT_CLOCK_MONO : FT_CLOCK_TSC;
}

/* A reading when the clock is not the TSC (ft_now's cold path):
 * MONOTONIC, the test source, or MONOTONIC on the ticks' line. */
uint64_t ft_clock_read(void)
{
	uint64_t m = ft_mono_ns();
	int kind = __atomic_load_n(&ft_clock_kind, __ATOMIC_ACQUIRE);
	if (kind == FT_CLOCK_MONO)
		return m;
#ifdef FT_HAVE_TSC
	if (kind == FT_CLOCK_TSC)
		return __rdtsc();       /* read the kind before it was set */
#endif
	if (kind == FT_CLOCK_TEST) {
		if (m <= test_onset_ns)
			return 2 * m;
		uint64_t d = m - test_onset_ns;
		int64_t extra = (int64_t)((__int128)(2 * d) * test_ppm / 1000000);
		return 2 * test_onset_ns + 2 * d + (uint64_t)extra;
	}
	uint64_t d = m > map.m0 ? m - map.m0 : 0;
	return map.t0 + (uint64_t)(((unsigned __int128)d * map.mul) >> 32);
}

/* One pair: ticks read between two MONOTONIC reads, stamped at their
 * middle; the tightest of three tries (a thread preempted between its
 * reads would stamp the pair off by the time it waited). */
void ft_clock_sample(struct ft_clock_pair *out)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3 && best > 2000; i++) {
		uint64_t m0 = ft_mono_ns();
		uint64_t t = ft_now();
		uint64_t m1 = ft_mono_ns();
		if (m1 - m0 < best) {
			best = m1 - m0;
			out->ticks = t;
			out->mono_ns = m0 + (m1 - m0) / 2 - (uint64_t)mono_offset;
		}
	}
	sample_window_ns = best;
	out->real_ns = ft_real_ns() + (uint64_t)real_skew;
	out->parted_ns = 0;
}

/* The header's pair of a new file (start-up, a fork child's file). */
void ft_clock_file_start(const struct ft_clock_pair *c)
{
	cal_first = *c;
	cal_last = *c;
	parted_once = 0;
}

/* A pair written to the file after the header's. */
void ft_clock_written(const struct ft_clock_pair *c)
{
	if (c->mono_ns > cal_last.mono_ns)
		cal_last = *c;
}

/* At every flush (the flusher thread, holding the flush lock): do ticks
 * still follow MONOTONIC? The line through the file's first and latest
 * pairs predicts MONOTONIC from a fresh pair's ticks; a miss of more than
 * 2 ms plus 0.1 % of the time since the latest pair (MONOTONIC is slewed
 * by NTP by 500 ppm at most), on two checks in a row, ends the ticks:
 * from then on every reading is MONOTONIC mapped onto the ticks' line at
 * the rate it had, from a point no earlier than any tick already read.
 * Returns 1 then, with the pair that starts the mapping in *fell_back
 * (parted_ns: by how much the clocks had parted, ns, >= 1), to be written. */
int ft_clock_check(struct ft_clock_pair *fell_back)
{
	int kind = ft_clock_kind;
	if (kind != FT_CLOCK_TSC && kind != FT_CLOCK_TEST)
		return 0;
	uint64_t span_ns = cal_last.mono_ns - cal_first.mono_ns;
	if (span_ns < 10000000 || cal_last.ticks <= cal_first.ticks)
		return 0;               /* no rate yet: the 20 ms pair comes first */
	struct ft_clock_pair p;
	ft_clock_sample(&p);
	if (sample_window_ns > 100000)
		return 0;               /* preempted in every try: no judgement */
	double ticks_per_ns = (double)(cal_last.ticks - cal_first.ticks) / (double)span_ns;
	double since = (double)(int64_t)(p.mono_ns - cal_last.mono_ns);
	double predicted = (double)cal_last.mono_ns +
			   (double)(int64_t)(p.ticks - cal_last.ticks) / ticks_per_ns;
	double miss = (double)p.mono_ns - predicted;
	if (miss < 0)
		miss = -miss;
	if (!(miss > 2e6 + 1e-3 * (since > 0 ? since : 0))) {
		parted_once = 0;
		return 0;
	}
	if (!parted_once++)
		return 0;
	/* the line's ticks now, or the tick just read if the ticks ran ahead,
	 * and 1 ms of ticks more: a thread that read the ticks between that
	 * reading and the switch below read less */
	uint64_t line = cal_last.ticks + (uint64_t)((double)(p.mono_ns - cal_last.mono_ns) * ticks_per_ns);
	map.t0 = (p.ticks > line ? p.ticks : line) + (uint64_t)(1e6 * ticks_per_ns);
	map.m0 = p.mono_ns;
	map.mul = (uint64_t)(ticks_per_ns * 4294967296.0);
	__atomic_store_n(&ft_clock_kind, FT_CLOCK_MAPPED, __ATOMIC_RELEASE);
	fell_back->ticks = map.t0;
	fell_back->mono_ns = p.mono_ns;
	fell_back->real_ns = p.real_ns;
	fell_back->parted_ns = miss >= 1 ? (uint64_t)miss : 1;
	cal_last = *fell_back;
	return 1;
}
