/*
 * cuda_types.h: the few CUDA driver types the wrappers need, declared here
 * so that feedtrace builds without the CUDA toolkit. Struct tags match
 * cuda.h's, so when the toolkit is present build/gen/cuda_check_*.c can
 * check every wrapper's signature against cuda.h itself.
 */
#ifndef FT_CUDA_TYPES_H
#define FT_CUDA_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned int CUdeviceptr_v1;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUlib_st *CUlibrary;
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphEdgeData_st CUgraphEdgeData;
typedef enum CUstreamCaptureMode_enum {
	CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
	CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
	CU_STREAM_CAPTURE_MODE_RELAXED = 2,
} CUstreamCaptureMode;
typedef void (*CUhostFn)(void *user);
typedef int CUjit_option;
typedef int CUlibraryOption;
typedef int CUdriverProcAddressQueryResult;
typedef struct CUlaunchAttribute_st CUlaunchAttribute;
typedef struct ncclComm *ncclComm_t;
typedef struct CUexecAffinityParam_st CUexecAffinityParam;
typedef struct CUctxCreateParams_st CUctxCreateParams;

typedef struct CUlaunchConfig_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

typedef int CUmemorytype;            /* 1 host, 2 device, 3 array, 4 unified */
typedef struct CUarray_st *CUarray;

/* Only the side descriptions (memory type, host pointer, device pointer)
 * and the extent are read; the layouts are cuda.h's. */
typedef struct CUDA_MEMCPY2D_st {
	size_t srcXInBytes, srcY;
	CUmemorytype srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	CUmemorytype dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

typedef struct CUDA_MEMCPY3D_st {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	CUmemorytype srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	void *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	CUmemorytype dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	void *reserved1;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;

/* cuMemcpy3DPeer's descriptor: CUDA_MEMCPY3D's layout, with the two
 * contexts where CUDA_MEMCPY3D has reserved pointers. */
typedef struct CUDA_MEMCPY3D_PEER_st {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	CUmemorytype srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	CUcontext srcContext;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	CUmemorytype dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	CUcontext dstContext;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D_PEER;

/* batch copies (CUDA 12.8): the attributes are passed on, never read */
typedef struct CUmemcpyAttributes_st CUmemcpyAttributes;
typedef struct CUmemLocation_st { int type; int id; } CUmemLocation;
enum { CU_MEMCPY_OPERAND_TYPE_POINTER = 1, CU_MEMCPY_OPERAND_TYPE_ARRAY = 2 };
typedef struct CUmemcpy3DOperand_st {
	int type;                       /* CU_MEMCPY_OPERAND_TYPE_* */
	union {
		struct {
			CUdeviceptr ptr;
			size_t rowLength, layerHeight;
			CUmemLocation locHint;
		} ptr;
		struct {
			CUarray array;
			struct { size_t x, y, z; } offset;
		} array;
	} op;
} CUmemcpy3DOperand;
typedef struct CUDA_MEMCPY3D_BATCH_OP_st {
	CUmemcpy3DOperand src, dst;
	struct { size_t width, height, depth; } extent;   /* in elements */
	int srcAccessOrder;
	unsigned int flags;
} CUDA_MEMCPY3D_BATCH_OP;

/* what cuArray3DGetDescriptor_v2 fills in: an element is NumChannels
 * values of Format */
typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
	size_t Width, Height, Depth;
	int Format;
	unsigned int NumChannels, Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_MEMORYTYPE_HOST 1
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2

#endif
