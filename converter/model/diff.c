/*
 * diff.c: the model of `feedtrace diff` (diff.h): runs of one program
 * before and after a change (one or several per side, or directories of
 * runs), loaded and compared. The time per step over the loop of each
 * side (stats.c: means of the steps' periods and a 95% block-bootstrap
 * interval of the change), the median step beside it; the time per step
 * split by feed; findings matched by identity with their cost before and
 * after; what the one conclusion credits: only changes larger than the
 * interval. Decides only: diff_write.c, diff_json.c and words.c write it.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"
#include "diff.h"
#include "gpu_measured.h"
#include "merge.h"
#include "problems.h"
#include "report_model.h"
#include "stats.h"
#include "steps.h"

struct metric { const char *name, *key; int time; size_t off; };

/* metrics.def's, those diff compares (a label) and the rest, skipped */
static const struct metric metrics[] = {
#define METRIC(field, key, label, ns) { label, key, ns, offsetof(struct ft_metrics, field) },
#include "metrics.def"
#undef METRIC
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])
_Static_assert(NMETRICS <= sizeof ((struct ft_diff_model *)0)->metrics /
	       sizeof ((struct ft_diff_model *)0)->metrics[0], "room for metrics.def");

#define MAXRUNS FT_DIFF_MAX_RUNS
#define MAXL FT_DIFF_MAX_FINDINGS

/* Findings are matched across runs by kind and what they are about: a
 * storm by its data set (problems.c: the directory its top files share),
 * a hidden sync by its symbol and call site, a lock by its call, name and
 * call site, launch gaps by their cause (not by address or stream, which
 * differ from run to run). */
struct label { char text[200]; int kind; uint64_t n[2], reads[2], lost[2]; };

static uint64_t get(const struct ft_metrics *m, const struct metric *d)
{
	return *(const uint64_t *)((const char *)m + d->off);
}

/* the label t's entry, made on first sight; -1 when the table is full */
static int label_index(struct label *l, int *n, const char *t, int kind)
{
	int j;
	for (j = 0; j < *n; j++)
		if (!strcmp(l[j].text, t))
			return j;
	if (*n == MAXL)
		return -1;
	memset(&l[j], 0, sizeof l[j]);
	snprintf(l[j].text, sizeof l[j].text, "%s", t);
	l[j].kind = kind;
	(*n)++;
	return j;
}

/* Side s's findings (its run k) by identity. Storms are the report's rows
 * (Problems: by data set, across the workers, with the bursts each under
 * the per-process threshold), not each process's storms: a loader whose
 * reads spread out under load has no storm of its own, yet the data set
 * was read in small pieces as before. */
static int collect(const struct ft_diff_runs *s, int k, struct label *l, int n)
{
	for (int ri = 0; ri < s->n; ri++) {
		const struct ft_report *r = &s->r[ri];
		for (int i = 0; i < r->nf; i++) {
			const struct ft_finding *f = &r->f[i];
			const struct ft_fkind_ops *o = ft_fkind(f);
			if (!o->identity)
				continue;           /* matched by its Problems row, below */
			char t[200];
			o->identity(f, t, sizeof t);
			int j = label_index(l, &n, t, f->kind);
			if (j < 0)
				continue;
			l[j].n[k] += o->flags & FT_FKF_OCCURRENCES ? f->count : 1;
			l[j].lost[k] += ft_finding_cost(r, f);
		}
		struct ft_problem *pb;
		int npb = ft_problems(r, &pb);
		for (int i = 0; i < npb; i++) {
			if (pb[i].fk < 0 || !ft_fkinds[pb[i].fk]->row_identity)
				continue;
			char t[200];
			ft_fkinds[pb[i].fk]->row_identity(&pb[i], t, sizeof t);
			int j = label_index(l, &n, t, pb[i].fk);
			if (j < 0)
				continue;
			l[j].n[k] += pb[i].count;           /* the storms (bursts) in the row */
			l[j].reads[k] += pb[i].reads;
			l[j].lost[k] += pb[i].lost_ns;
		}
		free(pb);
	}
	return n;
}

/* per unit (step or run) of a side */
static double per(const struct ft_diff_runs *s, uint64_t x)
{
	return s->units ? (double)x / (double)s->units : 0;
}

static double delta(const struct ft_diff_runs *a, const struct ft_diff_runs *b,
		    const struct label *l)
{
	return per(b, l->lost[1]) - per(a, l->lost[0]);
}

/* a finding that cost less than LISTED_NS per unit (step or run) on both
 * sides is counted, not listed, in the text; NOTABLE_NS per unit on one
 * side is named in a conclusion that credits nothing */
