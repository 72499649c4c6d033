/*
 * faults.c: major page faults, the I/O of data read through memory maps
 * (numpy.memmap, Arrow, LMDB), which no call shows. Once the process has
 * mapped a regular file (ft_faults_watch, from the mmap wrapper), every
 * drain takes the process's count (getrusage: all its threads, the
 * exited ones included) and writes it as a FAULTS sample of tid 0
 * (docs/FORMAT.md). The mapping call takes the first count itself, the
 * baseline: faults before it (code pages at start-up) are not the mapped
 * data's. A thread's own count would need /proc/self/task/TID/stat opened
 * beside the program, taking the lowest free descriptor under it (the
 * number a close(0); open() or a dup2 of the program expects:
 * docs/RELIABILITY.md), so it is not read. One system call per drain, no
 * descriptor, async-signal-safe (the exit paths sample too); nothing on
 * the hot path. A fork child counts from 0: no baseline of its own.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* 0: no file mapped; 1: mapped, the baseline not written yet; 2: on */
static _Atomic int watch;
static struct ft_fault_sample base;      /* the mapping call's count */

static int count(struct ft_fault_sample *s, uint32_t flags)
{
	struct rusage ru;
	int e = errno;
	memset(s, 0, sizeof *s);
	s->ticks = ft_now();
	int ok = syscall(SYS_getrusage, RUSAGE_SELF, &ru) == 0;
	errno = e;
	s->flags = flags;
	s->majflt = ok ? (uint64_t)ru.ru_majflt : 0;
	return ok;
}

void ft_faults_watch(void)
{
	int none = 0;
	struct ft_fault_sample s;
	if (atomic_load_explicit(&watch, memory_order_relaxed) != 0 ||
	    !count(&s, FT_FAULTS_BASE))
		return;
	if (!atomic_compare_exchange_strong(&watch, &none, 1))
		return;
	base = s;
}

void ft_faults_after_fork_child(void)
{
	if (atomic_load(&watch))
		atomic_store(&watch, 2);
}

void ft_faults_sample(void)
{
	int st = atomic_load(&watch);
	if (!st)
		return;
	struct ft_fault_sample s[2];
	int n = 0;
	if (st == 1)
		s[n++] = base;
	n += count(&s[n], 0);
	struct iovec v = { s, (size_t)n * sizeof s[0] };
	if (n)
		ft_output_write_chunk(FT_CHUNK_FAULTS, FT_CODEC_RAW, (uint32_t)v.iov_len, &v, 1);
	if (st == 1)
		atomic_store(&watch, 2);
}
