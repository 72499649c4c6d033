/*
 * cu_array_prog.c: test program for tests/traced/test_cuda_arrays.py. CUDA-array,
 * 3-D peer and batch copies on the simulated driver, every function reached
 * one way, chosen by argv[1]:
 *
 *   link    direct calls of the exact exports (only when built with
 *           -DLINKED and -lcuda; the test builds it so)
 *   dlsym   dlopen("libcuda.so.1") + dlsym of the same exact exports
 *   proc    dlopen + dlsym of cuGetProcAddress_v2 only; every function
 *           asked for by API name, version and flags (2: per-thread
 *           default stream), which select the same exports
 *
 * The copies, in order (tests/traced/test_cuda_arrays.py lists what each must
 * record): HtoA, AtoA, AtoD, DtoA (per-thread), AtoH, AtoHAsync (pinned),
 * HtoAAsync (per-thread, pageable), HtoAAsync (pinned), AtoH (the pre-3.2
 * ABI), 3DPeer device to device, 3DPeerAsync from pageable memory,
 * 3DPeerAsync_ptsz into pinned memory, BatchAsync_v2 (pinned and device),
 * BatchAsync_v2_ptsz (a pageable source), BatchAsync (12.8 ABI) on the
 * legacy stream (refused: 1), 3DBatchAsync_v2 (into an array, between
 * pointers), 3DBatchAsync_ptsz (12.8 ABI, array to pageable memory).
 * Prints each call's result and whether the bytes arrived; no addresses.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUarray;
typedef void *CUstream;

typedef struct {
	size_t Width, Height;
	int Format;
	unsigned int NumChannels;
} ArrayDesc;

typedef struct {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	void *srcContext;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	void *dstContext;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} Peer3D;

typedef struct { int type; int id; } MemLocation;
typedef struct {
	int srcAccessOrder;
	MemLocation srcLocHint, dstLocHint;
	unsigned int flags;
} CopyAttrs;
typedef struct {
	int type;               /* 1 pointer, 2 array */
	union {
		struct { CUdeviceptr ptr; size_t rowLength, layerHeight; MemLocation locHint; } ptr;
		struct { CUarray array; size_t x, y, z; } array;
	} op;
} Operand;
typedef struct {
	Operand src, dst;
	size_t width, height, depth;
	int srcAccessOrder;
	unsigned int flags;
} BatchOp;

#ifdef LINKED
extern int cuInit(), cuDevicePrimaryCtxRetain(), cuCtxSetCurrent(), cuMemAlloc_v2(),
	cuMemHostAlloc(), cuStreamCreate(), cuStreamSynchronize(), cuArrayCreate_v2(),
	cuArrayDestroy(), cuMemcpyHtoA_v2(), cuMemcpyAtoA_v2(), cuMemcpyAtoD_v2(),
	cuMemcpyDtoA_v2_ptds(), cuMemcpyAtoH_v2(), cuMemcpyAtoHAsync_v2(),
	cuMemcpyHtoAAsync_v2_ptsz(), cuMemcpyHtoAAsync_v2(), cuMemcpyAtoH(), cuMemcpy3DPeer(),
	cuMemcpy3DPeerAsync(), cuMemcpy3DPeerAsync_ptsz(), cuMemcpyBatchAsync_v2(),
	cuMemcpyBatchAsync_v2_ptsz(), cuMemcpyBatchAsync(), cuMemcpy3DBatchAsync_v2(),
	cuMemcpy3DBatchAsync_ptsz();
#define ADDR(sym) ((void *)sym)
#else
#define ADDR(sym) NULL
#endif

/* every function used: exact export, the API name and the version and
 * flags that select that export through cuGetProcAddress */
