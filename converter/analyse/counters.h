/*
 * counters.h: the per-bin counters of one process (counters.c): the
 * analyses add to v[] and out_total as events come (gpu.c, reads.c), and
 * analysis.c moves the bins on with ft_counters_at.
 */
#ifndef FT_COUNTERS_H
#define FT_COUNTERS_H

#include <stdint.h>

#include "analysis.h"

struct ft_counters {
	uint64_t bin_ns;
	struct ft_an_sink sink;
	int64_t v[FT_CTR_N];          /* the current bin's values */
	int64_t shown[FT_CTR_N];      /* the last value handed on, per counter */
	uint64_t out_total;           /* submissions outstanding now */
	uint64_t out_max;             /* ... at most in the current bin */
	uint64_t bin;
	int have_bin;
	uint64_t bin_end;             /* (bin + 1) * bin_ns, or lower: no division per event */
};

void ft_counters_init(struct ft_counters *c, uint64_t bin_ns, const struct ft_an_sink *sink);
/* an event starts at ts: bins before it are closed */
void ft_counters_at(struct ft_counters *c, uint64_t ts);
/* the last bin closed, rates back to 0 after it */
void ft_counters_finish(struct ft_counters *c);

#endif
