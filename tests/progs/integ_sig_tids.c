/*
 * integ_sig_tids.c: a sender thread (signal blocked) sends N process-directed
 * signals one at a time with kill(getpid()); each handler run notes the tid it
 * ran on. Prints how many ran and how many ran on a thread the program did not
 * make (deterministic: compares traced vs untraced). Usage: integ_sig_tids N
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic long handled, foreign;
static _Atomic int stop;
static volatile pid_t mine[3];               /* main, worker, sender */

static void on_sig(int sig)
{
	(void)sig;
	pid_t me = (pid_t)syscall(SYS_gettid);
	if (me != mine[0] && me != mine[1] && me != mine[2])
		atomic_fetch_add(&foreign, 1);
	atomic_fetch_add(&handled, 1);
}

static void *worker(void *arg)
{
	(void)arg;
	mine[1] = (pid_t)syscall(SYS_gettid);
	while (!atomic_load(&stop))
		usleep(100);
	return NULL;
}

static void *sender(void *arg)
{
	long n = *(long *)arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	mine[2] = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < n; i++) {
		kill(getpid(), SIGUSR1);
		while (atomic_load(&handled) <= i)
			sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000;
	mine[0] = (pid_t)syscall(SYS_gettid);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t w, s;
	pthread_create(&w, NULL, worker, NULL);
	while (!mine[1])
		sched_yield();
	pthread_create(&s, NULL, sender, &n);
	pthread_join(s, NULL);
	atomic_store(&stop, 1);
	pthread_join(w, NULL);
	printf("handled %ld foreign %ld\n", atomic_load(&handled), atomic_load(&foreign));
	return 0;
}