#define LISTED_NS 1000.0
#define NOTABLE_NS 10000.0

static const struct ft_diff_runs *cmp_sides[2];

static int by_delta(const void *x, const void *y)
{
	double dx = delta(cmp_sides[0], cmp_sides[1], x), dy = delta(cmp_sides[0], cmp_sides[1], y);
	dx = dx < 0 ? -dx : dx;
	dy = dy < 0 ? -dy : dy;
	return dx > dy ? -1 : dx < dy;
}

static enum ft_status status(const struct label *l)
{
	return !l->n[1] ? FT_STATUS_GONE : !l->n[0] ? FT_STATUS_NEW
	       : l->lost[1] < l->lost[0] ? FT_STATUS_SHRANK
	       : l->lost[1] > l->lost[0] ? FT_STATUS_GREW : FT_STATUS_SAME;
}

/* ---- loading ---- */

static int has_trace(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;
	while (d && !found && (e = readdir(d)))
		found = strlen(e->d_name) > 3 && !strcmp(e->d_name + strlen(e->d_name) - 3, ".ft");
	if (d)
		closedir(d);
	return found;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* a run directory, or a directory of run directories (each one, by name) */
static int add_dir(struct ft_diff_runs *s, const char *dir)
{
	struct dirent **e;
	int n = has_trace(dir) ? -1 : scandir(dir, &e, NULL, by_name), added = 0;
	for (int i = 0; i < n; i++) {
		char *p = NULL;
		struct stat st;
		if (e[i]->d_name[0] != '.' && asprintf(&p, "%s/%s", dir, e[i]->d_name) > 0 &&
		    !stat(p, &st) && S_ISDIR(st.st_mode) && has_trace(p) && s->n < MAXRUNS) {
			s->dir[s->n++] = p;          /* freed at exit */
			added++;
		} else
			free(p);
		free(e[i]);
	}
	if (n >= 0)
		free(e);
	if (added)
		return 0;
	if (s->n == MAXRUNS) {
		fprintf(stderr, "feedtrace diff: at most %d runs per side\n", MAXRUNS);
		return -1;
	}
	s->dir[s->n++] = dir;
	return 0;
}

static void add_metrics(struct ft_metrics *t, const struct ft_metrics *m)
{
	for (size_t i = 0; i < NMETRICS; i++)
		if (metrics[i].name)
			*(uint64_t *)((char *)t + metrics[i].off) += get(m, &metrics[i]);
	t->steps += m->steps;
	t->step_ns += m->step_ns;
}

/* the feeding threads' time by category; without feeders (no GPU work,
 * no batch received), the main thread's, its untraced time as CPU */
static void feeds(const struct ft_report *r, uint64_t *feed)
{
	const struct ft_rep_proc *mp = &r->procs[r->main];
	const struct ft_verdict *v = &mp->v;
	for (int k = 0; k < FT_CAT_N && v->nfeeders; k++)
		feed[k] += v->t[k];
	for (int i = 0; i < v->nths && !v->nfeeders; i++) {
		const struct ft_thread_sum *t = &v->ths[i];
		if (t->tid != mp->pid)
			continue;
		uint64_t traced = 0;
		for (int k = 0; k < FT_CAT_N; k++)
			traced += t->t[k], feed[k] += t->t[k];
		feed[FT_CAT_CPU] += t->wall > traced ? t->wall - traced : 0;
	}
}

static int load(struct ft_diff_runs *s, const struct ft_an_opts *o,
		const struct ft_merge_opts *mg, int mixed)
{
	for (int i = 0; i < s->n; i++) {
		int bad = ft_report_model_build(&s->r[i], s->dir[i], o, mg, stderr) != 0 ? -1 : 0;
		if (bad)
			fprintf(stderr, "feedtrace diff: %s: nothing usable\n", s->dir[i]);
		else if (!mixed && ft_trace_one_run(&s->r[i].tr, "diff", stderr) != 0)
			bad = -2, ft_report_free(&s->r[i]);
		if (bad) {
			for (int k = 0; k < i; k++)
				ft_report_free(&s->r[k]);
			s->n = 0;
			return bad;              /* -2: files of two runs (exit 2) */
		}
		ft_report_step_lengths(&s->r[i], &s->len[i], &s->nlen[i]);
		ft_report_step_periods(&s->r[i], &s->per[i], &s->nper[i]);
		add_metrics(&s->sum, &s->r[i].total);
		feeds(&s->r[i], s->feed);
		s->whole |= s->r[i].rv.from != FT_FROM_STEPS;
		s->optimizer += s->r[i].total.steps_from_optimizer != 0;
	}
	return 0;
}

static int all_steps(const struct ft_diff_runs *s)
{
	for (int i = 0; i < s->n; i++)
		if (!s->nper[i])
			return 0;
	return 1;
}

/* a side's time per step over the loop: its runs' step periods summed over
 * their count; -1 without steps */
static double loop_step(const struct ft_diff_runs *s, uint64_t *count)
{
	double sum = 0;
	uint64_t n = 0;
	for (int i = 0; i < s->n; i++)
		for (size_t k = 0; k < s->nper[i]; k++)
			sum += (double)s->per[i][k], n++;
	if (count)
		*count = n;
	return n ? sum / (double)n : -1;
}

/* a side's value of a metric: the mean over its runs */
static uint64_t mean(const struct ft_diff_runs *s, uint64_t total)
{
	return s->n ? total / (uint64_t)s->n : 0;
}

/* verdict.def's rows that diff shows, of the main processes of each
 * side's first run, into x (room for all of verdict.def's rows); how many */
#define VD_STATE(x, k, expr) x->s[k] = (expr);
#define VD_NS(x, k, expr) x->ns[k] = (expr);
static int verdict_rows(const struct ft_diff_runs *sd[2], struct ft_diff_vrow *out)
{
	int n = 0;
#define VERDICT(name, scope, type, key, expr, ranks, diff, dkey, label)                   \
	FT_VF_IF(FT_VF_SHOWN_##diff, {                                                    \
		struct ft_diff_vrow *x = &out[n++];                                       \
		*x = (struct ft_diff_vrow){ dkey, label, FT_VF_DIFF_##diff, { 0 }, { 0 } }; \
		for (int k = 0; k < 2; k++) {                                             \
			const struct ft_report *r = &sd[k]->r[0];                         \
			const struct ft_rep_proc *p = &r->procs[r->main];                 \
			const struct ft_verdict *v = &p->v;                               \
			const struct ft_run_verdict *rv = &r->rv;                         \
			(void)p, (void)v, (void)rv;                                       \
			VD_##diff(x, k, expr)                                             \
		}                                                                         \
	})
#include "verdict.def"
#undef VERDICT
	return n;
}

/* The main processes' GPU idle, before and after: measured when both
 * sides have timing samples, else the model's (-1: a side launched no
 * kernel). */
static int gpu_idle_pair(const struct ft_diff_runs *a, const struct ft_diff_runs *b,
			 double *x, double *y)
{
	int ka = ft_gpu_idle_share(&a->r[0].procs[a->r[0].main].v, x);
	int kb = ft_gpu_idle_share(&b->r[0].procs[b->r[0].main].v, y);
	if (ka < 0 || kb < 0)
		return -1;
	if (ka != kb) {        /* one side measured, one not: compare the models */
		const struct ft_verdict *va = &a->r[0].procs[a->r[0].main].v;
		const struct ft_verdict *vb = &b->r[0].procs[b->r[0].main].v;
		uint64_t wa = va->win_end - va->win_start, wb = vb->win_end - vb->win_start;
		*x = wa ? (double)va->model_idle_ns / (double)wa : 0;
		*y = wb ? (double)vb->model_idle_ns / (double)wb : 0;
		return 0;
	}
	return ka;
}


/* ---- deciding ---- */

/* the change: the time per step over the loop (the mean of the step
 * periods) when every run marks steps, the median step beside it; else
 * the median of one wall time per run (an interval needs two runs on
 * each side) */
static void change(struct ft_diff_model *m)
{
	struct ft_diff_runs *s = m->s, *a = &s[0], *b = &s[1];
	int by_step = m->by_step = all_steps(a) && all_steps(b);
	struct ft_sample sa[MAXRUNS], sb[MAXRUNS], pa[MAXRUNS], pb[MAXRUNS];
	uint64_t wall[2][MAXRUNS];
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < s[j].n; i++) {
			wall[j][i] = s[j].r[i].total.wall_ns;
			(j ? sb : sa)[i] = by_step ? (struct ft_sample){ s[j].len[i], s[j].nlen[i] } :
						     (struct ft_sample){ &wall[j][i], 1 };
			(j ? pb : pa)[i] = (struct ft_sample){ s[j].per[i], s[j].nper[i] };
		}
	m->have_ci = by_step ? ft_change_mean_ci(pa, a->n, pb, b->n, &m->ch) == 0 :
		     a->n > 1 && b->n > 1 && ft_change_ci(sa, a->n, sb, b->n, &m->ch) == 0;
	m->have_med = by_step && ft_change_ci(sa, a->n, sb, b->n, &m->chm) == 0;
	for (int j = 0; j < 2; j++)
		s[j].units = by_step ? s[j].sum.steps : (uint64_t)s[j].n;
}

