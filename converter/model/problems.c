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
 * two findings one row and a row's line are their kind's (same_row,
 * describe: fkind.h); here are the passes across kinds and processes:
 * the gaps the launch-bound row folds in, the storms of several workers
 * each under the threshold, a row's wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "problems.h"
#include "util.h"
#include "report_model.h"

struct acc {
	struct ft_problem *p;
	int n, cap;
};

static struct ft_problem *add(struct acc *a)
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

int ft_gap_queued(const struct ft_report *r, int i)
{
	const struct ft_finding *f = &r->f[i];
	const struct ft_verdict *v = verdict_of(r, f->pid);
	return f->kind == FT_FK_GAP && !f->after_sync && v && v->limit == FT_LIMIT_GPU;
}

int ft_gap_startup(const struct ft_report *r, int i)
{
	const struct ft_finding *f = &r->f[i];
	return f->kind == FT_FK_GAP && r->nprocs && f->pid == r->procs[r->main].pid &&
	       r->rv.from && r->rv.from != FT_FROM_WHOLE && f->end <= r->rv.w0;
}

/* a gap row that the launch-bound row already holds; a start-up gap
 * (ft_gap_startup: the start-up line counts that time); a thread-scope gap
 * of a process whose streams have gaps (the streams' gaps are the GPU's
 * idle time; a thread's gaps overlap them); or a queued gap (ft_gap_queued):
 * no sync drained its stream before it, and its process's verdict says
 * the GPU is the limit, so the queued work kept the GPU busy as far as
 * anything recorded shows and the pause in submitting cost nothing the
 * run could gain (the data_starved --fixed example: the main thread waits
 * for its loader, its loader for the GPU) */
static int folded(const struct ft_report *r, int i, int launch_bound_pid)
{
	const struct ft_finding *f = &r->f[i];
	if (f->kind != FT_FK_GAP)
		return 0;
	if (f->pid == launch_bound_pid && ft_gap_cause_class(f->cause) == FT_CAT_CPU)
		return 1;
	if (ft_gap_queued(r, i) || ft_gap_startup(r, i))
		return 1;
	if (f->scope == 1)
		for (int j = 0; j < r->nf; j++)
			if (r->f[j].kind == FT_FK_GAP && r->f[j].scope == 0 && r->f[j].pid == f->pid)
				return 1;
	return 0;
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
static void launch_bound(const struct ft_report *r, struct acc *acc)
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
	struct ft_problem *p = add(acc);
	p->fk = -1;
	p->pid = mp->pid;
	p->lost_ns = v->basis == FT_BASIS_GPU_IDLE
		     ? v->idle_by_feed[FT_CAT_SUBMIT] + v->idle_by_feed[FT_CAT_CPU] : cpu;
	ft_launch_bound_words(p, v, launches, mp->m.steps);
}

