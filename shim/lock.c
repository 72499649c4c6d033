/*
 * lock.c: lock and wait wrappers. A lock is tried first; only a wait that
 * really blocked is timed and recorded, so a free lock costs one trylock.
 * The real function always decides the result (error-checking, recursive
 * and robust mutexes behave exactly as without the tracer). Keeps errno.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "../libfeedtrace/callsite.h"
#include "gpu_time.h"
#include "real.h"
#include "../libfeedtrace/internal.h"

/* every non-static function below is a wrapper: exported */
#pragma GCC visibility push(default)

/* A mutex or rwlock wait: the waiter's call site, taken once the trylock
 * said it must wait (never for a free lock), before it blocks. */
struct site { uint32_t native, py; };

static inline struct site waiter_site(struct ft_thread *t)
{
	struct site s;
	FT_BUSY_WALK(t);        /* what the unwinder calls is not the program's */
	s.native = ft_callsite_native();
	s.py = ft_callsite_python();
	t->busy = 0;
	return s;
}

static inline void record_lock_site(struct ft_thread *t, unsigned kind, uint64_t t0,
				    const void *lock, int r, struct site s)
{
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_rec_header(rec, kind, 2, t0, ft_now());
	rec->p.u64[0] = (uint64_t)(uintptr_t)lock;
	rec->p.u32[2] = (uint32_t)r;
	rec->p.u32[3] = 0;
	struct ft_rec *more = ft_slot(t, 1);
	memset(more, 0, sizeof *more);
	uint32_t *w = (uint32_t *)(void *)more;
	w[0] = s.native;
	w[1] = s.py;
	ft_commit(t, 2);
}


/* The wrappers come in three shapes, each written once below and then
 * listed one line per call (its kind, parameters and the arguments passed
 * on), as cuda.tsv lists the driver's calls for one generator. */

/* A mutex or rwlock: tried first (one trylock for a free lock); a wait
 * that blocks is timed and recorded with the waiter's call site. A try
 * that does not say EBUSY decides: taken (or EOWNERDEAD: taken too), or
 * an error. */
/* The wait is a function of its own (wait_NAME, never inlined): the hook
 * keeps only the lock live across the trylock, so a free lock's path saves
 * one register instead of six; the wait finds its thread state again in
 * TLS (the trylock cannot have changed it). */
#define TRY_FIRST(name, try, kind, params, args, lock)                  \
	static __attribute__((noinline)) int wait_##name params        \
	{                                                               \
		struct ft_thread *t = ft_self;                          \
		if (ft_unlikely(t->busy))       /* a stand-in: ring.c */ \
			t = ft_busy_slow(t, FT_FRAME());                \
		if (!t)                                                 \
			return REAL(name) args;                         \
		struct site s = waiter_site(t);                         \
		uint64_t t0 = ft_now();                                 \
		int r = REAL(name) args;                                \
		record_lock_site(t, kind, t0, lock, r, s);              \
		return r;                                               \
	}                                                               \
	int name params                                                 \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_LOCK);              \
		if (!t)                                                 \
			return REAL(name) args;                         \
		int r = REAL(try)(lock);                                \
		if (ft_likely(r != EBUSY))                              \
			return r;                                       \
		return wait_##name args;                                \
	}

TRY_FIRST(pthread_mutex_lock, pthread_mutex_trylock, FT_EV_MUTEX_LOCK,
	  (pthread_mutex_t *m), (m), m)
TRY_FIRST(pthread_mutex_timedlock, pthread_mutex_trylock, FT_EV_MUTEX_TIMEDLOCK,
	  (pthread_mutex_t *m, const struct timespec *abst), (m, abst), m)
TRY_FIRST(pthread_mutex_clocklock, pthread_mutex_trylock, FT_EV_MUTEX_CLOCKLOCK,
	  (pthread_mutex_t *m, clockid_t c, const struct timespec *abst), (m, c, abst), m)
TRY_FIRST(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, FT_EV_RWLOCK_RDLOCK,
	  (pthread_rwlock_t *l), (l), l)
TRY_FIRST(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, FT_EV_RWLOCK_WRLOCK,
	  (pthread_rwlock_t *l), (l), l)
TRY_FIRST(pthread_rwlock_timedrdlock, pthread_rwlock_tryrdlock, FT_EV_RWLOCK_TIMEDRD,
	  (pthread_rwlock_t *l, const struct timespec *abst), (l, abst), l)
TRY_FIRST(pthread_rwlock_timedwrlock, pthread_rwlock_trywrlock, FT_EV_RWLOCK_TIMEDWR,
	  (pthread_rwlock_t *l, const struct timespec *abst), (l, abst), l)

/* A condition wait always blocks: every one is recorded, with its mutex's
 * low 32 bits. */
#define COND_WAIT(name, kind, params, args)                             \
	int name params                                                 \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_LOCK);              \
		if (!t)                                                 \
			return REAL(name) args;                         \
		ft_gpu_before_wait(t);                                  \
		uint64_t t0 = ft_now();                                 \
		int r = REAL(name) args;                                \
		ft_record_p(t, kind, t0, ft_now(), c, (uint32_t)(uintptr_t)m, (uint32_t)r); \
		return r;                                               \
	}

COND_WAIT(pthread_cond_wait, FT_EV_COND_WAIT,
	  (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
COND_WAIT(pthread_cond_timedwait, FT_EV_COND_TIMEDWAIT,
	  (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abst), (c, m, abst))
COND_WAIT(pthread_cond_clockwait, FT_EV_COND_CLOCKWAIT,
	  (pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk, const struct timespec *abst),
	  (c, m, clk, abst))

/* Semaphores report through errno: a failed trywait must not leave its
 * EAGAIN behind when the real wait then succeeds. */
static inline void record_sem(struct ft_thread *t, unsigned kind, uint64_t t0,
			      sem_t *s, int r)
{
	int e = errno;
	ft_record_p(t, kind, t0, ft_now(), s, (uint32_t)r, r ? (uint32_t)e : 0);
	errno = e;
}

/* A semaphore: tried first too; a trywait that fails otherwise than with
 * EAGAIN (EINVAL) gives the same error the wait would. */
#define SEM_WAIT(name, kind, params, args)                              \
	int name params                                                 \
	{                                                               \
		struct ft_thread *t = ft_enter(FT_G_LOCK);              \
		if (!t)                                                 \
			return REAL(name) args;                         \
		int saved = errno;                                      \
		if (REAL(sem_trywait)(s) == 0)                          \
			return 0;                                       \
		if (errno != EAGAIN)                                    \
			return -1;                                      \
		ft_gpu_before_wait(t);                                  \
		errno = saved;                                          \
		uint64_t t0 = ft_now();                                 \
		int r = REAL(name) args;                                \
		record_sem(t, kind, t0, s, r);                          \
		return r;                                               \
	}

SEM_WAIT(sem_wait, FT_EV_SEM_WAIT, (sem_t *s), (s))
SEM_WAIT(sem_timedwait, FT_EV_SEM_TIMEDWAIT, (sem_t *s, const struct timespec *abst), (s, abst))
SEM_WAIT(sem_clockwait, FT_EV_SEM_CLOCKWAIT,
	 (sem_t *s, clockid_t clk, const struct timespec *abst), (s, clk, abst))

#pragma GCC visibility pop
