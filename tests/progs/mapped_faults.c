/*
 * mapped_faults.c: test program for tests/traced/test_mapped_programs.py.
 * Maps FILE (read-only, MADV_RANDOM: a page per fault) and reads one byte
 * of every page, shared out among N loaders and the main thread: page i goes to
 * loader i % (N + 1), the main thread's share last. Loaders are threads
 * started after the mapping, named "loader-K", each taking a lock first,
 * or forked processes. Each prints its own count of major page faults:
 *
 *   thread TID FAULTS   a loader thread's, from its start (RUSAGE_THREAD)
 *   proc PID FAULTS     a loader process's, from its fork (RUSAGE_SELF)
 *   main TID FAULTS     the main thread's, from just before the mapping
 *   sum SUM             the bytes read, added (0 for a file of zeros)
 *
 *   mapped_faults threads|procs|quiet N FILE
 *   (quiet: loader threads that make no traced call, so have no ring of
 *   the tracer's: their counts are printed by the main thread after)
 *   mapped_faults fds N FILE    N threads read the map's pages over and over
 *                               while the main thread opens /dev/null and
 *                               closes it, 200,000 times, by raw system
 *                               calls: prints "fds LOW" (each open got the
 *                               lowest free number) or "fds MOVED A B"
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const volatile unsigned char *data;
static size_t pages;
static int loaders;
static pthread_mutex_t start = PTHREAD_MUTEX_INITIALIZER;
static unsigned long sums[64];
static volatile int stop;

static void *spinner(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&start);
	pthread_mutex_unlock(&start);
	unsigned long s = 0;
	while (!stop)
		for (size_t i = 0; i < pages && !stop; i += 64)
			s += data[i * 4096];
	return (void *)s;
}

/* the lowest free descriptor, opened and closed again and again: the
 * number never moves unless something else opens beside the program */
static int same_number(int loaders)
{
	pthread_t th[64];
	for (int k = 0; k < loaders; k++)
		if (pthread_create(&th[k], NULL, spinner, NULL) != 0)
			return 1;
	long first = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
	syscall(SYS_close, first);
	long moved = -1;
	for (int i = 0; i < 200000 && moved < 0; i++) {
		long fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
		if (fd != first)
			moved = fd;
		syscall(SYS_close, fd);
	}
	stop = 1;
	for (int k = 0; k < loaders; k++)
		pthread_join(th[k], NULL);
	if (moved < 0)
		printf("fds LOW\n");
	else
		printf("fds MOVED %ld %ld\n", first, moved);
	return 0;
}

static long majflt(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return ru.ru_majflt;
}

static unsigned long read_share(int k)
{
	unsigned long s = 0;
	for (size_t i = (size_t)k; i < pages; i += (size_t)loaders + 1)
		s += data[i * 4096];
	return s;
}

static long quiet_tid[64], quiet_flt[64];

static void *quiet_loader(void *arg)
{
	int k = (int)(long)arg;
	sums[k] = read_share(k);
	quiet_tid[k] = (long)syscall(SYS_gettid);
	quiet_flt[k] = majflt(RUSAGE_THREAD);
	return NULL;
}

static void *loader(void *arg)
{
	int k = (int)(long)arg;
	char name[16];
	snprintf(name, sizeof name, "loader-%d", k);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&start);
	pthread_mutex_unlock(&start);
	sums[k] = read_share(k);
	printf("thread %ld %ld\n", (long)syscall(SYS_gettid), majflt(RUSAGE_THREAD));
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "threads") && strcmp(argv[1], "procs") &&
			  strcmp(argv[1], "fds") && strcmp(argv[1], "quiet"))) {
		fprintf(stderr, "usage: mapped_faults threads|procs|quiet|fds N FILE\n");
		return 2;
	}
	loaders = atoi(argv[2]);
	if (loaders < 1 || loaders > 63)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	int fd = open(argv[3], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return 1;
	pages = (size_t)st.st_size / 4096;
	long before = majflt(RUSAGE_THREAD);
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || madvise(p, (size_t)st.st_size, MADV_RANDOM) != 0)
		return 1;
	data = p;
	if (!strcmp(argv[1], "fds"))
		return same_number(loaders);
	unsigned long sum = 0;
	if (!strcmp(argv[1], "threads") || !strcmp(argv[1], "quiet")) {
		int quiet = argv[1][0] == 'q';
		pthread_t th[64];
		for (int k = 0; k < loaders; k++)
			if (pthread_create(&th[k], NULL, quiet ? quiet_loader : loader,
					   (void *)(long)k) != 0)
				return 1;
		for (int k = 0; k < loaders; k++) {
			pthread_join(th[k], NULL);
			sum += sums[k];
			if (quiet)
				printf("thread %ld %ld\n", quiet_tid[k], quiet_flt[k]);
		}
	} else {
		for (int k = 0; k < loaders; k++) {
			pid_t pid = fork();
			if (pid < 0)
				return 1;
			if (pid == 0) {
				unsigned long s = read_share(k);
				printf("proc %ld %ld\n", (long)getpid(), majflt(RUSAGE_SELF));
				exit(s != 0);
			}
		}
		for (int k = 0; k < loaders; k++) {
			int status;
			if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
				return 1;
		}
	}
	sum += read_share(loaders);
	printf("main %ld %ld\n", (long)syscall(SYS_gettid), majflt(RUSAGE_THREAD) - before);
	printf("sum %lu\n", sum);
	return 0;
}
