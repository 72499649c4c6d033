/*
 * gpu_measured.c: the GPU's busy time from the tracer's timing events.
 * A sample says that stream S had finished everything submitted before
 * host time s at GPU time d (converted to the host clock), and how many
 * submissions S had had by then. For the samples of a stream in
 * submission order, the work ahead of sample i was all queued by s_i, so
 * the stream ran without a break from the later of s_i and d_(i-1) until
 * d_i: that span is busy (known). Between d_(i-1) and s_i, when d_(i-1) <
 * s_i, the stream idled exactly when no submission came between the two
 * samples (their submission counts say so); otherwise unsampled work ran
 * somewhere in that gap and the gap is unknown: neither busy nor idle is
 * claimed there, and the report says how much of the window the samples
 * cover. The device is busy where any stream is known busy, idle where
 * every stream active then (between its first sample's submission and its
 * last one's completion) is known idle.
 *
 * A sample bounds one submission's work exactly when that submission is
 * the only work between the sample's event and the one before it on the
 * stream: the first submission after the stream was seen idle (a sync
 * drained it, so nothing was ahead of it), or a sample whose stream had
 * exactly one submission, its own, since the previous sample. The stream
 * runs in order, so that work ran within [max(s_i, d_(i-1)), d_i].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "gpu_measured.h"
#include "util.h"

/* sync: the sample followed no submission of its own (before a sync or a
 * wait): n counts only the submissions before it */
struct smp { uint64_t key, s, d, n; int sync, idle; int32_t tid; };


static int smp_cmp(const void *x, const void *y)
{
	const struct smp *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->s < b->s ? -1 : a->s > b->s;
}

static uint64_t key_of(uint64_t stream, int32_t tid)
{
	if (stream == 2)
		return 1ull << 63 | (uint32_t)tid;
	return stream == 1 ? 0 : stream;
}

/* p's samples in ns, sorted by stream then submission (caller frees) */
static struct smp *samples(const struct ft_process *p)
{
	struct smp *v = ft_xrealloc(NULL, (size_t)p->ngpu * sizeof *v);
	for (int i = 0; i < p->ngpu; i++) {
		const struct ft_gpu_sample *g = &p->gpu[i];
		int64_t d = (int64_t)ft_ticks_to_ns(p, g->ref_ticks) + g->gpu_ns;
		v[i] = (struct smp){ key_of(g->stream, g->tid), ft_ticks_to_ns(p, g->submit_ticks),
				     d > 0 ? (uint64_t)d : 0, g->submits,
				     g->why == FT_GPU_WHY_SYNC || g->why == FT_GPU_WHY_WAIT,
				     g->why == FT_GPU_WHY_IDLE, g->tid };
	}
	qsort(v, (size_t)p->ngpu, sizeof *v, smp_cmp);
	return v;
}

int ft_gpu_measured_spans(const struct ft_process *p, struct ft_gpu_span **out)
{
	*out = NULL;
	if (!p->ngpu)
		return 0;
	struct smp *v = samples(p);
	struct ft_gpu_span *sp = ft_xrealloc(NULL, (size_t)p->ngpu * sizeof *sp);
	int n = 0;
	for (int i = 0; i < p->ngpu; i++) {
		uint64_t start = v[i].s;
		if (i > 0 && v[i - 1].key == v[i].key && v[i - 1].d > start)
			start = v[i - 1].d;
		if (v[i].d <= start)
			continue;               /* done before it was queued: nothing ran */
		if (n && sp[n - 1].stream == v[i].key && sp[n - 1].end >= start) {
			if (v[i].d > sp[n - 1].end)
				sp[n - 1].end = v[i].d;
			continue;
		}
		sp[n++] = (struct ft_gpu_span){ v[i].key, start, v[i].d };
	}
	free(v);
	*out = sp;
	return n;
}

uint64_t ft_gpu_measured_last(const struct ft_process *p)
{
	uint64_t last = 0;
	for (int i = 0; i < p->ngpu; i++) {
		int64_t d = (int64_t)ft_ticks_to_ns(p, p->gpu[i].ref_ticks) + p->gpu[i].gpu_ns;
		if (d > 0 && (uint64_t)d > last)
			last = (uint64_t)d;
	}
	return last;
}

static int gap_cmp(const void *x, const void *y)
{
	const struct ft_gpu_gap *a = x, *b = y;
	return a->g1 < b->g1 ? -1 : a->g1 > b->g1;
}

int ft_gpu_measured_gaps(const struct ft_process *p, struct ft_gpu_gap **out)
{
	*out = NULL;
	if (!p->ngpu)
		return 0;
	struct smp *v = samples(p);
	struct ft_gpu_gap *gp = ft_xrealloc(NULL, (size_t)p->ngpu * sizeof *gp);
	int n = 0;
	for (int i = 1; i < p->ngpu; i++) {
		if (v[i].key != v[i - 1].key || v[i - 1].d >= v[i].s)
			continue;
		/* no unsampled submission between the two: known idle */
		if ((int64_t)(v[i].n - v[i - 1].n) - (v[i].sync ? 0 : 1) == 0)
			gp[n++] = (struct ft_gpu_gap){ v[i].key, v[i - 1].d, v[i].s, v[i].tid };
	}
	free(v);
	qsort(gp, (size_t)n, sizeof *gp, gap_cmp);
	*out = gp;
	return n;
}

