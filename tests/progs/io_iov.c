/*
 * io_iov: readv with more iovecs than the kernel takes (UIO_MAXIOV, 1024).
 *   io_iov FILE
 * The array (1,025 entries of 32 bytes each) ends at an inaccessible page.
 * readv of 1,024 of them reads 32,768 bytes; of 1,025 fails with EINVAL;
 * of 5,000 (a count past the array's end) fails with EINVAL too: the
 * kernel reads none of it. Prints each call's result.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

static char buf[32 * 1025];

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	long page = sysconf(_SC_PAGESIZE);
	size_t n = 1025, bytes = n * sizeof(struct iovec);
	size_t span = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
	char *m = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || m == MAP_FAILED || mprotect(m + span, (size_t)page, PROT_NONE) != 0)
		return 2;
	struct iovec *iov = (struct iovec *)(m + span - bytes);
	for (size_t i = 0; i < n; i++)
		iov[i] = (struct iovec){ buf + 32 * i, 32 };
	int counts[] = { 1024, 1025, 5000 };
	for (int k = 0; k < 3; k++) {
		ssize_t r = preadv(fd, iov, counts[k], 0);
		printf("%d: %zd %s\n", counts[k], r, r < 0 ? strerror(errno) : "");
		r = readv(fd, iov, counts[k]);
		printf("%d: %zd %s\n", counts[k], r, r < 0 ? strerror(errno) : "");
	}
	return 0;
}
