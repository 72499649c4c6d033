/* sim_mem.c - simgpu's memory: "device" memory is host memory (CUdeviceptr =
 * its address) tracked in a registry with its kind (device, pinned, registered,
 * managed); copies and memsets really move bytes and take latency + bytes/bw. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim_internal.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { MEM_DEVICE, MEM_PINNED, MEM_REGISTERED, MEM_MANAGED };

struct alloc {
    uintptr_t base;
    size_t size;
    int kind;
    int low32;              /* mmap'ed below 4 GiB for the 32-bit pointer ABI */
    struct simgpu_ctx *ctx;
};
static struct alloc *g_allocs;
static int g_nallocs, g_cap;

#define CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED 712
#define CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED 713

/* ---- registry (lock held) ---- */

static int find(uintptr_t p, size_t n)
{
    for (int i = 0; i < g_nallocs; i++) {
        const struct alloc *a = &g_allocs[i];
        if (p >= a->base && p - a->base < a->size && n <= a->size - (p - a->base))
            return i;
    }
    return -1;
}

static int find_base(uintptr_t p, int host)
{
    for (int i = 0; i < g_nallocs; i++) {
        int is_host = g_allocs[i].kind == MEM_PINNED || g_allocs[i].kind == MEM_REGISTERED;
        if (g_allocs[i].base == p && is_host == host)
            return i;
    }
    return -1;
}

static int add(struct alloc a)
{
    if (g_nallocs == g_cap) {
        int cap = g_cap ? g_cap * 2 : 64;
        struct alloc *n = realloc(g_allocs, sizeof *n * (size_t)cap);
        if (!n)
            return -1;
        g_allocs = n;
        g_cap = cap;
    }
    g_allocs[g_nallocs++] = a;
    return 0;
}

static void release(const struct alloc *a)
{
    if (a->low32)
        munmap((void *)a->base, a->size);
    else if (a->kind != MEM_REGISTERED)
        free((void *)a->base);
}

/* ---- allocation ---- */

static void *alloc_low32(size_t size)
{
#ifdef MAP_32BIT
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
#else
    (void)size;
    return NULL;
#endif
}

static CUresult mem_alloc(void **out, size_t size, int kind, int low32, struct simgpu_ctx *c)
{
    if (!c) {
        CUresult r = sim_current_ctx(&c);
        if (r)
            return r;
    }
    if (!out || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t align = kind == MEM_DEVICE ? 256 : 4096;
    size_t rounded = (size + align - 1) / align * align;
    void *p = low32 ? alloc_low32(rounded) : aligned_alloc(align, rounded);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim_lock();
    int bad = add((struct alloc){ (uintptr_t)p, rounded, kind, low32, c });
    sim_unlock();
    if (bad) {
        release(&(struct alloc){ (uintptr_t)p, rounded, kind, low32, c });
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = p;
    return CUDA_SUCCESS;
}

/* frees wait until every stream of the allocation's context has drained */
static CUresult mem_free(uintptr_t p, int host, int drain)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!p)
        return CUDA_SUCCESS;
    sim_lock();
    int i = find_base(p, host);
    if (i >= 0 && drain && g_allocs[i].ctx->magic == MAGIC_CTX) {
        sim_ctx_drain(g_allocs[i].ctx);   /* drops the lock: look again after */
        i = find_base(p, host);
    }
    struct alloc a = i >= 0 ? g_allocs[i] : (struct alloc){ 0 };
    if (i >= 0)
        g_allocs[i] = g_allocs[--g_nallocs];
    sim_unlock();
    if (i < 0)
        return host ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : CUDA_ERROR_INVALID_VALUE;
    release(&a);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    void *p = NULL;
    CUresult r = mem_alloc(&p, size, MEM_DEVICE, 0, NULL);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return dptr ? r : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int size)
{
    void *p = NULL;
    CUresult r = mem_alloc(&p, size, MEM_DEVICE, 1, NULL);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)(uintptr_t)p;
    return dptr ? r : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                            unsigned int elem)
{
    if (!pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    *pitch = (width + 511) / 512 * 512;
    return cuMemAlloc_v2(dptr, *pitch * height);
}

CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pitch, unsigned int width,
                         unsigned int height, unsigned int elem)
{
    if (!pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    *pitch = (width + 511) / 512 * 512;
    return cuMemAlloc(dptr, *pitch * height);
}

CUresult cuMemFree_v2(CUdeviceptr dptr) { return mem_free((uintptr_t)dptr, 0, 1); }
CUresult cuMemFree(CUdeviceptr_v1 dptr) { return mem_free((uintptr_t)dptr, 0, 1); }

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
    void *p = NULL;
    (void)flags;
    CUresult r = mem_alloc(&p, size, MEM_MANAGED, 0, NULL);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return dptr ? r : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
    (void)flags;
    return mem_alloc(pp, size, MEM_PINNED, 0, NULL);
}

