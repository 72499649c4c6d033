/*
 * gpu_time.c: the GPU's own time, measured without CUPTI. After selected
 * submissions (the first after the stream was seen idle, then at most one
 * per stream per FEEDTRACE_GPU_MS; before a stream sync that has unsampled
 * work; before the thread blocks in a wait with its default stream's work
 * unsampled, at most one per interval) the submitting thread records a timing event of ours on the
 * submission's stream; a poller thread of ours polls those events and
 * turns each completed one into host time against a reference event of
 * ours; the flusher writes them as FT_CHUNK_GPU samples
 * (libfeedtrace/format/format.h).
 *
 * The poller, not the flusher, makes our driver calls: the driver works
 * through its descriptors of /dev/nvidia*, and the flusher's table of
 * descriptors holds the trace file alone (libfeedtrace/output.c), so a
 * driver call there fails inside the driver (a real driver aborted the
 * process in cuStreamCreate). The poller shares the program's table. It
 * is started when the first context is seen, sleeps GPU_POLL_NS between
 * polls, and hands finished samples to the flusher through a small staged
 * buffer (a spin lock between these two threads of ours only).
 *
 * Events: one pool per context, made by the poller with the context
 * current on its own thread (never cuCtxSetCurrent on a program thread);
 * a program thread only finds its current context's pool and takes a free
 * event of it (compare-and-swap, no lock, no malloc). A context's pool is
 * asked for when the context is made or retained (cuCtxCreate,
 * cuDevicePrimaryCtxRetain), or else at its first sample, which is then
 * counted lost; a pool with no free event: lost too, never a wait. The
 * driver's functions are looked up by the poller as well (dlopen with
 * RTLD_NOLOAD: no loader lock on a program thread).
 *
 * Stream capture: an event recorded on a capturing stream would become a
 * node of the program's graph, and any query during a global-mode capture
 * invalidates it. While any capture is under way in the process no sample
 * is taken and no event is queried: a capture's begin waits until no
 * driver call of ours is in flight (one call's time at most; both sides
 * announce themselves first, seq_cst, so neither misses the other).
 * A context destroyed with events pending: its pool is dropped (the
 * events died with it) after the poller is out of it, the same way.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "gpu_time.h"
#include "../libfeedtrace/config.h"
#include "format.h"
#include "../libfeedtrace/internal.h"

#define POOLS 16
#define POOL_EVENTS 512
#define ANCHOR_NS 1000000000ull        /* re-anchor every second: drift */
#define ANCHOR_SPREAD_NS 50000u        /* a reference recorded within this */
#define ANCHOR_WAIT_NS 50000000u       /* a reference not done in 50 ms: none */
#define CU_EVENT_DEFAULT 0
#define CU_STREAM_NON_BLOCKING 1
#define CUDA_ERROR_NOT_READY 600
#define GPU_POLL_NS 10000000L          /* the poller's sleep between polls */

/* the driver's functions (the poller finds them) */
static CUresult (*d_ctx_get)(CUcontext *);
static CUresult (*d_ctx_set)(CUcontext);
static CUresult (*d_ctx_dev)(CUdevice *);
static CUresult (*d_ev_create)(CUevent *, unsigned);
static CUresult (*d_ev_record)(CUevent, CUstream);
static CUresult (*d_ev_query)(CUevent);
static CUresult (*d_elapsed)(float *, CUevent, CUevent);
static CUresult (*d_stream_create)(CUstream *, unsigned);
static _Atomic int driver;             /* 0 unknown, 1 wanted, 2 found, 3 none (or exit began) */

enum { EV_FREE, EV_TAKEN, EV_RECORDED };
struct ev_slot {
	CUevent ev;
	_Atomic int state;
	uint16_t why;
	int32_t tid;
	uint64_t stream, ticks;
	uint64_t submits;              /* the stream's submissions at the record */
};

