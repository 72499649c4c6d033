/*
 * tiny: launch-bound (shape 7 of tests/traced/test_verdict_shapes.py): each thread
 * launches 10000 tiny kernels (1 us on the GPU; the launch call itself costs
 * 2 us, SIMGPU_LAUNCH_NS) with 0.5 us of CPU between them, on its
 * per-thread default stream, and synchronizes once at the end.
 * Owns only the planted launches.
 *
 *   --threads N  launching threads (1 by default, at most 4)
 *   --fused      the same work as 30 fused kernels of 3 ms per thread: the
 *                GPU is the limit
 *
 * Facts printed: "fact main PID", "fact launcher TID" per thread.
 */
#include <pthread.h>

#include "vshape.h"

#define TINY 10000
#define FUSED 30

static const char image[] = "kernel tiny_op 1000\nkernel fused_op 3000000\n";

static CUfunction tiny_k, fused_k;
static CUdeviceptr dbuf;
static int fused;

static void *launcher(void *arg)
{
	(void)arg;
	FACT("launcher", "%ld", vs_tid());
	cudrv_thread();
	void *args[] = { &dbuf };
	int n = fused ? FUSED : TINY;
	for (int i = 0; i < n; i++) {
		cudrv_spin(500);
		CK(cu.LaunchKernel(fused ? fused_k : tiny_k, 4, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
	}
	CK(cu.StreamSynchronize(NULL));
	return NULL;
}

int main(int argc, char **argv)
{
	fused = vs_flag(argc, argv, "--fused");
	int threads = atoi(vs_opt(argc, argv, "--threads", "1"));
	if (threads < 1 || threads > 4) {
		fprintf(stderr, "usage: tiny [--fused] [--threads 1-4]\n");
		return 2;
	}
	FACT("main", "%d", (int)getpid());
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	tiny_k = cudrv_kernel(lib, "tiny_op");
	fused_k = cudrv_kernel(lib, "fused_op");
	CK(cu.MemAlloc(&dbuf, 4096));
	uint64_t t0 = cudrv_now_ns();
	pthread_t th[4];
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, launcher, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	uint64_t t1 = cudrv_now_ns();
	printf("tiny%s: %d threads, %.1f ms\n", fused ? " --fused" : "", threads,
	       (double)(t1 - t0) / 1e6);
	return 0;
}
