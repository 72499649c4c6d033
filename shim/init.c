/*
 * init.c: the library's constructor. It hands the runtime what only the
 * wrappers know (the real libc functions, the call-site set-up, the CUDA
 * wrappers' fork-child state) through its registration point, then starts
 * it: libfeedtrace/ never calls up into shim/ (LTTng-UST's layering; see
 * docs/ARCHITECTURE.md and tests/test_layers.py).
 */
#include "callsite.h"
#include "cuda_shim.h"
#include "real.h"
#include "../libfeedtrace/lifecycle.h"

static void shim_init(void)
{
	ft_real_init();
	ft_callsite_init();
}

static int flusher_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	return REAL(pthread_create)(th, attr, fn, arg);
}

__attribute__((constructor(101))) static void ft_start(void)
{
	static const struct ft_shim_ops ops = {
		.init = shim_init,
		.sigaction = ft_real_sigaction,
		.pthread_create = flusher_create,
		.fork_child = ft_cuda_fork_child,
	};
	ft_lifecycle_start(&ops);
}
