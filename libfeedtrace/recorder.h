/*
 * recorder.h: what a hook needs to record an event. The hot path lives
 * here as inline functions: one initial-exec TLS load, a capacity check,
 * one 32-byte store and a release store of the ring head. No lock, no
 * malloc, no syscall, no errno change (docs/ARCHITECTURE.md, "hot path").
 */
#ifndef FT_RECORDER_H
#define FT_RECORDER_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "format.h"

#define FT_TLS __attribute__((tls_model("initial-exec")))
#define ft_likely(x)   __builtin_expect(!!(x), 1)
#define ft_unlikely(x) __builtin_expect(!!(x), 0)

/* One per traced thread. The owner writes head/lost and the slots;
 * the flusher writes tail. A thread slot is recycled after its owner
 * exited and the flusher drained it (states in ring.c). */
struct ft_thread {
	/* owner's cache line */
	struct ft_rec *ring;
	uint64_t mask;               /* capacity in slots - 1 */
	uint64_t head_local;         /* owner's copy of head */
	uint64_t check_at;           /* head may grow up to here without a look at tail */
	uint64_t limit;              /* tail + capacity, as last seen */
	uintptr_t busy;              /* 0, or the frame of the hook mid-record
	                              * (signal reentrancy, ft_busy_slow); 1: not now;
	                              * a frame + 1: a call-site walk or a CUDA driver
	                              * call (FT_BUSY_WALK): hooks below it record
	                              * nothing, one at or above clears it */
	int32_t tid;
	_Atomic uint64_t head;       /* slots published */
	_Atomic uint64_t lost;       /* records dropped by the owner */

	/* flusher's cache line */
	_Alignas(64) _Atomic uint64_t tail;  /* slots consumed */
	_Atomic int state;           /* enum ft_thread_state (ring.c) */
	int named;                   /* THREAD chunk written */
	uint64_t lost_written;
	uint64_t stream;             /* this owner's stream: EVENTS prefix */
	_Atomic uint64_t name[2];    /* the thread's name (comm), NUL-padded */
	_Atomic int renamed;         /* name changed since the THREAD chunk */
	uint64_t pthread;            /* its pthread_t, to find it by that */
	_Atomic int leaving;         /* its start routine ended (ft_thread_leaving) */
	uint64_t exit_ticks;         /* its CPU time at exit (set before EXITED) */
	uint64_t exit_cpu_ns;
	uint64_t py_open_at;         /* owner: its last open that took a Python site (shim/io.c) */
	_Atomic uint64_t py_name[6]; /* Python's name for it (ft_thread_set_py_name), NUL-padded */
};

extern _Atomic unsigned ft_active;          /* FT_G_* groups recording now; 0 = off */
extern __thread struct ft_thread *ft_self FT_TLS;

struct ft_thread *ft_thread_attach(void);  /* slow path: first event of a thread */
struct ft_thread *ft_busy_slow(struct ft_thread *t, uintptr_t here); /* busy: nested or left? */
extern _Atomic uint64_t ft_handler_lost;    /* handler calls not recorded (END) */
void ft_ring_full(struct ft_thread *t);     /* slow path: reload tail, maybe wake */

/* Where a hook's frame is, for t->busy: its canonical frame address (the
 * stack pointer at its call), from the stack pointer and a constant. Unlike
 * __builtin_frame_address(0) it needs no frame pointer: the hooks' early
 * exits then save no register (shrink-wrapping), and every marker is the
 * same kind of address, so they compare as frames do (the stack grows
 * down: a handler's hook lies below the hook it interrupted). */
#define FT_FRAME() ((uintptr_t)__builtin_dwarf_cfa())

/* Returns the caller's thread state if group g is being recorded and the
 * thread may record now; NULL means "call straight through". A hook called
 * from below a call-site walk or a CUDA driver call (the driver's own
 * locks: every launch takes one) is answered here, without the call to
 * ft_busy_slow. */
static inline __attribute__((always_inline)) struct ft_thread *ft_enter(unsigned g)
{
	if (ft_unlikely(!(atomic_load_explicit(&ft_active, memory_order_relaxed) & g)))
		return NULL;
	struct ft_thread *t = ft_self;
	if (ft_unlikely(!t))
		return ft_thread_attach();
	uintptr_t b = t->busy;
	if (ft_unlikely(b)) {
		if ((b & 1) && FT_FRAME() < b - 1)
			return NULL;    /* called from below a walk or a CUDA call */
		return ft_busy_slow(t, FT_FRAME());
	}
	return t;
}

/* Whether group g records now: a hook entered for its bookkeeping
 * (FT_G_FD: opens, closes, descriptors made) records only inside a capture
 * window (libfeedtrace/capture.c); outside, it keeps its tables only. */
static inline int ft_recording(unsigned g)
{
	return (atomic_load_explicit(&ft_active, memory_order_relaxed) & g) != 0;
}

/* A hook is taking its call site (libfeedtrace/callsite.c): hooks the unwinder
 * reaches record nothing; a siglongjmp out of the walk is seen by the
 * thread's next hook at or above this frame, which clears it. */
#define FT_BUSY_WALK(t) ((t)->busy = FT_FRAME() | 1)

