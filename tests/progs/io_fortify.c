/*
 * io_fortify.c: built -O2 with _FORTIFY_SOURCE=2, so that open() with a
 * non-constant flag word becomes __open_2 and read() into a buffer of known
 * size with a non-constant length becomes __read_chk (tests/traced/test_io.py
 * checks both with nm). Usage: io_fortify FILE NREADS LEN
 */
#undef _FORTIFY_SOURCE
#define _FORTIFY_SOURCE 2
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	if (argc != 4)
		return 2;
	volatile int flags = O_RDONLY;
	int fd = open(argv[1], flags);
	if (fd < 0)
		return 1;
	int n = atoi(argv[2]);
	size_t len = (size_t)atoi(argv[3]);
	long total = 0;
	unsigned long s = 0;
	for (int i = 0; i < n; i++) {
		ssize_t r = read(fd, buf, len);
		total += r;
		for (ssize_t j = 0; j < r; j++)
			s = s * 31 + (unsigned char)buf[j];
	}
	close(fd);
	printf("reads %d bytes %ld sum %lx\n", n, total, s);
	return 0;
}
