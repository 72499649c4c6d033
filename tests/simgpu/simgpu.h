/* simgpu.h - the CUDA driver ABI subset that the simulated libcuda.so.1 implements:
 * minimal own types (no CUDA headers) and one prototype per exported real entry
 * point. Every other driver symbol is a generated NOT_SUPPORTED stub (variants.tsv). */
#ifndef SIMGPU_H
#define SIMGPU_H

#include <stddef.h>

#define SIMGPU_API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned int CUdeviceptr_v1; /* pre-3.2 ABI: 32-bit device pointers */
typedef struct simgpu_ctx *CUcontext;
typedef struct simgpu_stream *CUstream;
typedef struct simgpu_event *CUevent;
typedef struct simgpu_module *CUmodule;
typedef struct simgpu_module *CUlibrary;  /* a library is a context-free module */
typedef struct simgpu_func *CUfunction;
typedef struct simgpu_func *CUkernel;     /* libcudart casts CUkernel to CUfunction */
typedef struct simgpu_graph *CUgraph;
typedef struct simgpu_graph_exec *CUgraphExec;
typedef struct simgpu_graph_node *CUgraphNode;
typedef void (*CUhostFn)(void *userData);
typedef struct simgpu_array *CUarray;

/* CUDA arrays (sim_mem.c): an element is NumChannels (1, 2, 4) values of
 * Format (CU_AD_FORMAT_*: 0x01/0x02/0x03 unsigned 8/16/32, 0x08/0x09/0x0a
 * signed, 0x10 half, 0x20 float) */
typedef struct {
    size_t Width, Height;
    int Format;
    unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;

typedef struct {
    size_t Width, Height, Depth;
    int Format;
    unsigned int NumChannels, Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

/* cuMemcpy3DPeer's descriptor (cuda.h's layout) */
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;              /* CU_MEMORYTYPE_*: 1 host, 2 device, 3 array, 4 unified */
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    CUcontext srcContext;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    CUcontext dstContext;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D_PEER;

/* batch copies (CUDA 12.8; cuda.h's layouts) */
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
    int srcAccessOrder;             /* 1 stream, 2 during the call, 3 any; 0 invalid */
    CUmemLocation srcLocHint, dstLocHint;
    unsigned int flags;
} CUmemcpyAttributes;
enum { CU_MEMCPY_OPERAND_TYPE_POINTER = 1, CU_MEMCPY_OPERAND_TYPE_ARRAY = 2 };
typedef struct {
    int type;
    union {
        struct { CUdeviceptr ptr; size_t rowLength, layerHeight; CUmemLocation locHint; } ptr;
        struct { CUarray array; struct { size_t x, y, z; } offset; } array;
    } op;
} CUmemcpy3DOperand;
typedef struct {
    CUmemcpy3DOperand src, dst;
    struct { size_t width, height, depth; } extent;   /* elements */
    int srcAccessOrder;
    unsigned int flags;
} CUDA_MEMCPY3D_BATCH_OP;

typedef struct {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    void *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_OPERATING_SYSTEM = 304,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    CUDA_ERROR_ILLEGAL_STATE = 401,
};

enum { CU_STREAM_NON_BLOCKING = 0x1 };
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
enum { CU_EVENT_DISABLE_TIMING = 0x2 };
enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3,
       CU_MEMORYTYPE_UNIFIED = 4 };
enum {
    CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
    CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
};
enum { CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2 };
enum {
    CU_GET_PROC_ADDRESS_SUCCESS = 0,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

/* --- init, device, context (sim_core.c) --- */
SIMGPU_API CUresult cuInit(unsigned int flags);
SIMGPU_API CUresult cuDriverGetVersion(int *version);
SIMGPU_API CUresult cuDeviceGet(CUdevice *dev, int ordinal);
SIMGPU_API CUresult cuDeviceGetCount(int *count);
SIMGPU_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
SIMGPU_API CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev);
SIMGPU_API CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev);
SIMGPU_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
SIMGPU_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
SIMGPU_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
SIMGPU_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
SIMGPU_API CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
SIMGPU_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
SIMGPU_API CUresult cuCtxCreate_v3(CUcontext *pctx, void *affinity, int n, unsigned int flags, CUdevice dev);
SIMGPU_API CUresult cuCtxCreate_v4(CUcontext *pctx, void *params, unsigned int flags, CUdevice dev);
SIMGPU_API CUresult cuCtxDestroy(CUcontext ctx);
SIMGPU_API CUresult cuCtxDestroy_v2(CUcontext ctx);
SIMGPU_API CUresult cuCtxSetCurrent(CUcontext ctx);
SIMGPU_API CUresult cuCtxGetCurrent(CUcontext *pctx);
SIMGPU_API CUresult cuCtxPushCurrent(CUcontext ctx);
SIMGPU_API CUresult cuCtxPushCurrent_v2(CUcontext ctx);
SIMGPU_API CUresult cuCtxPopCurrent(CUcontext *pctx);
SIMGPU_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx);
SIMGPU_API CUresult cuCtxGetDevice(CUdevice *dev);
SIMGPU_API CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx);
SIMGPU_API CUresult cuCtxSynchronize(void);
SIMGPU_API CUresult cuCtxSynchronize_v2(CUcontext ctx);

