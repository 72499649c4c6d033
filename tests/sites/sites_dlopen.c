/*
 * sites_dlopen.c: libsites.so loaded with dlopen after start-up (its
 * MODULES entry is written when the flusher next sees the loader's list
 * change), lib_sync(2) called through dlsym, then a fork whose child calls
 * lib_sync(3) (the child's file lists the modules again).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sites.h"

CUdeviceptr site_dev;

int main(int argc, char **argv)
{
	void *ctx;
	int dev;
	if (argc < 2 || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuMemAlloc_v2(&site_dev, 64))
		return 1;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return 2;
	void (*sync)(CUdeviceptr, int) = (void (*)(CUdeviceptr, int))dlsym(h, "lib_sync");
	sync(site_dev, 2); /* SITE dl_call */
	pid_t pid = fork();
	if (pid == 0) {
		sync(site_dev, 3); /* SITE child_call */
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("child %d\n", WEXITSTATUS(st));
	return 0;
}
