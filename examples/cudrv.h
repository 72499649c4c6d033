/*
 * cudrv.h: the CUDA driver functions the examples use, loaded the way the
 * environment variable FT_CUDA_PATH says (no cuda.h: own minimal types).
 *
 *   link       direct calls to the exported symbols (the example is linked
 *              with -lcuda; built with -DCUDRV_LINKED), the names cuda.h maps
 *              to by default (cuMemcpyDtoH -> cuMemcpyDtoH_v2, ...)
 *   dlsym      dlopen("libcuda.so.1") + dlsym of the same exact export names
 *              (Triton's launcher, ctypes, PyTorch's lazy NVRTC path)
 *   proc       dlopen + dlsym of cuGetProcAddress_v2 only, then, like
 *              libcudart 13: an empty-string probe, cuGetProcAddress itself
 *              resolved at 12000 through it, and every function requested at
 *              the version libcudart 13 asks for, flags 0
 *              (tests/data/cudart13-getprocaddress.tsv)
 *   proc-ptds  as proc, with flags 2 (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_
 *              STREAM) for the functions libcudart asks for with flags 2:
 *              they resolve to the _ptsz/_ptds variants (what PyTorch does)
 *
 * Default: proc-ptds. Every call is checked; a failure prints the call and
 * the driver's error and exits 1.
 */
#ifndef CUDRV_H
#define CUDRV_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUfunc_st *CUfunction;

#define CUDA_SUCCESS 0
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_DISABLE_TIMING 0x2

/* The function types. */
typedef CUresult (*cudrv_init_t)(unsigned);
typedef CUresult (*cudrv_device_get_t)(CUdevice *, int);
typedef CUresult (*cudrv_ctx_retain_t)(CUcontext *, CUdevice);
typedef CUresult (*cudrv_ctx_set_t)(CUcontext);
typedef CUresult (*cudrv_error_name_t)(CUresult, const char **);
typedef CUresult (*cudrv_lib_load_t)(CUlibrary *, const void *, void *, void **, unsigned,
				     void *, void **, unsigned);
typedef CUresult (*cudrv_lib_kernel_t)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*cudrv_launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned,
				   unsigned, unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*cudrv_alloc_t)(CUdeviceptr *, size_t);
typedef CUresult (*cudrv_host_alloc_t)(void **, size_t, unsigned);
typedef CUresult (*cudrv_htod_async_t)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*cudrv_dtoh_t)(void *, CUdeviceptr, size_t);
typedef CUresult (*cudrv_dtoh_async_t)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*cudrv_stream_create_t)(CUstream *, unsigned);
typedef CUresult (*cudrv_stream_t)(CUstream);
typedef CUresult (*cudrv_event_create_t)(CUevent *, unsigned);
typedef CUresult (*cudrv_event_record_t)(CUevent, CUstream);
typedef CUresult (*cudrv_event_t)(CUevent);

/* One row per function: the field, its type, the API name given to
 * cuGetProcAddress, the exact export that link and dlsym use, the version
 * libcudart 13 requests it at with flags 0, and ptds: 1 if libcudart also
 * requests it with flags 2, at version vptds (used by proc-ptds). */
