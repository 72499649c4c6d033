/*
 * io.c: file I/O wrappers (open*, close, read*, stdio, file mmap, the
 * stdio readers' refills, copies in the kernel, POSIX aio reads, the stat
 * family). Every read is recorded, however fast: small-read storms are
 * made of reads that finish in under a microsecond. Never allocates,
 * never locks, keeps errno.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <wchar.h>

#include "../libfeedtrace/callsite.h"
#include "../libfeedtrace/capture.h"
#include "real.h"
#include "shape.h"
#include "solo.h"
#include "modpath.h"
#include "../libfeedtrace/internal.h"

/* every non-static function below is a wrapper: exported */
#pragma GCC visibility push(default)

static inline uint32_t sat32(uint64_t v)
{
	return v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

/* a result as stored: the value, or -errno on failure */
static inline int32_t result32(long r)
{
	if (r < 0)
		return -errno;
	return r > 0x7fffffff ? 0x7fffffff : (int32_t)r;
}

/* An opened path is a file, except what may be a device, a FIFO or a
 * /proc entry: those are looked at (fstat) when first read. The path is
 * read only after the open succeeded. Compared a byte at a time inline
 * (each stops at the first byte that differs, a NUL included): two
 * strncmp calls were a sixth of the open hook's instructions. */
static inline unsigned open_kind(const char *path, int flags)
{
	if ((flags & (O_NONBLOCK | O_PATH)) ||
	    (path[0] == '/' &&
	     ((path[1] == 'd' && path[2] == 'e' && path[3] == 'v' && path[4] == '/') ||
	      (path[1] == 'p' && path[2] == 'r' && path[3] == 'o' && path[4] == 'c' &&
	       path[5] == '/'))))
		return FT_FDK_UNKNOWN;
	return FT_FDK_FILE;
}

/* The Python code that opened a data file: the converter names a storm's
 * opener by it ("dataset.py:42 in __getitem__"). Taken at most once per
 * 2^21 clock units (about a millisecond) per thread: a storm of opens has
 * plenty, and the walk's cost (a few hundred ns) stays off most opens;
 * never for code or pseudo-files (modpath.h), never when the open failed.
 * Python's own open() releases the GIL: CPython 3.9 and later are read
 * all the same (pywalk.c), older versions get no site there. The
 * clock test is inline in the hooks; the rest is open_site. */
#define PY_OPEN_EVERY (1ull << 21)
static __attribute__((noinline)) uint32_t open_site(struct ft_thread *t, uint64_t t0,
						    const char *path);

/* site: the kind has a "py" field (extra is then the Python site, taken
 * after the call's end time). Keeps errno: interning and the record make
 * no system call (a full ring's wake-up keeps errno itself), and the
 * Python walk is wrapped in open_site; the opens need not save it. */
static inline __attribute__((always_inline)) void
record_open(struct ft_thread *t, unsigned kind, uint64_t t0, int fd, const char *path,
	    int flags, int extra, int site)
{
	uint64_t t1 = ft_now();
	/* else outside a capture window, unless a worker's leader opened one */
	int rec = ft_recording(FT_G_IO) || ft_capture_follow_now();
	if (site)
		extra = rec && fd >= 0 && t1 - t->py_open_at >= PY_OPEN_EVERY ?
			(int)open_site(t, t1, path) : 0;
	/* a path the kernel could not read is not read here either */
	uint32_t id = fd < 0 && errno == EFAULT ? 0 : ft_intern_path(path);
	if (fd >= 0)
		ft_fd_set(fd, id, open_kind(path, flags));
	if (rec)
		ft_record4(t, kind, t0, t1, (uint32_t)result32(fd), id, (uint32_t)flags,
			   (uint32_t)extra);
}

static __attribute__((noinline)) uint32_t open_site(struct ft_thread *t, uint64_t t0,
						    const char *path)
{
	if (!ft_callsite_python_on()) {
		t->py_open_at = t0;     /* asked again a millisecond later */
		return 0;
	}
	if (ft_is_module_path(path))
		return 0;
	t->py_open_at = t0;
	int e = errno;                  /* the walk may touch it; the hook keeps it */
	FT_BUSY_WALK(t);
	uint32_t py = ft_callsite_python();
	t->busy = 0;
	errno = e;
	return py;
}

static inline __attribute__((always_inline)) void record_read(struct ft_thread *t, unsigned kind, uint64_t t0,
			       int fd, uint64_t req, long r)
{
	uint64_t t1 = ft_now();
	int32_t res = result32(r);
	/* a read of a pipe, socket or eventfd waits for another thread or
	 * process: recorded apart from file I/O */
	if (kind == FT_EV_READ || kind == FT_EV_READ_CHK || kind == FT_EV_READV) {
		unsigned k = ft_fd_kind(fd);
		if (k == FT_FDK_PIPE || k == FT_FDK_SOCKET || k == FT_FDK_EVENTFD) {
			ft_record4(t, FT_EV_PIPE_READ, t0, t1, (uint32_t)fd, k, sat32(req),
				   (uint32_t)res);
			return;
		}
	}
	ft_record4(t, kind, t0, t1, (uint32_t)fd, ft_fd_path(fd), sat32(req),
		   (uint32_t)result32(r));
}

#define COMMA ,              /* a comma inside a shape's argument */

static inline mode_t open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ?
		(mode_t)va_arg(ap, int) : 0;
}

/* The wrappers of this file come in shapes, each written once and then
 * listed one line per call (its kind and arguments), as cuda.tsv lists
 * the driver's calls for one generator. */

/* open, open64, openat, openat64: the mode is read from the variadic tail
 * when the flags make one (O_CREAT, O_TMPFILE). dirp/dirv: the directory
 * parameter and argument, or nothing; dirfd: what the record's last field
 * holds, unless site is 1: then that field is the Python site of the open
 * (record_open; openat's kinds keep the directory there instead). */
#define OPEN_VA(name, kind, dirp, dirv, dirfd, site, at)                 \
	int name(dirp const char *path, int flags, ...)                 \
	{                                                               \
		va_list ap;                                             \
		va_start(ap, flags);                                    \
		mode_t mode = open_mode(flags, ap);                     \
		va_end(ap);                                             \
		struct ft_thread *t = ft_enter(FT_G_FD);                \
		if (!t)                                                 \
			return REAL(name)(dirv path, flags, mode);      \
		uint64_t t0 = ft_now();                                 \
		int fd = (int)FT_SOLO_OR(REAL(name)(dirv path, flags, mode), \
					 SYS_openat, at, path, flags, mode); \
		record_open(t, kind, t0, fd, path, flags, dirfd, site); \
		return fd;                                              \
	}

