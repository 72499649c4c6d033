/*
 * ranks.c: the straggler among a job's ranks (ranks.h; docs/ANALYSES.md,
 * "Ranks"). Each rank's main process is its process with most
 * collectives (its DataLoader workers share its rank and have none). The
 * k-th collective of a communicator (numbered by first use in each
 * process) is matched across the ranks that all reached it; a rank's
 * arrival is the start of its call. Ranks of one host share the monotonic
 * clock and compare as recorded; another host's times are moved onto the
 * first host's clock by the offset of their wall clocks, refined, when the
 * collectives block until every rank arrived, by the instant the ranks
 * leave them (the same on every rank). A rank may list a sample of its
 * collectives (a summary keeps every s-th, s a power of two: ranksum.c);
 * the ranks are then matched on the largest s. Memory: one index per rank
 * and matched collective.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "ranks.h"
#include "stats.h"

#define BIAS (1ull << 52)           /* signed values kept as unsigned for ft_median (a
                                     * double holds every integer up to 2^53: exact) */
#define BLOCKING_NS 100000          /* a call that long waited for the other ranks */

/* the share of matched collectives a straggler arrives last at, or of the
 * others' waiting it makes: half with 4 ranks or more, more with fewer (2
 * ranks: each is last half the time by chance) */
static double last_share_needed(int n)
{
	return n >= 4 ? 0.5 : n == 3 ? 2.0 / 3 : 0.75;
}

static double median_signed(uint64_t *v, size_t n)
{
	return ft_median(v, n) - (double)BIAS;
}

static uint64_t biased(double x)
{
	return (uint64_t)((int64_t)BIAS + (int64_t)x);
}

/* The matched collectives: m rows of nr indices, row k the k-th matched
 * collective of a communicator on every rank (malloc'd). A rank whose list
 * keeps every s-th collective (s divides the common stride) skips those
 * between the stride's multiples. */
static int *match(const struct ft_rank_in **in, int nr, uint32_t ncomm, unsigned stride,
		  size_t *m_out)
{
	size_t cap = 0;
	for (int j = 0; j < nr; j++)
		cap += (size_t)in[j]->ncolls;
	cap = cap / (size_t)nr + 1;                /* at most the average per rank */
	int *rows = ft_xmalloc(cap * (size_t)nr * sizeof *rows);
	int *at = ft_xmalloc((size_t)nr * sizeof *at);   /* each rank's next collective */
	uint64_t *seq = ft_xmalloc((size_t)nr * sizeof *seq);  /* its number in the communicator */
	size_t m = 0;
	for (uint32_t c = 0; c < ncomm; c++) {
		for (int j = 0; j < nr; j++)
			at[j] = 0, seq[j] = 0;
		for (;;) {
			int all = 1;
			for (int j = 0; j < nr && all; j++) {
				const struct ft_rank_in *x = in[j];
				uint64_t s = x->stride > 1 ? x->stride : 1;
				for (; at[j] < x->ncolls; at[j]++) {
					if (x->colls[at[j]].comm != c)
						continue;
					if (seq[j] * s % stride == 0)
						break;
					seq[j]++;
				}
				all = at[j] < x->ncolls;
			}
			if (!all || m == cap)
				break;
			for (int j = 0; j < nr; j++) {
				rows[m * (size_t)nr + (size_t)j] = at[j]++;
				seq[j]++;
			}
			m++;
		}
	}
	free(at);
	free(seq);
	*m_out = m;
	return rows;
}

/* Each host's clock against the first one's: wall clocks, then, when the
 * collectives block, the median over them of how far apart the host's
 * ranks and the reference host's ranks leave (their medians). */
