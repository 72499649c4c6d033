/*
 * loaders: loader threads fill a bounded queue (2 slots) with batches; the
 * launching thread takes each batch, launches one 1.5 ms kernel on it (6 ms
 * with --fixed) and waits for it. Owns the planted feed of shape 3 (tests/traced/test_verdict_shapes.py):
 * a thread queue, never a pipe or another process.
 *
 *   --queue cond|sem  the queue is a mutex with two condition variables
 *                     (default) or two counting semaphores (sem_wait/sem_post)
 *   --loaders N       2 by default; 24 batches in all
 *   --fixed           the loaders spend 0.1 ms per batch instead of 16 ms on
 *                     the CPU (preprocessing): the queue is always full and the
 *                     GPU is the limit (kernels of 6 ms, so that the ~0.3 ms a
 *                     step can lose waking up from the sync on a loaded
 *                     machine stays small)
 *
 * Facts printed: "fact main PID", "fact launcher TID", "fact loader TID".
 */
#include <pthread.h>
#include <semaphore.h>

#include "vshape.h"

#define BATCHES 24
#define SLOTS 2
#define MAX_LOADERS 8

static const char image[] = "kernel step 1500000\nkernel long_step 6000000\n";

static int use_sem, nloaders, fixed;
static uint64_t cpu_ns;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static sem_t empty_slots, full_slots;
static int queue[SLOTS], head, count;

static void put(int batch)
{
	if (use_sem) {
		while (sem_wait(&empty_slots) != 0)
			;
		pthread_mutex_lock(&mu);          /* uncontended: held for a store */
	} else {
		pthread_mutex_lock(&mu);
		while (count == SLOTS)
			pthread_cond_wait(&not_full, &mu);
	}
	queue[(head + count) % SLOTS] = batch;
	count++;
	pthread_mutex_unlock(&mu);
	if (use_sem)
		sem_post(&full_slots);
	else
		pthread_cond_signal(&not_empty);
}

static int take(void)
{
	if (use_sem) {
		while (sem_wait(&full_slots) != 0)
			;
		pthread_mutex_lock(&mu);
	} else {
		pthread_mutex_lock(&mu);
		while (count == 0)
			pthread_cond_wait(&not_empty, &mu);
	}
	int batch = queue[head];
	head = (head + 1) % SLOTS;
	count--;
	pthread_mutex_unlock(&mu);
	if (use_sem)
		sem_post(&empty_slots);
	else
		pthread_cond_signal(&not_full);
	return batch;
}

static void *loader(void *arg)
{
	int id = (int)(intptr_t)arg;
	FACT("loader", "%ld", vs_tid());
	for (int b = id; b < BATCHES; b += nloaders) {
		if (fixed)
			vs_busy(cpu_ns);
		else
			vs_cpu(cpu_ns);           /* decode, augment */
		put(b);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *q = vs_opt(argc, argv, "--queue", "cond");
	nloaders = atoi(vs_opt(argc, argv, "--loaders", "2"));
	fixed = vs_flag(argc, argv, "--fixed");
	if ((strcmp(q, "cond") && strcmp(q, "sem")) || nloaders < 1 || nloaders > MAX_LOADERS) {
		fprintf(stderr, "usage: loaders [--queue cond|sem] [--loaders 1-%d] [--fixed]\n",
			MAX_LOADERS);
		return 2;
	}
	use_sem = strcmp(q, "sem") == 0;
	cpu_ns = fixed ? 100000 : 16000000;
	sem_init(&empty_slots, 0, SLOTS);
	sem_init(&full_slots, 0, 0);
	FACT("main", "%d", (int)getpid());
	FACT("launcher", "%ld", vs_tid());

	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUfunction step = cudrv_kernel(lib, fixed ? "long_step" : "step");
	CUdeviceptr d_batch;
	CK(cu.MemAlloc(&d_batch, 4096));
	void *args[] = { &d_batch };
	pthread_t th[MAX_LOADERS];
	uint64_t t0 = cudrv_now_ns();
	for (int i = 0; i < nloaders; i++)
		pthread_create(&th[i], NULL, loader, (void *)(intptr_t)i);
	int sum = 0;
	for (int b = 0; b < BATCHES; b++) {
		sum += take();
		CK(cu.LaunchKernel(step, 128, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
		CK(cu.StreamSynchronize(NULL));
	}
	for (int i = 0; i < nloaders; i++)
		pthread_join(th[i], NULL);
	uint64_t t1 = cudrv_now_ns();
	if (sum != BATCHES * (BATCHES - 1) / 2) {
		fprintf(stderr, "loaders: lost a batch\n");
		return 1;
	}
	printf("loaders%s: %d loader threads, %s queue, %d batches, %.1f ms\n",
	       fixed ? " --fixed" : "", nloaders, q, BATCHES, (double)(t1 - t0) / 1e6);
	return 0;
}
