/*
 * report_model.h: the model of a run (report_model.c): every process
 * analysed, the run's verdict as decided (enums and figures; its
 * sentences are filled in by words.c's ft_words_report), the findings
 * ranked by time lost, the losses and the steps. The writers (report.h:
 * text, JSON, HTML) and diff read it; problems.c and mapped.c build on it.
 */
#ifndef FT_REPORT_MODEL_H
#define FT_REPORT_MODEL_H

#include <stdio.h>

#include "analysis.h"
#include "cover.h"
#include "mapped.h"
#include "merge.h"
#include "ranks.h"
#include "reader.h"

/* launch gaps kept (the longest), of the findings whose kind caps them
 * (fkind.h: cap); all are counted (ngaps, gaps_left_out) */
#define FT_REPORT_MAX_GAPS 1000

struct ft_rep_proc {
	int32_t pid, ppid;
	const char *cmdline;
	enum ft_proc_role role;   /* roles.c's */
	int parent;               /* index of its parent in procs, -1: none traced */
	uint64_t start;           /* its trace's start */
	struct ft_metrics m;
	struct ft_verdict v;
	uint64_t own_step_median_ns;  /* its steps' median, kept where the run's
	                                 steps leave its batches out (a rank's) */
};

/* a thread that delivers data to the feeding process, in the window */
struct ft_producer {
	int32_t pid, tid;
	enum ft_prod role;
	uint64_t wall, io, cpu, lock, idle;
	int cpu_sampled;          /* cpu from CPU samples (else untraced time) */
	uint64_t majflt;          /* major page faults on mapped data (mapped.c) */
	uint64_t fault_ns;        /* block I/O wait then (delay accounting: fault_timed) */
	int fault_timed;
	uint64_t handover;        /* of idle: blocked handing data over (pipe writes) */
	uint64_t runq;            /* of idle: runnable, waiting for a core (SCHED samples) */
};

/* what the run verdict's detail says (words.c words it) */
enum ft_detail_say {
	FT_DETAIL_NONE,           /* "" (then the feeding threads' run-queue line, if said) */
	FT_DETAIL_SLACK,          /* the producers wait for the loop */
	FT_DETAIL_SELF_LOADING,   /* a GPU loop loads its own data (its phases' figures) */
	FT_DETAIL_PRODUCERS,      /* data delivery: what the producers did (data_cause) */
};

/* the run's verdict: about the main process (r->procs[r->main]) */
struct ft_run_verdict {
	char process[200];        /* "main process 5511 (python3 train.py), 2 ..." */
	char detail[768];         /* the producers' line, or "" (words.c: detail_say) */
	enum ft_detail_say detail_say;
	int prod_runq_said;       /* PRODUCERS: and the producers waited for a core 20% */
	int busiest;              /* PRODUCERS: the producer named as far busier, -1: none */
	int feed_runq_said;       /* the feeding threads waited for a core 20% of the window */
	struct ft_read_shape shape;   /* the producers' reads, mostly (req 0: none) */
	enum ft_cause data_cause; /* why the loop waits for data; UNSET: it does not */
	enum ft_from from;        /* what the window starts from */
	uint64_t w0, w1, startup_ns;
	uint64_t feed_runq_ns;    /* the feeding threads runnable, waiting for a core, in
	                             the window (of their other CPU) */
	uint64_t warmup_steps, warmup_ns;  /* leading warm-up steps left out of the window */
	uint64_t launches_before; /* from the first launch: an initialisation's launches
	                             before a long pause, left out (gpu.c) */
	uint64_t worker_reads;    /* the workers' file reads in a window of steps */
	uint64_t window_steps;    /* a window of steps: its steps (the main process's, less
	                             the warm-up ones); 0 otherwise */
	int64_t data_wait_step_ns;  /* the feeding threads' time waiting for data or in
	                               file I/O per step of the window; -1: no window of steps */
	uint64_t startup[FT_CAT_N];  /* the main thread's time before the window */
	struct ft_producer *prod;
	int nprod;
};

struct ft_report {
	const char *dir;
	struct ft_trace tr;       /* open: findings point into its string tables */
	struct ft_rep_proc *procs;
	int nprocs, main;         /* main: the process the verdict is about */
	struct ft_ranks ranks;    /* a job of ranks: the straggler, if any, is main */
	struct ft_run_verdict rv;
	struct ft_mapped mapped;  /* data read through memory maps (mapped.c) */
	struct ft_metrics total;
	struct ft_finding *f;     /* sorted by lost_ns, largest first */
	int nf, capf, ngaps;
	struct ft_finding *cand;  /* storm candidates: bursts under the per-process threshold */
	int ncand, capcand;
	uint32_t storm_reads;     /* the analyses' storm threshold, for the run-wide check */
	uint64_t storm_window_ns;
	uint64_t gaps_left_out;
	const char *step_range;   /* the step prefix the analyses used */
	/* the feeding threads' waits for data and their own file I/O in the
	 * verdict's window (feed_all: and their lock waits), when the run has
	 * storms or locks to rank by them (feed_known: the main process has
	 * feeding threads) */
	struct ft_cover feed, feed_all;
	int feed_known;
};

/* the run in dir analysed and decided, without its words (report.h's
 * ft_report_build adds them); 0 on success; -1 when nothing usable was
 * found (messages on err) */
int ft_report_model_build(struct ft_report *r, const char *dir, const struct ft_an_opts *o,
			  const struct ft_merge_opts *mg, FILE *err);
void ft_report_free(struct ft_report *r);
/* what the run lost of kind k, summed over its processes; *procs (or
 * NULL): how many processes lost some */
uint64_t ft_report_loss(const struct ft_report *r, enum ft_loss k, int *procs);
/* process i is a worker of the main process */
int ft_report_main_worker(const struct ft_report *r, int i);

/* the step times of the process with most steps, in the order they
 * closed; *len malloc'd (NULL, 0 without steps) */
void ft_report_step_lengths(struct ft_report *r, uint64_t **len, size_t *n);
/* the same process's steps as the loop's time: each step's period in start
 * order (from its start to the next one's; the last, its length), the
 * leading warm-up steps (steps.h) left out: they add up to the loop's
 * window; *per malloc'd (NULL, 0 without steps) */
void ft_report_step_periods(struct ft_report *r, uint64_t **per, size_t *n);
/* how many of the problems pb (ft_problems: largest first) the text report
 * and the HTML page list, by one rule */
struct ft_problem;
int ft_problems_shown(const struct ft_report *r, const struct ft_problem *pb, int npb);
/* report's progress line while it reads processes (progress.h; NULL: none) */
struct ft_progress;
void ft_report_progress(struct ft_progress *pg);

#endif
