/*
 * launch_bound: the GPU starves because the CPU cannot launch fast enough.
 *
 * Broken (default): every step launches 2000 tiny kernels of 2 us each,
 * with 5 us of CPU work before each launch; the GPU finishes each kernel
 * long before the next one arrives.
 * Fixed (--fixed): the same GPU work fused into 20 kernels of 200 us each
 * (5 us of CPU work before each launch); the GPU is the bottleneck.
 *
 * Both: 10 steps, each ending with cuStreamSynchronize(default stream).
 * Exact numbers: examples/README.md. Driver path: FT_CUDA_PATH (cudrv.h).
 */
#include "cudrv.h"

#define STEPS 10
#define CPU_NS_PER_LAUNCH 5000

#define TINY_LAUNCHES 2000          /* per step, broken */
#define TINY_NS 2000
#define FUSED_LAUNCHES 20           /* per step, fixed */
#define FUSED_NS 200000

static const char image[] =
	"kernel tiny_elementwise 2000\n"
	"kernel fused_elementwise 200000\n";

int main(int argc, char **argv)
{
	int fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUfunction k = cudrv_kernel(lib, fixed ? "fused_elementwise" : "tiny_elementwise");
	int launches = fixed ? FUSED_LAUNCHES : TINY_LAUNCHES;
	unsigned grid = fixed ? 400 : 4;
	unsigned n = grid * 128;

	CUdeviceptr buf;
	CK(cu.MemAlloc(&buf, (size_t)n * sizeof(float)));
	void *args[] = { &buf, &n };

	uint64_t t0 = cudrv_now_ns();
	for (int step = 0; step < STEPS; step++) {
		for (int i = 0; i < launches; i++) {
			cudrv_spin(CPU_NS_PER_LAUNCH);       /* "Python" deciding what to launch */
			CK(cu.LaunchKernel(k, grid, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
		}
		CK(cu.StreamSynchronize(NULL));
	}
	uint64_t t1 = cudrv_now_ns();
	printf("launch_bound%s [%s]: %d steps x %d launches of %s (%d us), %.1f ms\n",
	       fixed ? " --fixed" : "", cu.path, STEPS, launches,
	       fixed ? "fused_elementwise" : "tiny_elementwise",
	       (fixed ? FUSED_NS : TINY_NS) / 1000, (double)(t1 - t0) / 1e6);
	return 0;
}
