/*
 * log.c: one line to stderr, formatted on the stack and written with a raw
 * syscall, so that it never goes through a hook or the program's stdio.
 * It never raises SIGPIPE in the program (stderr a pipe nobody reads) and
 * never changes errno, the signal mask or a SIGPIPE the program had pending.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

#define KSIGSET 8 /* the kernel's sigset size on Linux x86_64 / arm64 */

static __thread int own_table;

void ft_log_own_table(void)
{
	own_table = 1;
}

/* A thread with a table of descriptors of its own (the flusher) has no
 * stderr: it borrows the program's current one, by pidfd_getfd. */
static void write_stderr(const char *buf, size_t n)
{
	if (!own_table) {
		syscall(SYS_write, 2, buf, n);
		return;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, (int)syscall(SYS_getpid), 0);
	int fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, 2, 0) : -1;
	if (fd >= 0) {
		syscall(SYS_write, fd, buf, n);
		syscall(SYS_close, fd);
	}
	if (pidfd >= 0)
		syscall(SYS_close, pidfd);
}

/* write(2) with SIGPIPE blocked for this thread; a SIGPIPE that this write
 * made pending is taken back (it is thread-directed), one that was pending
 * before is left to the program. */
static void write_no_sigpipe(const char *buf, size_t n)
{
	sigset_t pipe_only, old, pending;
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &pipe_only, &old, KSIGSET) != 0) {
		write_stderr(buf, n);           /* cannot block: write as before */
		return;
	}
	sigemptyset(&pending);
	syscall(SYS_rt_sigpending, &pending, KSIGSET);
	int had = sigismember(&pending, SIGPIPE);
	errno = 0;
	write_stderr(buf, n);
	if (errno == EPIPE && !had) {
		struct timespec zero = { 0, 0 };
		syscall(SYS_rt_sigtimedwait, &pipe_only, NULL, &zero, KSIGSET);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, KSIGSET);
}

void ft_log(const char *fmt, ...)
{
	int saved = errno;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		if (n > (int)sizeof line - 2)
			n = (int)sizeof line - 2;
		line[n++] = '\n';
		write_no_sigpipe(line, (size_t)n);
	}
	errno = saved;
}
