/*
 * gpu_measured.h: the GPU's busy time as measured by the tracer's timing
 * events (GPU chunks, shim/gpu_time.c), per stream.
 */
#ifndef FT_GPU_MEASURED_H
#define FT_GPU_MEASURED_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* A stream's measured busy span, in trace ns. */
struct ft_gpu_span {
	uint64_t stream;         /* its key: the record value; 2 with the tid above */
	uint64_t start, end;
};

/* p's measured busy spans, sorted by stream then start (caller frees);
 * returns how many. */
int ft_gpu_measured_spans(const struct ft_process *p, struct ft_gpu_span **out);

/* The latest completion any sample saw, in trace ns (0: no samples): the
 * end of the GPU's last known work, where the model knows less. */
uint64_t ft_gpu_measured_last(const struct ft_process *p);

/* A stream's known idle gap, in trace ns: from the completion of one
 * sample to the next one's submission, no submission between (exact). */
struct ft_gpu_gap {
	uint64_t stream;         /* its key, as ft_gpu_span's */
	uint64_t g0, g1;
	int32_t tid;             /* the thread whose submission (or sync) ended it */
};

/* p's known idle gaps, sorted by their ends (caller frees); returns how
 * many. */
int ft_gpu_measured_gaps(const struct ft_process *p, struct ft_gpu_gap **out);

/* A sampled submission whose work the samples bound exactly: nothing
 * else ran on its stream between start and end, and it ran within them
 * (docs/ANALYSES.md, "Measured GPU time"). */
struct ft_gpu_kernel {
	uint64_t stream;         /* its key, as ft_gpu_span's */
	uint64_t submit;         /* its submission's call (its record's time), trace ns */
	uint64_t start, end;     /* end: its sample's completion */
	int32_t tid;             /* the submitting thread */
	int queued;              /* 1: start is the previous sample's completion (the
	                            work ahead of it); 0: its submission (the
	                            stream was idle then) */
};

/* p's exactly bounded submissions, sorted by thread then submission
 * (caller frees); returns how many. */
int ft_gpu_measured_kernels(const struct ft_process *p, struct ft_gpu_kernel **out);

/* The union of every stream's measured spans, and of the nalso intervals
 * [g0, g1) of also (NULL: none), within [w0, w1): busy ns; *covered: the
 * part of [w0, w1) that samples cover (first sample's submission to last
 * completion), 0 when p has no samples. */
uint64_t ft_gpu_measured_busy(const struct ft_process *p, uint64_t w0, uint64_t w1,
			      const struct ft_gpu_gap *also, int nalso, uint64_t *covered);

/* The measured idle stands for the window when the samples cover half of
 * it or more (docs/ANALYSES.md, "Measured GPU time": the verdict's limit,
 * its idle split and the hidden syncs' cost then stand on it); else the
 * model's does, and the report says how little the samples cover. */
#define FT_GPU_MEASURED(cover, win) ((cover) > 0 && 2 * (cover) >= (win))

/* the idle share of the time v's samples cover, a drain's return latency
 * counted busy (v->mcover_ns > 0; words.c's ft_words_gpu_idle says it) */
struct ft_verdict;
double ft_gpu_measured_idle(const struct ft_verdict *v);

/* The device's idle share of a verdict's window: measured where the
 * samples cover it (returns 1; share over the covered part), else the
 * model's (returns 0); -1 when no kernel was launched. */
int ft_gpu_idle_share(const struct ft_verdict *v, double *share);

#endif
