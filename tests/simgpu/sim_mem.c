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

/* One side of a copy: its first byte, its row pitch and rows per layer (a
 * linear copy is one row), and what the API says it is (HOST, DEV, ANY). */
struct rect {
    uintptr_t p;
    size_t pitch, rows;
    int side;
};

/* bytes from the first to the last byte of a w x h x d box at r */
static size_t rect_span(const struct rect *r, size_t w, size_t h, size_t d)
{
    return w && h && d ? ((d - 1) * r->rows + (h - 1)) * r->pitch + w : 0;
}

/* Queue a copy of a box of w bytes x h rows x d layers and move the bytes.
 * Blocks until the copy is done when synchronous, or when a host side is
 * pageable (unknown to the registry). */
static CUresult copy_rect(struct rect dst, struct rect src, size_t w, size_t h, size_t d,
                          CUstream hs, int mode, int async)
{
    struct simgpu_stream *s;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    size_t n = w * h * d;
    sim_lock();
    CUresult r = sim_resolve_stream(hs, mode, &s);
    int di = find(dst.p, rect_span(&dst, w, h, d)), si = find(src.p, rect_span(&src, w, h, d));
    if (r == CUDA_SUCCESS && ((dst.side == DEV && di < 0) || (src.side == DEV && si < 0)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r) {
        sim_unlock();
        return r;
    }
    int dhost = di < 0 || g_allocs[di].kind == MEM_PINNED || g_allocs[di].kind == MEM_REGISTERED;
    int shost = si < 0 || g_allocs[si].kind == MEM_PINNED || g_allocs[si].kind == MEM_REGISTERED;
    if (dst.side == DEV)
        dhost = 0;
    if (src.side == DEV)
        shost = 0;
    int pageable = di < 0 || si < 0;
    double bw = dhost || shost ? sim_cfg.link_bytes_per_ns : sim_cfg.dev_bytes_per_ns;
    sim_enqueue(s, sim_cfg.copy_latency_ns + (u64)((double)n / bw), 0);
    struct sim_fence f = sim_stream_fence(s);
    sim_unlock();
    for (size_t z = 0; n && z < d; z++)
        for (size_t y = 0; y < h; y++)
            memmove((void *)(dst.p + (z * dst.rows + y) * dst.pitch),
                    (const void *)(src.p + (z * src.rows + y) * src.pitch), w);
    if (!async || pageable) {
        sim_lock();
        sim_fence_wait(&f);
        sim_unlock();
    }
    return CUDA_SUCCESS;
}

/* a linear copy of n bytes */
static CUresult copy(uintptr_t dst, int dside, uintptr_t src, int sside, size_t n, CUstream h,
                     int mode, int async)
{
    return copy_rect((struct rect){ dst, n, 1, dside }, (struct rect){ src, n, 1, sside }, n, 1,
                     1, h, mode, async);
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

/* ---- CUDA arrays: device memory laid out as rows of Width elements (pitch
 * Width x element size), Height rows a layer (1 for a 1-D array), Depth
 * layers. The linear array copies (AtoH, HtoA, ...) address it as bytes
 * from the start. ---- */

#define MAGIC_ARRAY 0x5caa

struct simgpu_array {
    unsigned magic;
    CUDA_ARRAY3D_DESCRIPTOR desc;
    size_t elem, pitch, rows, bytes;
    uintptr_t data;                 /* a device allocation of the registry */
};

static size_t format_bytes(int format)
{
    static const struct { int format; size_t bytes; } formats[] = {
        { 0x01, 1 }, { 0x02, 2 }, { 0x03, 4 },     /* unsigned 8, 16, 32 */
        { 0x08, 1 }, { 0x09, 2 }, { 0x0a, 4 },     /* signed 8, 16, 32 */
        { 0x10, 2 }, { 0x20, 4 },                  /* half, float */
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].format == format)
            return formats[i].bytes;
    return 0;
}

CUresult cuArray3DCreate_v2(CUarray *pa, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!pa || !d || !d->Width || !format_bytes(d->Format) ||
        (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
        return CUDA_ERROR_INVALID_VALUE;
    struct simgpu_array *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->magic = MAGIC_ARRAY;
    a->desc = *d;
    a->elem = format_bytes(d->Format) * d->NumChannels;
    a->pitch = d->Width * a->elem;
    a->rows = d->Height ? d->Height : 1;
    a->bytes = a->pitch * a->rows * (d->Depth ? d->Depth : 1);
    void *p = NULL;
    CUresult r = mem_alloc(&p, a->bytes, MEM_DEVICE, 0, NULL);
    if (r) {
        free(a);
        return r;
    }
    a->data = (uintptr_t)p;
    *pa = a;
    return CUDA_SUCCESS;
}

CUresult cuArrayCreate_v2(CUarray *pa, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d3 = { d->Width, d->Height, 0, d->Format, d->NumChannels, 0 };
    return cuArray3DCreate_v2(pa, &d3);
}

static int array_ok(const struct simgpu_array *a) { return a && a->magic == MAGIC_ARRAY; }

/* like cuMemFree, waits for the context's work */
CUresult cuArrayDestroy(CUarray a)
{
    if (!array_ok(a))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = mem_free(a->data, 0, 1);
    a->magic = 0;
    free(a);
    return r;
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a)
{
    if (!array_ok(a))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    *d = a->desc;
    return CUDA_SUCCESS;
}

CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *d, CUarray a)
{
    if (!array_ok(a))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    d->Width = a->desc.Width;
    d->Height = a->desc.Height;
    d->Format = a->desc.Format;
    d->NumChannels = a->desc.NumChannels;
    return CUDA_SUCCESS;
}

/* the device address of byte off of array a, n bytes on */
static CUresult array_at(const struct simgpu_array *a, size_t off, size_t n, uintptr_t *p)
{
    if (!array_ok(a))
        return CUDA_ERROR_INVALID_HANDLE;
    if (off > a->bytes || n > a->bytes - off)
        return CUDA_ERROR_INVALID_VALUE;
    *p = a->data + off;
    return CUDA_SUCCESS;
}

/* array copies: an array is device memory; the synchronous ones block, the
 * Async ones block only with pageable host memory */
static CUresult array_copy(uintptr_t dst, CUarray da, size_t doff, int dside, uintptr_t src,
                           CUarray sa, size_t soff, int sside, size_t n, CUstream st, int mode,
                           int async)
{
    CUresult r = CUDA_SUCCESS;
    if (da)
        r = array_at(da, doff, n, &dst);
    if (r == CUDA_SUCCESS && sa)
        r = array_at(sa, soff, n, &src);
    return r ? r : copy(dst, dside, src, sside, n, st, mode, async);
}

CUresult cuMemcpyAtoH_v2(void *d, CUarray s, size_t off, size_t n)
{
    return array_copy(D(d), NULL, 0, HOST, 0, s, off, DEV, n, NULL, SIM_LEGACY, 0);
}
CUresult cuMemcpyAtoH_v2_ptds(void *d, CUarray s, size_t off, size_t n)
{
    return array_copy(D(d), NULL, 0, HOST, 0, s, off, DEV, n, NULL, SIM_PTDS, 0);
}
CUresult cuMemcpyAtoH(void *d, CUarray s, unsigned int off, unsigned int n)
{
    return cuMemcpyAtoH_v2(d, s, off, n);
}

CUresult cuMemcpyHtoA_v2(CUarray d, size_t off, const void *s, size_t n)
{
    return array_copy(0, d, off, DEV, D(s), NULL, 0, HOST, n, NULL, SIM_LEGACY, 0);
}
CUresult cuMemcpyHtoA_v2_ptds(CUarray d, size_t off, const void *s, size_t n)
{
    return array_copy(0, d, off, DEV, D(s), NULL, 0, HOST, n, NULL, SIM_PTDS, 0);
}
CUresult cuMemcpyHtoA(CUarray d, unsigned int off, const void *s, unsigned int n)
{
    return cuMemcpyHtoA_v2(d, off, s, n);
}

CUresult cuMemcpyAtoD_v2(CUdeviceptr d, CUarray s, size_t off, size_t n)
{
    return array_copy(D(d), NULL, 0, DEV, 0, s, off, DEV, n, NULL, SIM_LEGACY, 0);
}
CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr d, CUarray s, size_t off, size_t n)
{
    return array_copy(D(d), NULL, 0, DEV, 0, s, off, DEV, n, NULL, SIM_PTDS, 0);
}
CUresult cuMemcpyAtoD(CUdeviceptr_v1 d, CUarray s, unsigned int off, unsigned int n)
{
    return cuMemcpyAtoD_v2(d, s, off, n);
}

