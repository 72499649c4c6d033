/*
 * uring_fake.c: a stand-in liburing (built as build/tests/uring_fake.so)
 * of the shape Debian's liburing 2.3 has: it makes its system calls
 * itself, mmap included (no libc call a wrapper could see), and
 * io_uring_queue_init calls io_uring_queue_init_params through its PLT.
 * Enough of it for tests/traced/test_io_uring.py: a real ring, mapped; nothing
 * submitted. The main() lets it build as a program too (TEST_PROGS).
 */
#include <linux/io_uring.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct io_uring {
	int ring_fd;
	void *sq;
};

int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
			       struct io_uring_params *p)
{
	long fd = syscall(SYS_io_uring_setup, entries, p);
	if (fd < 0)
		return -1;
	ring->ring_fd = (int)fd;
	ring->sq = (void *)syscall(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				   fd, IORING_OFF_SQ_RING);
	return 0;
}

int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	p.flags = flags;
	return io_uring_queue_init_params(entries, ring, &p);
}

int io_uring_setup(unsigned entries, struct io_uring_params *p)
{
	long fd = syscall(SYS_io_uring_setup, entries, p);
	return fd < 0 ? -1 : (int)fd;
}

int main(void)
{
	return 0;
}