static void align(struct ft_ranks *rk, const struct ft_rank_in **in, const int *rows, size_t m)
{
	int nr = rk->n;
	const struct ft_rank_in *ref = in[0];
	for (int h = 0; h < rk->nhosts; h++)
		for (int j = 0; j < nr; j++)
			if (rk->r[j].host == h) {
				rk->hosts[h].wall_ns = in[j]->wall_ns - ref->wall_ns;
				break;
			}
	if (rk->nhosts < 2 || !m)
		return;
	size_t blocking = 0;
	for (size_t k = 0; k < m; k++) {
		uint64_t longest = 0;
		for (int j = 0; j < nr; j++) {
			const struct ft_coll *c = &in[j]->colls[rows[k * (size_t)nr + (size_t)j]];
			if (c->end - c->start > longest)
				longest = c->end - c->start;
		}
		blocking += longest >= BLOCKING_NS;
	}
	if (blocking * 2 < m)
		return;                          /* asynchronous calls: wall clocks only */
	rk->refined = 1;
	/* the ranks of each host, grouped once: order[first[h] .. first[h+1]) */
	int *first = ft_xcalloc((size_t)rk->nhosts + 1, sizeof *first);
	int *order = ft_xmalloc((size_t)nr * sizeof *order);
	for (int j = 0; j < nr; j++)
		first[rk->r[j].host + 1]++;
	for (int h = 0; h < rk->nhosts; h++)
		first[h + 1] += first[h];
	int *fill = ft_xmalloc((size_t)rk->nhosts * sizeof *fill);
	memcpy(fill, first, (size_t)rk->nhosts * sizeof *fill);
	for (int j = 0; j < nr; j++)
		order[fill[rk->r[j].host]++] = j;
	free(fill);
	uint64_t *d = ft_xmalloc(m * sizeof *d), *side = ft_xmalloc((size_t)nr * sizeof *side);
	double *la = ft_xmalloc(m * sizeof *la);
	for (int h = 0; h < rk->nhosts; h++) {
		for (size_t k = 0; k < m; k++) {
			const int *row = rows + k * (size_t)nr;
			size_t na = 0;
			for (int i = first[h]; i < first[h + 1]; i++)
				side[na++] = in[order[i]]->colls[row[order[i]]].end;
			double l = ft_median(side, na);
			if (h == 0)
				la[k] = l;              /* the reference host's leaving */
			else
				d[k] = biased(la[k] - (l + (double)rk->hosts[h].wall_ns));
		}
		if (h == 0)
			continue;
		double fix = median_signed(d, m);
		rk->hosts[h].fix_ns = (int64_t)fix;
		for (size_t k = 0; k < m; k++) {
			double dev = (double)d[k] - (double)BIAS - fix;
			d[k] = (uint64_t)(dev < 0 ? -dev : dev);
		}
		rk->hosts[h].err_ns = (uint64_t)ft_median(d, m);
	}
	free(la);
	free(first);
	free(order);
	free(d);
	free(side);
}

