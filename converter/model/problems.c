/*
 * problems.c: the report's findings grouped into what a user acts on
 * (docs/ANALYSES.md, "Problems"). Launch gaps are grouped by process,
 * scope (streams or a thread's launches), whether a sync began them, and
 * their cause; small-read storms by data set (the common directory of
 * their most-read files) across every process of the run, so a storm
 * split over four workers is one row; a hidden sync is already one per
 * call site and a lock one per lock. A run whose verdict is work
 * submission gets a launch-bound row ("1 200 launches per step, mean 9 us
 * of CPU between launches"). Each row carries one suggestion. What makes
 * two findings one row and a row's line, the findings that make none
 * and the rows across processes are their kind's (same_row, describe,
 * folded, extra_rows: fkind.h); here are the passes across kinds: the
 * launch-bound row, the grouping, a row's wall time, the ranking.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "problems.h"
#include "util.h"
#include "report_model.h"

/* a new row of a run's (the kinds' extra_rows add theirs through it too) */
static struct ft_problem *add_row(struct ft_rows *a)
{
	if (a->n == a->cap)
		FT_GROW(a->p, a->cap, 16);
	struct ft_problem *p = &a->p[a->n++];
	memset(p, 0, sizeof *p);
	p->first = -1;
	p->nprocs = 1;
	p->count = 1;
	return p;
}

/* process pid's verdict, NULL when pid is none of the report's */
static const struct ft_verdict *verdict_of(const struct ft_report *r, int32_t pid)
{
	for (int k = 0; k < r->nprocs; k++)
		if (r->procs[k].pid == pid)
			return &r->procs[k].v;
	return NULL;
}

static const struct ft_verdict *ctx_verdict(const struct ft_rowctx *c, int32_t pid)
{
	return verdict_of(c->run, pid);
}

/* a storm or lock finding joins row p (its wall time is theirs) */
static void cover_add(struct ft_problem *p, const struct ft_finding *f)
{
	if (p->nmem == p->capmem)
		FT_GROW(p->mem, p->capmem, 8);
	p->mem[p->nmem++] = f;
}

void ft_rowctx_of(const struct ft_report *r, struct ft_rowctx *c)
{
	memset(c, 0, sizeof *c);
	c->f = r->f, c->nf = r->nf;
	c->cand = r->cand, c->ncand = r->ncand;
	c->storm_reads = r->storm_reads, c->storm_window_ns = r->storm_window_ns;
	c->main_pid = r->nprocs ? r->procs[r->main].pid : -1;
	c->from = r->rv.from, c->w0 = r->rv.w0;
	c->launch_bound_pid = -1;
	c->verdict = ctx_verdict, c->run = r;
	c->add = add_row, c->join = cover_add;
}

/* finding i makes no row of its own (its kind's folded) */
static int folded(const struct ft_rowctx *c, int i)
{
	const struct ft_fkind_ops *k = ft_fkind(&c->f[i]);
	return k->folded && k->folded(c, i);
}

/* findings i and j belong to one row (their kind's same_row) */
static int same_row(const struct ft_report *r, int i, int j)
{
	const struct ft_finding *a = &r->f[i], *b = &r->f[j];
	const struct ft_fkind_ops *k = ft_fkind(a);
	return a->kind == b->kind && k->same_row && k->same_row(a, b);
}

/* a row's line and totals: its kind's describe, else its one finding's label */
static void describe(const struct ft_report *r, struct ft_problem *p, const int *members,
		     int nm)
{
	const struct ft_finding *f = &r->f[members[0]];
	const struct ft_fkind_ops *k = ft_fkind(f);
	if (k->describe)
		k->describe(verdict_of(r, f->pid), r->f, members, nm, p);
	else
		ft_finding_label(f, p->what, sizeof p->what);
}

/* The launch-bound row: the verdict says work submission. */
static void launch_bound(const struct ft_report *r, struct ft_rows *rows)
{
	if (!r->nprocs)
		return;
	const struct ft_rep_proc *mp = &r->procs[r->main];
	const struct ft_verdict *v = &mp->v;
	if (v->limit != FT_LIMIT_SUBMISSION || !v->by_launch)
		return;
	uint64_t launches = 0;
	for (int k = 0; k < v->nths; k++)
		for (int j = 0; j < v->nfeeders && j < 8; j++)
			if (v->ths[k].tid == v->feeder[j])
				launches += v->ths[k].launches;
	if (!launches)
		return;
	uint64_t cpu = v->t[FT_CAT_SUBMIT] + v->t[FT_CAT_CPU];
	struct ft_problem *p = add_row(rows);
	p->fk = -1;
	p->pid = mp->pid;
	p->lost_ns = v->basis == FT_BASIS_GPU_IDLE
		     ? v->idle_by_feed[FT_CAT_SUBMIT] + v->idle_by_feed[FT_CAT_CPU] : cpu;
	ft_launch_bound_words(p, v, launches, mp->m.steps);
}

/* a finding's suggestion fitted to the run: its kind's advice, told
 * whether its process is a worker (any traced image of its pid) */
const char *ft_finding_advice(const struct ft_report *r, const struct ft_finding *f)
{
	const struct ft_fkind_ops *k = ft_fkind(f);
	if (!k->advice)
		return k->suggestion(f);
	int worker = 0;
	for (int i = 0; i < r->nprocs && !worker; i++)
		worker = r->procs[i].pid == f->pid && r->procs[i].role == FT_ROLE_WORKER;
	return k->advice(f, worker);
}