static int kernel_cmp(const void *x, const void *y)
{
	const struct ft_gpu_kernel *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->submit < b->submit ? -1 : a->submit > b->submit;
}

int ft_gpu_measured_kernels(const struct ft_process *p, struct ft_gpu_kernel **out)
{
	*out = NULL;
	if (!p->ngpu)
		return 0;
	struct smp *v = samples(p);
	struct ft_gpu_kernel *k = ft_xrealloc(NULL, (size_t)p->ngpu * sizeof *k);
	int n = 0;
	for (int i = 0; i < p->ngpu; i++) {
		int prev = i > 0 && v[i - 1].key == v[i].key;
		if (v[i].sync || !(v[i].idle || (prev && v[i].n - v[i - 1].n == 1)))
			continue;               /* follows no submission, or not alone */
		uint64_t start = v[i].s;
		int queued = prev && v[i - 1].d > start;
		if (queued)
			start = v[i - 1].d;
		if (v[i].d > start)
			k[n++] = (struct ft_gpu_kernel){ v[i].key, v[i].s, start, v[i].d, v[i].tid,
							 queued };
	}
	free(v);
	qsort(k, (size_t)n, sizeof *k, kernel_cmp);
	*out = k;
	return n;
}

/* boundaries of the sweep: +1/-1 of a stream's active range (R), of an
 * unknown gap (U), of a busy span (B) */
struct edge { uint64_t t; int r, u, b; };

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	return a->t < b->t ? -1 : a->t > b->t;
}

static void add(struct edge **e, int *n, int *cap, uint64_t t0, uint64_t t1, int r, int u, int b)
{
	if (t1 <= t0)
		return;
	if (*n + 2 > *cap)
		FT_GROW(*e, *cap, 64);
	(*e)[(*n)++] = (struct edge){ t0, r, u, b };
	(*e)[(*n)++] = (struct edge){ t1, -r, -u, -b };
}

uint64_t ft_gpu_measured_busy(const struct ft_process *p, uint64_t w0, uint64_t w1,
			      const struct ft_gpu_gap *also, int nalso, uint64_t *covered)
{
	*covered = 0;
	if (!p->ngpu)
		return 0;
	struct smp *v = samples(p);
	struct edge *e = NULL;
	int n = 0, cap = 0;
	for (int i = 0, first = 0; i < p->ngpu; i++) {
		if (i > 0 && v[i].key != v[i - 1].key)
			first = i;
		int last = i + 1 == p->ngpu || v[i + 1].key != v[i].key;
		if (last) {                     /* the stream's active range */
			uint64_t hi = 0;
			for (int k = first; k <= i; k++)
				if (v[k].d > hi)
					hi = v[k].d;
			add(&e, &n, &cap, v[first].s, hi, 1, 0, 0);
		}
		uint64_t start = v[i].s;
		if (i > first) {
			uint64_t pd = v[i - 1].d;
			if (pd > start)
				start = pd;
			/* unsampled submissions between the two: the gap is unknown */
			int64_t between = (int64_t)(v[i].n - v[i - 1].n) - (v[i].sync ? 0 : 1);
			if (pd < v[i].s && between != 0)
				add(&e, &n, &cap, pd, v[i].s, 0, 1, 0);
		}
		add(&e, &n, &cap, start, v[i].d, 0, 0, 1);
	}
	for (int i = 0; i < nalso; i++)
		add(&e, &n, &cap, also[i].g0, also[i].g1, 0, 0, 1);
	free(v);
	qsort(e, (size_t)n, sizeof *e, edge_cmp);
	uint64_t busy = 0, cover = 0;
	int r = 0, u = 0, b = 0;
	for (int i = 0; i < n; i++) {
		if (i > 0 && e[i].t > e[i - 1].t) {
			uint64_t a = e[i - 1].t < w0 ? w0 : e[i - 1].t, z = e[i].t > w1 ? w1 : e[i].t;
			if (z > a) {
				if (b > 0)
					busy += z - a;
				if (b > 0 || (r > 0 && u == 0))
					cover += z - a;
			}
		}
		r += e[i].r;
		u += e[i].u;
		b += e[i].b;
	}
	free(e);
	*covered = cover;
	return busy;
}

double ft_gpu_measured_idle(const struct ft_verdict *v)
{
	return (double)(v->mcover_ns - v->mbusy_ns - v->mdrain_ns) / (double)v->mcover_ns;
}

int ft_gpu_idle_share(const struct ft_verdict *v, double *share)
{
	*share = 0;
	if (!v->by_launch)
		return -1;
	if (v->gpu_measured) {
		*share = ft_gpu_measured_idle(v);
		return 1;
	}
	uint64_t w = v->win_end > v->win_start ? v->win_end - v->win_start : 0;
	*share = w ? (double)v->model_idle_ns / (double)w : 0;
	return 0;
}
