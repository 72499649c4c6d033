/* sim_exec.c - simgpu's modules and libraries (a text image "kernel NAME NS" per
 * line gives each kernel's simulated duration), kernel / host-function / graph
 * launches, and the stream and event entry points. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim_internal.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct simgpu_event {
    unsigned magic;
    unsigned flags;
    int recorded;
    struct sim_fence done;
    struct simgpu_ctx *ctx;     /* its context: it dies with it */
    struct simgpu_event *next;  /* all events, for that */
};
static struct simgpu_event *g_events;

/* a graph made by stream capture: its work and nodes (launches, event
 * records); one made by cuGraphCreate has none and takes SIMGPU_GRAPH_NS */
struct simgpu_graph { unsigned magic; u64 ns; size_t nodes; };
struct simgpu_graph_exec { unsigned magic; u64 ns; };

/* Stream capture: work queued to a capturing stream is added to its graph,
 * not run. While a global-mode capture is under way, a query or a sync of
 * any thread (the driver's "potentially unsafe" calls) is refused with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture, as
 * the driver does. */
static int g_global_captures, g_capture_invalid;

static int capture_forbids(void)
{
    if (!g_global_captures)
        return 0;
    g_capture_invalid = 1;
    return 1;
}

/* ---- module images ---- */

/* SIMGPU_KERNEL_NS="a=100,b=2000" overrides the image's duration for a kernel */
static u64 kernel_override(const char *name, u64 dflt)
{
    const char *p = sim_cfg.kernel_ns;
    size_t n = strlen(name);
    while (p && *p) {
        const char *eq = strchr(p, '=');
        if (!eq)
            break;
        if ((size_t)(eq - p) == n && strncmp(p, name, n) == 0)
            return strtoull(eq + 1, NULL, 10);
        p = strchr(eq, ',');
        p = p ? p + 1 : NULL;
    }
    return dflt;
}

static CUresult module_parse(const char *text, int is_library, struct simgpu_module **out)
{
    struct simgpu_module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = MAGIC_MODULE;
    m->is_library = is_library;
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char buf[256], name[128];
        unsigned long long ns;
        if (len < sizeof buf) {
            memcpy(buf, line, len);
            buf[len] = 0;
            int got = sscanf(buf, " kernel %127s %llu", name, &ns);
            if (got >= 1) {
                struct simgpu_func *f =
                    realloc(m->funcs, sizeof *f * (size_t)(m->nfuncs + 1));
                if (!f) {
                    free(m->funcs);
                    free(m);
                    return CUDA_ERROR_OUT_OF_MEMORY;
                }
                m->funcs = f;
                f = &m->funcs[m->nfuncs++];
                memset(f, 0, sizeof *f);
                f->magic = MAGIC_FUNC;
                f->mod = m;
                snprintf(f->name, sizeof f->name, "%s", name);
                f->ns = kernel_override(name, got == 2 ? ns : sim_cfg.default_kernel_ns);
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    if (!m->nfuncs) {
        free(m);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    for (int i = 0; i < m->nfuncs; i++)   /* realloc may have moved them */
        m->funcs[i].mod = m;
    *out = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    struct simgpu_ctx *c;
    CUresult r = sim_current_ctx(&c);
    if (r)
        return r;
    if (!mod || !image)
        return CUDA_ERROR_INVALID_VALUE;
    r = module_parse(image, 0, mod);
    if (r == CUDA_SUCCESS)
        (*mod)->ctx = c;
    return r;
}

CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n, void *options,
                            void **values)
{
    (void)n;
    (void)options;
    (void)values;
    return cuModuleLoadData(mod, image);
}

CUresult cuModuleLoad(CUmodule *mod, const char *fname)
{
    struct simgpu_ctx *c;
    CUresult r = sim_current_ctx(&c);
    if (r)
        return r;
    if (!mod || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *fp = fopen(fname, "rb");
    if (!fp)
        return CUDA_ERROR_FILE_NOT_FOUND;
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap) {
            char *t = realloc(text, cap = cap * 2 + 4096 + 1);
            if (!t) {
                free(text);
                fclose(fp);
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            text = t;
        }
        got = fread(text + len, 1, 4096, fp);
        len += got;
    } while (got);
    fclose(fp);
    text[len] = 0;
    r = cuModuleLoadData(mod, text);
    free(text);
    return r;
}

static CUresult module_find(struct simgpu_module *m, int is_library, const char *name,
                            struct simgpu_func **out)
{
    if (!m || m->magic != MAGIC_MODULE || m->is_library != is_library)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < m->nfuncs; i++)
        if (strcmp(m->funcs[i].name, name) == 0) {
            *out = &m->funcs[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
    return module_find(mod, 0, name, f);
}

/* unloading waits for outstanding work: the module's context, or every
 * context for a (context-independent) library */
static CUresult module_unload(struct simgpu_module *m, int is_library)
{
    if (!m || m->magic != MAGIC_MODULE || m->is_library != is_library)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    if (m->ctx) {
        if (m->ctx->magic == MAGIC_CTX)
            sim_ctx_drain(m->ctx);
    } else {
        for (struct simgpu_ctx *c = sim_all_ctxs(); c; c = c->next)
            sim_ctx_drain(c);
    }
    m->magic = 0;
    for (int i = 0; i < m->nfuncs; i++)
        m->funcs[i].magic = 0;
    sim_unlock();
    free(m->funcs);
    free(m);
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule mod) { return module_unload(mod, 0); }

CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, void *jitOpts, void **jitVals,
                           unsigned int nJit, void *libOpts, void **libVals, unsigned int nLib)
{
    (void)jitOpts, (void)jitVals, (void)nJit, (void)libOpts, (void)libVals, (void)nLib;
    if (!sim_inited())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!lib || !code)
        return CUDA_ERROR_INVALID_VALUE;
    return module_parse(code, 1, lib);
}

CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    return module_find(lib, 1, name, k);
}