/* Reserve n contiguous slots in t's ring; NULL (and the loss counted) if full.
 * The caller fills them and calls ft_commit(). */
static inline struct ft_rec *ft_reserve(struct ft_thread *t, unsigned n)
{
	/* the frame marks who is mid-record: a hook that finds busy set from a
	 * frame at or below its own knows a siglongjmp left that record */
	t->busy = FT_FRAME();
	atomic_signal_fence(memory_order_seq_cst);
	if (ft_unlikely(t->head_local + n > t->check_at)) {
		ft_ring_full(t);
		if (t->head_local + n > t->limit) {
			atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
			t->busy = 0;
			return NULL;
		}
	}
	return &t->ring[t->head_local & t->mask];
}

/* Slot i (0-based) of a record reserved at r: wraps around the ring. */
static inline struct ft_rec *ft_slot(struct ft_thread *t, unsigned i)
{
	return &t->ring[(t->head_local + i) & t->mask];
}

static inline void ft_commit(struct ft_thread *t, unsigned n)
{
	t->head_local += n;
	atomic_store_explicit(&t->head, t->head_local, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

static inline void ft_rec_header(struct ft_rec *r, unsigned kind, unsigned n,
				 uint64_t t0, uint64_t t1)
{
	uint64_t d = t1 - t0;
	r->ts = t0;
	r->kind = (uint16_t)kind;
	r->nslots = (uint8_t)n;
	if (ft_likely(d <= 0xffffffffu)) {
		r->dur = (uint32_t)d;
		r->flags = 0;
	} else {
		d >>= FT_DUR_SHIFT;
		r->dur = d > 0xffffffffu ? 0xffffffffu : (uint32_t)d;
		r->flags = FT_RF_DUR_COARSE;
	}
}

/* The common one-slot record with four 32-bit payload words. */
static inline void ft_record4(struct ft_thread *t, unsigned kind, uint64_t t0,
			      uint64_t t1, uint32_t a, uint32_t b, uint32_t c,
			      uint32_t d)
{
	struct ft_rec *r = ft_reserve(t, 1);
	if (ft_unlikely(!r))
		return;
	ft_rec_header(r, kind, 1, t0, t1);
	r->p.u32[0] = a;
	r->p.u32[1] = b;
	r->p.u32[2] = c;
	r->p.u32[3] = d;
	ft_commit(t, 1);
}

/* One-slot record with a 64-bit word then two 32-bit words. */
static inline void ft_record_p(struct ft_thread *t, unsigned kind, uint64_t t0,
			       uint64_t t1, const void *ptr, uint32_t c,
			       uint32_t d)
{
	struct ft_rec *r = ft_reserve(t, 1);
	if (ft_unlikely(!r))
		return;
	ft_rec_header(r, kind, 1, t0, t1);
	r->p.u64[0] = (uint64_t)(uintptr_t)ptr;
	r->p.u32[2] = c;
	r->p.u32[3] = d;
	ft_commit(t, 1);
}

/* ---- strings and fds (strtab.c) ---- */
uint32_t ft_intern(const char *s);                /* 0 when it cannot */
uint32_t ft_intern_path(const char *path);        /* ft_intern, or a hash (FEEDTRACE_REDACT) */
#define FT_FD_SLOTS 65536
extern _Atomic uint32_t ft_fd_paths[FT_FD_SLOTS];

/* Each fd's word: the string id of the path last opened at it (low 28
 * bits; string ids stay below 2^25) and what it is (top 4 bits: enum
 * ft_fd_kind, 0 unknown). dup carries the whole word, close clears it. */
#define FT_FD_ID_MASK 0x0fffffffu
#define FT_FD_KIND_SHIFT 28

static inline uint32_t ft_fd_word(int fd)
{
	return (unsigned)fd < FT_FD_SLOTS ?
		atomic_load_explicit(&ft_fd_paths[fd], memory_order_relaxed) : 0;
}

/* string id of the path last opened at fd, 0 if unknown */
static inline uint32_t ft_fd_path(int fd)
{
	return ft_fd_word(fd) & FT_FD_ID_MASK;
}

static inline void ft_fd_set_word(int fd, uint32_t word)
{
	if ((unsigned)fd < FT_FD_SLOTS)
		atomic_store_explicit(&ft_fd_paths[fd], word, memory_order_relaxed);
}

/* fd now names path_id (0: forget it), of the given kind */
static inline void ft_fd_set(int fd, uint32_t path_id, unsigned kind)
{
	ft_fd_set_word(fd, (path_id & FT_FD_ID_MASK) | (uint32_t)kind << FT_FD_KIND_SHIFT);
}

/* what fd is: the kind recorded when the tracer saw it made, else one
 * fstat (fdkind.c), remembered until it is closed */
unsigned ft_fd_kind_probe(int fd);
static inline unsigned ft_fd_kind(int fd)
{
	unsigned k = ft_fd_word(fd) >> FT_FD_KIND_SHIFT;
	return k ? k : ft_fd_kind_probe(fd);
}

/* ---- lifecycle (lifecycle.c) ---- */
extern int ft_pid;                                 /* pid the tracer set up for */
void ft_finish_now(int reason, int status);        /* async-signal-safe commit */
void ft_before_exec(const char *path);

#endif
