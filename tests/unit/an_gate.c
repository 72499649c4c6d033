/*
 * tests/unit/an_gate.c: the --fail-if decision (converter/model/gate.c,
 * docs/ANALYSES.md "CI gate") on runs whose metrics are set by hand: every
 * metrics.def key read from its field, the step figures as report --json
 * writes them (a rate to 4 decimals, the mean step in whole ns), null
 * without steps (not evaluated), steps_from no number, each error, the
 * mean over runs and a relative change against a before; and the words
 * gate_out.c gives a result and an error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an.h"
#include "gate.h"
#include "gate_out.h"
#include "stepfigs.h"

static struct ft_report runs[4];

/* a double compared exactly, both shown to 17 digits when they differ */
#define DEQ(got, want) do { char dg_[40], dw_[40]; \
	snprintf(dg_, sizeof dg_, "%.17g", (double)(got)); \
	snprintf(dw_, sizeof dw_, "%.17g", (double)(want)); \
	STREQ(dg_, dw_); } while (0)

/* m with 3 steps: 1000 ns in all, median 300; 10 launches, 2 hidden
 * syncs and 1000 reads in them */
static void three_steps(struct ft_metrics *m)
{
	m->steps = 3;
	m->step_ns = 1000;
	m->step_median_ns = 300;
	m->step_launches = 10;
	m->step_hidden = 2;
	m->step_reads = 1000;
}

/* name's value in the one run r: ft_gate_metric's return and *v */
static int metric1(struct ft_report *r, const char *name, double *v)
{
	*v = -1;
	return ft_gate_metric(&r, 1, name, v);
}

/* cond parsed and evaluated on run r alone (report) */
static enum ft_gate_err report_eval(struct ft_gate *g, struct ft_report *r, const char *cond)
{
	enum ft_gate_err e = ft_gate_parse(g, cond);
	EQ(e, FT_GATE_OK);
	return ft_gate_eval(g, NULL, 0, &r, 1, NULL, NULL);
}

/* what f wrote, as a string to free */
static char *written(FILE *f, char **buf)
{
	fclose(f);
	return *buf;
}

static void counts_by_their_keys(void)
{
	struct ft_report *r = &runs[0];
	memset(r, 0, sizeof *r);
	uint64_t k = 1;
#define METRIC(field, key, label, ns) r->total.field = 1000 * k++ + 7;
#include "metrics.def"
#undef METRIC
	k = 1;
	double v;
#define METRIC(field, key, label, ns) \
	EQ(metric1(r, key, &v), 0); DEQ(v, 1000 * k++ + 7);
#include "metrics.def"
#undef METRIC
	/* a field's name is not its key */
	EQ(metric1(r, "gaps", &v), -1);
	EQ(metric1(r, "launch_gaps", &v), 0);
	DEQ(v, r->total.gaps);
}

static void step_figures_as_written(void)
{
	struct ft_report *r = &runs[0];
	memset(r, 0, sizeof *r);
	three_steps(&r->total);
	double v;
	static const struct { const char *name; double want; } figs[] = {
		{ "steps", 3 }, { "step_ns", 1000 },
		{ "step_mean_ns", 333 }, { "step_time", 333 },      /* 1000 / 3 in whole ns */
		{ "step_median_ns", 300 }, { "step_median", 300 },
		{ "launches_per_step", 3.3333 }, { "hidden_syncs_per_step", 0.6667 },
		{ "reads_per_step", 333.3333 },
	};
	for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
		EQ(metric1(r, figs[i].name, &v), 0);
		DEQ(v, figs[i].want);
	}
	/* the figure compared is the one written, not 10 / 3 */
	struct ft_gate g;
	EQ(report_eval(&g, r, "launches_per_step > 3.33331"), FT_GATE_OK);
	EQ(g.evaluated, 1);
	EQ(g.holds, 0);
	DEQ(g.seen, 3.3333);
	EQ(report_eval(&g, r, "launches_per_step >= 3.3333"), FT_GATE_OK);
	EQ(g.holds, 1);
	EQ(report_eval(&g, r, "hidden_syncs_per_step > 0.66669"), FT_GATE_OK);
	EQ(g.holds, 1);
	EQ(report_eval(&g, r, "reads_per_step < 333.33331"), FT_GATE_OK);
	EQ(g.holds, 1);
	EQ(report_eval(&g, r, "step_time <= 332"), FT_GATE_OK);
	EQ(g.holds, 0);
	DEQ(g.seen, 333);
	/* a name, not a number */
	EQ(metric1(r, "steps_from", &v), -1);
	EQ(report_eval(&g, r, "steps_from > 0"), FT_GATE_NO_METRIC);
	/* every figure but steps_from is a number of the table */
	int numbers = 0;
	for (int k = 0; k < FT_SF_N; k++)
		numbers += metric1(r, ft_stepfigs[k].key, &v) == 0;
	EQ(numbers, FT_SF_N - 1);
}

