/*
 * ranges.h: user ranges and marks (NVTX, feedtrace_range_push) as timeline
 * slices and instants (ranges.c), for convert.c.
 */
#ifndef FT_RANGES_H
#define FT_RANGES_H

#include <stdint.h>

#include "pipeline.h"
#include "reader.h"

/* 1 for the kinds ranges.c draws (RANGE_PUSH, _POP, _START, _END, MARK) */
int ft_ranges_kind(unsigned kind);

struct ft_ranges;
/* slices (may be NULL) counts the slices written */
struct ft_ranges *ft_ranges_new(struct ft_pipe *pl, const struct ft_process *p, uint64_t proc_id,
				int64_t ts_shift, uint64_t *slices);
/* a range or mark event of the thread whose track is thread_track */
void ft_ranges_event(struct ft_ranges *r, const struct ft_event *ev, uint64_t thread_track);
/* closes what is still open at end_ts (or the last range event, if later) */
void ft_ranges_finish(struct ft_ranges *r, uint64_t end_ts);
void ft_ranges_free(struct ft_ranges *r);

#endif