/* the findings matched by identity (l), largest change of lost time
 * first, and their figures, means over each side's runs (the text, the
 * conclusion and --json); how many */
static struct label l[MAXL];

static int match(struct ft_diff_model *m)
{
	const struct ft_diff_runs *a = &m->s[0], *b = &m->s[1];
	int nl = collect(b, 1, l, collect(a, 0, l, 0));
	cmp_sides[0] = a;
	cmp_sides[1] = b;
	qsort(l, (size_t)nl, sizeof *l, by_delta);
	for (int i = 0; i < nl; i++)
		m->f[i] = (struct ft_diff_finding){ l[i].kind, l[i].text, status(&l[i]),
			{ mean(a, l[i].n[0]), mean(b, l[i].n[1]) },
			{ mean(a, l[i].reads[0]), mean(b, l[i].reads[1]) },
			{ mean(a, l[i].lost[0]), mean(b, l[i].lost[1]) },
			{ per(a, l[i].lost[0]), per(b, l[i].lost[1]) },
			per(a, l[i].lost[0]) >= LISTED_NS || per(b, l[i].lost[1]) >= LISTED_NS };
	return nl;
}

/* faster or slower: the findings and feeds that moved the same way, by
 * more than the interval's half-width, largest first */
static void credit_moved(struct ft_diff_model *m, int nl)
{
	const struct ft_diff_runs *a = &m->s[0], *b = &m->s[1];
	struct ft_diff_credit *cr = &m->cr;
	const struct ft_change *ch = &m->ch;
	double half = (ch->hi - ch->lo) / 2;
	for (int i = 0; i < nl; i++) {
		double d = delta(a, b, &l[i]);
		if ((ch->verdict == FT_CH_FASTER ? -d : d) > half)
			m->credit[cr->ncredit++] = i;
	}
	int best = -1;
	double bd = 0;
	for (int c = 0; c < FT_CAT_N; c++) {
		double d = per(b, b->feed[c]) - per(a, a->feed[c]);
		if (ch->verdict == FT_CH_FASTER)
			d = -d;
		if (d > half && d > bd)
			best = c, bd = d;
	}
	if (best >= 0 && !a->whole && !b->whole) {
		cr->feed = best;
		cr->feed_ns[0] = per(a, a->feed[best]);
		cr->feed_ns[1] = per(b, b->feed[best]);
	}
}

