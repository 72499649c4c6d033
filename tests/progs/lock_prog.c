/*
 * lock_prog.c: test program for tests/traced/test_locks.py. Contention is forced
 * deterministically: the holder waits (on an atomic flag, never on a
 * traced lock) until the other thread announced it is about to block, then
 * sleeps HOLD_MS and releases. Handshakes use atomics and nanosleep only,
 * so the only lock records are the ones under test.
 *
 *   lock_prog mutex L        L blocked pthread_mutex_lock calls on one mutex
 *   lock_prog uncontended N  N lock/unlock pairs nobody else wants
 *   lock_prog kinds          error-checking and recursive mutex results
 *   lock_prog rwlock L       L blocked rdlocks, then L blocked wrlocks
 *   lock_prog cond L T       L signalled pthread_cond_wait, T timed-out
 *                            pthread_cond_timedwait
 *   lock_prog sem L A        L blocked sem_wait, then A on an available sem
 *   lock_prog semtimed       one sem_timedwait that times out
 *
 * Addresses go to stderr ("addr NAME 0x..."), results to stdout: stdout
 * must be identical with and without the tracer.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOLD_MS 20

static _Atomic int announced, released_by_waiter;

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void wait_flag(_Atomic int *f, int v)
{
	while (*f != v)
		nap_us(50);
}

/* ---- mutex ---- */
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static int rounds;

static void *mutex_waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		wait_flag(&released_by_waiter, 0);
		announced = 1;
		pthread_mutex_lock(&mtx);           /* blocks: the holder sleeps */
		pthread_mutex_unlock(&mtx);
		announced = 0;
		released_by_waiter = 1;
	}
	return NULL;
}

static int cmd_mutex(int l)
{
	pthread_t th;
	rounds = l;
	fprintf(stderr, "addr mutex %p\n", (void *)&mtx);
	pthread_mutex_lock(&mtx);
	pthread_create(&th, NULL, mutex_waiter, NULL);
	for (int i = 0; i < l; i++) {
		wait_flag(&announced, 1);
		nap_us(HOLD_MS * 1000);
		pthread_mutex_unlock(&mtx);
		wait_flag(&released_by_waiter, 1);
		pthread_mutex_lock(&mtx);           /* free: the waiter let go */
		released_by_waiter = 0;
	}
	pthread_mutex_unlock(&mtx);
	pthread_join(th, NULL);
	printf("mutex rounds %d\n", l);
	return 0;
}

static int cmd_uncontended(long n)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	long ok = 0;
	for (long i = 0; i < n; i++) {
		if (pthread_mutex_lock(&m) == 0)
			ok++;
		pthread_mutex_unlock(&m);
	}
	printf("pairs %ld\n", ok);
	return 0;
}

/* ---- error-checking and recursive mutexes ---- */
static pthread_mutex_t shared_ec;

static void *other_unlock(void *arg)
{
	(void)arg;
	int r = pthread_mutex_unlock(&shared_ec);
	printf("errorcheck unlock by non-owner %d (%s)\n", r, strerror(r));
	r = pthread_mutex_trylock(&shared_ec);
	printf("errorcheck trylock by other %d\n", r);
	return NULL;
}

static int cmd_kinds(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t rec;
	int r;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&shared_ec, &a);
	r = pthread_mutex_lock(&shared_ec);
	printf("errorcheck lock %d\n", r);
	r = pthread_mutex_lock(&shared_ec);
	printf("errorcheck relock %d (%s)\n", r, strerror(r));
	r = pthread_mutex_trylock(&shared_ec);
	printf("errorcheck trylock %d\n", r);
	pthread_t th;
	pthread_create(&th, NULL, other_unlock, NULL);
	pthread_join(th, NULL);
	r = pthread_mutex_unlock(&shared_ec);
	printf("errorcheck unlock %d\n", r);
	r = pthread_mutex_unlock(&shared_ec);
	printf("errorcheck unlock again %d (%s)\n", r, strerror(r));

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	for (int i = 0; i < 3; i++)
		printf("recursive lock %d -> %d\n", i, pthread_mutex_lock(&rec));
	printf("recursive trylock -> %d\n", pthread_mutex_trylock(&rec));
	for (int i = 0; i < 4; i++)
		printf("recursive unlock %d -> %d\n", i, pthread_mutex_unlock(&rec));
	r = pthread_mutex_unlock(&rec);
	printf("recursive unlock extra -> %d (%s)\n", r, strerror(r));
	return 0;
}

/* ---- rwlock ---- */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int want_write;

static void *rw_waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		wait_flag(&released_by_waiter, 0);
		announced = 1;
		if (want_write)
			pthread_rwlock_wrlock(&rw);
		else
			pthread_rwlock_rdlock(&rw);
		pthread_rwlock_unlock(&rw);
		announced = 0;
		released_by_waiter = 1;
	}
	return NULL;
}