enum { INIT, RETAIN, SETCUR, ALLOC, HOSTALLOC, STREAM, STREAMSYNC, ARRAY, ARRAYFREE,
       HTOA, ATOA, ATOD, DTOA_P, ATOH, ATOH_ASYNC, HTOA_ASYNC_P, HTOA_ASYNC, ATOH_V1,
       PEER, PEER_ASYNC, PEER_ASYNC_P, BATCH, BATCH_P, BATCH_V1, BATCH3D, BATCH3D_P_V1, NFN };
static struct {
	const char *sym, *api;
	int version;
	unsigned flags;
	void *fn;
} fns[NFN] = {
	[INIT] = { "cuInit", "cuInit", 2000, 0, ADDR(cuInit) },
	[RETAIN] = { "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", 7000, 0,
		     ADDR(cuDevicePrimaryCtxRetain) },
	[SETCUR] = { "cuCtxSetCurrent", "cuCtxSetCurrent", 4000, 0, ADDR(cuCtxSetCurrent) },
	[ALLOC] = { "cuMemAlloc_v2", "cuMemAlloc", 3020, 0, ADDR(cuMemAlloc_v2) },
	[HOSTALLOC] = { "cuMemHostAlloc", "cuMemHostAlloc", 2020, 0, ADDR(cuMemHostAlloc) },
	[STREAM] = { "cuStreamCreate", "cuStreamCreate", 2000, 0, ADDR(cuStreamCreate) },
	[STREAMSYNC] = { "cuStreamSynchronize", "cuStreamSynchronize", 2000, 0,
			 ADDR(cuStreamSynchronize) },
	[ARRAY] = { "cuArrayCreate_v2", "cuArrayCreate", 3020, 0, ADDR(cuArrayCreate_v2) },
	[ARRAYFREE] = { "cuArrayDestroy", "cuArrayDestroy", 2000, 0, ADDR(cuArrayDestroy) },
	[HTOA] = { "cuMemcpyHtoA_v2", "cuMemcpyHtoA", 3020, 0, ADDR(cuMemcpyHtoA_v2) },
	[ATOA] = { "cuMemcpyAtoA_v2", "cuMemcpyAtoA", 3020, 0, ADDR(cuMemcpyAtoA_v2) },
	[ATOD] = { "cuMemcpyAtoD_v2", "cuMemcpyAtoD", 3020, 0, ADDR(cuMemcpyAtoD_v2) },
	[DTOA_P] = { "cuMemcpyDtoA_v2_ptds", "cuMemcpyDtoA", 7000, 2, ADDR(cuMemcpyDtoA_v2_ptds) },
	[ATOH] = { "cuMemcpyAtoH_v2", "cuMemcpyAtoH", 3020, 0, ADDR(cuMemcpyAtoH_v2) },
	[ATOH_ASYNC] = { "cuMemcpyAtoHAsync_v2", "cuMemcpyAtoHAsync", 3020, 0,
			 ADDR(cuMemcpyAtoHAsync_v2) },
	[HTOA_ASYNC_P] = { "cuMemcpyHtoAAsync_v2_ptsz", "cuMemcpyHtoAAsync", 7000, 2,
			   ADDR(cuMemcpyHtoAAsync_v2_ptsz) },
	[HTOA_ASYNC] = { "cuMemcpyHtoAAsync_v2", "cuMemcpyHtoAAsync", 3020, 0,
			 ADDR(cuMemcpyHtoAAsync_v2) },
	[ATOH_V1] = { "cuMemcpyAtoH", "cuMemcpyAtoH", 2000, 0, ADDR(cuMemcpyAtoH) },
	[PEER] = { "cuMemcpy3DPeer", "cuMemcpy3DPeer", 4000, 0, ADDR(cuMemcpy3DPeer) },
	[PEER_ASYNC] = { "cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", 4000, 0,
			 ADDR(cuMemcpy3DPeerAsync) },
	[PEER_ASYNC_P] = { "cuMemcpy3DPeerAsync_ptsz", "cuMemcpy3DPeerAsync", 7000, 2,
			   ADDR(cuMemcpy3DPeerAsync_ptsz) },
	[BATCH] = { "cuMemcpyBatchAsync_v2", "cuMemcpyBatchAsync", 13000, 0,
		    ADDR(cuMemcpyBatchAsync_v2) },
	[BATCH_P] = { "cuMemcpyBatchAsync_v2_ptsz", "cuMemcpyBatchAsync", 13000, 2,
		      ADDR(cuMemcpyBatchAsync_v2_ptsz) },
	[BATCH_V1] = { "cuMemcpyBatchAsync", "cuMemcpyBatchAsync", 12080, 0,
		       ADDR(cuMemcpyBatchAsync) },
	[BATCH3D] = { "cuMemcpy3DBatchAsync_v2", "cuMemcpy3DBatchAsync", 13000, 0,
		      ADDR(cuMemcpy3DBatchAsync_v2) },
	[BATCH3D_P_V1] = { "cuMemcpy3DBatchAsync_ptsz", "cuMemcpy3DBatchAsync", 12080, 2,
			   ADDR(cuMemcpy3DBatchAsync_ptsz) },
};

