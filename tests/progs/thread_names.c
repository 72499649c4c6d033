/*
 * thread_names.c: test program for tests/traced/test_thread_names.py. Threads
 * named every way a program names them; each prints "TID NAME" (the name
 * the kernel has at the end) and makes one data read (open + read 100 +
 * close of FILE), so the test can match the trace's thread names.
 *
 *   thread_names FILE
 *     main:   reads, then prctl(PR_SET_NAME, "main-prctl")
 *     by-main: named by main with pthread_setname_np before its first read
 *     self:   reads, then names itself "self-named" (pthread_setname_np)
 *     toolong: asks for a 20-byte name (ERANGE: keeps the name it had)
 *     then a fork child reads and leaves by _exit (keeps main's name)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *file;
static pthread_barrier_t named;

static void data_read(void)
{
	char buf[100];
	int fd = open(file, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
		exit(90);
	close(fd);
}

static void say_name(void)
{
	char name[16] = { 0 };
	prctl(PR_GET_NAME, name, 0, 0, 0);
	printf("%ld %s\n", (long)syscall(SYS_gettid), name);
}

static void *by_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&named);
	data_read();
	say_name();
	return NULL;
}

static void *self_named(void *arg)
{
	(void)arg;
	data_read();
	if (pthread_setname_np(pthread_self(), "self-named") != 0)
		exit(91);
	say_name();
	return NULL;
}

static void *too_long(void *arg)
{
	(void)arg;
	data_read();
	if (pthread_setname_np(pthread_self(), "a-name-of-20-bytes!!") == 0)
		exit(92);
	say_name();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	file = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	data_read();
	prctl(PR_SET_NAME, "main-prctl", 0, 0, 0);
	say_name();
	pthread_t a, b, c;
	pthread_barrier_init(&named, NULL, 2);
	pthread_create(&a, NULL, by_main, NULL);
	if (pthread_setname_np(a, "named-by-main") != 0)
		return 93;
	pthread_barrier_wait(&named);
	pthread_join(a, NULL);
	pthread_create(&b, NULL, self_named, NULL);
	pthread_join(b, NULL);
	pthread_create(&c, NULL, too_long, NULL);
	pthread_join(c, NULL);
	pid_t kid = fork();
	if (kid == 0) {
		data_read();
		say_name();
		_exit(0);
	}
	int st;
	waitpid(kid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 94;
}
