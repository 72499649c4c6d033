/*
 * timens_fork: reads FILE, makes a time namespace for its children
 * (unshare(CLONE_NEWTIME), CLOCK_MONOTONIC offset by OFFSET seconds),
 * forks a child that reads FILE for 300 ms of its own clock (so that its
 * trace has several calibration pairs), waits for it, reads FILE again.
 *   timens_fork FILE OFFSET
 * Prints "ok", or why the namespace could not be made (exit 77).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int read_once(const char *path)
{
	char b[16];
	int fd = open(path, O_RDONLY);
	int ok = fd >= 0 && read(fd, b, sizeof b) > 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3 || !read_once(argv[1]))
		return 2;
	char offs[64];
	int n = snprintf(offs, sizeof offs, "monotonic %s 0", argv[2]);
	int fd = -1;
	if (unshare(CLONE_NEWTIME) != 0 ||
	    (fd = open("/proc/self/timens_offsets", O_WRONLY)) < 0 ||
	    write(fd, offs, (size_t)n) != n) {
		printf("no time namespace: %s\n", strerror(errno));
		return 77;
	}
	close(fd);
	pid_t p = fork();
	if (p == 0) {
		double t0 = mono();
		while (mono() - t0 < 0.3)
			if (!read_once(argv[1]))
				_exit(3);
		_exit(0);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	if (!read_once(argv[1]))
		return 1;
	printf("ok\n");
	return 0;
}
