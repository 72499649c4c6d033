/*
 * integ_sig_jump.c: a 50 us interval timer whose handler siglongjmps out of
 * whatever the main thread is in: traced reads of a pipe, mutex waits, and
 * semaphore waits. Prints what it did (deterministic), so traced and untraced
 * outputs compare byte for byte; the count of reads made goes to stderr.
 * Usage: integ_sig_jump JUMPS
 */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile sig_atomic_t armed;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void on_alarm(int sig)
{
	(void)sig;
	if (armed) {
		armed = 0;
		siglongjmp(env, 1);
	}
}

int main(int argc, char **argv)
{
	long jumps = argc > 1 ? atol(argv[1]) : 20000;
	int p[2];
	sem_t sem;
	if (pipe(p) || sem_init(&sem, 0, 0))
		return 2;
	pthread_mutex_lock(&held);              /* never released: lock waits block */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	setitimer(ITIMER_REAL, &it, NULL);

	static volatile long done, reads, kinds[3];
	char c;
	while (done < jumps) {
		int k = (int)(done % 3);
		if (sigsetjmp(env, 1)) {
			done++;
			kinds[k]++;
			continue;
		}
		armed = 1;
		for (;;) {
			if (k == 0) {
				reads++;
				read(p[0], &c, 1);      /* blocks: the pipe stays empty */
			} else if (k == 1) {
				pthread_mutex_timedlock(&held, &(struct timespec){ 0x7fffffff, 0 });
			} else {
				sem_wait(&sem);
			}
		}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	int z = open("/dev/zero", O_RDONLY);    /* after the jumps: recorded again */
	for (int i = 0; i < 100; i++)
		if (read(z, &c, 1) != 1)
			return 3;
	close(z);
	printf("jumps %ld read %ld lock %ld sem %ld\n", done, kinds[0], kinds[1], kinds[2]);
	fprintf(stderr, "reads %ld\n", reads);
	return 0;
}
