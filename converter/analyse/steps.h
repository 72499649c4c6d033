/*
 * steps.h: training steps from user ranges (docs/ANALYSES.md, "Steps"):
 * which ranges are steps, how long each took, and what happened inside
 * them; without ranges, the optimizer steps of the training phases
 * (phases.h), else the batches a thread receives (steps.c). Fed by
 * analysis.c with every event of a process in start order (ft_an_steps).
 */
#ifndef FT_STEPS_H
#define FT_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define FT_STEP_DEFAULT "step"

/* 1 if a range named name is a step for prefix (case-insensitive prefix) */
int ft_step_name(const char *name, const char *prefix);

struct ft_steps;
struct ft_steps_result {
	uint64_t steps, step_ns, median_ns;   /* closed steps, their summed and median length */
	uint64_t launches, hidden, reads;     /* started while a step was open */
	uint64_t first_ns, last_end_ns;       /* first closed step's start, last one's end */
	uint64_t warmup_steps, warmup_end_ns; /* leading steps > FT_WARMUP_X x the median, the last one's end */
	int from_batches;                     /* no step range: one step per batch received */
	int from_optimizer;                   /* no step range: one step per optimizer step
	                                         of a training phase (phases.h) */
	struct ft_phases_sum *phases;         /* the loop's phases (NULL: none); malloc'd,
	                                         the caller's after ft_steps_finish */
	int32_t batch_tid;                    /* the thread that received them */
	int32_t step_tid;                     /* the thread whose ranges or batches the
	                                         steps are (0: async ranges only) */
};

/* A leading step longer than this many medians is warm-up (lazy module
 * loading, autotuning, allocator growth: 34x on a real H100 PyTorch run);
 * at most a quarter of the steps, and only from FT_WARMUP_MIN steps on. */
#define FT_WARMUP_X 3
#define FT_WARMUP_MIN 5

struct ft_steps *ft_steps_new(const struct ft_process *p, const char *prefix);
/* every event; launch/hidden/read: what kind of call it is (ft_an_info) */
void ft_steps_event(struct ft_steps *s, const struct ft_event *ev, int launch, int hidden,
		    int read);
/* the closed steps' lengths in closing order (before ft_steps_finish), malloc'd */
uint64_t *ft_steps_lengths(struct ft_steps *s, size_t *n);
/* each closed step's period in start order: from its start to the next
 * step's start, the last one's its length; they add up to the window from
 * the first start to the last end (the loop's time, what lies between
 * steps included). Optimizer steps (from_optimizer): their lengths, which
 * tile the training phases, evaluation passes left out. Call after
 * ft_steps_lengths, before ft_steps_finish; malloc'd */
uint64_t *ft_steps_periods(struct ft_steps *s, size_t *n);
void ft_steps_finish(struct ft_steps *s, struct ft_steps_result *out);
void ft_steps_free(struct ft_steps *s);

#endif
