/*
 * gate_out.c: `--fail-if` conditions (decided by gate.c) worded and
 * written: the line of each error, the results as lines, as JSON or as a
 * JUnit XML file for CI systems.
 */
#include <math.h>

#include "gate.h"
#include "gate_out.h"
#include "json.h"

int ft_gate_error(const struct ft_gate *g, enum ft_gate_err e, FILE *err)
{
	const char *t = g->text;
	switch (e) {
	case FT_GATE_OK:
		return 0;
	case FT_GATE_SYNTAX:
		fprintf(err, "feedtrace: --fail-if '%s': expected METRIC OP VALUE "
			"(OP one of > >= < <=), e.g. 'step_time > +5%%'\n", t);
		break;
	case FT_GATE_VALUE:
		fprintf(err, "feedtrace: --fail-if '%s': bad value\n", t);
		break;
	case FT_GATE_UNEXPECTED:
		fprintf(err, "feedtrace: --fail-if '%s': unexpected '%s'\n", t, g->rest);
		break;
	case FT_GATE_NO_METRIC:
		fprintf(err, "feedtrace: --fail-if '%s': no metric '%s' (the names of "
			"`feedtrace report --json`'s \"metrics\", step_time or step_median)\n", t,
			g->metric);
		break;
	case FT_GATE_NEEDS_BEFORE:
		fprintf(err, "feedtrace: --fail-if '%s': a relative threshold needs a before "
			"(feedtrace diff)\n", t);
		break;
	}
	return -1;
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
