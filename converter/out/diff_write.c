/*
 * diff_write.c: `feedtrace diff` (diff_write.h): the comparison decided
 * (diff.c), its conclusion worded (words.c), the --fail-if conditions
 * evaluated (gate.c), then written: text (diff_text.c) or --json
 * (diff_json.c); -o, the first run of each side in one Perfetto trace,
 * aligned at their start; --html, both side by side (html.c).
 */
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "diff_json.h"
#include "diff_text.h"
#include "diff_write.h"
#include "gate_out.h"
#include "outfile.h"
#include "pipeline.h"
#include "words.h"

/* The step times of the first run of each side as two counters of one
 * process, "diff: steps by index", aligned on step index: step i of both
 * at the before run's start + i x the before run's median step. */
#define STEPS_PID (3 << 22)       /* above the after run's pids */

static void step_counters(struct pf_writer *w, const struct ft_diff_runs *s)
{
	const struct ft_diff_runs *a = &s[0];
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

static int write_timeline(struct ft_diff_runs *s, const char *out, const struct ft_an_opts *o)
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

/* the conditions on m, its JUnit file; 0, 2 on an error */
static int gate(struct ft_diff_model *m, const struct ft_diff_args *args, int *fails)
{
	struct ft_diff_runs *a = &m->s[0], *b = &m->s[1];
	struct ft_report *ra[FT_DIFF_MAX_RUNS], *rb[FT_DIFF_MAX_RUNS];
	for (int i = 0; i < a->n; i++)
		ra[i] = &a->r[i];
	for (int i = 0; i < b->n; i++)
		rb[i] = &b->r[i];
	int rc = 0;
	for (int i = 0; i < args->ngates; i++) {
		enum ft_gate_err e = ft_gate_eval(&args->gates[i], ra, a->n, rb, b->n,
						  m->have_ci && m->by_step ? &m->ch : NULL,
						  m->have_med ? &m->chm : NULL);
		if (ft_gate_error(&args->gates[i], e, stderr) != 0)
			rc = 2;
		*fails += args->gates[i].holds;
	}
	if (rc == 0 && args->junit &&
	    ft_gate_junit(args->gates, args->ngates, "feedtrace.diff", args->junit) != 0)
		rc = 2;
	return rc;
}

/* the timeline and the page asked for; 0, or 1 when one failed */
static int write_files(struct ft_diff_model *m, const struct ft_diff_args *args)
{
	struct ft_diff_runs *s = m->s;
	if (args->out && write_timeline(s, args->out, &args->an) != 0)
		return 1;
	if (args->html) {
		struct ft_diff_side ds[2];
		for (int j = 0; j < 2; j++)
			ds[j] = (struct ft_diff_side){ j ? "after" : "before", s[j].n, &s[j].r[0],
						       s[j].len[0], s[j].nlen[0] };
		if (ft_diff_html(args->html, ds, m->fig.conclusion) != 0)
			return 1;
	}
	return 0;
}

int ft_diff(const struct ft_diff_args *args)
{
	static struct ft_diff_model m;
	int ng = args->ngates;
	int lr = ft_diff_decide(&m, args);
	if (lr != 0)
		return lr == -3 || ng || lr == -2 ? 2 : 1;
	for (int j = 0; j < 2; j++)          /* the runs' sentences, for --html */
		for (int i = 0; i < m.s[j].n; i++)
			ft_words_report(&m.s[j].r[i]);
	static char concl[1024];
	ft_words_diff_conclusion(&m.cr, concl, sizeof concl);
	m.fig.conclusion = concl;
	m.fig.gates = args->gates;
	m.fig.ngates = ng;
	int fails = 0, rc = gate(&m, args, &fails);
	if (rc == 2)
		;
	else if (args->json)
		ft_diff_json(&m.fig, stdout);
	else
		ft_diff_text(&m.fig);
	if (rc == 0)
		rc = write_files(&m, args);
	if (rc == 0 && fails)
		rc = 1;
	ft_diff_model_free(&m);
	return rc;
}
