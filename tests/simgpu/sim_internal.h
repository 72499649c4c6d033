/* sim_internal.h - simgpu's private state: handle structs, the time model
 * (streams as FIFOs with a "busy until" time, fences to wait on) and the
 * configuration knobs. One global mutex guards all of it. */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include "simgpu.h"
#include <pthread.h>
#include <stdint.h>

typedef uint64_t u64;

enum { MAGIC_CTX = 0x5c7c, MAGIC_STREAM, MAGIC_EVENT, MAGIC_MODULE, MAGIC_FUNC,
       MAGIC_GRAPH, MAGIC_EXEC, MAGIC_DEAD_EVENT };

/* how a 0 stream handle is read: legacy default stream, or per-thread (_ptsz/_ptds) */
enum { SIM_LEGACY = 0, SIM_PTDS = 1 };

struct simgpu_stream {
    unsigned magic;
    int id;                 /* unique, never reused: host-func bookkeeping */
    struct simgpu_ctx *ctx;
    unsigned flags;         /* CU_STREAM_NON_BLOCKING */
    int priority;
    int kind;               /* 0 user stream, 1 legacy default, 2 per-thread default */
    pthread_t owner;        /* per-thread default stream: its host thread */
    u64 busy_until;         /* CLOCK_MONOTONIC ns at which queued work ends */
    struct simgpu_graph *capture;   /* being captured into this graph */
    int capture_mode;       /* CU_STREAM_CAPTURE_MODE_* */
    struct simgpu_stream *next;
};

struct simgpu_ctx {
    unsigned magic;
    int is_primary, refs;
    unsigned flags;
    struct simgpu_stream legacy;   /* the legacy default stream, handle 0 */
    struct simgpu_stream *streams; /* user + per-thread default streams */
    u64 retired_busy;              /* busy_until of destroyed streams */
    struct simgpu_ctx *next;
};

struct simgpu_func {
    unsigned magic;
    struct simgpu_module *mod;
    char name[128];
    u64 ns;                 /* simulated duration of one launch */
};

struct simgpu_module {
    unsigned magic;
    int is_library;
    struct simgpu_ctx *ctx; /* NULL for libraries */
    int nfuncs;
    struct simgpu_func *funcs;
};

/* "done" = the clock passed t and no host function queued on stream sid
 * (any stream of ctx when sid < 0) with sequence number <= seq is still pending */
struct sim_fence {
    u64 t, seq;
    int sid;
    struct simgpu_ctx *ctx;
};

struct sim_config {
    u64 launch_ns;          /* SIMGPU_LAUNCH_NS: CPU cost of a launch call */
    u64 copy_latency_ns;    /* SIMGPU_COPY_LATENCY_NS: fixed cost of a copy/memset */
    double link_bytes_per_ns;   /* SIMGPU_BW_GBPS: host<->device bandwidth */
    double dev_bytes_per_ns;    /* SIMGPU_DEV_BW_GBPS: device-local copies, memsets */
    u64 default_kernel_ns;  /* SIMGPU_DEFAULT_KERNEL_NS: kernels listed without a time */
    u64 graph_ns;           /* SIMGPU_GRAPH_NS: one cuGraphLaunch */
    const char *kernel_ns;  /* SIMGPU_KERNEL_NS: "name=ns,name2=ns" overrides */
};
extern struct sim_config sim_cfg;

u64 sim_now(void);
void sim_spin(u64 ns);                      /* burn CPU time (launch cost) */
void sim_lock(void);
void sim_unlock(void);
int sim_inited(void);
CUresult sim_current_ctx(struct simgpu_ctx **out);   /* lock not required */
struct simgpu_ctx *sim_all_ctxs(void);               /* lock held */

/* lock held for everything below */
int sim_new_stream_id(void);
CUresult sim_resolve_stream(CUstream h, int mode, struct simgpu_stream **out);
u64 sim_enqueue(struct simgpu_stream *s, u64 dur_ns, u64 not_before);
struct sim_fence sim_stream_fence(struct simgpu_stream *s);
struct sim_fence sim_ctx_fence(struct simgpu_ctx *ctx);
int sim_fence_done(const struct sim_fence *f);
void sim_fence_wait(const struct sim_fence *f);     /* sleeps, drops the lock meanwhile */
void sim_ctx_drain(struct simgpu_ctx *ctx);         /* wait for all streams of ctx */
void sim_hostfn_enqueue(struct simgpu_stream *s, u64 due, CUhostFn fn, void *user);
void sim_stream_retire(struct simgpu_stream *s);    /* unlink a user stream */
void sim_ctx_events_die(struct simgpu_ctx *c);      /* cuCtxDestroy: its events */

/* generated from variants.tsv by gen_variants.awk */
struct simgpu_variant {
    const char *name;
    int version;
    int flags;              /* 0 plain, 2 per-thread default stream variant */
    const char *symbol;
    void (*fn)(void);
};
extern const struct simgpu_variant simgpu_variants[];
extern const int simgpu_nvariants;

#endif
