/*
 * diff.c: what `feedtrace diff` (cmd_diff.c) prints: runs of one program
 * before and after a change (one or several per side, or directories of
 * runs). The time per step over the loop of each side is compared
 * (stats.c: means of the steps' periods and a 95% block-bootstrap interval
 * of the change), the median step beside it; the time per step is split
 * by feed, findings are matched by identity
 * with their cost before and after; one conclusion that credits only
 * changes larger than the interval; --fail-if conditions (gate.c); -o
 * writes the first run of each side into one Perfetto trace, aligned at
 * their start.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"
#include "convert.h"
#include "outfile.h"
#include "pipeline.h"
#include "diff.h"
#include "gpu_measured.h"
#include "gate.h"
#include "diff_json.h"
#include "merge.h"
#include "problems.h"
#include "report.h"
#include "stats.h"
#include "steps.h"
#include "words.h"

struct metric { const char *name, *key; int time; size_t off; };

/* metrics.def's, those diff compares (a label) and the rest, skipped */
static const struct metric metrics[] = {
#define METRIC(field, key, label, ns) { label, key, ns, offsetof(struct ft_metrics, field) },
#include "metrics.def"
#undef METRIC
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

/* the feeds the time per step is split into: the verdict's categories of
 * the feeding threads (docs/ANALYSES.md, "The verdict") */
static const char *const feed_label[FT_CAT_N] = {
	[FT_CAT_SUBMIT] = "launch", [FT_CAT_GPU_WAIT] = "explicit sync",
	[FT_CAT_HIDDEN] = "hidden sync", [FT_CAT_IO] = "I/O", [FT_CAT_LOCK] = "locks",
	[FT_CAT_DATA] = "waiting for data", [FT_CAT_RANKS] = "other ranks", [FT_CAT_CPU] = "CPU",
	[FT_CAT_RUNQ] = "waiting for a core",
};

#define MAXRUNS FT_DIFF_MAX_RUNS
#define MAXL 64

/* Findings are matched across runs by kind and what they are about: a
 * storm by its data set (problems.c: the directory its top files share),
 * a hidden sync by its symbol and call site, a lock by its call, name and
 * call site, launch gaps by their cause (not by address or stream, which
 * differ from run to run). */
struct label { char text[200]; int kind; uint64_t n[2], reads[2], lost[2]; };

struct side {
	const char *dir[MAXRUNS];
	int n;
	struct ft_report r[MAXRUNS];
	uint64_t *len[MAXRUNS];   /* each run's step times */
	size_t nlen[MAXRUNS];
	uint64_t *per[MAXRUNS];   /* each run's step periods (the loop's time) */
	size_t nper[MAXRUNS];
	struct ft_metrics sum;    /* over its runs */
	uint64_t feed[FT_CAT_N];  /* the feeding threads' time, over its runs */
	uint64_t units;           /* steps (all runs have them) or runs */
	int whole;                /* feeds of some run over its whole run, not its steps */
	int optimizer;            /* runs whose steps are optimizer steps (phases.h) */
};

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
static int collect(const struct side *s, int k, struct label *l, int n)
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
static double per(const struct side *s, uint64_t x)
{
	return s->units ? (double)x / (double)s->units : 0;
}

static double delta(const struct side *a, const struct side *b, const struct label *l)
{
	return per(b, l->lost[1]) - per(a, l->lost[0]);
}

/* a finding that cost less than LISTED_NS per unit (step or run) on both
 * sides is counted, not listed, in the text; NOTABLE_NS per unit on one
 * side is named in a conclusion that credits nothing */
#define LISTED_NS 1000.0
#define NOTABLE_NS 10000.0

static const struct side *cmp_sides[2];

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
static int add_dir(struct side *s, const char *dir)
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

static int load(struct side *s, const struct ft_an_opts *o, const struct ft_merge_opts *mg,
		int mixed)
{
	for (int i = 0; i < s->n; i++) {
		int bad = ft_report_build(&s->r[i], s->dir[i], o, mg, stderr) != 0 ? -1 : 0;
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

static int all_steps(const struct side *s)
{
	for (int i = 0; i < s->n; i++)
		if (!s->nper[i])
			return 0;
	return 1;
}

/* a side's time per step over the loop: its runs' step periods summed over
 * their count; -1 without steps */
static double loop_step(const struct side *s, uint64_t *count)
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
static uint64_t mean(const struct side *s, uint64_t total)
{
	return s->n ? total / (uint64_t)s->n : 0;
}

/* ---- printing ---- */

static void fmt(char *b, size_t cap, int time, double v)
{
	if (v < 0)
		v = 0;
	if (time)
		ft_fmt_ns(b, cap, (uint64_t)(v + 0.5));
	else
		ft_fmt_count(b, cap, (uint64_t)(v + 0.5));
}

/* a before more than this many times under the after is too small a base
 * for a relative change ("666 ns -> 39.2 ms" is no "+5879046%") */
#define TINY_BASE 100.0

static void row(const char *name, int time, int hx, double x, int hy, double y)
{
	char bx[32] = "-", by[32] = "-", bc[40] = "-", br[16] = "";
	if (hx)
		fmt(bx, sizeof bx, time, x);
	if (hy)
		fmt(by, sizeof by, time, y);
	if (hx && hy) {
		fmt(bc + 1, sizeof bc - 1, time, x > y ? x - y : y - x);
		bc[0] = x > y ? '-' : y > x ? '+' : ' ';
		if (x && y > x * TINY_BASE)
			snprintf(br, sizeof br, ">%.0fx", TINY_BASE);   /* from a base too small */
		else if (x)
			snprintf(br, sizeof br, "%+.0f%%", 100.0 * (y - x) / x);
		else
			snprintf(br, sizeof br, "%s", y ? "new" : "");
	}
	printf("%-22s %13s %13s %13s %8s\n", name, bx, by, bc, br);
}

static void wrap78(const char *s)
{
	int col = 0;
	while (*s) {
		int w = (int)strcspn(s, " ");
		if (col && col + 1 + w > 78) {
			fputc('\n', stdout);
			col = 0;
		} else if (col) {
			fputc(' ', stdout);
			col++;
		}
		fwrite(s, 1, (size_t)w, stdout);
		col += w;
		s += w;
		while (*s == ' ')
			s++;
	}
	fputc('\n', stdout);
}

/* ---- the command ---- */

/* The step times of the first run of each side as two counters of one
 * process, "diff: steps by index", aligned on step index: step i of both
 * at the before run's start + i x the before run's median step. */
#define STEPS_PID (3 << 22)       /* above the after run's pids */

static void step_counters(struct pf_writer *w, const struct side *s)
{
	const struct side *a = &s[0];
	if (!a->nlen[0] || !s[1].nlen[0])
		return;
	uint64_t *sorted = malloc(a->nlen[0] * sizeof *sorted);
	if (!sorted)
		return;
	memcpy(sorted, a->len[0], a->nlen[0] * sizeof *sorted);
	uint64_t step = (uint64_t)ft_median(sorted, a->nlen[0]);
	free(sorted);
	step = step ? step : 1;
	/* a process of its own (no converted run has its pid) */
	uint64_t p = pf_id(FT_ID_PROCESS, STEPS_PID, 0);
	pf_process_track(w, p, STEPS_PID, "diff: steps by index", NULL);
	for (int j = 0; j < 2; j++) {
		uint64_t t = pf_id(FT_ID_COUNTER, p, (uint64_t)j);
		pf_counter_track(w, t, p, j ? "after: step time" : "before: step time",
				 PF_UNIT_TIME_NS);
		for (size_t i = 0; i < s[j].nlen[0]; i++)
			pf_counter(w, t, a->r[0].tr.start_ns + i * step, (int64_t)s[j].len[0][i]);
	}
}

static int write_timeline(struct side *s, const char *out, const struct ft_an_opts *o)
{
	struct ft_outfile of;
	if (ft_out_open(&of, out, "diff") != 0)
		return 1;
	struct pf_writer *w = pf_open(ft_out_path(&of));
	if (!w) {
		perror(out);
		ft_out_close(&of, 0);
		return 1;
	}
	int rc = 0;
	struct ft_conv_opts co;
	struct ft_conv_stats st;
	memset(&co, 0, sizeof co);
	memset(&st, 0, sizeof st);
	co.an = *o;
	ft_conv_clock(w, &s[0].r[0].tr);
	co.label = "before: ";
	ft_conv_trace(w, &s[0].r[0].tr, &co, stderr, &st);
	co.label = "after: ";
	co.ts_shift = (int64_t)s[0].r[0].tr.start_ns - (int64_t)s[1].r[0].tr.start_ns;
	co.pid_add = 1 << 22;          /* above any pid_max: runs never merge */
	ft_conv_trace(w, &s[1].r[0].tr, &co, stderr, &st);
	step_counters(w, s);
	if (pf_close(w) != 0) {
		fprintf(stderr, "feedtrace diff: %s: write failed\n", out);
		rc = 1;
	}
	if (ft_out_close(&of, !rc) != 0)
		rc = 1;
	return rc;
}

/* verdict.def's rows that diff shows, of the main processes of each
 * side's first run, into x (room for all of verdict.def's rows); how many */
#define VD_STATE(x, k, expr) x->s[k] = (expr);
#define VD_NS(x, k, expr) x->ns[k] = (expr);
static int verdict_rows(const struct side *sd[2], struct ft_diff_vrow *out)
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
static int gpu_idle_pair(const struct side *a, const struct side *b, double *x, double *y)
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

static void gpu_idle_text(const struct side *a, const struct side *b)
{
	double x, y;
	int k = gpu_idle_pair(a, b, &x, &y);
	if (k >= 0)
		printf("GPU idle (%s): %.0f%% -> %.0f%%\n", k ? "measured" : "modelled",
		       100 * x, 100 * y);
}

int ft_diff(const struct ft_diff_args *args)
{
	static struct side s[2];
	memset(s, 0, sizeof s);
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < args->ndirs[j]; i++)
			if (add_dir(&s[j], args->dirs[j][i]) != 0)
				return 2;
	struct ft_an_opts o = args->an;
	struct ft_merge_opts mg = args->mg;
	struct ft_gate *gates = args->gates;
	const char *out = args->out, *junit = args->junit, *html = args->html;
	int json = args->json, ng = args->ngates, mixed = args->mixed;
	int lr = load(&s[0], &o, &mg, mixed);
	if (lr != 0)
		return ng || lr == -2 ? 2 : 1;
	if ((lr = load(&s[1], &o, &mg, mixed)) != 0) {
		for (int i = 0; i < s[0].n; i++)
			ft_report_free(&s[0].r[i]);
		return ng || lr == -2 ? 2 : 1;
	}
	struct side *a = &s[0], *b = &s[1];

	/* the change: the time per step over the loop (the mean of the step
	 * periods) when every run marks steps, the median step beside it;
	 * else the median of one wall time per run (an interval needs two
	 * runs on each side) */
	int by_step = all_steps(a) && all_steps(b);
	struct ft_sample sa[MAXRUNS], sb[MAXRUNS], pa[MAXRUNS], pb[MAXRUNS];
	uint64_t wall[2][MAXRUNS];
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < s[j].n; i++) {
			wall[j][i] = s[j].r[i].total.wall_ns;
			(j ? sb : sa)[i] = by_step ? (struct ft_sample){ s[j].len[i], s[j].nlen[i] } :
						     (struct ft_sample){ &wall[j][i], 1 };
			(j ? pb : pa)[i] = (struct ft_sample){ s[j].per[i], s[j].nper[i] };
		}
	struct ft_change ch, chm;     /* what the conclusion stands on; the median step */
	int have_ci = by_step ? ft_change_mean_ci(pa, a->n, pb, b->n, &ch) == 0 :
		      a->n > 1 && b->n > 1 && ft_change_ci(sa, a->n, sb, b->n, &ch) == 0;
	int have_med = by_step && ft_change_ci(sa, a->n, sb, b->n, &chm) == 0;
	uint64_t nsteps[2] = { 0, 0 };
	double loop[2] = { loop_step(a, &nsteps[0]), loop_step(b, &nsteps[1]) };
	for (int j = 0; j < 2; j++)
		s[j].units = by_step ? s[j].sum.steps : (uint64_t)s[j].n;
	const char *unit = by_step ? "per step" : "per run";
	struct ft_diff_vrow vrow[32];
	int nvrow = verdict_rows((const struct side *[2]){ a, b }, vrow);

	/* findings matched by identity; largest change of lost time first */
	static struct label l[MAXL];
	int nl = collect(b, 1, l, collect(a, 0, l, 0));
	cmp_sides[0] = a;
	cmp_sides[1] = b;
	qsort(l, (size_t)nl, sizeof *l, by_delta);

	/* the findings' figures, means over each side's runs (the text, the
	 * conclusion and --json) */
	static struct ft_diff_finding f[MAXL];
	for (int i = 0; i < nl; i++)
		f[i] = (struct ft_diff_finding){ l[i].kind, l[i].text, status(&l[i]),
			{ mean(a, l[i].n[0]), mean(b, l[i].n[1]) },
			{ mean(a, l[i].reads[0]), mean(b, l[i].reads[1]) },
			{ mean(a, l[i].lost[0]), mean(b, l[i].lost[1]) },
			{ per(a, l[i].lost[0]), per(b, l[i].lost[1]) } };

	/* the conclusion: what it credits is decided here, words.c words it */
	static int credit[MAXL], named[2];
	struct ft_diff_credit cr = { .ch = have_ci ? &ch : NULL, .by_step = by_step,
				     .unit = unit, .findings = f, .credit = credit,
				     .named = named, .median = have_med ? &chm : NULL,
				     .runs = { a->n, b->n },
				     .wall = { a->sum.wall_ns, b->sum.wall_ns } };
	double half = have_ci ? (ch.hi - ch.lo) / 2 : 0;
	if (have_ci) {
		cr.n[0] = by_step ? nsteps[0] : a->units;
		cr.n[1] = by_step ? nsteps[1] : b->units;
		for (int j = 0; j < 2 && by_step; j++)  /* steps of the loop's warm-up, left out */
			for (int i = 0; i < s[j].n; i++)
				cr.warm[j] += s[j].nlen[i] - s[j].nper[i];
		cr.training_only = by_step && a->optimizer == a->n && b->optimizer == b->n;
		/* credit the findings and feeds that moved the same way, by more
		 * than the interval's half-width, largest first */
		if (ch.verdict == FT_CH_FASTER || ch.verdict == FT_CH_SLOWER) {
			for (int i = 0; i < nl; i++) {
				double d = delta(a, b, &l[i]);
				if ((ch.verdict == FT_CH_FASTER ? -d : d) > half)
					credit[cr.ncredit++] = i;
			}
			int best = -1;
			double bd = 0;
			for (int c = 0; c < FT_CAT_N; c++) {
				double d = per(b, b->feed[c]) - per(a, a->feed[c]);
				if (ch.verdict == FT_CH_FASTER)
					d = -d;
				if (d > half && d > bd)
					best = c, bd = d;
			}
			if (best >= 0 && !a->whole && !b->whole) {
				cr.feed = feed_label[best];
				cr.feed_ns[0] = per(a, a->feed[best]);
				cr.feed_ns[1] = per(b, b->feed[best]);
			}
		} else {
			/* nothing to credit: still name what changed that a user
			 * went looking for (a storm gone), said to be within the
			 * interval; at most two, each over NOTABLE_NS per unit */
			for (int i = 0; i < nl && cr.nnamed < 2; i++)
				if (status(&l[i]) != FT_STATUS_SAME &&
				    (per(a, l[i].lost[0]) >= NOTABLE_NS || per(b, l[i].lost[1]) >= NOTABLE_NS))
					named[cr.nnamed++] = i;
		}
	}
	char concl[1024], one[256];
	ft_words_diff_conclusion(&cr, concl, sizeof concl);

	/* the gate */
	int fails = 0;
	struct ft_report *ra[MAXRUNS], *rb[MAXRUNS];
	for (int i = 0; i < a->n; i++)
		ra[i] = &a->r[i];
	for (int i = 0; i < b->n; i++)
		rb[i] = &b->r[i];
	int rc = 0;
	for (int i = 0; i < ng; i++) {
		if (ft_gate_eval(&gates[i], ra, a->n, rb, b->n, have_ci && by_step ? &ch : NULL,
				 have_med ? &chm : NULL) != 0)
			rc = 2;
		fails += gates[i].holds;
	}
	if (rc == 0 && junit && ft_gate_junit(gates, ng, "feedtrace.diff", junit) != 0)
		rc = 2;

	if (rc == 2)
		;
	else if (json) {
		struct ft_diff_pair m[NMETRICS + 4];
		int nm = 0;
		for (size_t i = 0; i < NMETRICS; i++)
			if (metrics[i].name)
				m[nm++] = (struct ft_diff_pair){ metrics[i].key, { 1, 1 },
					{ (double)mean(a, get(&a->sum, &metrics[i])),
					  (double)mean(b, get(&b->sum, &metrics[i])) } };
		m[nm++] = (struct ft_diff_pair){ "steps", { a->sum.steps > 0, b->sum.steps > 0 },
			{ (double)mean(a, a->sum.steps), (double)mean(b, b->sum.steps) } };
		m[nm++] = (struct ft_diff_pair){ "step_mean_ns", { a->sum.steps > 0, b->sum.steps > 0 },
			{ a->sum.steps ? (double)(a->sum.step_ns / a->sum.steps) : 0,
			  b->sum.steps ? (double)(b->sum.step_ns / b->sum.steps) : 0 } };
		m[nm++] = (struct ft_diff_pair){ "step_time_ns", { loop[0] >= 0, loop[1] >= 0 },
			{ loop[0], loop[1] } };
		m[nm++] = (struct ft_diff_pair){ "step_median_ns", { have_med, have_med },
			{ have_med ? chm.before : 0, have_med ? chm.after : 0 } };
		struct ft_diff_figures d = {
			.runs = { a->dir, b->dir }, .nruns = { a->n, b->n },
			.metrics = m, .nmetrics = nm,
			.change = have_ci ? &ch : NULL, .change_of = by_step ? FT_OF_STEP_TIME : FT_OF_WALL_TIME,
			.median = have_med ? &chm : NULL,
			.unit = by_step ? "step" : "run",
			.feeds_window = a->whole || b->whole ? "whole run" : "steps",
			.findings = f, .nfindings = nl,
			.verdict = vrow, .nverdict = nvrow,
			.gates = gates, .ngates = ng, .conclusion = concl,
		};
		for (int c = 0; c < FT_CAT_N; c++)
			d.feeds[c] = (struct ft_diff_pair){ ft_cat_name[c], { 1, 1 },
				{ per(a, a->feed[c]), per(b, b->feed[c]) } };
		d.gpu_idle = gpu_idle_pair(a, b, &d.gpu_idle_share[0], &d.gpu_idle_share[1]);
		ft_diff_json(&d, stdout);
	} else {
		printf("feedtrace diff: before %s%s\n                after  %s%s\n\n",
		       ft_fit(a->dir[0], 50), a->n > 1 ? " ..." : "", ft_fit(b->dir[0], 50),
		       b->n > 1 ? " ..." : "");
		if (a->n > 1 || b->n > 1)
			printf("%d and %d runs: figures are means per run\n\n", a->n, b->n);
		printf("%-22s %13s %13s %13s %8s\n", "metric", "before", "after", "change", "rel");
		row("steps", 0, a->sum.steps > 0, (double)mean(a, a->sum.steps), b->sum.steps > 0,
		    (double)mean(b, b->sum.steps));
		row("time per step", 1, loop[0] >= 0, loop[0], loop[1] >= 0, loop[1]);
		row("median step", 1, have_med, have_med ? chm.before : 0, have_med,
		    have_med ? chm.after : 0);
		for (size_t i = 0; i < NMETRICS; i++)
			if (metrics[i].name)
				row(metrics[i].name, metrics[i].time, 1,
				    (double)mean(a, get(&a->sum, &metrics[i])), 1,
				    (double)mean(b, get(&b->sum, &metrics[i])));
		printf("(times other than the wall time are summed over all threads and processes:\n"
		       " they can exceed it)\n");
		printf("\nfeeds (the feeding threads' time %s%s)\n", unit,
		       a->whole || b->whole ? ", over the whole run" : "");
		for (int c = 0; c < FT_CAT_N; c++)
			row(feed_label[c], 1, 1, per(a, a->feed[c]), 1, per(b, b->feed[c]));
		putchar('\n');
		for (int i = 0; i < nvrow; i++) {
			const struct ft_diff_vrow *x = &vrow[i];
			char t[2][32];
			if (x->way == FT_VF_DIFF_NS && x->ns[0] < 0 && x->ns[1] < 0)
				continue;           /* neither side has it */
			for (int k = 0; k < 2; k++)
				if (x->way == FT_VF_DIFF_STATE)
					snprintf(t[k], sizeof t[k], "%s", x->s[k]);
				else if (x->ns[k] >= 0)
					ft_fmt_ns(t[k], sizeof t[k], (uint64_t)x->ns[k]);
				else
					snprintf(t[k], sizeof t[k], "-");
			printf("%s: %s -> %s\n", x->label, t[0], t[1]);
		}
		gpu_idle_text(a, b);
		int small = 0;
		for (int i = 0; i < nl; i++)
			if (status(&l[i]) != FT_STATUS_SAME) {
				if (per(a, l[i].lost[0]) < LISTED_NS && per(b, l[i].lost[1]) < LISTED_NS) {
					small++;            /* a GIL wait of 100 ns is not news */
					continue;
				}
				ft_words_diff_finding(&f[i], unit, one, sizeof one);
				char line[300];
				snprintf(line, sizeof line, "%s %s", ft_status_name(status(&l[i])), one);
				wrap78(line);
			}
		if (small) {
			char line[160];
			snprintf(line, sizeof line, "(%d more finding%s changed by less than 1 us %s on "
				 "both sides: --json lists them)", small, small > 1 ? "s" : "", unit);
			wrap78(line);
		}
		fputc('\n', stdout);
		wrap78(concl);
		if (ng) {
			fputc('\n', stdout);
			ft_gate_print(gates, ng, stdout);
		}
	}

	if (rc == 0 && out && write_timeline(s, out, &o) != 0)
		rc = 1;
	if (rc == 0 && html) {
		struct ft_diff_side ds[2];
		for (int j = 0; j < 2; j++)
			ds[j] = (struct ft_diff_side){ j ? "after" : "before", s[j].n, &s[j].r[0],
						       s[j].len[0], s[j].nlen[0] };
		if (ft_diff_html(html, ds, concl) != 0)
			rc = 1;
	}
	if (rc == 0 && fails)
		rc = 1;
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < s[j].n; i++) {
			ft_report_free(&s[j].r[i]);
			free(s[j].len[i]);
			free(s[j].per[i]);
		}
	return rc;
}
