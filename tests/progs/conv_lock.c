/*
 * conv_lock.c: test program for tests/traced/test_report.py: exactly L blocked
 * pthread_mutex_lock calls on one mutex (contended L), or L uncontended
 * lock/unlock pairs (free L). Handshakes use atomics and nanosleep only, so
 * the only lock records are the blocked waits.
 *
 *   conv_lock contended L | conv_lock free L
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int announced, released;
static int rounds;

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

static void wait_flag(_Atomic int *f, int v)
{
	while (*f != v)
		nap_us(50);
}

static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		wait_flag(&released, 0);
		announced = 1;
		pthread_mutex_lock(&mtx);          /* blocks: the holder sleeps */
		pthread_mutex_unlock(&mtx);
		announced = 0;
		released = 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: conv_lock contended|free L\n");
		return 2;
	}
	rounds = atoi(argv[2]);
	if (!strcmp(argv[1], "free")) {
		for (int i = 0; i < rounds; i++) {
			pthread_mutex_lock(&mtx);
			pthread_mutex_unlock(&mtx);
		}
		printf("free %d\n", rounds);
		return 0;
	}
	pthread_t th;
	pthread_mutex_lock(&mtx);
	pthread_create(&th, NULL, waiter, NULL);
	for (int i = 0; i < rounds; i++) {
		wait_flag(&announced, 1);
		nap_us(5000);
		pthread_mutex_unlock(&mtx);
		wait_flag(&released, 1);
		pthread_mutex_lock(&mtx);          /* free: the waiter let go */
		released = 0;
	}
	pthread_mutex_unlock(&mtx);
	pthread_join(th, NULL);
	printf("contended %d\n", rounds);
	return 0;
}
