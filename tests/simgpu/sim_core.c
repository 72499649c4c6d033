/* sim_core.c - simgpu's clock, lock, stream scheduling (legacy / per-thread
 * default stream rules), fences, the host-function worker thread, and the
 * init / device / context entry points. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sim_config sim_cfg = {
    .launch_ns = 2000,
    .copy_latency_ns = 5000,
    .link_bytes_per_ns = 25.0,   /* 25 GB/s, PCIe 4 x16-ish */
    .dev_bytes_per_ns = 1000.0,  /* 1 TB/s */
    .default_kernel_ns = 10000,
    .graph_ns = 100000,
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv;          /* CLOCK_MONOTONIC; broadcast when a host func ends */
static pthread_cond_t g_worker_cv;   /* CLOCK_MONOTONIC; new host func queued */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_inited;
static int g_next_stream_id = 1;
static u64 g_seq;                    /* host-function sequence numbers */
static struct simgpu_ctx g_primary;
static struct simgpu_ctx *g_ctxs;    /* all live contexts */

static _Thread_local struct simgpu_ctx *tls_stack[32];
static _Thread_local int tls_depth;

u64 sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

void sim_spin(u64 ns)
{
    u64 end = sim_now() + ns;
    while (sim_now() < end)
        ;
}

void sim_lock(void) { pthread_mutex_lock(&g_mu); }
void sim_unlock(void) { pthread_mutex_unlock(&g_mu); }
int sim_inited(void) { return __atomic_load_n(&g_inited, __ATOMIC_ACQUIRE); }
struct simgpu_ctx *sim_all_ctxs(void) { return g_ctxs; }
int sim_new_stream_id(void) { return g_next_stream_id++; }

static u64 env_u64(const char *name, u64 dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static double env_double(const char *name, double dflt)
{
    const char *v = getenv(name);
    double d = v && *v ? strtod(v, NULL) : 0;
    return d > 0 ? d : dflt;
}

static void ctx_init(struct simgpu_ctx *c, int primary, unsigned flags)
{
    memset(c, 0, sizeof *c);
    c->magic = MAGIC_CTX;
    c->is_primary = primary;
    c->flags = flags;
    c->legacy.magic = MAGIC_STREAM;
    c->legacy.id = sim_new_stream_id();
    c->legacy.ctx = c;
    c->legacy.kind = 1;
    c->next = g_ctxs;
    g_ctxs = c;
}

/* The device's descriptor, as a real driver holds /dev/nvidia*: a call
 * from a thread whose table of descriptors lacks it fails (a real driver
 * fails inside, or aborts), as from a thread that unshared its table. */
static int g_devfd = -1;

static void init_once(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cv, &a);
    pthread_cond_init(&g_worker_cv, &a);
    pthread_condattr_destroy(&a);
    sim_cfg.launch_ns = env_u64("SIMGPU_LAUNCH_NS", sim_cfg.launch_ns);
    sim_cfg.copy_latency_ns = env_u64("SIMGPU_COPY_LATENCY_NS", sim_cfg.copy_latency_ns);
    sim_cfg.link_bytes_per_ns = env_double("SIMGPU_BW_GBPS", sim_cfg.link_bytes_per_ns);
    sim_cfg.dev_bytes_per_ns = env_double("SIMGPU_DEV_BW_GBPS", sim_cfg.dev_bytes_per_ns);
    sim_cfg.default_kernel_ns = env_u64("SIMGPU_DEFAULT_KERNEL_NS", sim_cfg.default_kernel_ns);
    sim_cfg.graph_ns = env_u64("SIMGPU_GRAPH_NS", sim_cfg.graph_ns);
    sim_cfg.kernel_ns = getenv("SIMGPU_KERNEL_NS");
    g_devfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    sim_lock();
    ctx_init(&g_primary, 1, 0);
    sim_unlock();
    __atomic_store_n(&g_inited, 1, __ATOMIC_RELEASE);
}

/* ---- scheduling ---- */

