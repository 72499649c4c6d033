/*
 * lifecycle.c: start-up, shutdown and everything a process can do to the
 * tracer in between: fork (the child gets its own file and starts clean),
 * exec (commit, the new image continues in the same directory), _exit
 * (commit without destructors), fatal signals (commit, then die by the
 * same signal). Exit paths that may run in a signal handler use only
 * async-signal-safe work (ft_flush_all_raw).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "callsite.h"
#include "capture.h"
#include "config.h"
#include "flight.h"
#include "internal.h"
#include "lifecycle.h"
#include "log.h"
#include "pyinject.h"

static int ready;                 /* set up for ft_pid: a file and a flusher */
static _Atomic int finished;             /* 0 tracing, 1 committing, 2 committed */
static _Atomic int exit_status = -1;

/* Signals whose default action kills: while the program leaves them at
 * SIG_DFL, our handler commits the trace and re-raises. The faults come
 * last: a crash (a segfault, an abort, a bus error on a truncated mapped
 * file) keeps its last flush interval, the part that shows what led to
 * it. The re-raised signal finds SIG_DFL back, so the process still dies
 * by it, with its core dump. A fault the handler cannot run for (a stack
 * overflow without an alternate stack) kills the process as before. */
static const int kill_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT,
				    SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static _Atomic unsigned char handler_ours[NSIG];

int ft_signal_is_ours(int sig)
{
	return sig > 0 && sig < NSIG && atomic_load(&handler_ours[sig]);
}

static void on_kill_signal(int sig)
{
	int saved = errno;
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_SIGNAL, now, now, (uint32_t)sig, 0, 0, 0);
	}
	ft_finish_now(FT_END_SIGNAL, sig);
	/* SA_RESETHAND put SIG_DFL back; SA_NODEFER lets it through now */
	atomic_store(&handler_ours[sig], 0);
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	errno = saved;
}

/* Installs our handler for sig if the disposition is SIG_DFL; 0 if done. */
int ft_signal_take(int sig)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_kill_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (!ft_shim.sigaction || ft_shim.sigaction(sig, NULL, &old) != 0 ||
	    old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
		return -1;
	if (ft_shim.sigaction(sig, &sa, NULL) != 0)
		return -1;
	atomic_store(&handler_ours[sig], 1);
	return 0;
}

void ft_signal_release(int sig)
{
	if (sig > 0 && sig < NSIG)
		atomic_store(&handler_ours[sig], 0);
}

int ft_signal_wanted(int sig)
{
	for (size_t i = 0; i < sizeof kill_signals / sizeof kill_signals[0]; i++)
		if (kill_signals[i] == sig)
			return ready;
	return 0;
}

static int my_process(void)
{
	return ready && (int)syscall(SYS_getpid) == ft_pid;
}

/* Every signal blocked in this thread while it commits; *old gets the mask
 * to put back. A killing signal that arrived mid-commit (a Pool's
 * terminate() meeting a worker already in _exit) killed the process half
 * way through its last drain: the rest of its records and END were lost. */
static void block_all(uint64_t *old)
{
	uint64_t all = ~0ull;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, sizeof all);
}

static void unblock(const uint64_t *old)
{
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, sizeof *old);
}

/* Another thread is committing: give it up to 2 s to finish before this
 * one goes on to end the process. */
static void wait_committed(void)
{
	struct timespec ts = { 0, 50000 };
	uint64_t deadline = ft_mono_ns() + 2000000000ull;   /* CLOCK_MONOTONIC */
	while (atomic_load(&finished) == 1 && ft_mono_ns() < deadline)
		syscall(SYS_nanosleep, &ts, NULL);
}

/* The final commit's start: 1 if this thread makes it (every signal then
 * blocked, *old the mask to put back), 0 if it is not ours to make (another
 * process's memory, or another thread's commit, waited for). */
static int begin_commit(uint64_t *old)
{
	int expect = 0;
	if (!my_process())
		return 0;
	if (!atomic_compare_exchange_strong(&finished, &expect, 1)) {
		wait_committed();
		return 0;
	}
	block_all(old);
	atomic_store(&ft_active, 0);
	return 1;
}

/* The flight recorder's window at the process's end (flight.c): on a
 * fatal signal always, at exit, _exit and exec when FEEDTRACE_FLIGHT_EXIT
 * asks. Holding the flush lock, before the exit paths' raw drain, which
 * then goes straight to the file after it: a raw chunk (up to 512 KiB)
 * may be larger than the whole window, and it holds the last records.
 * Async-signal-safe. */
static void flight_commit(int reason, int status)
{
	if (!ft_flight.on)
		return;
	int why = reason == FT_END_SIGNAL ? FT_FLIGHT_SIGNAL :
		  !ft_flight.at_exit ? 0 : reason == FT_END_EXEC ? FT_FLIGHT_EXEC : FT_FLIGHT_EXIT;
	if (why) {
		ft_output_flight_dump(why, status);
		ft_flight_pass(1);
		return;
	}
	/* no window: the file still gets its end's time beside END (a reader
	 * needs two clock pairs for the clock's rate) */
	struct ft_clock_pair c;
	ft_clock_sample(&c);
	struct iovec v = { &c, sizeof c };
	ft_flight_pass(1);
	ft_output_write_chunk(FT_CHUNK_CLOCK, FT_CODEC_RAW, sizeof c, &v, 1);
	ft_flight_pass(0);
}

