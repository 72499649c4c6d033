/*
 * steps.c: steps from user ranges (docs/ANALYSES.md, "Steps"). A step is a
 * closed range (push/pop on one thread, or start/end by id) whose name
 * starts with the step prefix, case-insensitively ("step" unless
 * --step-range says otherwise), and that is not inside another step of
 * its thread. Keeps per thread the stack of open pushes, the open
 * start/end steps, and one length per closed step (for the median).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyses.h"
#include "util.h"
#include "events.h"
#include "phases.h"
#include "cmdline.h"
#include "steps.h"

#define MAX_DEPTH 64                  /* deeper pushes are matched by level only */

struct open_push { int32_t level; int step; uint64_t start; };
struct tstack { int32_t tid; int n; struct open_push s[MAX_DEPTH]; };
struct open_async { uint64_t id, start; };
struct receipt { uint64_t at, launches, hidden, reads; };
struct rthread { int32_t tid, fd; struct receipt *v; int n, cap; };

#define MIN_RECEIPTS 3

struct ft_steps {
	const struct ft_process *p;
	char prefix[128];
	struct tstack *th; int nth, capth;
	struct open_async *as; int nas, capas;
	int open;                         /* steps open now, all threads */
	struct span { uint64_t start, len; } *len; size_t nlen, caplen;
	struct rthread *rt; int nrt, caprt;   /* receipts, per thread */
	uint64_t launches, hidden, reads;     /* all so far, for receipts */
	int settled;                          /* batch steps made (or not needed) */
	int python;                           /* the process runs CPython */
	struct ft_phases *ph;                 /* the Python-side instrumentation's */
	struct ft_steps_result r;
};

int ft_step_name(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	return name && n && strncasecmp(name, prefix, n) == 0;
}

struct ft_steps *ft_steps_new(const struct ft_process *p, const char *prefix)
{
	struct ft_steps *s = ft_xcalloc(1, sizeof *s);
	s->p = p;
	s->python = ft_is_python(*p->cmdline ? p->cmdline : p->exe);
	snprintf(s->prefix, sizeof s->prefix, "%s", prefix ? prefix : FT_STEP_DEFAULT);
	s->ph = ft_phases_new(p);
	return s;
}

static struct tstack *stack_of(struct ft_steps *s, int32_t tid)
{
	for (int i = 0; i < s->nth; i++)
		if (s->th[i].tid == tid)
			return &s->th[i];
	if (s->nth == s->capth)
		FT_GROW(s->th, s->capth, 8);
	struct tstack *t = &s->th[s->nth++];
	t->tid = tid;
	t->n = 0;
	return t;
}

static int is_step(const struct ft_steps *s, uint32_t name)
{
	return name && ft_step_name(ft_string(s->p, name), s->prefix);
}

static void closed(struct ft_steps *s, uint64_t start, uint64_t end)
{
	if (s->nlen == s->caplen)
		FT_GROW(s->len, s->caplen, 64);
	uint64_t d = end > start ? end - start : 0;
	s->len[s->nlen++] = (struct span){ start, d };
	s->r.steps++;
	s->r.step_ns += d;
	if (!s->r.first_ns || start < s->r.first_ns)
		s->r.first_ns = start;
	if (end > s->r.last_end_ns)
		s->r.last_end_ns = end;
	s->open--;
}

/* pops entries of t from the top down to (and including) level; a step
 * among them closes at ts */
static void unwind(struct ft_steps *s, struct tstack *t, int32_t level, uint64_t ts, int count)
{
	while (t->n && t->s[t->n - 1].level >= level) {
		struct open_push *o = &t->s[--t->n];
		if (o->step) {
			if (count)
				closed(s, o->start, ts);
			else
				s->open--;        /* its pop was lost: not a step we can time */
		}
	}
}

static void receipt(struct ft_steps *s, int32_t tid, int32_t fd, uint64_t at);

static int step_open_on(const struct tstack *t)
{
	for (int i = 0; i < t->n; i++)
		if (t->s[i].step)
			return 1;
	return 0;
}