/* nothing to credit: still name what changed that a user went looking
 * for (a storm gone), said to be within the interval; at most two, each
 * over NOTABLE_NS per unit */
static void credit_named(struct ft_diff_model *m, int nl)
{
	const struct ft_diff_runs *a = &m->s[0], *b = &m->s[1];
	struct ft_diff_credit *cr = &m->cr;
	for (int i = 0; i < nl && cr->nnamed < 2; i++)
		if (status(&l[i]) != FT_STATUS_SAME &&
		    (per(a, l[i].lost[0]) >= NOTABLE_NS || per(b, l[i].lost[1]) >= NOTABLE_NS))
			m->named[cr->nnamed++] = i;
}

/* what the conclusion stands on and credits */
static void credit(struct ft_diff_model *m, int nl)
{
	struct ft_diff_runs *s = m->s, *a = &s[0], *b = &s[1];
	int by_step = m->by_step;
	struct ft_diff_credit *cr = &m->cr;
	*cr = (struct ft_diff_credit){ .ch = m->have_ci ? &m->ch : NULL, .by_step = by_step,
				       .findings = m->f, .credit = m->credit, .feed = -1,
				       .named = m->named, .median = m->have_med ? &m->chm : NULL,
				       .runs = { a->n, b->n },
				       .wall = { a->sum.wall_ns, b->sum.wall_ns } };
	if (!m->have_ci)
		return;
	uint64_t nsteps[2] = { 0, 0 };
	loop_step(a, &nsteps[0]);
	loop_step(b, &nsteps[1]);
	cr->n[0] = by_step ? nsteps[0] : a->units;
	cr->n[1] = by_step ? nsteps[1] : b->units;
	for (int j = 0; j < 2 && by_step; j++)  /* steps of the loop's warm-up, left out */
		for (int i = 0; i < s[j].n; i++)
			cr->warm[j] += s[j].nlen[i] - s[j].nper[i];
	cr->training_only = by_step && a->optimizer == a->n && b->optimizer == b->n;
	if (m->ch.verdict == FT_CH_FASTER || m->ch.verdict == FT_CH_SLOWER)
		credit_moved(m, nl);
	else
		credit_named(m, nl);
}