CUresult cuMemcpyDtoA_v2(CUarray d, size_t off, CUdeviceptr s, size_t n)
{
    return array_copy(0, d, off, DEV, D(s), NULL, 0, DEV, n, NULL, SIM_LEGACY, 0);
}
CUresult cuMemcpyDtoA_v2_ptds(CUarray d, size_t off, CUdeviceptr s, size_t n)
{
    return array_copy(0, d, off, DEV, D(s), NULL, 0, DEV, n, NULL, SIM_PTDS, 0);
}
CUresult cuMemcpyDtoA(CUarray d, unsigned int off, CUdeviceptr_v1 s, unsigned int n)
{
    return cuMemcpyDtoA_v2(d, off, s, n);
}

CUresult cuMemcpyAtoA_v2(CUarray d, size_t doff, CUarray s, size_t soff, size_t n)
{
    return array_copy(0, d, doff, DEV, 0, s, soff, DEV, n, NULL, SIM_LEGACY, 0);
}
CUresult cuMemcpyAtoA_v2_ptds(CUarray d, size_t doff, CUarray s, size_t soff, size_t n)
{
    return array_copy(0, d, doff, DEV, 0, s, soff, DEV, n, NULL, SIM_PTDS, 0);
}
CUresult cuMemcpyAtoA(CUarray d, unsigned int doff, CUarray s, unsigned int soff, unsigned int n)
{
    return cuMemcpyAtoA_v2(d, doff, s, soff, n);
}

