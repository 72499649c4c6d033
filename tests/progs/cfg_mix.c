/*
 * cfg_mix.c: test program for tests/traced/test_config.py: a bit of every hook
 * group the settings switch. Usage: cfg_mix FILE READS ROUNDS STATUS
 * opens FILE and read()s it READS times (64 bytes), forces ROUNDS blocked
 * pthread_mutex_lock calls (20 ms each), prints a summary and exits with
 * STATUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int announced, released;
static int rounds;

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
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
		pthread_mutex_lock(&mtx);
		pthread_mutex_unlock(&mtx);
		announced = 0;
		released = 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	char buf[64];
	int reads = atoi(argv[2]);
	rounds = atoi(argv[3]);
	int fd = open(argv[1], O_RDONLY);
	long total = 0;
	for (int i = 0; i < reads; i++)
		total += read(fd, buf, sizeof buf);
	close(fd);

	pthread_t th;
	pthread_mutex_lock(&mtx);
	pthread_create(&th, NULL, waiter, NULL);
	for (int i = 0; i < rounds; i++) {
		wait_flag(&announced, 1);
		nap_us(20000);
		pthread_mutex_unlock(&mtx);
		wait_flag(&released, 1);
		pthread_mutex_lock(&mtx);
		released = 0;
	}
	pthread_mutex_unlock(&mtx);
	pthread_join(th, NULL);
	printf("reads %d bytes %ld rounds %d\n", reads, total, rounds);
	return atoi(argv[4]);
}
