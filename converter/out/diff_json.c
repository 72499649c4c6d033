/*
 * diff_json.c: `feedtrace diff --json` (diff_json.h), through the JSON
 * writer (json.c): what the model (diff.c) decided, as docs/REPORT-SCHEMA.md's
 * "feedtrace-diff/1". The figures' names and order are this file's.
 */
#include "diff_json.h"
#include "fkind.h"
#include "gate_out.h"
#include "json.h"

/* a figure before and after: each null when absent, then the change and
 * the relative change (null when either is absent or before is 0) */
static void json_pair(struct ft_json *j, const struct ft_diff_pair *p)
{
	int hx = p->has[0], hy = p->has[1];
	double x = p->v[0], y = p->v[1];
	ft_json_obj(j, p->key);
	if (hx)
		ft_json_fixed(j, "before", x, 0);
	else
		ft_json_null(j, "before");
	if (hy)
		ft_json_fixed(j, "after", y, 0);
	else
		ft_json_null(j, "after");
	if (hx && hy)
		ft_json_fixed(j, "change", y - x, 0);
	else
		ft_json_null(j, "change");
	if (hx && hy && x)
		ft_json_fixed(j, "relative", (y - x) / x, 4);
	else
		ft_json_null(j, "relative");
	ft_json_end(j);
}

/* the change ch of figure `of` as a JSON object under key, or null */
static void json_change(struct ft_json *j, const char *key, const struct ft_change *ch,
			enum ft_change_of of)
{
	if (!ch) {
		ft_json_null(j, key);
		return;
	}
	ft_json_obj(j, key);
	ft_json_str(j, "of", ft_change_of_name(of));
	ft_json_str(j, "statistic", of == FT_OF_STEP_TIME ? "mean" : "median");
	ft_json_fixed(j, "before_ns", ch->before, 0);
	ft_json_fixed(j, "after_ns", ch->after, 0);
	ft_json_fixed(j, "lo_ns", ch->lo, 0);
	ft_json_fixed(j, "hi_ns", ch->hi, 0);
	ft_json_fixed(j, "confidence", 0.95, 2);
	ft_json_str(j, "method", of == FT_OF_STEP_TIME ? "block bootstrap" : "bootstrap");
	ft_json_int(j, "resamples", FT_BOOT_N);
	ft_json_str(j, "verdict", ft_change_word[ch->verdict]);
	ft_json_end(j);
}

static void findings(struct ft_json *j, const struct ft_diff_figures *d)
{
	ft_json_arr(j, "findings");
	for (int i = 0; i < d->nfindings; i++) {
		const struct ft_diff_finding *f = &d->findings[i];
		ft_json_obj(j, NULL);
		ft_json_str(j, "kind", ft_fkinds[f->kind]->key);
		ft_json_str(j, "what", f->what);
		ft_json_str(j, "status", ft_status_name(f->status));
		ft_json_obj(j, "count");
		ft_json_u64(j, "before", f->count[0]);
		ft_json_u64(j, "after", f->count[1]);
		ft_json_end(j);
		ft_json_obj(j, "reads");
		ft_json_u64(j, "before", f->reads[0]);
		ft_json_u64(j, "after", f->reads[1]);
		ft_json_end(j);
		ft_json_obj(j, "lost_ns_per_unit");
		ft_json_fixed(j, "before", f->lost_per_unit[0], 0);
		ft_json_fixed(j, "after", f->lost_per_unit[1], 0);
		ft_json_end(j);
		ft_json_end(j);
	}
	ft_json_end(j);
	/* the gone ones as they were before, the new ones as they are after */
	const char *names[2] = { "disappeared", "appeared" };
	const enum ft_status status[2] = { FT_STATUS_GONE, FT_STATUS_NEW };
	for (int k = 0; k < 2; k++) {
		ft_json_arr(j, names[k]);
		for (int i = 0; i < d->nfindings; i++) {
			const struct ft_diff_finding *f = &d->findings[i];
			if (f->status != status[k])
				continue;
			ft_json_obj(j, NULL);
			ft_json_str(j, "kind", ft_fkinds[f->kind]->key);
			ft_json_str(j, "what", f->what);
			ft_json_u64(j, "count", f->count[k]);
			ft_json_u64(j, "lost_ns", f->lost_ns[k]);
			ft_json_end(j);
		}
		ft_json_end(j);
	}
}

void ft_diff_json(const struct ft_diff_figures *d, FILE *out)
{
	struct ft_json jw, *j = &jw;
	ft_json_begin(j, out);
	ft_json_obj(j, NULL);
	ft_json_str(j, "schema", "feedtrace-diff/1");
	ft_json_str(j, "before", d->runs[0][0]);
	ft_json_str(j, "after", d->runs[1][0]);
	for (int k = 0; k < 2; k++) {
		ft_json_arr(j, k ? "after_runs" : "before_runs");
		for (int i = 0; i < d->nruns[k]; i++)
			ft_json_str(j, NULL, d->runs[k][i]);
		ft_json_end(j);
	}
	ft_json_obj(j, "metrics");
	for (int i = 0; i < d->nmetrics; i++)
		json_pair(j, &d->metrics[i]);
	for (int i = 0; i < FT_DIFF_STEP_N; i++)
		json_pair(j, &d->step[i]);
	ft_json_end(j);
	json_change(j, "change", d->change, d->change_of);
	json_change(j, "median_change", d->median, FT_OF_STEP_MEDIAN);
	ft_json_str(j, "conclusion_on", d->change ? ft_change_of_name(d->change_of) : NULL);
	ft_json_str(j, "unit", d->by_step ? "step" : "run");
	ft_json_str(j, "feeds_window", d->whole ? "whole run" : "steps");
	ft_json_obj(j, "feeds");
	for (int c = 0; c < FT_CAT_N; c++)
		json_pair(j, &d->feeds[c]);
	ft_json_end(j);
	findings(j, d);
	if (d->gpu_idle < 0) {
		ft_json_null(j, "gpu_idle");
	} else {
		ft_json_obj(j, "gpu_idle");
		ft_json_str(j, "basis", d->gpu_idle ? "measured" : "modelled");
		ft_json_fixed(j, "before", d->gpu_idle_share[0], 4);
		ft_json_fixed(j, "after", d->gpu_idle_share[1], 4);
		ft_json_end(j);
	}
	for (int i = 0; i < d->nverdict; i++) {
		const struct ft_diff_vrow *x = &d->verdict[i];
		ft_json_obj(j, x->key);
		for (int k = 0; k < 2; k++)
			if (x->way == FT_VF_DIFF_STATE)
				ft_json_str(j, k ? "after" : "before", x->s[k] ? x->s[k] : "");
			else if (x->ns[k] >= 0)
				ft_json_u64(j, k ? "after" : "before", (uint64_t)x->ns[k]);
			else
				ft_json_null(j, k ? "after" : "before");
		ft_json_end(j);
	}
	ft_gate_json(d->gates, d->ngates, j, "gate");
	ft_json_str(j, "conclusion", d->conclusion);
	ft_json_end(j);
	fputc('\n', out);
}
