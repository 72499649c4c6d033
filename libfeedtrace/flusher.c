/*
 * flusher.c: the background thread that empties the rings. It wakes when
 * a ring is a quarter full, when a thread exited, and every FEEDTRACE_FLUSH_MS;
 * writes new strings first, then each ring's published records as one
 * EVENTS chunk (delta + byte-transposed, then one zstd frame).
 * It decides when and what to drain; output.c writes the chunks and owns
 * the flush lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#define ZSTD_STATIC_LINKING_ONLY        /* ZSTD_initStaticCCtx, ZSTD_estimateCCtxSize */
#include <zstd.h>

#include "capture.h"
#include "config.h"
#include "dlreal.h"
#include "flight.h"
#include "internal.h"
#include "lifecycle.h"
#include "schedstat.h"
#include "shuffle.h"

static pthread_t flusher;
static _Atomic int flusher_running;
static _Atomic int flusher_stop;
static uint64_t strings_pos;             /* arena bytes already in the file */
static uint64_t last_clock_ns;

/* flusher-only buffers, sized to what a drain holds: 32 KiB of records
 * at start-up, faulted in as the flusher first starts (warm_up), grown by
 * the flusher outside the flush lock when a ring holds more, up to a
 * quarter ring (the flusher is woken when a ring is a quarter full) and
 * FT_MAX_CHUNK_SLOTS; a larger backlog goes out as several chunks */
#define STAGE_FIRST_SLOTS 1024u
static uint64_t chunk_slots;             /* the most stage may grow to */
static uint64_t stage_slots;             /* what stage and shuffled hold now */
static unsigned char *stage;             /* prefix + slots, linear */
static unsigned char *shuffled;
static unsigned char *packed;
static size_t packed_cap;
static ZSTD_CCtx *cctx;
static int warm;                         /* the buffers' pages faulted (first process only) */


/* glibc ends the process (exit(0), on the thread that ends last) when
 * the count of threads it keeps reaches zero: a program whose main thread
 * left by pthread_exit or was cancelled ends so when its last thread does.
 * The flusher is no program thread: it is taken off that count while it
 * runs (and put back just before it returns, so that its own end never
 * reaches zero), else such a program would wait for it for ever. The
 * count is glibc's __nptl_nthreads (GLIBC_PRIVATE, what libthread_db
 * reads); without it, nothing is changed. */
static unsigned *glibc_nthreads;

/* Just before the flusher returns (glibc then takes one off the count):
 * back on the count, so that its own end is never the last. A count of
 * zero means the program's last thread is in exit(0) already, called by
 * glibc (the flusher is stopped from the destructors then): two, so that
 * the flusher does not call exit(0) too. */
