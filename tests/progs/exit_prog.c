/*
 * exit_prog.c: ends a process each way libc offers (quick_exit, err*,
 * verr*, error, error_at_line) and execs that fail, after reading a file
 * N times; tests/traced/test_exits.py runs it traced and untraced. main_leaves
 * and main_cancelled: the main thread ends (pthread_exit; cancelled by a
 * second thread while it waits in pause) and the second thread reads the
 * file, prints unflushed stdio, and returns: glibc then ends the process
 * with exit(0) on it.
 * usage: exit_prog MODE FILE N STATUS
 */
#include <err.h>
#include <pthread.h>
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void reads(const char *path, int n)
{
	char buf[64];
	for (int i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, buf, sizeof buf) < 0)
			_exit(90);
		close(fd);
	}
}

static const char *leave_path;
static int leave_n;
static pthread_t main_thread;

static void *last_thread(void *cancel_main)
{
	if (cancel_main)
		pthread_cancel(main_thread);
	usleep(50000);                  /* the main thread has ended by now */
	reads(leave_path, leave_n);
	printf("last thread done\n");   /* flushed by exit(0) only */
	return NULL;
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(91);
}

static void handler_a(void) { say("quick handler a\n"); }
static void handler_b(void) { say("quick handler b\n"); }

static void call_verr(int st, int x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (x)
		verrx(st, fmt, ap);
	verr(st, fmt, ap);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *m = argv[1], *path = argv[2];
	int n = atoi(argv[3]), st = atoi(argv[4]);
	reads(path, n);
	errno = ENOENT;
	if (!strcmp(m, "quick")) {
		at_quick_exit(handler_a);
		at_quick_exit(handler_b);
		printf("buffered, never flushed\n");   /* quick_exit flushes nothing */
		quick_exit(st);
	} else if (!strcmp(m, "err")) {
		err(st, "err %d", n);
	} else if (!strcmp(m, "errx")) {
		errx(st, "errx %d", n);
	} else if (!strcmp(m, "verr")) {
		call_verr(st, 0, "verr %d", n);
	} else if (!strcmp(m, "verrx")) {
		call_verr(st, 1, "verrx %d", n);
	} else if (!strcmp(m, "error")) {
		error(st, ENOENT, "error %d", n);
	} else if (!strcmp(m, "error_at_line")) {
		error_at_line(st, EACCES, "somefile.c", 42, "error_at_line %d", n);
	} else if (!strcmp(m, "execfail_exit") || !strcmp(m, "execfail_kill")) {
		char *args[] = { "nothing", NULL };
		int r = execv("/nonexistent/feedtrace-exec", args);
		printf("execv=%d errno=%d\n", r, errno);
		fflush(stdout);
		reads(path, n);
		if (!strcmp(m, "execfail_kill"))
			raise(SIGKILL);
		exit(st);
	} else if (!strcmp(m, "exec")) {
		char *args[] = { argv[0], "done", argv[2], argv[3], argv[4], NULL };
		execv(argv[0], args);
		return 93;
	} else if (!strcmp(m, "main_leaves") || !strcmp(m, "main_cancelled")) {
		pthread_t th;
		int cancel = !strcmp(m, "main_cancelled");
		leave_path = path;
		leave_n = n;
		main_thread = pthread_self();
		printf("main leaves\n");
		if (pthread_create(&th, NULL, last_thread, cancel ? &th : NULL) != 0)
			return 94;
		if (cancel)
			for (;;)
				pause();        /* a cancellation point */
		pthread_exit(NULL);
	} else if (!strcmp(m, "done")) {
		return st;
	}
	return 3;
}