/* a figure of both sides, present on both */
static struct ft_diff_pair pair(const char *key, const char *label, int time, double x,
				double y)
{
	return (struct ft_diff_pair){ key, { 1, 1 }, { x, y }, label, time };
}

/* the figures the writers are handed: metrics.def's means per run, the
 * step's, the feeds per unit, the findings, GPU idle, the verdict rows */
static void figures(struct ft_diff_model *m, int nl, int nvrow)
{
	const struct ft_diff_runs *a = &m->s[0], *b = &m->s[1];
	struct ft_diff_figures *d = &m->fig;
	int nm = 0, have_med = m->have_med;
	for (size_t i = 0; i < NMETRICS; i++)
		if (metrics[i].name)
			m->metrics[nm++] = pair(metrics[i].key, metrics[i].name, metrics[i].time,
				(double)mean(a, get(&a->sum, &metrics[i])),
				(double)mean(b, get(&b->sum, &metrics[i])));
	double loop[2] = { loop_step(a, NULL), loop_step(b, NULL) };
	*d = (struct ft_diff_figures){
		.runs = { a->dir, b->dir }, .nruns = { a->n, b->n },
		.metrics = m->metrics, .nmetrics = nm,
		.change = m->have_ci ? &m->ch : NULL,
		.change_of = m->by_step ? FT_OF_STEP_TIME : FT_OF_WALL_TIME,
		.median = have_med ? &m->chm : NULL,
		.by_step = m->by_step, .whole = a->whole || b->whole,
		.findings = m->f, .nfindings = nl,
		.verdict = m->vrow, .nverdict = nvrow,
	};
	d->step[FT_DIFF_STEPS] = (struct ft_diff_pair){ "steps",
		{ a->sum.steps > 0, b->sum.steps > 0 },
		{ (double)mean(a, a->sum.steps), (double)mean(b, b->sum.steps) }, NULL, 0 };
	d->step[FT_DIFF_STEP_MEAN] = (struct ft_diff_pair){ "step_mean_ns",
		{ a->sum.steps > 0, b->sum.steps > 0 },
		{ a->sum.steps ? (double)(a->sum.step_ns / a->sum.steps) : 0,
		  b->sum.steps ? (double)(b->sum.step_ns / b->sum.steps) : 0 }, NULL, 1 };
	d->step[FT_DIFF_STEP_TIME] = (struct ft_diff_pair){ "step_time_ns",
		{ loop[0] >= 0, loop[1] >= 0 }, { loop[0], loop[1] }, NULL, 1 };
	d->step[FT_DIFF_STEP_MEDIAN] = (struct ft_diff_pair){ "step_median_ns",
		{ have_med, have_med },
		{ have_med ? m->chm.before : 0, have_med ? m->chm.after : 0 }, NULL, 1 };
	for (int c = 0; c < FT_CAT_N; c++)
		d->feeds[c] = pair(ft_cat_name[c], NULL, 1, per(a, a->feed[c]), per(b, b->feed[c]));
	d->gpu_idle = gpu_idle_pair(a, b, &d->gpu_idle_share[0], &d->gpu_idle_share[1]);
}

int ft_diff_decide(struct ft_diff_model *m, const struct ft_diff_args *args)
{
	memset(m, 0, sizeof *m);
	struct ft_diff_runs *s = m->s;
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < args->ndirs[j]; i++)
			if (add_dir(&s[j], args->dirs[j][i]) != 0)
				return -3;
	int lr = load(&s[0], &args->an, &args->mg, args->mixed);
	if (lr != 0)
		return lr;
	if ((lr = load(&s[1], &args->an, &args->mg, args->mixed)) != 0) {
		for (int i = 0; i < s[0].n; i++)
			ft_report_free(&s[0].r[i]);
		return lr;
	}
	change(m);
	int nvrow = verdict_rows((const struct ft_diff_runs *[2]){ &s[0], &s[1] }, m->vrow);
	int nl = match(m);
	credit(m, nl);
	figures(m, nl, nvrow);
	return 0;
}

void ft_diff_model_free(struct ft_diff_model *m)
{
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < m->s[j].n; i++) {
			ft_report_free(&m->s[j].r[i]);
			free(m->s[j].len[i]);
			free(m->s[j].per[i]);
		}
}