typedef CUresult (*gpa_t)(const char *, void **, int, unsigned long long, int *);

static void load(const char *how)
{
	if (strcmp(how, "link") == 0) {
		for (int i = 0; i < NFN; i++)
			if (!fns[i].fn) {
				fprintf(stderr, "cu_array_prog: not built with -DLINKED -lcuda\n");
				exit(2);
			}
		return;
	}
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "cu_array_prog: %s\n", dlerror());
		exit(2);
	}
	gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
	for (int i = 0; i < NFN; i++) {
		int status = 0;
		fns[i].fn = NULL;
		if (strcmp(how, "dlsym") == 0)
			fns[i].fn = dlsym(h, fns[i].sym);
		else if (strcmp(how, "proc") == 0 && gpa)
			gpa(fns[i].api, &fns[i].fn, fns[i].version, fns[i].flags, &status);
		if (!fns[i].fn) {
			fprintf(stderr, "cu_array_prog: %s: no %s\n", how, fns[i].sym);
			exit(2);
		}
	}
}

#define F(i, type) ((type)fns[i].fn)
typedef CUresult (*atoh_t)(void *, CUarray, size_t, size_t);
typedef CUresult (*atoh1_t)(void *, CUarray, unsigned, unsigned);
typedef CUresult (*htoa_t)(CUarray, size_t, const void *, size_t);
typedef CUresult (*atoa_t)(CUarray, size_t, CUarray, size_t, size_t);
typedef CUresult (*atod_t)(CUdeviceptr, CUarray, size_t, size_t);
typedef CUresult (*dtoa_t)(CUarray, size_t, CUdeviceptr, size_t);
typedef CUresult (*atoh_async_t)(void *, CUarray, size_t, size_t, CUstream);
typedef CUresult (*htoa_async_t)(CUarray, size_t, const void *, size_t, CUstream);
typedef CUresult (*peer_t)(const Peer3D *);
typedef CUresult (*peer_async_t)(const Peer3D *, CUstream);
typedef CUresult (*batch_t)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CopyAttrs *,
			    size_t *, size_t, CUstream);
typedef CUresult (*batch1_t)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CopyAttrs *,
			     size_t *, size_t, size_t *, CUstream);
typedef CUresult (*batch3d_t)(size_t, BatchOp *, unsigned long long, CUstream);
typedef CUresult (*batch3d1_t)(size_t, BatchOp *, size_t *, unsigned long long, CUstream);

static void check(const char *what, CUresult r)
{
	if (r != 0) {
		fprintf(stderr, "cu_array_prog: %s: %d\n", what, r);
		exit(3);
	}
}

#define SHOW(label, expr) printf("%s ret=%d\n", label, (int)(expr))
#define D(p) ((CUdeviceptr)(uintptr_t)(p))

