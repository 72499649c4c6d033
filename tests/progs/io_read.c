/*
 * io_read.c: test program for tests/traced/test_io.py and test_format.py.
 *
 *   io_read reads M K FILE...   open() each FILE, M read()s of K bytes, close
 *   io_read apis DIR            one call of each I/O API on DIR/<api> files
 *   io_read ebadf               read() on a closed fd; prints errno
 *   io_read paced N FILE        N 1-byte pread()s, 1 ms pause every 32, so
 *                               that a 16 KiB ring never overflows (format
 *                               tests)
 *   io_read many N FILE         N 1-byte pread()s, as fast as possible
 *
 * Prints only what the data and the calls' results determine (byte counts,
 * a checksum, return values, errno), never fd numbers or addresses, so
 * that traced and untraced output must be byte-identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static unsigned long sum(const unsigned char *p, size_t n)
{
	unsigned long s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

static int cmd_reads(int m, int k, int nfiles, char **files)
{
	unsigned char *buf = malloc((size_t)k);
	long total = 0;
	unsigned long ck = 0;
	for (int i = 0; i < nfiles; i++) {
		int fd = open(files[i], O_RDONLY);
		if (fd < 0) {
			printf("open %s: %s\n", files[i], strerror(errno));
			return 1;
		}
		for (int j = 0; j < m; j++) {
			ssize_t r = read(fd, buf, (size_t)k);
			if (r != k) {
				printf("short read %zd\n", r);
				return 1;
			}
			total += r;
			ck ^= sum(buf, (size_t)r);
		}
		close(fd);
	}
	printf("files=%d reads=%d bytes=%ld sum=%lx\n", nfiles, nfiles * m, total, ck);
	free(buf);
	return 0;
}

static char *at(const char *dir, const char *name)
{
	static char paths[16][4096];
	static int n;
	char *p = paths[n++ % 16];
	snprintf(p, 4096, "%s/%s", dir, name);
	return p;
}

static int cmd_apis(const char *dir)
{
	unsigned char buf[4096], b1[100], b2[200], b3[300];
	ssize_t r;
	int fd;

	fd = open64(at(dir, "f_open64"), O_RDONLY);
	r = read(fd, buf, 10);
	printf("open64 read %zd sum %lx\n", r, sum(buf, 10));
	close(fd);

	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	fd = openat(dfd, "f_openat", O_RDONLY);
	r = read(fd, buf, 20);
	printf("openat read %zd sum %lx\n", r, sum(buf, 20));
	close(fd);
	close(dfd);

	fd = creat(at(dir, "f_creat"), 0600);
	printf("creat write %zd\n", write(fd, "hello", 5));
	close(fd);

	fd = open(at(dir, "f_pread"), O_RDONLY);
	r = pread(fd, buf, 30, 100);
	printf("pread %zd sum %lx\n", r, sum(buf, 30));
	r = pread64(fd, buf, 40, 200);
	printf("pread64 %zd sum %lx\n", r, sum(buf, 40));
	close(fd);

	fd = open(at(dir, "f_readv"), O_RDONLY);
	struct iovec iov[3] = { { b1, sizeof b1 }, { b2, sizeof b2 }, { b3, sizeof b3 } };
	r = readv(fd, iov, 3);
	printf("readv %zd sum %lx %lx %lx\n", r, sum(b1, 100), sum(b2, 200), sum(b3, 300));
	r = preadv(fd, iov, 2, 1000);
	printf("preadv %zd sum %lx %lx\n", r, sum(b1, 100), sum(b2, 200));
	close(fd);

	FILE *f = fopen(at(dir, "f_fopen"), "r");
	size_t n = fread(buf, 16, 4, f);
	printf("fread %zu sum %lx\n", n, sum(buf, 64));
	n = fread(buf, 1, 100, f);
	printf("fread %zu sum %lx\n", n, sum(buf, 100));
	printf("fclose %d\n", fclose(f));

	fd = open(at(dir, "f_mmap"), O_RDONLY);
	unsigned char *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("mmap %s sum %lx\n", m == MAP_FAILED ? "failed" : "ok", sum(m, 8192));
	munmap(m, 8192);
	printf("close %d\n", close(fd));
	return 0;
}

static int cmd_ebadf(const char *file)
{
	char buf[16];
	int fd = open(file, O_RDONLY);
	close(fd);
	errno = 0;
	ssize_t r = read(fd, buf, sizeof buf);
	int e = errno;
	printf("read ret %zd errno %d (%s)\n", r, e, strerror(e));
	errno = 0;
	r = read(-1, buf, 5);
	e = errno;
	printf("read ret %zd errno %d (%s)\n", r, e, strerror(e));
	return 0;
}

static int cmd_pread_loop(long n, const char *file, int paced)
{
	unsigned char c;
	long ok = 0;
	int fd = open(file, O_RDONLY);
	for (long i = 0; i < n; i++) {
		if (pread(fd, &c, 1, i & 1023) == 1)
			ok++;
		if (paced && (i & 31) == 31) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	close(fd);
	printf("preads %ld\n", ok);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "reads") == 0)
		return cmd_reads(atoi(argv[2]), atoi(argv[3]), argc - 4, argv + 4);
	if (argc == 3 && strcmp(argv[1], "apis") == 0)
		return cmd_apis(argv[2]);
	if (argc == 3 && strcmp(argv[1], "ebadf") == 0)
		return cmd_ebadf(argv[2]);
	if (argc == 4 && strcmp(argv[1], "paced") == 0)
		return cmd_pread_loop(atol(argv[2]), argv[3], 1);
	if (argc == 4 && strcmp(argv[1], "many") == 0)
		return cmd_pread_loop(atol(argv[2]), argv[3], 0);
	fprintf(stderr, "usage: see the comment at the top of io_read.c\n");
	return 2;
}
