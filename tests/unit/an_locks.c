/*
 * tests/unit/an_locks.c: lock contention (docs/ANALYSES.md, "Lock
 * contention"): waits grouped by lock address, each lock's count, total,
 * maximum, threads, bursts and the site that waited longest; semaphore
 * and condition waits are no contention; --lock-min-ms.
 */
#include <string.h>

#include "an.h"

static void waits(struct an_run *r)
{
	/* lock 0x5000: thread 101 waits 2 ms four times at one site, 102
	 * 1 ms three times at another, 5 ms apart */
	for (int i = 0; i < 4; i++)
		an_ev(r, 101, FT_EV_MUTEX_LOCK, T0 + 10 * MS + (uint64_t)i * 10 * MS, 2 * MS,
		      "lock", (uint64_t)0x5000, "py", S("w.py:10 in take"), NULL);
	for (int i = 0; i < 3; i++)
		an_ev(r, 102, FT_EV_MUTEX_LOCK, T0 + 15 * MS + (uint64_t)i * 10 * MS, 1 * MS,
		      "lock", (uint64_t)0x5000, "py", S("w.py:20 in put"), NULL);
	/* a writer's wait on a rwlock, 500 us; semaphore and condition waits */
	an_ev(r, 101, FT_EV_RWLOCK_WRLOCK, T0 + 100 * MS, 500 * US, "lock", (uint64_t)0x6000, NULL);
	an_ev(r, 101, FT_EV_SEM_WAIT, T0 + 110 * MS, 3 * MS, "sem", (uint64_t)0x7000, "ret",
	      (uint64_t)0, NULL);
	an_ev(r, 102, FT_EV_SEM_WAIT, T0 + 110 * MS, 4 * MS, "sem", (uint64_t)0x7000, "ret",
	      (uint64_t)0, NULL);
	an_ev(r, 102, FT_EV_COND_WAIT, T0 + 120 * MS, 4 * MS, "cond", (uint64_t)0x8000, "ret",
	      (uint64_t)0, NULL);
}

int main(void)
{
	struct an_run r;
	an_init(&r, 100, "./prog");
	waits(&r);
	an_analyse(&r);
	EQ(r.m.lock_waits, 8);
	EQ(r.m.lock_ns, 11 * MS + 500 * US);
	EQ(r.m.locks, 2);
	EQ(r.m.sem_waits, 2);
	EQ(r.m.sem_ns, 7 * MS);
	EQ(an_count(&r, FT_FK_LOCK), 2);
	const struct ft_finding *f = an_nth(&r, FT_FK_LOCK, 0);
	EQ(f->addr, 0x5000);
	STREQ(f->symbol, "pthread_mutex_lock");
	EQ(f->count, 7);
	EQ(f->total_ns, 11 * MS);
	EQ(f->lost_ns, 11 * MS);
	EQ(f->max_ns, 2 * MS);
	EQ(f->threads, 2);
	EQ(f->start, T0 + 10 * MS);
	EQ(f->end, T0 + 42 * MS);
	EQ(f->nbursts, 1);
	EQ(f->covered_ns, 11 * MS);          /* no two waits overlap */
	STREQ(f->site, "w.py:10 in take");   /* 8 ms against 3 ms */
	EQ(f->lock_name == NULL, 1);         /* no symbol table: no name */
	EQ(f->gil, 0);
	f = an_nth(&r, FT_FK_LOCK, 1);
	EQ(f->addr, 0x6000);
	STREQ(f->symbol, "pthread_rwlock_wrlock");
	EQ(f->count, 1);
	EQ(f->total_ns, 500 * US);
	EQ(f->threads, 1);
	EQ(f->tid, 101);
	STREQ(f->site, "");
	an_free(&r);

	/* --lock-min-ms 1: the rwlock's 500 us is not reported */
	an_init(&r, 100, "./prog");
	r.o.lock_min_ns = 1 * MS;
	waits(&r);
	an_analyse(&r);
	EQ(an_count(&r, FT_FK_LOCK), 1);
	EQ(an_nth(&r, FT_FK_LOCK, 0)->addr, 0x5000);
	EQ(r.m.locks, 1);
	EQ(r.m.lock_waits, 8);
	an_free(&r);
	return an_done("an_locks");
}
