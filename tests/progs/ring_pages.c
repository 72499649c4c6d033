/*
 * ring_pages.c: the pages the tracer faults for the program's threads
 * (its ring's first pages at attach; the string table and the rings ahead
 * of their writers, by its flusher), for tests/traced/test_ring_pages.py.
 *
 * ring_pages start N
 *   a new thread makes one read of /dev/zero (its first traced call),
 *   then N more, and prints "faults F": its own minor page faults over
 *   those N (getrusage RUSAGE_THREAD).
 * ring_pages many BASE T P R
 *   T threads each open P distinct paths that do not exist
 *   (BASE/p/tI/J, J = 0..P-1, in order) and make R reads of /dev/zero, one
 *   byte each; then the process forks, and in the child T threads each
 *   open BASE/c/tI/J (J = 0..P-1), then the parent's BASE/p/tI/J for
 *   J = 0..9 again, and make R reads. Prints "parent" and "child" lines
 *   with the calls made.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static long n_calls, n_paths, n_reads;
static const char *base;
static const char *side = "p";

static void *start_thread(void *arg)
{
	(void)arg;
	char c;
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1)
		exit(3);
	struct rusage a, b;
	getrusage(RUSAGE_THREAD, &a);
	for (long i = 0; i < n_calls; i++)
		if (read(fd, &c, 1) != 1)
			exit(3);
	getrusage(RUSAGE_THREAD, &b);
	close(fd);
	printf("faults %ld\n", b.ru_minflt - a.ru_minflt);
	return NULL;
}

static void *many_thread(void *arg)
{
	long t = (long)arg;
	char path[4096], c;
	for (long j = 0; j < n_paths; j++) {
		snprintf(path, sizeof path, "%s/%s/t%ld/%ld", base, side, t, j);
		if (open(path, O_RDONLY) >= 0)
			exit(4);
	}
	if (side[0] == 'c')
		for (long j = 0; j < 10; j++) {
			snprintf(path, sizeof path, "%s/p/t%ld/%ld", base, t, j);
			if (open(path, O_RDONLY) >= 0)
				exit(4);
		}
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		exit(3);
	for (long i = 0; i < n_reads; i++)
		if (read(fd, &c, 1) != 1)
			exit(3);
	close(fd);
	return NULL;
}

static void run_threads(long n)
{
	pthread_t th[64];
	for (long t = 0; t < n; t++)
		if (pthread_create(&th[t], NULL, many_thread, (void *)t) != 0)
			exit(5);
	for (long t = 0; t < n; t++)
		pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "start")) {
		n_calls = atol(argv[2]);
		pthread_t th;
		if (pthread_create(&th, NULL, start_thread, NULL) != 0)
			return 5;
		pthread_join(th, NULL);
		return 0;
	}
	if (argc != 6 || strcmp(argv[1], "many"))
		return 2;
	base = argv[2];
	long n = atol(argv[3]);
	n_paths = atol(argv[4]);
	n_reads = atol(argv[5]);
	if (n < 1 || n > 64)
		return 2;
	run_threads(n);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 6;
	if (pid == 0) {
		side = "c";
		run_threads(n);
		printf("child %d\n", (int)getpid());
		return 0;
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 7;
	printf("parent %d\n", (int)getpid());
	return 0;
}