static int is_blocking(const struct simgpu_stream *s)
{
    return !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* earliest time new work on s may start: FIFO order, plus the legacy default
 * stream rule (it waits for all blocking streams, and they wait for it) */
static u64 ready_time(const struct simgpu_stream *s)
{
    u64 t = s->busy_until;
    const struct simgpu_ctx *c = s->ctx;
    if (s->kind == 1) {
        if (c->retired_busy > t)
            t = c->retired_busy;
        for (const struct simgpu_stream *o = c->streams; o; o = o->next)
            if (is_blocking(o) && o->busy_until > t)
                t = o->busy_until;
    } else if (is_blocking(s) && c->legacy.busy_until > t) {
        t = c->legacy.busy_until;
    }
    return t;
}

u64 sim_enqueue(struct simgpu_stream *s, u64 dur_ns, u64 not_before)
{
    u64 start = ready_time(s), now = sim_now();
    if (start < now)
        start = now;
    if (start < not_before)
        start = not_before;
    s->busy_until = start + dur_ns;
    return s->busy_until;
}

CUresult sim_resolve_stream(CUstream h, int mode, struct simgpu_stream **out)
{
    if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD) {
        if (h->magic != MAGIC_STREAM)
            return CUDA_ERROR_INVALID_HANDLE;
        *out = h;
        return CUDA_SUCCESS;
    }
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (g_devfd >= 0 && fcntl(g_devfd, F_GETFD) < 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    struct simgpu_ctx *c = tls_depth ? tls_stack[tls_depth - 1] : NULL;
    if (!c || c->magic != MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (h == CU_STREAM_LEGACY || (!h && mode == SIM_LEGACY)) {
        *out = &c->legacy;
        return CUDA_SUCCESS;
    }
    pthread_t me = pthread_self();
    for (struct simgpu_stream *s = c->streams; s; s = s->next)
        if (s->kind == 2 && pthread_equal(s->owner, me)) {
            *out = s;
            return CUDA_SUCCESS;
        }
    struct simgpu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = MAGIC_STREAM;
    s->id = sim_new_stream_id();
    s->ctx = c;
    s->kind = 2;
    s->owner = me;
    s->next = c->streams;
    c->streams = s;
    *out = s;
    return CUDA_SUCCESS;
}

void sim_stream_retire(struct simgpu_stream *s)
{
    struct simgpu_ctx *c = s->ctx;
    if (s->busy_until > c->retired_busy)
        c->retired_busy = s->busy_until;
    for (struct simgpu_stream **p = &c->streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    s->magic = 0;
}

/* ---- host functions: one worker thread runs them in due-time order ---- */

struct hostfn {
    u64 due, seq;
    int sid;
    struct simgpu_ctx *ctx;
    CUhostFn fn;
    void *user;
    struct hostfn *next;
};
static struct hostfn *g_hostfns;     /* sorted by due, FIFO among equals */
static struct hostfn *g_running;
static int g_worker_started;

static void abs_timespec(u64 t, struct timespec *ts)
{
    ts->tv_sec = (time_t)(t / 1000000000ull);
    ts->tv_nsec = (long)(t % 1000000000ull);
}

static void *worker_main(void *arg)
{
    (void)arg;
    sim_lock();
    for (;;) {
        struct hostfn *h = g_hostfns;
        if (!h) {
            pthread_cond_wait(&g_worker_cv, &g_mu);
            continue;
        }
        if (sim_now() < h->due) {
            struct timespec ts;
            abs_timespec(h->due, &ts);
            pthread_cond_timedwait(&g_worker_cv, &g_mu, &ts);
            continue;
        }
        g_hostfns = h->next;
        g_running = h;
        sim_unlock();
        h->fn(h->user);
        sim_lock();
        g_running = NULL;
        free(h);
        pthread_cond_broadcast(&g_cv);
    }
    return NULL;
}

void sim_hostfn_enqueue(struct simgpu_stream *s, u64 due, CUhostFn fn, void *user)
{
    struct hostfn *h = calloc(1, sizeof *h);
    if (!h)
        abort();
    *h = (struct hostfn){ due, ++g_seq, s->id, s->ctx, fn, user, NULL };
    struct hostfn **p = &g_hostfns;
    while (*p && (*p)->due <= due)
        p = &(*p)->next;
    h->next = *p;
    *p = h;
    if (!g_worker_started) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, worker_main, NULL) != 0)
            abort();
        pthread_attr_destroy(&a);
        g_worker_started = 1;
    }
    pthread_cond_signal(&g_worker_cv);
}

