/*
 * locks.c: one process's lock waits, grouped by lock (groups.c) with their
 * call sites, the time some launching thread spent waiting for a lock
 * (their union within the verdict's window), whether two launching threads
 * waited for the same lock, and the semaphore metrics. Memory grows with
 * locks and call sites, and with each lock's stretches of waits (its wall
 * time as intervals), never with other events.
 */
#include <stdlib.h>

#include "util.h"
#include "analyses.h"
#include "events.h"
#include "groups.h"
#include "symbolize.h"

struct locks {
	struct ft_group_set lk;
	uint64_t lk0, lk1, lk_union;     /* launching threads' waits: a running union */
};

/* A lock wait's call site: Python's, else the native stack's (groups.c
 * sums them per site) */
static void lock_site(const struct ft_process *p, struct ft_group *g, const struct ft_kfacts *f,
		      const struct ft_rec *r, uint64_t dur)
{
	uint32_t py = f->py ? (uint32_t)ft_field_raw(r, f->py) : 0;
	uint32_t site = py ? py : f->site ? ft_site_key(p, (uint32_t)ft_field_raw(r, f->site)) : 0;
	ft_group_site(g, site, py != 0, dur);
}

static void *locks_new(struct ft_an_ctx *c)
{
	(void)c;
	struct locks *l = ft_xcalloc(1, sizeof(struct locks));
	l->lk.keep_cover = 1;           /* a lock row's waits, against the feed's (problems.c) */
	return l;
}

static void locks_event(void *s, struct ft_an_ctx *c, const struct ft_an_ev *e)
{
	struct locks *l = s;
	const struct ft_kfacts *f = e->f;
	const struct ft_event *ev = e->ev;
	if (!f)
		return;
	if (f->mutex) {
		uint64_t addr = ft_field_raw(e->r, f->lock);
		struct ft_group *g = ft_group_of(&l->lk, addr);
		if (!g->count)
			g->kind = e->r->kind;
		ft_group_add(g, ev->tid, ev->ts_ns, e->end, ev->dur_ns);
		lock_site(c->p, g, f, e->r, ev->dur_ns);
		c->m.lock_waits++;
		c->m.lock_ns += ev->dur_ns;
		uint64_t s0 = ev->ts_ns, s1 = e->end;
		if (c->o.win_end) {
			s0 = s0 < c->o.win_start ? c->o.win_start : s0;
			s1 = s1 > c->o.win_end ? c->o.win_end : s1;
		}
		if (e->t->launches && s1 > s0) {      /* start order: a running union */
			if (s0 > l->lk1) {
				l->lk_union += l->lk1 - l->lk0;
				l->lk0 = s0, l->lk1 = s1;
			} else if (s1 > l->lk1) {
				l->lk1 = s1;
			}
		}
	}
	if (f->sem) {
		c->m.sem_waits++;
		c->m.sem_ns += ev->dur_ns;
	}
}

static void locks_finish(void *s, struct ft_an_ctx *c)
{
	struct locks *l = s;
	c->m.locks += ft_groups_emit(&l->lk, FT_FK_LOCK, c->p, c->o.lock_min_ns, &c->sink);
	c->out.lock_union = l->lk_union + (l->lk1 - l->lk0);
	for (int i = 0; i < l->lk.n; i++) {
		int n = 0;
		for (int k = 0; k < l->lk.g[i].ntids; k++) {
			const struct ft_thacc *t = ft_thread_find(c->th, l->lk.g[i].tids[k]);
			n += t && t->launches > 0;
		}
		c->out.lock_shared |= n >= 2;
	}
}

static void locks_free(void *s)
{
	struct locks *l = s;
	ft_groups_free(&l->lk);
	free(l);
}

static int locks_wants(const struct ft_kfacts *f)
{
	return f->mutex || f->sem;
}

const struct ft_an_ops ft_an_locks = { "locks", locks_new, locks_wants, locks_event, locks_finish,
				       locks_free };
