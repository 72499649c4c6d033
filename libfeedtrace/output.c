/*
 * output.c: the run directory and this process's trace file. Creates the
 * directory 0700 and the file 0600 with O_EXCL|O_NOFOLLOW, writes the file
 * header and framed chunks with raw syscalls (never through a hook), and
 * turns a write failure into one line on stderr and a count, never into
 * a failure of the traced program.
 *
 * The flush lock, here too, serialises everything that writes the file:
 * the flusher thread, the exit paths (_exit, exec, fatal signals) that
 * drain raw without zstd, and fork, which must not copy a half-written
 * file state.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "flight.h"
#include "internal.h"
#include "log.h"

int ft_out_fd = -1;
uint64_t ft_run_id;                     /* FEEDTRACE_RUN_ID (lifecycle.c) */
_Atomic uint64_t ft_records_written;
_Atomic uint64_t ft_records_unwritten;  /* records whose chunk could not be written */
static _Atomic int out_broken;
static uint64_t good_end;               /* file size up to the last whole chunk */
static int opening;                     /* writing the header: its caller says why */
static char out_path[4400];
static uint64_t out_dev, out_ino;       /* the trace file, as opened */
static __thread int own_fd = -1;        /* the flusher's, in its own table */
static _Atomic int flush_lock_word;

/* ThreadSanitizer builds: the flush lock's acquire and release are told to
 * TSan once more. The fatal-signal path takes the lock in our own handler,
 * installed with the real sigaction: when the TSan runtime is preloaded
 * first (the test suite), it does not know that handler, and the kernel
 * may run it while the thread sits in one of the runtime's blocking
 * interceptors (pause, sleep, sem_wait), where TSan executes atomics
 * without their synchronisation (ignore_interceptors). It then reported
 * every access the lock orders (strings_pos written by the flusher, read
 * by ft_flush_all_raw) although the lock was taken. The annotations repeat
 * exactly what the CAS and the store do, at their address; a lock not
 * taken (timeout) is not annotated, so a drain beside the flusher is still
 * reported. */
#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
#define flush_lock_taken()   __tsan_acquire(&flush_lock_word)
#define flush_lock_leaving() __tsan_release(&flush_lock_word)
#else
#define flush_lock_taken()   ((void)0)
#define flush_lock_leaving() ((void)0)
#endif

int ft_flush_lock(long timeout_ms)
{
	uint64_t deadline = 0;
	for (;;) {
		int expect = 0;
		if (atomic_compare_exchange_weak(&flush_lock_word, &expect, 1)) {
			flush_lock_taken();
			return 0;
		}
		/* bounded in real time (CLOCK_MONOTONIC), not by counting naps:
		 * a nap that oversleeps on a loaded machine still counts as is */
		uint64_t now = ft_mono_ns();
		if (!deadline)
			deadline = now + (uint64_t)timeout_ms * 1000000ull;
		if (timeout_ms >= 0 && now >= deadline)
			return -1;
		struct timespec ts = { 0, 50000 };
		syscall(SYS_nanosleep, &ts, NULL);   /* async-signal-safe */
	}
}

void ft_flush_unlock(void)
{
	flush_lock_leaving();
	atomic_store(&flush_lock_word, 0);
}

/* fork child: whoever held the lock did not come along */
void ft_flush_lock_reset(void)
{
	atomic_store(&flush_lock_word, 0);
}

static long sys_write_all(int fd, const struct iovec *iov, int iovcnt)
{
	struct iovec v[8];
	int n = iovcnt < 8 ? iovcnt : 8;
	memcpy(v, iov, sizeof(struct iovec) * (size_t)n);
	long total = 0;
	int i = 0;
	while (i < n) {
		long w = syscall(SYS_writev, fd, &v[i], n - i);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		total += w;
		while (i < n && (size_t)w >= v[i].iov_len) {
			w -= (long)v[i].iov_len;
			i++;
		}
		if (i < n) {
			v[i].iov_base = (char *)v[i].iov_base + w;
			v[i].iov_len -= (size_t)w;
		}
	}
	return total;
}

