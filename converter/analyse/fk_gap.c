/*
 * fk_gap.c: the launch gap as a finding kind (fkind.h): a pause in a
 * stream's or a submitting thread's launches of at least --gap-ms, found
 * by gpu.c, with what the submitting thread did meanwhile (attr, cause).
 */
#include <stdio.h>

#include "fkind.h"
#include "json.h"
#include "pfarg.h"
#include "fkrow.h"
#include "util.h"

static const char *suggestion(const struct ft_finding *f)
{
	switch (f->cause) {
	case FT_CAT_SUBMIT:
	case FT_CAT_CPU:
		return "the launching thread is busy on the CPU between launches: fewer, "
		       "larger launches (CUDA graphs, kernel fusion, torch.compile) or less "
		       "Python per step";
	case FT_CAT_DATA:
		return "the GPU waits while the feeding thread waits for the next batch: "
		       "speed up data delivery (see the verdict's producers)";
	case FT_CAT_HIDDEN:
		return "a hidden sync ends the GPU's queue before the gap: remove it (see "
		       "the hidden-sync rows)";
	case FT_CAT_GPU_WAIT:
		return "an explicit synchronize empties the queue: synchronize less often";
	case FT_CAT_IO:
		return "the launching thread reads files itself: move the reads to loader "
		       "workers";
	case FT_CAT_LOCK:
		return "the launching thread waits for a lock: shorten or split the lock";
	case FT_CAT_RANKS:
		return "the launching thread waits for other ranks in a collective: the "
		       "last rank to arrive sets the pace (the Ranks block, feedtrace ranks)";
	}
	return "";
}

static void label(const struct ft_finding *f, char *buf, size_t cap)
{
	char a[32];
	ft_fmt_ns(a, sizeof a, f->attr[f->cause]);
	if (f->scope == 0)
		snprintf(buf, cap, "stream 0x%llx%s, tid %d: %s %s",
			 (unsigned long long)f->stream, f->after_sync ? " after a sync" : "",
			 f->tid, ft_cat_label[f->cause], a);
	else
		snprintf(buf, cap, "thread %d%s: %s %s", f->tid,
			 f->after_sync ? " after a sync" : "", ft_cat_label[f->cause], a);
}

static void json(struct ft_json *j, const struct ft_finding *f)
{
	ft_json_str(j, "scope", f->scope ? "thread" : "stream");
	ft_json_hex(j, "stream", f->stream);
	ft_json_int(j, "tid", f->tid);
	ft_json_bool(j, "after_sync", f->after_sync);
	ft_json_str(j, "cause", ft_cat_name[f->cause]);
	ft_json_str(j, "next_call", f->next_call);
	ft_json_obj(j, "attribution_ns");
	for (int k = 0; k < FT_CAT_N; k++)
		ft_json_u64(j, ft_cat_name[k], f->attr[k]);
	ft_json_end(j);
}

static int args(const struct ft_finding *f, struct pf_arg *a, char (*key)[32])
{
	(void)key;
	int n = 0;
	a[n++] = PF_ARG_UINT("gap_ns", f->lost_ns);
	a[n++] = PF_ARG_STR("scope", f->scope ? "thread" : "stream");
	a[n++] = PF_ARG_PTR("stream", f->stream);
	a[n++] = PF_ARG_INT("tid", f->tid);
	a[n++] = PF_ARG_BOOL("after_sync", f->after_sync);
	a[n++] = PF_ARG_STR("cause", ft_cat_label[f->cause]);
	a[n++] = PF_ARG_STR("next_call", f->next_call);
	/* a gap's split is its calls' (waiting for a core is from samples,
	 * per thread: its counter track) */
	for (int k = 0; k < FT_CAT_N; k++)
		if (k != FT_CAT_GPU_WAIT && k != FT_CAT_HIDDEN && k != FT_CAT_RUNQ)
			a[n++] = PF_ARG_UINT(ft_cat_name[k], f->attr[k]);
	a[n++] = PF_ARG_UINT("sync", f->attr[FT_CAT_GPU_WAIT] + f->attr[FT_CAT_HIDDEN]);
	return n;
}

static void identity(const struct ft_finding *f, char *t, size_t cap)
{
	snprintf(t, cap, "launch gaps (%s)", ft_cat_label[f->cause]);
}

/* what the launching thread was doing in a gap, by cause */
static const char *const doing[FT_CAT_N] = {
	[FT_CAT_SUBMIT] = "on the CPU (submitting or other work)",
	[FT_CAT_GPU_WAIT] = "in an explicit synchronize",
	[FT_CAT_HIDDEN] = "in a hidden sync",
	[FT_CAT_IO] = "reading files",
	[FT_CAT_LOCK] = "waiting for a lock",
	[FT_CAT_DATA] = "waiting for data",
	[FT_CAT_RANKS] = "waiting for other ranks in a collective",
	[FT_CAT_CPU] = "on the CPU (submitting or other work)",
};

/* submitting and other CPU are one cause for a gap: the thread was busy */
static int cause_class(int cause)
{
	return cause == FT_CAT_SUBMIT ? FT_CAT_CPU : cause;
}

/* one row: a process's gaps of one scope and cause */
static int same_row(const struct ft_finding *a, const struct ft_finding *b)
{
	return a->pid == b->pid && a->scope == b->scope &&
	       cause_class(a->cause) == cause_class(b->cause);
}