enum { POOL_EMPTY, POOL_WANTED, POOL_READY, POOL_FAILED };
struct pool {
	_Atomic uint64_t ctx;          /* 0: slot free */
	_Atomic int state;
	_Atomic int poller_in;        /* the poller is using its events */
	CUdevice dev;
	CUstream ref_stream;           /* ours, non-blocking, otherwise idle */
	CUevent ref;
	uint64_t ref_ticks, ref_mono;
	_Atomic unsigned hint;
	struct ev_slot ev[POOL_EVENTS];
};
static struct pool pools[POOLS];

struct ft_gpu_stream ft_gpu_streams[FT_GPU_STREAMS];
static _Atomic uint64_t interval;      /* ticks per FEEDTRACE_GPU_MS, 0 unknown */
static _Atomic int captures;          /* stream captures under way */
static _Atomic int in_driver;         /* our driver calls in flight */
static _Atomic uint64_t lost_exhausted, lost_capture, lost_pending, lost_ctx_gone, lost_errors;
static uint64_t losses_written[5];

/* Finished samples, from the poller to the flusher (ft_gpu_poll) */
static atomic_flag staged_lock = ATOMIC_FLAG_INIT;
static unsigned char staged[256 * sizeof(struct ft_gpu_sample)];
static size_t nstaged;
static _Atomic int poller_started;
static _Atomic int final_poll;          /* 1: exit asks for a last poll; 2: done */

static struct ft_gpu_stream *stream_slot(uint64_t key)
{
	uint32_t h = ft_gpu_hash(key);
	for (uint32_t probe = 0; probe < 64; probe++) {
		struct ft_gpu_stream *s = &ft_gpu_streams[(h + probe) & (FT_GPU_STREAMS - 1)];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (k == key)
			return s;
		if (k == 0) {
			uint64_t expect = 0;
			if (atomic_compare_exchange_strong(&s->key, &expect, key) || expect == key) {
				return s;
			}
		}
	}
	return NULL;
}

static struct pool *pool_of(uint64_t ctx)
{
	for (int i = 0; i < POOLS; i++)
		if (atomic_load_explicit(&pools[i].ctx, memory_order_acquire) == ctx)
			return &pools[i];
	return NULL;
}

static void poller_start(void);

/* A pool for ctx, asked of the poller (a free place taken: no lock). */
static void pool_want(uint64_t ctx)
{
	for (int i = 0; i < POOLS; i++) {
		uint64_t none = 0;
		if (atomic_compare_exchange_strong(&pools[i].ctx, &none, ctx)) {
			atomic_store(&pools[i].state, POOL_WANTED);
			poller_start();
			return;
		}
	}
}

/* Our driver calls begin here: 0 while a capture is under way. */
static int driver_enter(void)
{
	atomic_fetch_add(&in_driver, 1);
	if (atomic_load(&captures) == 0)
		return 1;
	atomic_fetch_sub(&in_driver, 1);
	return 0;
}

static void driver_leave(void)
{
	atomic_fetch_sub(&in_driver, 1);
}

/* The sample itself, on the submitting thread (its driver calls marked as
 * the wrappers' are: hooks below them record nothing). */
