/*
 * process.c: wrappers for the calls that end, copy or replace a process
 * (fork, exit, _exit, exec*), for sigaction/signal so that the program
 * sees its own view of the signals whose default we stand in for, and for
 * unshare/setns, which a single-threaded process only may make, and for
 * clone, whose CLONE_VM child may share the caller's thread state.
 * posix_spawn is not wrapped: its child calls only libc's internal
 * functions, never a wrapper. vfork is, in assembly (x86-64): its child
 * runs on the parent's memory, so while it does, the calling thread's
 * ring pointer is a stand-in that makes every hook pass straight through
 * (its dup2 and close would otherwise have gone into the parent's ring and
 * fd->path table); the parent puts its own back when vfork returns to it.
 */
#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>

#include "real.h"
#include "../libfeedtrace/internal.h"
#include "../libfeedtrace/lifecycle.h"

/* every non-static function below is a wrapper: exported */
#pragma GCC visibility push(default)

#if defined(__x86_64__)
/* vfork cannot be a C function: the child returns from it and goes on
 * using the stack below the caller's frame, which the parent then finds
 * changed. Like glibc's own, this keeps the return address in a register
 * (each task has its own registers) and makes the system call itself.
 * %rsi keeps the thread's ring pointer for the parent. */
__attribute__((visibility("hidden"))) long ft_vfork_failed(long neg_errno);
__asm__(
	".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	popq %rdi\n"                             /* the caller's return address */
	"	movq ft_self@gottpoff(%rip), %rcx\n"
	"	movq %fs:(%rcx), %rsi\n"
	"	leaq ft_thread_vfork_child(%rip), %rdx\n"
	"	movq %rdx, %fs:(%rcx)\n"
	"	movl $58, %eax\n"                        /* SYS_vfork */
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"                                 /* the child keeps the stand-in */
	"	movq ft_self@gottpoff(%rip), %rcx\n"     /* the parent, or no child */
	"	movq %rsi, %fs:(%rcx)\n"
	"	cmpq $-4095, %rax\n"
	"	jae 2f\n"
	"1:	pushq %rdi\n"
	"	ret\n"
	"2:	pushq %rdi\n"
	"	movq %rax, %rdi\n"
	"	jmp ft_vfork_failed\n"
	".size vfork, .-vfork\n");
#endif

pid_t fork(void)
{
	struct ft_thread *t = ft_enter(FT_G_PROC);
	uint64_t t0 = t ? ft_now() : 0;
	pid_t pid = REAL(fork)();
	if (t && pid > 0) {
		int e = errno;
		ft_record4(t, FT_EV_FORK, t0, ft_now(), (uint32_t)pid,
			   (uint32_t)ft_fork_overlapped(), 0, 0);
		errno = e;
	}
	return pid;
}

/* clone with CLONE_VM and without CLONE_SETTLS: the child runs on this
 * thread's TLS, hence sees its ring pointer; while it may run, that is a
 * stand-in that tells the two apart (ring.c, ft_shared_begin). The kernel
 * tells the child's end by clearing a word (CLONE_CHILD_CLEARTID), which
 * is added unless the program asked for it itself. */
int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (!(flags & CLONE_VM) || (flags & CLONE_SETTLS))
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	int watched = (flags & CLONE_CHILD_CLEARTID) != 0;
	_Atomic int32_t *live = ft_shared_begin(watched);
	if (live && !watched) {
		flags |= CLONE_CHILD_CLEARTID;
		ctid = (pid_t *)live;
	}
	int r = REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	int e = errno;
	ft_shared_end(live, r > 0);
	errno = e;
	return r;
}

#if defined(__x86_64__)
/* vfork failed (no child): errno, and -1 to vfork's caller. */
__attribute__((visibility("hidden"))) long ft_vfork_failed(long neg_errno)
{
	errno = (int)-neg_errno;
	return -1;
}
#endif

static void record_exit(int status)
{
	/* A vfork/posix_spawn child whose exec failed leaves by _exit on its
	 * parent's memory: ft_self is the parent's ring, and the record would
	 * say the parent exited. */
	if ((int)syscall(SYS_getpid) != ft_pid)
		return;
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_EXIT, now, now, (uint32_t)status, 0, 0, 0);
	}
}

void _exit(int status)
{
	record_exit(status);
	ft_finish_now(FT_END__EXIT, status);
	REAL(_exit)(status);
	__builtin_unreachable();
}

void _Exit(int status)
{
	record_exit(status);
	ft_finish_now(FT_END__EXIT, status);
	REAL(_Exit)(status);
	__builtin_unreachable();
}

/* The status main returns reaches libc's exit() without passing any
 * wrapper: wrap main itself to learn it. */
static int (*program_main)(int, char **, char **);

