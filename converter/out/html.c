/*
 * html.c: `feedtrace report DIR --html FILE`: the report as one
 * self-contained page to attach to a ticket or pull request: the verdict,
 * the feeding threads' time as a stacked bar, the producers' time (workers
 * and loader threads), the step times as a chart, the problems with their
 * suggestions, the call sites. `feedtrace diff --html FILE`: both runs
 * side by side (verdicts, feeding threads' time), the diff's conclusion,
 * both runs' step times on one chart; same helpers, same page style.
 * Inline CSS and SVG drawn here: no script, no font, no request to any
 * network (docs/REPORT-SCHEMA.md, "--html").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "problems.h"
#include "report.h"
#include "stats.h"
#include "words.h"

static void esc(FILE *o, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '&': fputs("&amp;", o); break;
		case '"': fputs("&quot;", o); break;
		default: fputc(*s, o);
		}
}

/* one colour per category of a thread's time (enum ft_cat order) */
static const char *const cat_colour[FT_CAT_N] = {
	"#4e79a7", "#59a14f", "#e15759", "#f28e2b", "#b07aa1", "#edc948", "#76b7b2", "#bab0ac",
	"#9c755f",
};

/* a horizontal bar of parts (ns) summing to total, width x 22, with a legend */
static void stacked_bar(FILE *o, const char *id, int width, const char *const *label,
			const char *const *colour, const uint64_t *part, int n, uint64_t total)
{
	fprintf(o, "<svg id=\"%s\" class=\"bar\" width=\"%d\" height=\"22\" "
		"xmlns=\"http://www.w3.org/2000/svg\">", id, width);
	double x = 0;
	for (int k = 0; k < n; k++) {
		double w = total ? (double)width * (double)part[k] / (double)total : 0;
		if (w <= 0)
			continue;
		fprintf(o, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"22\" fill=\"%s\">"
			"<title>", x, w, colour[k]);
		esc(o, label[k]);
		fprintf(o, " %.1f%%</title></rect>", 100.0 * (double)part[k] / (double)total);
		x += w;
	}
	fputs("</svg><div class=\"legend\">", o);
	for (int k = 0; k < n; k++)
		if (part[k] && total) {
			fprintf(o, "<span><i style=\"background:%s\"></i>", colour[k]);
			esc(o, label[k]);
			fprintf(o, " %.1f%%</span> ", 100.0 * (double)part[k] / (double)total);
		}
	fputs("</div>\n", o);
}

/* step times, in order, as lines over one 640 x 200 plot */
static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

struct series {
	const uint64_t *len;
	size_t n;
	const char *colour, *cls, *label;    /* label: in the legend, NULL: none */
};

/* the scale: the 99th percentile + 20%, so that a warm-up step does not
 * flatten the rest; the highest of the series' */
static uint64_t chart_max(const uint64_t *len, size_t n)
{
	uint64_t *sorted = malloc(n * sizeof *sorted + 1);
	if (!sorted)
		return 0;
	memcpy(sorted, len, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, cmp_u64);
	uint64_t max = sorted[n - 1 - n / 100] + sorted[n - 1 - n / 100] / 5 + 1;
	free(sorted);
	return max;
}