static void rw_phase(int l, int write)
{
	pthread_t th;
	want_write = write;
	rounds = l;
	/* the holder takes the opposite mode: a reader blocks on a writer,
	 * a writer on a reader */
	if (write)
		pthread_rwlock_rdlock(&rw);
	else
		pthread_rwlock_wrlock(&rw);
	pthread_create(&th, NULL, rw_waiter, NULL);
	for (int i = 0; i < l; i++) {
		wait_flag(&announced, 1);
		nap_us(HOLD_MS * 1000);
		pthread_rwlock_unlock(&rw);
		wait_flag(&released_by_waiter, 1);
		if (write)
			pthread_rwlock_rdlock(&rw);
		else
			pthread_rwlock_wrlock(&rw);
		released_by_waiter = 0;
	}
	pthread_rwlock_unlock(&rw);
	pthread_join(th, NULL);
}

static int cmd_rwlock(int l)
{
	fprintf(stderr, "addr rwlock %p\n", (void *)&rw);
	rw_phase(l, 0);
	rw_phase(l, 1);
	printf("rwlock rounds %d\n", l);
	return 0;
}

/* ---- condition variables ---- */
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;

static void *cond_waiter(void *arg)
{
	(void)arg;
	int waits = 0;
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&cm);
		announced = 1;
		while (!go) {
			pthread_cond_wait(&cv, &cm);
			waits++;
		}
		go = 0;
		announced = 0;
		pthread_mutex_unlock(&cm);
		released_by_waiter = 1;
	}
	printf("cond waits %d\n", waits);
	return NULL;
}

static int cmd_cond(int l, int t)
{
	pthread_t th;
	rounds = l;
	fprintf(stderr, "addr cond %p\n", (void *)&cv);
	pthread_create(&th, NULL, cond_waiter, NULL);
	for (int i = 0; i < l; i++) {
		wait_flag(&announced, 1);
		nap_us(HOLD_MS * 1000);
		pthread_mutex_lock(&cm);    /* the waiter released it in its wait */
		go = 1;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&cm);
		wait_flag(&released_by_waiter, 1);
		released_by_waiter = 0;
	}
	pthread_join(th, NULL);
	int timeouts = 0;
	pthread_mutex_lock(&cm);
	for (int i = 0; i < t; i++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 5 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_cond_timedwait(&cv, &cm, &ts) == ETIMEDOUT)
			timeouts++;
	}
	pthread_mutex_unlock(&cm);
	printf("cond timeouts %d\n", timeouts);
	return 0;
}

/* ---- semaphores ---- */
static sem_t sem;

static void *sem_waiter(void *arg)
{
	(void)arg;
	int ok = 0;
	for (int i = 0; i < rounds; i++) {
		announced = 1;
		if (sem_wait(&sem) == 0)
			ok++;
		announced = 0;
		released_by_waiter = 1;
		wait_flag(&released_by_waiter, 0);
	}
	printf("sem waits ok %d\n", ok);
	return NULL;
}

static int cmd_sem(int l, int avail)
{
	pthread_t th;
	rounds = l;
	sem_init(&sem, 0, 0);
	fprintf(stderr, "addr sem %p\n", (void *)&sem);
	pthread_create(&th, NULL, sem_waiter, NULL);
	for (int i = 0; i < l; i++) {
		wait_flag(&announced, 1);
		nap_us(HOLD_MS * 1000);
		sem_post(&sem);
		wait_flag(&released_by_waiter, 1);
		released_by_waiter = 0;
	}
	pthread_join(th, NULL);
	for (int i = 0; i < avail; i++)
		sem_post(&sem);
	int ok = 0;
	for (int i = 0; i < avail; i++)
		if (sem_wait(&sem) == 0)
			ok++;
	printf("sem available waits ok %d\n", ok);
	return 0;
}

static int cmd_semtimed(void)
{
	sem_t s;
	struct timespec ts;
	sem_init(&s, 0, 0);
	fprintf(stderr, "addr sem %p\n", (void *)&s);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20 * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	errno = 0;
	int r = sem_timedwait(&s, &ts);
	int e = errno;
	printf("sem_timedwait %d errno %d (%s)\n", r, e, strerror(e));
	sem_post(&s);
	errno = 1234;
	r = sem_timedwait(&s, &ts);          /* available: no wait, errno kept */
	printf("sem_timedwait available %d errno %d\n", r, errno);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "mutex") == 0)
		return cmd_mutex(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "uncontended") == 0)
		return cmd_uncontended(atol(argv[2]));
	if (argc == 2 && strcmp(argv[1], "kinds") == 0)
		return cmd_kinds();
	if (argc == 3 && strcmp(argv[1], "rwlock") == 0)
		return cmd_rwlock(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "cond") == 0)
		return cmd_cond(atoi(argv[2]), atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "sem") == 0)
		return cmd_sem(atoi(argv[2]), atoi(argv[3]));
	if (argc == 2 && strcmp(argv[1], "semtimed") == 0)
		return cmd_semtimed();
	fprintf(stderr, "usage: see the comment at the top of lock_prog.c\n");
	return 2;
}