CUresult cuMemAllocHost_v2(void **pp, size_t size) { return cuMemHostAlloc(pp, size, 0); }
CUresult cuMemAllocHost(void **pp, unsigned int size) { return cuMemHostAlloc(pp, size, 0); }
CUresult cuMemFreeHost(void *p) { return mem_free((uintptr_t)p, 1, 1); }

CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    struct simgpu_ctx *c;
    CUresult r = sim_current_ctx(&c);
    (void)flags;
    if (r)
        return r;
    if (!p || !size)
        return CUDA_ERROR_INVALID_VALUE;
    sim_lock();
    if (find((uintptr_t)p, 1) >= 0 || find((uintptr_t)p + size - 1, 1) >= 0)
        r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (add((struct alloc){ (uintptr_t)p, size, MEM_REGISTERED, 0, c }))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    sim_unlock();
    return r;
}

CUresult cuMemHostRegister(void *p, size_t size, unsigned int flags)
{
    return cuMemHostRegister_v2(p, size, flags);
}

CUresult cuMemHostUnregister(void *p)
{
    sim_lock();
    int i = find_base((uintptr_t)p, 1);
    int registered = i >= 0 && g_allocs[i].kind == MEM_REGISTERED;
    sim_unlock();
    if (!registered)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    return mem_free((uintptr_t)p, 1, 1);
}

/* stream-ordered allocation: the memory exists at once, the stream gets an
 * empty operation (the model has no pool reuse to order) */
static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUstream h, int mode)
{
    struct simgpu_stream *s;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    struct simgpu_ctx *c = r ? NULL : s->ctx;
    if (r == CUDA_SUCCESS)
        sim_enqueue(s, 0, 0);
    sim_unlock();
    void *p = NULL;
    if (r == CUDA_SUCCESS && (r = mem_alloc(&p, size, MEM_DEVICE, 0, c)) == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return dptr ? r : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocAsync(CUdeviceptr *d, size_t n, CUstream s)
{
    return alloc_async(d, n, s, SIM_LEGACY);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *d, size_t n, CUstream s)
{
    return alloc_async(d, n, s, SIM_PTDS);
}

static CUresult free_async(CUdeviceptr dptr, CUstream h, int mode)
{
    struct simgpu_stream *s;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS)
        sim_enqueue(s, 0, 0);
    sim_unlock();
    return r ? r : mem_free((uintptr_t)dptr, 0, 0);
}

CUresult cuMemFreeAsync(CUdeviceptr d, CUstream s) { return free_async(d, s, SIM_LEGACY); }
CUresult cuMemFreeAsync_ptsz(CUdeviceptr d, CUstream s) { return free_async(d, s, SIM_PTDS); }

CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr ptr)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    sim_lock();
    int i = find((uintptr_t)ptr, 1);
    struct alloc a = i >= 0 ? g_allocs[i] : (struct alloc){ 0 };
    sim_unlock();
    if (i < 0)
        return CUDA_ERROR_INVALID_VALUE;  /* pageable or unknown memory */
    int on_host = a.kind == MEM_PINNED || a.kind == MEM_REGISTERED;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = a.ctx;
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:   /* managed reports DEVICE, as the driver does */
        *(unsigned int *)data = on_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = ptr;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a.kind == MEM_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(unsigned int *)data = a.kind == MEM_MANAGED;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = 0;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = a.base;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = a.size;
        break;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return CUDA_SUCCESS;
}