static void take_sample(struct ft_thread *t, struct ft_gpu_stream *st, uint64_t stream, uint16_t why,
			uint64_t at)
{
	int d = atomic_load_explicit(&driver, memory_order_acquire);
	if (d == 3)
		return;                 /* no driver functions of ours: nothing to count */
	if (d != 2) {
		int none = 0;
		if (atomic_compare_exchange_strong(&driver, &none, 1))
			poller_start();
		atomic_fetch_add_explicit(&lost_pending, 1, memory_order_relaxed);
		return;
	}
	if (!driver_enter()) {
		atomic_fetch_add_explicit(&lost_capture, 1, memory_order_relaxed);
		return;
	}
	FT_BUSY_WALK(t);
	CUcontext ctx = NULL;
	if (d_ctx_get(&ctx) != CUDA_SUCCESS || !ctx) {
		atomic_fetch_add_explicit(&lost_errors, 1, memory_order_relaxed);
		goto out;
	}
	struct pool *p = pool_of((uint64_t)(uintptr_t)ctx);
	if (!p || atomic_load_explicit(&p->state, memory_order_acquire) != POOL_READY) {
		if (!p)
			pool_want((uint64_t)(uintptr_t)ctx);
		/* not made yet, or its making failed (the driver refused) */
		atomic_fetch_add_explicit(p && atomic_load(&p->state) == POOL_FAILED ? &lost_errors
											: &lost_pending,
					  1, memory_order_relaxed);
		goto out;
	}
	unsigned h = atomic_fetch_add_explicit(&p->hint, 1, memory_order_relaxed);
	struct ev_slot *e = NULL;
	for (unsigned i = 0; i < POOL_EVENTS; i++) {
		struct ev_slot *c = &p->ev[(h + i) % POOL_EVENTS];
		int free_ = EV_FREE;
		if (atomic_load_explicit(&c->state, memory_order_relaxed) == EV_FREE &&
		    atomic_compare_exchange_strong(&c->state, &free_, EV_TAKEN)) {
			e = c;
			break;
		}
	}
	if (!e) {
		atomic_fetch_add_explicit(&lost_exhausted, 1, memory_order_relaxed);
		goto out;
	}
	uint64_t now = at ? at : ft_now();
	if (d_ev_record(e->ev, (CUstream)(uintptr_t)stream) != CUDA_SUCCESS) {
		atomic_store(&e->state, EV_FREE);
		atomic_fetch_add_explicit(&lost_errors, 1, memory_order_relaxed);
		goto out;
	}
	e->why = why;
	e->tid = t->tid;
	e->stream = stream;
	e->ticks = now;
	e->submits = atomic_load_explicit(&st->submits, memory_order_relaxed);
	atomic_store_explicit(&e->state, EV_RECORDED, memory_order_release);
	atomic_store_explicit(&st->sampled, e->submits, memory_order_relaxed);
out:
	t->busy = 0;
	driver_leave();
}

static uint64_t interval_ticks(void)
{
	uint64_t iv = atomic_load_explicit(&interval, memory_order_relaxed);
	return iv ? iv : (uint64_t)ft_cfg.gpu_ms * 1000000u;   /* 1 tick a ns until known */
}

__thread struct ft_gpu_last ft_gpu_last FT_TLS = { ~0ull, NULL };
static struct ft_gpu_stream never_due = { .due = UINT64_MAX };

void ft_gpu_submitted_slow(struct ft_thread *t, uint64_t stream, uint64_t t0)
{
	struct ft_gpu_stream *st = ft_cfg.gpu_ms ? stream_slot(ft_gpu_key(stream, t->tid))
						 : &never_due;
	if (ft_unlikely(!st))
		return;
	ft_gpu_last.stream = stream;
	ft_gpu_last.st = st;
	if (st == &never_due)
		return;
	atomic_fetch_add_explicit(&st->submits, 1, memory_order_relaxed);
	uint64_t due = atomic_load_explicit(&st->due, memory_order_relaxed);
	if (t0 < due)
		return;                 /* a stream past its place in the table */
	/* the next one an interval on, whether or not this sample is taken:
	 * a context whose pool is not made yet does not pay every launch */
	atomic_store_explicit(&st->due, t0 + interval_ticks(), memory_order_relaxed);
	take_sample(t, st, stream, due == 0 ? FT_GPU_WHY_IDLE : FT_GPU_WHY_INTERVAL, t0);
}

void ft_gpu_submitted_call(struct ft_thread *t, uint64_t stream, uint64_t t0)
{
	ft_gpu_submitted(t, stream, t0);
}

void ft_gpu_before_sync(struct ft_thread *t, uint64_t stream)
{
	if (!ft_cfg.gpu_ms)
		return;
	struct ft_gpu_stream *st = stream_slot(ft_gpu_key(stream, t->tid));
	if (st && atomic_load_explicit(&st->submits, memory_order_relaxed) !=
		  atomic_load_explicit(&st->sampled, memory_order_relaxed))
		take_sample(t, st, stream, FT_GPU_WHY_SYNC, 0);
}