/* at: the directory of the system call glibc makes (openat, also for open) */
OPEN_VA(open, FT_EV_OPEN, , , 0, 1, AT_FDCWD)
OPEN_VA(open64, FT_EV_OPEN64, , , 0, 1, AT_FDCWD)
OPEN_VA(openat, FT_EV_OPENAT, int dirfd COMMA, dirfd COMMA, dirfd, 0, dirfd)
OPEN_VA(openat64, FT_EV_OPENAT64, int dirfd COMMA, dirfd COMMA, dirfd, 0, dirfd)

/* __open_2, __open64_2 (_FORTIFY_SOURCE's checked opens: no mode) */
#define OPEN_2(name, kind)                                              \
	TIMED(int, name, FT_G_FD, (const char *path, int flags), (path, flags), \
	      record_open(t, kind, t0, r, path, flags, 0, 1))

OPEN_2(__open_2, FT_EV_OPEN_2)
OPEN_2(__open64_2, FT_EV_OPEN64_2)

TIMED(int, creat, FT_G_FD, (const char *path, mode_t mode), (path, mode),
      record_open(t, FT_EV_CREAT, t0, r, path, (int)mode, 0, 0))

int close(int fd)
{
	if (fd == ft_out_fd && fd >= 0) {
		errno = EBADF;          /* the trace file is not the program's */
		return -1;
	}
	struct ft_thread *t = ft_enter(FT_G_FD);
	if (!t)
		return REAL(close)(fd);
	uint32_t path = ft_fd_path(fd);
	/* forget the path before the fd is free: once closed, another thread
	 * may open the same number, and clearing after would erase its path */
	ft_fd_set(fd, 0, 0);
	uint64_t t0 = ft_now();
	int r = (int)FT_SOLO_OR(REAL(close)(fd), SYS_close, fd, 0, 0, 0);
	uint64_t t1 = ft_now();
	if (ft_recording(FT_G_IO))
		ft_record4(t, FT_EV_CLOSE, t0, t1, (uint32_t)fd, path, (uint32_t)result32(r), 0);
	return r;
}

/* read and its positioned and checked variants: n bytes asked for; call:
 * the real call (FT_SOLO_OR: the system call itself while the program has
 * one thread, shim/solo.h), recorded or not: outside a capture window too,
 * glibc's wrapper would take its multi-threaded path for the flusher's
 * sake, a hundred instructions more than the untraced program's read.
 * With the group off (outside a capture window) the wrapper is the load,
 * the branch and the call: the recording path, which needs registers
 * saved, is NAME_rec, reached by a tail jump. */
#define READ_N(name, kind, params, args, call)                          \
	static __attribute__((noinline)) ssize_t name##_rec params      \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t)                                                 \
			return call;                                    \
		uint64_t t0 = ft_now();                                 \
		ssize_t r = call;                                       \
		record_read(t, kind, t0, fd, n, r);                     \
		return r;                                               \
	}                                                               \
	ssize_t name params                                             \
	{                                                               \
		if (!ft_recording(FT_G_IO))                             \
			return call;                                    \
		return name##_rec args;                                 \
	}

READ_N(read, FT_EV_READ, (int fd, void *buf, size_t n), (fd, buf, n),
       FT_SOLO_OR(REAL(read)(fd, buf, n), SYS_read, fd, buf, n, 0))

/* A write is recorded only to a pipe or socket the tracer knows (made by
 * pipe, socketpair, socket..., or read before): the producer's side of a
 * queue between processes; any other write (files, terminals) passes
 * through after one load. */
ssize_t write(int fd, const void *buf, size_t n)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	unsigned k = t ? ft_fd_word(fd) >> FT_FD_KIND_SHIFT : 0;
	if (k != FT_FDK_PIPE && k != FT_FDK_SOCKET)
		return REAL(write)(fd, buf, n);
	uint64_t t0 = ft_now();
	ssize_t r = REAL(write)(fd, buf, n);
	int e = errno;
	ft_record4(t, FT_EV_PIPE_WRITE, t0, ft_now(), (uint32_t)fd, k, sat32(n),
		   (uint32_t)result32(r));
	errno = e;
	return r;
}

/* __read_chk checks the buffer's size first: always the real one */
READ_N(__read_chk, FT_EV_READ_CHK, (int fd, void *buf, size_t n, size_t buflen),
       (fd, buf, n, buflen), REAL(__read_chk)(fd, buf, n, buflen))
READ_N(pread, FT_EV_PREAD, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off),
       FT_SOLO_OR(REAL(pread)(fd, buf, n, off), SYS_pread64, fd, buf, n, off))
READ_N(pread64, FT_EV_PREAD64, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off),
       FT_SOLO_OR(REAL(pread64)(fd, buf, n, off), SYS_pread64, fd, buf, n, off))

/* bytes asked for; an iov array the kernel could not read (EFAULT) is not
 * read here either. The kernel fails an array of more than UIO_MAXIOV
 * (1024) entries with EINVAL without reading it, and the count may exceed
 * the array: the entries past 1024 (up to 65,536) are read through
 * process_vm_readv, which answers EFAULT where a plain read would fault. */
#define IOV_SAFE 1024
#define IOV_MOST 65536
static uint64_t iov_bytes(const struct iovec *iov, int n, ssize_t r, int e)
{
	uint64_t sum = 0;
	if (r < 0 && e == EFAULT)
		return 0;
	int i = 0;
	for (; i < n && i < IOV_SAFE; i++)
		sum += iov[i].iov_len;
	while (i < n && i < IOV_MOST) {
		struct iovec part[64];
		size_t k = (size_t)(n - i) < 64 ? (size_t)(n - i) : 64;
		struct iovec to = { part, k * sizeof *part }, from = { (void *)(iov + i), k * sizeof *part };
		long got = syscall(SYS_process_vm_readv, syscall(SYS_getpid), &to, 1L, &from, 1L, 0L);
		errno = e;              /* the call's, which the record reads */
		if (got < (long)sizeof *part)
			break;
		for (size_t j = 0; j < (size_t)got / sizeof *part; j++)
			sum += part[j].iov_len;
		i += (int)((size_t)got / sizeof *part);
	}
	return sum;
}

/* readv and its positioned variants: the bytes of n iovecs asked for */
#define READ_IOV(name, kind, params, args)                              \
	TIMED(ssize_t, name, FT_G_IO, params, args,                      \
	      record_read(t, kind, t0, fd, iov_bytes(iov, n, r, e), r))

