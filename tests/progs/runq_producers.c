/*
 * runq_producers.c: test program for tests/traced/test_runq.py. Three CPU-bound
 * producer threads feed the main thread through a pipe, the whole process
 * pinned to one core (sched_setaffinity): three busy threads on one core,
 * each runnable but waiting for it most of the time. Per batch a producer
 * spins 4 ms of its own CPU time, then writes one byte; the main thread
 * reads them all. With "loop", two producers only, and the main thread
 * spins 4 ms of CPU per batch too: the loop waits for the core.
 *
 *   runq_producers [BATCHES [loop]]   (default 60, a multiple of 3)
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static int per, loop;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_4ms(void)
{
	uint64_t t = cpu_ns();
	while (cpu_ns() - t < 4000000)
		;
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < per; i++) {
		spin_4ms();
		char c = 'b';
		if (write(fds[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int batches = argc > 1 ? atoi(argv[1]) : 60;
	loop = argc > 2 && argv[2][0] == 'l';
	int np = loop ? 2 : 3;
	per = batches / np;
	/* one core: the first this process may run on */
	cpu_set_t all, one;
	CPU_ZERO(&one);
	if (sched_getaffinity(0, sizeof all, &all) != 0)
		return 1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	if (sched_setaffinity(0, sizeof one, &one) != 0 || pipe(fds) != 0)
		return 1;
	pthread_t t[3];
	for (int k = 0; k < np; k++)
		pthread_create(&t[k], NULL, producer, NULL);
	int got = 0;
	char c;
	while (got < np * per && read(fds[0], &c, 1) == 1) {
		got++;
		if (loop)
			spin_4ms();
	}
	for (int k = 0; k < np; k++)
		pthread_join(t[k], NULL);
	printf("batches %d\n", got);
	return 0;
}