/* Called from the condition and semaphore waits only: those are not
 * async-signal-safe, so no signal handler makes them while the thread it
 * interrupted is inside the driver (the multiplexed waits and reads are,
 * and take no sample). Only on the default streams (legacy, per-thread): their handles never
 * dangle, while a stream the program made may have been destroyed since
 * the thread's last submission to it (cuStreamDestroy is not wrapped).
 * At most one such sample per stream per interval. */
void ft_gpu_before_wait_slow(struct ft_thread *t)
{
	uint64_t stream = ft_gpu_last.stream;
	struct ft_gpu_stream *st = ft_gpu_last.st;
	if (stream > 2 || st == &never_due)
		return;
	uint64_t now = ft_now();
	if (now < atomic_load_explicit(&st->wait_due, memory_order_relaxed))
		return;
	atomic_store_explicit(&st->wait_due, now + interval_ticks(), memory_order_relaxed);
	int e = errno;                  /* the driver's calls may set it */
	take_sample(t, st, stream, FT_GPU_WHY_WAIT, now);
	errno = e;
}

void ft_gpu_synced(struct ft_thread *t, uint64_t stream, CUresult r)
{
	if (!ft_cfg.gpu_ms || r != CUDA_SUCCESS)
		return;
	struct ft_gpu_stream *st = stream_slot(ft_gpu_key(stream, t->tid));
	if (st)
		atomic_store_explicit(&st->due, 0, memory_order_relaxed);
}

void ft_gpu_synced_all(CUresult r)
{
	if (r != CUDA_SUCCESS || !ft_cfg.gpu_ms)
		return;
	for (int i = 0; i < FT_GPU_STREAMS; i++)      /* every stream drained */
		if (atomic_load_explicit(&ft_gpu_streams[i].key, memory_order_relaxed))
			atomic_store_explicit(&ft_gpu_streams[i].due, 0, memory_order_relaxed);
}

void ft_gpu_capture_begin(void)
{
	atomic_fetch_add(&captures, 1);
	while (atomic_load(&in_driver))
		;                      /* one driver call of ours, at most */
}

void ft_gpu_capture_begun(CUresult r)
{
	if (r != CUDA_SUCCESS)
		atomic_fetch_sub(&captures, 1);
}

void ft_gpu_capture_end(CUresult r)
{
	/* ended, or ended invalidated (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	 * other errors (not capturing, wrong thread) end nothing */
	if (r != CUDA_SUCCESS && r != 901)
		return;
	int c = atomic_load(&captures);
	while (c > 0 && !atomic_compare_exchange_weak(&captures, &c, c - 1))
		;
}

/* Drops pool p: the poller is out of it first; pending events count lost. */
static void pool_drop(struct pool *p)
{
	atomic_store(&p->state, POOL_FAILED);
	while (atomic_load(&p->poller_in))
		;                      /* one driver call of the poller's, at most */
	for (int i = 0; i < POOL_EVENTS; i++) {
		if (atomic_load(&p->ev[i].state) == EV_RECORDED)
			atomic_fetch_add(&lost_ctx_gone, 1);
		atomic_store(&p->ev[i].state, EV_FREE);
		p->ev[i].ev = NULL;
	}
	p->ref = NULL;
	p->ref_stream = NULL;
	p->ref_ticks = 0;
	atomic_store(&p->state, POOL_EMPTY);
	atomic_store(&p->ctx, 0);
}

void ft_gpu_ctx_new(CUresult r, uint64_t ctx)
{
	if (r != CUDA_SUCCESS || !ctx || !ft_cfg.gpu_ms || pool_of(ctx))
		return;
	int none = 0;
	atomic_compare_exchange_strong(&driver, &none, 1);   /* the poller finds it first */
	pool_want(ctx);
}

void ft_gpu_ctx_gone(uint64_t ctx)
{
	struct pool *p = ctx ? pool_of(ctx) : NULL;
	if (p)
		pool_drop(p);
}

/* A device's primary context may go (its release or reset): the pools
 * made on that device, and those not made yet (their device unknown). */