READ_IOV(readv, FT_EV_READV, (int fd, const struct iovec *iov, int n), (fd, iov, n))
READ_IOV(preadv, FT_EV_PREADV, (int fd, const struct iovec *iov, int n, off_t off),
	 (fd, iov, n, off))
READ_IOV(preadv2, FT_EV_PREADV2, (int fd, const struct iovec *iov, int n, off_t off, int flags),
	 (fd, iov, n, off, flags))

static inline void record_fopen(struct ft_thread *t, unsigned kind, uint64_t t0,
				FILE *f, const char *path)
{
	int fd = f ? fileno(f) : -errno;
	record_open(t, kind, t0, fd, path, 0, 0, 1);
}

#define FOPEN(name, kind)                                               \
	TIMED(FILE *, name, FT_G_FD, (const char *path, const char *mode), (path, mode), \
	      record_fopen(t, kind, t0, r, path))

FOPEN(fopen, FT_EV_FOPEN)
FOPEN(fopen64, FT_EV_FOPEN64)

int fclose(FILE *f)
{
	struct ft_thread *t = ft_enter(FT_G_FD);
	if (!t || !f)
		return REAL(fclose)(f);
	int fd = fileno(f);
	uint32_t path = ft_fd_path(fd);
	ft_fd_set(fd, 0, 0);            /* before the fd is free (see close) */
	uint64_t t0 = ft_now();
	int r = REAL(fclose)(f);
	int e = errno;
	uint64_t t1 = ft_now();
	if (ft_recording(FT_G_IO))
		ft_record4(t, FT_EV_FCLOSE, t0, t1, (uint32_t)fd, path, (uint32_t)result32(r), 0);
	errno = e;
	return r;
}

static void record_fread(struct ft_thread *t, uint64_t t0, size_t size, size_t n, size_t r,
			 FILE *f)
{
	int e = errno;
	int fd = fileno(f);
	uint64_t t1 = ft_now();
	ft_record4(t, FT_EV_FREAD, t0, t1, (uint32_t)fd, ft_fd_path(fd),
		   sat32((uint64_t)size * n), (uint32_t)result32((long)(r * size)));
	errno = e;
}

size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
	struct ft_thread *t = ft_enter(FT_G_IO);
	if (!t)
		return REAL(fread)(buf, size, n, f);
	uint64_t t0 = ft_now();
	size_t r = REAL(fread)(buf, size, n, f);
	record_fread(t, t0, size, n, r, f);
	return r;
}

/* fread into a buffer of known size, built with _FORTIFY_SOURCE (the
 * default of some distributions' compilers): recorded as fread */
size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f)
{
	struct ft_thread *t = ft_enter(FT_G_IO);
	if (!t)
		return REAL(__fread_chk)(buf, buflen, size, n, f);
	uint64_t t0 = ft_now();
	size_t r = REAL(__fread_chk)(buf, buflen, size, n, f);
	record_fread(t, t0, size, n, r, f);
	return r;
}

static void record_mmap(struct ft_thread *t, uint64_t t0, void *addr, size_t len,
			int prot, int flags, int fd, uint64_t off)
{
	uint64_t t1 = ft_now();
	struct ft_rec *r = ft_reserve(t, 2);
	if (!r)
		return;
	ft_rec_header(r, FT_EV_MMAP, 2, t0, t1);
	r->p.u32[0] = (uint32_t)fd;
	r->p.u32[1] = ft_fd_path(fd);
	r->p.u32[2] = (uint32_t)prot;
	r->p.u32[3] = (uint32_t)flags;
	uint64_t *ext = (uint64_t *)ft_slot(t, 1);
	ext[0] = len;
	ext[1] = off;
	ext[2] = (uint64_t)(uintptr_t)addr;
	ext[3] = 0;
	ft_commit(t, 2);
}

/* ---- io_uring: a ring's set-up is recorded (its reads go through shared
 * memory, unseen): liburing's set-up calls (below), and the first mapping
 * of a ring made by a raw io_uring_setup system call (glibc has no
 * wrapper; Debian's liburing makes its own system calls, mmap included,
 * so only its exported functions show it). The ring's descriptor is then
 * named "anon_inode:[io_uring]", which keeps its other mappings and
 * liburing's own from counting it again. ---- */
static void record_uring(struct ft_thread *t, uint64_t t0, int ret, int fd, uint32_t entries,
			 uint32_t flags, uint32_t api)
{
	uint32_t path = 0;
	if (fd >= 0) {
		path = ft_intern("anon_inode:[io_uring]");
		ft_fd_set(fd, path, FT_FDK_OTHER);
	}
	uint64_t t1 = ft_now();
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_rec_header(rec, FT_EV_IO_URING_SETUP, 2, t0, t1);
	rec->p.u32[0] = (uint32_t)ret;
	rec->p.u32[1] = (uint32_t)fd;
	rec->p.u32[2] = entries;
	rec->p.u32[3] = flags;
	uint32_t *ext = (uint32_t *)ft_slot(t, 1);
	memset(ext, 0, 32);
	ext[0] = api;
	ft_commit(t, 2);
}

/* a mapping at offset 0 (IORING_OFF_SQ_RING: every ring maps it first) of
 * a descriptor of no known path (not opened by a traced call): is it a
 * ring? (its kind is not asked: an anonymous inode's mode bits) */
static __attribute__((noinline)) void uring_mapped(struct ft_thread *t, uint64_t t0, int fd)
{
	if (fd < 0 || ft_fd_path(fd))
		return;
	int e = errno;
	char path[32] = "/proc/self/fd/", link[32];
	size_t k = strlen(path);
	char digits[12];
	int nd = 0;
	for (int x = fd; nd < 11 && (x || !nd); x /= 10)
		digits[nd++] = (char)('0' + x % 10);
	while (nd)
		path[k++] = digits[--nd];
	path[k] = 0;
	long n = syscall(SYS_readlinkat, AT_FDCWD, path, link, sizeof link - 1);
	errno = e;
	if (n == 21 && !memcmp(link, "anon_inode:[io_uring]", 21))
		record_uring(t, t0, 0, fd, 0, 0, 3);
}

/* a readable mapping of a regular file: its data may come in by page
 * faults from now on (libfeedtrace/faults.c counts the process's and its
 * threads') */
static void watch_faults(void *p, int prot, int fd)
{
	if (p != MAP_FAILED && (prot & PROT_READ) && ft_fd_kind(fd) == FT_FDK_FILE)
		ft_faults_watch();
}