CUresult cuMemcpyAtoHAsync_v2(void *d, CUarray s, size_t off, size_t n, CUstream st)
{
    return array_copy(D(d), NULL, 0, HOST, 0, s, off, DEV, n, st, SIM_LEGACY, 1);
}
CUresult cuMemcpyAtoHAsync_v2_ptsz(void *d, CUarray s, size_t off, size_t n, CUstream st)
{
    return array_copy(D(d), NULL, 0, HOST, 0, s, off, DEV, n, st, SIM_PTDS, 1);
}
CUresult cuMemcpyAtoHAsync(void *d, CUarray s, unsigned int off, unsigned int n, CUstream st)
{
    return cuMemcpyAtoHAsync_v2(d, s, off, n, st);
}

CUresult cuMemcpyHtoAAsync_v2(CUarray d, size_t off, const void *s, size_t n, CUstream st)
{
    return array_copy(0, d, off, DEV, D(s), NULL, 0, HOST, n, st, SIM_LEGACY, 1);
}
CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray d, size_t off, const void *s, size_t n, CUstream st)
{
    return array_copy(0, d, off, DEV, D(s), NULL, 0, HOST, n, st, SIM_PTDS, 1);
}
CUresult cuMemcpyHtoAAsync(CUarray d, unsigned int off, const void *s, unsigned int n,
                           CUstream st)
{
    return cuMemcpyHtoAAsync_v2(d, off, s, n, st);
}

/* ---- 3-D peer copies (one device: contexts are not checked) ---- */