CUresult cuLibraryUnload(CUlibrary lib) { return module_unload(lib, 1); }

static int func_ok(const struct simgpu_func *f) { return f && f->magic == MAGIC_FUNC; }

CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    if (!func_ok(k))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!f)
        return CUDA_ERROR_INVALID_VALUE;
    *f = k;
    return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction f)
{
    if (!func_ok(f))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    *name = f->name;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel k) { return cuFuncGetName(name, k); }

/* ---- launches: return at once (after the launch CPU cost), work is queued ---- */

static CUresult enqueue_work(CUstream h, int mode, u64 ns)
{
    struct simgpu_stream *s;
    sim_spin(sim_cfg.launch_ns);
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS && s->capture) {
        s->capture->ns += ns;
        s->capture->nodes++;
    } else if (r == CUDA_SUCCESS) {
        sim_enqueue(s, ns, 0);
    }
    sim_unlock();
    return r;
}

static CUresult launch(CUfunction f, CUstream s, int mode)
{
    if (!func_ok(f))
        return CUDA_ERROR_INVALID_HANDLE;
    return enqueue_work(s, mode, f->ns);
}

#define UNUSED_LAUNCH_ARGS (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, \
                           (void)shmem, (void)params

CUresult cuLaunchKernel(SIMGPU_LAUNCH_ARGS, void **extra)
{
    UNUSED_LAUNCH_ARGS, (void)extra;
    return launch(f, s, SIM_LEGACY);
}

CUresult cuLaunchKernel_ptsz(SIMGPU_LAUNCH_ARGS, void **extra)
{
    UNUSED_LAUNCH_ARGS, (void)extra;
    return launch(f, s, SIM_PTDS);
}

CUresult cuLaunchCooperativeKernel(SIMGPU_LAUNCH_ARGS)
{
    UNUSED_LAUNCH_ARGS;
    return launch(f, s, SIM_LEGACY);
}

CUresult cuLaunchCooperativeKernel_ptsz(SIMGPU_LAUNCH_ARGS)
{
    UNUSED_LAUNCH_ARGS;
    return launch(f, s, SIM_PTDS);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    (void)params, (void)extra;
    return cfg ? launch(f, cfg->hStream, SIM_LEGACY) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
                               void **extra)
{
    (void)params, (void)extra;
    return cfg ? launch(f, cfg->hStream, SIM_PTDS) : CUDA_ERROR_INVALID_VALUE;
}

/* the callback runs on simgpu's worker thread once the stream reaches it; it
 * takes no simulated GPU time (work queued after it is not delayed by its run
 * time), but synchronize/query calls wait until it has returned */
static CUresult host_func(CUstream h, int mode, CUhostFn fn, void *user)
{
    struct simgpu_stream *s;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS)
        sim_hostfn_enqueue(s, sim_enqueue(s, 0, 0), fn, user);
    sim_unlock();
    return r;
}

CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *user)
{
    return host_func(s, SIM_LEGACY, fn, user);
}

CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *user)
{
    return host_func(s, SIM_PTDS, fn, user);
}

/* ---- graphs: an instantiated graph is one block of SIMGPU_GRAPH_NS ---- */