static int main_returning(int argc, char **argv, char **envp)
{
	ft_watch_exit_status();         /* exit from inside libc: err(), error() */
	int status = program_main(argc, argv, envp);
	ft_note_exit_status(status);
	return status;
}

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
		      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
		      void *stack_end)
{
	program_main = main;
	return REAL(__libc_start_main)(main_returning, argc, argv, init, fini, rtld_fini,
				       stack_end);
}

void exit(int status)
{
	ft_note_exit_status(status);
	REAL(exit)(status);
	__builtin_unreachable();
}

void quick_exit(int status)
{
	ft_note_quick_exit(status);
	REAL(quick_exit)(status);
	__builtin_unreachable();
}

/* unshare and setns: what only a single-threaded process may do runs with
 * the flusher stopped (libfeedtrace/lifecycle.c, ft_alone_begin). A raw
 * unshare system call is not seen (docs/RELIABILITY.md). */
#define FT_ALONE_FLAGS (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

int unshare(int flags)
{
	int alone = (flags & FT_ALONE_FLAGS) && ft_alone_begin();
	int r = REAL(unshare)(flags);
	int e = errno;
	if (alone)
		ft_alone_end();
	errno = e;
	return r;
}

int setns(int fd, int nstype)
{
	/* a user or mount namespace needs a single-threaded caller; the type
	 * (0: any) is known only from fd */
	int alone = ft_alone_begin();
	int r = REAL(setns)(fd, nstype);
	int e = errno;
	if (alone)
		ft_alone_end();
	errno = e;
	return r;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	ft_before_exec(path);
	int r = REAL(execve)(path, argv, envp);   /* returns only on failure: recording goes on */
	ft_exec_failed(path, errno);
	return r;
}

int execv(const char *path, char *const argv[])
{
	ft_before_exec(path);
	int r = REAL(execv)(path, argv);   /* returns only on failure: recording goes on */
	ft_exec_failed(path, errno);
	return r;
}

int execvp(const char *file, char *const argv[])
{
	ft_before_exec(file);
	int r = REAL(execvp)(file, argv);   /* returns only on failure: recording goes on */
	ft_exec_failed(file, errno);
	return r;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	ft_before_exec(file);
	int r = REAL(execvpe)(file, argv, envp);   /* returns only on failure: recording goes on */
	ft_exec_failed(file, errno);
	return r;
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	ft_before_exec("(fexecve)");
	int r = REAL(fexecve)(fd, argv, envp);   /* returns only on failure: recording goes on */
	ft_exec_failed("(fexecve)", errno);
	return r;
}

/* execl*: glibc builds argv and calls its internal execve, which no
 * wrapper sees; so build argv here and go through the wrappers above. */
#define MAX_EXECL_ARGS 4096

static int collect_args(const char *arg0, va_list ap, char **argv)
{
	int n = 0;
	argv[n++] = (char *)arg0;
	while (arg0 && n < MAX_EXECL_ARGS) {
		char *a = va_arg(ap, char *);
		argv[n++] = a;
		if (!a)
			return n;
	}
	if (!arg0)
		return n;
	errno = E2BIG;
	return -1;
}

int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS + 1];
	va_list ap;
	va_start(ap, arg);
	int n = collect_args(arg, ap, argv);
	va_end(ap);
	if (n < 0)
		return -1;
	return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS + 1];
	va_list ap;
	va_start(ap, arg);
	int n = collect_args(arg, ap, argv);
	va_end(ap);
	if (n < 0)
		return -1;
	return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS + 1];
	va_list ap;
	va_start(ap, arg);
	int n = collect_args(arg, ap, argv);
	char **envp = n > 0 ? va_arg(ap, char **) : NULL;
	va_end(ap);
	if (n < 0)
		return -1;
	return execve(path, argv, envp);
}

/* While the program leaves a killing signal at SIG_DFL our handler stands
 * in (it commits the trace, then dies by the signal); the program is shown
 * SIG_DFL. Once it installs a handler, that handler is the real one. */
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!ft_signal_wanted(sig) || ft_self_foreign())
		return REAL(sigaction)(sig, act, old);
	if (ft_signal_is_ours(sig)) {
		if (old) {
			memset(old, 0, sizeof *old);
			old->sa_handler = SIG_DFL;
		}
		if (!act || (act->sa_handler == SIG_DFL && !(act->sa_flags & SA_SIGINFO)))
			return 0;
		ft_signal_release(sig);
		int r = REAL(sigaction)(sig, act, NULL);
		if (r != 0)
			ft_signal_take(sig);
		return r;
	}
	int r = REAL(sigaction)(sig, act, old);
	if (r == 0 && act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL)
		ft_signal_take(sig);
	return r;
}

sighandler_t signal(int sig, sighandler_t handler)
{
	if (!ft_signal_wanted(sig) || ft_self_foreign())
		return REAL(signal)(sig, handler);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

#pragma GCC visibility pop
