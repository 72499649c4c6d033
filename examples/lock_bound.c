/*
 * lock_bound: worker threads serialise on one mutex before each launch.
 *
 * 4 worker threads (an inference server's request handlers, say) each
 * serve 25 requests: 20 us of CPU work to prepare the request, one kernel
 * launch ("infer", 200 us on the GPU), then a cuStreamSynchronize to wait
 * for the result.
 * Broken (default): the launch and the wait happen under one shared mutex
 * (the "launch lock", guarding a shared model and the default stream), so
 * the workers queue on the lock and the GPU runs one request at a time.
 * Fixed (--fixed): no shared lock; each worker launches on its own stream
 * (cuStreamCreate, non-blocking) and waits only for that stream, so the
 * workers' kernels overlap on the GPU.
 *
 * The program prints the address of the launch lock ("launch lock 0x..."),
 * so that a trace's pthread_mutex_lock records of that lock can be told from
 * others. Exact numbers: examples/README.md. Driver path: FT_CUDA_PATH.
 */
#include <pthread.h>

#include "cudrv.h"

#define WORKERS 4
#define REQUESTS_PER_WORKER 25
#define CPU_NS_PER_REQUEST 20000

static const char image[] = "kernel infer 200000\n";

static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static CUfunction kern;
static CUdeviceptr dbuf;
static int fixed;

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	CUstream s = NULL;
	cudrv_thread();
	if (fixed)
		CK(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
	void *args[] = { &dbuf, &id };
	pthread_barrier_wait(&start);
	for (int i = 0; i < REQUESTS_PER_WORKER; i++) {
		cudrv_spin(CPU_NS_PER_REQUEST);          /* preparing the request */
		if (!fixed)
			pthread_mutex_lock(&launch_lock);
		CK(cu.LaunchKernel(kern, 32, 1, 1, 256, 1, 1, 0, s, args, NULL));
		CK(cu.StreamSynchronize(s));             /* the result */
		if (!fixed)
			pthread_mutex_unlock(&launch_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	kern = cudrv_kernel(lib, "infer");
	CK(cu.MemAlloc(&dbuf, 1 << 20));
	printf("launch lock %p\n", (void *)&launch_lock);
	fflush(stdout);

	pthread_barrier_init(&start, NULL, WORKERS);
	pthread_t th[WORKERS];
	uint64_t t0 = cudrv_now_ns();
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	uint64_t t1 = cudrv_now_ns();
	printf("lock_bound%s [%s]: %d workers x %d requests, %s, %.1f ms\n",
	       fixed ? " --fixed" : "", cu.path, WORKERS, REQUESTS_PER_WORKER,
	       fixed ? "no shared lock, a stream per worker" : "one shared launch lock",
	       (double)(t1 - t0) / 1e6);
	return 0;
}