CUresult cuGraphCreate(CUgraph *pg, unsigned int flags)
{
    if (!pg || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct simgpu_graph *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->magic = MAGIC_GRAPH;
    *pg = g;
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph g)
{
    if (!g || g->magic != MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    g->magic = 0;
    free(g);
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *pe, CUgraph g, unsigned long long flags)
{
    (void)flags;
    if (!pe || !g || g->magic != MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    struct simgpu_graph_exec *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = MAGIC_EXEC;
    e->ns = g->ns ? g->ns : sim_cfg.graph_ns;
    *pe = e;
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiate(CUgraphExec *pe, CUgraph g, CUgraphNode *errNode, char *log,
                            size_t logSize)
{
    if (errNode)
        *errNode = NULL;
    if (log && logSize)
        log[0] = 0;
    return cuGraphInstantiateWithFlags(pe, g, 0);
}

CUresult cuGraphInstantiate_v2(CUgraphExec *pe, CUgraph g, CUgraphNode *errNode, char *log,
                               size_t logSize)
{
    return cuGraphInstantiate(pe, g, errNode, log, logSize);
}

CUresult cuGraphExecDestroy(CUgraphExec e)
{
    if (!e || e->magic != MAGIC_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    e->magic = 0;
    free(e);
    return CUDA_SUCCESS;
}

static CUresult graph_launch(CUgraphExec e, CUstream s, int mode)
{
    if (!e || e->magic != MAGIC_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    return enqueue_work(s, mode, e->ns);
}

CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { return graph_launch(e, s, SIM_LEGACY); }
CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) { return graph_launch(e, s, SIM_PTDS); }

/* ---- streams ---- */

CUresult cuStreamCreateWithPriority(CUstream *ps, unsigned int flags, int priority)
{
    struct simgpu_ctx *c;
    CUresult r = sim_current_ctx(&c);
    if (r)
        return r;
    if (!ps || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct simgpu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = MAGIC_STREAM;
    s->ctx = c;
    s->flags = flags;
    s->priority = priority;
    sim_lock();
    s->id = sim_new_stream_id();
    s->next = c->streams;
    c->streams = s;
    sim_unlock();
    *ps = s;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *ps, unsigned int flags)
{
    return cuStreamCreateWithPriority(ps, flags, 0);
}

/* like the real driver, destroying a busy stream returns at once; its queued
 * work still counts for context-wide waits */
CUresult cuStreamDestroy_v2(CUstream s)
{
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || s->magic != MAGIC_STREAM ||
        s->kind != 0)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    sim_stream_retire(s);
    sim_unlock();
    free(s);
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream s) { return cuStreamDestroy_v2(s); }

static CUresult stream_sync(CUstream h, int mode, int query_only)
{
    struct simgpu_stream *s;
    sim_lock();
    if (capture_forbids()) {
        sim_unlock();
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS) {
        struct sim_fence f = sim_stream_fence(s);
        if (!query_only)
            sim_fence_wait(&f);
        else if (!sim_fence_done(&f))
            r = CUDA_ERROR_NOT_READY;
    }
    sim_unlock();
    return r;
}

CUresult cuStreamSynchronize(CUstream s) { return stream_sync(s, SIM_LEGACY, 0); }
CUresult cuStreamSynchronize_ptsz(CUstream s) { return stream_sync(s, SIM_PTDS, 0); }
CUresult cuStreamQuery(CUstream s) { return stream_sync(s, SIM_LEGACY, 1); }
CUresult cuStreamQuery_ptsz(CUstream s) { return stream_sync(s, SIM_PTDS, 1); }

static int event_ok(const struct simgpu_event *e)
{
    if (e && e->magic == MAGIC_DEAD_EVENT) {
        fprintf(stderr, "simgpu: event %p used after its context was destroyed\n", (void *)e);
        abort();
    }
    return e && e->magic == MAGIC_EVENT;
}

/* later work on the stream starts no earlier than the event's completion */
static CUresult stream_wait_event(CUstream h, int mode, CUevent e)
{
    struct simgpu_stream *s;
    if (!event_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS && e->recorded)
        sim_enqueue(s, 0, e->done.t);
    sim_unlock();
    return r;
}

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    (void)flags;
    return stream_wait_event(s, SIM_LEGACY, e);
}

CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int flags)
{
    (void)flags;
    return stream_wait_event(s, SIM_PTDS, e);
}

/* ---- events ---- */

CUresult cuEventCreate(CUevent *pe, unsigned int flags)
{
    struct simgpu_ctx *c;
    CUresult r = sim_current_ctx(&c);
    if (r)
        return r;
    if (!pe)
        return CUDA_ERROR_INVALID_VALUE;
    struct simgpu_event *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = MAGIC_EVENT;
    e->flags = flags;
    e->ctx = c;
    sim_lock();
    e->next = g_events;
    g_events = e;
    sim_unlock();
    *pe = e;
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent e)
{
    if (!event_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    for (struct simgpu_event **p = &g_events; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    sim_unlock();
    e->magic = 0;
    free(e);
    return CUDA_SUCCESS;
}

/* cuCtxDestroy (lock held): the context's events die with it; using one
 * afterwards is a use after free in the driver, so here it aborts */
void sim_ctx_events_die(struct simgpu_ctx *c)
{
    for (struct simgpu_event **p = &g_events; *p;) {
        struct simgpu_event *e = *p;
        if (e->ctx == c) {
            e->magic = MAGIC_DEAD_EVENT;    /* kept, to be caught */
            *p = e->next;
        } else {
            p = &e->next;
        }
    }
}

CUresult cuEventDestroy(CUevent e) { return cuEventDestroy_v2(e); }

/* the event completes when the stream's work queued so far is done */
static CUresult event_record(CUevent e, CUstream h, int mode)
{
    struct simgpu_stream *s;
    if (!event_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS && s->capture) {
        s->capture->nodes++;            /* a node of the graph, not a record */
    } else if (r == CUDA_SUCCESS) {
        sim_enqueue(s, 0, 0);
        e->done = sim_stream_fence(s);
        e->recorded = 1;
    }
    sim_unlock();
    return r;
}

CUresult cuEventRecord(CUevent e, CUstream s) { return event_record(e, s, SIM_LEGACY); }
CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return event_record(e, s, SIM_PTDS); }

CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{
    (void)flags;
    return event_record(e, s, SIM_LEGACY);
}

CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int flags)
{
    (void)flags;
    return event_record(e, s, SIM_PTDS);
}

CUresult cuEventQuery(CUevent e)
{
    if (!event_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    CUresult r = capture_forbids() ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
               : !e->recorded || sim_fence_done(&e->done) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    sim_unlock();
    return r;
}

CUresult cuEventSynchronize(CUevent e)
{
    if (!event_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    if (capture_forbids()) {
        sim_unlock();
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (e->recorded) {
        struct sim_fence f = e->done;
        sim_fence_wait(&f);
    }
    sim_unlock();
    return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    if (!event_ok(a) || !event_ok(b) || !a->recorded || !b->recorded ||
        ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    sim_lock();
    int done = sim_fence_done(&a->done) && sim_fence_done(&b->done);
    sim_unlock();
    if (!done)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)(((double)b->done.t - (double)a->done.t) / 1e6);
    return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    return cuEventElapsedTime_v2(ms, a, b);
}

/* ---- stream capture ---- */

static CUresult begin_capture(CUstream h, int mode, int cmode)
{
    struct simgpu_stream *s;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS && (s->kind == 1 || s->capture))
        r = CUDA_ERROR_ILLEGAL_STATE;   /* the legacy stream; already capturing */
    struct simgpu_graph *g = r == CUDA_SUCCESS ? calloc(1, sizeof *g) : NULL;
    if (r == CUDA_SUCCESS && !g)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        g->magic = MAGIC_GRAPH;
        s->capture = g;
        s->capture_mode = cmode;
        if (cmode == CU_STREAM_CAPTURE_MODE_GLOBAL && g_global_captures++ == 0)
            g_capture_invalid = 0;
    }
    sim_unlock();
    return r;
}

CUresult cuStreamBeginCapture(CUstream s) { return begin_capture(s, SIM_LEGACY, 0); }
CUresult cuStreamBeginCapture_ptsz(CUstream s) { return begin_capture(s, SIM_PTDS, 0); }
CUresult cuStreamBeginCapture_v2(CUstream s, int mode) { return begin_capture(s, SIM_LEGACY, mode); }
CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, int mode) { return begin_capture(s, SIM_PTDS, mode); }

static CUresult end_capture(CUstream h, int mode, CUgraph *pg)
{
    struct simgpu_stream *s;
    if (!pg)
        return CUDA_ERROR_INVALID_VALUE;
    sim_lock();
    CUresult r = sim_resolve_stream(h, mode, &s);
    if (r == CUDA_SUCCESS && !s->capture)
        r = CUDA_ERROR_ILLEGAL_STATE;
    if (r == CUDA_SUCCESS) {
        int invalid = 0;
        if (s->capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL) {
            invalid = g_capture_invalid;
            g_global_captures--;
        }
        if (invalid) {
            free(s->capture);
            *pg = NULL;
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else {
            *pg = s->capture;
        }
        s->capture = NULL;
    }
    sim_unlock();
    return r;
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *pg) { return end_capture(s, SIM_LEGACY, pg); }
CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *pg) { return end_capture(s, SIM_PTDS, pg); }

/* the node count only (nodes NULL), as a program asks it first */
CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
    if (!g || g->magic != MAGIC_GRAPH || !n || nodes)
        return CUDA_ERROR_INVALID_VALUE;
    *n = g->nodes;
    return CUDA_SUCCESS;
}
