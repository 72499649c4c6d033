/*
 * init.c: the library's constructor. It hands the runtime what only the
 * wrappers know (the real libc functions, the CUDA wrappers' fork-child
 * state) through its registration point, then starts
 * it: libfeedtrace/ never calls up into shim/ (LTTng-UST's layering; see
 * docs/ARCHITECTURE.md and tests/unit/test_layers.py).
 */
#include "cuda_shim.h"
#include "real.h"
#include "solo.h"
#include "../libfeedtrace/internal.h"
#include "../libfeedtrace/lifecycle.h"


/* The flusher's thread: by the symbol, so that whatever interposes on
 * pthread_create before us (a sanitizer's runtime, which must know every
 * thread) sees it, with this thread marked untraced so that our own
 * wrapper (shim/thread.c) passes it straight through: the flusher is no
 * program thread. */
static int flusher_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	int was = ft_tls_notrace;
	ft_tls_notrace = 1;
	int r = pthread_create(th, attr, fn, arg);
	ft_tls_notrace = was;
	return r;
}

/* a fork child: the CUDA wrappers' state and the GPU's timing events */
static void fork_child(void)
{
	ft_cuda_fork_child();
	ft_gpu_fork_child();
}

__attribute__((constructor(101))) static void ft_start(void)
{
	static const struct ft_shim_ops ops = {
		.init = ft_real_init,
		.sigaction = ft_real_sigaction,
		.pthread_create = flusher_create,
		.fork_child = fork_child,
		.gpu_poll = ft_gpu_poll,
		.gpu_active = ft_gpu_active,
	};
	ft_solo_init();                 /* before the flusher thread exists */
	ft_lifecycle_start(&ops);
}
