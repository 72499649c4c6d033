/*
 * solo_next.c: a library preloaded after feedtrace that wraps pread and
 * counts the calls it passes on (tests/traced/test_solo.py): feedtrace's wrapper
 * must call it, never the system call in its place. The Makefile also
 * builds this file as a program (it builds every C file in tests/progs),
 * hence the main() below.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long passed;

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*next)(int, void *, size_t, off_t);
	if (!next)
		next = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	passed++;
	return next(fd, buf, n, off);
}

__attribute__((destructor)) static void say(void)
{
	fprintf(stderr, "solo_next: %ld preads passed on\n", passed);
}

int main(void)
{
	return 0;
}