static void count_flusher_again(void)
{
	if (!glibc_nthreads)
		return;
	unsigned c = __atomic_load_n(glibc_nthreads, __ATOMIC_SEQ_CST);
	while (!__atomic_compare_exchange_n(glibc_nthreads, &c, c + (c == 0 ? 2 : 1), 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/* The flusher is compressing a chunk, not holding the lock (fork reads it
 * for its FORK record: the child was made without waiting for zstd). */
static _Atomic int compressing;

int ft_flusher_compressing(void)
{
	return atomic_load(&compressing);
}

/* The flusher thread has started (its start-up, in a sanitizer's runtime,
 * allocates) and is not compressing: a fork now finds it outside any
 * allocator (lifecycle.c, sanitizer builds). */
static _Atomic int flusher_settled;

int ft_flusher_quiet(void)
{
	return !atomic_load(&flusher_running) ||
	       (atomic_load(&flusher_settled) && !atomic_load(&compressing));
}


/* One frame: "function+0xoff (library)" or "library+0xoff". */
static size_t symbolise_frame(uintptr_t ip, char *out, size_t cap)
{
	Dl_info info;
	int n;
	/* a return address: look up the call instruction just before it */
	if (dladdr((void *)(ip - 1), &info) && info.dli_fname) {
		const char *lib = strrchr(info.dli_fname, '/');
		lib = lib ? lib + 1 : info.dli_fname;
		if (info.dli_sname)
			n = snprintf(out, cap, "%s+0x%lx (%s)", info.dli_sname,
				     (unsigned long)(ip - (uintptr_t)info.dli_saddr), lib);
		else
			n = snprintf(out, cap, "%s+0x%lx", lib,
				     (unsigned long)(ip - (uintptr_t)info.dli_fbase));
	} else {
		n = snprintf(out, cap, "0x%lx", (unsigned long)ip);
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static void *self_base(void)
{
	static void *base;
	Dl_info info;
	if (!base && dladdr((void *)&self_base, &info))
		base = info.dli_fbase;
	return base;
}

/* For each new "#S:" stack among the strings just written, a SYMBOLS
 * entry with its frames, so the trace reads without this process's maps. */
static void write_symbols(const unsigned char *p, size_t n)
{
	static unsigned char buf[64 << 10];
	size_t used = 0, o = 0;
	while (o + sizeof(struct ft_string_entry) <= n) {
		const struct ft_string_entry *e = (const void *)(p + o);
		const char *text = (const char *)(e + 1);
		o += sizeof *e + ((e->len + 7) & ~7u);
		if (e->len < 4 || memcmp(text, "#S:", 3) != 0)
			continue;
		if (used + 4096 > sizeof buf) {
			struct iovec v = { buf, used };
			ft_output_write_chunk(FT_CHUNK_SYMBOLS, FT_CODEC_RAW, (uint32_t)used, &v, 1);
			used = 0;
		}
		struct ft_string_entry *out = (struct ft_string_entry *)(buf + used);
		char *dst = (char *)(out + 1);
		size_t len = 0, room = 4000;
		for (const char *q = text + 3; *q && len + 200 < room;) {
			uintptr_t ip = (uintptr_t)strtoull(q, (char **)&q, 16);
			Dl_info where;
			if (dladdr((void *)(ip - 1), &where) && where.dli_fbase == self_base()) {
				if (*q == ',')
					q++;        /* the tracer's own frames: not the call site */
				continue;
			}
			if (len)
				dst[len++] = '\n';
			len += symbolise_frame(ip, dst + len, room - len);
			if (*q == ',')
				q++;
			else
				break;
		}
		dst[len++] = 0;
		out->id = e->id;
		out->len = (uint32_t)len;
		while (len & 7)
			dst[len++] = 0;
		used += sizeof *out + len;
	}
	if (used) {
		struct iovec v = { buf, used };
		ft_output_write_chunk(FT_CHUNK_SYMBOLS, FT_CODEC_RAW, (uint32_t)used, &v, 1);
	}
}

/* One chunk of type: one zstd frame when that is smaller, else raw
 * (STRINGS; MODULES, whose paths repeat their directories: a PyTorch
 * process's ~30 KB raw). */
static void write_packed(unsigned type, const void *data, size_t n)
{
	size_t z = ZSTD_compressCCtx(cctx, packed, packed_cap, data, n, ft_cfg.zstd_level);
	if (ZSTD_isError(z) || z >= n) {
		struct iovec v = { (void *)data, n };
		ft_output_write_chunk(type, FT_CODEC_RAW, (uint32_t)n, &v, 1);
	} else {
		struct iovec v = { packed, z };
		ft_output_write_chunk(type, FT_CODEC_ZSTD, (uint32_t)n, &v, 1);
	}
}

/* One STRINGS chunk of whole entries, then SYMBOLS for the stacks among
 * them. */
static void write_strings_chunk(const unsigned char *p, size_t n)
{
	write_packed(FT_CHUNK_STRINGS, p, n);
	write_symbols(p, n);
}

static void write_strings(void)
{
	const void *data;
	size_t n;
	while ((n = ft_strtab_pending(&strings_pos, &data)) > 0) {
		/* chunks of about 256 KiB, split at entry boundaries, one zstd
		 * frame each (paths repeat their directories: they compress well) */
		const unsigned char *p = data;
		while (n > 0) {
			size_t take = 0;
			while (take < n && take < (256u << 10)) {
				const struct ft_string_entry *e = (const void *)(p + take);
				take += sizeof *e + ((e->len + 7) & ~7u);
			}
			write_strings_chunk(p, take);
			p += take;
			n -= take;
		}
	}
}

/* A fork child's file: the inherited strings that the n slots from index
 * first of ring name and the file lacks, before the chunk that names them. */
static void write_inherited(const struct ft_rec *ring, uint64_t mask, uint64_t first, uint64_t n)
{
	static unsigned char buf[64 << 10];
	size_t k;
	while ((k = ft_strrefs_collect(ring, mask, first, n, buf, sizeof buf)) > 0)
		write_strings_chunk(buf, k);
}

static void write_thread_info(struct ft_thread *t)
{
	struct ft_thread_info ti;
	memset(&ti, 0, sizeof ti);
	ti.tid = t->tid;
	ti.flags = t->tid == ft_pid ? 1 : 0;
	atomic_store_explicit(&t->renamed, 0, memory_order_relaxed);
	uint64_t w[2] = { atomic_load_explicit(&t->name[0], memory_order_acquire),
			  atomic_load_explicit(&t->name[1], memory_order_acquire) };
	memcpy(ti.name, w, 15);         /* ti.name[15..] stay 0 */
	uint64_t pw[6];
	for (int i = 0; i < 6; i++)
		pw[i] = atomic_load_explicit(&t->py_name[i], memory_order_acquire);
	memcpy(ti.py_name, pw, sizeof ti.py_name - 1);
	struct iovec v = { &ti, sizeof ti };
	ft_output_write_chunk(FT_CHUNK_THREAD, FT_CODEC_RAW, sizeof ti, &v, 1);
	t->named = 1;
}

/* How many slots from tail, at most max, end on a record boundary. */
static uint64_t whole_records(struct ft_thread *t, uint64_t tail, uint64_t avail, uint64_t max)
{
	if (avail <= max)
		return avail;
	uint64_t n = 0;
	while (n < avail) {
		unsigned k = t->ring[(tail + n) & t->mask].nslots;
		if (k == 0)
			k = 1;
		if (n + k > max)
			break;
		n += k;
	}
	return n ? n : avail < max ? avail : max;
}

/* Copies [tail, tail+n) of t's ring into dst, unwrapping. */
static void copy_out(struct ft_thread *t, uint64_t tail, uint64_t n, unsigned char *dst)
{
	uint64_t cap = t->mask + 1;
	uint64_t first = tail & t->mask;
	uint64_t k = n < cap - first ? n : cap - first;
	memcpy(dst, &t->ring[first], k * FT_SLOT_SIZE);
	if (k < n)
		memcpy(dst + k * FT_SLOT_SIZE, &t->ring[0], (n - k) * FT_SLOT_SIZE);
}

static void prefix_for(struct ft_thread *t, uint64_t tail, uint64_t n,
		       struct ft_events_prefix *pre)
{
	memset(pre, 0, sizeof *pre);
	pre->tid = t->tid;
	pre->nslots = (uint32_t)n;
	pre->first_slot = tail;
	pre->lost_total = atomic_load_explicit(&t->lost, memory_order_relaxed);
	pre->stream = t->stream;
	t->lost_written = pre->lost_total;
}

/* Compressed drain of one ring (flusher thread). Called holding the flush
 * lock; the lock is let go while zstd runs, and held only to take the
 * slots (strings first) and to write the chunk. If another writer (an
 * exit path, exec) drained those slots meanwhile, the chunk is dropped:
 * they are in the file already. */
static void drain_ring(struct ft_thread *t, int let_go)
{
	for (;;) {
		uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
		uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
		uint64_t lost = atomic_load_explicit(&t->lost, memory_order_relaxed);
		/* a thread named with no record yet (a Python thread,
		 * ft_thread_set_py_name) is written all the same */
		if (!t->named || atomic_load_explicit(&t->renamed, memory_order_acquire))
			write_thread_info(t);
		if (head == tail && lost == t->lost_written)
			return;
		write_strings();
		uint64_t n = whole_records(t, tail, head - tail, stage_slots);
		struct ft_events_prefix pre;
		prefix_for(t, tail, n, &pre);
		copy_out(t, tail, n, stage);
		ft_flight_scan((const struct ft_rec *)stage, n);
		write_inherited((const struct ft_rec *)stage, ~0ull, 0, n);
		if (let_go) {
			atomic_store(&compressing, 1);
			ft_flush_unlock();
		}
		ft_shuffle_slots(stage, shuffled + sizeof pre, n);
		memcpy(shuffled, &pre, sizeof pre);
		size_t raw = sizeof pre + n * FT_SLOT_SIZE;
		size_t z = ZSTD_compressCCtx(cctx, packed, packed_cap, shuffled, raw,
					     ft_cfg.zstd_level);
		if (let_go) {
			ft_flush_lock(-1);
			atomic_store(&compressing, 0);
			if (atomic_load(&t->tail) != tail)
				continue;       /* drained beside us: already written */
		}
		int w;
		if (ZSTD_isError(z)) {
			struct iovec v[2] = { { &pre, sizeof pre },
					      { stage, n * FT_SLOT_SIZE } };
			w = ft_output_write_chunk(FT_CHUNK_EVENTS, FT_CODEC_RAW, (uint32_t)raw, v, 2);
		} else {
			struct iovec v = { packed, z };
			w = ft_output_write_chunk(FT_CHUNK_EVENTS, FT_CODEC_ZSTD_SHUFFLE,
						  (uint32_t)raw, &v, 1);
		}
		atomic_fetch_add(w == 0 ? &ft_records_written : &ft_records_unwritten, n);
		atomic_store_explicit(&t->tail, tail + n, memory_order_release);
		if (tail + n == head)
			return;
	}
}

/* ---- CPU samples: each traced thread's CPU time at every drain ---- */

struct cpu_batch {
	struct ft_cpu_sample s[64];
	unsigned n;
};

static void cpu_batch_write(struct cpu_batch *b)
{
	if (!b->n)
		return;
	struct iovec v = { b->s, b->n * sizeof b->s[0] };
	ft_output_write_chunk(FT_CHUNK_CPU, FT_CODEC_RAW, (uint32_t)v.iov_len, &v, 1);
	b->n = 0;
}

/* One sample of t (state st) into b: a live thread's CPU clock read by its
 * tid (the clockid pthread_getcpuclockid makes: no descriptor, no /proc,
 * async-signal-safe), an exited one's value from its exit. Called for
 * each thread by every drain (flusher cycle, exit paths). */
static void cpu_sample(struct ft_thread *t, int st, struct cpu_batch *b)
{
	struct ft_cpu_sample *s = &b->s[b->n];
	memset(s, 0, sizeof *s);
	s->tid = t->tid;
	if (st == FT_SLOT_EXITED) {
		if (!t->exit_ticks)
			return;
		s->ticks = t->exit_ticks;
		s->cpu_ns = t->exit_cpu_ns;
	} else {
		struct timespec ts;
		clockid_t id = (clockid_t)((~(unsigned)t->tid) << 3) | 6;  /* per thread, SCHED */
		if (syscall(SYS_clock_gettime, id, &ts) != 0)
			return;                 /* gone meanwhile: its exit sample comes */
		s->ticks = ft_now();
		s->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	if (++b->n == sizeof b->s / sizeof b->s[0])
		cpu_batch_write(b);
}

/* Threads the program made (pthread_create, shim/thread.c), sampled as
 * well: a thread that never made a traced call (a loader spinning on the
 * CPU, a pool) has no ring, and its CPU time is what tells preprocessing
 * from waiting. Each place holds the tid, when the thread started (its CPU
 * time then is 0) and, once its start routine returned, its CPU time at
 * the end; the drains write those as samples too. A place is given up
 * after the end sample, or when the thread's clock is gone (it left by
 * pthread_exit: its last sample is then the drain's before). */
#define FT_CPU_TIDS 1024
static struct cpu_made {
	_Atomic int32_t tid;
	int start_written;               /* drains only, under the flush lock */
	uint64_t start_ticks;
	_Atomic uint64_t end_ticks;
	uint64_t end_cpu_ns;
	uint64_t end_majflt;             /* its major faults then (a file mapped) */
	int faults_seen;                 /* drains only: a fault sample taken */
} made[FT_CPU_TIDS];
static _Atomic int32_t flusher_tid;

int ft_cpu_track(int32_t tid)
{
	for (int i = 0; i < FT_CPU_TIDS; i++) {
		int32_t none = 0;
		struct cpu_made *m = &made[i];
		if (atomic_load_explicit(&m->tid, memory_order_relaxed) != 0 ||
		    !atomic_compare_exchange_strong(&m->tid, &none, -1))
			continue;
		m->start_written = 0;
		m->faults_seen = 0;
		m->start_ticks = ft_now();
		atomic_store(&m->end_ticks, 0);
		atomic_store_explicit(&m->tid, tid, memory_order_release);
		return i;
	}
	return -1;
}

void ft_cpu_track_end(int i)
{
	struct timespec ts;
	if (i < 0 || syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	made[i].end_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	made[i].end_majflt = ft_faults_own();
	atomic_store_explicit(&made[i].end_ticks, ft_now(), memory_order_release);
}

void ft_cpu_tids_after_fork_child(void)
{
	for (int i = 0; i < FT_CPU_TIDS; i++)
		atomic_store_explicit(&made[i].tid, 0, memory_order_relaxed);
	atomic_store(&flusher_tid, 0);
}

static int has_ring(int32_t tid, unsigned hw)
{
	for (unsigned i = 0; i < hw; i++)
		if (ft_threads[i].tid == tid &&
		    atomic_load_explicit(&ft_threads[i].state, memory_order_acquire) == FT_SLOT_LIVE)
			return 1;
	return 0;
}

static void cpu_put(struct cpu_batch *b, int32_t tid, uint64_t ticks, uint64_t cpu_ns)
{
	struct ft_cpu_sample *s = &b->s[b->n];
	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->ticks = ticks;
	s->cpu_ns = cpu_ns;
	if (++b->n == sizeof b->s / sizeof b->s[0])
		cpu_batch_write(b);
}

/* The major page faults of those threads that have no ring (a loader
 * spinning on mapped data; faults.c samples the others): before
 * cpu_sample_made, which gives a place up at its end sample */
static void faults_made(struct ft_fault_batch *fb, int flusher)
{
	unsigned hw = atomic_load(&ft_threads_hw);
	int32_t self = atomic_load(&flusher_tid);
	for (int i = 0; i < FT_CPU_TIDS; i++) {
		struct cpu_made *m = &made[i];
		int32_t tid = atomic_load_explicit(&m->tid, memory_order_acquire);
		if (tid <= 0 || tid == self || has_ring(tid, hw))
			continue;
		uint64_t end = atomic_load_explicit(&m->end_ticks, memory_order_acquire);
		ft_faults_made(fb, tid, m->start_ticks, &m->faults_seen, end, m->end_majflt, flusher);
	}
}

/* The start samples of the threads the program made since the last
 * cycle: CPU time 0 and run-queue delay 0 (schedstat counts from the
 * thread's creation), so a thread that lived through one sample only
 * still has the growth up to it. Before the cycle's other samples: the
 * reader keeps a thread's samples in time order. */
static void made_starts(struct cpu_batch *b, struct ft_sched_batch *sb)
{
	int32_t self = atomic_load(&flusher_tid);
	for (int i = 0; i < FT_CPU_TIDS; i++) {
		struct cpu_made *m = &made[i];
		int32_t tid = atomic_load_explicit(&m->tid, memory_order_acquire);
		if (tid <= 0 || tid == self || m->start_written)
			continue;
		cpu_put(b, tid, m->start_ticks, 0);
		ft_sched_add(sb, tid, m->start_ticks, 0);
		m->start_written = 1;
	}
}

static void cpu_sample_made(struct cpu_batch *b)
{
	unsigned hw = atomic_load(&ft_threads_hw);
	int32_t self = atomic_load(&flusher_tid);
	for (int i = 0; i < FT_CPU_TIDS; i++) {
		struct cpu_made *m = &made[i];
		int32_t tid = atomic_load_explicit(&m->tid, memory_order_acquire);
		if (tid <= 0 || tid == self || !m->start_written)
			continue;               /* made since made_starts: the next cycle */
		uint64_t end = atomic_load_explicit(&m->end_ticks, memory_order_acquire);
		if (end) {
			cpu_put(b, tid, end, m->end_cpu_ns);
			atomic_store(&m->tid, 0);
			continue;
		}
		if (has_ring(tid, hw))
			continue;               /* cpu_sample() reads it */
		struct timespec ts;
		clockid_t id = (clockid_t)((~(unsigned)tid) << 3) | 6;
		if (syscall(SYS_clock_gettime, id, &ts) != 0) {
			atomic_store(&m->tid, 0);
			continue;
		}
		cpu_put(b, tid, ft_now(), (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	}
}

static void write_clock(void)
{
	struct ft_clock_pair c;
	ft_clock_sample(&c);
	ft_clock_written(&c);
	last_clock_ns = c.mono_ns;
	struct iovec v = { &c, sizeof c };
	ft_output_write_chunk(FT_CHUNK_CLOCK, FT_CODEC_RAW, sizeof c, &v, 1);
}

/* Has any ring something to write: records, losses, a name? */
static int rings_moved(unsigned hw)
{
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		if (st != FT_SLOT_LIVE && st != FT_SLOT_EXITED)
			continue;
		if (st == FT_SLOT_EXITED || !t->named || atomic_load(&t->leaving) ||
		    atomic_load_explicit(&t->renamed, memory_order_acquire) ||
		    atomic_load_explicit(&t->head, memory_order_acquire) !=
		    atomic_load_explicit(&t->tail, memory_order_relaxed) ||
		    atomic_load_explicit(&t->lost, memory_order_relaxed) != t->lost_written)
			return 1;
	}
	return 0;
}

/* Has any ring records or losses not yet written? */
static int rings_hold(unsigned hw)
{
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		if ((st == FT_SLOT_LIVE || st == FT_SLOT_EXITED) &&
		    (atomic_load_explicit(&t->head, memory_order_acquire) !=
		     atomic_load_explicit(&t->tail, memory_order_relaxed) ||
		     atomic_load_explicit(&t->lost, memory_order_relaxed) != t->lost_written))
			return 1;
	}
	return 0;
}

/* Between capture windows (capture.c): nothing is written, not even a
 * thread's name or a sample; the slots of threads gone come back. Returns
 * how many threads are leaving, as flush_cycle does. */
static unsigned uncaptured_cycle(unsigned hw)
{
	unsigned leaving = 0;
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		if (st == FT_SLOT_LIVE && ft_thread_gone(t)) {
			st = FT_SLOT_EXITED;
			atomic_store_explicit(&t->state, st, memory_order_release);
		} else if (st == FT_SLOT_LIVE && atomic_load(&t->leaving)) {
			leaving++;
		}
		if (st == FT_SLOT_EXITED)
			ft_ring_recycle(t);
	}
	return leaving;
}

/* The capture windows' starts and stops since the last cycle (WINDOW
 * chunks); 1 if there were any */
static int write_window_marks(void)
{
	struct ft_window_mark m[64];
	size_t n;
	int any = 0;
	while ((n = ft_capture_marks(m, sizeof m / sizeof m[0])) > 0) {
		struct iovec v = { m, n * sizeof m[0] };
		ft_output_write_chunk(FT_CHUNK_WINDOW, FT_CODEC_RAW, (uint32_t)v.iov_len, &v, 1);
		any = 1;
	}
	return any;
}

/* An idle cycle's samples: the live threads' CPU time, run-queue delay
 * and page faults, the process's page faults */
static void sample_only(unsigned hw)
{
	struct cpu_batch cpu;
	cpu.n = 0;
	struct ft_sched_batch sched;
	sched.n = 0;
	struct ft_fault_batch flt;
	int faults = ft_faults_begin(&flt);
	made_starts(&cpu, &sched);
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		if (atomic_load_explicit(&t->state, memory_order_acquire) == FT_SLOT_LIVE) {
			cpu_sample(t, FT_SLOT_LIVE, &cpu);
			ft_sched_sample(&sched, t);
			if (faults)
				ft_faults_thread(&flt, t, FT_SLOT_LIVE, 1);
		}
	}
	if (faults)
		faults_made(&flt, 1);
	cpu_sample_made(&cpu);
	cpu_batch_write(&cpu);
	ft_faults_write(&flt);
	ft_sched_write(&sched);
}

/* One cycle, called holding the flush lock; let_go: the lock may be let
 * go while zstd runs (the flusher thread; not the final cycle at exit).
 * A live slot whose thread is gone becomes EXITED here, before its last
 * drain (ring.c, ft_thread_gone). Returns how many threads said they are
 * leaving and still exist: the flusher looks again soon, so that their
 * rings come back for new threads. */
static unsigned flush_cycle(int let_go)
{
	unsigned hw = atomic_load(&ft_threads_hw), leaving = 0;
	struct cpu_batch cpu;
	cpu.n = 0;
	struct ft_sched_batch sched;
	sched.n = 0;
	struct ft_fault_batch flt;
	flt.n = 0;
	struct ft_clock_pair parted;
	if (write_window_marks())
		write_clock();                  /* a pair at each window's edge */
	if (!ft_capture_on() && !rings_hold(hw))
		return uncaptured_cycle(hw);
	if (ft_clock_check(&parted)) {          /* the ticks are given up: the pair says so */
		struct iovec v = { &parted, sizeof parted };
		ft_output_write_chunk(FT_CHUNK_CLOCK, FT_CODEC_RAW, sizeof parted, &v, 1);
		last_clock_ns = parted.mono_ns;
	}
	/* A cycle of the flusher thread that finds no ring moved drains
	 * nothing and writes no strings, but takes the samples (CPU time tells
	 * a thread busy without traced calls from a waiting one; page faults
	 * are a mapped-data reader's only trace) and looks at the loader's
	 * count of objects (a library dlopened without a traced call); the
	 * cycles at exit always do it all. */
	if (let_go && !rings_moved(hw)) {
		sample_only(hw);
		ft_modules_write(write_packed);
		goto clock;
	}
	/* a thread's faults are read in the flusher's own table only (let_go:
	 * the flusher thread); the exit's cycle has the leavers' own counts */
	int faults = ft_faults_begin(&flt);
	made_starts(&cpu, &sched);
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		if (st != FT_SLOT_LIVE && st != FT_SLOT_EXITED)
			continue;
		if (st == FT_SLOT_LIVE && ft_thread_gone(t)) {
			st = FT_SLOT_EXITED;
			atomic_store_explicit(&t->state, st, memory_order_release);
		} else if (st == FT_SLOT_LIVE && atomic_load(&t->leaving)) {
			leaving++;
		}
		drain_ring(t, let_go);
		cpu_sample(t, st, &cpu);
		if (st == FT_SLOT_LIVE)
			ft_sched_sample(&sched, t);
		if (faults)
			ft_faults_thread(&flt, t, st, let_go);
		if (st == FT_SLOT_EXITED)
			ft_ring_recycle(t);
	}
	if (faults)
		faults_made(&flt, let_go);
	cpu_sample_made(&cpu);
	cpu_batch_write(&cpu);
	ft_faults_write(&flt);
	ft_sched_write(&sched);
	write_strings();
	ft_modules_write(write_packed);
clock:
	/* a calibration pair now and then: the longest span gives the rate */
	if (ft_mono_ns() - last_clock_ns > 1000000000ull)
		write_clock();
	return leaving;
}

/* Stage and shuffled, large enough for the ring with the most records
 * waiting (flusher thread, not holding the flush lock: no allocation under
 * it); on failure the old ones stay, and drains take more chunks. */
static void stage_fit(void)
{
	unsigned hw = atomic_load(&ft_threads_hw);
	uint64_t want = 0;
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		if (st != FT_SLOT_LIVE && st != FT_SLOT_EXITED)
			continue;
		uint64_t n = atomic_load_explicit(&t->head, memory_order_acquire) -
			     atomic_load_explicit(&t->tail, memory_order_relaxed);
		if (n > want)
			want = n;
	}
	if (want <= stage_slots || stage_slots >= chunk_slots)
		return;
	uint64_t cap = stage_slots;
	while (cap < want && cap < chunk_slots)
		cap *= 2;
	if (cap > chunk_slots)
		cap = chunk_slots;
	unsigned char *st = malloc(cap * FT_SLOT_SIZE);
	unsigned char *sh = malloc(sizeof(struct ft_events_prefix) + cap * FT_SLOT_SIZE);
	if (!st || !sh) {
		free(st);
		free(sh);
		return;
	}
	free(stage);
	free(shuffled);
	stage = st;
	shuffled = sh;
	stage_slots = cap;
}

/* The pages the program's threads are about to write, faulted in by the
 * flusher (not holding the flush lock), so that the hooks take no page
 * fault of ours: the string table's first part, the live rings' slots
 * ahead of their heads (ring.c). */
static void prefault(void)
{
	unsigned hw = atomic_load(&ft_threads_hw);
	ft_strtab_prefault();
	for (unsigned i = 0; i < hw; i++)
		if (atomic_load_explicit(&ft_threads[i].state, memory_order_acquire) == FT_SLOT_LIVE)
			ft_ring_populate(&ft_threads[i]);
}

/* The GPU's timing events (ft_shim.gpu_poll): polled on every wake, and
 * every GPU_POLL_MS while a context is sampled, between the rings' drains. */
#define GPU_POLL_MS 10
static void gpu_poll(void)
{
	static struct ft_gpu_sample buf[256];
	if (!ft_shim.gpu_poll || !ft_cfg.gpu_ms)
		return;
	size_t n = ft_shim.gpu_poll(buf, sizeof buf);
	if (!n)
		return;
	ft_flush_lock(-1);
	struct iovec v = { buf, n };
	ft_output_write_chunk(FT_CHUNK_GPU, FT_CODEC_RAW, (uint32_t)n, &v, 1);
	ft_flush_unlock();
}

/* Sleeps wait_ms or until woken (ft_wake_seq moves from seq), polling the
 * GPU's events meanwhile. */
static void gpu_wait(uint32_t seq, long wait_ms)
{
	uint64_t until = ft_mono_ns() + (uint64_t)wait_ms * 1000000u;
	for (;;) {
		long slice = wait_ms;
		if (ft_shim.gpu_active && ft_cfg.gpu_ms && ft_shim.gpu_active() && slice > GPU_POLL_MS)
			slice = GPU_POLL_MS;
		struct timespec ts = { slice / 1000, (slice % 1000) * 1000000L };
		syscall(SYS_futex, &ft_wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
		gpu_poll();
		uint64_t now = ft_mono_ns();
		if (atomic_load(&flusher_stop) || atomic_load(&ft_wake_seq) != seq || now >= until)
			return;
		wait_ms = (long)((until - now) / 1000000u) + 1;
	}
}

/* zstd's context in a workspace of ours, made once for any chunk at the
 * configured level (ZSTD_estimateCCtxSize): a context that allocates as
 * it goes makes its workspace again as the chunks' sizes vary (and after
 * 128 chunks that need less), faulting its pages again each time. Its
 * pages come as chunks need them, each once (a process that writes small
 * chunks keeps few). Else a context of zstd's own. */
static ZSTD_CCtx *make_cctx(void)
{
	size_t bytes = ZSTD_estimateCCtxSize(ft_cfg.zstd_level);
	void *p = ft_map_anon(bytes, 0);
	ZSTD_CCtx *c = p ? ZSTD_initStaticCCtx(p, bytes) : NULL;
	if (c)
		return c;
	if (p)
		munmap(p, bytes);
	return ZSTD_createCCtx();
}

/* The flusher's first buffers faulted in at once, by the flusher as it
 * first starts, not by the program's thread that started it. A fork
 * child's copies fault as written: one that execs at once copies none. */
static void warm_up(void)
{
	if (warm)
		return;
	warm = 1;
	ft_populate(stage, stage_slots * FT_SLOT_SIZE);
	ft_populate(shuffled, sizeof(struct ft_events_prefix) + stage_slots * FT_SLOT_SIZE);
	ft_populate(packed, ZSTD_compressBound(sizeof(struct ft_events_prefix) +
					       stage_slots * FT_SLOT_SIZE));
}

static void *flusher_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	ft_tls_notrace = 1;
	ft_self = &ft_thread_refused;
	atomic_store(&flusher_tid, (int32_t)syscall(SYS_gettid));
	syscall(SYS_prctl, PR_SET_NAME, "feedtrace-flush", 0, 0, 0);
	ft_output_own_table();
	ft_flight_map();
	atomic_store(&flusher_settled, 1);
	warm_up();

	/* A second calibration pair 20 ms in, so short runs get a rate too.
	 * The rings are drained meanwhile: sleeping those 20 ms first lost
	 * every record past a full ring (most of a busy start-up). */
	last_clock_ns = ft_mono_ns();
	uint64_t early_pair_at = last_clock_ns + 20000000ull;

	while (!atomic_load(&flusher_stop)) {
		uint32_t seq = atomic_load(&ft_wake_seq);
		ft_capture_tick();
		prefault();
		stage_fit();
		ft_flush_lock(-1);
		unsigned leaving = flush_cycle(1);
		if (early_pair_at && ft_mono_ns() >= early_pair_at) {
			write_clock();
			early_pair_at = 0;
		}
		int detail, why = ft_flight_poll(&detail);
		if (why) {              /* what was recorded before the request: in */
			flush_cycle(1);
			write_clock();
			ft_output_flight_dump(why, detail);
		}
		ft_flush_unlock();
		if (atomic_load(&flusher_stop))
			break;
		long wait_ms = leaving ? 1 : (long)ft_cfg.flush_ms;
		long capture_ms = ft_capture_wait_ms();
		if (capture_ms >= 0 && capture_ms < wait_ms)
			wait_ms = capture_ms;
		if (early_pair_at) {
			uint64_t now = ft_mono_ns();
			long left = now < early_pair_at ?
				(long)((early_pair_at - now) / 1000000u) + 1 : 0;
			if (left < wait_ms)
				wait_ms = left;
		}
		gpu_wait(seq, wait_ms);
	}
	count_flusher_again();
	return NULL;
}

/* A sanitizer's allocator is not fork-safe (glibc's is: fork takes its
 * locks): this library built with one, or a program built with one (its
 * runtime loaded, preloaded or linked) */
int ft_alloc_fork_unsafe;

static int sanitizer_runtime(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 1;
#else
	static const char *const init[] = { "__asan_init", "__tsan_init", "__msan_init",
					    "__hwasan_init", "__lsan_do_leak_check" };
	for (size_t i = 0; ft_real_dlsym && i < sizeof init / sizeof init[0]; i++)
		if (ft_real_dlsym(RTLD_DEFAULT, init[i]))
			return 1;
	return 0;
#endif
}

int ft_flusher_start(void)
{
	if (!cctx) {
		uint64_t quarter = (uint64_t)ft_cfg.ring_kb * 1024 / FT_SLOT_SIZE / 4;
		chunk_slots = quarter < FT_MAX_CHUNK_SLOTS ? quarter : FT_MAX_CHUNK_SLOTS;
		if (chunk_slots < 256)
			chunk_slots = 256;      /* a whole record of the most slots */
		stage_slots = chunk_slots < STAGE_FIRST_SLOTS ? chunk_slots : STAGE_FIRST_SLOTS;
		size_t raw = sizeof(struct ft_events_prefix) + stage_slots * FT_SLOT_SIZE;
		size_t most = sizeof(struct ft_events_prefix) + chunk_slots * FT_SLOT_SIZE;
		stage = malloc(stage_slots * FT_SLOT_SIZE);
		shuffled = malloc(raw);
		/* for the largest chunk, the strings' (256 KiB and an entry)
		 * included; its pages come as compressed output needs them */
		packed_cap = ZSTD_compressBound(most > (264u << 10) ? most : (264u << 10));
		packed = malloc(packed_cap);
		cctx = make_cctx();
		if (!stage || !shuffled || !packed || !cctx)
			return -1;
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		ft_dl_boot();   /* libc's own dlvsym: the exported one is a wrapper */
		glibc_nthreads = ft_real_dlvsym ?
			ft_real_dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE") : NULL;
		ft_alloc_fork_unsafe = sanitizer_runtime();
	}
	atomic_store(&flusher_stop, 0);
	atomic_store(&flusher_settled, 0);
	/* Created with every signal blocked, so that no process-directed
	 * signal is ever handled on it, not even before flusher_main runs. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = ft_shim.pthread_create ? ft_shim.pthread_create(&flusher, NULL, flusher_main, NULL)
				       : ENOSYS;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -1;
	if (glibc_nthreads)
		__atomic_fetch_sub(glibc_nthreads, 1, __ATOMIC_SEQ_CST);
	atomic_store(&flusher_running, 1);
	return 0;
}

/* Normal end, or a pause (lifecycle.c, ft_alone_begin): the flusher
 * thread exits, then a last compressed cycle. Returns holding the flush
 * lock (taken within 2 s). */
void ft_flusher_stop(void)
{
	if (atomic_exchange(&flusher_running, 0)) {
		atomic_store(&flusher_stop, 1);
		ft_flusher_wake();
		pthread_join(flusher, NULL);
		int32_t tid = atomic_load(&flusher_tid);    /* its first act */
		/* pthread_join returns when the kernel clears the thread's tid,
		 * before the thread has left the thread group (closing its own
		 * table of descriptors comes after): a caller that needs this
		 * process single-threaded (unshare(CLONE_NEWUSER)) waits for
		 * that too, 1 s at most */
		pid_t pid = (pid_t)syscall(SYS_getpid);
		struct timespec brief = { 0, 20000 };
		for (int i = 0; tid > 0 && i < 50000 &&
		     syscall(SYS_tgkill, pid, tid, 0) == 0; i++)
			nanosleep(&brief, NULL);
	}
	ft_flush_lock(2000);
	flush_cycle(0);
	if (ft_capture_ever())
		write_clock();
}

/* fork child: the flusher thread did not come along; its buffers did. */
void ft_flusher_forget(void)
{
	atomic_store(&flusher_running, 0);
	atomic_store(&compressing, 0);
	strings_pos = ft_strrefs_start();   /* new strings; inherited ones as named */
	ft_modules_after_fork_child();      /* the child's file names them again, from the cache */
	ft_faults_after_fork_child();       /* the child's counts start at 0 */
	last_clock_ns = 0;
	ft_flush_lock_reset();
}

/* Raw drain from any context, async-signal-safe: no malloc, no zstd.
 * The caller holds the flush lock. */
void ft_flush_all_raw(void)
{
	if (!ft_capture_ever())
		return;                 /* a process that never captured: its header and END */
	write_window_marks();
	ft_modules_write_cached();
	unsigned hw = atomic_load(&ft_threads_hw);
	const void *sdata;
	size_t sn;
	struct cpu_batch cpu;
	cpu.n = 0;
	/* no run-queue reads here, nor live threads' faults: this drain
	 * runs on a program thread, where their files would take the
	 * program's descriptors (the leavers' own fault counts are written;
	 * the made threads' start points, which read nothing, are) */
	struct ft_sched_batch sched;
	sched.n = 0;
	struct ft_fault_batch flt;
	int faults = ft_faults_begin(&flt);
	made_starts(&cpu, &sched);
	for (unsigned i = 0; i < hw; i++) {
		struct ft_thread *t = &ft_threads[i];
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		if (st != FT_SLOT_LIVE && st != FT_SLOT_EXITED)
			continue;
		cpu_sample(t, st, &cpu);
		if (faults)
			ft_faults_thread(&flt, t, st, 0);
		uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
		if (!t->named || atomic_load_explicit(&t->renamed, memory_order_acquire))
			write_thread_info(t);
		while ((sn = ft_strtab_pending(&strings_pos, &sdata)) > 0) {
			struct iovec v = { (void *)sdata, sn };
			ft_output_write_chunk(FT_CHUNK_STRINGS, FT_CODEC_RAW, (uint32_t)sn, &v, 1);
		}
		for (;;) {
			uint64_t tail = atomic_load(&t->tail);
			uint64_t lost = atomic_load(&t->lost);
			if (tail >= head && lost == t->lost_written)
				break;
			uint64_t n = whole_records(t, tail, head - tail, FT_MAX_CHUNK_SLOTS);
			static unsigned char inherited[16 << 10];
			size_t got;
			while ((got = ft_strrefs_collect(t->ring, t->mask, tail, n, inherited,
							 sizeof inherited)) > 0) {
				struct iovec v = { inherited, got };
				ft_output_write_chunk(FT_CHUNK_STRINGS, FT_CODEC_RAW, (uint32_t)got, &v, 1);
			}
			struct ft_events_prefix pre;
			prefix_for(t, tail, n, &pre);
			uint64_t cap = t->mask + 1, first = tail & t->mask;
			uint64_t k = n < cap - first ? n : cap - first;
			struct iovec v[3] = {
				{ &pre, sizeof pre },
				{ &t->ring[first], k * FT_SLOT_SIZE },
				{ &t->ring[0], (n - k) * FT_SLOT_SIZE },
			};
			int w = ft_output_write_chunk(FT_CHUNK_EVENTS, FT_CODEC_RAW,
						      (uint32_t)(sizeof pre + n * FT_SLOT_SIZE), v, 3);
			atomic_fetch_add(w == 0 ? &ft_records_written : &ft_records_unwritten, n);
			atomic_store(&t->tail, tail + n);
			if (n == 0)
				break;
		}
	}
	if (faults)
		faults_made(&flt, 0);
	cpu_sample_made(&cpu);
	cpu_batch_write(&cpu);
	ft_faults_write(&flt);
	ft_sched_write(&sched);
	while ((sn = ft_strtab_pending(&strings_pos, &sdata)) > 0) {
		struct iovec v = { (void *)sdata, sn };
		ft_output_write_chunk(FT_CHUNK_STRINGS, FT_CODEC_RAW, (uint32_t)sn, &v, 1);
	}
	struct ft_clock_pair c;
	ft_clock_sample(&c);
	ft_clock_written(&c);
	struct iovec cv = { &c, sizeof c };
	ft_output_write_chunk(FT_CHUNK_CLOCK, FT_CODEC_RAW, sizeof c, &cv, 1);
}

void ft_write_end(int reason, int status)
{
	struct ft_end_info e;
	memset(&e, 0, sizeof e);
	e.reason = (uint32_t)reason;
	e.status = status;
	e.records = atomic_load(&ft_records_written);
	/* lost: dropped at full rings, and drained but not written (disk full) */
	e.lost = atomic_load(&ft_lost_recycled) + atomic_load(&ft_records_unwritten);
	unsigned hw = atomic_load(&ft_threads_hw);
	for (unsigned i = 0; i < hw; i++)
		e.lost += atomic_load(&ft_threads[i].lost);
	e.threads = atomic_load(&ft_threads_seen);
	e.threads_untraced = atomic_load(&ft_threads_untraced);
	e.strings_lost = atomic_load(&ft_strings_lost);
	e.handler_lost = atomic_load(&ft_handler_lost);
	e.shared_lost = atomic_load(&ft_shared_lost);
	struct iovec v = { &e, sizeof e };
	ft_output_write_last(FT_CHUNK_END, FT_CODEC_RAW, sizeof e, &v, 1);
}
