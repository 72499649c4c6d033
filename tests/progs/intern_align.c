/*
 * intern_align.c: opens (and fails to open) paths of many lengths, each
 * from 8 addresses: the last ending just before an unmapped page, the
 * others 1..7 bytes earlier (tests/traced/test_io.py). The string table hashes a
 * path 8 bytes at a time: it must never read into the unmapped page, and
 * must give the same string one id wherever it lies.
 * Paths are "/nonexistent-intern/" and then 'a's, LENGTHS in all.
 * usage: intern_align LEN...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t span = 4 * (size_t)page;
	char *m = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + span, (size_t)page, PROT_NONE) != 0)
		return 1;
	char *end = m + span;           /* the first byte that is not there */
	const char *dir = "/nonexistent-intern/";
	long failed = 0;
	for (int a = 1; a < argc; a++) {
		size_t len = (size_t)atol(argv[a]);
		if (len < strlen(dir) || len + 8 >= span)
			return 2;
		for (size_t j = 0; j < 8; j++) {
			char *p = end - 1 - len - j;
			memset(p, 'x', len + 1 + j);      /* garbage after the NUL */
			memcpy(p, dir, strlen(dir));
			memset(p + strlen(dir), 'a', len - strlen(dir));
			p[len] = 0;
			int fd = open(p, O_RDONLY);
			if (fd >= 0)
				close(fd);
			else
				failed++;
		}
	}
	printf("%ld failed\n", failed);
	return 0;
}
