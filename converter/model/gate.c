/*
 * gate.c: `--fail-if 'METRIC OP VALUE'` for `report` and `diff`, decided:
 * METRIC is a key of the "metrics" object of `report --json` whose value
 * is a number (metrics.def's, stepfigs.def's: the names the JSON writer
 * uses), step_time (the time per step: in diff, over the loop; in report,
 * the mean step) or step_median. Its value is the one that JSON holds (a
 * rate rounded to the decimals it is written with). VALUE is absolute
 * ("0", "250e6") or, for diff, a relative change ("+5%"). A condition on
 * the step time's change holds only when its whole 95% interval is past
 * the threshold. Errors are returned, worded by gate_out.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "stepfigs.h"

static const struct { const char *text; int op; } ops[] = {
	{ ">=", 'G' }, { "<=", 'L' }, { ">", '>' }, { "<", '<' },
};

enum ft_gate_err ft_gate_parse(struct ft_gate *g, const char *text)
{
	memset(g, 0, sizeof *g);
	g->text = text;
	const char *s = text + strspn(text, " ");
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz_0123456789");
	const char *p = s + n + strspn(s + n, " ");
	size_t k;
	for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
		if (!strncmp(p, ops[k].text, strlen(ops[k].text)))
			break;
	if (!n || n >= sizeof g->metric || k == sizeof ops / sizeof ops[0])
		return FT_GATE_SYNTAX;
	memcpy(g->metric, s, n);
	g->op = ops[k].op;
	p += strlen(ops[k].text);
	p += strspn(p, " ");
	char *end;
	g->value = strtod(p, &end);
	if (end == p || !isfinite(g->value))
		return FT_GATE_VALUE;
	if (*end == '%') {
		g->relative = 1;
		g->value /= 100;
		end++;
	}
	if (end[strspn(end, " ")]) {
		g->rest = end;
		return FT_GATE_UNEXPECTED;
	}
	return FT_GATE_OK;
}

/* metrics.def's numbers: their keys and where struct ft_metrics holds them */
static const struct { const char *key; size_t off; } counts[] = {
#define METRIC(field, key, label, ns) { key, offsetof(struct ft_metrics, field) },
#include "metrics.def"
#undef METRIC
};

/* x as the JSON holds it when written with places decimals */
static double as_written(double x, int places)
{
	char b[64];
	snprintf(b, sizeof b, "%.*f", places, x);
	return strtod(b, NULL);
}

/* the value of key in m as `report --json` writes it: 0, 1 when it is
 * null (a step figure without steps), -1 when it is no number there */
static int metric_of(const struct ft_metrics *m, const char *key, double *out)
{
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		if (!strcmp(key, counts[i].key)) {
			uint64_t v;
			memcpy(&v, (const char *)m + counts[i].off, sizeof v);
			*out = (double)v;
			return 0;
		}
	for (int k = 0; k < FT_SF_N; k++) {
		if (strcmp(key, ft_stepfigs[k].key))
			continue;
		if (!m->steps)
			return 1;
		struct ft_stepval v = ft_stepfig(m, (enum ft_stepfig)k);
		switch (ft_stepfigs[k].type) {
		case FT_SF_COUNT: *out = (double)v.count; return 0;
		case FT_SF_RATE: *out = as_written(v.rate, FT_STEP_PLACES); return 0;
		case FT_SF_TEXT: return -1;
		}
	}
	return -1;
}

/* the step time's names a condition may use: the metric each reads, and
 * the change diff compares it by (the time per step's or the median
 * step's); any other name is a metric of its own */
enum { BY_MEAN = 1, BY_MEDIAN };
static const struct { const char *name, *key; int by; } step_names[] = {
	{ "step_time", "step_mean_ns", BY_MEAN },
	{ "step_mean_ns", "step_mean_ns", BY_MEAN },
	{ "step_median", "step_median_ns", BY_MEDIAN },
	{ "step_median_ns", "step_median_ns", BY_MEDIAN },
};

/* name's row of step_names, or -1 */
static int step_name(const char *name)
{
	for (size_t i = 0; i < sizeof step_names / sizeof step_names[0]; i++)
		if (!strcmp(name, step_names[i].name))
			return (int)i;
	return -1;
}

/* the change a condition on the step time compares (diff); NULL for
 * another metric */
static const struct ft_change *step_change(const char *name, const struct ft_change *mean,
					   const struct ft_change *median)
{
	int i = step_name(name);
	return i < 0 ? NULL : step_names[i].by == BY_MEAN ? mean : median;
}

int ft_gate_metric(struct ft_report *const *runs, int n, const char *name, double *out)
{
	int i = step_name(name);
	const char *key = i >= 0 ? step_names[i].key : name;
	double sum = 0;
	int null = 0;
	for (int i = 0; i < n; i++) {
		double v = 0;
		int r = metric_of(&runs[i]->total, key, &v);
		if (r < 0)
			return -1;
		if (r == 0)
			sum += v;
		null |= r;
	}
	*out = n ? sum / n : 0;
	return null;
}

static int past(int op, double x, double v)
{
	return op == '>' ? x > v : op == 'G' ? x >= v : op == '<' ? x < v : x <= v;
}

enum ft_gate_err ft_gate_eval(struct ft_gate *g, struct ft_report *const *a, int na,
			      struct ft_report *const *b, int nb, const struct ft_change *mean,
			      const struct ft_change *median)
{
	const struct ft_change *ch = step_change(g->metric, mean, median);
	double x = 0, y = 0;
	int ry = ft_gate_metric(b, nb, g->metric, &y);
	int rx = a && g->relative ? ft_gate_metric(a, na, g->metric, &x) : 0;
	if (ry < 0 || rx < 0)
		return FT_GATE_NO_METRIC;
	if (g->relative && !a)
		return FT_GATE_NEEDS_BEFORE;
	if (ry || rx)
		return FT_GATE_OK;        /* null in some run (no steps): not evaluated */
	g->evaluated = 1;
	if (!g->relative) {
		g->seen = ch ? ch->after : y;
		g->holds = past(g->op, y, g->value);
		return FT_GATE_OK;
	}
	if (ch && ch->before > 0) {
		g->interval = 1;
		g->seen = (ch->after - ch->before) / ch->before;
		g->seen_lo = ch->lo / ch->before;
		g->seen_hi = ch->hi / ch->before;
		/* the whole interval past the threshold */
		g->holds = past(g->op, g->op == '>' || g->op == 'G' ? g->seen_lo : g->seen_hi,
				g->value);
		return FT_GATE_OK;
	}
	g->seen = x ? (y - x) / x : y > 0 ? INFINITY : 0;
	g->holds = past(g->op, g->seen, g->value);
	return FT_GATE_OK;
}
