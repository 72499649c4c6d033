/*
 * sites_prog.c: hidden syncs (cuMemcpyDtoH to pageable memory, on the
 * simulated driver) planted in a static function, a non-static one, an
 * inlined one and one of its own shared library (sites_lib.c), each a
 * different number of times (3, 4, 5, 6); and a contended lock: the
 * global mutex launch_lock, held by one thread while another waits in
 * wait_for_lock, 3 times. Built -g -O2 without -rdynamic
 * (tests/traced/test_symbolize.py); "SITE name" marks the line of each call.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sites.h"

CUdeviceptr site_dev;
pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int calls;
static pthread_barrier_t held;

static __attribute__((noinline)) void static_sync(void)
{
	char buf[4];
	if (cuMemcpyDtoH_v2(buf, site_dev, sizeof buf) != 0) /* SITE static_sync */
		abort();
	calls++;
}

__attribute__((noinline)) void global_sync(void)
{
	char buf[8];
	if (cuMemcpyDtoH_v2(buf, site_dev, sizeof buf) != 0) /* SITE global_sync */
		abort();
	calls++;
}

static inline __attribute__((always_inline)) void inlined_sync(void)
{
	char buf[16];
	if (cuMemcpyDtoH_v2(buf, site_dev, sizeof buf) != 0) /* SITE inlined_sync */
		abort();
}

static __attribute__((noinline)) void outer_of_inline(void)
{
	inlined_sync(); /* SITE outer_of_inline */
	calls++;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void *holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&launch_lock);
		pthread_barrier_wait(&held);
		sleep_ms(30);
		pthread_mutex_unlock(&launch_lock);
		pthread_barrier_wait(&held);
	}
	return NULL;
}

static __attribute__((noinline)) void wait_for_lock(void)
{
	pthread_mutex_lock(&launch_lock); /* SITE wait_for_lock */
	calls++;
	pthread_mutex_unlock(&launch_lock);
}

int main(void)
{
	void *ctx;
	int dev;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuMemAlloc_v2(&site_dev, 64))
		return 1;
	for (int i = 0; i < 3; i++)
		static_sync(); /* SITE main_static */
	for (int i = 0; i < 4; i++)
		global_sync(); /* SITE main_global */
	for (int i = 0; i < 5; i++)
		outer_of_inline(); /* SITE main_inline */
	lib_sync(site_dev, 6); /* SITE main_lib */
	pthread_t t;
	pthread_barrier_init(&held, NULL, 2);
	pthread_create(&t, NULL, holder, NULL);
	for (int i = 0; i < 3; i++) {
		pthread_barrier_wait(&held);
		wait_for_lock(); /* SITE main_lock */
		pthread_barrier_wait(&held);
	}
	pthread_join(t, NULL);
	printf("calls %d\n", calls);
	return 0;
}
