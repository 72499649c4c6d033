/*
 * gate.h: `--fail-if` conditions for `report` and `diff` (gate.c), the
 * decision: parsed from "METRIC OP VALUE[%]", METRIC a name of `report
 * --json`'s "metrics" (metrics.def's keys, stepfigs.def's numbers) or
 * step_time, step_median, and evaluated against runs' metrics. The
 * results and the errors are worded and written by gate_out.c
 * (docs/ANALYSES.md, "CI gate").
 */
#ifndef FT_GATE_H
#define FT_GATE_H

#include "report_model.h"
#include "stats.h"

#define FT_GATE_MAX 32

/* what is wrong with a condition */
enum ft_gate_err {
	FT_GATE_OK,
	FT_GATE_SYNTAX,           /* not METRIC OP VALUE */
	FT_GATE_VALUE,            /* VALUE is no finite number */
	FT_GATE_UNEXPECTED,       /* text after VALUE (rest) */
	FT_GATE_NO_METRIC,        /* METRIC is no number of the metrics */
	FT_GATE_NEEDS_BEFORE,     /* a relative VALUE without a before (report) */
};

struct ft_gate {
	const char *text;         /* as given */
	char metric[64];
	int op;                   /* '>', 'G' (>=), '<', 'L' (<=) */
	double value;
	int relative;             /* VALUE was "+5%": a change, as a fraction */
	const char *rest;         /* FT_GATE_UNEXPECTED: the text after VALUE, in text */
	/* the result */
	int evaluated, holds;
	double seen, seen_lo, seen_hi;  /* the value compared; its interval (diff) */
	int interval;
};

/* g from text (kept: g->text points to it) */
enum ft_gate_err ft_gate_parse(struct ft_gate *g, const char *text);
/* the mean over runs of a metric as `report --json` writes it (its
 * "metrics"; a rate rounded as written): 0, 1 when it is null in some run
 * (no steps), -1 when no number has that name */
int ft_gate_metric(struct ft_report *const *runs, int n, const char *name, double *out);
/* evaluates g on runs a (before, NULL for report) and b; mean, median:
 * the changes of the time per step and of the median step when known
 * (diff), which step_time and step_median then compare. Not evaluated
 * (g->evaluated 0) when the metric is null in some run */
enum ft_gate_err ft_gate_eval(struct ft_gate *g, struct ft_report *const *a, int na,
			      struct ft_report *const *b, int nb, const struct ft_change *mean,
			      const struct ft_change *median);

#endif
