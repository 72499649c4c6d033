/*
 * ring.c: the registry of per-thread rings. Owns thread attach (first
 * event of a thread), thread exit, and the slow path of a filling ring.
 *
 * A thread slot goes FREE -> CLAIMED (attach) -> LIVE -> EXITED (the
 * flusher found its tid gone) -> FREE (the flusher drained it). Each ring
 * is single-producer (its thread) single-consumer (the flusher, or an exit
 * path holding the flush lock). Rings come from mmap, never malloc, and are reused.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "config.h"
#include "dlreal.h"
#include "internal.h"
#include "recorder.h"

struct ft_thread ft_threads[FT_MAX_THREADS];
_Atomic unsigned ft_threads_hw;         /* slots ever used: scan bound */
_Atomic uint64_t ft_threads_untraced;
_Atomic uint64_t ft_threads_seen;
_Atomic uint64_t ft_lost_recycled;
_Atomic uint32_t ft_wake_seq;
static _Atomic uint64_t streams;        /* stream ids given out (per process) */

__thread struct ft_thread *ft_self FT_TLS;
__thread int ft_tls_notrace FT_TLS;     /* flusher and init: never record */

/* Stand-in for threads that must not record: busy forever. */
struct ft_thread ft_thread_refused = { .busy = 1 };
/* Stand-in while this thread is a vfork child on its parent's memory
 * (shim/process.c): its hooks pass through and touch no shared state. */
struct ft_thread ft_thread_vfork_child = { .busy = 1 };

static _Atomic uint64_t ring_bytes;
_Atomic uint64_t ft_handler_lost;

