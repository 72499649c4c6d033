/*
 * slowread.c: slow storage for tests (a test double), preloaded after
 * libfeedtrace.so: read() and pread() of a file whose path contains
 * $SLOWREAD_MATCH take $SLOWREAD_US microseconds longer, as each call of a
 * small read on network storage is a round trip. The tracer's wrapper
 * calls this one as the next definition, so the traced duration holds the
 * delay, as it would hold the storage's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ssize_t (*next_read)(int, void *, size_t);
static ssize_t (*next_pread)(int, void *, size_t, off_t);

static void delay_if_slow(int fd)
{
	const char *match = getenv("SLOWREAD_MATCH"), *us = getenv("SLOWREAD_US");
	if (!match || !us || !*match)
		return;
	char link[64], path[512];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	if (!strstr(path, match))
		return;
	long d = atol(us);
	struct timespec ts = { d / 1000000, (d % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

ssize_t read(int fd, void *buf, size_t n)
{
	if (!next_read)
		next_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	delay_if_slow(fd);
	return next_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	if (!next_pread)
		next_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	delay_if_slow(fd);
	return next_pread(fd, buf, n, off);
}
