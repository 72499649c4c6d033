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

/* The union of every stream's measured spans within [w0, w1): busy ns;
 * *covered: the part of [w0, w1) that samples cover (first sample's
 * submission to last completion), 0 when p has no samples. */
uint64_t ft_gpu_measured_busy(const struct ft_process *p, uint64_t w0, uint64_t w1,
			      uint64_t *covered);

/* The measured idle stands for the window when the samples cover half of
 * it or more; else the model's does, and the report says how little the
 * samples cover. */
#define FT_GPU_MEASURED(cover, win) ((cover) > 0 && 2 * (cover) >= (win))

/* "GPU idle 31% of the loop (measured; samples cover 98% of it)", or
 * "GPU idle 53% of the loop (modelled: no samples)" (or "...: samples cover
 * only 4% of it"): the report's line
 * from the window's modelled idle, measured busy and cover (verdict). */
void ft_gpu_idle_words(uint64_t model_idle, uint64_t mbusy, uint64_t mcover, uint64_t win,
		       char *out, size_t cap);

/* The device's idle share of a verdict's window: measured where the
 * samples cover it (returns 1; share over the covered part), else the
 * model's (returns 0); -1 when no kernel was launched. */
struct ft_verdict;
int ft_gpu_idle_share(const struct ft_verdict *v, double *share);

#endif
