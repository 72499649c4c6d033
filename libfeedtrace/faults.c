/*
 * faults.c: major page faults, the I/O of data read through memory maps
 * (numpy.memmap, Arrow, LMDB), which no call shows. Once the process has
 * mapped a regular file (ft_faults_watch, from the mmap wrapper), every
 * drain reads each thread's count, /proc/self/task/TID/stat field 12
 * (majflt), and its block I/O wait, field 42 (delayacct_blkio_ticks, kept
 * only while the kernel's delay accounting is on), and the process's own
 * (/proc/self/stat, tid 0: its exited threads included), and writes them
 * as one FAULTS chunk (docs/FORMAT.md). The first sweep after the first
 * mapping is marked as the baseline: faults before it (code pages at
 * start-up) are not the mapped data's; the process's own baseline is
 * taken by the mapping call itself (getrusage, once per process). Nothing on the hot path; raw
 * system calls only (async-signal-safe: the exit paths sweep too), no
 * allocation. A fork child counts from 0: its sweeps are never a baseline.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* 0: no file mapped; 1: mapped, the next sweep is the baseline; 2: on */
static _Atomic int watch;
static uint32_t delayacct;               /* FT_FAULTS_DELAYACCT, read at the baseline */
/* the process's count when it first mapped a file (getrusage: the same sum
 * as /proc/self/stat's), and when: the process's baseline is exact; its
 * threads' are the first sweep's, a flusher wake-up later */
static uint64_t base_majflt, base_ticks;

void ft_faults_watch(void)
{
	int none = 0;
	if (atomic_load_explicit(&watch, memory_order_relaxed) != 0)
		return;
	struct rusage ru;
	int e = errno;
	uint64_t now = ft_now();
	int got = syscall(SYS_getrusage, RUSAGE_SELF, &ru) == 0;
	errno = e;
	if (!atomic_compare_exchange_strong(&watch, &none, 1))
		return;
	base_majflt = got ? (uint64_t)ru.ru_majflt : 0;
	base_ticks = got ? now : 0;
	ft_flusher_wake();               /* the threads' baseline soon */
}

void ft_faults_after_fork_child(void)
{
	if (atomic_load(&watch))
		atomic_store(&watch, 2);
}

/* the whole of a small file into buf (NUL-terminated); its length, or -1 */
static long read_small(const char *path, char *buf, size_t cap)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = syscall(SYS_read, (int)fd, buf, cap - 1);
	syscall(SYS_close, (int)fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* fields 12 (majflt) and 42 (delayacct_blkio_ticks) of a stat line; 0
 * when the line is not one */
static int parse_stat(const char *s, uint64_t *majflt, uint64_t *blkio_ticks)
{
	const char *p = strrchr(s, ')');          /* the command may hold spaces */
	if (!p)
		return 0;
	uint64_t v[43] = { 0 };
	int field = 2;
	for (p++; *p && field < 42;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		field++;
		uint64_t x = 0;
		for (; *p >= '0' && *p <= '9'; p++)
			x = x * 10 + (uint64_t)(*p - '0');
		while (*p && *p != ' ')
			p++;
		v[field] = x;
	}
	if (field < 12)
		return 0;
	*majflt = v[12];
	*blkio_ticks = field >= 42 ? v[42] : 0;
	return 1;
}

struct batch {
	struct ft_fault_sample s[64];
	unsigned n;
};

static void batch_write(struct batch *b)
{
	if (!b->n)
		return;
	struct iovec v = { b->s, b->n * sizeof b->s[0] };
	ft_output_write_chunk(FT_CHUNK_FAULTS, FT_CODEC_RAW, (uint32_t)v.iov_len, &v, 1);
	b->n = 0;
}

/* static: the sweep holds the flush lock, and may run on a signal stack */
static struct batch batch;
static char statbuf[1024];
static unsigned char dents[4096];

static void sample(struct batch *b, int32_t tid, const char *path, uint32_t flags)
{
	uint64_t majflt, ticks;
	if (read_small(path, statbuf, sizeof statbuf) <= 0 ||
	    !parse_stat(statbuf, &majflt, &ticks))
		return;
	struct ft_fault_sample *s = &b->s[b->n];
	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->flags = flags;
	s->ticks = ft_now();
	s->majflt = majflt;
	/* USER_HZ: 100 on Linux, whatever the kernel's own tick */
	s->blkio_ns = delayacct ? ticks * 10000000ull : 0;
	if (++b->n == sizeof b->s / sizeof b->s[0])
		batch_write(b);
}

void ft_faults_sample(int32_t skip_tid)
{
	int st = atomic_load(&watch);
	if (!st)
		return;
	if (st == 1) {
		char on[8];
		delayacct = read_small("/proc/sys/kernel/task_delayacct", on, sizeof on) > 0 &&
			    on[0] == '1' ? FT_FAULTS_DELAYACCT : 0;
	}
	uint32_t flags = (st == 1 ? FT_FAULTS_BASE : 0) | delayacct;
	struct batch *b = &batch;
	b->n = 0;
	sample(b, 0, "/proc/self/stat", flags);
	if (st == 1 && base_ticks && b->n == 1) {
		/* the mapping call's count first (the block I/O wait has no
		 * earlier reading than this sweep's) */
		b->s[1] = b->s[0];
		b->s[0].ticks = base_ticks;
		b->s[0].majflt = base_majflt;
		b->n = 2;
	}
	long dir = syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0) {
		long n;
		unsigned seen = 0;
		while (seen < 4096 &&
		       (n = syscall(SYS_getdents64, (int)dir, dents, sizeof dents)) > 0) {
			for (long off = 0; off + 19 < n;) {
				unsigned short len;
				memcpy(&len, dents + off + 16, sizeof len);
				if (len < 20 || off + len > n)
					break;
				const char *name = (const char *)dents + off + 19;
				off += len;
				int32_t tid = 0;
				int ok = *name != 0;
				for (const char *c = name; *c && ok && c < (const char *)dents + off; c++) {
					ok = *c >= '0' && *c <= '9';
					tid = tid * 10 + (*c - '0');
				}
				if (!ok || tid <= 0 || tid == skip_tid)
					continue;
				char path[48] = "/proc/self/task/";
				size_t k = strlen(path);
				char digits[12];
				int nd = 0;
				for (int32_t x = tid; x && nd < 11; x /= 10)
					digits[nd++] = (char)('0' + x % 10);
				while (nd)
					path[k++] = digits[--nd];
				memcpy(path + k, "/stat", 6);
				sample(b, tid, path, flags);
				seen++;
			}
		}
		syscall(SYS_close, (int)dir);
	}
	batch_write(b);
	if (st == 1)
		atomic_store(&watch, 2);
}
