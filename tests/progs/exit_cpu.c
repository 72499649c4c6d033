/*
 * exit_cpu.c: one thread spins for a given CPU time, one sleeps; each
 * prints its tid and the CPU time it measured itself (its own
 * CLOCK_THREAD_CPUTIME_ID), for tests/traced/test_cpu_samples.py.
 * usage: exit_cpu SPIN_MS SLEEP_MS [main_exit|untouched]  (main_exit: the
 * main thread spins alone, then leaves by _exit; untouched: the two threads
 * make no traced call, so they have no ring)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long spin_ms, sleep_ms;
static int untouched;

/* a traced call: the thread gets a ring, so it is sampled */
static void touch(void)
{
	if (untouched)
		return;
	int fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		close(fd);
}

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *spinner(void *arg)
{
	(void)arg;
	touch();
	volatile unsigned long x = 0;
	while (cpu_ns() < spin_ms * 1000000ll)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
	printf("spin %ld %lld\n", (long)syscall(SYS_gettid), cpu_ns());
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	touch();
	struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	printf("sleep %ld %lld\n", (long)syscall(SYS_gettid), cpu_ns());
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	spin_ms = atol(argv[1]);
	sleep_ms = atol(argv[2]);
	touch();
	untouched = argc > 3 && !strcmp(argv[3], "untouched");
	if (argc > 3 && !strcmp(argv[3], "main_exit")) {
		spinner(NULL);
		fflush(stdout);
		_exit(0);
	}
	pthread_t a, b;
	pthread_create(&a, NULL, spinner, NULL);
	pthread_create(&b, NULL, sleeper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
