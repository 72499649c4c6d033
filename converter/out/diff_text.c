/*
 * diff_text.c: `feedtrace diff`'s text (diff_text.h), from the figures
 * the model of the comparison (diff.c) decided: the metrics, the feeds,
 * the verdict's rows, the findings that changed, the conclusion and the
 * --fail-if results.
 */
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "diff_text.h"
#include "gate_out.h"
#include "words.h"

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

/* a pair of the figures as a row */
static void pair_row(const char *name, const struct ft_diff_pair *p)
{
	row(name, p->time, p->has[0], p->v[0], p->has[1], p->v[1]);
}

static void metrics_text(const struct ft_diff_figures *d)
{
	printf("%-22s %13s %13s %13s %8s\n", "metric", "before", "after", "change", "rel");
	pair_row("steps", &d->step[FT_DIFF_STEPS]);
	pair_row("time per step", &d->step[FT_DIFF_STEP_TIME]);
	pair_row("median step", &d->step[FT_DIFF_STEP_MEDIAN]);
	for (int i = 0; i < d->nmetrics; i++)
		pair_row(d->metrics[i].label, &d->metrics[i]);
	printf("(times other than the wall time are summed over all threads and processes:\n"
	       " they can exceed it)\n");
	printf("\nfeeds (the feeding threads' time %s%s)\n", ft_words_diff_unit(d->by_step),
	       d->whole ? ", over the whole run" : "");
	for (int c = 0; c < FT_CAT_N; c++)
		pair_row(ft_words_feed(c), &d->feeds[c]);
	putchar('\n');
}

static void verdict_text(const struct ft_diff_figures *d)
{
	for (int i = 0; i < d->nverdict; i++) {
		const struct ft_diff_vrow *x = &d->verdict[i];
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
	if (d->gpu_idle >= 0)
		printf("GPU idle (%s): %.0f%% -> %.0f%%\n", d->gpu_idle ? "measured" : "modelled",
		       100 * d->gpu_idle_share[0], 100 * d->gpu_idle_share[1]);
}

/* the findings that changed; those the model did not list, counted */
static void findings_text(const struct ft_diff_figures *d)
{
	const char *unit = ft_words_diff_unit(d->by_step);
	char one[256];
	int small = 0;
	for (int i = 0; i < d->nfindings; i++) {
		const struct ft_diff_finding *f = &d->findings[i];
		if (f->status == FT_STATUS_SAME)
			continue;
		if (!f->listed) {
			small++;            /* a GIL wait of 100 ns is not news */
			continue;
		}
		ft_words_diff_finding(f, unit, one, sizeof one);
		char line[300];
		snprintf(line, sizeof line, "%s %s", ft_status_name(f->status), one);
		ft_wrap(stdout, line, 0);
	}
	if (small) {
		char line[160];
		snprintf(line, sizeof line, "(%d more finding%s changed by less than 1 us %s on "
			 "both sides: --json lists them)", small, small > 1 ? "s" : "", unit);
		ft_wrap(stdout, line, 0);
	}
}

void ft_diff_text(const struct ft_diff_figures *d)
{
	const char *const *a = d->runs[0], *const *b = d->runs[1];
	printf("feedtrace diff: before %s%s\n                after  %s%s\n\n",
	       ft_fit(a[0], 50), d->nruns[0] > 1 ? " ..." : "", ft_fit(b[0], 50),
	       d->nruns[1] > 1 ? " ..." : "");
	if (d->nruns[0] > 1 || d->nruns[1] > 1)
		printf("%d and %d runs: figures are means per run\n\n", d->nruns[0], d->nruns[1]);
	metrics_text(d);
	verdict_text(d);
	findings_text(d);
	fputc('\n', stdout);
	ft_wrap(stdout, d->conclusion, 0);
	if (d->ngates) {
		fputc('\n', stdout);
		ft_gate_print(d->gates, d->ngates, stdout);
	}
}