/* a storm or lock finding joins row p (its wall time is theirs) */
static void cover_add(struct ft_problem *p, const struct ft_finding *f)
{
	if (p->nmem == p->capmem)
		FT_GROW(p->mem, p->capmem, 8);
	p->mem[p->nmem++] = f;
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

/* Bursts of small reads under the per-process threshold, in several
 * processes of the run on one data set (four workers each reading 700
 * times a second): together a storm when their reads, over the span from
 * the first one's start to the last one's end, reach the threshold's rate
 * (--storm-reads per --storm-window-ms). One row per data set, as for the
 * storms each process made alone. */
static void run_wide_storms(const struct ft_report *r, struct acc *acc)
{
	char *taken = ft_xcalloc((size_t)r->ncand + 1, 1);
	char dir[160], other[160], both[160];
	/* a candidate on the data set of a storm row joins it (a third worker
	 * that stayed under the threshold beside two that did not) */
	for (int j = 0; j < r->ncand; j++) {
		const struct ft_finding *c = &r->cand[j];
		ft_storm_dir(c, other, sizeof other);
		for (int k = 0; k < acc->n && !taken[j]; k++) {
			struct ft_problem *p = &acc->p[k];
			if (p->fk != FT_FK_STORM || !*p->dir)
				continue;
			snprintf(both, sizeof both, "%s", p->dir);
			ft_storm_common_dir(both, other);
			if (ft_storm_depth(both) < 2)
				continue;
			snprintf(p->dir, sizeof p->dir, "%s", both);
			p->reads += c->reads, p->files += c->files, p->bytes += c->bytes;
			p->need += c->reads_needed, p->lost_ns += c->lost_ns;
			cover_add(p, c);
			ft_storm_take_opener(p, c);
			p->count++;
			int seen = 0;
			for (int q = 0; q < r->nf && !seen; q++)
				seen = r->f[q].kind == FT_FK_STORM && r->f[q].pid == c->pid;
			for (int q = 0; q < j && !seen; q++)
				seen = taken[q] && r->cand[q].pid == c->pid;
			if (!seen)
				p->nprocs++, p->under++;
			ft_storm_what(p);
			taken[j] = 1;
		}
	}
	for (int i = 0; i < r->ncand; i++) {
		if (taken[i])
			continue;
		ft_storm_dir(&r->cand[i], dir, sizeof dir);
		if (ft_storm_depth(dir) < 2)
			continue;
		uint64_t reads = 0, files = 0, bytes = 0, need = 0, lost = 0;
		uint64_t t0 = r->cand[i].start, t1 = r->cand[i].end;
		int32_t pids[64];
		int npids = 0, n = 0;
		for (int j = i; j < r->ncand; j++) {
			if (taken[j])
				continue;
			ft_storm_dir(&r->cand[j], other, sizeof other);
			snprintf(both, sizeof both, "%s", dir);
			ft_storm_common_dir(both, other);
			if (ft_storm_depth(both) < 2)
				continue;
			const struct ft_finding *c = &r->cand[j];
			snprintf(dir, sizeof dir, "%s", both);
			taken[j] = 2;            /* this group's, for now */
			n++;
			reads += c->reads, files += c->files, bytes += c->bytes;
			need += c->reads_needed, lost += c->lost_ns;
			if (c->start < t0)
				t0 = c->start;
			if (c->end > t1)
				t1 = c->end;
			int seen = 0;
			for (int k = 0; k < npids && !seen; k++)
				seen = pids[k] == c->pid;
			if (!seen && npids < 64)
				pids[npids++] = c->pid;
		}
		/* rate over the span against the threshold's, without division */
		uint64_t span = t1 > t0 ? t1 - t0 : 1;
		int storm = npids >= 2 && (double)reads * (double)r->storm_window_ns >=
					  (double)r->storm_reads * (double)span;
		for (int j = i; j < r->ncand; j++)
			if (taken[j] == 2)
				taken[j] = storm ? 4 : 3;    /* 4: this storm's; 3: looked at, no storm */
		if (!storm)
			continue;
		struct ft_problem *p = add(acc);
		p->kind = ft_fkinds[FT_FK_STORM]->row;
		p->fk = FT_FK_STORM;
		p->pid = r->cand[i].pid;
		p->nprocs = p->under = npids;
		p->count = (uint64_t)n;
		p->lost_ns = lost;
		snprintf(p->dir, sizeof p->dir, "%s", dir);
		p->reads = reads, p->files = files, p->bytes = bytes, p->need = need;
		for (int j = i; j < r->ncand; j++)
			if (taken[j] == 4) {
				ft_storm_take_opener(p, &r->cand[j]);
				cover_add(p, &r->cand[j]);
				taken[j] = 1;
			}
		struct ft_finding like = r->cand[i];
		like.reads = reads, like.files = files;
		p->suggestion = ft_finding_suggestion(&like);
		ft_storm_what(p);
	}
	free(taken);
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
	struct acc acc = { 0 };
	char *taken = ft_xcalloc((size_t)r->nf + 1, 1);
	int *members = ft_xmalloc(((size_t)r->nf + 1) * sizeof *members);
	launch_bound(r, &acc);
	int lb_pid = acc.n ? acc.p[0].pid : -1;
	for (int i = 0; i < r->nf; i++) {
		if (taken[i] || folded(r, i, lb_pid))
			continue;
		int nm = 0;
		members[nm++] = i;
		taken[i] = 1;
		for (int j = i + 1; j < r->nf; j++)
			if (!taken[j] && !folded(r, j, lb_pid) && same_row(r, i, j))
				members[nm++] = j, taken[j] = 1;
		struct ft_problem *p = add(&acc);
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
	run_wide_storms(r, &acc);
	for (int i = 0; i < acc.n; i++)
		storm_wall(&acc.p[i], r);
	if (acc.n > 1)
		qsort(acc.p, (size_t)acc.n, sizeof *acc.p, by_cost);
	*out = acc.p;
	return acc.n;
}
