/*
 * cuda_next_lib.c: built by tests/traced/test_cuda.py as a shared library (cc
 * -shared -fPIC) and preloaded beside libfeedtrace.so. Another library's
 * read() wrapper, the usual way: the next read is found with
 * dlsym(RTLD_NEXT, "read"), which glibc answers from the caller's address,
 * so feedtrace's dlsym wrapper must keep that address intact. At exit it
 * writes to stderr how many reads it forwarded and where "next" pointed.
 * The Makefile also builds this file as a program (it builds every C file in
 * tests/progs), hence the main() below.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static ssize_t (*next_read)(int, void *, size_t);
static long forwarded;

ssize_t read(int fd, void *buf, size_t n)
{
	if (!next_read)
		next_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	forwarded++;
	return next_read(fd, buf, n);
}

__attribute__((destructor)) static void next_lib_report(void)
{
	Dl_info info;
	const char *lib = "?";
	if (next_read && dladdr((void *)next_read, &info) && info.dli_fname) {
		lib = strrchr(info.dli_fname, '/');
		lib = lib ? lib + 1 : info.dli_fname;
	}
	char msg[256];
	int len = snprintf(msg, sizeof msg, "next_lib: forwarded %ld reads to %s\n", forwarded,
			   next_read ? lib : "nothing");
	if (write(2, msg, (size_t)len) < 0)
		_exit(99);
}

int main(void)
{
	return 0;
}
