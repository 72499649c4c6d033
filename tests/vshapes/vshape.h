/*
 * vshape.h: what the verdict's test shapes (the programs of tests/vshapes) share: the
 * driver (examples/cudrv.h), option parsing, full pipe reads and writes,
 * and the "fact" lines the tests read (pid, tids, planted durations).
 * Owns no policy: each shape decides its feed; never prints anything but facts.
 */
#ifndef VSHAPE_H
#define VSHAPE_H

#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../examples/cudrv.h"

/* a fact the test reads: "fact KEY VALUE" on stdout, flushed at once (so a
 * forked child's buffer is never printed twice) */
#define FACT(key, fmt, ...) do { printf("fact " key " " fmt "\n", __VA_ARGS__); \
	fflush(stdout); } while (0)

static inline long vs_tid(void)
{
	return syscall(SYS_gettid);
}

/* argv has "--name"? */
static inline int vs_flag(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

/* the value after "--name", or dflt */
static inline const char *vs_opt(int argc, char **argv, const char *name, const char *dflt)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return dflt;
}

/* CPU work of a producer: spins for ns nanoseconds of wall time, calling
 * sched_yield() every ~20 us, so that on a machine with fewer cores than
 * spinners the feeding thread still wakes at once from its syncs and waits
 * (its wake-up delay would otherwise look like GPU time: the report has no
 * GPU-side timestamps). The producer stays on the CPU whenever it can. */
static inline void vs_busy(uint64_t ns)
{
	uint64_t end = cudrv_now_ns() + ns, next = 0;
	for (uint64_t now; (now = cudrv_now_ns()) < end;)
		if (now >= next) {
			sched_yield();
			next = now + 20000;
		}
}

/* CPU work that is really CPU work: spins until this thread has used ns
 * nanoseconds of CPU time (CLOCK_THREAD_CPUTIME_ID), yielding every ~1 ms
 * of wall time (every 20 us, a thread beside busy loops got almost no CPU). The planted preprocessing of the starved
 * shapes uses it: on a loaded machine a wall-clock spin that yields gets
 * little CPU and its thread no longer looks like a busy producer (the
 * streams3 shape lost a loader that way, 1 run in ~15 of the loaded
 * suite), while this one only stretches in wall time, starving the GPU
 * more, as a slow transform on a busy machine does. */
static inline uint64_t vs_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void vs_cpu(uint64_t ns)
{
	uint64_t end = vs_thread_cpu_ns() + ns, next = 0;
	while (vs_thread_cpu_ns() < end) {
		uint64_t now = cudrv_now_ns();
		if (now >= next) {
			sched_yield();
			next = now + 1000000;
		}
	}
}

static inline void vs_die(const char *what)
{
	perror(what);
	exit(1);
}

/* all n bytes (retries short reads and EINTR); 0 at end of file before any */
static inline int vs_read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			vs_die("read");
		if (r == 0) {
			if (got == 0)
				return 0;
			fprintf(stderr, "short message\n");
			exit(1);
		}
		got += (size_t)r;
	}
	return 1;
}

static inline void vs_write_full(int fd, const void *buf, size_t n)
{
	size_t put = 0;
	while (put < n) {
		ssize_t r = write(fd, (const char *)buf + put, n - put);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			vs_die("write");
		put += (size_t)r;
	}
}

#endif
