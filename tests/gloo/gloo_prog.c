/*
 * gloo_prog.c: a training loop in the shape of a gloo job's rank, on the
 * stand-in libgloo (fake_gloo.c) behind a stand-in process group
 * (fake_pg.c, loaded RTLD_LOCAL). A producer thread writes one batch per
 * step into a pipe; the training thread reads it, hands an all-reduce to a
 * worker thread (ProcessGroupGloo's queue) and waits for it in a condition
 * variable; the all-reduce takes DELAY_US (a wait for the other ranks).
 * Then a barrier. Prints "ctx=<address> calls=<n>".
 *   gloo_prog STEPS DELAY_US
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx { int rank, size; int calls; int delay_us; };
struct opts { struct ctx *ctx; void *ctrl; };

static void (*pg_allreduce)(void *), (*pg_barrier)(void *);
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static int queued, finished, stop, steps;
static struct ctx ctx = { 0, 2, 0, 0 };
static int pfd[2];

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (!queued && !stop)
			pthread_cond_wait(&work, &mu);
		if (!queued)
			break;
		queued = 0;
		pthread_mutex_unlock(&mu);
		struct opts o = { &ctx, NULL };
		pg_allreduce(&o);
		pthread_mutex_lock(&mu);
		finished = 1;
		pthread_cond_signal(&done);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < steps; i++)
		if (write(pfd[1], &i, sizeof i) != sizeof i)
			exit(3);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	steps = atoi(argv[1]);
	ctx.delay_us = atoi(argv[2]);
	/* beside this program, by its full path: a sanitizer's runtime
	 * intercepts dlopen, and the look-up would then follow its paths */
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 32);
	if (len <= 0)
		return 2;
	self[len] = 0;
	strcpy(strrchr(self, '/') + 1, "libfakepg.so");
	void *h = dlopen(self, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	pg_allreduce = (void (*)(void *))dlsym(h, "pg_allreduce");
	pg_barrier = (void (*)(void *))dlsym(h, "pg_barrier");
	if (pipe(pfd))
		return 2;
	pthread_t w, p;
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&p, NULL, producer, NULL);
	for (int i = 0; i < steps; i++) {
		int b;
		if (read(pfd[0], &b, sizeof b) != sizeof b || b != i)
			return 4;
		pthread_mutex_lock(&mu);
		queued = 1;
		finished = 0;
		pthread_cond_signal(&work);
		while (!finished)
			pthread_cond_wait(&done, &mu);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	stop = 1;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&mu);
	pthread_join(w, NULL);
	pthread_join(p, NULL);
	struct opts o = { &ctx, NULL };
	pg_barrier(&o);
	printf("ctx=%p calls=%d\n", (void *)&ctx, ctx.calls);
	return 0;
}