uint64_t ft_finding_cost(const struct ft_report *r, const struct ft_finding *f)
{
	const struct ft_fkind_ops *k = ft_fkind(f);
	if (!k->cost)
		return f->lost_ns;
	const struct ft_verdict *v = NULL;
	for (int i = 0; i < r->nprocs && !v; i++)
		if (r->procs[i].pid == f->pid)
			v = &r->procs[i].v;
	return k->cost(v, f);
}

uint64_t ft_problem_rank_ns(const struct ft_problem *p)
{
	return p->feed_known ? p->feed_ns : p->lost_ns;
}

/* A storm or lock row's cost is the wall time its reads or waits covered,
 * not their sum: four workers reading at once, or four threads waiting on
 * one lock at once, lose the run no more than the time they read or waited
 * in. A storm's: the exact union of its findings' intervals over threads
 * and processes (a lock row is one lock of one process: its covered time).
 * The sum is kept beside it. Each also gets what the feeding threads
 * lost to it: the part of that union in which they waited for data or
 * read files themselves (r->feed; a lock's: or waited for a lock,
 * r->feed_all). */
static void storm_wall(struct ft_problem *p, const struct ft_report *r)
{
	if (!p->nmem)
		return;
	const struct ft_iv **iv = ft_xmalloc((size_t)p->nmem * sizeof *iv);
	int *n = ft_xmalloc((size_t)p->nmem * sizeof *n), exact = 1;
	uint64_t u = 0;
	for (int i = 0; i < p->nmem; i++) {
		iv[i] = p->mem[i]->cov, n[i] = p->mem[i]->ncov;
		exact &= p->mem[i]->ncov > 0;
		u += p->mem[i]->covered_ns;
	}
	int lock = p->first >= 0 && (ft_fkinds[r->f[p->first].kind]->flags & FT_FKF_COVER_WAITS);
	if (exact) {
		u = ft_cover_union(iv, n, p->nmem);
		if (r->feed_known) {      /* a lock's: the feeding threads' own waits on it too */
			p->feed_known = 1;
			p->feed_ns = ft_cover_union_within(iv, n, p->nmem,
							   lock ? &r->feed_all : &r->feed);
		}
	}
	free(iv);
	free(n);
	free(p->mem);
	p->mem = NULL;
	p->nmem = p->capmem = 0;
	p->summed_ns = p->lost_ns;
	if (u < p->lost_ns)
		p->lost_ns = u;
	const struct ft_fkind_ops *k = ft_fkinds[p->fk];
	if (k->wall)
		k->wall(p, p->first >= 0 ? r->f[p->first].threads : 0,
			r->procs[r->main].v.nfeeders);
}

static int by_cost(const void *x, const void *y)
{
	const struct ft_problem *a = x, *b = y;
	uint64_t ka = ft_problem_rank_ns(a), kb = ft_problem_rank_ns(b);
	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->lost_ns != b->lost_ns)
		return a->lost_ns > b->lost_ns ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

int ft_problems(const struct ft_report *r, struct ft_problem **out)
{
	struct ft_rows rows = { 0 };
	char *taken = ft_xcalloc((size_t)r->nf + 1, 1);
	int *members = ft_xmalloc(((size_t)r->nf + 1) * sizeof *members);
	struct ft_rowctx c;
	ft_rowctx_of(r, &c);
	launch_bound(r, &rows);
	c.launch_bound_pid = rows.n ? rows.p[0].pid : -1;
	for (int i = 0; i < r->nf; i++) {
		if (taken[i] || folded(&c, i))
			continue;
		int nm = 0;
		members[nm++] = i;
		taken[i] = 1;
		for (int j = i + 1; j < r->nf; j++)
			if (!taken[j] && !folded(&c, j) && same_row(r, i, j))
				members[nm++] = j, taken[j] = 1;
		struct ft_problem *p = add_row(&rows);
		const struct ft_finding *f = &r->f[i];
		p->kind = ft_fkind(f)->row;
		p->fk = f->kind;
		p->pid = f->pid;
		p->first = i;
		p->count = (uint64_t)nm;
		p->suggestion = ft_finding_advice(r, f);
		for (int k = 0; k < nm; k++) {
			p->lost_ns += ft_finding_cost(r, &r->f[members[k]]);
			if (ft_fkind(f)->flags & FT_FKF_COVER)
				cover_add(p, &r->f[members[k]]);
			int seen = 0;
			for (int q = 0; q < k && !seen; q++)
				seen = r->f[members[q]].pid == r->f[members[k]].pid;
			p->nprocs += k && !seen;
		}
		describe(r, p, members, nm);
	}
	free(taken);
	free(members);
	for (int k = 0; k < FT_FK_N; k++)
		if (ft_fkinds[k]->extra_rows)
			ft_fkinds[k]->extra_rows(&c, &rows);
	for (int i = 0; i < rows.n; i++)
		storm_wall(&rows.p[i], r);
	if (rows.n > 1)
		qsort(rows.p, (size_t)rows.n, sizeof *rows.p, by_cost);
	*out = rows.p;
	return rows.n;
}
