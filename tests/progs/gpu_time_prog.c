/*
 * gpu_time_prog SHAPE: kernels of known durations on the simulated driver
 * (dlopen + dlsym), for the GPU's timing events. Each shape first warms
 * up its context (four tiny launches 30 ms apart: the tracer finds the
 * driver and makes the context's event pool meanwhile), then:
 *   drain    one stream: 5 x (a 2 ms kernel, the host away 10 ms), a sync
 *   two      streams A and B: 3 x (3 ms on A, 1 ms on B, host away 10 ms)
 *   graph    a 5 ms kernel on B, then a global-mode capture of three 1 ms
 *            kernels on A (the host away 30 ms during it: B's sample is
 *            pending meanwhile), then 3 x (the graph, host away 10 ms);
 *            prints the capture's result and its graph's node count
 *   nosync   20 x (a 2 ms kernel, host away 5 ms), no sync at all
 *   ctxgone  a context of its own: a 5 ms kernel, then cuCtxDestroy
 *   dense    500 x (a 1 us kernel, host away 50 us): most launches between
 *            two samples are not sampled
 *   starved  on the legacy stream, never synced in the loop: 5 x (a tiny
 *            kernel, a 2 ms one at once, then a semaphore wait for the next
 *            batch, which a feeder thread posts 8 ms after the launches)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef void *CUstream;

static CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, CUstream, void **, void **);
static CUresult (*getfn)(void **, void *, const char *);
static void *mod;

static void away_us(int us)
{
	struct timespec ts = { 0, us * 1000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void away_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static sem_t launched, fed;

static void *feeder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++) {
		while (sem_wait(&launched) != 0)
			;
		away_ms(8);
		sem_post(&fed);
	}
	return NULL;
}

static void *fn(const char *name)
{
	void *f = NULL;
	getfn(&f, mod, name);
	return f;
}

static void run(const char *name, CUstream s)
{
	launch(fn(name), 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
}

int main(int argc, char **argv)
{
	const char *shape = argc > 1 ? argv[1] : "drain";
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return 2;
#define SYM(type, name) type = (__typeof__(type))dlsym(h, name)
	CUresult (*init)(unsigned);
	CUresult (*retain)(void **, int);
	CUresult (*setcur)(void *);
	CUresult (*ctx_create)(void **, unsigned, int);
	CUresult (*ctx_destroy)(void *);
	CUresult (*load)(void **, const void *);
	CUresult (*screate)(CUstream *, unsigned);
	CUresult (*ssync)(CUstream);
	CUresult (*begin)(CUstream, int);
	CUresult (*end)(CUstream, void **);
	CUresult (*nodes)(void *, void *, size_t *);
	CUresult (*inst)(void **, void *, unsigned long long);
	CUresult (*glaunch)(void *, CUstream);
	SYM(init, "cuInit"); SYM(retain, "cuDevicePrimaryCtxRetain");
	SYM(setcur, "cuCtxSetCurrent"); SYM(ctx_create, "cuCtxCreate_v2");
	SYM(ctx_destroy, "cuCtxDestroy_v2"); SYM(load, "cuModuleLoadData");
	SYM(getfn, "cuModuleGetFunction"); SYM(launch, "cuLaunchKernel");
	SYM(screate, "cuStreamCreate"); SYM(ssync, "cuStreamSynchronize");
	SYM(begin, "cuStreamBeginCapture_v2"); SYM(end, "cuStreamEndCapture");
	SYM(nodes, "cuGraphGetNodes"); SYM(inst, "cuGraphInstantiateWithFlags");
	SYM(glaunch, "cuGraphLaunch");
	static const char image[] = "kernel tiny 10000\nkernel k1 1000000\nkernel k2 2000000\n"
				    "kernel k3 3000000\nkernel k5 5000000\nkernel u1 1000\n";
	void *ctx;
	init(0);
	if (strcmp(shape, "ctxgone") == 0)
		ctx_create(&ctx, 0, 0);
	else {
		retain(&ctx, 0);
		setcur(ctx);
	}
	load(&mod, image);
	CUstream a, b;
	screate(&a, 1);
	screate(&b, 1);
	for (int i = 0; i < 4; i++) {
		run("tiny", a);
		away_ms(30);
	}
	if (strcmp(shape, "drain") == 0) {
		for (int i = 0; i < 5; i++) {
			run("k2", a);
			away_ms(10);
		}
		ssync(a);
	} else if (strcmp(shape, "two") == 0) {
		run("tiny", b);          /* B's first sample: its stream seen */
		away_ms(30);
		for (int i = 0; i < 3; i++) {
			run("k3", a);
			run("k1", b);
			away_ms(10);
		}
		ssync(a);
		ssync(b);
	} else if (strcmp(shape, "graph") == 0) {
		void *g = NULL, *e = NULL;
		size_t n = 0;
		run("k5", b);            /* B's sample still pending during the capture */
		CUresult rb = begin(a, 0);
		for (int i = 0; i < 3; i++)
			run("k1", a);
		away_ms(30);
		CUresult re = end(a, &g);
		nodes(g, NULL, &n);
		printf("%d %d %zu\n", rb, re, n);
		inst(&e, g, 0);
		for (int i = 0; i < 3; i++) {
			glaunch(e, a);
			away_ms(10);
		}
		ssync(a);
	} else if (strcmp(shape, "nosync") == 0) {
		for (int i = 0; i < 20; i++) {
			run("k2", a);
			away_ms(5);
		}
		away_ms(30);
	} else if (strcmp(shape, "dense") == 0) {
		for (int i = 0; i < 500; i++) {
			run("u1", a);
			away_us(50);
		}
		ssync(a);
	} else if (strcmp(shape, "starved") == 0) {
		pthread_t th;
		sem_init(&launched, 0, 0);
		sem_init(&fed, 0, 0);
		pthread_create(&th, NULL, feeder, NULL);
		for (int i = 0; i < 5; i++) {
			run("tiny", NULL);      /* sampled: first after idle, or past the interval */
			run("k2", NULL);        /* within the interval: not sampled */
			sem_post(&launched);
			while (sem_wait(&fed) != 0)
				;
		}
		pthread_join(th, NULL);
		away_ms(30);
	} else if (strcmp(shape, "ctxgone") == 0) {
		run("k5", a);
		ctx_destroy(ctx);
		away_ms(30);
	}
	return 0;
}