/* --- modules, libraries, launches, streams, events, graphs (sim_exec.c) --- */
SIMGPU_API CUresult cuModuleLoad(CUmodule *mod, const char *fname);
SIMGPU_API CUresult cuModuleLoadData(CUmodule *mod, const void *image);
SIMGPU_API CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n,
                                       void *options, void **values);
SIMGPU_API CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name);
SIMGPU_API CUresult cuModuleUnload(CUmodule mod);
SIMGPU_API CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, void *jitOpts,
                                      void **jitVals, unsigned int nJit, void *libOpts,
                                      void **libVals, unsigned int nLib);
SIMGPU_API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name);
SIMGPU_API CUresult cuLibraryUnload(CUlibrary lib);
SIMGPU_API CUresult cuKernelGetFunction(CUfunction *f, CUkernel k);
SIMGPU_API CUresult cuFuncGetName(const char **name, CUfunction f);
SIMGPU_API CUresult cuKernelGetName(const char **name, CUkernel k);

SIMGPU_API CUresult cuStreamCreate(CUstream *ps, unsigned int flags);
SIMGPU_API CUresult cuStreamCreateWithPriority(CUstream *ps, unsigned int flags, int priority);
SIMGPU_API CUresult cuStreamDestroy(CUstream s);
SIMGPU_API CUresult cuStreamDestroy_v2(CUstream s);
SIMGPU_API CUresult cuStreamSynchronize(CUstream s);
SIMGPU_API CUresult cuStreamSynchronize_ptsz(CUstream s);
SIMGPU_API CUresult cuStreamQuery(CUstream s);
SIMGPU_API CUresult cuStreamQuery_ptsz(CUstream s);
SIMGPU_API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags);
SIMGPU_API CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int flags);

SIMGPU_API CUresult cuEventCreate(CUevent *pe, unsigned int flags);
SIMGPU_API CUresult cuEventDestroy(CUevent e);
SIMGPU_API CUresult cuEventDestroy_v2(CUevent e);
SIMGPU_API CUresult cuEventRecord(CUevent e, CUstream s);
SIMGPU_API CUresult cuEventRecord_ptsz(CUevent e, CUstream s);
SIMGPU_API CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags);
SIMGPU_API CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int flags);
SIMGPU_API CUresult cuEventQuery(CUevent e);
SIMGPU_API CUresult cuEventSynchronize(CUevent e);
SIMGPU_API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);
SIMGPU_API CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end);

#define SIMGPU_LAUNCH_ARGS                                                                  \
    CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,       \
        unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params
SIMGPU_API CUresult cuLaunchKernel(SIMGPU_LAUNCH_ARGS, void **extra);
SIMGPU_API CUresult cuLaunchKernel_ptsz(SIMGPU_LAUNCH_ARGS, void **extra);
SIMGPU_API CUresult cuLaunchCooperativeKernel(SIMGPU_LAUNCH_ARGS);
SIMGPU_API CUresult cuLaunchCooperativeKernel_ptsz(SIMGPU_LAUNCH_ARGS);
SIMGPU_API CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
                                     void **extra);
SIMGPU_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f,
                                          void **params, void **extra);
SIMGPU_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *user);
SIMGPU_API CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *user);

SIMGPU_API CUresult cuGraphCreate(CUgraph *pg, unsigned int flags);
SIMGPU_API CUresult cuGraphDestroy(CUgraph g);
SIMGPU_API CUresult cuGraphInstantiate(CUgraphExec *pe, CUgraph g, CUgraphNode *errNode,
                                       char *log, size_t logSize);
SIMGPU_API CUresult cuGraphInstantiate_v2(CUgraphExec *pe, CUgraph g, CUgraphNode *errNode,
                                          char *log, size_t logSize);
SIMGPU_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *pe, CUgraph g,
                                                unsigned long long flags);
