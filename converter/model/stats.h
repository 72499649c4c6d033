/*
 * stats.h: the change between two sets of runs (stats.c): the pooled
 * mean or median of each side and a 95% interval of the change by a
 * two-level bootstrap with a fixed seed (docs/ANALYSES.md, "diff").
 */
#ifndef FT_STATS_H
#define FT_STATS_H

#include <stddef.h>
#include <stdint.h>

struct ft_sample { const uint64_t *v; size_t n; };   /* one run's values */

enum { FT_CH_NONE, FT_CH_UNRESOLVED, FT_CH_FASTER, FT_CH_SLOWER };
extern const char *const ft_change_word[];         /* "no change", ... */

struct ft_change {
	double before, after;     /* pooled means or medians */
	double lo, hi;            /* 95% interval of after - before */
	int verdict;              /* FT_CH_* */
};

#define FT_BOOT_N 2000
#define FT_NO_CHANGE 0.02     /* "no change": the interval within +-2% of before */

/* the median of v[0..n) (n > 0), sorting v */
double ft_median(uint64_t *v, size_t n);

/* the change of the pooled medians: 0, or -1 when a side has no value */
int ft_change_ci(const struct ft_sample *a, int na, const struct ft_sample *b, int nb,
		 struct ft_change *out);

/* the same for the pooled means, each run resampled by blocks of
 * consecutive values (correlated steps); 0, or -1 */
int ft_change_mean_ci(const struct ft_sample *a, int na, const struct ft_sample *b, int nb,
		      struct ft_change *out);

#endif
