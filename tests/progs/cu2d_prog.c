/*
 * cu2d_prog: 2-D and 3-D copies and 2-D memsets through dlopen + dlsym of
 * the simulated driver: one cuMemcpy2D_v2 host->device of 64 x 8 bytes, one
 * cuMemcpy2DAsync_v2 device->host of 32 x 4 into pageable memory, one
 * cuMemcpy3D_v2 device->device of 16 x 4 x 2, one cuMemsetD2D32_v2 of
 * 10 x 3 words. The simulated driver may not implement them (801): the
 * records say what was asked all the same.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
struct m2d {
	size_t sx, sy; int st; const void *sh; CUdeviceptr sd; void *sa; size_t sp;
	size_t dx, dy; int dt; void *dh; CUdeviceptr dd; void *da; size_t dp;
	size_t w, h;
};
struct m3d {
	size_t sx, sy, sz, sl; int st; const void *sh; CUdeviceptr sd; void *sa; void *r0; size_t sp, shh;
	size_t dx, dy, dz, dl; int dt; void *dh; CUdeviceptr dd; void *da; void *r1; size_t dp, dhh;
	size_t w, h, d;
};

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return 2;
	CUresult (*init)(unsigned) = (CUresult (*)(unsigned))dlsym(h, "cuInit");
	CUresult (*retain)(void **, int) = (CUresult (*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
	CUresult (*setcur)(void *) = (CUresult (*)(void *))dlsym(h, "cuCtxSetCurrent");
	CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))dlsym(h, "cuMemAlloc_v2");
	CUresult (*c2d)(const struct m2d *) = (CUresult (*)(const struct m2d *))dlsym(h, "cuMemcpy2D_v2");
	CUresult (*c2da)(const struct m2d *, void *) = (CUresult (*)(const struct m2d *, void *))dlsym(h, "cuMemcpy2DAsync_v2");
	CUresult (*c3d)(const struct m3d *) = (CUresult (*)(const struct m3d *))dlsym(h, "cuMemcpy3D_v2");
	CUresult (*set2d)(CUdeviceptr, size_t, unsigned, size_t, size_t) =
		(CUresult (*)(CUdeviceptr, size_t, unsigned, size_t, size_t))dlsym(h, "cuMemsetD2D32_v2");
	void *ctx;
	CUdeviceptr d;
	static char host[4096];
	init(0);
	retain(&ctx, 0);
	setcur(ctx);
	alloc(&d, 1 << 16);
	struct m2d a = { .st = 1, .sh = host, .sp = 64, .dt = 2, .dd = d, .dp = 64, .w = 64, .h = 8 };
	struct m2d b = { .st = 2, .sd = d, .sp = 32, .dt = 1, .dh = host, .dp = 32, .w = 32, .h = 4 };
	struct m3d c = { .st = 2, .sd = d, .sp = 16, .shh = 4, .dt = 2, .dd = d + 4096, .dp = 16,
			 .dhh = 4, .w = 16, .h = 4, .d = 2 };
	printf("%d %d %d %d\n", c2d(&a), c2da(&b, NULL), c3d(&c), set2d(d, 64, 0, 10, 3));
	return 0;
}
