/*
 * stats.c: the change between two sets of runs: each side's values are
 * pooled and their means (the time per step: step periods, the loop's
 * window over its steps) or medians compared; the 95% interval of the
 * change is a percentile bootstrap that resamples runs, then values within
 * each drawn run (for the mean, blocks of consecutive steps, which are
 * correlated), so run-to-run variation counts (docs/ANALYSES.md, "diff").
 * A fixed seed: the same input gives the same interval.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "stats.h"

const char *const ft_change_word[] = { "no change", "no change resolved", "faster", "slower" };

static uint64_t next(uint64_t *s)        /* splitmix64 */
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

double ft_median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static size_t total(const struct ft_sample *s, int n)
{
	size_t t = 0;
	for (int i = 0; i < n; i++)
		t += s[i].n;
	return t;
}

/* one side's median; resampled when seed is not NULL (runs, then values) */
static double side(const struct ft_sample *s, int n, uint64_t *seed, uint64_t *buf)
{
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		const struct ft_sample *r = seed && n > 1 ? &s[next(seed) % (uint64_t)n] : &s[i];
		for (size_t j = 0; j < r->n; j++)
			buf[k++] = seed ? r->v[next(seed) % r->n] : r->v[j];
	}
	return k ? ft_median(buf, k) : 0;
}

/* the block of consecutive values a run is resampled by: sqrt(n) of them,
 * rounded up, so that a slow step every few steps (a prefetching loader
 * that waits one batch in four) is drawn with its neighbours */
static size_t block_len(size_t n)
{
	size_t b = 1;
	while (b * b < n)
		b++;
	return b;
}

/* one side's pooled mean (its values' sum over their count); resampled
 * when seed is not NULL: runs, then, within each drawn run, circular
 * blocks of consecutive values until the run's count */
static double side_mean(const struct ft_sample *s, int n, uint64_t *seed)
{
	double sum = 0;
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		const struct ft_sample *r = seed && n > 1 ? &s[next(seed) % (uint64_t)n] : &s[i];
		size_t b = seed ? block_len(r->n) : r->n, got = 0;
		while (got < r->n) {
			size_t at = seed ? next(seed) % r->n : 0;
			for (size_t j = 0; j < b && got < r->n; j++, got++)
				sum += (double)r->v[(at + j) % r->n];
		}
		k += r->n;
	}
	return k ? sum / (double)k : 0;
}

/* the interval from the sorted resampled changes d, and the verdict */
static void conclude(struct ft_change *out, double *d)
{
	qsort(d, FT_BOOT_N, sizeof *d, cmp_d);
	out->lo = d[FT_BOOT_N / 40];
	out->hi = d[FT_BOOT_N - 1 - FT_BOOT_N / 40];
	double lim = FT_NO_CHANGE * out->before;
	out->verdict = out->lo > 0 ? FT_CH_SLOWER : out->hi < 0 ? FT_CH_FASTER :
		       -out->lo <= lim && out->hi <= lim ? FT_CH_NONE : FT_CH_UNRESOLVED;
}

static double *changes(void)
{
	return ft_xmalloc(FT_BOOT_N * sizeof(double));
}

int ft_change_ci(const struct ft_sample *a, int na, const struct ft_sample *b, int nb,
		 struct ft_change *out)
{
	memset(out, 0, sizeof *out);
	size_t ta = total(a, na), tb = total(b, nb), cap = 0;
	if (!ta || !tb)
		return -1;
	/* a run drawn several times can hold more than the side's total */
	for (int i = 0; i < na; i++)
		cap = a[i].n * (size_t)na > cap ? a[i].n * (size_t)na : cap;
	for (int i = 0; i < nb; i++)
		cap = b[i].n * (size_t)nb > cap ? b[i].n * (size_t)nb : cap;
	uint64_t *buf = ft_xmalloc(cap * sizeof *buf);
	double *d = changes();
	out->before = side(a, na, NULL, buf);
	out->after = side(b, nb, NULL, buf);
	uint64_t seed = 0x5EEDF00D;
	for (int i = 0; i < FT_BOOT_N; i++) {
		double x = side(a, na, &seed, buf);
		d[i] = side(b, nb, &seed, buf) - x;
	}
	conclude(out, d);
	free(buf);
	free(d);
	return 0;
}

int ft_change_mean_ci(const struct ft_sample *a, int na, const struct ft_sample *b, int nb,
		      struct ft_change *out)
{
	memset(out, 0, sizeof *out);
	if (!total(a, na) || !total(b, nb))
		return -1;
	double *d = changes();
	out->before = side_mean(a, na, NULL);
	out->after = side_mean(b, nb, NULL);
	uint64_t seed = 0x5EEDF00D;
	for (int i = 0; i < FT_BOOT_N; i++) {
		double x = side_mean(a, na, &seed);
		d[i] = side_mean(b, nb, &seed) - x;
	}
	conclude(out, d);
	free(d);
	return 0;
}