/* Commit everything now, from any context (signal handler, _exit). The
 * signals stay blocked: the caller is leaving (a handler's return puts its
 * own mask back, and the signal it re-raised then kills). */
void ft_finish_now(int reason, int status)
{
	uint64_t old;
	if (!begin_commit(&old))
		return;
	ft_flush_lock(1000);
	flight_commit(reason, status);
	ft_flush_all_raw();
	ft_write_end(reason, status);
	atomic_store(&finished, 2);
	/* the lock stays taken: the process is going away */
}

void ft_note_exit_status(int status)
{
	atomic_store(&exit_status, status & 0xff);   /* as the parent will see it */
}

/* libc's own exit paths (err, errx, verr, verrx, error, error_at_line,
 * return from main) call exit inside libc, past every wrapper; exit runs
 * the on_exit handlers with the status. Ours must run before the
 * destructors commit: registered from our constructor it would come after
 * them (a preloaded library's constructor runs before __libc_start_main
 * registers the destructors' runner), so the main wrapper registers it
 * just before main. */
static void on_exit_status(int status, void *arg)
{
	(void)arg;
	ft_note_exit_status(status);
}

void ft_watch_exit_status(void)
{
	if (ready)
		on_exit(on_exit_status, NULL);
}

/* quick_exit: the program's at_quick_exit handlers run first (ours was
 * registered before main), then this commits, as _exit does; libc then
 * ends the process by its internal _exit, which no wrapper sees. */
void ft_note_quick_exit(int status)
{
	ft_note_exit_status(status);
}

static void on_quick_exit(void)
{
	if (!my_process())
		return;
	int status = atomic_load(&exit_status);
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_EXIT, now, now, (uint32_t)status, 0, 0, 0);
	}
	ft_finish_now(FT_END__EXIT, status);
}

void ft_before_exec(const char *path)
{
	if (!my_process() || atomic_load(&finished))
		return;
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_EXEC, now, now, ft_intern_path(path), 0, 0, 0);
	}
	uint64_t old;
	block_all(&old);                /* the exec keeps the mask: put it back */
	int locked = ft_flush_lock(1000) == 0;
	flight_commit(FT_END_EXEC, 0);
	ft_flush_all_raw();
	ft_write_end(FT_END_EXEC, 0);
	ft_flight_pass(0);              /* the exec may fail: this image goes on keeping */
	if (locked)                     /* never release the flusher's hold */
		ft_flush_unlock();
	unblock(&old);
}

/* exec returned: it failed, and this image goes on recording in the same
 * file, after the END(exec) written for it. This record (the errno in its
 * second word) tells readers that END was not the process's end. */
void ft_exec_failed(const char *path, int err)
{
	if (!my_process() || atomic_load(&finished))
		return;
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_EXEC, now, now, ft_intern_path(path),
			   (uint32_t)(err ? err : -1), 0, 0);
	}
	/* written now: killed before the next flush, the file would end at
	 * the END(exec) with nothing saying the exec failed */
	uint64_t old;
	block_all(&old);
	int locked = ft_flush_lock(1000) == 0;
	ft_flush_all_raw();
	if (locked)
		ft_flush_unlock();
	unblock(&old);
	errno = err;
}

static __thread int fork_locked FT_TLS;   /* this thread's fork_prepare took the flush lock */
static __thread int fork_overlapped FT_TLS;

static void fork_prepare(void)
{
	fork_locked = ready && ft_flush_lock(2000) == 0;
	/* glibc's malloc is fork-safe (fork takes its locks); a sanitizer's
	 * allocator is not: a fork while the flusher allocated (its thread's
	 * start-up in the sanitizer's runtime, zstd's first compression) left
	 * that allocator's lock held in the child, whose first thread then
	 * waited for ever (tests/vshapes/workers forks at once; an ASan-built
	 * program that forks at once, its leak check at the child's exit). In
	 * a sanitizer build, or in a program with a sanitizer's runtime, fork
	 * waits until the flusher is quiet (2 s at most). */
	uint64_t deadline = ft_mono_ns() + 2000000000ull;
	while (ft_alloc_fork_unsafe && ready && !ft_flusher_quiet() && ft_mono_ns() < deadline) {
		if (fork_locked)
			ft_flush_unlock();
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
		fork_locked = ft_flush_lock(2000) == 0;
	}
	/* the flusher was mid-compression: this fork did not wait for it */
	fork_overlapped = fork_locked && ft_flusher_compressing();
	/* objects loaded since the flusher's last look (a dlopen just before
	 * the fork): into the list the child writes if it leaves before its
	 * own flusher walks the loader's list (modules.c) */
	if (fork_locked && ft_capture_ever())
		ft_modules_write(NULL);
}