void ft_steps_event(struct ft_steps *s, const struct ft_event *ev, int launch, int hidden,
		    int read)
{
	const struct ft_rec *r = ev->rec;
	const struct ft_kfacts *f = ft_kfacts(r->kind);
	ft_phases_event(s->ph, ev, f && f->cat == FT_CAT_IO ? ev->dur_ns : 0, s->launches,
			s->hidden, s->reads);
	switch (r->kind) {
	case FT_EV_RANGE_PUSH: {
		struct tstack *t = stack_of(s, ev->tid);
		int32_t level = (int32_t)r->p.u32[1];
		unwind(s, t, level, ev->ts_ns, 0);          /* pops we never saw */
		if (t->n == MAX_DEPTH)
			return;
		int step = !step_open_on(t) && is_step(s, r->p.u32[0]);
		t->s[t->n++] = (struct open_push){ level, step, ev->ts_ns };
		if (step)
			s->r.step_tid = ev->tid;
		s->open += step;
		return;
	}
	case FT_EV_RANGE_POP: {
		int32_t level = (int32_t)r->p.u32[0];
		struct tstack *t = stack_of(s, ev->tid);
		if (level >= 0 && t->n && t->s[t->n - 1].level >= level)
			unwind(s, t, level, ev->ts_ns, 1);
		return;
	}
	case FT_EV_RANGE_START:
		if (!is_step(s, r->p.u32[2]))
			return;
		if (s->nas == s->capas)
			FT_GROW(s->as, s->capas, 8);
		s->as[s->nas++] = (struct open_async){ r->p.u64[0], ev->ts_ns };
		s->open++;
		return;
	case FT_EV_RANGE_END:
		for (int i = 0; i < s->nas; i++)
			if (s->as[i].id == r->p.u64[0]) {
				closed(s, s->as[i].start, ev->ts_ns);
				s->as[i] = s->as[--s->nas];
				return;
			}
		return;
	}
	if (s->open > 0) {
		s->r.launches += launch != 0;
		s->r.hidden += hidden != 0;
		s->r.reads += read != 0;
	}
	s->launches += launch != 0;
	s->hidden += hidden != 0;
	s->reads += read != 0;
	/* a multiprocessing message's 4-byte length, read from a pipe */
	if (r->kind == FT_EV_PIPE_READ && s->python && r->p.u32[1] == FT_FDK_PIPE &&
	    r->p.u32[2] == 4 && (int32_t)r->p.u32[3] == 4)
		receipt(s, ev->tid, (int32_t)r->p.u32[0], ev->ts_ns + ev->dur_ns);}

static void receipt(struct ft_steps *s, int32_t tid, int32_t fd, uint64_t at)
{
	struct rthread *t = NULL;
	for (int i = 0; i < s->nrt && !t; i++)
		if (s->rt[i].tid == tid && s->rt[i].fd == fd)
			t = &s->rt[i];
	if (!t) {
		if (s->nrt == s->caprt)
			FT_GROW(s->rt, s->caprt, 8);
		t = &s->rt[s->nrt++];
		*t = (struct rthread){ tid, fd, NULL, 0, 0 };
	}
	if (t->n == t->cap)
		FT_GROW(t->v, t->cap, 8);
	t->v[t->n++] = (struct receipt){ at, s->launches, s->hidden, s->reads };
}

/* No step range closed: the steps are the optimizer steps of the training
 * phases (phases.c), else the batches of the thread with most receipts on
 * one pipe, one from each receipt to the next. */
static void settle(struct ft_steps *s)
{
	if (s->settled)
		return;
	s->settled = 1;
	struct ft_pstep *ps;
	size_t nps;
	s->r.phases = ft_phases_finish(s->ph, &ps, &nps);
	if (!s->r.steps && nps) {
		for (size_t i = 0; i < nps; i++) {
			s->open = 1;
			closed(s, ps[i].start, ps[i].end);
			s->r.launches += ps[i].launches;
			s->r.hidden += ps[i].hidden;
			s->r.reads += ps[i].reads;
		}
		s->r.from_optimizer = 1;
		s->r.step_tid = s->r.phases->tid;
	}
	free(ps);
	if (s->r.steps)
		return;
	const struct rthread *t = NULL;
	for (int i = 0; i < s->nrt; i++)
		if (!t || s->rt[i].n > t->n)
			t = &s->rt[i];
	if (!t || t->n < MIN_RECEIPTS)
		return;
	for (int i = 1; i < t->n; i++) {
		s->open = 1;
		closed(s, t->v[i - 1].at, t->v[i].at);
	}
	const struct receipt *a = &t->v[0], *b = &t->v[t->n - 1];
	s->r.launches = b->launches - a->launches;
	s->r.hidden = b->hidden - a->hidden;
	s->r.reads = b->reads - a->reads;
	s->r.from_batches = 1;
	s->r.batch_tid = s->r.step_tid = t->tid;
}

