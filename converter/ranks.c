/*
 * ranks.c: the straggler among a job's ranks (ranks.h; docs/ANALYSES.md,
 * "Ranks"). Each rank's main process is its process with most
 * collectives (its DataLoader workers share its rank and have none). The
 * k-th collective of a communicator (numbered by first use in each
 * process) is matched across the ranks that all reached it; a rank's
 * arrival is the start of its call. Within one host the ranks share the
 * monotonic clock, so arrivals compare as they are. Memory: one arrival
 * per rank and matched collective.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "ranks.h"
#include "stats.h"

#define BIAS (1ull << 62)           /* signed values kept as unsigned for ft_median */

/* the share of matched collectives a straggler arrives last at: half with
 * 4 ranks or more, more with fewer (2 ranks: each is last half the time by
 * chance) */
static double last_share_needed(int n)
{
	return n >= 4 ? 0.5 : n == 3 ? 2.0 / 3 : 0.75;
}

void ft_ranks_build(struct ft_ranks *rk, const struct ft_rank_in *p, int n)
{
	memset(rk, 0, sizeof *rk);
	rk->straggler = -1;
	int32_t world = 0;
	for (int i = 0; i < n; i++)
		if (p[i].world >= 2 && p[i].rank >= 0 && p[i].rank < p[i].world && p[i].ncolls &&
		    p[i].world > world)
			world = p[i].world;
	if (!world)
		return;
	int *main = ft_xmalloc((size_t)world * sizeof *main);
	for (int r = 0; r < world; r++)
		main[r] = -1;
	for (int i = 0; i < n; i++) {
		if (p[i].world < 2 || p[i].rank < 0 || p[i].rank >= world || !p[i].ncolls)
			continue;
		int *m = &main[p[i].rank];
		if (*m < 0 || p[i].ncolls > p[*m].ncolls)
			*m = i;
	}
	int nr = 0;
	for (int r = 0; r < world; r++)
		nr += main[r] >= 0;
	if (nr < 2) {
		free(main);
		return;
	}
	rk->world = world;
	rk->n = nr;
	rk->r = ft_xcalloc((size_t)nr, sizeof *rk->r);
	const struct ft_rank_in **in = ft_xmalloc((size_t)nr * sizeof *in);
	for (int r = 0, j = 0; r < world; r++)
		if (main[r] >= 0) {
			rk->r[j] = (struct ft_rank_sum){ .proc = main[r], .pid = p[main[r]].pid,
							 .rank = r,
							 .colls = (uint64_t)p[main[r]].ncolls };
			in[j++] = &p[main[r]];
		}
	free(main);
	uint32_t ncomm = 0;
	for (int j = 0; j < nr; j++)
		for (int k = 0; k < in[j]->ncolls; k++)
			if (in[j]->colls[k].comm + 1 > ncomm)
				ncomm = in[j]->colls[k].comm + 1;
	rk->comms = (int)ncomm;
	/* per rank, where it stands in each collective; the spreads and intervals */
	size_t cap = 0;
	for (int j = 0; j < nr; j++)
		cap += (size_t)in[j]->ncolls;
	cap = cap / (size_t)nr + 1;                /* at most the average per rank */
	uint64_t **late = ft_xmalloc((size_t)nr * sizeof *late);
	for (int j = 0; j < nr; j++)
		late[j] = ft_xmalloc(cap * sizeof **late);
	uint64_t *spread = ft_xmalloc(cap * sizeof *spread), *gap = ft_xmalloc(cap * sizeof *gap);
	uint64_t *a = ft_xmalloc((size_t)nr * sizeof *a), *sorted = ft_xmalloc((size_t)nr * sizeof *sorted);
	int *at = ft_xmalloc((size_t)nr * sizeof *at);   /* each rank's next collective */
	size_t m = 0, ngap = 0;
	for (uint32_t c = 0; c < ncomm; c++) {
		for (int j = 0; j < nr; j++)
			at[j] = 0;
		uint64_t prev_last = 0;
		for (;;) {
			int all = 1;
			for (int j = 0; j < nr && all; j++) {
				while (at[j] < in[j]->ncolls && in[j]->colls[at[j]].comm != c)
					at[j]++;
				all = at[j] < in[j]->ncolls;
			}
			if (!all || m == cap)
				break;
			int jl = 0;
			for (int j = 0; j < nr; j++) {
				a[j] = in[j]->colls[at[j]++].start;
				sorted[j] = a[j];
				if (a[j] > a[jl])
					jl = j;
			}
			double med = ft_median(sorted, (size_t)nr);      /* sorts */
			uint64_t first = sorted[0], second = sorted[nr - 2];
			spread[m] = a[jl] - first;
			for (int j = 0; j < nr; j++)
				late[j][m] = (uint64_t)((int64_t)BIAS + (int64_t)((double)a[j] - med));
			if (a[jl] > second) {                /* one rank came last */
				rk->r[jl].last++;
				for (int j = 0; j < nr; j++)
					rk->r[jl].waited_ns += a[jl] - a[j];
			}
			if (prev_last && a[jl] > prev_last)
				gap[ngap++] = a[jl] - prev_last;
			prev_last = a[jl];
			m++;
		}
	}
	rk->matched = m;
	if (m) {
		for (int j = 0; j < nr; j++)
			rk->r[j].late_ns = (int64_t)(ft_median(late[j], m) - (double)BIAS);
		rk->spread_ns = (uint64_t)ft_median(spread, m);
	}
	if (ngap)
		rk->interval_ns = (uint64_t)ft_median(gap, ngap);
	/* the straggler: last at most collectives, late by a millisecond or
	 * more and by a twentieth of the time between collectives */
	int b = 0;
	for (int j = 1; j < nr; j++)
		if (rk->r[j].last > rk->r[b].last)
			b = j;
	const struct ft_rank_sum *s = &rk->r[b];
	if (m >= 3 && (double)s->last >= last_share_needed(nr) * (double)m &&
	    s->late_ns >= 1000000 && (uint64_t)s->late_ns * 20 >= rk->interval_ns)
		rk->straggler = b;
	for (int j = 0; j < nr; j++)
		free(late[j]);
	free(late);
	free(spread);
	free(gap);
	free(a);
	free(sorted);
	free(at);
	free(in);
}

void ft_ranks_free(struct ft_ranks *rk)
{
	free(rk->r);
	memset(rk, 0, sizeof *rk);
	rk->straggler = -1;
}
