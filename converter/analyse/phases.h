/*
 * phases.h: PyTorch's loop as its own objects show it (docs/ANALYSES.md,
 * "Phases"): the ranges and marks the Python-side instrumentation records
 * (libfeedtrace/python/sitecustomize.py): a range per DataLoader iterator
 * __next__, a mark per optimizer step. A phase is a run of batches from
 * one iterator of one loader on the loop's thread (training when the loop
 * steps an optimizer in it, else evaluation); a training step runs from
 * one optimizer step to the next within a phase (the phase's first from
 * its first __next__). Fed by steps.c.
 */
#ifndef FT_PHASES_H
#define FT_PHASES_H

#include <stdint.h>
#include <stdio.h>

#include "reader.h"
#include "states.h"

#define FT_NEXT_PREFIX "feedtrace:next"
#define FT_STOP_MARK "feedtrace:stop"
#define FT_OPTSTEP_PREFIX "feedtrace:optimizer.step"

struct ft_phase {
	uint32_t loader, it, workers;
	int train;                        /* optimizer steps in it */
	uint64_t batches, steps;
	uint64_t start, end;              /* first __next__'s start; last batch's or step's end */
	uint64_t next_ns, io_ns;          /* inside its batches' __next__; file I/O in them */
	char dataset[48], getitem[80];
};

#define FT_PHASES_MAX 16
struct ft_phases_sum {
	int32_t tid;                      /* the loop's thread */
	int n;                            /* phases kept (the first FT_PHASES_MAX) */
	uint64_t nall, ntrain;            /* all phases, the training ones */
	struct ft_phase ph[FT_PHASES_MAX];
	/* the training steps: their number, summed length, the time inside
	 * __next__ and its file I/O within them; the loader of the training
	 * phase with most steps */
	uint64_t steps, step_ns, next_ns, io_ns;
	uint32_t workers;
	char dataset[48], getitem[80];
	/* that phase's first step's start, last step's end, and its steps:
	 * the verdict's window (the first such phase on a tie) */
	uint64_t win_start, win_end, win_steps;
};

/* one training step, with the launches, hidden syncs and reads in it */
struct ft_pstep { uint64_t start, end, launches, hidden, reads; };

struct ft_phases;
struct ft_phases *ft_phases_new(const struct ft_process *p);
/* every event in start order; io_ns: its duration when it is file I/O;
 * launches, hidden, reads: the process's counts so far */
void ft_phases_event(struct ft_phases *s, const struct ft_event *ev, uint64_t io_ns,
		     uint64_t launches, uint64_t hidden, uint64_t reads);
/* the phases (NULL: no __next__ range and no optimizer step), malloc'd;
 * *steps, *nsteps: the training steps in time order (malloc'd) */
struct ft_phases_sum *ft_phases_finish(struct ft_phases *s, struct ft_pstep **steps,
				       size_t *nsteps);
void ft_phases_free(struct ft_phases *s);

/* The verdict of a loop without GPU work from its training steps' time in
 * __next__: *limit data delivery from a fifth of their time on (words.c
 * says it); 0: no training step */
int ft_phases_limit(const struct ft_phases_sum *ph, enum ft_limit *limit);
/* the training steps' share of time in __next__ (at most 1) */
double ft_phases_data_wait(const struct ft_phases_sum *ph);
/* "train" or "eval" */
const char *ft_phase_kind(const struct ft_phase *p);
/* training steps whose loader has no workers: the main process loads its data */
int ft_phases_self_loading(const struct ft_phases_sum *ph);
/* 1 when a worker that started at t is an evaluation loader's: the first
 * phase that starts at or after t is an evaluation phase (iter() forks a
 * loader's workers just before its first __next__) */
int ft_phases_eval_worker(const struct ft_phases_sum *ph, uint64_t t);
/* a phase's share of its time in __next__ */
double ft_phase_data_wait(const struct ft_phase *p);

#endif
