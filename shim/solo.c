/*
 * solo.c: whether the program has one thread of its own (ft_solo, read by
 * the I/O wrappers: shim/solo.h says why), and the wrappers of the calls
 * that give it another. ft_solo starts as glibc's own answer in the
 * constructor, before the flusher thread exists (a library's constructor
 * may have made a thread already), and ends for good, before the thread
 * exists, at the first pthread_create of the program (shim/thread.c) or
 * thrd_create, and at the glibc calls that start helper threads of their
 * own (asynchronous I/O, asynchronous name look-up, mq_notify with
 * SIGEV_THREAD) or make glibc itself leave its single-threaded path
 * (pthread_cancel). A fork child keeps its parent's answer, as glibc does.
 * aio_read and lio_listio, which are recorded, end it in their wrappers
 * (io.c). Not covered: timer_create with SIGEV_THREAD and lio_listio's
 * GLIBC_2.2.5 version, old symbol versions that are other functions
 * (docs/RELIABILITY.md says what that leaves).
 */
#include <aio.h>
#include <dlfcn.h>
#include <mqueue.h>
#include <netdb.h>
#include <signal.h>
#include <sys/single_threaded.h>
#include <threads.h>

#include "real.h"
#include "solo.h"

_Atomic int ft_solo;

/* the raw calls stand in for these: each must be libc's own */
#define SOLO_CALLS(X) X(read) X(pread) X(pread64) X(open) X(open64) X(openat) \
	X(openat64) X(close)

void ft_solo_init(void)
{
#if defined(__x86_64__)
	if (!__libc_single_threaded)
		return;
	void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
	if (!libc)
		return;
	ft_real_init();
	int own = 1;
#define SAME(name) own &= dlsym(libc, #name) == (void *)real_##name;
	SOLO_CALLS(SAME)
#undef SAME
	dlclose(libc);
	atomic_store(&ft_solo, own);
#endif
}

void ft_solo_end(void)
{
	atomic_store_explicit(&ft_solo, 0, memory_order_relaxed);
}

/* every non-static function below is a wrapper: exported */
#pragma GCC visibility push(default)

/* the call, after ft_solo ended */
#define ENDS_SOLO(type, name, params, args)                             \
	type name params                                                \
	{                                                               \
		ft_solo_end();                                          \
		return REAL(name) args;                                 \
	}

ENDS_SOLO(int, thrd_create, (thrd_t *th, thrd_start_t fn, void *arg), (th, fn, arg))
ENDS_SOLO(int, pthread_cancel, (pthread_t th), (th))
ENDS_SOLO(int, aio_write, (struct aiocb *cb), (cb))
ENDS_SOLO(int, aio_write64, (struct aiocb64 *cb), (cb))
ENDS_SOLO(int, aio_fsync, (int op, struct aiocb *cb), (op, cb))
ENDS_SOLO(int, aio_fsync64, (int op, struct aiocb64 *cb), (op, cb))
ENDS_SOLO(int, getaddrinfo_a, (int mode, struct gaicb *list[], int n, struct sigevent *sev),
	  (mode, list, n, sev))

int mq_notify(mqd_t q, const struct sigevent *sev)
{
	if (sev && sev->sigev_notify == SIGEV_THREAD)
		ft_solo_end();
	return REAL(mq_notify)(q, sev);
}