static int by_len(const void *x, const void *y)
{
	uint64_t a = ((const struct span *)x)->len, b = ((const struct span *)y)->len;
	return a < b ? -1 : a > b;
}

static int by_start(const void *x, const void *y)
{
	uint64_t a = ((const struct span *)x)->start, b = ((const struct span *)y)->start;
	return a < b ? -1 : a > b;
}

uint64_t *ft_steps_lengths(struct ft_steps *s, size_t *n)
{
	settle(s);
	uint64_t *v = ft_xmalloc(s->nlen * sizeof *v + 1);
	for (size_t i = 0; i < s->nlen; i++)
		v[i] = s->len[i].len;
	*n = s->nlen;
	return v;
}

uint64_t *ft_steps_periods(struct ft_steps *s, size_t *n)
{
	settle(s);
	qsort(s->len, s->nlen, sizeof *s->len, by_start);
	uint64_t *v = ft_xmalloc(s->nlen * sizeof *v + 1);
	/* optimizer steps tile their training phases (each from the mark
	 * before): their lengths are the periods, and the time between
	 * phases (evaluation passes) stays out */
	for (size_t i = 0; i < s->nlen; i++)
		v[i] = i + 1 < s->nlen && !s->r.from_optimizer ?
		       s->len[i + 1].start - s->len[i].start : s->len[i].len;
	*n = s->nlen;
	return v;
}

void ft_steps_finish(struct ft_steps *s, struct ft_steps_result *out)
{
	settle(s);
	if (s->nlen) {
		qsort(s->len, s->nlen, sizeof *s->len, by_len);
		size_t m = s->nlen / 2;
		s->r.median_ns = s->nlen % 2 ? s->len[m].len : (s->len[m - 1].len + s->len[m].len) / 2;
		/* warm-up: the leading steps far above the median */
		qsort(s->len, s->nlen, sizeof *s->len, by_start);
		size_t w = 0;
		while (s->nlen >= FT_WARMUP_MIN && w < s->nlen / 4 &&
		       s->len[w].len > FT_WARMUP_X * s->r.median_ns)
			w++;
		s->r.warmup_steps = w;
		s->r.warmup_end_ns = w ? s->len[w - 1].start + s->len[w - 1].len : 0;
	}
	*out = s->r;
	s->r.phases = NULL;                  /* the caller's now */
}

void ft_steps_free(struct ft_steps *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nrt; i++)
		free(s->rt[i].v);
	free(s->rt);
	free(s->th);
	free(s->as);
	free(s->len);
	free(s->r.phases);
	ft_phases_free(s->ph);
	free(s);
}

/* ---- as one of the analyses (analyses.h) ---- */

static void *steps_op_new(struct ft_an_ctx *c)
{
	return ft_steps_new(c->p, c->o.step_range);
}

static void steps_op_event(void *s, struct ft_an_ctx *c, const struct ft_an_ev *e)
{
	(void)c;
	ft_steps_event(s, e->ev, e->in.launch, e->in.cuda && e->in.sync == FT_SYNC_HIDDEN,
		       e->in.read);
}

static void steps_op_finish(void *s, struct ft_an_ctx *c)
{
	struct ft_steps_result *sr = &c->out.sr;
	ft_steps_finish(s, sr);
	c->m.steps = sr->steps;
	c->m.step_ns = sr->step_ns;
	c->m.step_median_ns = sr->median_ns;
	c->m.step_launches = sr->launches;
	c->m.step_hidden = sr->hidden;
	c->m.step_reads = sr->reads;
	c->m.steps_from_batches = sr->steps && sr->from_batches;
	c->m.steps_from_optimizer = sr->steps && sr->from_optimizer;
}

static void steps_op_free(void *s)
{
	ft_steps_free(s);
}

const struct ft_an_ops ft_an_steps = { "steps", steps_op_new, NULL, steps_op_event,
				       steps_op_finish, steps_op_free };