void ft_gpu_dev_gone(CUdevice dev)
{
	for (int i = 0; i < POOLS; i++) {
		int st = atomic_load(&pools[i].state);
		if (atomic_load(&pools[i].ctx) &&
		    ((st == POOL_READY && pools[i].dev == dev) || st == POOL_WANTED))
			pool_drop(&pools[i]);
	}
}

void ft_gpu_fork_child(void)
{
	atomic_store(&poller_started, 0);       /* the child has no poller */
	atomic_flag_clear(&staged_lock);
	nstaged = 0;
	atomic_store(&final_poll, 0);
	memset(pools, 0, sizeof pools);
	memset(ft_gpu_streams, 0, sizeof ft_gpu_streams);
	atomic_store(&captures, 0);
	atomic_store(&in_driver, 0);
}

int ft_gpu_active(void)
{
	return atomic_load(&driver) != 0;
}

/* ---- the poller's side ---- */


static void staged_take(void)
{
	while (atomic_flag_test_and_set_explicit(&staged_lock, memory_order_acquire))
		;
}

static void staged_give(void)
{
	atomic_flag_clear_explicit(&staged_lock, memory_order_release);
}

/* exit(): no driver call of ours from here on (the driver's destructors
 * run before this library's, which stops the flusher); one in flight is
 * waited for. */

static void gpu_exit(void)
{
	/* a last poll first, by the poller (the samples the program's last
	 * syncs completed), then the flusher takes them: 100 ms at most each */
	if (atomic_load(&driver) == 2 && ft_cfg.gpu_ms && atomic_load(&poller_started)) {
		atomic_store(&final_poll, 1);
		uint64_t t0 = ft_mono_ns();
		struct timespec nap = { 0, 200000 };
		while (atomic_load(&final_poll) == 1 && ft_mono_ns() - t0 < 100000000u)
			nanosleep(&nap, NULL);
		ft_flusher_wake();
		t0 = ft_mono_ns();
		for (;;) {
			staged_take();
			size_t left = nstaged;
			staged_give();
			if (!left || ft_mono_ns() - t0 >= 100000000u)
				break;
			nanosleep(&nap, NULL);
		}
	}
	atomic_store(&driver, 3);
	while (atomic_load(&in_driver))
		;
}

static void find_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
	if (!h) {
		atomic_store(&driver, 3);
		return;
	}
	d_ctx_get = (CUresult (*)(CUcontext *))dlsym(h, "cuCtxGetCurrent");
	d_ctx_set = (CUresult (*)(CUcontext))dlsym(h, "cuCtxSetCurrent");
	d_ctx_dev = (CUresult (*)(CUdevice *))dlsym(h, "cuCtxGetDevice");
	d_ev_create = (CUresult (*)(CUevent *, unsigned))dlsym(h, "cuEventCreate");
	d_ev_record = (CUresult (*)(CUevent, CUstream))dlsym(h, "cuEventRecord");
	d_ev_query = (CUresult (*)(CUevent))dlsym(h, "cuEventQuery");
	d_elapsed = (CUresult (*)(float *, CUevent, CUevent))dlsym(h, "cuEventElapsedTime_v2");
	if (!d_elapsed)
		d_elapsed = (CUresult (*)(float *, CUevent, CUevent))dlsym(h, "cuEventElapsedTime");
	d_stream_create = (CUresult (*)(CUstream *, unsigned))dlsym(h, "cuStreamCreate");
	dlclose(h);                     /* NOLOAD: only the count we added */
	int ok = d_ctx_get && d_ctx_set && d_ctx_dev && d_ev_create && d_ev_record &&
		 d_ev_query && d_elapsed && d_stream_create;
	if (ok)
		atexit(gpu_exit);       /* registered after the driver's: runs before it ends */
	atomic_store_explicit(&driver, ok ? 2 : 3, memory_order_release);
}

/* The reference: our event on our idle stream, recorded now; its GPU time
 * is this host time (to within the record's latency). */