/* A write past RLIMIT_FSIZE raises SIGXFSZ in the writing thread, and its
 * default action kills the process. The flusher blocks every signal, but
 * the header (constructor, fork child) and the exit paths (_exit, exec,
 * destructor, fatal signals) write from the program's own threads: block
 * SIGXFSZ around each of our writes and take back the one it raised. */
#define XFSZ_BIT (1ull << (SIGXFSZ - 1))

static long guarded_write(int fd, const struct iovec *iov, int iovcnt)
{
	uint64_t block = XFSZ_BIT, old = 0, pending = 0;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old, sizeof block);
	syscall(SYS_rt_sigpending, &pending, sizeof pending);
	long r = sys_write_all(fd, iov, iovcnt);
	int e = errno;
	if (r < 0 && e == EFBIG && !(pending & XFSZ_BIT)) {
		struct timespec zero = { 0, 0 };
		syscall(SYS_rt_sigtimedwait, &block, NULL, &zero, sizeof block);
	}
	if (!(old & XFSZ_BIT))
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
	errno = e;
	return r;
}

/* A failed write may have left part of a chunk: cut the file back to the
 * last whole chunk, so that what was written reads without damage and
 * the space is free again for the END record. */
static void cut_back(int fd)
{
	syscall(SYS_ftruncate, fd, (long)good_end);
}

static int write_chunk(unsigned type, unsigned codec, uint32_t raw_size,
		       const struct iovec *iov, int iovcnt, int even_broken);

/* A copy of fd at a number out of the program's way, or -1 (fd itself
 * is left open: the caller closes it). First choice: at or just above the
 * program's soft RLIMIT_NOFILE, where none of its own opens can land (the
 * kernel refuses them at the soft limit), so that its numbering and its
 * count of files under that limit are as untraced. The soft limit is
 * raised by 4 for the F_DUPFD and put back at once: a descriptor above
 * the limit stays valid. Where the hard limit leaves no room (`ulimit -n`
 * sets both), 700, else the highest free number below the limit: one of
 * the program's descriptors is then the trace's (docs/RELIABILITY.md). */
static int out_of_the_way(int fd)
{
	struct rlimit lim, raised;
	int high = -1;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim) != 0)
		lim.rlim_cur = lim.rlim_max = 1024;
	if (lim.rlim_cur < lim.rlim_max && lim.rlim_cur < 1u << 30) {
		raised = lim;
		raised.rlim_cur = lim.rlim_cur + 4 < lim.rlim_max ? lim.rlim_cur + 4 : lim.rlim_max;
		if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &raised, NULL) == 0) {
			high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (long)lim.rlim_cur);
			syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &lim, NULL);
		}
	}
	if (high < 0)
		high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 700);
	int floor = (int)lim.rlim_cur - 64 > fd ? (int)lim.rlim_cur - 64 : fd;
	for (int n = (int)lim.rlim_cur - 1; high < 0 && n > floor; n--)
		if (syscall(SYS_fcntl, n, F_GETFD) < 0)
			high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, n);
	return high;
}

static int is_trace_file(int fd)
{
	struct stat st;
	return fd >= 0 && syscall(SYS_fstat, fd, &st) == 0 && (uint64_t)st.st_dev == out_dev &&
	       (uint64_t)st.st_ino == out_ino;
}

/* The trace file opened again by its path, or -1 with errno set. */
static int reopen_trace_file(void)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, out_path,
			      O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || is_trace_file(fd))
		return fd;
	syscall(SYS_close, fd);
	errno = ESTALE;                          /* another file at that path now */
	return -1;
}

/* Before each chunk: the trace descriptor still refers to the trace file.
 * A program may have put a file of its own at that number behind libc's
 * back (a raw dup2 or dup3 system call, as Go and seccomp-wrapped runtimes
 * make): that number is the program's now, never written or closed again.
 * The trace file is opened again by its path (no link followed, and only
 * if it is still the same file) at a number out of the way; else output
 * stops with one line, losses counted. Costs one fstat per chunk written
 * from a program thread (exit paths; the flusher has its own table: below,
 * ft_output_own_table). The caller holds the flush lock. */
