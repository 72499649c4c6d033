/*
 * words.h: the English of the model's decisions (words.c). The model
 * (verdict.c, phases.c, report_model.c, mapped.c, diff.c) decides and keeps plain structs with enums and
 * figures; these put them into the sentences the text, JSON and HTML
 * writers print. Nothing here decides about the run: only which words
 * and figures say what was decided.
 */
#ifndef FT_WORDS_H
#define FT_WORDS_H

#include <stddef.h>

#include "analysis.h"
#include "diff.h"
#include "mapped.h"
#include "report.h"

/* a process's verdict v (its say, limit and figures) as one sentence */
void ft_words_verdict(const struct ft_verdict *v, char *out, size_t cap);
/* the run verdict's detail (rv's detail_say, data_cause, producers and
 * the flags beside them; v: the main process's verdict; m: the run's
 * mapped data, named for mapped I/O) */
void ft_words_detail(const struct ft_run_verdict *rv, const struct ft_verdict *v,
		     const struct ft_mapped *m, char *out, size_t cap);

/* the run verdict's process: "the straggler, rank 2/4, main process 5511
 * (python3 train.py), 2 DataLoader workers (5561, 5562), 1 loader thread" */
struct ft_proc_words {
	int straggler;              /* it is the job's straggler */
	int32_t rank, world;        /* its rank of world (none: world 0) */
	int32_t pid;
	const char *cmdline;
	const int32_t *workers;     /* its workers' pids */
	int nworkers;
	int python;                 /* it and its workers run Python: DataLoader workers */
	int nloaders;               /* its loader threads among the producers */
};
void ft_words_process(const struct ft_proc_words *w, char *out, size_t cap);

/* a run's model (report_model.c decided it) worded: every process's
 * verdict sentence, the run verdict's detail and its process */
void ft_words_report(struct ft_report *r);

/* data read through memory maps (mapped.c): the finding's sentence (with
 * its suggestion), "" when m does not say one */
void ft_words_mapped(const struct ft_mapped *m, char *out, size_t cap);
/* "/data/train.arrow, /data/val.arrow and 2 more" */
void ft_words_mapped_files(const struct ft_mapped *m, char *out, size_t cap);
/* a mapped-data thread's name, "thread TID" when it has none; returns out */
const char *ft_words_mapped_thread(const struct ft_mapped_thread *t, char *out, size_t cap);

/* "GPU idle 31% of the loop (measured; samples cover 98% of it; the model
 * said 40%)", or "GPU idle 53% of the loop (modelled: no samples)" (or
 * "...: samples cover only 4% of it"): the report's line for a verdict
 * over a window of win ns (gpu_measured.c measured it) */
void ft_words_gpu_idle(const struct ft_verdict *v, uint64_t win, char *out, size_t cap);

/* A flight recorder's window in words ("flight recorder: the last 1.9 s
 * before SIGTERM, of a run started 5.0 s before"), into buf; 0 when p's
 * file holds none */
int ft_words_flight(const struct ft_process *p, char *buf, size_t cap);

/* "data wait per step: 4.0 ms (the feeding thread waiting for data or in
 * file I/O, over 10 steps of the window)": rv's data_wait_step_ns for the
 * feeding threads of v; 0 (out untouched) without a window of steps */
int ft_words_data_wait_step(const struct ft_run_verdict *rv, const struct ft_verdict *v,
			    char *out, size_t cap);

/* "steps 2000-2100 (optimizer steps, on demand) of a run started 3 h 12 min
 * before": process p's first capture window, and how many more; 0 (out
 * untouched) when it was recorded throughout */
int ft_words_capture(const struct ft_process *p, char *out, size_t cap);

/* a diff's feed (enum ft_cat): "launch", "waiting for data"... */
const char *ft_words_feed(int cat);
/* a diff's unit: "per step" (by_step), "per run" */
const char *ft_words_diff_unit(int by_step);
/* a diff's finding: "small-read storm in /data: 5 -> 1 (5,000 -> 1,000
 * reads); lost per step 41 ms -> 3 ms" (unit: "per step", "per run") */
int ft_words_diff_finding(const struct ft_diff_finding *f, const char *unit, char *out,
			  size_t cap);

/* the conclusion (diff.h: what it credits), one paragraph ending in '.' */
void ft_words_diff_conclusion(const struct ft_diff_credit *c, char *out, size_t cap);

#endif