SIMGPU_API CUresult cuGraphExecDestroy(CUgraphExec e);
SIMGPU_API CUresult cuGraphLaunch(CUgraphExec e, CUstream s);
SIMGPU_API CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s);
enum { CU_STREAM_CAPTURE_MODE_GLOBAL = 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
       CU_STREAM_CAPTURE_MODE_RELAXED = 2 };
SIMGPU_API CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n);
SIMGPU_API CUresult cuStreamBeginCapture(CUstream s);
SIMGPU_API CUresult cuStreamBeginCapture_ptsz(CUstream s);
SIMGPU_API CUresult cuStreamBeginCapture_v2(CUstream s, int mode);
SIMGPU_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, int mode);
SIMGPU_API CUresult cuStreamEndCapture(CUstream s, CUgraph *pg);
SIMGPU_API CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *pg);

/* --- memory (sim_mem.c) --- */
SIMGPU_API CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int size);
SIMGPU_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size);
SIMGPU_API CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pitch,
                                    unsigned int width, unsigned int height, unsigned int elem);
SIMGPU_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
                                       size_t height, unsigned int elem);
SIMGPU_API CUresult cuMemFree(CUdeviceptr_v1 dptr);
SIMGPU_API CUresult cuMemFree_v2(CUdeviceptr dptr);
SIMGPU_API CUresult cuMemAllocHost(void **pp, unsigned int size);
SIMGPU_API CUresult cuMemAllocHost_v2(void **pp, size_t size);
SIMGPU_API CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags);
SIMGPU_API CUresult cuMemFreeHost(void *p);
SIMGPU_API CUresult cuMemHostRegister(void *p, size_t size, unsigned int flags);
SIMGPU_API CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags);
SIMGPU_API CUresult cuMemHostUnregister(void *p);
SIMGPU_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags);
SIMGPU_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s);
SIMGPU_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream s);
SIMGPU_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s);
SIMGPU_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s);
SIMGPU_API CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr ptr);

SIMGPU_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n);
SIMGPU_API CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n);
SIMGPU_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
SIMGPU_API CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
SIMGPU_API CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                                 size_t n);
SIMGPU_API CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                                      CUcontext sctx, size_t n);
SIMGPU_API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                                      CUcontext sctx, size_t n, CUstream s);
SIMGPU_API CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                                           CUcontext sctx, size_t n, CUstream s);
SIMGPU_API CUresult cuMemcpyHtoD(CUdeviceptr_v1 dst, const void *src, unsigned int n);
SIMGPU_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
SIMGPU_API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n);
SIMGPU_API CUresult cuMemcpyDtoH(void *dst, CUdeviceptr_v1 src, unsigned int n);
SIMGPU_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
SIMGPU_API CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n);
SIMGPU_API CUresult cuMemcpyDtoD(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int n);
SIMGPU_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n);
SIMGPU_API CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n);
SIMGPU_API CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dst, const void *src, unsigned int n,
                                      CUstream s);
SIMGPU_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s);
SIMGPU_API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n,
                                              CUstream s);
SIMGPU_API CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr_v1 src, unsigned int n, CUstream s);
SIMGPU_API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s);
SIMGPU_API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s);
SIMGPU_API CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int n,
                                      CUstream s);
SIMGPU_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                         CUstream s);
SIMGPU_API CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                              CUstream s);

SIMGPU_API CUresult cuMemsetD8(CUdeviceptr_v1 dst, unsigned char v, unsigned int n);
SIMGPU_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n);
SIMGPU_API CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char v, size_t n);
SIMGPU_API CUresult cuMemsetD16(CUdeviceptr_v1 dst, unsigned short v, unsigned int n);
SIMGPU_API CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short v, size_t n);
SIMGPU_API CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short v, size_t n);
SIMGPU_API CUresult cuMemsetD32(CUdeviceptr_v1 dst, unsigned int v, unsigned int n);
SIMGPU_API CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int v, size_t n);
SIMGPU_API CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int v, size_t n);
SIMGPU_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
SIMGPU_API CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
SIMGPU_API CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s);
SIMGPU_API CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short v, size_t n,
                                          CUstream s);
SIMGPU_API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s);
SIMGPU_API CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int v, size_t n, CUstream s);

/* arrays, array copies, 3-D peer copies, batch copies (sim_mem.c) */
SIMGPU_API CUresult cuArrayCreate_v2(CUarray *pa, const CUDA_ARRAY_DESCRIPTOR *d);
SIMGPU_API CUresult cuArray3DCreate_v2(CUarray *pa, const CUDA_ARRAY3D_DESCRIPTOR *d);
SIMGPU_API CUresult cuArrayDestroy(CUarray a);
SIMGPU_API CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *d, CUarray a);
SIMGPU_API CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a);