static int still_ours(void)
{
	if (is_trace_file(ft_out_fd))
		return 0;
	ft_out_fd = -1;
	int fd = reopen_trace_file();
	int e = errno;
	if (fd >= 0) {
		int high = out_of_the_way(fd);
		if (high >= 0) {
			syscall(SYS_close, fd);
			fd = high;
		}
		ft_out_fd = fd;
		return 0;
	}
	if (!atomic_exchange(&out_broken, 1))
		ft_log("feedtrace: the program put another file at the descriptor of %s and the "
		       "trace file cannot be opened again (%s); tracing goes on without output, "
		       "losses counted", out_path, strerror(e));
	return -1;
}

/* The flusher thread, as it starts: a table of descriptors of its own
 * (unshare CLONE_FILES) holding the trace file only. Whatever the program
 * then puts at any number of its own table, by libc or a raw system call,
 * cannot reach the flusher's: the fstat of still_ours() followed by the
 * write left a moment in which a raw dup2 could slip the program's file
 * under the write. The copy of the program's other descriptors is closed
 * at once (a pipe's EOF waits for no one but the program). Where unshare
 * is refused (seccomp), the shared table and still_ours() remain. Its
 * lines borrow the program's stderr of the moment (log.c). Every
 * file is opened O_APPEND, so writes by the flusher's descriptor and by a
 * program thread's (exit paths, a reopened file) all go to the end. */
int ft_output_own_table_held(void)
{
	return own_fd >= 0;
}

void ft_output_own_table(void)
{
	own_fd = -1;
	int fd = ft_out_fd;
	if (fd < 0 || syscall(SYS_unshare, CLONE_FILES) != 0)
		return;
	if (fd > 0 && syscall(SYS_close_range, 0, (unsigned)fd - 1, 0) != 0)
		for (int n = 0; n < fd; n++)
			syscall(SYS_close, n);
	if (syscall(SYS_close_range, (unsigned)fd + 1, ~0u, 0) != 0) {
		struct rlimit lim;
		if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim) != 0 || lim.rlim_cur > 1u << 20)
			lim.rlim_cur = 1u << 20;
		for (int n = fd + 1; n < (int)lim.rlim_cur; n++)
			syscall(SYS_close, n);
	}
	ft_log_own_table();
	/* the program may have put a file of its own at that number before
	 * this thread ran: the copy is the program's then */
	if (!is_trace_file(fd)) {
		syscall(SYS_close, fd);
		fd = reopen_trace_file();
		if (fd < 0) {
			if (!atomic_exchange(&out_broken, 1))
				ft_log("feedtrace: the program put another file at the descriptor of %s "
				       "and the trace file cannot be opened again (%s); tracing goes "
				       "on without output, losses counted", out_path, strerror(errno));
			return;
		}
	}
	own_fd = fd;
}

/* Every chunk but the END leaves room for the END, under RLIMIT_FSIZE and
 * on the disk: small chunks (clock pairs, CPU samples) could otherwise
 * fill the file, or the file system, to a few bytes short, and the END,
 * which says what was lost and how the process ended, would not fit. On
 * the disk the chunk and the END's room after it are allocated first
 * (fallocate, the file's size kept): the write then cannot fail for want
 * of space, and the END goes into blocks already the file's. Measured
 * before: a 256 KiB tmpfs filled by a run ended with no END in 2 of 30
 * runs (tests/traced/test_faults.py). Where the file system cannot allocate
 * ahead (EOPNOTSUPP), the write is tried as it comes. -1 (EFBIG, ENOSPC,
 * EDQUOT), nothing written, when the chunk does not fit with that room. */
static int fallocate_works = 1;

