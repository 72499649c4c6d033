/*
 * faults.c: major page faults, the I/O of data read through memory maps
 * (numpy.memmap, Arrow, LMDB), which no call shows. Once the process has
 * mapped a regular file (ft_faults_watch, from the mmap wrapper), every
 * drain takes the process's count (getrusage: all its threads, the
 * exited ones included) and writes it as a FAULTS sample of tid 0, and
 * the flusher's cycles add each thread's own count (docs/FORMAT.md).
 * The mapping call takes the first counts itself, the baselines: the
 * process's and its own thread's (getrusage of the thread); faults before
 * them (code pages at start-up) are not the mapped data's.
 *
 * A thread's count is the majflt field of /proc/self/task/TID/stat, read
 * by the flusher only, in its own table of descriptors (output.c), as the
 * run-queue delay is (runq.c): a program thread opening it would take the
 * program's lowest free descriptor (docs/RELIABILITY.md). So the exit
 * paths' drains, on program threads, write the process's count and the
 * draining thread's own (getrusage of the thread: no descriptor), and a
 * thread as it leaves notes its own count likewise, its last sample.
 * While the kernel's delay accounting is on (/proc/sys/kernel/
 * task_delayacct, read by the flusher once per cycle: it may be switched
 * while the program runs), the flusher's reads also take the stat line's
 * delayacct_blkio_ticks, the thread's block I/O wait (flag 2); getrusage
 * has no such figure, so no other sample carries it. A thread whose
 * ring was given before the mapping has its first sample as its baseline;
 * one that came after counts from its start. The threads the program
 * made that have no ring (flusher.c's places for CPU samples) are read
 * too (ft_faults_made). One system call per drain, a
 * few per thread per cycle, nothing on the hot path, nothing before a
 * file is mapped. A fork child counts from 0, the process and each
 * thread: no baseline.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "runq.h"

/* 0: no file mapped; -1: the mapping call setting the baselines; 1:
 * mapped, the baselines not written yet; 2: on */
static _Atomic int watch;
static struct ft_fault_sample base[2];   /* the mapping call's counts: process, thread */
static uint64_t watch_stream;            /* rings given before the mapping: streams up to it */

/* Each ring's owner, by slot: the flusher's state of its samples, and the
 * count the thread noted as it left (ft_faults_leaving) */
static struct {
	uint64_t stream;                 /* the owner sampled (flusher) */
	_Atomic uint64_t exit_stream;    /* the owner whose exit count is below */
	uint64_t exit_ticks, exit_majflt;
} per[FT_MAX_THREADS];

static int count(struct ft_fault_sample *s, int who, uint32_t flags)
{
	struct rusage ru;
	int e = errno;
	memset(s, 0, sizeof *s);
	s->ticks = ft_now();
	int ok = syscall(SYS_getrusage, who, &ru) == 0;
	errno = e;
	s->flags = flags;
	s->majflt = ok ? (uint64_t)ru.ru_majflt : 0;
	return ok;
}

void ft_faults_watch(void)
{
	int none = 0;
	struct ft_fault_sample s, own;
	if (atomic_load_explicit(&watch, memory_order_relaxed) != 0 ||
	    !count(&s, RUSAGE_SELF, FT_FAULTS_BASE))
		return;
	int have_own = count(&own, RUSAGE_THREAD, FT_FAULTS_BASE);
	own.tid = (int32_t)syscall(SYS_gettid);
	uint64_t given = ft_streams_given();
	if (!atomic_compare_exchange_strong(&watch, &none, -1))
		return;
	base[0] = s;
	base[1] = own;
	if (!have_own)
		base[1].tid = 0;         /* none: the process's stands alone */
	watch_stream = given;
	atomic_store(&watch, 1);
}

void ft_faults_after_fork_child(void)
{
	watch_stream = 0;                /* every thread counts from 0 */
	for (int i = 0; i < FT_MAX_THREADS; i++) {
		per[i].stream = 0;
		atomic_store_explicit(&per[i].exit_stream, 0, memory_order_relaxed);
	}
	if (atomic_load(&watch) != 0)
		atomic_store(&watch, 2);
}

void ft_faults_leaving(void)
{
	struct ft_thread *t;
	struct ft_fault_sample s;
	if (atomic_load_explicit(&watch, memory_order_acquire) <= 0 ||
	    !(t = ft_own_ring()) || !count(&s, RUSAGE_THREAD, 0))
		return;
	size_t i = (size_t)(t - ft_threads);
	if (i >= FT_MAX_THREADS)
		return;
	per[i].exit_ticks = s.ticks;
	per[i].exit_majflt = s.majflt;
	atomic_store_explicit(&per[i].exit_stream, t->stream, memory_order_release);
}

uint64_t ft_faults_own(void)
{
	struct ft_fault_sample s;
	if (atomic_load_explicit(&watch, memory_order_acquire) <= 0 ||
	    !count(&s, RUSAGE_THREAD, 0))
		return 0;
	return s.majflt;
}

static void put(struct ft_fault_batch *b, const struct ft_fault_sample *s)
{
	b->s[b->n] = *s;
	if (++b->n == sizeof b->s / sizeof b->s[0])
		ft_faults_write(b);
}