static __attribute__((noinline)) void *mmap_file(void *addr, size_t len, int prot,
						 int flags, int fd, off_t off)
{
	struct ft_thread *t = ft_enter(FT_G_IO);
	if (!t)
		return REAL(mmap)(addr, len, prot, flags, fd, off);
	uint64_t t0 = ft_now();
	void *p = REAL(mmap)(addr, len, prot, flags, fd, off);
	int e = errno;
	if (off == 0 && p != MAP_FAILED)
		uring_mapped(t, t0, fd);
	record_mmap(t, t0, p, len, prot, flags, fd, (uint64_t)off);
	watch_faults(p, prot, fd);
	errno = e;
	return p;
}

static __attribute__((noinline)) void *mmap64_file(void *addr, size_t len, int prot,
						   int flags, int fd, off64_t off)
{
	struct ft_thread *t = ft_enter(FT_G_IO);
	if (!t)
		return REAL(mmap64)(addr, len, prot, flags, fd, off);
	uint64_t t0 = ft_now();
	void *p = REAL(mmap64)(addr, len, prot, flags, fd, off);
	int e = errno;
	if (off == 0 && p != MAP_FAILED)
		uring_mapped(t, t0, fd);
	record_mmap(t, t0, p, len, prot, flags, fd, (uint64_t)off);
	watch_faults(p, prot, fd);
	errno = e;
	return p;
}

/* Only mappings of files are recorded; anonymous ones pass straight on.
 * The pass-through is never TSan-instrumented (GCC's no_sanitize_thread
 * drops the function entry hook too): the TSan runtime maps anonymous
 * memory while it initialises, and when libfeedtrace.so precedes it in
 * the search order (`feedtrace run` prepends the library to LD_PRELOAD)
 * that call lands here before an instrumented function may run. */
__attribute__((no_sanitize_thread))
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if ((flags & MAP_ANONYMOUS) || fd < 0)
		return REAL(mmap)(addr, len, prot, flags, fd, off);
	return mmap_file(addr, len, prot, flags, fd, off);
}

__attribute__((no_sanitize_thread))
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if ((flags & MAP_ANONYMOUS) || fd < 0)
		return REAL(mmap64)(addr, len, prot, flags, fd, off);
	return mmap64_file(addr, len, prot, flags, fd, off);
}

/* dup, dup2, dup3, fcntl(F_DUPFD, F_DUPFD_CLOEXEC): the new fd carries the
 * path of the fd it copies, so that its reads are attributed to the file.
 * Nothing is recorded (a dup does no I/O) and no thread state is needed: a
 * relaxed look at the active groups, then one store into the fd table. A
 * dup that failed changes nothing; errno is the real function's. */
static inline void dup_path(int oldfd, int newfd)
{
	if (newfd >= 0 && newfd != oldfd &&
	    (atomic_load_explicit(&ft_active, memory_order_relaxed) & FT_G_FD) &&
	    !ft_self_foreign())
		ft_fd_set_word(newfd, ft_fd_word(oldfd));
}

int dup(int fd)
{
	int r = REAL(dup)(fd);
	dup_path(fd, r);
	return r;
}

/* dup2/dup3 onto the trace file's number: the trace file moves out of the
 * way first (ft_output_vacate). close of it fails with EBADF, as for any
 * descriptor the program never opened (close above); close_range and
 * closefrom close all the rest of their range (below). */
int dup2(int fd, int newfd)
{
	if (newfd == ft_out_fd && fd >= 0 && fd != newfd)
		ft_output_vacate(newfd);
	int r = REAL(dup2)(fd, newfd);
	dup_path(fd, r);
	return r;
}

int dup3(int fd, int newfd, int flags)
{
	if (newfd == ft_out_fd && fd >= 0 && fd != newfd)
		ft_output_vacate(newfd);
	int r = REAL(dup3)(fd, newfd, flags);
	dup_path(fd, r);
	return r;
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	int out = ft_out_fd;
	if (out < 0 || (unsigned)out < first || (unsigned)out > last)
		return REAL(close_range)(first, last, flags);
	/* the range less the trace file's number */
	int r = (unsigned)out > first ? REAL(close_range)(first, (unsigned)out - 1, flags) : 0;
	int e = errno;
	if ((unsigned)out < last && REAL(close_range)((unsigned)out + 1, last, flags) != 0)
		return -1;
	errno = e;
	return r;
}

void closefrom(int lowfd)
{
	int out = ft_out_fd;
	if (out < 0 || out < lowfd) {
		REAL(closefrom)(lowfd);
		return;
	}
	if (out > lowfd)
		REAL(close_range)((unsigned)(lowfd < 0 ? 0 : lowfd), (unsigned)out - 1, 0);
	REAL(closefrom)(out + 1);
}

/* The third argument is an int or a pointer, by command; it is passed on
 * as the word the caller put there (the x86-64 and AArch64 calling
 * conventions hand both over in the same register). */
int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	int r = REAL(fcntl)(fd, cmd, arg);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		dup_path(fd, r);
	return r;
}

/* what programs built with _FILE_OFFSET_BITS=64 call (Python's os.dup) */
int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	int r = REAL(fcntl64)(fd, cmd, arg);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		dup_path(fd, r);
	return r;
}

/* ---- stdio readers: recorded when they refill the stream's buffer ----
 * fgets, getline, getdelim, fgetc, getc, getchar, __uflow (the refill that
 * getc_unlocked and the like inline into the program call), fread_unlocked,
 * and below fscanf and the wide-character readers read their
 * file through glibc's own read, which no wrapper sees. A call served from
 * the buffer costs no I/O and is passed on untimed: a look at the buffer
 * (glibc's FILE fields, <stdio.h>) tells whether it must refill (no
 * delimiter among the bytes left, or none left), made before anything
 * else, so that a fgetc the buffer serves costs a compare and a jump more.
 * Only such a call is timed, and recorded when bytes came into the buffer during it (the
 * bytes consumed less those that were there, plus those left), or when
 * it newly met the end or an error: one record per call however many
 * refills it made; req is the buffer's size (one refill's request), ret
 * those bytes, 0 at the end, -errno on error. A stream read by two
 * threads at once may be misjudged (its fields are read without its
 * lock); terminals and devices are not recorded; a pipe or socket is
 * recorded as a wait (PIPE_READ), as read() is. */
static inline long stdio_left(const FILE *f)
{
	return f->_IO_read_end - f->_IO_read_ptr;
}

/* must f refill to find delim within the next lim bytes (lim < 0: no
 * limit)? */