/* its collectives, whether its list holds them all or a sample */
static uint64_t colls_of(const struct ft_rank_in *p)
{
	return p->total ? p->total : (uint64_t)p->ncolls;
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
		if (*m < 0 || colls_of(&p[i]) > colls_of(&p[*m]))
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
	rk->hosts = ft_xcalloc((size_t)nr, sizeof *rk->hosts);
	const struct ft_rank_in **in = ft_xmalloc((size_t)nr * sizeof *in);
	for (int r = 0, j = 0; r < world; r++) {
		if (main[r] < 0)
			continue;
		const struct ft_rank_in *x = &p[main[r]];
		int h = 0;
		while (h < rk->nhosts && strcmp(rk->hosts[h].name, x->host ? x->host : ""))
			h++;
		if (h == rk->nhosts)
			rk->hosts[rk->nhosts++].name = x->host ? x->host : "";
		rk->hosts[h].ranks++;
		rk->r[j] = (struct ft_rank_sum){ .proc = main[r], .pid = x->pid, .rank = r, .host = h,
						 .colls = colls_of(x) };
		in[j++] = x;
	}
	free(main);
	rk->stride = 1;
	for (int j = 0; j < nr; j++)
		if (in[j]->stride > rk->stride)
			rk->stride = in[j]->stride;
	uint32_t ncomm = 0;
	for (int j = 0; j < nr; j++)
		for (int k = 0; k < in[j]->ncolls; k++)
			if (in[j]->colls[k].comm + 1 > ncomm)
				ncomm = in[j]->colls[k].comm + 1;
	rk->comms = (int)ncomm;
	size_t m;
	int *rows = match(in, nr, ncomm, rk->stride, &m);
	rk->matched = m;
	align(rk, in, rows, m);
	/* per matched collective, on the first host's clock */
	size_t mm = m ? m : 1;
	uint64_t **late = ft_xmalloc((size_t)nr * sizeof *late);
	for (int j = 0; j < nr; j++)
		late[j] = ft_xmalloc(mm * sizeof **late);
	uint64_t *spread = ft_xmalloc(mm * sizeof *spread), *gap = ft_xmalloc(mm * sizeof *gap);
	uint64_t *a = ft_xmalloc((size_t)nr * sizeof *a), *sorted = ft_xmalloc((size_t)nr * sizeof *sorted);
	size_t ngap = 0;
	uint64_t prev_last = 0;
	uint32_t prev_comm = ~0u;
	for (size_t k = 0; k < m; k++) {
		int jl = 0;
		uint32_t comm = 0;
		for (int j = 0; j < nr; j++) {
			const struct ft_coll *c = &in[j]->colls[rows[k * (size_t)nr + (size_t)j]];
			const struct ft_rank_host *h = &rk->hosts[rk->r[j].host];
			a[j] = (uint64_t)((int64_t)c->start + h->wall_ns + h->fix_ns);
			sorted[j] = a[j];
			comm = c->comm;
			if (a[j] > a[jl])
				jl = j;
		}
		double med = ft_median(sorted, (size_t)nr);      /* sorts */
		uint64_t first = sorted[0], second = sorted[nr - 2];
		spread[k] = a[jl] - first;
		for (int j = 0; j < nr; j++)
			late[j][k] = biased((double)a[j] - med);
		if (a[jl] > second) {                /* one rank came last */
			rk->r[jl].last++;
			for (int j = 0; j < nr; j++)   /* a sample stands for stride collectives */
				rk->r[jl].waited_ns += (a[jl] - a[j]) * rk->stride;
		}
		if (comm == prev_comm && a[jl] > prev_last)
			gap[ngap++] = (a[jl] - prev_last) / rk->stride;
		prev_last = a[jl];
		prev_comm = comm;
	}
	if (m) {
		for (int j = 0; j < nr; j++)
			rk->r[j].late_ns = (int64_t)median_signed(late[j], m);
		rk->spread_ns = (uint64_t)ft_median(spread, m);
	}
	if (ngap)
		rk->interval_ns = (uint64_t)ft_median(gap, ngap);
	/* the straggler: the rank the others waited for most, last at that
	 * share of the collectives or making that share of all the waiting (a
	 * short trace's start-up collectives, arrivals by chance, weigh as
	 * much as its steps' in the count, little in the time), and late by a
	 * millisecond or more and by a twentieth of the time between
	 * collectives */
	int b = 0;
	uint64_t waited = 0;
	for (int j = 0; j < nr; j++) {
		waited += rk->r[j].waited_ns;
		if (rk->r[j].waited_ns > rk->r[b].waited_ns ||
		    (rk->r[j].waited_ns == rk->r[b].waited_ns && rk->r[j].last > rk->r[b].last))
			b = j;
	}
	const struct ft_rank_sum *s = &rk->r[b];
	double need = last_share_needed(nr);
	if (m >= 3 && ((double)s->last >= need * (double)m ||
		       (double)s->waited_ns >= need * (double)waited) &&
	    s->late_ns >= 1000000 && (uint64_t)s->late_ns * 20 >= rk->interval_ns)
		rk->straggler = b;
	for (int j = 0; j < nr; j++)
		free(late[j]);
	free(late);
	free(spread);
	free(gap);
	free(a);
	free(sorted);
	free(rows);
	free(in);
}

void ft_ranks_free(struct ft_ranks *rk)
{
	free(rk->r);
	free(rk->hosts);
	memset(rk, 0, sizeof *rk);
	rk->straggler = -1;
}