static void step_chart(FILE *o, const struct series *sv, int ns)
{
	uint64_t max = 0;
	size_t n = 0, over = 0;
	for (int k = 0; k < ns; k++) {
		if (!sv[k].n)
			continue;
		uint64_t m = chart_max(sv[k].len, sv[k].n);
		if (!m)
			return;
		max = m > max ? m : max;
		n = sv[k].n > n ? sv[k].n : n;
	}
	if (!n)
		return;
	/* longer steps are drawn at the top, counted */
	for (int k = 0; k < ns; k++)
		for (size_t i = 0; i < sv[k].n; i++)
			over += sv[k].len[i] > max;
	if (over)
		fprintf(o, "<p>%zu step%s above the scale, drawn at its top.</p>\n", over,
			over == 1 ? "" : "s");
	char m[32];
	ft_fmt_ns(m, sizeof m, max);
	fprintf(o, "<svg id=\"steps\" width=\"680\" height=\"230\" "
		"xmlns=\"http://www.w3.org/2000/svg\">"
		"<line x1=\"40\" y1=\"200\" x2=\"680\" y2=\"200\" stroke=\"#888\"/>"
		"<line x1=\"40\" y1=\"0\" x2=\"40\" y2=\"200\" stroke=\"#888\"/>"
		"<text x=\"0\" y=\"12\" font-size=\"11\">%s</text>"
		"<text x=\"0\" y=\"200\" font-size=\"11\">0</text>"
		"<text x=\"300\" y=\"222\" font-size=\"11\">step (%zu)</text>", m, n);
	for (int k = 0; k < ns; k++) {
		const struct series *v = &sv[k];
		fprintf(o, "<polyline class=\"%s-line\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
			"points=\"", v->cls, v->colour);
		for (size_t i = 0; i < v->n; i++)
			fprintf(o, "%.1f,%.1f ", 40 + 640.0 * ((double)i + 0.5) / (double)n,
				200 - 200.0 * (double)(v->len[i] < max ? v->len[i] : max) / (double)max);
		fputs("\"/>", o);
		for (size_t i = 0; i < v->n && n <= 400; i++)
			fprintf(o, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\">"
				"<title>%s%sstep %zu: %.3f ms</title></circle>", v->cls,
				40 + 640.0 * ((double)i + 0.5) / (double)n,
				200 - 200.0 * (double)(v->len[i] < max ? v->len[i] : max) / (double)max,
				v->colour, v->label ? v->label : "", v->label ? ", " : "", i,
				(double)v->len[i] / 1e6);
	}
	fputs("</svg>\n", o);
	if (ns < 2)
		return;
	fputs("<div class=\"legend\">", o);
	for (int k = 0; k < ns; k++) {
		char med[32];
		uint64_t *sorted = sv[k].n ? malloc(sv[k].n * sizeof *sorted) : NULL;
		if (sorted) {
			memcpy(sorted, sv[k].len, sv[k].n * sizeof *sorted);
			ft_fmt_ns(med, sizeof med, (uint64_t)(ft_median(sorted, sv[k].n) + 0.5));
			free(sorted);
		} else {
			snprintf(med, sizeof med, "-");
		}
		fprintf(o, "<span><i style=\"background:%s\"></i>", sv[k].colour);
		esc(o, sv[k].label);
		fprintf(o, ": %zu steps, median %s</span> ", sv[k].n, med);
	}
	fputs("</div>\n", o);
}

static void page_head(FILE *o, const char *title)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", o);
	esc(o, title);
	fputs("</title><style>"
	      "body{font:14px/1.4 sans-serif;max-width:900px;margin:2em auto;color:#222}"
	      "h1{font-size:20px}h2{font-size:16px;margin-top:1.6em}"
	      ".verdict{background:#f4f6fa;border-left:4px solid #4e79a7;padding:.6em 1em}"
	      "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;"
	      "padding:4px 6px;text-align:left;vertical-align:top}td.n{text-align:right;"
	      "white-space:nowrap}.sugg{color:#2a6f2a}.legend span{margin-right:1em;font-size:12px}"
	      ".legend i{display:inline-block;width:10px;height:10px;margin-right:3px}"
	      "code{font-size:12px;word-break:break-all}"
	      ".sides{display:flex;gap:2em}.side{flex:1;min-width:0}"
	      ".conclusion{background:#f7f4ea;border-left:4px solid #edc948;padding:.6em 1em}"
	      "</style></head><body>\n<h1>", o);
	esc(o, title);
	fputs("</h1>\n", o);
}

