/* sites.h: what the call-site test programs share (tests/traced/test_symbolize.py) */
#ifndef SITES_H
#define SITES_H
#include <stddef.h>

typedef unsigned long long CUdeviceptr;
int cuInit(unsigned flags);
int cuDeviceGet(int *dev, int ordinal);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuMemAlloc_v2(CUdeviceptr *p, size_t n);
int cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);

extern CUdeviceptr site_dev;       /* 64 bytes on the device (the program's) */
void lib_sync(CUdeviceptr dev, int times);   /* in libsites.so */
#endif
