/*
 * solo_prog.c: test program for shim/solo.c (tests/traced/test_solo.py).
 *
 *   solo_prog MODE FILE
 *
 * 1 000 cached one-byte preads of FILE, then MODE, then 1 000 more; prints
 * each call's result and errno for a few calls that fail (byte for byte the
 * same traced and untraced). MODE: none; pthread, thrd, aio, gai (each
 * makes a thread, or glibc makes one for it); cancel: a second thread
 * waits in read() on an empty pipe and the main thread cancels it (its
 * clean-up handler prints "cancelled").
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

static long sum;

static void preads(int fd)
{
	char c;
	for (int i = 0; i < 1000; i++)
		sum += pread(fd, &c, 1, 0);
}

static void show(const char *what, long r)
{
	int e = errno;
	printf("%s %ld %s\n", what, r, r < 0 ? strerror(e) : "");
	errno = 0;
}

static void *nothing(void *a)
{
	return a;
}

static int nothing_thrd(void *a)
{
	(void)a;
	return 0;
}

static int pipe_in[2];

static void said_cancelled(void *a)
{
	(void)a;
	printf("cancelled\n");
	fflush(stdout);
}

/* waits in read() on an empty pipe: a cancellation point */
static void *reader(void *a)
{
	char c;
	pthread_cleanup_push(said_cancelled, NULL);
	read(pipe_in[0], &c, 1);
	pthread_cleanup_pop(0);
	printf("not cancelled\n");
	return a;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *mode = argv[1];
	int fd = open(argv[2], O_RDONLY);
	char b[8];
	show("open", fd);
	preads(fd);
	show("read", read(fd, b, 4));
	show("read bad fd", read(-5, b, 1));
	show("pread bad offset", pread(fd, b, 1, -1));
	show("open missing", open("/nonexistent/solo", O_RDONLY));
	show("openat bad dir", openat(999, "x", O_RDONLY));
	if (strcmp(mode, "pthread") == 0) {
		pthread_t th;
		pthread_create(&th, NULL, nothing, NULL);
		pthread_join(th, NULL);
	} else if (strcmp(mode, "thrd") == 0) {
		thrd_t th;
		thrd_create(&th, nothing_thrd, NULL);
		thrd_join(th, NULL);
	} else if (strcmp(mode, "aio") == 0) {
		struct aiocb cb = { .aio_fildes = fd, .aio_buf = b, .aio_nbytes = 1 };
		const struct aiocb *list[1] = { &cb };
		aio_read(&cb);
		aio_suspend(list, 1, NULL);
		show("aio", aio_return(&cb));
	} else if (strcmp(mode, "gai") == 0) {
		struct gaicb req = { .ar_name = "localhost" };
		struct gaicb *list[1] = { &req };
		getaddrinfo_a(GAI_WAIT, list, 1, NULL);
		if (req.ar_result)
			freeaddrinfo(req.ar_result);
		show("gai", 0);
	} else if (strcmp(mode, "cancel") == 0) {
		pthread_t th;
		void *r;
		if (pipe(pipe_in) != 0)
			return 1;
		fflush(stdout);
		pthread_create(&th, NULL, reader, NULL);
		usleep(100000);
		pthread_cancel(th);
		pthread_join(th, &r);
		show("joined, cancelled", r == PTHREAD_CANCELED);
	}
	preads(fd);
	show("close", close(fd));
	show("close again", close(fd));
	printf("sum %ld\n", sum);
	return 0;
}
