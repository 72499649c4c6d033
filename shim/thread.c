/*
 * thread.c: wrappers for the calls that name a thread (pthread_setname_np,
 * prctl(PR_SET_NAME)), so that the trace carries the name the program gave
 * each thread without the flusher reading /proc (libfeedtrace/ring.c,
 * ft_thread_set_name). They record nothing and never change a result.
 */
#include <stdarg.h>
#include <sys/prctl.h>

#include "real.h"
#include "../libfeedtrace/internal.h"

/* every non-static function below is a wrapper: exported */
#pragma GCC visibility push(default)

int pthread_setname_np(pthread_t th, const char *name)
{
	int r = REAL(pthread_setname_np)(th, name);
	if (r == 0 && atomic_load_explicit(&ft_active, memory_order_relaxed)) {
		struct ft_thread *t = ft_thread_by_pthread((uint64_t)th);
		if (t)
			ft_thread_set_name(t, name);
	}
	return r;
}

/* prctl's arguments after the option are unsigned longs, as many as the
 * option uses: four are passed on, as glibc's own prctl does. */
int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	int r = REAL(prctl)(option, a2, a3, a4, a5);
	if (r == 0 && option == PR_SET_NAME && a2) {
		struct ft_thread *t = ft_self;
		if (t && t != &ft_thread_refused && t != &ft_thread_vfork_child)
			ft_thread_set_name(t, (const char *)a2);
	}
	return r;
}

#pragma GCC visibility pop
