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


int pthread_mutex_lock(pthread_mutex_t *m)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_mutex_lock)(m);
	int r = REAL(pthread_mutex_trylock)(m);
	if (r != EBUSY)
		return r;               /* taken (or EOWNERDEAD: taken too), or an error */
	struct site s = waiter_site(t);
	uint64_t t0 = ft_now();
	r = REAL(pthread_mutex_lock)(m);
	record_lock_site(t, FT_EV_MUTEX_LOCK, t0, m, r, s);
	return r;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_mutex_timedlock)(m, abst);
	int r = REAL(pthread_mutex_trylock)(m);
	if (r != EBUSY)
		return r;
	struct site s = waiter_site(t);
	uint64_t t0 = ft_now();
	r = REAL(pthread_mutex_timedlock)(m, abst);
	record_lock_site(t, FT_EV_MUTEX_TIMEDLOCK, t0, m, r, s);
	return r;
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t c, const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_mutex_clocklock)(m, c, abst);
	int r = REAL(pthread_mutex_trylock)(m);
	if (r != EBUSY)
		return r;
	struct site s = waiter_site(t);
	uint64_t t0 = ft_now();
	r = REAL(pthread_mutex_clocklock)(m, c, abst);
	record_lock_site(t, FT_EV_MUTEX_CLOCKLOCK, t0, m, r, s);
	return r;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_rwlock_rdlock)(l);
	int r = REAL(pthread_rwlock_tryrdlock)(l);
	if (r != EBUSY)
		return r;
	struct site s = waiter_site(t);
	uint64_t t0 = ft_now();
	r = REAL(pthread_rwlock_rdlock)(l);
	record_lock_site(t, FT_EV_RWLOCK_RDLOCK, t0, l, r, s);
	return r;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_rwlock_wrlock)(l);
	int r = REAL(pthread_rwlock_trywrlock)(l);
	if (r != EBUSY)
		return r;
	struct site s = waiter_site(t);
	uint64_t t0 = ft_now();
	r = REAL(pthread_rwlock_wrlock)(l);
	record_lock_site(t, FT_EV_RWLOCK_WRLOCK, t0, l, r, s);
	return r;
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_rwlock_timedrdlock)(l, abst);
	int r = REAL(pthread_rwlock_tryrdlock)(l);
	if (r != EBUSY)
		return r;
	struct site s = waiter_site(t);
	uint64_t t0 = ft_now();
	r = REAL(pthread_rwlock_timedrdlock)(l, abst);
	record_lock_site(t, FT_EV_RWLOCK_TIMEDRD, t0, l, r, s);
	return r;
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_rwlock_timedwrlock)(l, abst);
	int r = REAL(pthread_rwlock_trywrlock)(l);
	if (r != EBUSY)
		return r;
	struct site s = waiter_site(t);
	uint64_t t0 = ft_now();
	r = REAL(pthread_rwlock_timedwrlock)(l, abst);
	record_lock_site(t, FT_EV_RWLOCK_TIMEDWR, t0, l, r, s);
	return r;
}

/* Condition waits always block: every one is recorded. */
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_cond_wait)(c, m);
	uint64_t t0 = ft_now();
	int r = REAL(pthread_cond_wait)(c, m);
	ft_record_p(t, FT_EV_COND_WAIT, t0, ft_now(), c, (uint32_t)(uintptr_t)m, (uint32_t)r);
	return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_cond_timedwait)(c, m, abst);
	uint64_t t0 = ft_now();
	int r = REAL(pthread_cond_timedwait)(c, m, abst);
	ft_record_p(t, FT_EV_COND_TIMEDWAIT, t0, ft_now(), c, (uint32_t)(uintptr_t)m, (uint32_t)r);
	return r;
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
			   const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(pthread_cond_clockwait)(c, m, clk, abst);
	uint64_t t0 = ft_now();
	int r = REAL(pthread_cond_clockwait)(c, m, clk, abst);
	ft_record_p(t, FT_EV_COND_CLOCKWAIT, t0, ft_now(), c, (uint32_t)(uintptr_t)m, (uint32_t)r);
	return r;
}

/* Semaphores report through errno: a failed trywait must not leave its
 * EAGAIN behind when the real wait then succeeds. */
static inline void record_sem(struct ft_thread *t, unsigned kind, uint64_t t0,
			      sem_t *s, int r)
{
	int e = errno;
	ft_record_p(t, kind, t0, ft_now(), s, (uint32_t)r, r ? (uint32_t)e : 0);
	errno = e;
}

int sem_wait(sem_t *s)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(sem_wait)(s);
	int saved = errno;
	if (REAL(sem_trywait)(s) == 0)
		return 0;
	if (errno != EAGAIN)
		return -1;              /* EINVAL: the same error sem_wait gives */
	errno = saved;
	uint64_t t0 = ft_now();
	int r = REAL(sem_wait)(s);
	record_sem(t, FT_EV_SEM_WAIT, t0, s, r);
	return r;
}

int sem_timedwait(sem_t *s, const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(sem_timedwait)(s, abst);
	int saved = errno;
	if (REAL(sem_trywait)(s) == 0)
		return 0;
	if (errno != EAGAIN)
		return -1;
	errno = saved;
	uint64_t t0 = ft_now();
	int r = REAL(sem_timedwait)(s, abst);
	record_sem(t, FT_EV_SEM_TIMEDWAIT, t0, s, r);
	return r;
}

int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *abst)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(sem_clockwait)(s, clk, abst);
	int saved = errno;
	if (REAL(sem_trywait)(s) == 0)
		return 0;
	if (errno != EAGAIN)
		return -1;
	errno = saved;
	uint64_t t0 = ft_now();
	int r = REAL(sem_clockwait)(s, clk, abst);
	record_sem(t, FT_EV_SEM_CLOCKWAIT, t0, s, r);
	return r;
}

#pragma GCC visibility pop