#define CUDRV_FUNCS(X) \
	X(Init,              cudrv_init_t,          "cuInit",                   cuInit,                   2000,  0, 0)    \
	X(DeviceGet,         cudrv_device_get_t,    "cuDeviceGet",              cuDeviceGet,              2000,  0, 0)    \
	X(PrimaryCtxRetain,  cudrv_ctx_retain_t,    "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, 7000,  0, 0)    \
	X(CtxSetCurrent,     cudrv_ctx_set_t,       "cuCtxSetCurrent",          cuCtxSetCurrent,          4000,  0, 0)    \
	X(GetErrorName,      cudrv_error_name_t,    "cuGetErrorName",           cuGetErrorName,           6000,  0, 0)    \
	X(LibraryLoadData,   cudrv_lib_load_t,      "cuLibraryLoadData",        cuLibraryLoadData,        12000, 0, 0)    \
	X(LibraryGetKernel,  cudrv_lib_kernel_t,    "cuLibraryGetKernel",       cuLibraryGetKernel,       12000, 0, 0)    \
	X(LaunchKernel,      cudrv_launch_t,        "cuLaunchKernel",           cuLaunchKernel,           4000,  1, 7000) \
	X(MemAlloc,          cudrv_alloc_t,         "cuMemAlloc",               cuMemAlloc_v2,            3020,  0, 0)    \
	X(MemHostAlloc,      cudrv_host_alloc_t,    "cuMemHostAlloc",           cuMemHostAlloc,           2020,  0, 0)    \
	X(MemcpyHtoDAsync,   cudrv_htod_async_t,    "cuMemcpyHtoDAsync",        cuMemcpyHtoDAsync_v2,     3020,  1, 7000) \
	X(MemcpyDtoH,        cudrv_dtoh_t,          "cuMemcpyDtoH",             cuMemcpyDtoH_v2,          3020,  1, 7000) \
	X(MemcpyDtoHAsync,   cudrv_dtoh_async_t,    "cuMemcpyDtoHAsync",        cuMemcpyDtoHAsync_v2,     3020,  1, 7000) \
	X(StreamCreate,      cudrv_stream_create_t, "cuStreamCreate",           cuStreamCreate,           2000,  0, 0)    \
	X(StreamSynchronize, cudrv_stream_t,        "cuStreamSynchronize",      cuStreamSynchronize,      2000,  1, 7000) \
	X(EventCreate,       cudrv_event_create_t,  "cuEventCreate",            cuEventCreate,            2000,  0, 0)    \
	X(EventRecord,       cudrv_event_record_t,  "cuEventRecord",            cuEventRecord,            2000,  1, 7000) \
	X(EventSynchronize,  cudrv_event_t,         "cuEventSynchronize",       cuEventSynchronize,       2000,  0, 0)

struct cudrv {
	const char *path;       /* link, dlsym, proc, proc-ptds */
#define CUDRV_FIELD(field, type, api, ident, ver, ptds, vptds) type field;
	CUDRV_FUNCS(CUDRV_FIELD)
#undef CUDRV_FIELD
	CUdevice dev;
	CUcontext ctx;
};

static struct cudrv cu;

#ifdef CUDRV_LINKED
/* The exports the link path calls directly (own prototypes, no cuda.h). */
#define CUDRV_DECL(field, type, api, ident, ver, ptds, vptds) \
	extern int ident();
CUDRV_FUNCS(CUDRV_DECL)
#undef CUDRV_DECL
#endif

/* Prints the failing call with the driver's error name; exits 1. */
static inline void cudrv_fail(const char *what, CUresult r, const char *file, int line)
{
	const char *name = NULL;
	if (!cu.GetErrorName || cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = "?";
	fprintf(stderr, "%s:%d: %s failed: %d (%s) [FT_CUDA_PATH=%s]\n", file, line, what,
		r, name, cu.path ? cu.path : "?");
	exit(1);
}

#define CK(call) do { CUresult ck_r_ = (call); \
	if (ck_r_ != CUDA_SUCCESS) cudrv_fail(#call, ck_r_, __FILE__, __LINE__); } while (0)

static inline void cudrv_die(const char *msg, const char *arg)
{
	fprintf(stderr, "cudrv: %s%s [FT_CUDA_PATH=%s]\n", msg, arg ? arg : "",
		cu.path ? cu.path : "?");
	exit(1);
}

typedef CUresult (*cudrv_gpa_t)(const char *, void **, int, unsigned long long, int *);

/* Loads every function of the table through the chosen path. */
static inline void cudrv_load(void)
{
	const char *p = getenv("FT_CUDA_PATH");
	cu.path = p && *p ? p : "proc-ptds";
	if (strcmp(cu.path, "link") == 0) {
#ifdef CUDRV_LINKED
#define CUDRV_LINK(field, type, api, ident, ver, ptds, vptds) cu.field = (type)(void *)ident;
		CUDRV_FUNCS(CUDRV_LINK)
#undef CUDRV_LINK
		return;
#else
		cudrv_die("this build is not linked with -lcuda (build with -DCUDRV_LINKED -lcuda)", NULL);
#endif
	}
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		cudrv_die("dlopen libcuda.so.1: ", dlerror());
	if (strcmp(cu.path, "dlsym") == 0) {
#define CUDRV_DLSYM(field, type, api, ident, ver, ptds, vptds) \
		if (!(cu.field = (type)dlsym(h, #ident))) cudrv_die("dlsym failed: ", #ident);
		CUDRV_FUNCS(CUDRV_DLSYM)
#undef CUDRV_DLSYM
		return;
	}
	int per_thread;
	if (strcmp(cu.path, "proc") == 0)
		per_thread = 0;
	else if (strcmp(cu.path, "proc-ptds") == 0)
		per_thread = 1;
	else
		cudrv_die("FT_CUDA_PATH must be link, dlsym, proc or proc-ptds, not ", cu.path);
	cudrv_gpa_t gpa0 = (cudrv_gpa_t)dlsym(h, "cuGetProcAddress_v2");
	if (!gpa0)
		cudrv_die("dlsym failed: ", "cuGetProcAddress_v2");
	/* as libcudart: probe with "", then resolve cuGetProcAddress itself */
	void *fn = NULL;
	int status = 0;
	(void)gpa0("", &fn, 13000, 0, &status);
	fn = NULL;
	if (gpa0("cuGetProcAddress", &fn, 12000, 0, &status) != CUDA_SUCCESS || !fn)
		cudrv_die("cuGetProcAddress(cuGetProcAddress, 12000) failed", NULL);
	cudrv_gpa_t gpa = (cudrv_gpa_t)fn;
#define CUDRV_PROC(field, type, api, ident, ver, ptds, vptds) do {                    \
		int v_ = ver; unsigned long long fl_ = 0;                               \
		if (per_thread && ptds) { v_ = vptds; fl_ = 2; }                        \
		fn = NULL;                                                              \
		CUresult r_ = gpa(api, &fn, v_, fl_, &status);                          \
		if (r_ != CUDA_SUCCESS || !fn)                                          \
			cudrv_die("cuGetProcAddress failed: ", api);                    \
		cu.field = (type)fn;                                                    \
	} while (0);
	CUDRV_FUNCS(CUDRV_PROC)
#undef CUDRV_PROC
}

/* cuInit, device 0, its primary context made current on this thread. */
static inline void cudrv_init(void)
{
	cudrv_load();
	CK(cu.Init(0));
	CK(cu.DeviceGet(&cu.dev, 0));
	CK(cu.PrimaryCtxRetain(&cu.ctx, cu.dev));
	CK(cu.CtxSetCurrent(cu.ctx));
}

/* Another host thread uses the context too. */
static inline void cudrv_thread(void)
{
	CK(cu.CtxSetCurrent(cu.ctx));
}

/* The same kernels for a real driver, which refuses the text image
 * (CUDA_ERROR_INVALID_IMAGE): PTX, each kernel spinning on the GPU's
 * timer (%globaltimer) for its nanoseconds (scripts/gpu_check.sh runs the
 * examples so). out: at least 16 KiB. */
static inline const char *cudrv_ptx(const char *image, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, ".version 7.8\n.target sm_80\n.address_size 64\n");
	for (const char *l = image; *l && n < cap;) {
		char name[128];
		unsigned long long ns = 10000;
		int got = sscanf(l, "kernel %127s %llu", name, &ns);
		if (got >= 1)
			n += (size_t)snprintf(out + n, cap - n,
				".visible .entry %s()\n{\n  .reg .u64 %%rd<3>;\n  .reg .pred %%p;\n"
				"  mov.u64 %%rd0, %%globaltimer;\nLOOP:\n  mov.u64 %%rd1, %%globaltimer;\n"
				"  sub.u64 %%rd2, %%rd1, %%rd0;\n  setp.lt.u64 %%p, %%rd2, %llu;\n"
				"  @%%p bra LOOP;\n  ret;\n}\n", name, ns);
		const char *nl = strchr(l, '\n');
		l = nl ? nl + 1 : l + strlen(l);
	}
	return out;
}

/* The simulated driver's module image is text: "kernel NAME NS" per line;
 * a real driver gets the same kernels as PTX (cudrv_ptx). */
static inline CUlibrary cudrv_library(const char *image)
{
	CUlibrary lib;
	CUresult r = cu.LibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
	if (r == 200) {                 /* CUDA_ERROR_INVALID_IMAGE */
		static char ptx[16384];
		CK(cu.LibraryLoadData(&lib, cudrv_ptx(image, ptx, sizeof ptx), NULL, NULL, 0,
				      NULL, NULL, 0));
	} else {
		CK(r);
	}
	return lib;
}

/* As libcudart: a CUkernel handle cast to CUfunction is launched. */
static inline CUfunction cudrv_kernel(CUlibrary lib, const char *name)
{
	CUkernel k;
	CK(cu.LibraryGetKernel(&k, lib, name));
	return (CUfunction)k;
}

static inline uint64_t cudrv_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU work: spins for ns nanoseconds (no system call, nothing traced). */
static inline void cudrv_spin(uint64_t ns)
{
	uint64_t end = cudrv_now_ns() + ns;
	while (cudrv_now_ns() < end)
		;
}

#endif