int ft_faults_begin(struct ft_fault_batch *b)
{
	b->n = 0;
	b->acct = -1;
	int st = atomic_load(&watch);
	if (st <= 0)
		return 0;
	if (st == 1) {
		put(b, &base[0]);
		if (base[1].tid)
			put(b, &base[1]);
	}
	struct ft_fault_sample s;
	if (count(&s, RUSAGE_SELF, 0))
		put(b, &s);
	return 1;
}

/* "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
 * majflt ...": majflt is the tenth field after the comm's closing
 * parenthesis (the comm may hold any byte, a parenthesis too: the last
 * one ends it), delayacct_blkio_ticks (field 42) the 40th */
static int stat_field(const char *p, int want, uint64_t *v)
{
	for (int field = 0; p && field <= want; field++) {
		if (*p != ' ')
			return -1;
		p++;
		if (field == want) {
			if (*p < '0' || *p > '9')
				return -1;
			for (*v = 0; *p >= '0' && *p <= '9'; p++)
				*v = *v * 10 + (uint64_t)(*p - '0');
			return 0;
		}
		while (*p && *p != ' ')
			p++;
	}
	return -1;
}

/* The kernel's delay accounting, on (1) or not (0): read by the flusher
 * once per cycle, at its first thread's stat (the sysctl may be switched
 * at any time, and a thread's block I/O wait grows only while it is on) */
static int delayacct_on(void)
{
	char c = 0;
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/sys/kernel/task_delayacct",
			  O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long got = syscall(SYS_read, (int)fd, &c, 1);
	syscall(SYS_close, (int)fd);
	return got == 1 && c == '1';
}

/* thread tid's major faults into s, and its block I/O wait with flag 2
 * when delay accounting is on: the flusher, in its own table */
static int thread_stat(struct ft_fault_batch *b, int32_t tid, struct ft_fault_sample *s)
{
	static uint64_t tick_ns;
	char buf[1024];
	if (b->acct < 0)
		b->acct = delayacct_on();
	int n = ft_task_read(tid, "stat", buf, sizeof buf);
	if (n <= 0)
		return -1;
	const char *p = NULL;
	for (int i = 0; i < n; i++)
		if (buf[i] == ')')
			p = buf + i + 1;
	if (stat_field(p, 9, &s->majflt) != 0)
		return -1;
	uint64_t ticks;
	if (b->acct && stat_field(p, 39, &ticks) == 0) {
		if (!tick_ns) {
			long hz = sysconf(_SC_CLK_TCK);
			tick_ns = hz > 0 ? 1000000000u / (uint64_t)hz : 10000000u;
		}
		s->blkio_ns = ticks * tick_ns;
		s->flags |= FT_FAULTS_DELAYACCT;
	}
	return 0;
}

void ft_faults_thread(struct ft_fault_batch *b, struct ft_thread *t, int st, int flusher)
{
	size_t i = (size_t)(t - ft_threads);
	if (atomic_load(&watch) <= 0 || i >= FT_MAX_THREADS)
		return;
	struct ft_fault_sample s;
	memset(&s, 0, sizeof s);
	s.tid = t->tid;
	if (st == FT_SLOT_EXITED) {
		if (atomic_load_explicit(&per[i].exit_stream, memory_order_acquire) != t->stream)
			return;
		s.ticks = per[i].exit_ticks;
		s.majflt = per[i].exit_majflt;
	} else if (flusher) {
		if (!ft_output_own_table_held() || thread_stat(b, t->tid, &s) != 0)
			return;
		s.ticks = ft_now();
	} else {
		/* a drain on a program thread: the caller's own count only */
		struct ft_fault_sample own;
		if (t != ft_own_ring() || !count(&own, RUSAGE_THREAD, 0))
			return;
		s.ticks = own.ticks;
		s.majflt = own.majflt;
	}
	if (per[i].stream != t->stream) {
		/* its first sample: a baseline if its ring came before the mapping */
		per[i].stream = t->stream;
		if (t->stream <= watch_stream)
			s.flags |= FT_FAULTS_BASE;
	}
	put(b, &s);
}

void ft_faults_write(struct ft_fault_batch *b)
{
	if (!b->n)
		return;
	struct iovec v = { b->s, b->n * sizeof b->s[0] };
	ft_output_write_chunk(FT_CHUNK_FAULTS, FT_CODEC_RAW, (uint32_t)v.iov_len, &v, 1);
	b->n = 0;
	int one = 1;
	atomic_compare_exchange_strong(&watch, &one, 2);   /* the baselines are out */
}

void ft_faults_made(struct ft_fault_batch *b, int32_t tid, uint64_t start, int *seen,
		    uint64_t end, uint64_t end_majflt, int flusher)
{
	if (atomic_load(&watch) <= 0)
		return;
	struct ft_fault_sample s;
	memset(&s, 0, sizeof s);
	s.tid = tid;
	if (end) {
		s.ticks = end;
		s.majflt = end_majflt;
	} else if (!flusher || !ft_output_own_table_held() || thread_stat(b, tid, &s) != 0) {
		return;
	} else {
		s.ticks = ft_now();
	}
	if (!*seen) {
		/* started after the mapping: from 0 at its start; before: its
		 * first count is its baseline */
		*seen = 1;
		if ((int64_t)(start - base[0].ticks) > 0) {
			struct ft_fault_sample z = s;
			z.ticks = start;
			z.majflt = 0;
			z.blkio_ns = 0;
			if ((int64_t)(s.ticks - start) > 0)
				put(b, &z);
		} else {
			s.flags = FT_FAULTS_BASE;
		}
	}
	put(b, &s);
}