/* ---- copies ---- */

enum side { HOST, DEV, ANY };   /* what the API says a pointer is (ANY: cuMemcpy/UVA) */

/* Queue a copy of n bytes and move them. Blocks until the copy is done when
 * synchronous, or when a host side is pageable (unknown to the registry). */
static CUresult copy(uintptr_t dst, int dside, uintptr_t src, int sside, size_t n, CUstream h,
                     int mode, int async)
{
    struct simgpu_stream *s;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    int di = find(dst, n), si = find(src, n);
    if (r == CUDA_SUCCESS && ((dside == DEV && di < 0) || (sside == DEV && si < 0)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r) {
        sim_unlock();
        return r;
    }
    int dhost = di < 0 || g_allocs[di].kind == MEM_PINNED || g_allocs[di].kind == MEM_REGISTERED;
    int shost = si < 0 || g_allocs[si].kind == MEM_PINNED || g_allocs[si].kind == MEM_REGISTERED;
    if (dside == DEV)
        dhost = 0;
    if (sside == DEV)
        shost = 0;
    int pageable = di < 0 || si < 0;
    double bw = dhost || shost ? sim_cfg.link_bytes_per_ns : sim_cfg.dev_bytes_per_ns;
    sim_enqueue(s, sim_cfg.copy_latency_ns + (u64)((double)n / bw), 0);
    struct sim_fence f = sim_stream_fence(s);
    sim_unlock();
    if (n)
        memmove((void *)dst, (const void *)src, n);
    if (!async || pageable) {
        sim_lock();
        sim_fence_wait(&f);
        sim_unlock();
    }
    return CUDA_SUCCESS;
}

#define D(p) ((uintptr_t)(p))

CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    return copy(D(d), ANY, D(s), ANY, n, NULL, SIM_LEGACY, 0);
}

CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    return copy(D(d), ANY, D(s), ANY, n, NULL, SIM_PTDS, 0);
}

CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    return copy(D(d), ANY, D(s), ANY, n, st, SIM_LEGACY, 1);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    return copy(D(d), ANY, D(s), ANY, n, st, SIM_PTDS, 1);
}

/* one device: a peer copy is a device-to-device copy */
CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
    (void)dc, (void)sc;
    return copy(D(d), DEV, D(s), DEV, n, NULL, SIM_LEGACY, 0);
}

CUresult cuMemcpyPeer_ptds(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
    (void)dc, (void)sc;
    return copy(D(d), DEV, D(s), DEV, n, NULL, SIM_PTDS, 0);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n,
                           CUstream st)
{
    (void)dc, (void)sc;
    return copy(D(d), DEV, D(s), DEV, n, st, SIM_LEGACY, 1);
}

CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc,
                                size_t n, CUstream st)
{
    (void)dc, (void)sc;
    return copy(D(d), DEV, D(s), DEV, n, st, SIM_PTDS, 1);
}

/* one macro per direction: sync legacy, sync per-thread, async legacy, async per-thread */
#define COPY_FAMILY(NAME, DT, DS, ST, SS)                                                      \
    CUresult NAME##_v2(DT d, ST s, size_t n)                                                   \
    {                                                                                          \
        return copy(D(d), DS, D(s), SS, n, NULL, SIM_LEGACY, 0);                               \
    }                                                                                          \
    CUresult NAME##_v2_ptds(DT d, ST s, size_t n)                                              \
    {                                                                                          \
        return copy(D(d), DS, D(s), SS, n, NULL, SIM_PTDS, 0);                                 \
    }                                                                                          \
    CUresult NAME##Async_v2(DT d, ST s, size_t n, CUstream st)                                 \
    {                                                                                          \
        return copy(D(d), DS, D(s), SS, n, st, SIM_LEGACY, 1);                                 \
    }                                                                                          \
    CUresult NAME##Async_v2_ptsz(DT d, ST s, size_t n, CUstream st)                            \
    {                                                                                          \
        return copy(D(d), DS, D(s), SS, n, st, SIM_PTDS, 1);                                   \
    }

