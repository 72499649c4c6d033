/*
 * diff_json.h: `feedtrace diff --json` (diff_json.c) written from the
 * figures ft_diff (diff.c) decided: plain values, no run loaded here.
 * The schema is docs/REPORT-SCHEMA.md's "feedtrace-diff/1".
 */
#ifndef FT_DIFF_JSON_H
#define FT_DIFF_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "gate.h"
#include "states.h"
#include "stats.h"
#include "vfields.h"

/* a figure before [0] and after [1]; has[k]: that side has it */
struct ft_diff_pair {
	const char *key;
	int has[2];
	double v[2];
};

/* a finding matched across the sides, means over each side's runs */
struct ft_diff_finding {
	int kind;                  /* enum ft_fkind */
	const char *what;
	enum ft_status status;     /* gone, new, shrank, grew, same (states.h) */
	uint64_t count[2], reads[2], lost_ns[2];
	double lost_per_unit[2];   /* per step or per run */
};

/* one of verdict.def's rows that diff shows: the main processes' values */
struct ft_diff_vrow {
	const char *key, *label;   /* verdict.def's dkey and label */
	enum ft_vf_diff way;
	const char *s[2];          /* STATE: the state's name */
	int64_t ns[2];             /* NS: a time (negative: absent) */
};

struct ft_diff_figures {
	const char *const *runs[2];     /* each side's run directories */
	int nruns[2];
	const struct ft_diff_pair *metrics;   /* "metrics", in order */
	int nmetrics;
	struct ft_diff_pair feeds[FT_CAT_N];  /* per unit, keyed by ft_cat_name */
	const struct ft_change *change;       /* NULL: not resolved */
	enum ft_change_of change_of;          /* STEP_TIME or WALL_TIME */
	const struct ft_change *median;       /* the median step's; NULL: none */
	const char *unit;                     /* "step" or "run" */
	const char *feeds_window;             /* "steps" or "whole run" */
	const struct ft_diff_finding *findings;
	int nfindings;
	int gpu_idle;               /* -1: none, 0: modelled, 1: measured */
	double gpu_idle_share[2];
	const struct ft_diff_vrow *verdict;   /* verdict.def's diff rows, in order */
	int nverdict;
	const struct ft_gate *gates;
	int ngates;
	const char *conclusion;
};

/* the figures as one JSON object and a newline on out */
void ft_diff_json(const struct ft_diff_figures *d, FILE *out);

#endif