/* the run's verdict: the process in words, the sentence, the detail */
static void verdict_block(FILE *o, const struct ft_report *r, const char *id)
{
	const struct ft_rep_proc *mp = r->nprocs ? &r->procs[r->main] : NULL;
	fprintf(o, "<div class=\"verdict\" id=\"%s\"><p><b>", id);
	esc(o, r->rv.process);
	fputs("</b></p><p>", o);
	esc(o, mp ? mp->v.sentence : "");
	fputs("</p>", o);
	if (r->rv.detail[0]) {
		fputs("<p>", o);
		esc(o, r->rv.detail);
		fputs("</p>", o);
	}
	fputs("</div>\n", o);
}

static int page_end(FILE *o, const char *path, const char *cmd)
{
	fputs("<p><small>feedtrace: docs/ANALYSES.md defines every figure."
	      "</small></p>\n</body></html>\n", o);
	int bad = ferror(o);
	if (fclose(o) != 0 || bad) {
		fprintf(stderr, "feedtrace %s: writing %s failed\n", cmd, path);
		return -1;
	}
	return 0;
}

int ft_report_html(struct ft_report *r, const char *path)
{
	FILE *o = fopen(path, "w");
	if (!o) {
		perror(path);
		return -1;
	}
	const struct ft_rep_proc *mp = r->nprocs ? &r->procs[r->main] : NULL;
	const struct ft_run_verdict *rv = &r->rv;
	char a[48], b[48];
	page_head(o, "feedtrace report");
	fputs("<p id=\"run\">", o);
	esc(o, r->dir);
	ft_fmt_ns(a, sizeof a, r->total.wall_ns);
	fprintf(o, ": %d process%s, %s</p>\n", r->nprocs, r->nprocs == 1 ? "" : "es", a);

	fputs("<h2>Verdict</h2>\n", o);
	verdict_block(o, r, "verdict");
	char dw[160];
	if (mp && ft_words_data_wait_step(rv, &mp->v, dw, sizeof dw)) {
		fputs("<p id=\"data-wait-step\">", o);
		esc(o, dw);
		fputs("</p>\n", o);
	}
	if (mp && mp->v.wall_ns) {
		fputs("<h2>The feeding threads' time</h2>\n", o);
		stacked_bar(o, "feed", 600, ft_cat_label, cat_colour, mp->v.t, FT_CAT_N, mp->v.wall_ns);
	}
	if (rv->nprod) {
		static const char *const plabel[] = { "file I/O", "CPU", "locks", "idle" };
		static const char *const pcolour[] = { "#f28e2b", "#bab0ac", "#b07aa1", "#e8e8e8" };
		fputs("<h2>The producers' time</h2>\n", o);
		for (int i = 0; i < rv->nprod; i++) {
			const struct ft_producer *q = &rv->prod[i];
			uint64_t part[4] = { q->io, q->cpu, q->lock, q->idle };
			char id[32];
			snprintf(id, sizeof id, "producer%d", i);
			fprintf(o, "<p>%s %d (pid %d)</p>", ft_prod_name(q->role), q->tid, q->pid);
			stacked_bar(o, id, 600, plabel, pcolour, part, 4, q->wall);
		}
	}
	uint64_t *len;
	size_t n;
	ft_report_step_lengths(r, &len, &n);
	if (n) {
		ft_fmt_ns(a, sizeof a, r->total.step_median_ns);
		fprintf(o, "<h2>Step times</h2>\n<p>%zu steps, median %s</p>\n", n, a);
		struct series sv = { len, n, "#4e79a7", "step", NULL };
		step_chart(o, &sv, 1);
	}
	free(len);

	struct ft_problem *pb;
	int np = ft_problems(r, &pb), shown = ft_problems_shown(r, pb, np);
	fprintf(o, "<h2>Problems, by time the feed lost (%d)</h2>\n<table id=\"problems\"><tr><th>cost</th>"
		"<th>what</th><th>process</th></tr>\n", np);
	for (int i = 0; i < shown; i++) {
		ft_fmt_ns(a, sizeof a, pb[i].lost_ns);
		fprintf(o, "<tr class=\"problem\"><td class=\"n\">%s</td><td><b>", a);
		esc(o, pb[i].kind);
		fputs("</b>: ", o);
		esc(o, pb[i].what);
		if (pb[i].suggestion && *pb[i].suggestion) {
			fputs("<div class=\"sugg\">&rarr; ", o);
			esc(o, pb[i].suggestion);
			fputs("</div>", o);
		}
		fprintf(o, "</td><td class=\"n\">%d</td></tr>\n", pb[i].pid);
	}
	if (np > shown)       /* the text report's rule: the rest are in --json */
		fprintf(o, "<tr class=\"more\"><td></td><td>%d smaller (report --json lists "
			"them all)</td><td></td></tr>\n", np - shown);
	fputs("</table>\n", o);
	free(pb);

	fputs("<h2>Call sites (hidden syncs and contended locks)</h2>\n<table id=\"sites\">"
	      "<tr><th>calls</th><th>total</th><th>site</th></tr>\n", o);
	for (int i = 0; i < r->nf; i++) {
		const struct ft_finding *f = &r->f[i];
		if (!ft_fkind(f)->site)
			continue;
		ft_fmt_ns(b, sizeof b, f->total_ns);
		fprintf(o, "<tr><td class=\"n\">%llu</td><td class=\"n\">%s</td><td><code>",
			(unsigned long long)f->count, b);
		esc(o, f->site && *f->site ? f->site : "(no site)");
		fputs("</code> (", o);
		esc(o, f->symbol);
		fputs(")</td></tr>\n", o);
	}
	fputs("</table>\n", o);
	return page_end(o, path, "report");
}