static inline int stdio_must_refill(const FILE *f, int delim, long lim)
{
	long left = stdio_left(f);
	if (left <= 0)
		return 1;
	if (lim >= 0 && left >= lim)
		return 0;
	return memchr(f->_IO_read_ptr, delim, (size_t)left) == NULL;
}

struct stdio_before {
	long left;
	int flags;
};

/* in: the bytes that came into the buffer during the call */
static __attribute__((noinline)) void
record_stdio(struct ft_thread *t, unsigned kind, uint64_t t0, FILE *f,
	     const struct stdio_before *b, long in, int e)
{
	uint64_t t1 = ft_now();
	int32_t ret;
	if (in > 0)
		ret = in > 0x7fffffff ? 0x7fffffff : (int32_t)in;
	else if ((f->_flags & ~b->flags) & _IO_ERR_SEEN)
		ret = -e;
	else if ((f->_flags & ~b->flags) & _IO_EOF_SEEN)
		ret = 0;
	else
		return;                 /* no read made (or none seen) */
	int fd = f->_fileno;
	if (fd < 0)
		return;                 /* a memory stream (fmemopen, fopencookie) */
	unsigned k = ft_fd_kind(fd);
	if (k == FT_FDK_PIPE || k == FT_FDK_SOCKET || k == FT_FDK_EVENTFD) {
		ft_record4(t, FT_EV_PIPE_READ, t0, t1, (uint32_t)fd, k,
			   sat32((uint64_t)(f->_IO_buf_end - f->_IO_buf_base)), (uint32_t)ret);
		return;
	}
	if (k == FT_FDK_OTHER)
		return;                 /* a terminal or a device */
	ft_record4(t, kind, t0, t1, (uint32_t)fd, ft_fd_path(fd),
		   sat32((uint64_t)(f->_IO_buf_end - f->_IO_buf_base)), (uint32_t)ret);
}

/* STDIO(type, name, kind, params, args, refill, consumed): refill says
 * from the FILE f (before the call) whether it must refill; consumed, the
 * bytes the call took from the stream, from its result r. The call the
 * buffer serves goes straight on (name); one that refills is timed in a
 * function of its own (name_refill), so the first saves no register. */
#define STDIO(type, name, kind, params, args, refill, consumed)         \
	static __attribute__((noinline)) type name##_refill params      \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t)                                                 \
			return REAL(name) args;                         \
		struct stdio_before b = { stdio_left(f), f->_flags };   \
		uint64_t t0 = ft_now();                                 \
		type r = REAL(name) args;                               \
		int e = errno;                                          \
		record_stdio(t, kind, t0, f, &b,                        \
			     (long)(consumed) - b.left + stdio_left(f), e); \
		errno = e;                                              \
		return r;                                               \
	}                                                               \
	type name params                                                \
	{                                                               \
		if (f && (refill))                                      \
			return name##_refill args;                      \
		return REAL(name) args;                                 \
	}

#define FGETS(name, params, args)                                       \
	STDIO(char *, name, FT_EV_FGETS, params, args,                  \
	      n > 1 && stdio_must_refill(f, '\n', n - 1), r ? strlen(r) : 0)

FGETS(fgets, (char *s, int n, FILE *f), (s, n, f))
FGETS(fgets_unlocked, (char *s, int n, FILE *f), (s, n, f))
FGETS(__fgets_chk, (char *s, size_t size, int n, FILE *f), (s, size, n, f))
FGETS(__fgets_unlocked_chk, (char *s, size_t size, int n, FILE *f), (s, size, n, f))

/* getline is getdelim with '\n' (__getdelim is what getline inlines to
 * at -O2: recorded as getline then) */
STDIO(ssize_t, getline, FT_EV_GETLINE, (char **line, size_t *n, FILE *f), (line, n, f),
      stdio_must_refill(f, '\n', -1), r > 0 ? r : 0)
STDIO(ssize_t, getdelim, FT_EV_GETDELIM, (char **line, size_t *n, int delim, FILE *f),
      (line, n, delim, f), stdio_must_refill(f, delim, -1), r > 0 ? r : 0)
STDIO(ssize_t, __getdelim, delim == '\n' ? FT_EV_GETLINE : FT_EV_GETDELIM,
      (char **line, size_t *n, int delim, FILE *f), (line, n, delim, f),
      stdio_must_refill(f, delim, -1), r > 0 ? r : 0)

/* a byte: a refill only when none is left */
#define GETC(name, kind)                                                \
	STDIO(int, name, kind, (FILE *f), (f), stdio_left(f) <= 0, r != EOF)

GETC(fgetc, FT_EV_FGETC)
GETC(fgetc_unlocked, FT_EV_FGETC)
GETC(getc, FT_EV_GETC)
GETC(_IO_getc, FT_EV_GETC)
GETC(getc_unlocked, FT_EV_GETC)
GETC(__uflow, FT_EV_UFLOW)

/* fread_unlocked (what coreutils' readers call, gnulib's unlocked-io): a
 * refill when it asks for more than the buffer holds */
static inline int stdio_short(const FILE *f, size_t size, size_t n)
{
	size_t want;
	return __builtin_mul_overflow(size, n, &want) || (long)want > stdio_left(f) ||
	       (long)want < 0;
}
#undef fread_unlocked            /* <stdio.h>'s inline form at -O2 */
STDIO(size_t, fread_unlocked, FT_EV_FREAD_UNLOCKED,
      (void *buf, size_t size, size_t n, FILE *f), (buf, size, n, f),
      stdio_short(f, size, n), r * size)
STDIO(size_t, __fread_unlocked_chk, FT_EV_FREAD_UNLOCKED,
      (void *buf, size_t buflen, size_t size, size_t n, FILE *f), (buf, buflen, size, n, f),
      stdio_short(f, size, n), r * size)

/* getchar: getc of stdin (getchar_unlocked inlined is __uflow) */
#define GETCHAR(name)                                                   \
	static __attribute__((noinline)) int name##_refill(FILE *f)     \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t)                                                 \
			return REAL(name)();                            \
		struct stdio_before b = { stdio_left(f), f->_flags };   \
		uint64_t t0 = ft_now();                                 \
		int r = REAL(name)();                                   \
		int e = errno;                                          \
		record_stdio(t, FT_EV_GETC, t0, f, &b,                  \
			     (r != EOF) - b.left + stdio_left(f), e);   \
		errno = e;                                              \
		return r;                                               \
	}                                                               \
	int name(void)                                                  \
	{                                                               \
		FILE *f = stdin;                                        \
		if (f && stdio_left(f) <= 0)                            \
			return name##_refill(f);                        \
		return REAL(name)();                                    \
	}

