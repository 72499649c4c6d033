/*
 * uring_prog.c: file reads through io_uring (tests/traced/test_io_uring.py).
 *   uring_prog raw FILE N      a ring made by the io_uring_setup system
 *                              call (as glibc has no wrapper), mapped by
 *                              mmap; N reads of 4 KiB of FILE submitted
 *                              and reaped through it; prints the ring's
 *                              fd and the bytes read
 *   uring_prog liburing LIB    LIB (a liburing) loaded by dlopen, as a
 *                              Python extension would; its
 *                              io_uring_queue_init and io_uring_setup
 *                              called through the global scope
 *   uring_prog absent          io_uring_setup found by dlsym with no
 *                              liburing loaded (the tracer's own export):
 *                              prints its result
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int raw(const char *path, unsigned n)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	int ring = (int)syscall(SYS_io_uring_setup, 8, &p);
	if (ring < 0)
		return 3;
	size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sqsz = cqsz = sqsz > cqsz ? sqsz : cqsz;
	char *sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
			IORING_OFF_SQ_RING);
	char *cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP))
		cq = mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
			  IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof *sqes,
					 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
					 ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return 4;
	int fd = open(path, O_RDONLY);
	static char buf[4096];
	long total = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t *tail = (uint32_t *)(sq + p.sq_off.tail);
		uint32_t *mask = (uint32_t *)(sq + p.sq_off.ring_mask);
		uint32_t *array = (uint32_t *)(sq + p.sq_off.array);
		uint32_t idx = *tail & *mask;
		memset(&sqes[idx], 0, sizeof sqes[idx]);
		sqes[idx].opcode = IORING_OP_READ;
		sqes[idx].fd = fd;
		sqes[idx].addr = (uint64_t)(uintptr_t)buf;
		sqes[idx].len = sizeof buf;
		sqes[idx].off = (uint64_t)i * sizeof buf;
		array[idx] = idx;
		__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
		if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) != 1)
			return 5;
		uint32_t *head = (uint32_t *)(cq + p.cq_off.head);
		uint32_t *cmask = (uint32_t *)(cq + p.cq_off.ring_mask);
		struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
		total += cqes[*head & *cmask].res;
		__atomic_store_n(head, *head + 1, __ATOMIC_RELEASE);
	}
	close(fd);
	printf("ring %d read %ld\n", ring, total);
	return 0;
}

static int liburing(const char *lib)
{
	if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL))
		return 6;
	int (*init)(unsigned, void *, unsigned) = (int (*)(unsigned, void *, unsigned))
		dlsym(RTLD_DEFAULT, "io_uring_queue_init");
	int (*setup)(unsigned, struct io_uring_params *) =
		(int (*)(unsigned, struct io_uring_params *))dlsym(RTLD_DEFAULT, "io_uring_setup");
	if (!init || !setup)
		return 7;
	static char ring[512];
	int r = init(16, ring, 0);
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	int fd = setup(4, &p);
	printf("init %d setup %d\n", r, fd >= 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "raw"))
		return raw(argv[2], (unsigned)atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "liburing"))
		return liburing(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "absent")) {
		int (*setup)(unsigned, struct io_uring_params *) =
			(int (*)(unsigned, struct io_uring_params *))dlsym(RTLD_DEFAULT,
									  "io_uring_setup");
		struct io_uring_params p;
		memset(&p, 0, sizeof p);
		printf("%s %d\n", setup ? "found" : "none", setup ? setup(4, &p) : 0);
		return 0;
	}
	fprintf(stderr, "usage: uring_prog raw FILE N | liburing LIB\n");
	return 2;
}