static void describe(const struct ft_verdict *v, const struct ft_finding *all,
		     const int *m, int nm, struct ft_problem *p)
{
	(void)v;
	const struct ft_finding *f = &all[m[0]];
	char b[32];
	uint64_t longest = 0, synced = 0;
	for (int k = 0; k < nm; k++) {
		if (all[m[k]].lost_ns > longest)
			longest = all[m[k]].lost_ns;
		synced += all[m[k]].after_sync != 0;
	}
	ft_fmt_ns(b, sizeof b, longest);
	char after[48] = "";
	if (synced)
		snprintf(after, sizeof after, " (%llu after a sync)", (unsigned long long)synced);
	snprintf(p->what, sizeof p->what, "%llu gap%s %s%s; the launching thread was %s; "
		 "longest %s", (unsigned long long)nm, nm == 1 ? "" : "s",
		 f->scope ? "between a thread's launches" : "on the GPU's streams", after,
		 doing[cause_class(f->cause)], b);
}

/* no row: work was still queued on its stream while its process's
 * verdict says the GPU is the limit (docs/ANALYSES.md, "Findings") */
static int queued(const struct ft_rowctx *c, int i)
{
	const struct ft_finding *f = &c->f[i];
	const struct ft_verdict *v = c->verdict(c, f->pid);
	return f->kind == FT_FK_GAP && !f->after_sync && v && v->limit == FT_LIMIT_GPU;
}

/* no row: of the main process, it ends before the verdict's window starts */
static int startup(const struct ft_rowctx *c, int i)
{
	const struct ft_finding *f = &c->f[i];
	return f->kind == FT_FK_GAP && c->main_pid >= 0 && f->pid == c->main_pid &&
	       c->from && c->from != FT_FROM_WHOLE && f->end <= c->w0;
}

/* a gap row that the launch-bound row already holds; a start-up gap
 * (startup: the start-up line counts that time); a thread-scope gap
 * of a process whose streams have gaps (the streams' gaps are the GPU's
 * idle time; a thread's gaps overlap them); or a queued gap (queued):
 * no sync drained its stream before it, and its process's verdict says
 * the GPU is the limit, so the queued work kept the GPU busy as far as
 * anything recorded shows and the pause in submitting cost nothing the
 * run could gain (the data_starved --fixed example: the main thread waits
 * for its loader, its loader for the GPU) */
static int folded(const struct ft_rowctx *c, int i)
{
	const struct ft_finding *f = &c->f[i];
	if (f->pid == c->launch_bound_pid && cause_class(f->cause) == FT_CAT_CPU)
		return 1;
	if (queued(c, i) || startup(c, i))
		return 1;
	if (f->scope == 1)
		for (int j = 0; j < c->nf; j++)
			if (c->f[j].kind == FT_FK_GAP && c->f[j].scope == 0 && c->f[j].pid == f->pid)
				return 1;
	return 0;
}

/* every stream gap, and why some are no finding */
static int summary(const struct ft_rowctx *c, const struct ft_metrics *t, char *line,
		   size_t cap)
{
	if (!t->gaps)
		return 0;
	int nqueued = 0, early = 0;
	for (int i = 0; i < c->nf; i++) {
		nqueued += queued(c, i) && c->f[i].scope == 0;
		early += startup(c, i) && c->f[i].scope == 0;
	}
	char a[48];
	ft_fmt_ns(a, sizeof a, t->gap_ns);
	int n = snprintf(line, cap, "launch gaps in all: %llu on streams, %s%s",
			 (unsigned long long)t->gaps, a, nqueued ? "; those with work still "
			 "queued on the GPU are no finding, the GPU being the limit" : "");
	if (early)
		snprintf(line + n, cap - (size_t)n, "; %d before the loop (start-up) "
			 "%s no finding", early, early > 1 ? "are" : "is");
	return 1;
}

/* a report keeps the longest stream gaps; a thread's while there is room */
static int cap(const struct ft_finding *f)
{
	return f->scope == 0 ? FT_CAP_LONGEST : FT_CAP_DROP;
}

void ft_launch_bound_words(struct ft_problem *p, const struct ft_verdict *v,
			  uint64_t launches, uint64_t steps)
{
	uint64_t cpu = v->t[FT_CAT_SUBMIT] + v->t[FT_CAT_CPU];
	char a[32], b[32];
	p->kind = "launch-bound";
	ft_fmt_ns(a, sizeof a, cpu / launches);
	if (steps)
		snprintf(b, sizeof b, "%.0f", (double)launches / (double)steps);
	else
		ft_fmt_count(b, sizeof b, launches);
	snprintf(p->what, sizeof p->what, "%s launches %s, mean %s of CPU between launches "
		 "(submitting %.0f%%, other CPU %.0f%% of the feeding threads' time)",
		 b, steps ? "per step" : "in the loop", a,
		 v->wall_ns ? 100.0 * (double)v->t[FT_CAT_SUBMIT] / (double)v->wall_ns : 0,
		 v->wall_ns ? 100.0 * (double)v->t[FT_CAT_CPU] / (double)v->wall_ns : 0);
	p->suggestion = "fewer, larger launches: CUDA graphs, kernel fusion, torch.compile; "
			"or less Python between launches";
}

const struct ft_fkind_ops ft_fk_gap = {
	.key = "launch_gap", .slice = "launch gap", .track = "launch gaps",
	.row = "launch gaps",
	.suggestion = suggestion, .label = label, .json = json, .args = args,
	.identity = identity, .same_row = same_row, .describe = describe,
	.folded = folded, .summary = summary, .cap = cap,
};
