/*
 * gate.h: `--fail-if` conditions (gate.c) for `report` and `diff`: parsed
 * from "METRIC OP VALUE[%]", METRIC a name of `report --json`'s "metrics"
 * (or step_time, step_median), evaluated against runs' metrics, and written as a JUnit
 * XML file for CI systems (docs/ANALYSES.md, "CI gate").
 */
#ifndef FT_GATE_H
#define FT_GATE_H

#include <stdio.h>

#include "report.h"
#include "stats.h"

#define FT_GATE_MAX 32

struct ft_gate {
	const char *text;         /* as given */
	char metric[64];
	int op;                   /* '>', 'G' (>=), '<', 'L' (<=) */
	double value;
	int relative;             /* VALUE was "+5%": a change, as a fraction */
	/* the result */
	int evaluated, holds;
	double seen, seen_lo, seen_hi;  /* the value compared; its interval (diff) */
	int interval;
};

/* 0, or -1 with a message on stderr (exit 2) */
int ft_gate_parse(struct ft_gate *g, const char *text);
/* the mean over runs of a metric of `report --json` (its "metrics"):
 * 0, 1 when it is null in some run, -1 when no metric has that name */
int ft_gate_metric(struct ft_report *const *runs, int n, const char *name, double *out);
/* evaluates g on runs a (before, NULL for report) and b; mean, median:
 * the changes of the time per step and of the median step when known
 * (diff), which step_time and step_median then compare. -1: unknown
 * metric, or a relative condition without a before (message on stderr) */
int ft_gate_eval(struct ft_gate *g, struct ft_report *const *a, int na,
		 struct ft_report *const *b, int nb, const struct ft_change *mean,
		 const struct ft_change *median);
/* one line per condition on out ("FAIL ...", "ok ...") */
void ft_gate_print(const struct ft_gate *g, int n, FILE *out);
/* 0, or -1 (message on stderr) */
int ft_gate_junit(const struct ft_gate *g, int n, const char *suite, const char *path);
struct ft_json;
/* the conditions under key, as a JSON array */
void ft_gate_json(const struct ft_gate *g, int n, struct ft_json *j, const char *key);

#endif
