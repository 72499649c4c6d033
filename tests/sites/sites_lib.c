/*
 * sites_lib.c: libsites.so, a shared library of the program's own, built
 * -g -O2 without -rdynamic: a hidden sync in a static function of it.
 */
#include <stdlib.h>

#include "sites.h"

static volatile int lib_calls;

static __attribute__((noinline)) void lib_static_sync(CUdeviceptr dev)
{
	char buf[4];
	if (cuMemcpyDtoH_v2(buf, dev, sizeof buf) != 0) /* SITE lib_static_sync */
		abort();
	lib_calls++;
}

void lib_sync(CUdeviceptr dev, int times)
{
	for (int i = 0; i < times; i++) {
		lib_static_sync(dev); /* SITE lib_sync */
		lib_calls++;
	}
}
