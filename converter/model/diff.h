/*
 * diff.h: the model of a comparison (diff.c): runs of one program before
 * and after a change, loaded, their findings matched, the change and its
 * interval, what the conclusion credits. Plain structs of enums and
 * numbers: the writers (diff_text.c, diff_json.c, diff_write.c's
 * timeline, html.c) and words.c consume them and decide nothing.
 */
#ifndef FT_DIFF_H
#define FT_DIFF_H

#include <stdint.h>

#include "analysis.h"
#include "merge.h"
#include "report_model.h"
#include "states.h"
#include "stats.h"
#include "vfields.h"

#define FT_DIFF_MAX_RUNS 32
#define FT_DIFF_MAX_FINDINGS 64

/* a figure before [0] and after [1]; has[k]: that side has it */
struct ft_diff_pair {
	const char *key;
	int has[2];
	double v[2];
	const char *label;         /* metrics.def's: the text's row name */
	int time;                  /* a time (else a count) */
};

/* a finding matched across the sides, means over each side's runs */
struct ft_diff_finding {
	int kind;                  /* enum ft_fkind */
	const char *what;
	enum ft_status status;     /* gone, new, shrank, grew, same (states.h) */
	uint64_t count[2], reads[2], lost_ns[2];
	double lost_per_unit[2];   /* per step or per run */
	int listed;                /* cost enough on one side for the text to list it */
};

/* one of verdict.def's rows that diff shows: the main processes' values */
struct ft_diff_vrow {
	const char *key, *label;   /* verdict.def's dkey and label */
	enum ft_vf_diff way;
	const char *s[2];          /* STATE: the state's name */
	int64_t ns[2];             /* NS: a time (negative: absent) */
};

/* the figures about the step, in the JSON's order after metrics.def's */
enum { FT_DIFF_STEPS, FT_DIFF_STEP_MEAN, FT_DIFF_STEP_TIME, FT_DIFF_STEP_MEDIAN,
       FT_DIFF_STEP_N };

struct ft_gate;
struct ft_diff_figures {
	const char *const *runs[2];     /* each side's run directories */
	int nruns[2];
	const struct ft_diff_pair *metrics;   /* metrics.def's that diff compares, in order */
	int nmetrics;
	struct ft_diff_pair step[FT_DIFF_STEP_N];
	struct ft_diff_pair feeds[FT_CAT_N];  /* per unit, keyed by ft_cat_name */
	const struct ft_change *change;       /* NULL: not resolved */
	enum ft_change_of change_of;          /* STEP_TIME or WALL_TIME */
	const struct ft_change *median;       /* the median step's; NULL: none */
	int by_step;                          /* the unit is the step (else the run) */
	int whole;                            /* feeds over the whole run (else the steps) */
	const struct ft_diff_finding *findings;
	int nfindings;
	int gpu_idle;               /* -1: none, 0: modelled, 1: measured */
	double gpu_idle_share[2];
	const struct ft_diff_vrow *verdict;   /* verdict.def's diff rows, in order */
	int nverdict;
	/* what the command adds before writing: its conditions, the words */
	const struct ft_gate *gates;
	int ngates;
	const char *conclusion;
};

/* what a diff's conclusion stands on (words.c words it) */
struct ft_diff_credit {
	const struct ft_change *ch;     /* the change; NULL: not resolved */
	int by_step;                    /* of the time per step (else of the wall time) */
	uint64_t n[2];                  /* steps (or runs) compared on each side */
	uint64_t warm[2];               /* warm-up steps left out */
	int runs[2];
	int training_only;              /* every run's steps are optimizer steps */
	const struct ft_diff_finding *findings;
	const int *credit;              /* faster or slower: the findings that moved
	                                   that way by more than the interval's
	                                   half-width, largest first */
	int ncredit;
	int feed;                       /* and the feed that moved most so (enum
	                                   ft_cat; -1: none) */
	double feed_ns[2];              /* its time per unit */
	const int *named;               /* no change: notable findings that changed
	                                   within the interval (two at most) */
	int nnamed;
	uint64_t wall[2];               /* not resolved: the wall times */
	const struct ft_change *median; /* the median step's change; NULL: none */
};

/* one side: its runs, loaded */
struct ft_diff_runs {
	const char *dir[FT_DIFF_MAX_RUNS];
	int n;
	struct ft_report r[FT_DIFF_MAX_RUNS];
	uint64_t *len[FT_DIFF_MAX_RUNS];   /* each run's step times */
	size_t nlen[FT_DIFF_MAX_RUNS];
	uint64_t *per[FT_DIFF_MAX_RUNS];   /* each run's step periods (the loop's time) */
	size_t nper[FT_DIFF_MAX_RUNS];
	struct ft_metrics sum;    /* over its runs */
	uint64_t feed[FT_CAT_N];  /* the feeding threads' time, over its runs */
	uint64_t units;           /* steps (all runs have them) or runs */
	int whole;                /* feeds of some run over its whole run, not its steps */
	int optimizer;            /* runs whose steps are optimizer steps (phases.h) */
};

/* the comparison: both sides and what was decided of them */
struct ft_diff_model {
	struct ft_diff_runs s[2];
	int by_step;                  /* every run marks steps */
	struct ft_change ch, chm;     /* what the conclusion stands on; the median step */
	int have_ci, have_med;
	struct ft_diff_pair metrics[64];
	struct ft_diff_finding f[FT_DIFF_MAX_FINDINGS];
	struct ft_diff_vrow vrow[32];
	int credit[FT_DIFF_MAX_FINDINGS], named[2];
	struct ft_diff_credit cr;
	struct ft_diff_figures fig;
};

/* what the command asks (cmd_diff.c): the runs and how to read them for
 * ft_diff_decide, the outputs and conditions for ft_diff (diff_write.c) */
struct ft_diff_args {
	/* before [0] and after [1]: run directories, or directories of them */
	const char *dirs[2][FT_DIFF_MAX_RUNS];
	int ndirs[2];
	struct ft_an_opts an;
	struct ft_merge_opts mg;
	int mixed;                       /* --mixed: runs of several ids */
	int json;
	const char *out, *junit, *html;  /* -o FILE.pftrace, --junit, --html, or NULL */
	struct ft_gate *gates;           /* --fail-if conditions */
	int ngates;
};

/* Loads args' run directories of each side (a run, or a directory of
 * runs) and decides the comparison into m. 0; -1: a run has nothing
 * usable, -2: files of two runs in one directory, -3: too many runs
 * (each said on stderr; nothing left to free) */
int ft_diff_decide(struct ft_diff_model *m, const struct ft_diff_args *args);
/* what ft_diff_decide loaded */
void ft_diff_model_free(struct ft_diff_model *m);

#endif
