/*
 * idle_thread.c: a second reference for `make bench`'s end-to-end figure
 * (scripts/bench_e2e.py --thread-arm): a preloaded library whose
 * constructor starts one thread that waits for ever and does nothing
 * else, as the tracer's flusher does between wakes. Beside the empty
 * library it shows what the existence of one more thread moves in the
 * traced program (its page faults: PyTorch's CPU loop takes ~2,000 more).
 */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, idle, NULL) == 0)
		pthread_detach(t);
}