static int guarded_write_room(int fd, uint64_t bytes, int last)
{
	struct { uint64_t cur, max; } lim;
	uint64_t room = sizeof(struct ft_chunk_header) + sizeof(struct ft_end_info);
	if (last)
		return 0;
	if (syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &lim) == 0 && lim.cur != ~0ull &&
	    good_end + bytes + room > lim.cur) {
		errno = EFBIG;
		return -1;
	}
	while (fallocate_works &&
	       syscall(SYS_fallocate, fd, FALLOC_FL_KEEP_SIZE, (long)good_end,
		       (long)(bytes + room)) != 0) {
		if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
			return -1;
		if (errno != EINTR)
			fallocate_works = 0;    /* not here: write as it comes */
	}
	return 0;
}

int ft_output_write_chunk(unsigned type, unsigned codec, uint32_t raw_size,
			  const struct iovec *iov, int iovcnt)
{
	return write_chunk(type, codec, raw_size, iov, iovcnt, 0);
}

/* The END record is tried even after a failed write: cut_back() may have
 * made room for it, and it carries the count of what was lost. */
int ft_output_write_last(unsigned type, unsigned codec, uint32_t raw_size,
			 const struct iovec *iov, int iovcnt)
{
	return write_chunk(type, codec, raw_size, iov, iovcnt, 1);
}

static int write_chunk(unsigned type, unsigned codec, uint32_t raw_size,
		       const struct iovec *iov, int iovcnt, int even_broken)
{
	struct ft_chunk_header h;
	struct iovec all[8];
	uint64_t stored = 0;
	uint32_t ph = 2166136261u;

	if (iovcnt > 7)
		return -1;
	for (int i = 0; i < iovcnt; i++) {
		const unsigned char *p = iov[i].iov_base;
		for (size_t j = 0; j < iov[i].iov_len; j++) {
			ph ^= p[j];
			ph *= 16777619u;
		}
		stored += iov[i].iov_len;
		all[i + 1] = iov[i];
	}
	h.magic = FT_CHUNK_MAGIC;
	h.type = (uint16_t)type;
	h.codec = (uint16_t)codec;
	h.stored_size = (uint32_t)stored;
	h.raw_size = raw_size;
	h.payload_hash = ph;
	h.header_hash = ft_hash32(&h, offsetof(struct ft_chunk_header, header_hash));
	all[0].iov_base = &h;
	all[0].iov_len = sizeof h;
	if (ft_flight_keep(all, iovcnt + 1, sizeof h + stored))
		return 0;               /* the flight recorder's, in memory */
	if (atomic_load(&out_broken) && !even_broken)
		return -1;
	int fd = own_fd;
	if (fd < 0) {
		if (ft_out_fd < 0 || still_ours() != 0)
			return -1;
		fd = ft_out_fd;
	}
	int room = guarded_write_room(fd, sizeof h + stored, even_broken);
	if (room < 0 || guarded_write(fd, all, iovcnt + 1) < 0) {
		int e = errno;
		if (room == 0)
			cut_back(fd);           /* not after no write: keep the END's room */
		if (!atomic_exchange(&out_broken, 1) && !opening)
			ft_log("feedtrace: writing %s failed (%s); tracing goes on without output, losses counted",
			       out_path, strerror(e));
		return -1;
	}
	good_end += sizeof h + stored;
	return 0;
}

/* Chunks already framed (the flight recorder's), written as they are. */
static int write_framed(const void *data, size_t n)
{
	if (atomic_load(&out_broken))
		return -1;
	int fd = own_fd;
	if (fd < 0) {
		if (ft_out_fd < 0 || still_ours() != 0)
			return -1;
		fd = ft_out_fd;
	}
	struct iovec v = { (void *)data, n };
	int room = guarded_write_room(fd, n, 0);
	if (room < 0 || guarded_write(fd, &v, 1) < 0) {
		int e = errno;
		if (room == 0)
			cut_back(fd);
		if (!atomic_exchange(&out_broken, 1))
			ft_log("feedtrace: writing %s failed (%s); tracing goes on without output, "
			       "losses counted", out_path, strerror(e));
		return -1;
	}
	good_end += n;
	return 0;
}

/* The flight recorder's window (flight.c) into the file: a FLIGHT chunk
 * saying why, the defining chunks not written yet, the window's chunks,
 * oldest first. The caller holds the flush lock; async-signal-safe. */