GETCHAR(getchar)
GETCHAR(getchar_unlocked)

/* Readers whose bytes taken are not known from their result: fscanf and
 * the wide-character readers (which convert the stream's bytes into a
 * buffer of wide characters: glibc's struct _IO_wide_data, whose first
 * two fields are that buffer's read pointer and end). A refill is seen
 * after the call (stdio_refilled, wide_refilled below), or the call newly
 * met the end or an error; the bytes that came in are those of the
 * buffer's last refill (a call that refilled more than once, a line or a
 * token longer than the buffer, counts the last). fscanf is timed
 * whenever it is called (what it will read is not known before); a wide
 * reader only when its wide buffer is empty (fgetwc) or holds no newline
 * within the call's limit (fgetws). */
struct stdio_wide_head {
	wchar_t *read_ptr, *read_end;
};

static inline long wide_left(const FILE *f)
{
	const struct stdio_wide_head *w = (const struct stdio_wide_head *)f->_wide_data;
	return w ? w->read_end - w->read_ptr : 0;
}

static inline int wide_must_refill(const FILE *f, long lim)
{
	const struct stdio_wide_head *w = (const struct stdio_wide_head *)f->_wide_data;
	long left = wide_left(f);
	if (left <= 0)
		return 1;
	if (left >= lim)
		return 0;
	return wmemchr(w->read_ptr, L'\n', (size_t)left) == NULL;
}

struct stdio_seen {
	struct stdio_before b;
	char *ptr, *end;
	wchar_t *wptr, *wend;
};

static inline void stdio_look(const FILE *f, struct stdio_seen *s)
{
	const struct stdio_wide_head *w = (const struct stdio_wide_head *)f->_wide_data;
	s->b.left = stdio_left(f);
	s->b.flags = f->_flags;
	s->ptr = f->_IO_read_ptr;
	s->end = f->_IO_read_end;
	s->wptr = w ? w->read_ptr : NULL;
	s->wend = w ? w->read_end : NULL;
}

/* a byte stream refills only when its buffer is empty: its end moved or
 * its read pointer went back, the buffer from its base came in */
static inline long stdio_refilled(const FILE *f, const struct stdio_seen *s)
{
	if (f->_IO_read_end != s->end || f->_IO_read_ptr < s->ptr)
		return f->_IO_read_end - f->_IO_buf_base;
	return 0;
}

/* a wide stream converts all its byte buffer holds into its wide buffer
 * (which is larger), leaving at most a character's first bytes, which a
 * refill keeps at the base: when the wide buffer was filled again, the
 * bytes from the base less those that were left came in */
static inline long wide_refilled(const FILE *f, const struct stdio_seen *s)
{
	const struct stdio_wide_head *w = (const struct stdio_wide_head *)f->_wide_data;
	if (!w || (w->read_end == s->wend && w->read_ptr >= s->wptr))
		return 0;
	long in = (f->_IO_read_end - f->_IO_buf_base) - s->b.left;
	return in > 0 ? in : 0;
}

/* cname: the wrapper's name in C, name: the symbol it stands for */
#define STDIO_SEEN_AS(type, cname, name, kind, params, args, refill, came) \
	static __attribute__((noinline)) type cname##_refill params     \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t)                                                 \
			return REAL(name) args;                         \
		struct stdio_seen seen;                                 \
		stdio_look(f, &seen);                                   \
		uint64_t t0 = ft_now();                                 \
		type r = REAL(name) args;                               \
		int e = errno;                                          \
		record_stdio(t, kind, t0, f, &seen.b, came(f, &seen), e); \
		errno = e;                                              \
		return r;                                               \
	}                                                               \
	type cname params                                               \
	{                                                               \
		if (f && (refill))                                      \
			return cname##_refill args;                     \
		return REAL(name) args;                                 \
	}
#define STDIO_SEEN(type, name, kind, params, args, refill, came) \
	STDIO_SEEN_AS(type, name, name, kind, params, args, refill, came)

#define FGETWC(name) \
	STDIO_SEEN(wint_t, name, FT_EV_FGETWC, (FILE *f), (f), wide_left(f) <= 0, wide_refilled)
FGETWC(fgetwc)
FGETWC(getwc)
FGETWC(fgetwc_unlocked)
FGETWC(getwc_unlocked)

#define FGETWS(name, params, args) \
	STDIO_SEEN(wchar_t *, name, FT_EV_FGETWS, params, args, n > 1 && wide_must_refill(f, n - 1), \
		   wide_refilled)
FGETWS(fgetws, (wchar_t *s, int n, FILE *f), (s, n, f))
FGETWS(fgetws_unlocked, (wchar_t *s, int n, FILE *f), (s, n, f))
FGETWS(__fgetws_chk, (wchar_t *s, size_t size, int n, FILE *f), (s, size, n, f))
FGETWS(__fgetws_unlocked_chk, (wchar_t *s, size_t size, int n, FILE *f), (s, size, n, f))

/* fscanf and __isoc99_fscanf call their v-forms, as glibc's do. The
 * symbols fscanf and vfscanf are the GNU forms, which <stdio.h> hides
 * behind the C99 ones (its fscanf is __isoc99_fscanf): named here by
 * their symbols */
int gnu_vfscanf(FILE *f, const char *fmt, va_list ap) __asm__("vfscanf");
int gnu_fscanf(FILE *f, const char *fmt, ...) __asm__("fscanf");
STDIO_SEEN_AS(int, gnu_vfscanf, vfscanf, FT_EV_FSCANF,
	      (FILE *f, const char *fmt, va_list ap), (f, fmt, ap), 1, stdio_refilled)
STDIO_SEEN(int, __isoc99_vfscanf, FT_EV_FSCANF, (FILE *f, const char *fmt, va_list ap),
	   (f, fmt, ap), 1, stdio_refilled)

#define FSCANF(name, vname)                                             \
	int name(FILE *f, const char *fmt, ...)                         \
	{                                                               \
		va_list ap;                                             \
		va_start(ap, fmt);                                      \
		int r = f ? vname##_refill(f, fmt, ap) : vname(f, fmt, ap); \
		va_end(ap);                                             \
		return r;                                               \
	}
FSCANF(gnu_fscanf, gnu_vfscanf)
FSCANF(__isoc99_fscanf, __isoc99_vfscanf)

/* ---- copies in the kernel: the file read (fd, path) and where its bytes
 * went (out); bytes asked for and copied. splice is recorded only when it
 * reads a file (its other side is a pipe: a file written from a pipe is a
 * write, not recorded) ---- */
