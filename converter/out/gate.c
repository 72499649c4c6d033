/*
 * gate.c: `--fail-if 'METRIC OP VALUE'` for `report` and `diff`. METRIC is
 * a name of the "metrics" object of `report --json` (read from that JSON,
 * so the names have one definition), step_time (the time per step: in
 * diff, over the loop; in report, the mean step) or step_median.
 * VALUE is absolute ("0", "250e6") or, for diff, a relative change ("+5%").
 * A condition on the step time's change holds only when its whole 95%
 * interval is past the threshold. Results print as lines, JSON or JUnit XML.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util.h"
#include "gate.h"
#include "json.h"

static const struct { const char *text; int op; } ops[] = {
	{ ">=", 'G' }, { "<=", 'L' }, { ">", '>' }, { "<", '<' },
};

int ft_gate_parse(struct ft_gate *g, const char *text)
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
	if (!n || n >= sizeof g->metric || k == sizeof ops / sizeof ops[0]) {
		fprintf(stderr, "feedtrace: --fail-if '%s': expected METRIC OP VALUE "
			"(OP one of > >= < <=), e.g. 'step_time > +5%%'\n", text);
		return -1;
	}
	memcpy(g->metric, s, n);
	g->op = ops[k].op;
	p += strlen(ops[k].text);
	p += strspn(p, " ");
	char *end;
	g->value = strtod(p, &end);
	if (end == p || !isfinite(g->value)) {
		fprintf(stderr, "feedtrace: --fail-if '%s': bad value\n", text);
		return -1;
	}
	if (*end == '%') {
		g->relative = 1;
		g->value /= 100;
		end++;
	}
	if (end[strspn(end, " ")]) {
		fprintf(stderr, "feedtrace: --fail-if '%s': unexpected '%s'\n", text, end);
		return -1;
	}
	return 0;
}

/* the report's "metrics" object, as `report --json` writes it */
static json_object *metrics_of(struct ft_report *r, json_object **root)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		ft_oom();
	ft_report_json(r, f);
	fclose(f);
	*root = json_tokener_parse(buf);
	free(buf);
	json_object *m = NULL;
	if (*root)
		json_object_object_get_ex(*root, "metrics", &m);
	return m;
}

/* the step time's names a condition may use: the report's JSON key each
 * reads, and the change diff compares it by (the time per step's or the
 * median step's); any other name is a metrics key of its own */
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
		json_object *root, *v = NULL, *m = metrics_of(runs[i], &root);
		int found = m && json_object_object_get_ex(m, key, &v);
		int num = v && (json_object_is_type(v, json_type_int) ||
				json_object_is_type(v, json_type_double));
		if (num)
			sum += json_object_get_double(v);
		json_object_put(root);
		if (!found || (v && !num))
			return -1;
		null |= !v;
	}
	*out = n ? sum / n : 0;
	return null;
}

static int past(int op, double x, double v)
{
	return op == '>' ? x > v : op == 'G' ? x >= v : op == '<' ? x < v : x <= v;
}

int ft_gate_eval(struct ft_gate *g, struct ft_report *const *a, int na,
		 struct ft_report *const *b, int nb, const struct ft_change *mean,
		 const struct ft_change *median)
{
	const struct ft_change *ch = step_change(g->metric, mean, median);
	double x = 0, y = 0;
	int ry = ft_gate_metric(b, nb, g->metric, &y);
	int rx = a && g->relative ? ft_gate_metric(a, na, g->metric, &x) : 0;
	if (ry < 0 || rx < 0) {
		fprintf(stderr, "feedtrace: --fail-if '%s': no metric '%s' (the names of "
			"`feedtrace report --json`'s \"metrics\", step_time or step_median)\n", g->text, g->metric);
		return -1;
	}
	if (g->relative && !a) {
		fprintf(stderr, "feedtrace: --fail-if '%s': a relative threshold needs a before "
			"(feedtrace diff)\n", g->text);
		return -1;
	}
	if (ry || rx)
		return 0;                 /* null in some run (no steps): not evaluated */
	g->evaluated = 1;
	if (!g->relative) {
		g->seen = ch ? ch->after : y;
		g->holds = past(g->op, y, g->value);
		return 0;
	}
	if (ch && ch->before > 0) {
		g->interval = 1;
		g->seen = (ch->after - ch->before) / ch->before;
		g->seen_lo = ch->lo / ch->before;
		g->seen_hi = ch->hi / ch->before;
		/* the whole interval past the threshold */
		g->holds = past(g->op, g->op == '>' || g->op == 'G' ? g->seen_lo : g->seen_hi,
				g->value);
		return 0;
	}
	g->seen = x ? (y - x) / x : y > 0 ? INFINITY : 0;
	g->holds = past(g->op, g->seen, g->value);
	return 0;
}

static void seen_text(const struct ft_gate *g, char *b, size_t cap)
{
	if (!g->evaluated)
		snprintf(b, cap, "not evaluated: %s is null (no steps)", g->metric);
	else if (g->interval)
		snprintf(b, cap, "%+.1f%%, 95%% interval %+.1f%% to %+.1f%%", 100 * g->seen,
			 100 * g->seen_lo, 100 * g->seen_hi);
	else if (g->relative)
		snprintf(b, cap, "%+.1f%%", 100 * g->seen);
	else
		snprintf(b, cap, "%.6g", g->seen);
}

void ft_gate_print(const struct ft_gate *g, int n, FILE *out)
{
	for (int i = 0; i < n; i++) {
		char b[128];
		seen_text(&g[i], b, sizeof b);
		fprintf(out, "%-4s %s (%s)\n", g[i].holds ? "FAIL" : g[i].evaluated ? "ok" : "skip",
			g[i].text, b);
	}
}

void ft_gate_json(const struct ft_gate *g, int n, struct ft_json *j, const char *key)
{
	ft_json_arr(j, key);
	for (int i = 0; i < n; i++) {
		ft_json_obj(j, NULL);
		ft_json_str(j, "condition", g[i].text);
		ft_json_str(j, "metric", g[i].metric);
		ft_json_bool(j, "relative", g[i].relative);
		ft_json_bool(j, "evaluated", g[i].evaluated);
		ft_json_bool(j, "holds", g[i].holds);
		if (g[i].evaluated && isfinite(g[i].seen))
			ft_json_g(j, "value", g[i].seen);
		else
			ft_json_null(j, "value");
		if (g[i].interval) {
			ft_json_arr(j, "interval");
			ft_json_g(j, NULL, g[i].seen_lo);
			ft_json_g(j, NULL, g[i].seen_hi);
			ft_json_end(j);
		} else {
			ft_json_null(j, "interval");
		}
		ft_json_end(j);
	}
	ft_json_end(j);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
				fputc(*s, f);
		}
}

int ft_gate_junit(const struct ft_gate *g, int n, const char *suite, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	int fails = 0, skips = 0;
	for (int i = 0; i < n; i++) {
		fails += g[i].holds;
		skips += !g[i].evaluated;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
		"<testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\" errors=\"0\">\n",
		suite, n, fails, skips);
	for (int i = 0; i < n; i++) {
		char b[128];
		seen_text(&g[i], b, sizeof b);
		fprintf(f, "  <testcase classname=\"%s\" name=\"", suite);
		xml_text(f, g[i].text);
		fputs("\">", f);
		if (g[i].holds || !g[i].evaluated) {
			fputs(g[i].holds ? "<failure message=\"" : "<skipped message=\"", f);
			xml_text(f, b);
			fputs("\"/>", f);
		}
		fputs("</testcase>\n", f);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
	if (fclose(f) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}