void ft_output_flight_dump(int why, int detail)
{
	struct ft_flight_info fi;
	ft_flight_info(&fi, why, detail);
	struct iovec v = { &fi, sizeof fi };
	write_chunk(FT_CHUNK_FLIGHT, FT_CODEC_RAW, sizeof fi, &v, 1, 0);
	uint64_t cursor = 0;
	const void *data;
	size_t n;
	while ((n = ft_flight_next(&cursor, &data)) > 0)
		write_framed(data, n);
	ft_flight_dumped();
}

/* The program is about to make fd the copy of another file (dup2, dup3)
 * or close it (close_range, closefrom): if fd is the trace file's, move the
 * trace file to another number first, under the flush lock, so that no
 * chunk goes into the program's file and the trace goes on. Where no
 * number is free, the trace file is given up: one line, losses counted.
 * A vfork or posix_spawn child (another pid on our memory) has a table of
 * descriptors of its own, where ours closes at exec: nothing to do. */
void ft_output_vacate(int fd)
{
	if (fd < 0 || fd != ft_out_fd || (int)syscall(SYS_getpid) != ft_pid)
		return;
	int locked = ft_flush_lock(1000) == 0;
	if (fd == ft_out_fd) {
		int moved = out_of_the_way(fd);
		if (moved < 0)
			moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, fd + 1);
		if (moved < 0)
			moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
		if (moved >= 0) {
			ft_out_fd = moved;
		} else {
			int e = errno;
			ft_out_fd = -1;
			if (!atomic_exchange(&out_broken, 1))
				ft_log("feedtrace: the program took the descriptor of %s and no other "
				       "is free (%s); tracing goes on without output, losses counted",
				       out_path, strerror(e));
		}
		syscall(SYS_close, fd);
	}
	if (locked)
		ft_flush_unlock();
}

/* The run directory, opened as a descriptor, 0700 for what is created.
 * Its path is walked from the root a component at a time: a directory this
 * process creates, and the last component, are opened without following a
 * symbolic link (a link planted in a shared directory, or a trailing "/",
 * cannot steer the trace elsewhere); existing parents resolve as usual.
 * The last directory must belong to this user and be writable by no one
 * else, unless this process just made it. fresh: the last component must
 * be made now (a default name: one that exists was someone else's).
 * Returns the descriptor, or -1 with *why set. */