int ft_fork_overlapped(void)
{
	return fork_overlapped;
}

static void fork_parent(void)
{
	if (fork_locked)                /* a timeout: the flusher still holds it */
		ft_flush_unlock();
	fork_locked = 0;
}

static void fork_child(void)
{
	if (!ready)
		return;
	unsigned groups = atomic_exchange(&ft_active, 0);
	ft_pid = (int)syscall(SYS_getpid);
	atomic_store(&finished, 0);
	atomic_store(&exit_status, -1);
	atomic_store(&ft_records_written, 0);
	ft_ring_after_fork_child();
	ft_cpu_tids_after_fork_child();
	ft_strrefs_after_fork_child(ft_strtab_after_fork_child());
	groups = ft_capture_after_fork_child(groups);
	ft_clock_after_fork_child();
	ft_flight_after_fork_child();
	if (ft_shim.fork_child)
		ft_shim.fork_child();
	ft_flusher_forget();
	if (ft_out_fd >= 0)
		syscall(SYS_close, ft_out_fd);
	ft_out_fd = -1;
	if (ft_output_open() != 0 || ft_flusher_start() != 0) {
		ready = 0;
		return;
	}
	ft_flight_pass(0);              /* its file says it ran; the rest is kept */
	atomic_store(&ft_active, groups);
}

/* Calls that only a single-threaded process may make (a user namespace,
 * CLONE_THREAD/SIGHAND/VM, setns into a mount namespace) fail with EINVAL
 * beside the flusher thread. The process wrappers (shim/process.c) stop
 * the flusher for the call, its last cycle written, and start it again
 * after, so a program with one thread of its own gets what it gets
 * untraced; one with more gets EINVAL as untraced. 1 if stopped. */
int ft_alone_begin(void)
{
	if (!my_process() || atomic_load(&finished) || ft_self == &ft_thread_vfork_child)
		return 0;
	ft_flusher_stop();              /* returns holding the flush lock */
	ft_flush_unlock();
	return 1;
}

void ft_alone_end(void)
{
	if (atomic_load(&finished) == 0 && ft_flusher_start() != 0)
		ft_log("feedtrace: the flusher thread cannot start again (%s); records are "
		       "written at exit only, losses counted", strerror(errno));
}

/* One 64-bit value per run, shared with children and exec'd images
 * through the environment variable name (16 hex digits): the first
 * process of a run makes it (what names it in the one line a bad value
 * gets). */
static uint64_t run_value(const char *name, const char *what)
{
	const char *v = getenv(name);
	char buf[24];
	uint64_t x = 0;
	if (v && strlen(v) == 16 && strspn(v, "0123456789abcdefABCDEF") == 16 &&
	    (x = strtoull(v, NULL, 16)) != 0)
		return x;
	if (v)
		ft_log("feedtrace: %s=\"%.40s\" is not 16 hex digits; using a new %s", name, v, what);
	if (syscall(SYS_getrandom, &x, sizeof x, 0) != sizeof x || !x)
		x = (ft_mono_ns() ^ ((uint64_t)getpid() << 32)) | 1;
	snprintf(buf, sizeof buf, "%016llx", (unsigned long long)x);
	setenv(name, buf, 1);
	return x;
}

/* The library's start, from its constructor (shim/init.c), which hands
 * over what only the wrappers know. */
void ft_lifecycle_start(const struct ft_shim_ops *ops)
{
	ft_shim = *ops;
	ft_tls_notrace = 1;
	ft_config_load();
	ft_flight_config();
	if (ft_cfg.disabled || getauxval(AT_SECURE)) {
		ft_tls_notrace = 0;
		return;                 /* setuid/setgid images are never traced */
	}
	ft_shim.init();
	ft_callsite_init();
	if (ft_cfg.redact)
		ft_redact_key = run_value("FEEDTRACE_REDACT_KEY", "key");
	ft_run_id = run_value("FEEDTRACE_RUN_ID", "run id");
	ft_rank_load();
	ft_clock_init();
	ft_strtab_init();
	ft_pid = (int)syscall(SYS_getpid);
	if (ft_output_open() != 0 || ft_flusher_start() != 0) {
		ft_tls_notrace = 0;
		return;
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	at_quick_exit(on_quick_exit);
	ft_pyinject();
	ready = 1;
	for (size_t i = 0; i < sizeof kill_signals / sizeof kill_signals[0]; i++)
		ft_signal_take(kill_signals[i]);
	atomic_store(&ft_active, ft_capture_init());
	ft_tls_notrace = 0;
}

__attribute__((destructor(101))) static void ft_fini(void)
{
	uint64_t old;
	if (!begin_commit(&old))        /* a signal now comes after the commit */
		return;
	ft_flusher_stop();              /* joins; returns holding the flush lock */
	flight_commit(FT_END_EXIT, atomic_load(&exit_status));
	ft_write_end(FT_END_EXIT, atomic_load(&exit_status));
	ft_flush_unlock();
	atomic_store(&finished, 2);
	unblock(&old);
}
