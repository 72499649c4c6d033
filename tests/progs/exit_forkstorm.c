/*
 * exit_forkstorm.c: a writer thread records calls as fast as it can while
 * the main thread forks N children that leave by _exit at once; prints
 * the writer's call count and the slowest fork (for make bench; the tests
 * assert only structure). usage: exit_forkstorm N
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CALLS 300000

static atomic_int stop;
static long calls;

static void *writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			close(fd);
		if (++calls == MAX_CALLS)
			while (!atomic_load(&stop))
				usleep(1000);
	}
	return NULL;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long long worst = 0, total = 0;
	pthread_t w;
	pthread_create(&w, NULL, writer, NULL);
	usleep(20000);
	for (int i = 0; i < n; i++) {
		long long t0 = now_ns();
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		long long d = now_ns() - t0;
		total += d;
		if (d > worst)
			worst = d;
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return 1;
		usleep(1000);
	}
	atomic_store(&stop, 1);
	pthread_join(w, NULL);
	printf("forks %d writer_calls %ld max_fork_us %lld mean_fork_us %lld\n", n, calls,
	       worst / 1000, total / n / 1000);
	return 0;
}
