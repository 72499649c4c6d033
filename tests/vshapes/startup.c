/*
 * startup: a long start-up (file I/O, then CPU: "imports") before a
 * GPU-bound loop of 40 steps, each 0.1 ms of CPU, one 4 ms kernel and a
 * cuStreamSynchronize (shape 6 of tests/traced/test_verdict_shapes.py). Owns only
 * the planted start-up; the loop itself is fed and bound by the GPU.
 *
 *   --steps    each step is a range "step" (feedtrace_range_push/pop, found
 *              with dlsym when libfeedtrace.so is preloaded)
 *   --dir DIR  where the start-up writes and reads its files (default
 *              $TMPDIR or /tmp)
 *
 * Start-up: 64 files of 64 KiB written, then read back 4 KiB at a time,
 * then 0.6 s of CPU. Facts printed: "fact main PID", "fact startup_ns N":
 * from just before the first traced call of main to just before the first
 * step (or, without --steps, the first launch): a lower bound of the
 * start-up the report must see.
 */
#include <dlfcn.h>
#include <fcntl.h>

#include "vshape.h"

#define FILES 64
#define FILE_BYTES (64 * 1024)
#define CHUNK 4096
#define STEPS 40

static const char image[] = "kernel train_step 4000000\n";

static void startup_io(const char *dir)
{
	char buf[CHUNK], p[4200];
	memset(buf, 7, sizeof buf);
	for (int f = 0; f < FILES; f++) {
		snprintf(p, sizeof p, "%s/vshape-startup-%d-%d.bin", dir, (int)getpid(), f);
		int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			vs_die(p);
		for (int i = 0; i < FILE_BYTES / CHUNK; i++)
			vs_write_full(fd, buf, CHUNK);
		if (lseek(fd, 0, SEEK_SET) != 0)
			vs_die("lseek");
		while (read(fd, buf, CHUNK) > 0)
			;
		close(fd);
		unlink(p);
	}
}

int main(int argc, char **argv)
{
	int steps = vs_flag(argc, argv, "--steps");
	const char *tmp = getenv("TMPDIR");
	const char *dir = vs_opt(argc, argv, "--dir", tmp && *tmp ? tmp : "/tmp");
	void (*push)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "feedtrace_range_push");
	void (*pop)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "feedtrace_range_pop");
	if (steps && (!push || !pop)) {
		fprintf(stderr, "startup: --steps needs libfeedtrace.so preloaded\n");
		return 2;
	}
	uint64_t t0 = cudrv_now_ns();
	FACT("main", "%d", (int)getpid());
	startup_io(dir);
	cudrv_spin(600000000ull);                /* imports, model construction */
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUfunction k = cudrv_kernel(lib, "train_step");
	CUdeviceptr dbuf;
	CK(cu.MemAlloc(&dbuf, 4096));
	void *args[] = { &dbuf };
	FACT("startup_ns", "%llu", (unsigned long long)(cudrv_now_ns() - t0));
	uint64_t t1 = cudrv_now_ns();
	for (int i = 0; i < STEPS; i++) {
		if (steps)
			push("step");
		cudrv_spin(100000);
		CK(cu.LaunchKernel(k, 1024, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
		CK(cu.StreamSynchronize(NULL));
		if (steps)
			pop();
	}
	uint64_t t2 = cudrv_now_ns();
	printf("startup%s: start-up %.1f ms, %d steps %.1f ms\n", steps ? " --steps" : "",
	       (double)(t1 - t0) / 1e6, STEPS, (double)(t2 - t1) / 1e6);
	return 0;
}
