/*
 * io_dup.c: test program for tests/traced/test_io_dup.py. Reads through fds made
 * by dup, dup2, dup3, fcntl(F_DUPFD) and fcntl(F_DUPFD_CLOEXEC).
 *
 *   io_dup A B K   opens A, then, for each way of copying the fd, reads 3 x K
 *                  bytes through the copy and closes it:
 *                    dup(a); dup2(a, 100); dup3(a, 101, O_CLOEXEC);
 *                    fcntl(a, F_DUPFD, 200); fcntl(a, F_DUPFD_CLOEXEC, 300);
 *                  opens B at fd b, dup2(a, b) over it, reads 2 x K through
 *                  b (now A), closes b; reads 1 x K through a itself and
 *                  closes it. Failing dups: dup(-1), dup2(-1, 102),
 *                  dup3(a, a, 0), fcntl(-1, F_DUPFD, 0) print their result
 *                  and errno; a read on the closed copy (fd 100) fails with
 *                  EBADF.
 *
 * Prints only results that do not depend on the tracer (byte counts, the
 * new fd numbers asked for, errno), so traced and untraced output must be
 * byte-identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char buf[65536];

static long reads(int fd, int n, int k)
{
	long total = 0;
	for (int i = 0; i < n; i++) {
		ssize_t r = read(fd, buf, (size_t)k);
		if (r != k) {
			printf("short read %zd\n", r);
			exit(1);
		}
		total += r;
	}
	return total;
}

static void failing(const char *what, int r)
{
	int e = errno;
	printf("%s = %d errno %d\n", what, r, r < 0 ? e : 0);
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int k = atoi(argv[3]);
	if (k <= 0 || k > (int)sizeof buf)
		return 2;
	int a = open(argv[1], O_RDONLY);
	if (a < 0)
		return 3;
	long total = 0;
	int copies[5];
	copies[0] = dup(a);
	copies[1] = dup2(a, 100);
	copies[2] = dup3(a, 101, O_CLOEXEC);
	copies[3] = fcntl(a, F_DUPFD, 200);
	copies[4] = fcntl(a, F_DUPFD_CLOEXEC, 300);
	printf("dup2 %d dup3 %d F_DUPFD>=200 %d F_DUPFD_CLOEXEC>=300 %d\n", copies[1], copies[2],
	       copies[3] >= 200, copies[4] >= 300);
	printf("cloexec dup3 %d F_DUPFD %d F_DUPFD_CLOEXEC %d\n",
	       fcntl(copies[2], F_GETFD) & FD_CLOEXEC, fcntl(copies[3], F_GETFD) & FD_CLOEXEC,
	       fcntl(copies[4], F_GETFD) & FD_CLOEXEC);
	for (int i = 0; i < 5; i++) {
		if (copies[i] < 0)
			return 4;
		total += reads(copies[i], 3, k);
		if (close(copies[i]) != 0)
			return 5;
	}
	int b = open(argv[2], O_RDONLY);
	if (b < 0)
		return 3;
	if (dup2(a, b) != b)
		return 6;
	total += reads(b, 2, k);
	close(b);
	total += reads(a, 1, k);

	errno = 0;
	failing("dup(-1)", dup(-1));
	errno = 0;
	failing("dup2(-1, 102)", dup2(-1, 102));
	errno = 0;
	failing("dup3(a, a, 0)", dup3(a, a, 0));
	errno = 0;
	failing("fcntl(-1, F_DUPFD, 0)", fcntl(-1, F_DUPFD, 0));
	errno = 0;
	ssize_t r = read(100, buf, 1);
	failing("read(closed copy)", (int)r);
	close(a);
	printf("bytes %ld\n", total);
	return 0;
}