/* diff --html: both runs side by side (each side's first run: its verdict
 * and its feeding threads' time), the diff's conclusion, and the step
 * times of both on one chart when both have steps */
int ft_diff_html(const char *path, const struct ft_diff_side side[2], const char *conclusion)
{
	static const char *const colour[2] = { "#4e79a7", "#e15759" };
	FILE *o = fopen(path, "w");
	if (!o) {
		perror(path);
		return -1;
	}
	page_head(o, "feedtrace diff");
	fputs("<h2>Conclusion</h2>\n<div class=\"conclusion\" id=\"conclusion\"><p>", o);
	esc(o, conclusion);
	fputs("</p></div>\n<div class=\"sides\">\n", o);
	for (int j = 0; j < 2; j++) {
		const struct ft_diff_side *d = &side[j];
		const struct ft_report *r = d->r;
		const struct ft_rep_proc *mp = r->nprocs ? &r->procs[r->main] : NULL;
		char id[32], w[48];
		fprintf(o, "<div class=\"side\" id=\"side-%s\"><h2>", d->label);
		esc(o, d->label);
		fputs("</h2><p class=\"run\"><code>", o);
		esc(o, r->dir);
		ft_fmt_ns(w, sizeof w, r->total.wall_ns);
		fprintf(o, "</code>%s: %d process%s, %s</p>\n", d->nruns > 1 ? " (the first run)" : "",
			r->nprocs, r->nprocs == 1 ? "" : "es", w);
		snprintf(id, sizeof id, "verdict-%s", d->label);
		verdict_block(o, r, id);
		if (mp && mp->v.wall_ns) {
			fputs("<h3>The feeding threads' time</h3>\n", o);
			snprintf(id, sizeof id, "feed-%s", d->label);
			stacked_bar(o, id, 400, ft_cat_label, cat_colour, mp->v.t, FT_CAT_N,
				    mp->v.wall_ns);
		}
		fputs("</div>\n", o);
	}
	fputs("</div>\n", o);
	if (side[0].nlen && side[1].nlen) {
		struct series sv[2];
		for (int j = 0; j < 2; j++)
			sv[j] = (struct series){ side[j].len, side[j].nlen, colour[j], side[j].label,
						 side[j].label };
		fputs("<h2>Step times</h2>\n", o);
		step_chart(o, sv, 2);
	}
	return page_end(o, path, "diff");
}