void ft_flusher_wake(void)
{
	int saved = errno;
	atomic_fetch_add_explicit(&ft_wake_seq, 1, memory_order_release);
	syscall(SYS_futex, &ft_wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

static void ring_reset(struct ft_thread *t)
{
	atomic_store(&t->head, 0);
	atomic_store(&t->tail, 0);
	atomic_store(&t->lost, 0);
	t->head_local = 0;
	t->lost_written = 0;
	t->named = 0;
	t->busy = 0;
	t->limit = t->mask + 1;
	t->check_at = (t->mask + 1) / 4;
	t->exit_ticks = 0;
	atomic_store(&t->leaving, 0);
}

static struct ft_thread *claim_slot(void)
{
	/* Lowest free slot first: slots freed by exited threads keep their
	 * ring, so short-lived threads reuse rings instead of mapping a new
	 * one each (a rotating start used up FEEDTRACE_MEM_MB after ~1000
	 * threads, and every later thread went untraced). */
	for (unsigned i = 0; i < FT_MAX_THREADS; i++) {
		struct ft_thread *t = &ft_threads[i];
		int expect = FT_SLOT_FREE;
		if (atomic_load_explicit(&t->state, memory_order_relaxed) == FT_SLOT_FREE &&
		    atomic_compare_exchange_strong(&t->state, &expect, FT_SLOT_CLAIMED)) {
			unsigned idx = (unsigned)(t - ft_threads) + 1, hw;
			while ((hw = atomic_load(&ft_threads_hw)) < idx &&
			       !atomic_compare_exchange_weak(&ft_threads_hw, &hw, idx))
				;
			return t;
		}
	}
	return NULL;
}

#ifdef __SANITIZE_THREAD__
void *__interceptor_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
#endif

/* Anonymous zeroed memory straight from the kernel, never through a
 * wrapper (ours records file mappings); NULL if refused. A ThreadSanitizer
 * build asks the runtime's own mmap instead, which clears what TSan
 * remembers of the range: a raw mapping would inherit the accesses TSan
 * recorded there before the program unmapped that memory behind its back. */
void *ft_map_anon(size_t bytes, int flags)
{
#ifdef __SANITIZE_THREAD__
	void *p = __interceptor_mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	return p == MAP_FAILED ? NULL : p;
#else
	void *p = (void *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	return (long)p < 0 && (long)p > -4096 ? NULL : p;
#endif
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14 */
#endif
static _Atomic int populate_refused;    /* the kernel lacks MADV_POPULATE_WRITE */

/* The pages of [addr, addr + bytes) faulted in now, written (a fork
 * child's copies of its parent's made), in one system call instead of a
 * page fault each; nothing if the kernel cannot. The content of a page
 * already there is left as it is, so another thread may write it
 * meanwhile. */
void ft_populate(void *addr, size_t bytes)
{
	if (atomic_load_explicit(&populate_refused, memory_order_relaxed) || !bytes)
		return;
	uintptr_t page = (uintptr_t)getpagesize();
	uintptr_t a = (uintptr_t)addr & ~(page - 1);
	uintptr_t e = ((uintptr_t)addr + bytes + page - 1) & ~(page - 1);
	int saved = errno;
	if (syscall(SYS_madvise, a, e - a, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
		atomic_store(&populate_refused, 1);
	errno = saved;
}

/* A ring's pages ahead of its writer. The first write to a page of a
 * ring (a fresh one, or in a fork child one it shares with its parent) is
 * a page fault on the program's thread: one every 128 records over the
 * ring's first lap. The ring's first RING_AHEAD bytes are faulted as a
 * thread attaches, and the flusher keeps the pages of the slots after the
 * head of each thread that recorded since its last look faulted
 * (ft_ring_populate), twice what it wrote meanwhile and at least
 * RING_AHEAD, until the whole ring is: a thread that records little keeps
 * little resident. Slots [from, to) of the current indices have their
 * pages; flusher only, but at attach (the slot not live yet) and in a
 * fork child. */
#define RING_AHEAD (16u << 10)
static struct {
	uint64_t from, to, seen;
} ahead[FT_MAX_THREADS];

static void populate_slots(struct ft_thread *t, uint64_t from, uint64_t to)
{
	uint64_t cap = t->mask + 1;
	while (from < to) {
		uint64_t pos = from & t->mask, n = to - from;
		if (n > cap - pos)
			n = cap - pos;
		ft_populate(t->ring + pos, n * FT_SLOT_SIZE);
		from += n;
	}
}

/* Attach: the ring's start (head 0), unless a thread before had it done. */
static void populate_start(struct ft_thread *t)
{
	unsigned i = (unsigned)(t - ft_threads);
	uint64_t cap = t->mask + 1, first = RING_AHEAD / FT_SLOT_SIZE;
	if (ahead[i].to - ahead[i].from >= cap)
		return;
	if (ahead[i].from != 0)
		ahead[i].from = ahead[i].to = 0;
	ahead[i].seen = 0;
	if (first > cap)
		first = cap;
	if (ahead[i].to < first) {
		populate_slots(t, ahead[i].to, first);
		ahead[i].to = first;
	}
}

/* Flusher: the pages after a live thread's head. */
void ft_ring_populate(struct ft_thread *t)
{
	unsigned i = (unsigned)(t - ft_threads);
	uint64_t cap = t->mask + 1;
	if (ahead[i].to - ahead[i].from >= cap)
		return;                 /* every page done */
	uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
	if (head == ahead[i].seen)
		return;                 /* nothing recorded since the last look */
	uint64_t lead = 2 * (head - ahead[i].seen), want;
	ahead[i].seen = head;
	if (lead < RING_AHEAD / FT_SLOT_SIZE)
		lead = RING_AHEAD / FT_SLOT_SIZE;
	want = head + lead;
	if (want > ahead[i].from + cap)
		want = ahead[i].from + cap;
	if (want > ahead[i].to) {
		/* the slots below the head: written, so faulted already */
		populate_slots(t, ahead[i].to > head ? ahead[i].to : head, want);
		ahead[i].to = want;
	}
}

/* Gives t a ring of the configured size, within the memory bound. */
static int give_ring(struct ft_thread *t)
{
	uint64_t bytes = (uint64_t)ft_cfg.ring_kb * 1024;
	if (t->ring && (t->mask + 1) * FT_SLOT_SIZE == bytes)
		return 0;
	if (atomic_fetch_add(&ring_bytes, bytes) + bytes > (uint64_t)ft_cfg.mem_mb << 20) {
		atomic_fetch_sub(&ring_bytes, bytes);
		return -1;
	}
	void *p = ft_map_anon(bytes, 0);
	if (!p) {
		atomic_fetch_sub(&ring_bytes, bytes);
		return -1;
	}
	t->ring = p;
	t->mask = bytes / FT_SLOT_SIZE - 1;
	unsigned i = (unsigned)(t - ft_threads);
	ahead[i].from = ahead[i].to = 0;
	return 0;
}

uint64_t ft_streams_given(void)
{
	return atomic_load(&streams);
}

struct ft_thread *ft_thread_attach(void)
{
	if (ft_tls_notrace || ft_self)
		return NULL;
	int saved = errno;
	ft_self = &ft_thread_refused;           /* nested hooks pass through */
	struct ft_thread *t = claim_slot();
	if (!t || give_ring(t) != 0) {
		if (t)
			atomic_store(&t->state, FT_SLOT_FREE);
		atomic_fetch_add(&ft_threads_untraced, 1);
		errno = saved;
		return NULL;                    /* stays refused */
	}
	ring_reset(t);
	populate_start(t);
	t->stream = atomic_fetch_add(&streams, 1) + 1;
	t->tid = (int32_t)syscall(SYS_gettid);
	t->pthread = (uint64_t)pthread_self();
	char name[16] = { 0 };
	syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
	ft_thread_set_name(t, name);
	for (int i = 0; i < 6; i++)
		atomic_store_explicit(&t->py_name[i], 0, memory_order_relaxed);
	atomic_store(&t->renamed, 0);
	atomic_fetch_add(&ft_threads_seen, 1);
	atomic_store_explicit(&t->state, FT_SLOT_LIVE, memory_order_release);
	ft_self = t;
	errno = saved;
	return t;
}

/* ---- clone(CLONE_VM) children on the caller's thread-local storage ----
 * glibc's clone with CLONE_VM and without CLONE_SETTLS makes a task that
 * runs on its parent's memory and on its parent thread's TLS: it sees that
 * thread's ft_self. It must record nothing there: it would be a second
 * producer in the ring or, attaching a ring under its own tid, a slot the
 * flusher frees (tgkill on our thread group finds no such tid) while the
 * parent writes it. While such a child may run, the thread's ft_self is a
 * stand-in, busy for good, so that every hook takes ft_busy_slow, which
 * asks the kernel who calls: the thread that cloned records into its own
 * ring; any other task passes straight through, its call counted (END's
 * shared_lost). The kernel clears the entry's `live` word as the child
 * exits or execs (CLONE_CHILD_CLEARTID, which the wrapper adds); the
 * owner's next hook then puts its ring back. A child whose clone names
 * its own CLONE_CHILD_CLEARTID word, or that clones again on the same TLS,
 * pins the stand-in: its owner asks the kernel at each hook for good. */
#define FT_SHARED_MAX 64
struct ft_shared {
	struct ft_thread standin;       /* first: what ft_self points to */
	struct ft_thread *prev;         /* ft_self before the clone */
	struct ft_thread *ring;         /* the owner's ring */
	int32_t owner;                  /* the owner's tid */
	_Atomic int32_t live;           /* 0 once the child exited or exec'd */
	_Atomic int pinned;             /* its end is not seen: never put back */
	_Atomic int used;
};
static struct ft_shared shared[FT_SHARED_MAX];
_Atomic uint64_t ft_shared_lost;

static struct ft_shared *shared_of(struct ft_thread *t)
{
	uintptr_t a = (uintptr_t)t;
	if (a < (uintptr_t)shared || a >= (uintptr_t)(shared + FT_SHARED_MAX))
		return NULL;
	return (struct ft_shared *)t;
}

static int32_t my_tid(void)
{
	int saved = errno;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	errno = saved;
	return tid;
}

/* The calling thread, about to clone a child onto its TLS: ft_self becomes
 * a stand-in. Returns the word the kernel is to clear when the child is
 * gone (CLONE_CHILD_CLEARTID; unused when watched: the clone names its
 * own), or NULL when the thread records nothing anyway. */
_Atomic int32_t *ft_shared_begin(int watched)
{
	if (!atomic_load_explicit(&ft_active, memory_order_relaxed))
		return NULL;
	if (!ft_self)
		ft_thread_attach();
	struct ft_thread *self = ft_self;
	if (!self)
		ft_self = self = &ft_thread_refused;    /* a thread that never records */
	if (self == &ft_thread_refused || self == &ft_thread_vfork_child)
		return NULL;
	struct ft_shared *top = shared_of(self);
	int32_t tid = my_tid();
	if (top && top->owner != tid) {         /* a child cloning on the same TLS */
		atomic_store(&top->pinned, 1);
		return NULL;
	}
	for (unsigned i = 0; i < FT_SHARED_MAX; i++) {
		struct ft_shared *e = &shared[i];
		int expect = 0;
		if (!atomic_compare_exchange_strong(&e->used, &expect, 1))
			continue;
		memset(&e->standin, 0, sizeof e->standin);
		e->standin.busy = 1;
		e->prev = self;
		e->ring = top ? top->ring : self;
		e->owner = tid;
		atomic_store(&e->live, 1);
		atomic_store(&e->pinned, watched);
		ft_self = &e->standin;
		return &e->live;
	}
	/* no room to tell the two apart: this thread records nothing more */
	atomic_fetch_add(&ft_threads_untraced, 1);
	ft_self = &ft_thread_refused;
	return NULL;
}

/* The owner: stand-ins whose child is gone give their place back. */
static struct ft_thread *shared_pop(void)
{
	struct ft_shared *e;
	while ((e = shared_of(ft_self)) && !atomic_load(&e->pinned) &&
	       atomic_load_explicit(&e->live, memory_order_acquire) == 0) {
		ft_self = e->prev;
		atomic_store(&e->used, 0);
	}
	return ft_self;
}

/* The clone returned in the parent (cloned: it made a child). A vfork-like
 * clone returns once the child is gone: the ring is put back at once. */
void ft_shared_end(_Atomic int32_t *live, int cloned)
{
	if (!live)
		return;
	if (!cloned) {
		struct ft_shared *e = (struct ft_shared *)((char *)live - offsetof(struct ft_shared, live));
		atomic_store(&e->pinned, 0);
		atomic_store(live, 0);
	}
	shared_pop();
}

/* A hook found a stand-in: the owner records into its ring; another task
 * passes through, counted. */
static struct ft_thread *shared_enter(struct ft_shared *e, uintptr_t here)
{
	if (my_tid() != e->owner) {
		atomic_fetch_add_explicit(&ft_shared_lost, 1, memory_order_relaxed);
		return NULL;
	}
	struct ft_thread *t = shared_pop();
	struct ft_shared *top = shared_of(t);
	if (top)
		t = top->ring;
	uintptr_t b = t->busy;
	if (!b)
		return t;
	if ((b & 1) && here < b - 1)
		return NULL;            /* below a walk or a CUDA call */
	return ft_busy_slow(t, here);
}

/* The calling thread's own ring (NULL: it records nothing). */
struct ft_thread *ft_own_ring(void)
{
	struct ft_thread *t = ft_self;
	struct ft_shared *e = shared_of(t);
	if (e)
		return my_tid() == e->owner ? e->ring : NULL;
	return t == &ft_thread_refused || t == &ft_thread_vfork_child ? NULL : t;
}

/* True in a task that runs on another's memory and TLS (a vfork child, a
 * clone(CLONE_VM) child): it must not change the process's tables. */
int ft_self_foreign(void)
{
	struct ft_thread *t = ft_self;
	struct ft_shared *e = shared_of(t);
	return t == &ft_thread_vfork_child || (e && my_tid() != e->owner);
}

/* A thread's name as the flusher will write it: the kernel's 15 bytes at
 * most, read at attach and on each rename (pthread_setname_np, prctl),
 * never from /proc by the flusher: an open there would take the lowest
 * free descriptor, one the program may be about to dup2 onto (EBUSY) or
 * expect its own next open to get. */
void ft_thread_set_name(struct ft_thread *t, const char *name)
{
	uint64_t w[2] = { 0, 0 };
	memcpy(w, name, strnlen(name, 15));
	atomic_store_explicit(&t->name[0], w[0], memory_order_relaxed);
	atomic_store_explicit(&t->name[1], w[1], memory_order_relaxed);
	atomic_store_explicit(&t->renamed, 1, memory_order_release);
}

/* The name Python's threading gave the calling thread, taken by its
 * creator from the Thread it started (shim/thread.c): 47 bytes at most.
 * A thread without a ring is attached for it, so that a Python thread is
 * named even if it makes no traced call. Called by start_tracked before
 * a sanitizer's own start routine has set the thread up: not
 * instrumented, and no array on its stack or memcpy (a sanitizer's
 * memcpy would check shadow memory that is not the thread's yet). */
FT_NO_SAN void ft_thread_set_py_name(const char *name)
{
	struct ft_thread *t = ft_self ? ft_own_ring() : ft_thread_attach();
	if (!t)
		return;
	int end = 0;
	for (int i = 0; i < 6; i++) {
		uint64_t v = 0;
		for (int b = 0; b < 8 && !end; b++) {
			unsigned char c = (unsigned char)name[i * 8 + b];
			if (!c || i * 8 + b == 47)
				end = 1;
			else
				v |= (uint64_t)c << (8 * b);
		}
		atomic_store_explicit(&t->py_name[i], v, memory_order_relaxed);
	}
	atomic_store_explicit(&t->renamed, 1, memory_order_release);
}

/* The live thread whose pthread_t is th, or NULL. A thread that has
 * left keeps its slot live until the flusher sees its tid gone, and glibc
 * gives its pthread_t to the next thread made: the slot of a thread that
 * said it is leaving is skipped, and of the rest the latest attached
 * (highest stream) wins. */
struct ft_thread *ft_thread_by_pthread(uint64_t th)
{
	struct ft_thread *me = ft_own_ring();
	if (me && me->pthread == th)
		return me;
	unsigned hw = atomic_load(&ft_threads_hw);
	struct ft_thread *best = NULL;
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		if (atomic_load_explicit(&t->state, memory_order_acquire) == FT_SLOT_LIVE &&
		    t->pthread == th && !atomic_load(&t->leaving) &&
		    (!best || t->stream > best->stream))
			best = t;
	}
	return best;
}

/* The thread's own CPU time as it leaves: the flusher's CPU samples end
 * with it (flusher.c). */
static void cpu_note_exit(struct ft_thread *t)
{
	struct timespec ts;
	t->exit_ticks = 0;
	if (syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	t->exit_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	t->exit_ticks = ft_now();
}

/* Thread exit, seen without a pthread key (a key would be one of the
 * program's PTHREAD_KEYS_MAX). A thread the program made by pthread_create
 * says it is leaving as its start routine returns, or as it leaves by
 * pthread_exit or cancellation (shim/thread.c): its CPU time then, and a
 * wake for the flusher. For every thread, the flusher asks the kernel
 * whether the tid still exists (ft_thread_gone): the slot becomes EXITED
 * only then, so what the thread records after its start routine (TLS and
 * key destructors) is still drained, and a thread made behind our wrapper
 * (raw clone, a full start pool) is seen too. */
void ft_thread_leaving(void)
{
	struct ft_thread *t = ft_own_ring();
	if (!t)
		return;
	cpu_note_exit(t);
	atomic_store_explicit(&t->leaving, 1, memory_order_release);
	ft_flusher_wake();
}

/* Flusher side: t's thread no longer exists (its tid is gone from this
 * process). The main thread's slot stays live until the process ends. A
 * tid the kernel gave again to a new thread before this look keeps the
 * slot live: its records are drained at exit, nothing is lost. */
int ft_thread_gone(const struct ft_thread *t)
{
	if (t->tid == ft_pid || t->tid <= 0)
		return 0;
	int saved = errno;
	int gone = syscall(SYS_tgkill, ft_pid, t->tid, 0) != 0 && errno == ESRCH;
	errno = saved;
	return gone;
}

/* True when sp lies on this thread's alternate signal stack in use: a
 * handler runs there, and the frames below it say nothing of the hook it
 * interrupted. One syscall, only on the busy path. */
static int on_altstack(void)
{
	stack_t ss;
	int saved = errno;
	int r = (int)syscall(SYS_sigaltstack, NULL, &ss);
	errno = saved;
	return r == 0 && (ss.ss_flags & SS_ONSTACK);
}

/* A hook found t->busy set. Either it runs in a signal handler that
 * interrupted a record on this thread (its frame lies below the recording
 * one on the same stack, or it runs on the alternate signal stack): the
 * call is not recorded and counted in handler_lost and lost. Or the
 * recording hook was left by a siglongjmp out of a handler (the hook now
 * running sits at or above that frame): the unfinished record is dropped,
 * counted in lost, and the thread records again. Its slots were reserved
 * but never published: head_local did not move, so the ring is whole. */
struct ft_thread *ft_busy_slow(struct ft_thread *t, uintptr_t here)
{
	struct ft_shared *e = shared_of(t);
	if (e)
		return shared_enter(e, here);
	uintptr_t b = t->busy;
	if (b <= 1 || t == &ft_thread_refused || t == &ft_thread_vfork_child)
		return NULL;            /* not now (stand-ins) */
	if (b & 1) {                    /* a call-site walk from the hook at frame b - 1 */
		if (here >= b - 1 && !on_altstack()) {
			t->busy = 0;    /* a siglongjmp left it: this hook is the program's */
			return t;
		}
		return NULL;            /* the unwinder's own calls, or a handler's in it */
	}
	if (here >= b && !on_altstack()) {
		atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
		t->busy = 0;
		return t;
	}
	atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ft_handler_lost, 1, memory_order_relaxed);
	return NULL;
}

/* The ring passed its check point: look at tail again, wake the flusher
 * when a quarter full. Called with t->busy set. */
void ft_ring_full(struct ft_thread *t)
{
	uint64_t cap = t->mask + 1;
	uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
	t->limit = tail + cap;
	if (t->head_local - tail >= cap / 4) {
		ft_flusher_wake();
		t->check_at = t->head_local + cap / 8;
		if (t->check_at > t->limit)
			t->check_at = t->limit;
	} else {
		t->check_at = tail + cap / 4;
	}
}

/* Flusher side: slot fully drained after its thread exited. */
void ft_ring_recycle(struct ft_thread *t)
{
	atomic_fetch_add(&ft_lost_recycled, atomic_load(&t->lost));
	ring_reset(t);
	atomic_store_explicit(&t->state, FT_SLOT_FREE, memory_order_release);
}

/* In a fork child: only the calling thread exists; what the others and
 * this one buffered belongs to the parent, which writes it. */
void ft_ring_after_fork_child(void)
{
	struct ft_shared *e = shared_of(ft_self);
	if (e)
		ft_self = e->ring;      /* no task shares this copy's TLS */
	for (unsigned i = 0; i < FT_SHARED_MAX; i++)
		atomic_store(&shared[i].used, 0);
	atomic_store(&ft_shared_lost, 0);
	unsigned hw = atomic_load(&ft_threads_hw);
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		if (t == ft_self)
			continue;
		if (atomic_load(&t->state) != FT_SLOT_FREE) {
			ring_reset(t);
			atomic_store(&t->state, FT_SLOT_FREE);
		}
	}
	/* every ring's pages are the parent's until written (slots past hw
	 * never had a ring) */
	memset(ahead, 0, hw * sizeof ahead[0]);
	struct ft_thread *me = ft_self;
	if (me && me != &ft_thread_refused) {
		uint64_t head = me->head_local;
		ring_reset(me);
		me->head_local = head;     /* keep indices; drop the contents */
		atomic_store(&me->head, head);
		atomic_store(&me->tail, head);
		me->limit = head + me->mask + 1;
		me->check_at = head + (me->mask + 1) / 4;
		me->tid = (int32_t)syscall(SYS_gettid);
		if (me >= ft_threads && me < ft_threads + FT_MAX_THREADS) {
			unsigned i = (unsigned)(me - ft_threads);
			ahead[i].from = ahead[i].to = ahead[i].seen = head;
		}
	}
	atomic_store(&ft_threads_untraced, 0);
	atomic_store(&ft_lost_recycled, 0);
	atomic_store(&ft_handler_lost, 0);
	atomic_store(&ft_threads_seen, me && me != &ft_thread_refused ? 1 : 0);
}
