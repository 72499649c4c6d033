/*
 * streams3: three explicit streams, each fed by its own thread, which takes
 * its batches from its own loader thread through a pipe (blocking read),
 * then waits for its previous kernel and launches the next (2 ms; 6 ms
 * with --fed) on its stream (shape 8 of tests/traced/test_verdict_shapes.py). Owns only the planted
 * loaders; the feeding threads never share a stream or a lock.
 *
 *   default    each loader spends 8 ms of CPU per batch (preprocessing):
 *              every stream idles ~75% of the time, waiting for data
 *   --fed      the loaders write every batch at once: the GPU is the limit
 *              (kernels of 6 ms, so that the ~0.3 ms a step can lose waking
 *              up from the sync on a loaded machine stays small)
 *
 * 20 batches per stream. Facts printed: "fact main PID", "fact feeder TID",
 * "fact loader TID".
 */
#include <pthread.h>

#include "vshape.h"

#define STREAMS 3
#define BATCHES 20
#define MSG 1024

static const char image[] = "kernel step 2000000\nkernel long_step 6000000\n";

static CUfunction kern;
static CUdeviceptr dbuf;
static int fed;
static int pipes[STREAMS][2];

static void *loader(void *arg)
{
	int s = (int)(intptr_t)arg;
	FACT("loader", "%ld", vs_tid());
	char msg[MSG];
	for (int b = 0; b < BATCHES; b++) {
		if (!fed)
			vs_cpu(8000000);
		memset(msg, b, sizeof msg);
		vs_write_full(pipes[s][1], msg, sizeof msg);
	}
	return NULL;
}

static void *feeder(void *arg)
{
	int s = (int)(intptr_t)arg;
	FACT("feeder", "%ld", vs_tid());
	cudrv_thread();
	CUstream st;
	CK(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING));
	void *args[] = { &dbuf };
	char msg[MSG];
	for (int b = 0; b < BATCHES; b++) {
		if (!vs_read_full(pipes[s][0], msg, sizeof msg)) {
			fprintf(stderr, "streams3: loader ended early\n");
			exit(1);
		}
		CK(cu.StreamSynchronize(st));             /* the previous batch's kernel */
		CK(cu.LaunchKernel(kern, 256, 1, 1, 256, 1, 1, 0, st, args, NULL));
	}
	CK(cu.StreamSynchronize(st));
	return NULL;
}

int main(int argc, char **argv)
{
	fed = vs_flag(argc, argv, "--fed");
	FACT("main", "%d", (int)getpid());
	cudrv_init();
	kern = cudrv_kernel(cudrv_library(image), fed ? "long_step" : "step");
	CK(cu.MemAlloc(&dbuf, 4096));
	pthread_t lt[STREAMS], ft[STREAMS];
	for (int s = 0; s < STREAMS; s++)
		if (pipe(pipes[s]) != 0)
			vs_die("pipe");
	uint64_t t0 = cudrv_now_ns();
	for (int s = 0; s < STREAMS; s++) {
		pthread_create(&ft[s], NULL, feeder, (void *)(intptr_t)s);
		pthread_create(&lt[s], NULL, loader, (void *)(intptr_t)s);
	}
	for (int s = 0; s < STREAMS; s++) {
		pthread_join(lt[s], NULL);
		pthread_join(ft[s], NULL);
	}
	uint64_t t1 = cudrv_now_ns();
	printf("streams3%s: %d streams x %d batches, %.1f ms\n", fed ? " --fed" : "", STREAMS,
	       BATCHES, (double)(t1 - t0) / 1e6);
	return 0;
}
