/*
 * integ_rawdup.c: a program that puts a file of its own at every
 * descriptor from FIRST up to its RLIMIT_NOFILE (at most 1024) through the
 * raw dup2 system call, as a Go or seccomp-wrapped runtime may, then reads
 * and writes that file for a while (tests/traced/test_integrity_fds.py).
 *   integ_rawdup FILE FIRST ROUNDS [again]
 * With "again" the sweep is made anew every round, while the tracer's
 * flusher writes (a check then a write would leave it a moment to win).
 * Prints "rounds R" and leaves FILE holding its own bytes only.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
		return 2;
	int again = argc == 5 && strcmp(argv[4], "again") == 0;
	int first = atoi(argv[2]), rounds = atoi(argv[3]);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 3;
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur > 1024) {               /* every number taken, up to the limit */
		rl.rlim_cur = 1024;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	int lim = (int)rl.rlim_cur;
	for (int i = first; i < lim; i++)
		if (i != fd)
			syscall(SYS_dup2, fd, i);
	char buf[64];
	for (int r = 0; r < rounds; r++) {
		for (int i = first; again && i < lim; i++)
			if (i != fd)
				syscall(SYS_dup2, fd, i);
		int n = snprintf(buf, sizeof buf, "line %d\n", r);
		if (write(fd, buf, (size_t)n) != n)
			return 4;
		if (pread(fd, buf, 5, 0) != 5 && r)
			return 5;
		struct timespec ts = { 0, 2000000 };    /* 2 ms: flushes happen meanwhile */
		nanosleep(&ts, NULL);
	}
	printf("rounds %d\n", rounds);
	return 0;
}