/* The side of a 3-D copy at (x bytes, y, z) with the given pitch and
 * rows a layer (0: the copy's width and height); an array brings its own. */
static CUresult side_rect(int type, const void *host, CUdeviceptr dev, CUarray arr, size_t x,
                          size_t y, size_t z, size_t pitch, size_t rows, size_t w, size_t h,
                          struct rect *out)
{
    uintptr_t base;
    int side;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        base = D(host), side = HOST;
        break;
    case CU_MEMORYTYPE_DEVICE:
        base = D(dev), side = DEV;
        break;
    case CU_MEMORYTYPE_UNIFIED:
        base = D(dev), side = ANY;
        break;
    case CU_MEMORYTYPE_ARRAY:
        if (!array_ok(arr))
            return CUDA_ERROR_INVALID_HANDLE;
        base = arr->data, side = DEV, pitch = arr->pitch, rows = arr->rows;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!pitch)
        pitch = w;
    if (!rows)
        rows = h;
    if (pitch < w || rows < h)
        return CUDA_ERROR_INVALID_VALUE;
    *out = (struct rect){ base + x + (z * rows + y) * pitch, pitch, rows, side };
    return CUDA_SUCCESS;
}

static CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER *c, CUstream st, int mode, int async)
{
    struct rect d, s;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = side_rect(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray,
                           c->dstXInBytes, c->dstY, c->dstZ, c->dstPitch, c->dstHeight,
                           c->WidthInBytes, c->Height, &d);
    if (r == CUDA_SUCCESS)
        r = side_rect(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes,
                      c->srcY, c->srcZ, c->srcPitch, c->srcHeight, c->WidthInBytes, c->Height,
                      &s);
    return r ? r : copy_rect(d, s, c->WidthInBytes, c->Height, c->Depth, st, mode, async);
}

CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *c)
{
    return copy_3d_peer(c, NULL, SIM_LEGACY, 0);
}
CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *c)
{
    return copy_3d_peer(c, NULL, SIM_PTDS, 0);
}
CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *c, CUstream s)
{
    return copy_3d_peer(c, s, SIM_LEGACY, 1);
}
CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *c, CUstream s)
{
    return copy_3d_peer(c, s, SIM_PTDS, 1);
}

/* ---- batch copies: each copy of the batch is queued in turn on the stream
 * (the legacy default stream is refused, as by the driver); a copy with
 * pageable host memory blocks until it is done. failIdx: the copy that
 * failed, or SIZE_MAX. ---- */

static int legacy_null(CUstream s, int mode)
{
    return s == CU_STREAM_LEGACY || (s == NULL && mode == SIM_LEGACY);
}

static CUresult batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                      CUmemcpyAttributes *attrs, size_t *idxs, size_t nattrs, size_t *fail,
                      CUstream st, int mode)
{
    if (fail)
        *fail = SIZE_MAX;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!dsts || !srcs || !sizes || !count || !attrs || !idxs || !nattrs || nattrs > count ||
        idxs[0] != 0 || legacy_null(st, mode))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < nattrs; k++)
        if ((k && idxs[k] <= idxs[k - 1]) || idxs[k] >= count || attrs[k].srcAccessOrder < 1 ||
            attrs[k].srcAccessOrder > 3)
            return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        CUresult r = copy(D(dsts[i]), ANY, D(srcs[i]), ANY, sizes[i], st, mode, 1);
        if (r) {
            if (fail)
                *fail = i;
            return r;
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                            CUmemcpyAttributes *attrs, size_t *idxs, size_t nattrs,
                            size_t *fail, CUstream s)
{
    return batch(dsts, srcs, sizes, count, attrs, idxs, nattrs, fail, s, SIM_LEGACY);
}
CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                 size_t count, CUmemcpyAttributes *attrs, size_t *idxs,
                                 size_t nattrs, size_t *fail, CUstream s)
{
    return batch(dsts, srcs, sizes, count, attrs, idxs, nattrs, fail, s, SIM_PTDS);
}
CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                               CUmemcpyAttributes *attrs, size_t *idxs, size_t nattrs,
                               CUstream s)
{
    return batch(dsts, srcs, sizes, count, attrs, idxs, nattrs, NULL, s, SIM_LEGACY);
}
CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                    size_t count, CUmemcpyAttributes *attrs, size_t *idxs,
                                    size_t nattrs, CUstream s)
{
    return batch(dsts, srcs, sizes, count, attrs, idxs, nattrs, NULL, s, SIM_PTDS);
}

