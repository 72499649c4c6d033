/*
 * integ_sig_storm.c: a sender thread (SIGUSR1 blocked) sends N SIGUSR1 to
 * the main thread, one at a time; the main thread reads /dev/null in a loop
 * meanwhile, and the handler reads one byte of /dev/zero. Prints the handler
 * reads made (deterministic); the main loop's read count goes to stderr.
 * Usage: integ_sig_storm N [alt]   (alt: the handler runs on a sigaltstack)
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Atomic long handled, handler_reads;
static int zero;
static pthread_t main_thread;

static void on_sig(int sig)
{
	(void)sig;
	char c;
	if (read(zero, &c, 1) == 1)
		atomic_fetch_add(&handler_reads, 1);
	atomic_fetch_add(&handled, 1);
}

static void *sender(void *arg)
{
	long n = *(long *)arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	for (long i = 0; i < n; i++) {
		pthread_kill(main_thread, SIGUSR1);
		while (atomic_load(&handled) <= i)
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000, loops = 0;
	zero = open("/dev/zero", O_RDONLY);
	int null = open("/dev/null", O_RDONLY);
	if (zero < 0 || null < 0)
		return 2;
	main_thread = pthread_self();
	struct sigaction sa = { 0 };
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_RESTART;
	char alt[1 << 16];              /* in main's frame: above every hook frame */
	if (argc > 2) {
		stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt };
		if (sigaltstack(&ss, NULL))
			return 3;
		sa.sa_flags |= SA_ONSTACK;
	}
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t s;
	pthread_create(&s, NULL, sender, &n);
	/* reads until the storm ends, at most max_reads of them: a sender
	 * slowed by a loaded machine stretches the storm, and the reads
	 * (recorded, then loaded by the test) must not grow with it; past the
	 * bound the thread spins, where the signals still land */
	const long max_reads = 1000000;
	char c;
	while (atomic_load(&handled) < n) {
		if (loops < max_reads) {
			(void)!read(null, &c, 1);
			loops++;
		}
	}
	pthread_join(s, NULL);
	printf("handler reads %ld\n", atomic_load(&handler_reads));
	fprintf(stderr, "main reads %ld\n", loops);
	return 0;
}
