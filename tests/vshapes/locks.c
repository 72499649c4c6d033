/*
 * locks: 5 threads each prepare 24 requests on the CPU (1 ms each, vs_busy); once a
 * request is prepared, its thread waits for the previous request's kernel
 * (cuStreamSynchronize of its own stream) and launches this one's. Owns the planted feed of
 * shape 4 (tests/traced/test_verdict_shapes.py); the threads share nothing but the
 * lock (when there is one).
 *
 *   broken (default)  the preparation and the launch happen under one shared
 *                     mutex: one launch per ms in all, each kernel 0.3 ms, so
 *                     the GPU idles ~70% of the run while one thread prepares
 *                     and the others wait for the lock (~4 of every 5 ms); the
 *                     previous kernel is long done when its thread syncs
 *   --fixed           no shared lock, and 10 ms kernels: a thread prepares
 *                     the next request while its stream runs the previous
 *                     one, then waits ~9 ms for it (the same loop, GPU-bound;
 *                     5 threads preparing at once on 2 cores may stretch the
 *                     1 ms to a few, which the 10 ms kernels still cover)
 *   --streams ptds|explicit  per-thread default streams (stream 0 through the
 *                     _ptsz entry points, FT_CUDA_PATH=proc-ptds, the default)
 *                     or a stream created by each thread (default ptds)
 *
 * Facts printed: "fact main PID", "fact launcher TID" per thread,
 * "fact lock ADDRESS".
 */
#include <pthread.h>

#include "vshape.h"

#define THREADS 5
#define REQUESTS 24
#define CPU_NS 1000000ull

static const char image[] = "kernel short_req 300000\nkernel long_req 10000000\n";

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static CUfunction kern;
static CUdeviceptr dbuf;
static int fixed, explicit_streams;

static void *launcher(void *arg)
{
	(void)arg;
	FACT("launcher", "%ld", vs_tid());
	cudrv_thread();
	CUstream s = NULL;
	if (explicit_streams)
		CK(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
	void *args[] = { &dbuf };
	pthread_barrier_wait(&start);
	for (int i = 0; i < REQUESTS; i++) {
		if (!fixed)
			pthread_mutex_lock(&shared_lock);
		vs_busy(CPU_NS);                         /* prepare the request */
		CK(cu.StreamSynchronize(s));             /* the previous result */
		CK(cu.LaunchKernel(kern, 32, 1, 1, 256, 1, 1, 0, s, args, NULL));
		if (!fixed)
			pthread_mutex_unlock(&shared_lock);
	}
	CK(cu.StreamSynchronize(s));                     /* the results */
	return NULL;
}

int main(int argc, char **argv)
{
	fixed = vs_flag(argc, argv, "--fixed");
	const char *streams = vs_opt(argc, argv, "--streams", "ptds");
	if (strcmp(streams, "ptds") && strcmp(streams, "explicit")) {
		fprintf(stderr, "usage: locks [--fixed] [--streams ptds|explicit]\n");
		return 2;
	}
	explicit_streams = strcmp(streams, "explicit") == 0;
	FACT("main", "%d", (int)getpid());
	FACT("lock", "%p", (void *)&shared_lock);
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	kern = cudrv_kernel(lib, fixed ? "long_req" : "short_req");
	CK(cu.MemAlloc(&dbuf, 1 << 16));
	pthread_barrier_init(&start, NULL, THREADS);
	pthread_t th[THREADS];
	uint64_t t0 = cudrv_now_ns();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, launcher, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	uint64_t t1 = cudrv_now_ns();
	printf("locks%s [%s, %s streams]: %d threads x %d requests, %.1f ms\n",
	       fixed ? " --fixed" : "", cu.path, streams, THREADS, REQUESTS,
	       (double)(t1 - t0) / 1e6);
	return 0;
}