static void null_without_steps(void)
{
	struct ft_report *r = &runs[0];
	memset(r, 0, sizeof *r);
	r->total.step_launches = 5;             /* no steps: still null */
	double v;
	for (int k = 0; k < FT_SF_N; k++)
		EQ(metric1(r, ft_stepfigs[k].key, &v), 1);
	EQ(metric1(r, "step_time", &v), 1);
	EQ(metric1(r, "step_median", &v), 1);
	struct ft_gate g[2];
	EQ(report_eval(&g[0], r, "reads_per_step >= 160"), FT_GATE_OK);
	EQ(g[0].evaluated, 0);
	EQ(g[0].holds, 0);
	EQ(report_eval(&g[1], r, "steps_from > 1"), FT_GATE_OK);
	EQ(g[1].evaluated, 0);
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ft_gate_print(g, 2, f);
	STREQ(written(f, &buf),
	      "skip reads_per_step >= 160 (not evaluated: reads_per_step is null (no steps))\n"
	      "skip steps_from > 1 (not evaluated: steps_from is null (no steps))\n");
	free(buf);
}

/* e's line about g, as report and diff print it */
static void error_says(const struct ft_gate *g, enum ft_gate_err e, const char *want)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	EQ(ft_gate_error(g, e, f), e == FT_GATE_OK ? 0 : -1);
	STREQ(written(f, &buf), want);
	free(buf);
}

static void errors(void)
{
	struct ft_gate g;
	EQ(ft_gate_parse(&g, "bad"), FT_GATE_SYNTAX);
	error_says(&g, FT_GATE_SYNTAX, "feedtrace: --fail-if 'bad': expected METRIC OP VALUE "
		   "(OP one of > >= < <=), e.g. 'step_time > +5%'\n");
	EQ(ft_gate_parse(&g, "storms >> 1"), FT_GATE_VALUE);
	EQ(ft_gate_parse(&g, "storms > inf"), FT_GATE_VALUE);
	error_says(&g, FT_GATE_VALUE, "feedtrace: --fail-if 'storms > inf': bad value\n");
	EQ(ft_gate_parse(&g, "storms > 3 %x "), FT_GATE_UNEXPECTED);
	error_says(&g, FT_GATE_UNEXPECTED, "feedtrace: --fail-if 'storms > 3 %x ': unexpected ' %x '\n");
	EQ(ft_gate_parse(&g, "a234567890123456789012345678901234567890123456789012345678901234 > 1"),
	   FT_GATE_SYNTAX);
	EQ(ft_gate_parse(&g, "  storms   >=  -5% "), FT_GATE_OK);
	STREQ(g.metric, "storms");
	EQ(g.op, 'G');
	EQ(g.relative, 1);
	DEQ(g.value, -0.05);
	error_says(&g, FT_GATE_OK, "");

	struct ft_report *r = &runs[0];
	memset(r, 0, sizeof *r);
	EQ(report_eval(&g, r, "nosuch > 1"), FT_GATE_NO_METRIC);
	error_says(&g, FT_GATE_NO_METRIC, "feedtrace: --fail-if 'nosuch > 1': no metric 'nosuch' "
		   "(the names of `feedtrace report --json`'s \"metrics\", step_time or step_median)\n");
	/* an unknown name is said before a missing before */
	EQ(report_eval(&g, r, "nosuch > +5%"), FT_GATE_NO_METRIC);
	EQ(report_eval(&g, r, "storms > +5%"), FT_GATE_NEEDS_BEFORE);
	error_says(&g, FT_GATE_NEEDS_BEFORE, "feedtrace: --fail-if 'storms > +5%': a relative "
		   "threshold needs a before (feedtrace diff)\n");
}

