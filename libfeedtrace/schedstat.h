/*
 * schedstat.h: threads' run-queue delay samples for the flusher (schedstat.c).
 */
#ifndef FT_SCHEDSTAT_H
#define FT_SCHEDSTAT_H

#include <stdint.h>

#include "format.h"

struct ft_thread;

struct ft_sched_batch {
	struct ft_sched_sample s[64];
	unsigned n;
};

/* one sample of t into b: read now, or (exited) the value of its exit */
void ft_sched_sample(struct ft_sched_batch *b, const struct ft_thread *t);  /* a live one */
void ft_sched_add(struct ft_sched_batch *b, int32_t tid, uint64_t ticks, uint64_t wait_ns);
/* b's samples as one SCHED chunk */
void ft_sched_write(struct ft_sched_batch *b);

#endif