static void record_copy(struct ft_thread *t, unsigned kind, uint64_t t0, int in, int out,
			uint64_t req, long r)
{
	uint64_t t1 = ft_now();
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_rec_header(rec, kind, 2, t0, t1);
	rec->p.u32[0] = (uint32_t)in;
	rec->p.u32[1] = ft_fd_path(in);
	rec->p.u32[2] = sat32(req);
	rec->p.u32[3] = (uint32_t)result32(r);
	uint32_t *ext = (uint32_t *)ft_slot(t, 1);
	memset(ext, 0, 32);
	ext[0] = (uint32_t)out;
	ext[1] = ft_fd_path(out);
	ft_commit(t, 2);
}

TIMED(ssize_t, copy_file_range, FT_G_IO,
      (int in, off64_t *inoff, int out, off64_t *outoff, size_t n, unsigned flags),
      (in, inoff, out, outoff, n, flags),
      record_copy(t, FT_EV_COPY_FILE_RANGE, t0, in, out, n, r))
TIMED(ssize_t, sendfile, FT_G_IO, (int out, int in, off_t *off, size_t n), (out, in, off, n),
      record_copy(t, FT_EV_SENDFILE, t0, in, out, n, r))
TIMED(ssize_t, sendfile64, FT_G_IO, (int out, int in, off64_t *off, size_t n),
      (out, in, off, n), record_copy(t, FT_EV_SENDFILE, t0, in, out, n, r))

ssize_t splice(int in, off64_t *inoff, int out, off64_t *outoff, size_t n, unsigned flags)
{
	struct ft_thread *t = ft_enter(FT_G_IO);
	if (!t || ft_fd_kind(in) != FT_FDK_FILE)
		return REAL(splice)(in, inoff, out, outoff, n, flags);
	uint64_t t0 = ft_now();
	ssize_t r = REAL(splice)(in, inoff, out, outoff, n, flags);
	int e = errno;
	record_copy(t, FT_EV_SPLICE, t0, in, out, n, r);
	errno = e;
	return r;
}

/* ---- POSIX aio reads: the submission (aio_read: fd, path, bytes asked
 * for; it ends ft_solo first: glibc serves requests from threads of its
 * own, solo.c), the wait (aio_suspend: the first request's fd and path,
 * how many were listed) and the completion (aio_return of a read: bytes
 * asked for and read, a read record of no duration: the time went to the
 * waits). A completion is known to be a read by aio_lio_opcode, which
 * glibc sets at submission (and lio_listio's caller sets): reads listed
 * by lio_listio are seen at their aio_return, and its LIO_WAIT wait as
 * aio_suspend's is (lio_listio, below). Writes and fsyncs are not
 * recorded; aio_error, a poll, is not either (a loop on it is CPU time). ---- */
#define AIO_READ(name, cbtype)                                          \
	int name(cbtype *cb)                                            \
	{                                                               \
		ft_solo_end();                                          \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t)                                                 \
			return REAL(name)(cb);                          \
		uint64_t t0 = ft_now();                                 \
		int r = REAL(name)(cb);                                 \
		int e = errno;                                          \
		ft_record4(t, FT_EV_AIO_READ, t0, ft_now(), (uint32_t)cb->aio_fildes, \
			   ft_fd_path(cb->aio_fildes), sat32(cb->aio_nbytes), \
			   (uint32_t)result32(r));                      \
		errno = e;                                              \
		return r;                                               \
	}

AIO_READ(aio_read, struct aiocb)
AIO_READ(aio_read64, struct aiocb64)

#define AIO_RETURN(name, cbtype)                                        \
	ssize_t name(cbtype *cb)                                        \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t || (cb->aio_lio_opcode & 127) != LIO_READ)       \
			return REAL(name)(cb);                          \
		uint64_t t0 = ft_now();                                 \
		ssize_t r = REAL(name)(cb);                             \
		int e = errno;                                          \
		ft_record4(t, FT_EV_AIO_RETURN, t0, ft_now(), (uint32_t)cb->aio_fildes, \
			   ft_fd_path(cb->aio_fildes), sat32(cb->aio_nbytes), \
			   (uint32_t)result32(r));                      \
		errno = e;                                              \
		return r;                                               \
	}

AIO_RETURN(aio_return, struct aiocb)
AIO_RETURN(aio_return64, struct aiocb64)

/* the first request listed (NULL entries skipped), the fd a wait names */
#define FIRST_FD(list, n, i) \
	for (i = 0; i < (n) && i < 1024 && !(list)[i]; i++) ;

#define AIO_SUSPEND(name, cbtype)                                       \
	int name(const cbtype *const list[], int n, const struct timespec *tmo) \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t)                                                 \
			return REAL(name)(list, n, tmo);                \
		uint64_t t0 = ft_now();                                 \
		int r = REAL(name)(list, n, tmo);                       \
		int e = errno, i;                                       \
		FIRST_FD(list, n, i)                                    \
		int fd = i < n && i < 1024 ? list[i]->aio_fildes : -1;  \
		ft_record4(t, FT_EV_AIO_SUSPEND, t0, ft_now(), (uint32_t)fd, \
			   ft_fd_path(fd), (uint32_t)n, (uint32_t)result32(r)); \
		errno = e;                                              \
		return r;                                               \
	}

AIO_SUSPEND(aio_suspend, struct aiocb)
AIO_SUSPEND(aio_suspend64, struct aiocb64)

/* lio_listio: glibc serves its requests from threads of its own (ft_solo
 * ends first, solo.c); with LIO_WAIT, the wait for them all, recorded as
 * aio_suspend's (the first request listed, how many). Exported as the
 * versions GLIBC_2.34 (the default) and GLIBC_2.4, one function in glibc;
 * GLIBC_2.2.5 is another (it also signals each request's own event), not
 * answered here: a program linked to it gets glibc's (shim/versions.map). */