static int anchor(struct pool *p)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 4 && best > ANCHOR_SPREAD_NS; i++) {
		/* the record's call bounds the GPU's time of it: the narrowest
		 * of a few tries (a preempted one is wide) */
		uint64_t m0 = ft_mono_ns(), t = ft_now();
		if (d_ev_record(p->ref, p->ref_stream) != CUDA_SUCCESS)
			return 0;
		/* queried, not waited for: a GPU that never gets to it (hung, its
		 * context going) must not hold the poller, whose end exit waits for */
		CUresult r;
		while ((r = d_ev_query(p->ref)) == CUDA_ERROR_NOT_READY &&
		       ft_mono_ns() - m0 < ANCHOR_WAIT_NS)
			;
		if (r != CUDA_SUCCESS)
			return 0;
		uint64_t m1 = ft_mono_ns();
		if (m1 - m0 < best) {
			best = m1 - m0;
			p->ref_ticks = t;
			p->ref_mono = m0;
		}
	}
	return 1;
}

static void pool_make(struct pool *p)
{
	CUcontext ctx = (CUcontext)(uintptr_t)atomic_load(&p->ctx);
	int ok = d_ctx_set(ctx) == CUDA_SUCCESS && d_ctx_dev(&p->dev) == CUDA_SUCCESS &&
		 d_stream_create(&p->ref_stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
		 d_ev_create(&p->ref, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
	for (int i = 0; ok && i < POOL_EVENTS; i++)
		ok = d_ev_create(&p->ev[i].ev, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
	ok = ok && anchor(p);
	atomic_store_explicit(&p->state, ok ? POOL_READY : POOL_FAILED, memory_order_release);
}

/* ticks per FEEDTRACE_GPU_MS, from the clock's own progress */
static void calibrate(void)
{
	static uint64_t t0, m0;
	uint64_t t = ft_now(), m = ft_mono_ns();
	if (!t0) {
		t0 = t;
		m0 = m;
		return;
	}
	if (m - m0 < 10000000u)
		return;
	double per_ns = (double)(t - t0) / (double)(m - m0);
	atomic_store(&interval, (uint64_t)(per_ns * ft_cfg.gpu_ms * 1e6));
}

struct out { unsigned char *p; size_t n, cap; };

static int put(struct out *o, const void *rec)
{
	if (o->n + sizeof(struct ft_gpu_sample) > o->cap)
		return 0;
	memcpy(o->p + o->n, rec, sizeof(struct ft_gpu_sample));
	o->n += sizeof(struct ft_gpu_sample);
	return 1;
}

/* Completed events of pool p become samples; NOT_READY ones wait. */
static void pool_poll(struct pool *p, struct out *o)
{
	if (ft_mono_ns() - p->ref_mono > ANCHOR_NS && !anchor(p))
		return;
	for (int i = 0; i < POOL_EVENTS; i++) {
		struct ev_slot *e = &p->ev[i];
		if (atomic_load_explicit(&e->state, memory_order_acquire) != EV_RECORDED)
			continue;
		if (o->n + sizeof(struct ft_gpu_sample) > o->cap)
			return;
		CUresult r = d_ev_query(e->ev);
		if (r == CUDA_ERROR_NOT_READY)
			continue;
		float ms = 0;
		if (r == CUDA_SUCCESS)
			r = d_elapsed(&ms, p->ref, e->ev);
		if (r == CUDA_SUCCESS) {
			struct ft_gpu_sample s = {
				.kind = FT_GPU_SAMPLE, .why = e->why, .tid = e->tid,
				.stream = e->stream, .ctx = atomic_load(&p->ctx),
				.submit_ticks = e->ticks, .ref_ticks = p->ref_ticks,
				.gpu_ns = (int64_t)((double)ms * 1e6),
				.submits = e->submits,
			};
			put(o, &s);
			/* nothing submitted to the stream after it: it drained */
			struct ft_gpu_stream *st = stream_slot(ft_gpu_key(e->stream, e->tid));
			if (st && atomic_load_explicit(&st->submits, memory_order_relaxed) == e->submits)
				atomic_store_explicit(&st->due, 0, memory_order_relaxed);
		} else {
			atomic_fetch_add(&lost_errors, 1);
		}
		atomic_store_explicit(&e->state, EV_FREE, memory_order_release);
	}
}

/* One poll of every pool, by the poller: samples to o */
static size_t poll_driver(void *buf, size_t cap)
{
	struct out o = { buf, 0, cap };
	calibrate();
	int d = atomic_load_explicit(&driver, memory_order_acquire);
	if (d == 0 || d == 3)
		return 0;
	if (d == 1)
		find_driver();
	if (atomic_load(&driver) != 2)
		return 0;
	int used = 0;
	for (int i = 0; i < POOLS; i++) {
		struct pool *p = &pools[i];
		int st = atomic_load_explicit(&p->state, memory_order_acquire);
		if (!atomic_load(&p->ctx) || (st != POOL_WANTED && st != POOL_READY))
			continue;
		atomic_store(&p->poller_in, 1);
		if (atomic_load(&p->state) == st && driver_enter()) {
			if (st == POOL_WANTED)
				pool_make(p);
			else
				pool_poll(p, &o);
			used = 1;
			driver_leave();
		}
		atomic_store(&p->poller_in, 0);
	}
	if (used)
		d_ctx_set(NULL);        /* the poller holds no context between polls */
	int asked = 1;
	atomic_compare_exchange_strong(&final_poll, &asked, 2);
	uint64_t now[5] = { atomic_load(&lost_exhausted), atomic_load(&lost_capture),
			    atomic_load(&lost_pending), atomic_load(&lost_ctx_gone),
			    atomic_load(&lost_errors) };
	if (memcmp(now, losses_written, sizeof now) != 0) {
		struct ft_gpu_losses l = { .kind = FT_GPU_LOSSES, .exhausted = now[0],
					   .capture = now[1], .pending = now[2],
					   .ctx_gone = now[3], .errors = now[4] };
		if (put(&o, &l))
			memcpy(losses_written, now, sizeof now);
	}
	return o.n;
}

static void *poller_main(void *arg)
{
	(void)arg;
	static unsigned char buf[sizeof staged];
	ft_tls_notrace = 1;
	ft_self = &ft_thread_refused;
	syscall(SYS_prctl, PR_SET_NAME, "feedtrace-gpu", 0, 0, 0);
	while (atomic_load(&driver) != 3) {
		/* room: only this thread adds, so it can only grow meanwhile */
		staged_take();
		size_t room = sizeof staged - nstaged;
		staged_give();
		size_t n = poll_driver(buf, room);
		if (n) {
			staged_take();
			memcpy(staged + nstaged, buf, n);
			nstaged += n;
			staged_give();
		}
		if (atomic_load(&final_poll) == 1)
			continue;       /* the last poll is being asked for: at once */
		struct timespec nap = { 0, GPU_POLL_NS };
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* The poller, once: created with every signal blocked (no signal of the
 * program is ever handled on it) and marked untraced, through the symbol
 * as the flusher is (shim/init.c), detached. */
static void poller_start(void)
{
	int none = 0;
	if (atomic_load_explicit(&poller_started, memory_order_relaxed) ||
	    !atomic_compare_exchange_strong(&poller_started, &none, 1))
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int was = ft_tls_notrace;
	ft_tls_notrace = 1;
	pthread_t th;
	int r = pthread_create(&th, NULL, poller_main, NULL);
	ft_tls_notrace = was;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		pthread_detach(th);
	else
		atomic_store(&driver, 3);       /* no poller: no samples, none taken */
}

/* The flusher's side: the samples the poller finished, as many as fit. */
size_t ft_gpu_poll(void *buf, size_t cap)
{
	staged_take();
	size_t n = nstaged < cap ? nstaged : cap - cap % sizeof(struct ft_gpu_sample);
	memcpy(buf, staged, n);
	memmove(staged, staged + n, nstaged - n);
	nstaged -= n;
	staged_give();
	return n;
}
