/*
 * integ_resources.c: what a process has of its own, printed so that an
 * untraced and a traced run can be compared byte for byte
 * (tests/traced/test_integrity_resources.py).
 *   integ_resources first     the descriptor of its first open
 *   integ_resources nofile    how many opens succeed before EMFILE
 *   integ_resources keys      how many pthread keys it can create
 *   integ_resources unshare   unshare(CLONE_NEWUSER), then a read and a
 *                             thread (the trace goes on after)
 *   integ_resources threads N N threads that each read a file and leave:
 *                             by return, pthread_exit, or cancellation
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void read_once(void)
{
	char b[16];
	int fd = open("/proc/self/comm", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, b, sizeof b) < 0)
			exit(4);
		close(fd);
	}
}

static void *by_return(void *a) { (void)a; read_once(); return NULL; }
static void *by_exit(void *a) { (void)a; read_once(); pthread_exit(NULL); }
static sem_t has_read;            /* the cancelled thread read first */

static void *by_cancel(void *a)
{
	(void)a;
	read_once();
	sem_post(&has_read);
	for (;;)
		pause();                /* a cancellation point */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "first")) {
		printf("first fd %d\n", open("/dev/null", O_RDONLY));
	} else if (!strcmp(m, "nofile")) {
		int n = 0;
		while (open("/dev/null", O_RDONLY) >= 0)
			n++;
		printf("opened %d then %s\n", n, strerror(errno));
	} else if (!strcmp(m, "keys")) {
		pthread_key_t k;
		int n = 0;
		while (pthread_key_create(&k, NULL) == 0)
			n++;
		printf("keys %d\n", n);
		/* threads still start, read and end with every key taken */
		pthread_t t;
		if (pthread_create(&t, NULL, by_return, NULL) == 0)
			pthread_join(t, NULL);
	} else if (!strcmp(m, "unshare")) {
		int r = unshare(CLONE_NEWUSER);
		printf("unshare %d %s\n", r, r ? strerror(errno) : "ok");
		read_once();
		pthread_t t;
		if (pthread_create(&t, NULL, by_return, NULL) == 0)
			pthread_join(t, NULL);
	} else if (!strcmp(m, "threads") && argc > 2) {
		int n = atoi(argv[2]);
		sem_init(&has_read, 0, 0);
		for (int i = 0; i < n; i++) {
			pthread_t t;
			void *(*fn)(void *) = i % 3 == 0 ? by_return : i % 3 == 1 ? by_exit : by_cancel;
			if (pthread_create(&t, NULL, fn, NULL) != 0)
				return 5;
			if (fn == by_cancel) {
				/* cancelled only once it has read (under ASan a thread
				 * can take longer to start than any fixed sleep) */
				while (sem_wait(&has_read) != 0)
					;
				usleep(1000);        /* into pause(), most of the time */
				pthread_cancel(t);
			}
			pthread_join(t, NULL);
		}
		printf("threads %d\n", n);
	} else {
		return 2;
	}
	return 0;
}