static void before_and_after(void)
{
	memset(runs, 0, sizeof runs);
	struct ft_report *a[2] = { &runs[0], &runs[1] }, *b[2] = { &runs[2], &runs[3] };
	runs[0].total.storms = 0, runs[1].total.storms = 0;
	runs[2].total.storms = 1, runs[3].total.storms = 4;
	runs[0].total.reads = 100, runs[1].total.reads = 300;
	runs[2].total.reads = 150, runs[3].total.reads = 150;
	struct ft_gate g;
	/* absolute: the after side's mean */
	EQ(ft_gate_parse(&g, "storms > 2"), FT_GATE_OK);
	EQ(ft_gate_eval(&g, a, 2, b, 2, NULL, NULL), FT_GATE_OK);
	EQ(g.holds, 1);
	DEQ(g.seen, 2.5);
	/* relative: the means' change; from 0 to more, +infinity */
	EQ(ft_gate_parse(&g, "reads < -25%"), FT_GATE_OK);
	EQ(ft_gate_eval(&g, a, 2, b, 2, NULL, NULL), FT_GATE_OK);
	EQ(g.holds, 0);
	DEQ(g.seen, -0.25);
	EQ(ft_gate_parse(&g, "storms > +1000%"), FT_GATE_OK);
	EQ(ft_gate_eval(&g, a, 2, b, 2, NULL, NULL), FT_GATE_OK);
	EQ(g.holds, 1);
	EQ(isinf(g.seen), 1);
	/* steps in one run of a side only: not evaluated */
	three_steps(&runs[2].total);
	EQ(ft_gate_parse(&g, "reads_per_step > 0"), FT_GATE_OK);
	EQ(ft_gate_eval(&g, a, 2, b, 2, NULL, NULL), FT_GATE_OK);
	EQ(g.evaluated, 0);
	three_steps(&runs[3].total);
	runs[3].total.step_reads = 1001;
	EQ(ft_gate_eval(&g, a, 2, b, 2, NULL, NULL), FT_GATE_OK);
	EQ(g.evaluated, 1);
	DEQ(g.seen, (333.3333 + 333.6667) / 2);
	/* the step time's change: the whole interval past the threshold */
	for (int i = 0; i < 2; i++)
		three_steps(&a[i]->total);
	struct ft_change mean = { 100, 90, -20, -4, FT_CH_UNRESOLVED }, median = { 100, 50, -60, -40, 0 };
	EQ(ft_gate_parse(&g, "step_time < -5%"), FT_GATE_OK);
	EQ(ft_gate_eval(&g, a, 2, b, 2, &mean, &median), FT_GATE_OK);
	EQ(g.interval, 1);
	EQ(g.holds, 0);
	DEQ(g.seen, -0.1);
	DEQ(g.seen_lo, -0.2);
	DEQ(g.seen_hi, -0.04);
	EQ(ft_gate_parse(&g, "step_median < -35%"), FT_GATE_OK);
	EQ(ft_gate_eval(&g, a, 2, b, 2, &mean, &median), FT_GATE_OK);
	EQ(g.holds, 1);
	DEQ(g.seen, -0.5);
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ft_gate_print(&g, 1, f);
	STREQ(written(f, &buf), "FAIL step_median < -35% (-50.0%, 95% interval -60.0% to -40.0%)\n");
	free(buf);
}

int main(void)
{
	counts_by_their_keys();
	step_figures_as_written();
	null_without_steps();
	errors();
	before_and_after();
	return an_done("an_gate");
}
