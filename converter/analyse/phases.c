/*
 * phases.c: phases and training steps from the Python-side
 * instrumentation's ranges and marks (phases.h; docs/ANALYSES.md,
 * "Phases"). Keeps one item per __next__ range and per optimizer step of
 * the process (its start, end, file I/O inside it, the process's counts of
 * launches, hidden syncs and reads at its start), and the __next__ ranges
 * open per thread; at the end, picks the loop's thread (most optimizer
 * steps, else most __next__ ranges) and walks its items in time order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "phases.h"
#include "util.h"

enum { IT_NEXT, IT_STEP };

struct item {
	uint64_t start, end, io, launches, hidden, reads;
	uint32_t name;
	int32_t tid;
	uint8_t kind, stop, open;
};
struct open_next { int32_t tid, level; size_t idx; };

struct ft_phases {
	const struct ft_process *p;
	struct item *v; size_t n, cap;
	struct open_next *o; int no, capo;
};

struct ft_phases *ft_phases_new(const struct ft_process *p)
{
	struct ft_phases *s = ft_xrealloc(NULL, sizeof *s);
	memset(s, 0, sizeof *s);
	s->p = p;
	return s;
}

static int starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static struct item *add(struct ft_phases *s, const struct ft_event *ev, int kind, uint64_t l,
			uint64_t h, uint64_t r)
{
	if (s->n == s->cap)
		FT_GROW(s->v, s->cap, 256);
	struct item *it = &s->v[s->n++];
	*it = (struct item){ .start = ev->ts_ns, .end = ev->ts_ns, .launches = l, .hidden = h,
			     .reads = r, .tid = ev->tid, .kind = (uint8_t)kind };
	return it;
}

/* the innermost __next__ open on thread tid (-1: none) */
static int open_on(const struct ft_phases *s, int32_t tid)
{
	for (int i = s->no - 1; i >= 0; i--)
		if (s->o[i].tid == tid)
			return i;
	return -1;
}

void ft_phases_event(struct ft_phases *s, const struct ft_event *ev, uint64_t io_ns,
		     uint64_t launches, uint64_t hidden, uint64_t reads)
{
	const struct ft_rec *r = ev->rec;
	int k;
	switch (r->kind) {
	case FT_EV_RANGE_PUSH:
		if (!starts(ft_string(s->p, r->p.u32[0]), FT_NEXT_PREFIX))
			return;
		add(s, ev, IT_NEXT, launches, hidden, reads)->name = r->p.u32[0];
		s->v[s->n - 1].open = 1;
		if (s->no == s->capo)
			FT_GROW(s->o, s->capo, 8);
		s->o[s->no++] = (struct open_next){ ev->tid, (int32_t)r->p.u32[1], s->n - 1 };
		return;
	case FT_EV_RANGE_POP:
		/* a pop closes the levels from the one it names up */
		while ((k = open_on(s, ev->tid)) >= 0 && s->o[k].level >= (int32_t)r->p.u32[0] &&
		       (int32_t)r->p.u32[0] >= 0) {
			struct item *it = &s->v[s->o[k].idx];
			it->end = ev->ts_ns;
			it->open = 0;
			s->o[k] = s->o[--s->no];
		}
		return;
	case FT_EV_MARK: {
		const char *name = ft_string(s->p, r->p.u32[0]);
		if (starts(name, FT_STOP_MARK)) {
			if ((k = open_on(s, ev->tid)) >= 0)
				s->v[s->o[k].idx].stop = 1;
		} else if (starts(name, FT_OPTSTEP_PREFIX)) {
			add(s, ev, IT_STEP, launches, hidden, reads);
		}
		return;
	}
	}
	if (io_ns && s->no && (k = open_on(s, ev->tid)) >= 0)
		s->v[s->o[k].idx].io += io_ns;
}

const char *ft_phase_kind(const struct ft_phase *p)
{
	return p->train ? "train" : "eval";
}

/* the loop's thread: most optimizer steps, else most __next__ ranges */
static int32_t loop_thread(const struct ft_phases *s)
{
	struct cnt { int32_t tid; uint64_t steps, nexts; } c[64];
	int nc = 0, best = -1;
	for (size_t i = 0; i < s->n; i++) {
		int j = 0;
		while (j < nc && c[j].tid != s->v[i].tid)
			j++;
		if (j == nc) {
			if (nc == 64)
				continue;
			c[nc++] = (struct cnt){ s->v[i].tid, 0, 0 };
		}
		if (s->v[i].kind == IT_STEP)
			c[j].steps++;
		else
			c[j].nexts++;
	}
	for (int j = 0; j < nc; j++)
		if (best < 0 || c[j].steps > c[best].steps ||
		    (c[j].steps == c[best].steps && c[j].nexts > c[best].nexts))
			best = j;
	return best < 0 ? 0 : c[best].tid;
}

static void name_phase(const struct ft_phases *s, const struct item *it, struct ft_phase *p)
{
	const char *name = ft_string(s->p, it->name);
	if (!name || sscanf(name, FT_NEXT_PREFIX " loader=%u it=%u workers=%u dataset=%47s getitem=%79s",
			    &p->loader, &p->it, &p->workers, p->dataset, p->getitem) < 3)
		p->loader = p->it = p->workers = 0;
}