#define LIO_LISTIO(name, cbtype)                                        \
	int ft_##name(int mode, cbtype *const list[], int n, struct sigevent *sev) \
	{                                                               \
		ft_solo_end();                                          \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t || mode != LIO_WAIT)                             \
			return REAL(name)(mode, list, n, sev);          \
		uint64_t t0 = ft_now();                                 \
		int r = REAL(name)(mode, list, n, sev);                 \
		int e = errno, i;                                       \
		FIRST_FD(list, n, i)                                    \
		int fd = i < n && i < 1024 ? list[i]->aio_fildes : -1;  \
		ft_record4(t, FT_EV_LIO_LISTIO, t0, ft_now(), (uint32_t)fd, \
			   ft_fd_path(fd), (uint32_t)n, (uint32_t)result32(r)); \
		errno = e;                                              \
		return r;                                               \
	}                                                               \
	__asm__(".symver ft_" #name ", " #name "@@GLIBC_2.34");         \
	__asm__(".symver ft_" #name ", " #name "@GLIBC_2.4");

LIO_LISTIO(lio_listio, struct aiocb)
LIO_LISTIO(lio_listio64, struct aiocb64)

/* liburing's set-up calls: io_uring_queue_init calls
 * io_uring_queue_init_params through the PLT in some versions: the
 * outermost call is recorded (uring_depth) */
static __thread int uring_depth;

/* the real function, looked up at the first call (uring.def), or NULL: a
 * program may find these by dlsym with no liburing loaded (it then gets
 * -ENOSYS, liburing's way of failing) */
#define URING_FN(name) static __typeof__(&name) real_##name;
#include "uring.def"
#undef URING_FN

static void *uring_real(const char *name, void *const *slot)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n((void **)slot, p, __ATOMIC_RELEASE);
	}
	return p;
}
#define URING_REAL(name) ((__typeof__(&name))uring_real(#name, (void *const *)&real_##name))

#define URING_INIT(name, params, args, pflags)                          \
	int name params                                                 \
	{                                                               \
		if (!URING_REAL(name))                                  \
			return -ENOSYS;                                 \
		struct ft_thread *t = ft_enter(FT_G_IO);                \
		if (!t || uring_depth)                                  \
			return URING_REAL(name) args;                   \
		uring_depth++;                                          \
		uint64_t t0 = ft_now();                                 \
		int r = URING_REAL(name) args;                          \
		int e = errno;                                          \
		uring_depth--;                                          \
		record_uring(t, t0, r, -1, entries, pflags, 1);         \
		errno = e;                                              \
		return r;                                               \
	}

URING_INIT(io_uring_queue_init, (unsigned entries, struct io_uring *ring, unsigned flags),
	   (entries, ring, flags), flags)
URING_INIT(io_uring_queue_init_params,
	   (unsigned entries, struct io_uring *ring, struct io_uring_params *p),
	   (entries, ring, p), p ? p->flags : 0)
URING_INIT(io_uring_queue_init_mem,
	   (unsigned entries, struct io_uring *ring, struct io_uring_params *p, void *buf,
	    size_t buf_size), (entries, ring, p, buf, buf_size), p ? p->flags : 0)

/* liburing's io_uring_setup: the system call, its result the ring's fd
 * (or -errno; -1 and errno in liburing before 2.2) */
int io_uring_setup(unsigned entries, struct io_uring_params *p)
{
	if (!URING_REAL(io_uring_setup))
		return -ENOSYS;
	struct ft_thread *t = ft_enter(FT_G_IO);
	if (!t)
		return URING_REAL(io_uring_setup)(entries, p);
	uint64_t t0 = ft_now();
	int r = URING_REAL(io_uring_setup)(entries, p);
	int e = errno;
	record_uring(t, t0, r >= 0 ? 0 : r == -1 ? -e : r, r, entries, p ? p->flags : 0, 2);
	errno = e;
	return r;
}

/* ---- the stat family: a path's metadata looked up (events.def says
 * which call each kind stands for). The path is read only when the call
 * could read it (not after EFAULT); an empty one with AT_EMPTY_PATH (or
 * statx's NULL) is the descriptor's own, named by its path. ---- */
static inline __attribute__((always_inline)) void
record_stat(struct ft_thread *t, unsigned kind, uint64_t t0, int dir, const char *path,
	    int flags, int r, int e)
{
	uint32_t id = 0;
	if (r == 0 || e != EFAULT) {
		if (path && path[0])
			id = ft_intern_path(path);
		else if (flags & AT_EMPTY_PATH)
			id = ft_fd_path(dir);
	}
	ft_record4(t, kind, t0, ft_now(), (uint32_t)dir, id, (uint32_t)(r < 0 ? -e : r),
		   (uint32_t)flags);
}

/* dir, flags: the record's (AT_FDCWD and 0 for stat and lstat) */
#define STAT_AT(name, kind, params, args, dir, flags)                   \
	TIMED(int, name, FT_G_IO, params, args,                          \
	      record_stat(t, kind, t0, dir, path, flags, r, e))

STAT_AT(stat, FT_EV_STAT, (const char *path, struct stat *st), (path, st), AT_FDCWD, 0)
STAT_AT(stat64, FT_EV_STAT, (const char *path, struct stat64 *st), (path, st), AT_FDCWD, 0)
STAT_AT(lstat, FT_EV_LSTAT, (const char *path, struct stat *st), (path, st), AT_FDCWD, 0)
STAT_AT(lstat64, FT_EV_LSTAT, (const char *path, struct stat64 *st), (path, st), AT_FDCWD, 0)
STAT_AT(fstatat, FT_EV_FSTATAT, (int dir, const char *path, struct stat *st, int flags),
	(dir, path, st, flags), dir, flags)
STAT_AT(fstatat64, FT_EV_FSTATAT, (int dir, const char *path, struct stat64 *st, int flags),
	(dir, path, st, flags), dir, flags)
STAT_AT(statx, FT_EV_STATX,
	(int dir, const char *path, int flags, unsigned mask, struct statx *st),
	(dir, path, flags, mask, st), dir, flags)
STAT_AT(__xstat, FT_EV_STAT, (int ver, const char *path, struct stat *st), (ver, path, st),
	AT_FDCWD, 0)
STAT_AT(__xstat64, FT_EV_STAT, (int ver, const char *path, struct stat64 *st),
	(ver, path, st), AT_FDCWD, 0)
STAT_AT(__lxstat, FT_EV_LSTAT, (int ver, const char *path, struct stat *st), (ver, path, st),
	AT_FDCWD, 0)
STAT_AT(__lxstat64, FT_EV_LSTAT, (int ver, const char *path, struct stat64 *st),
	(ver, path, st), AT_FDCWD, 0)
STAT_AT(__fxstatat, FT_EV_FSTATAT,
	(int ver, int dir, const char *path, struct stat *st, int flags),
	(ver, dir, path, st, flags), dir, flags)
STAT_AT(__fxstatat64, FT_EV_FSTATAT,
	(int ver, int dir, const char *path, struct stat64 *st, int flags),
	(ver, dir, path, st, flags), dir, flags)

#pragma GCC visibility pop