static int open_run_dir(const char *path, int fresh, const char **why)
{
	char comp[256];
	int dirfd = (int)syscall(SYS_openat, AT_FDCWD, path[0] == '/' ? "/" : ".",
				 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int made_last = 0;
	const char *p = path;
	*why = "cannot open";
	while (dirfd >= 0) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		if (n >= sizeof comp) {
			syscall(SYS_close, dirfd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		p += n;
		const char *q = p;
		while (*q == '/')
			q++;
		int last = !*q;
		long mk = syscall(SYS_mkdirat, dirfd, comp, 0700);
		if (mk < 0 && errno != EEXIST) {
			*why = "cannot create";
			syscall(SYS_close, dirfd);
			return -1;
		}
		if (last && fresh && mk < 0) {
			*why = "exists already";
			syscall(SYS_close, dirfd);
			errno = EEXIST;
			return -1;
		}
		int follow = mk < 0 && !last;
		int next = (int)syscall(SYS_openat, dirfd, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
					(follow ? 0 : O_NOFOLLOW));
		if (next < 0) {
			/* O_NOFOLLOW|O_DIRECTORY on a link fails ENOTDIR: say which */
			int e = errno;
			struct stat ls;
			if (!follow && syscall(SYS_newfstatat, dirfd, comp, &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(ls.st_mode))
				*why = "is a symbolic link: not following it", e = ELOOP;
			errno = e;
		}
		int e = errno;
		syscall(SYS_close, dirfd);
		errno = e;
		dirfd = next;
		made_last = mk == 0;
	}
	if (dirfd < 0)
		return -1;
	struct stat st;
	if (!made_last && (syscall(SYS_fstat, dirfd, &st) != 0 || st.st_uid != geteuid() ||
			   (st.st_mode & 022))) {
		*why = st.st_uid != geteuid() ? "belongs to another user"
					       : "is writable by other users (chmod go-w)";
		syscall(SYS_close, dirfd);
		errno = EPERM;
		return -1;
	}
	return dirfd;
}

/* feedtrace-DATE-TIME-PID in the current directory: unique per run (the
 * pid of the process that starts it; children inherit FEEDTRACE_OUT) */
static void default_dir(char *out, size_t cap, int seq)
{
	char cwd[3800];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	if (!getcwd(cwd, sizeof cwd))
		strcpy(cwd, "/tmp");
	int n = snprintf(out, cap, "%s/feedtrace-%04d%02d%02d-%02d%02d%02d-%d", cwd,
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			 tm.tm_min, tm.tm_sec, (int)getpid());
	if (seq && n > 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, ".%d", seq);
}

/* The N of HOST.PID.N.ft: how many images of this pid wrote a file in
 * this run before this one (exec keeps the pid). */
static uint32_t file_seq;

/* This host's name; FEEDTRACE_TEST_HOST (test-only) plants another, as
 * if the process ran there (tests of the ranks across hosts). */
static void host_name(char *out, size_t cap)
{
	const char *t = getenv("FEEDTRACE_TEST_HOST");
	memset(out, 0, cap);
	if (t && *t)
		strncpy(out, t, cap - 1);
	else
		gethostname(out, cap - 1);
}

static int write_header(void)
{
	struct ft_file_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, FT_FILE_MAGIC, 8);
	h.version = FT_FORMAT_VERSION;
	h.header_size = sizeof h;
	h.clock_kind = ft_clock_file_kind();
	h.pid = (int32_t)getpid();
	h.ppid = (int32_t)getppid();
	h.exec_seq = file_seq;
	h.hooks = ft_cfg.hooks;
	struct ft_clock_pair c;
	ft_clock_sample(&c);
	h.start_ticks = c.ticks;
	h.start_mono_ns = c.mono_ns;
	h.start_real_ns = c.real_ns;
	ft_clock_file_start(&c);
	h.ring_slots = ft_cfg.ring_kb * 1024 / FT_SLOT_SIZE;
	host_name(h.host, sizeof h.host);
	h.run_id = ft_run_id;
	h.rank = ft_rank.rank;
	h.local_rank = ft_rank.local_rank;
	h.world_size = ft_rank.world_size;
	h.launcher = ft_rank.launcher;
	memcpy(h.job, ft_rank.job, sizeof h.job);
	struct iovec v = { &h, sizeof h };
	if (guarded_write(ft_out_fd, &v, 1) < 0)
		return -1;
	good_end = sizeof h;
	struct iovec cv = { &c, sizeof c };
	return ft_output_write_chunk(FT_CHUNK_CLOCK, FT_CODEC_RAW, sizeof c, &cv, 1);
}

/* The command line and executable, once per file. */
static void write_process_chunk(void)
{
	static char cmd[8192];
	struct ft_process_info pi;
	memset(&pi, 0, sizeof pi);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	long n = 0;
	if (fd >= 0) {
		long r;
		while (n < (long)sizeof cmd - 1 &&
		       (r = syscall(SYS_read, fd, cmd + n, sizeof cmd - 1 - (size_t)n)) > 0)
			n += r;
		syscall(SYS_close, fd);
	}
	if (n < 0)
		n = 0;
	cmd[n] = 0;
	for (long i = 0; i < n; i++)
		if (cmd[i] == 0)
			pi.argc++;
	if (ft_cfg.redact) {
		/* the program's name stays; its arguments become one hash */
		size_t first = strnlen(cmd, (size_t)n);
		const char *base = strrchr(cmd, '/');
		base = base ? base + 1 : cmd;
		char hash[26], red[300];
		ft_redact_text(cmd + first, (size_t)n - first, hash);
		int k = snprintf(red, sizeof red, "%s%c%s", base, 0, hash);
		memcpy(cmd, red, (size_t)k + 1);
		n = k + 1;
		pi.argc = 2;
	}
	pi.cmdline_len = (uint32_t)n;
	char exe[4096];
	long e = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
	if (e > 0) {
		exe[e] = 0;
		pi.exe_id = ft_intern_path(exe);
	}
	struct iovec v[2] = { { &pi, sizeof pi }, { cmd, (size_t)n } };
	ft_output_write_chunk(FT_CHUNK_PROCESS, FT_CODEC_RAW, (uint32_t)(sizeof pi + (size_t)n), v, 2);
	/* a fork child's exe path is an inherited string: its file needs it */
	size_t k = ft_strrefs_one(pi.exe_id, (unsigned char *)exe, sizeof exe);
	if (k) {
		struct iovec s = { exe, k };
		ft_output_write_chunk(FT_CHUNK_STRINGS, FT_CODEC_RAW, (uint32_t)k, &s, 1);
	}
}

/* Opens this process's file in the run directory. 0 on success. */
int ft_output_open(void)
{
	char host[64] = "host";
	int dirfd;

	const char *why = NULL;
	if (!ft_cfg.out_dir[0]) {
		dirfd = -1;
		for (int seq = 0; seq < 100 && dirfd < 0; seq++) {
			default_dir(ft_cfg.out_dir, sizeof ft_cfg.out_dir, seq);
			dirfd = open_run_dir(ft_cfg.out_dir, 1, &why);
			if (dirfd < 0 && errno != EEXIST)
				break;
		}
	} else {
		dirfd = open_run_dir(ft_cfg.out_dir, 0, &why);
	}
	if (dirfd < 0) {
		ft_log("feedtrace: run directory %s: %s (%s); not tracing", ft_cfg.out_dir, why,
		       strerror(errno));
		return -1;
	}
	/* children and exec'd images write into the same directory, by its
	 * absolute path (a child may change directory first) */
	if (!getenv("FEEDTRACE_OUT") || strcmp(getenv("FEEDTRACE_OUT"), ft_cfg.out_dir) != 0)
		setenv("FEEDTRACE_OUT", ft_cfg.out_dir, 1);
	host_name(host, sizeof host);
	for (char *p = host; *p; p++)
		if (*p == '/' || *p == '.')
			*p = '_';
	int pid = getpid(), fd = -1;
	char name[160];
	for (int seq = 0; seq < 1000 && fd < 0; seq++) {
		if (seq == 0)
			snprintf(name, sizeof name, "%s.%d.ft", host, pid);
		else
			snprintf(name, sizeof name, "%s.%d.%d.ft", host, pid, seq);
		fd = (int)syscall(SYS_openat, dirfd, name,
				  O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		file_seq = (uint32_t)seq;
		if (fd < 0 && errno != EEXIST)
			break;
	}
	int e = errno;
	syscall(SYS_close, dirfd);
	if (fd < 0) {
		ft_log("feedtrace: cannot create a trace file in %s (%s); not tracing",
		       ft_cfg.out_dir, strerror(e));
		return -1;
	}
	int high = out_of_the_way(fd);
	if (high >= 0) {
		syscall(SYS_close, fd);
		fd = high;
	}
	snprintf(out_path, sizeof out_path, "%s/%s", ft_cfg.out_dir, name);
	ft_out_fd = fd;
	struct stat ost;
	if (syscall(SYS_fstat, fd, &ost) == 0)
		out_dev = (uint64_t)ost.st_dev, out_ino = (uint64_t)ost.st_ino;
	atomic_store(&out_broken, 0);
	atomic_store(&ft_records_unwritten, 0);
	good_end = 0;
	opening = 1;
	int hr = write_header();
	opening = 0;
	if (hr != 0) {
		/* no header, no trace: leave no unreadable file behind */
		ft_log("feedtrace: writing %s failed (%s); not tracing", out_path, strerror(errno));
		syscall(SYS_close, fd);
		ft_out_fd = -1;
		syscall(SYS_unlinkat, AT_FDCWD, out_path, 0);
		return -1;
	}
	write_process_chunk();
	return 0;
}