static int hostfn_blocks(const struct hostfn *h, const struct sim_fence *f)
{
    return h && h->seq <= f->seq && (f->sid < 0 ? h->ctx == f->ctx : h->sid == f->sid);
}

/* ---- fences ---- */

struct sim_fence sim_stream_fence(struct simgpu_stream *s)
{
    return (struct sim_fence){ ready_time(s), g_seq, s->id, s->ctx };
}

struct sim_fence sim_ctx_fence(struct simgpu_ctx *c)
{
    struct sim_fence f = { ready_time(&c->legacy), g_seq, -1, c };
    for (struct simgpu_stream *s = c->streams; s; s = s->next)
        if (s->busy_until > f.t)
            f.t = s->busy_until;
    return f;
}

static int hostfn_pending(const struct sim_fence *f)
{
    if (hostfn_blocks(g_running, f))
        return 1;
    for (struct hostfn *h = g_hostfns; h; h = h->next)
        if (hostfn_blocks(h, f))
            return 1;
    return 0;
}

int sim_fence_done(const struct sim_fence *f)
{
    return sim_now() >= f->t && !hostfn_pending(f);
}

void sim_fence_wait(const struct sim_fence *f)
{
    for (;;) {
        u64 now = sim_now();
        if (now < f->t) {
            struct timespec ts;
            abs_timespec(f->t, &ts);
            pthread_cond_timedwait(&g_cv, &g_mu, &ts);
        } else if (hostfn_pending(f)) {
            pthread_cond_wait(&g_cv, &g_mu);
        } else {
            return;
        }
    }
}

void sim_ctx_drain(struct simgpu_ctx *c)
{
    struct sim_fence f = sim_ctx_fence(c);
    sim_fence_wait(&f);
}

/* ---- init and device ---- */

static CUresult check_dev(CUdevice dev)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuInit(unsigned int flags)
{
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&g_once, init_once);
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r)
        return r;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    strncpy(name, "feedtrace simulated GPU", (size_t)len - 1);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}

#define SIM_TOTAL_MEM (16ull << 30)

/* attribute number -> value (numbers from CUdevice_attribute); unlisted ones are 0 */
static const int attr_table[][2] = {
    {1, 1024}, {2, 1024}, {3, 1024}, {4, 64},            /* threads/block, block dims */
    {5, 2147483647}, {6, 65535}, {7, 65535},             /* grid dims */
    {8, 49152}, {9, 65536}, {10, 32}, {11, 2147483647},  /* smem/block, const, warp, pitch */
    {12, 65536}, {13, 1500000}, {14, 512}, {15, 1},      /* regs/block, clock kHz, align */
    {16, 108}, {17, 0}, {18, 0}, {19, 1}, {20, 0},       /* SMs, timeout, integrated, map */
    {31, 1}, {33, 1}, {34, 0}, {36, 1215000}, {37, 5120}, /* concurrent kernels, PCI bus */
    {38, 41943040}, {39, 2048}, {40, 2}, {41, 1},        /* L2, threads/SM, engines, UVA */
    {75, 8}, {76, 0}, {78, 1}, {81, 167936}, {82, 65536}, /* cc 8.0, priorities, SM res. */
    {83, 1}, {84, 0}, {88, 1}, {89, 1}, {95, 1}, {97, 166912}, /* managed, coop, optin */
    {106, 32}, {115, 1},                                 /* blocks/SM, memory pools */
};
#define SIM_ATTR_MAX 148 /* CU_DEVICE_ATTRIBUTE_MAX in CUDA 13.0 */

CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r)
        return r;
    if (!value || attrib <= 0 || attrib >= SIM_ATTR_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    *value = 0;
    for (size_t i = 0; i < sizeof attr_table / sizeof attr_table[0]; i++)
        if (attr_table[i][0] == attrib)
            *value = attr_table[i][1];
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r)
        return r;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = SIM_TOTAL_MEM;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    size_t b = 0;
    CUresult r = cuDeviceTotalMem_v2(&b, dev);
    if (r == CUDA_SUCCESS)
        *bytes = b > UINT_MAX ? UINT_MAX : (unsigned int)b;
    return r;
}

/* ---- contexts ---- */

CUresult sim_current_ctx(struct simgpu_ctx **out)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (g_devfd >= 0 && fcntl(g_devfd, F_GETFD) < 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    struct simgpu_ctx *c = tls_depth ? tls_stack[tls_depth - 1] : NULL;
    if (!c || c->magic != MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    sim_lock();
    g_primary.refs++;
    sim_unlock();
    *pctx = &g_primary;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r)
        return r;
    sim_lock();
    if (g_primary.refs <= 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--g_primary.refs == 0)
        sim_ctx_drain(&g_primary);
    sim_unlock();
    return r;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CUresult r = check_dev(dev);
    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (tls_depth == (int)(sizeof tls_stack / sizeof tls_stack[0]))
        return CUDA_ERROR_INVALID_CONTEXT;
    struct simgpu_ctx *c = malloc(sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim_lock();
    ctx_init(c, 0, flags);
    sim_unlock();
    tls_stack[tls_depth++] = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, void *affinity, int n, unsigned int flags, CUdevice dev)
{
    (void)affinity;
    (void)n;
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, void *params, unsigned int flags, CUdevice dev)
{
    (void)params;
    return ctx_create(pctx, flags, dev);
}

/* A destroyed context is drained, unlinked and marked dead; its struct is kept
 * (leaked) so that stale handles fail cleanly instead of reading freed memory. */
CUresult cuCtxDestroy_v2(CUcontext c)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!c || c->magic != MAGIC_CTX || c->is_primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    sim_lock();
    sim_ctx_drain(c);
    sim_ctx_events_die(c);
    while (c->streams) {
        struct simgpu_stream *s = c->streams;
        sim_stream_retire(s);
        free(s);
    }
    for (struct simgpu_ctx **p = &g_ctxs; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    c->magic = 0;
    sim_unlock();
    for (int i = 0; i < tls_depth; i++)
        if (tls_stack[i] == c) {
            memmove(&tls_stack[i], &tls_stack[i + 1], sizeof(c) * (size_t)(tls_depth - i - 1));
            tls_depth--;
            i--;
        }
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy(CUcontext c) { return cuCtxDestroy_v2(c); }

CUresult cuCtxSetCurrent(CUcontext c)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (c && c->magic != MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!c) {
        if (tls_depth)
            tls_depth--;
    } else if (tls_depth) {
        tls_stack[tls_depth - 1] = c;
    } else {
        tls_stack[tls_depth++] = c;
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = tls_depth ? tls_stack[tls_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!c || c->magic != MAGIC_CTX ||
        tls_depth == (int)(sizeof tls_stack / sizeof tls_stack[0]))
        return CUDA_ERROR_INVALID_CONTEXT;
    tls_stack[tls_depth++] = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext c) { return cuCtxPushCurrent_v2(c); }

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!tls_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct simgpu_ctx *c = tls_stack[--tls_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext *pctx) { return cuCtxPopCurrent_v2(pctx); }

CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext c)
{
    struct simgpu_ctx *cur;
    CUresult r = c ? CUDA_SUCCESS : sim_current_ctx(&cur);
    if (r)
        return r;
    if (c && c->magic != MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = 0;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev) { return cuCtxGetDevice_v2(dev, NULL); }

CUresult cuCtxSynchronize_v2(CUcontext c)
{
    CUresult r = c ? CUDA_SUCCESS : sim_current_ctx(&c);
    if (r)
        return r;
    if (c->magic != MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    sim_lock();
    sim_ctx_drain(c);
    sim_unlock();
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) { return cuCtxSynchronize_v2(NULL); }
