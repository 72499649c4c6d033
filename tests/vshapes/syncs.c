/*
 * syncs: a sync the program needs vs one that starves the GPU (shape 5 of
 * tests/traced/test_verdict_shapes.py). Owns only its planted syncs; one thread,
 * the legacy default stream.
 *
 *   --mode needed  30 steps of: 0.2 ms of CPU, one 5 ms kernel, then the
 *                  result read back with cuMemcpyDtoH (a synchronous copy the
 *                  step needs): the CPU waits, but the GPU is busy ~96% of
 *                  the loop: the GPU is the limit
 *   --mode hidden  (default) 40 steps of: kernel A (0.8 ms), a 4 KiB
 *                  cuMemcpyHtoDAsync from pageable (malloc) memory, which
 *                  returns only once A (and the step before) is done, then
 *                  0.8 ms of CPU while the GPU has nothing queued, then
 *                  kernel B (0.8 ms): the GPU idles a third of the loop,
 *                  after the hidden syncs; the thread waits in them 2/3
 *   --mode fixed   as hidden with the copy from page-locked memory (truly
 *                  asynchronous) and an event recorded after each step: the
 *                  CPU runs up to 2 steps ahead (cuEventSynchronize on the
 *                  step 2 back) and waits there ~0.8 ms a step: the GPU is
 *                  the limit (by 2x, so a CPU step stretched by the load of
 *                  the machine still leaves the GPU fed)
 *
 * Facts printed: "fact main PID".
 */
#include "vshape.h"

static const char image[] = "kernel big_step 5000000\nkernel part_a 800000\nkernel part_b 800000\n";

int main(int argc, char **argv)
{
	const char *mode = vs_opt(argc, argv, "--mode", "hidden");
	if (strcmp(mode, "needed") && strcmp(mode, "hidden") && strcmp(mode, "fixed")) {
		fprintf(stderr, "usage: syncs [--mode needed|hidden|fixed]\n");
		return 2;
	}
	FACT("main", "%d", (int)getpid());
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUdeviceptr dbuf;
	CK(cu.MemAlloc(&dbuf, 4096));
	void *args[] = { &dbuf };
	float result = 0;
	uint64_t t0 = cudrv_now_ns();
	if (strcmp(mode, "needed") == 0) {
		CUfunction big = cudrv_kernel(lib, "big_step");
		for (int i = 0; i < 30; i++) {
			cudrv_spin(200000);
			CK(cu.LaunchKernel(big, 1024, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			CK(cu.MemcpyDtoH(&result, dbuf, sizeof result));
		}
	} else {
		CUfunction a = cudrv_kernel(lib, "part_a"), b = cudrv_kernel(lib, "part_b");
		int fixed = strcmp(mode, "fixed") == 0;
		unsigned char *host;
		CUevent done[2];
		if (fixed) {
			CK(cu.MemHostAlloc((void **)&host, 4096, 0));
			for (int i = 0; i < 2; i++)
				CK(cu.EventCreate(&done[i], CU_EVENT_DISABLE_TIMING));
		} else if (!(host = malloc(4096))) {
			return 1;
		}
		for (int i = 0; i < 40; i++) {
			if (fixed && i >= 2)        /* at most 2 steps ahead of the GPU */
				CK(cu.EventSynchronize(done[i % 2]));
			CK(cu.LaunchKernel(a, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			memset(host, i, 4096);
			CK(cu.MemcpyHtoDAsync(dbuf, host, 4096, NULL));
			cudrv_spin(800000);
			CK(cu.LaunchKernel(b, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			if (fixed)
				CK(cu.EventRecord(done[i % 2], NULL));
		}
		CK(cu.StreamSynchronize(NULL));
	}
	uint64_t t1 = cudrv_now_ns();
	printf("syncs --mode %s: %.1f ms\n", mode, (double)(t1 - t0) / 1e6);
	return 0;
}