COPY_FAMILY(cuMemcpyHtoD, CUdeviceptr, DEV, const void *, HOST)
COPY_FAMILY(cuMemcpyDtoH, void *, HOST, CUdeviceptr, DEV)
COPY_FAMILY(cuMemcpyDtoD, CUdeviceptr, DEV, CUdeviceptr, DEV)

/* the pre-3.2 ABI: 32-bit device pointers and sizes */
CUresult cuMemcpyHtoD(CUdeviceptr_v1 d, const void *s, unsigned int n)
{
    return cuMemcpyHtoD_v2(d, s, n);
}

CUresult cuMemcpyDtoH(void *d, CUdeviceptr_v1 s, unsigned int n)
{
    return cuMemcpyDtoH_v2(d, s, n);
}

CUresult cuMemcpyDtoD(CUdeviceptr_v1 d, CUdeviceptr_v1 s, unsigned int n)
{
    return cuMemcpyDtoD_v2(d, s, n);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 d, const void *s, unsigned int n, CUstream st)
{
    return cuMemcpyHtoDAsync_v2(d, s, n, st);
}

CUresult cuMemcpyDtoHAsync(void *d, CUdeviceptr_v1 s, unsigned int n, CUstream st)
{
    return cuMemcpyDtoHAsync_v2(d, s, n, st);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 d, CUdeviceptr_v1 s, unsigned int n, CUstream st)
{
    return cuMemcpyDtoDAsync_v2(d, s, n, st);
}

/* ---- memsets: device-bandwidth work; the synchronous forms block ---- */

static CUresult memset_n(CUdeviceptr dst, unsigned int v, size_t elem, size_t n, CUstream h,
                         int mode, int async)
{
    struct simgpu_stream *s;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dst % elem)
        return CUDA_ERROR_INVALID_VALUE;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS && find((uintptr_t)dst, n * elem) < 0)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r) {
        sim_unlock();
        return r;
    }
    double ns = (double)(n * elem) / sim_cfg.dev_bytes_per_ns;
    sim_enqueue(s, sim_cfg.copy_latency_ns + (u64)ns, 0);
    struct sim_fence f = sim_stream_fence(s);
    sim_unlock();
    for (size_t i = 0; i < n; i++) {
        void *p = (void *)(uintptr_t)(dst + i * elem);
        if (elem == 1)
            *(unsigned char *)p = (unsigned char)v;
        else if (elem == 2)
            *(unsigned short *)p = (unsigned short)v;
        else
            *(unsigned int *)p = v;
    }
    if (!async) {
        sim_lock();
        sim_fence_wait(&f);
        sim_unlock();
    }
    return CUDA_SUCCESS;
}

#define MEMSET_FAMILY(BITS, T, ELEM)                                                           \
    CUresult cuMemsetD##BITS(CUdeviceptr_v1 d, T v, unsigned int n)                            \
    {                                                                                          \
        return memset_n(d, v, ELEM, n, NULL, SIM_LEGACY, 0);                                   \
    }                                                                                          \
    CUresult cuMemsetD##BITS##_v2(CUdeviceptr d, T v, size_t n)                                \
    {                                                                                          \
        return memset_n(d, v, ELEM, n, NULL, SIM_LEGACY, 0);                                   \
    }                                                                                          \
    CUresult cuMemsetD##BITS##_v2_ptds(CUdeviceptr d, T v, size_t n)                           \
    {                                                                                          \
        return memset_n(d, v, ELEM, n, NULL, SIM_PTDS, 0);                                     \
    }                                                                                          \
    CUresult cuMemsetD##BITS##Async(CUdeviceptr d, T v, size_t n, CUstream s)                  \
    {                                                                                          \
        return memset_n(d, v, ELEM, n, s, SIM_LEGACY, 1);                                      \
    }                                                                                          \
    CUresult cuMemsetD##BITS##Async_ptsz(CUdeviceptr d, T v, size_t n, CUstream s)             \
    {                                                                                          \
        return memset_n(d, v, ELEM, n, s, SIM_PTDS, 1);                                        \
    }

MEMSET_FAMILY(8, unsigned char, 1)
MEMSET_FAMILY(16, unsigned short, 2)
MEMSET_FAMILY(32, unsigned int, 4)
