/*
 * conv_storm.c: test program for tests/traced/test_convert_programs.py and test_report.py:
 * reads NFILES files DIR/f000.. in a tight loop, NREADS read() calls of SIZE
 * bytes each per file. A small-read storm (50 100 512) and its fixed twin
 * (50 1 262144) read the same bytes.
 *
 *   conv_storm DIR NFILES NREADS SIZE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: conv_storm DIR NFILES NREADS SIZE\n");
		return 2;
	}
	int nfiles = atoi(argv[2]), nreads = atoi(argv[3]);
	size_t size = (size_t)atol(argv[4]);
	char *buf = malloc(size);
	unsigned long total = 0;
	for (int f = 0; f < nfiles; f++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/f%03d", argv[1], f);
		int fd = open(path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		for (int r = 0; r < nreads; r++) {
			ssize_t n = read(fd, buf, size);
			if (n > 0)
				total += (unsigned long)n;
		}
		close(fd);
	}
	printf("read %lu bytes\n", total);
	free(buf);
	return 0;
}