SIMGPU_API CUresult cuMemcpyAtoH(void *d, CUarray s, unsigned int off, unsigned int n);
SIMGPU_API CUresult cuMemcpyHtoA(CUarray d, unsigned int off, const void *s, unsigned int n);
SIMGPU_API CUresult cuMemcpyAtoA(CUarray d, unsigned int doff, CUarray s, unsigned int soff, unsigned int n);
SIMGPU_API CUresult cuMemcpyAtoH_v2(void *d, CUarray s, size_t off, size_t n);
SIMGPU_API CUresult cuMemcpyHtoA_v2(CUarray d, size_t off, const void *s, size_t n);
SIMGPU_API CUresult cuMemcpyAtoA_v2(CUarray d, size_t doff, CUarray s, size_t soff, size_t n);
SIMGPU_API CUresult cuMemcpyAtoH_v2_ptds(void *d, CUarray s, size_t off, size_t n);
SIMGPU_API CUresult cuMemcpyHtoA_v2_ptds(CUarray d, size_t off, const void *s, size_t n);
SIMGPU_API CUresult cuMemcpyAtoA_v2_ptds(CUarray d, size_t doff, CUarray s, size_t soff, size_t n);
SIMGPU_API CUresult cuMemcpyAtoD(CUdeviceptr_v1 d, CUarray s, unsigned int off, unsigned int n);
SIMGPU_API CUresult cuMemcpyAtoD_v2(CUdeviceptr d, CUarray s, size_t off, size_t n);
SIMGPU_API CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr d, CUarray s, size_t off, size_t n);
SIMGPU_API CUresult cuMemcpyDtoA(CUarray d, unsigned int off, CUdeviceptr_v1 s, unsigned int n);
SIMGPU_API CUresult cuMemcpyDtoA_v2(CUarray d, size_t off, CUdeviceptr s, size_t n);
SIMGPU_API CUresult cuMemcpyDtoA_v2_ptds(CUarray d, size_t off, CUdeviceptr s, size_t n);
SIMGPU_API CUresult cuMemcpyAtoHAsync(void *d, CUarray s, unsigned int off, unsigned int n,
                                      CUstream st);
SIMGPU_API CUresult cuMemcpyAtoHAsync_v2(void *d, CUarray s, size_t off, size_t n, CUstream st);
SIMGPU_API CUresult cuMemcpyAtoHAsync_v2_ptsz(void *d, CUarray s, size_t off, size_t n,
                                              CUstream st);
SIMGPU_API CUresult cuMemcpyHtoAAsync(CUarray d, unsigned int off, const void *s, unsigned int n,
                                      CUstream st);
SIMGPU_API CUresult cuMemcpyHtoAAsync_v2(CUarray d, size_t off, const void *s, size_t n,
                                         CUstream st);
SIMGPU_API CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray d, size_t off, const void *s, size_t n,
                                              CUstream st);

SIMGPU_API CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *c);
SIMGPU_API CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *c);
SIMGPU_API CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *c, CUstream s);
SIMGPU_API CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *c, CUstream s);

SIMGPU_API CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                       size_t count, CUmemcpyAttributes *attrs,
                                       size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                                       CUstream s);
SIMGPU_API CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                            size_t count, CUmemcpyAttributes *attrs,
                                            size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                                            CUstream s);
SIMGPU_API CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                          size_t count, CUmemcpyAttributes *attrs,
                                          size_t *attrsIdxs, size_t numAttrs, CUstream s);
SIMGPU_API CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                               size_t *sizes, size_t count,
                                               CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                               size_t numAttrs, CUstream s);
SIMGPU_API CUresult cuMemcpy3DBatchAsync(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *failIdx,
                                         unsigned long long flags, CUstream s);
SIMGPU_API CUresult cuMemcpy3DBatchAsync_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops,
                                              size_t *failIdx, unsigned long long flags,
                                              CUstream s);
SIMGPU_API CUresult cuMemcpy3DBatchAsync_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops,
                                            unsigned long long flags, CUstream s);
SIMGPU_API CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops,
                                                 unsigned long long flags, CUstream s);

/* --- entry-point lookup and errors (sim_proc.c) --- */
SIMGPU_API CUresult cuGetErrorName(CUresult err, const char **str);
SIMGPU_API CUresult cuGetErrorString(CUresult err, const char **str);
SIMGPU_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                     unsigned long long flags);
SIMGPU_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                        unsigned long long flags, int *status);
SIMGPU_API CUresult cuGetExportTable(const void **table, const void *id);

#endif