static unsigned char pageable[8192], back[8192];

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	load(argv[1]);
	void *ctx;
	CUdeviceptr d;
	unsigned char *pinned;
	CUstream s;
	CUarray a, b;
	ArrayDesc desc = { 256, 0, 0x03, 1 };       /* 256 x uint32: 1024 bytes */
	check("cuInit", F(INIT, CUresult (*)(unsigned))(0));
	check("retain", F(RETAIN, CUresult (*)(void **, int))(&ctx, 0));
	check("setcur", F(SETCUR, CUresult (*)(void *))(ctx));
	check("alloc", F(ALLOC, CUresult (*)(CUdeviceptr *, size_t))(&d, 1 << 16));
	check("hostalloc", F(HOSTALLOC, CUresult (*)(void **, size_t, unsigned))((void **)&pinned,
										  8192, 0));
	check("stream", F(STREAM, CUresult (*)(CUstream *, unsigned))(&s, 0));
	check("array", F(ARRAY, CUresult (*)(CUarray *, const ArrayDesc *))(&a, &desc));
	check("array", F(ARRAY, CUresult (*)(CUarray *, const ArrayDesc *))(&b, &desc));
	for (int i = 0; i < 8192; i++)
		pageable[i] = (unsigned char)(i * 7 + 3);

	/* array copies: b = a = pageable[0:1024]; d[0:512] = b[256:768] */
	SHOW("cuMemcpyHtoA_v2", F(HTOA, htoa_t)(a, 0, pageable, 1024));
	SHOW("cuMemcpyAtoA_v2", F(ATOA, atoa_t)(b, 0, a, 0, 1024));
	SHOW("cuMemcpyAtoD_v2", F(ATOD, atod_t)(d, b, 256, 512));
	SHOW("cuMemcpyDtoA_v2_ptds", F(DTOA_P, dtoa_t)(a, 512, d, 256));
	SHOW("cuMemcpyAtoH_v2", F(ATOH, atoh_t)(back, b, 0, 1024));
	printf("array roundtrip %s\n", memcmp(back, pageable, 1024) == 0 ? "ok" : "BAD");
	SHOW("cuMemcpyAtoHAsync_v2", F(ATOH_ASYNC, atoh_async_t)(pinned, a, 512, 256, s));
	check("sync", F(STREAMSYNC, CUresult (*)(CUstream))(s));
	printf("dtoa %s\n", memcmp(pinned, pageable + 256, 256) == 0 ? "ok" : "BAD");
	SHOW("cuMemcpyHtoAAsync_v2_ptsz", F(HTOA_ASYNC_P, htoa_async_t)(a, 0, pageable + 1024, 128, NULL));
	SHOW("cuMemcpyHtoAAsync_v2", F(HTOA_ASYNC, htoa_async_t)(b, 0, pinned, 64, s));
	SHOW("cuMemcpyAtoH", F(ATOH_V1, atoh1_t)(back, a, 0, 32));
	printf("v1 %s\n", memcmp(back, pageable + 1024, 32) == 0 ? "ok" : "BAD");

	/* 3-D peer copies: 16 x 4 x 2 device to device (pitch 32, 4 rows a layer) */
	Peer3D p = { .srcMemoryType = 2, .srcDevice = d, .srcContext = ctx, .srcPitch = 32,
		     .srcHeight = 4, .dstMemoryType = 2, .dstDevice = d + 8192, .dstContext = ctx,
		     .dstPitch = 32, .dstHeight = 4, .WidthInBytes = 16, .Height = 4, .Depth = 2 };
	SHOW("cuMemcpy3DPeer", F(PEER, peer_t)(&p));
	/* 32 x 2 from pageable memory into the device, then back into pinned memory */
	Peer3D q = { .srcMemoryType = 1, .srcHost = pageable + 2048, .dstMemoryType = 2,
		     .dstDevice = d + 16384, .dstContext = ctx, .WidthInBytes = 32, .Height = 2,
		     .Depth = 1 };
	SHOW("cuMemcpy3DPeerAsync", F(PEER_ASYNC, peer_async_t)(&q, s));
	Peer3D r = { .srcMemoryType = 2, .srcDevice = d + 16384, .srcContext = ctx,
		     .dstMemoryType = 1, .dstHost = pinned + 4096, .WidthInBytes = 32, .Height = 2,
		     .Depth = 1 };
	SHOW("cuMemcpy3DPeerAsync_ptsz", F(PEER_ASYNC_P, peer_async_t)(&r, NULL));
	check("sync", F(STREAMSYNC, CUresult (*)(CUstream))(s));
	printf("peer %s\n", memcmp(pinned + 4096, pageable + 2048, 64) == 0 ? "ok" : "BAD");

	/* batches */
	CopyAttrs attr = { .srcAccessOrder = 1 };
	size_t idx0 = 0, fail = 7;
	CUdeviceptr dsts[3] = { d + 32768, d + 36864, D(pinned + 6144) };
	CUdeviceptr srcs[3] = { D(pinned), d, d + 32768 };
	size_t sizes[3] = { 100, 200, 300 };
	SHOW("cuMemcpyBatchAsync_v2", F(BATCH, batch_t)(dsts, srcs, sizes, 3, &attr, &idx0, 1, s));
	CUdeviceptr dsts2[2] = { d + 40960, d + 45056 };
	CUdeviceptr srcs2[2] = { D(pageable + 4096), d };
	size_t sizes2[2] = { 50, 70 };
	SHOW("cuMemcpyBatchAsync_v2_ptsz",
	     F(BATCH_P, batch_t)(dsts2, srcs2, sizes2, 2, &attr, &idx0, 1, NULL));
	size_t sizes3[2] = { 10, 20 };
	SHOW("cuMemcpyBatchAsync(legacy stream)",
	     F(BATCH_V1, batch1_t)(dsts2, srcs2, sizes3, 2, &attr, &idx0, 1, &fail, NULL));
	printf("failIdx %s\n", fail == SIZE_MAX ? "none" : "SET");
	BatchOp ops[2] = {
		{ .src = { .type = 1, .op.ptr = { .ptr = d } },
		  .dst = { .type = 2, .op.array = { .array = a, .x = 4 } },
		  .width = 8, .height = 1, .depth = 1, .srcAccessOrder = 1 },
		{ .src = { .type = 1, .op.ptr = { .ptr = D(pinned) } },
		  .dst = { .type = 1, .op.ptr = { .ptr = d + 49152 } },
		  .width = 16, .height = 2, .depth = 1, .srcAccessOrder = 1 },
	};
	SHOW("cuMemcpy3DBatchAsync_v2", F(BATCH3D, batch3d_t)(2, ops, 0, s));
	BatchOp op3 = { .src = { .type = 2, .op.array = { .array = a, .x = 4 } },
			.dst = { .type = 1, .op.ptr = { .ptr = D(back + 4096) } },
			.width = 4, .height = 1, .depth = 1, .srcAccessOrder = 1 };
	fail = 7;
	SHOW("cuMemcpy3DBatchAsync_ptsz", F(BATCH3D_P_V1, batch3d1_t)(1, &op3, &fail, 0, NULL));
	printf("failIdx %s\n", fail == SIZE_MAX ? "none" : "SET");
	check("sync", F(STREAMSYNC, CUresult (*)(CUstream))(s));
	printf("batch3d %s\n", memcmp(back + 4096, (const void *)(uintptr_t)d, 16) == 0 ? "ok" : "BAD");
	check("array free", F(ARRAYFREE, CUresult (*)(CUarray))(a));
	check("array free", F(ARRAYFREE, CUresult (*)(CUarray))(b));
	return 0;
}