/* An operand of a 3-D batch copy of w x h elements of elem bytes: a pointer
 * (rows of rowLength elements, layerHeight rows a layer; 0: packed) or an
 * array at an offset in elements. */
static CUresult operand_rect(const CUmemcpy3DOperand *o, size_t w, size_t h, size_t elem,
                             struct rect *out)
{
    if (o->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
        size_t row = o->op.ptr.rowLength ? o->op.ptr.rowLength : w;
        size_t rows = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : h;
        if (row < w || rows < h)
            return CUDA_ERROR_INVALID_VALUE;
        *out = (struct rect){ D(o->op.ptr.ptr), row * elem, rows, ANY };
        return CUDA_SUCCESS;
    }
    if (o->type != CU_MEMCPY_OPERAND_TYPE_ARRAY)
        return CUDA_ERROR_INVALID_VALUE;
    const struct simgpu_array *a = o->op.array.array;
    if (!array_ok(a))
        return CUDA_ERROR_INVALID_HANDLE;
    size_t x = o->op.array.offset.x, y = o->op.array.offset.y, z = o->op.array.offset.z;
    *out = (struct rect){ a->data + x * a->elem + (z * a->rows + y) * a->pitch, a->pitch,
                          a->rows, DEV };
    return CUDA_SUCCESS;
}

static CUresult batch_3d(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail,
                         unsigned long long flags, CUstream st, int mode)
{
    if (fail)
        *fail = SIZE_MAX;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!n || !ops || flags || legacy_null(st, mode))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        size_t w = op->extent.width, h = op->extent.height, d = op->extent.depth;
        const struct simgpu_array *sa = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ?
                                            op->src.op.array.array : NULL;
        const struct simgpu_array *da = op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ?
                                            op->dst.op.array.array : NULL;
        CUresult r = CUDA_SUCCESS;
        struct rect dr, sr;
        if ((sa && !array_ok(sa)) || (da && !array_ok(da)))
            r = CUDA_ERROR_INVALID_HANDLE;
        else if (!w || !h || !d || op->srcAccessOrder < 1 || op->srcAccessOrder > 3 ||
                 (sa && da && sa->elem != da->elem))
            r = CUDA_ERROR_INVALID_VALUE;
        size_t elem = sa ? sa->elem : da ? da->elem : 1;
        if (r == CUDA_SUCCESS)
            r = operand_rect(&op->dst, w, h, elem, &dr);
        if (r == CUDA_SUCCESS)
            r = operand_rect(&op->src, w, h, elem, &sr);
        if (r == CUDA_SUCCESS)
            r = copy_rect(dr, sr, w * elem, h, d, st, mode, 1);
        if (r) {
            if (fail)
                *fail = i;
            return r;
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuMemcpy3DBatchAsync(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail,
                              unsigned long long flags, CUstream s)
{
    return batch_3d(n, ops, fail, flags, s, SIM_LEGACY);
}
CUresult cuMemcpy3DBatchAsync_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail,
                                   unsigned long long flags, CUstream s)
{
    return batch_3d(n, ops, fail, flags, s, SIM_PTDS);
}
CUresult cuMemcpy3DBatchAsync_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                                 CUstream s)
{
    return batch_3d(n, ops, NULL, flags, s, SIM_LEGACY);
}
CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops,
                                      unsigned long long flags, CUstream s)
{
    return batch_3d(n, ops, NULL, flags, s, SIM_PTDS);
}