/* the walk over the loop thread's items */
struct walk {
	struct ft_phases_sum *sum;
	struct ft_phase cur, best;
	int have, stopped;
	uint64_t last, pend_next, pend_io;  /* the last step's end; since then */
	const struct item *from;            /* the counts at the step's start */
	struct ft_pstep *steps; size_t n; int cap;
};

static void end_phase(struct walk *w)
{
	struct ft_phases_sum *sum = w->sum;
	if (!w->have || (!w->cur.batches && !w->cur.steps))
		return;
	if (sum->n < FT_PHASES_MAX)
		sum->ph[sum->n++] = w->cur;
	sum->nall++;
	if (w->cur.train) {
		sum->ntrain++;
		if (w->cur.steps > w->best.steps)
			w->best = w->cur;
	}
}

static void next_item(struct walk *w, const struct ft_phases *s, const struct item *it)
{
	struct ft_phase key = { 0 };
	name_phase(s, it, &key);
	if (!w->have || w->stopped || key.loader != w->cur.loader || key.it != w->cur.it) {
		end_phase(w);
		w->cur = key;
		w->cur.start = w->cur.end = it->start;
		w->have = 1;
		w->stopped = 0;
		w->last = w->pend_next = w->pend_io = 0;
		w->from = it;
	}
	if (it->stop) {                     /* the iteration ended: no batch */
		w->stopped = 1;
		return;
	}
	uint64_t d = it->end > it->start ? it->end - it->start : 0;
	w->cur.batches++;
	w->cur.next_ns += d;
	w->cur.io_ns += it->io;
	w->pend_next += d;
	w->pend_io += it->io;
	if (it->end > w->cur.end)
		w->cur.end = it->end;
}

/* an optimizer step: closes a training step of the current phase */
static void step_item(struct walk *w, const struct item *it)
{
	if (!w->have)
		return;
	uint64_t s0 = w->last ? w->last : w->cur.start;
	if (w->n == (size_t)w->cap)
		FT_GROW(w->steps, w->cap, 8);
	w->steps[w->n++] = (struct ft_pstep){ s0, it->start, it->launches - w->from->launches,
					      it->hidden - w->from->hidden,
					      it->reads - w->from->reads };
	w->sum->steps++;
	w->sum->step_ns += it->start > s0 ? it->start - s0 : 0;
	w->sum->next_ns += w->pend_next;
	w->sum->io_ns += w->pend_io;
	w->pend_next = w->pend_io = 0;
	w->last = it->start;
	w->from = it;
	w->cur.train = 1;
	w->cur.steps++;
	if (it->start > w->cur.end)
		w->cur.end = it->start;
}

struct ft_phases_sum *ft_phases_finish(struct ft_phases *s, struct ft_pstep **steps,
				       size_t *nsteps)
{
	*steps = NULL;
	*nsteps = 0;
	if (!s->n)
		return NULL;
	struct walk w = { .sum = ft_xrealloc(NULL, sizeof *w.sum) };
	memset(w.sum, 0, sizeof *w.sum);
	w.sum->tid = loop_thread(s);
	for (size_t i = 0; i < s->n; i++) {
		const struct item *it = &s->v[i];
		if (it->tid != w.sum->tid)
			continue;
		if (it->kind == IT_STEP)
			step_item(&w, it);
		else if (!it->open)
			next_item(&w, s, it);
	}
	end_phase(&w);
	w.sum->workers = w.best.workers;
	w.sum->win_start = w.best.start;
	w.sum->win_end = w.best.end;
	w.sum->win_steps = w.best.steps;
	memcpy(w.sum->dataset, w.best.dataset, sizeof w.sum->dataset);
	memcpy(w.sum->getitem, w.best.getitem, sizeof w.sum->getitem);
	*steps = w.steps;
	*nsteps = w.n;
	return w.sum;
}

void ft_phases_free(struct ft_phases *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->o);
	free(s);
}

int ft_phases_limit(const struct ft_phases_sum *ph, enum ft_limit *limit)
{
	if (!ph || !ph->steps || !ph->step_ns)
		return 0;
	*limit = ft_phases_data_wait(ph) < 0.2 ? FT_LIMIT_NONE : FT_LIMIT_DATA;
	return 1;
}

double ft_phases_data_wait(const struct ft_phases_sum *ph)
{
	double d = ph->step_ns ? (double)ph->next_ns / (double)ph->step_ns : 0;
	return d > 1 ? 1 : d;
}

/* ---- what the writers ask (report_text.c, report_json.c) ---- */

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

double ft_phase_data_wait(const struct ft_phase *p)
{
	return share(p->next_ns, p->end - p->start);
}

int ft_phases_eval_worker(const struct ft_phases_sum *ph, uint64_t t)
{
	for (int i = 0; ph && i < ph->n; i++)
		if (ph->ph[i].start >= t)
			return !ph->ph[i].train;
	return 0;
}

int ft_phases_self_loading(const struct ft_phases_sum *ph)
{
	return ph && ph->steps && !ph->workers;
}
