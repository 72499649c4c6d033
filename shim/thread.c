/*
 * thread.c: wrappers for the calls that name a thread (pthread_setname_np,
 * prctl(PR_SET_NAME)), so that the trace carries the name the program gave
 * each thread without the flusher reading /proc (libfeedtrace/ring.c,
 * ft_thread_set_name), and pthread_create, so that every thread the
 * program makes has its CPU time sampled, traced calls or not
 * (flusher.c, ft_cpu_track), and its end is known (ring.c,
 * ft_thread_leaving), and named as Python's threading calls it when a
 * Python Thread starts it (libfeedtrace/callsite.c). They record nothing and never
 * change a result.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "../libfeedtrace/callsite.h"
#include "real.h"
#include "../libfeedtrace/dlreal.h"
#include "solo.h"
#include "../libfeedtrace/internal.h"

/* every non-static function below is a wrapper: exported */
#pragma GCC visibility push(default)

/* The new thread tells its tid through a start trampoline; (fn, arg) wait
 * in a fixed pool (a wrapper may not allocate). With the pool full, or
 * tracing off, the thread starts as the program asked, unsampled. */
#define START_POOL 256
static struct start {
	void *(*fn)(void *);
	void *arg;
	_Atomic int used;
	char py_name[48];       /* the threading.Thread it runs, or "" */
} starts[START_POOL];

/* The thread's start routine is over: returned, or left by pthread_exit
 * or cancellation (the cleanup handler runs then). Its CPU time at the
 * end, its major page faults (libfeedtrace/faults.c), and the runtime
 * told, which finds thread exit this way instead of with a pthread key
 * (libfeedtrace/ring.c, ft_thread_leaving). */
static void start_over(void *place)
{
	ft_cpu_track_end((int)(intptr_t)place);
	ft_faults_leaving();
	ft_thread_leaving();
}

/* Not instrumented by a sanitizer: it runs before the thread start of a
 * sanitizer runtime that created the thread through us (ASan's
 * interceptor calls this wrapper; its own start routine is fn), so its
 * frame may sit on a reused stack whose shadow the runtime has not
 * cleared yet (a fork child reusing its parent's flusher stack). */
static FT_NO_SAN void *start_tracked(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;
	char py_name[sizeof s->py_name];
	memcpy(py_name, s->py_name, sizeof py_name);
	atomic_store_explicit(&s->used, 0, memory_order_release);
	if (py_name[0])
		ft_thread_set_py_name(py_name);
	int place = ft_cpu_track((int32_t)syscall(SYS_gettid));
	void *r;
	pthread_cleanup_push(start_over, (void *)(intptr_t)place);
	r = fn(arg);
	pthread_cleanup_pop(1);
	return r;
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	if (!ft_tls_notrace)
		ft_solo_end();          /* before the thread exists (shim/solo.h) */
	if (atomic_load_explicit(&ft_active, memory_order_relaxed) && !ft_tls_notrace)
		for (unsigned i = 0; i < START_POOL; i++) {
			int none = 0;
			if (atomic_load_explicit(&starts[i].used, memory_order_relaxed) ||
			    !atomic_compare_exchange_strong(&starts[i].used, &none, 1))
				continue;
			starts[i].fn = fn;
			starts[i].arg = arg;
			ft_callsite_python_thread(starts[i].py_name, sizeof starts[i].py_name);
			int r = REAL(pthread_create)(th, attr, start_tracked, &starts[i]);
			if (r != 0)
				atomic_store(&starts[i].used, 0);
			return r;
		}
	return REAL(pthread_create)(th, attr, fn, arg);
}

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
		struct ft_thread *t = ft_own_ring();
		if (t)
			ft_thread_set_name(t, (const char *)a2);
	}
	return r;
}

#pragma GCC visibility pop
