/*
 * gpu_measured.c: the GPU's busy time from the tracer's timing events.
 * A sample says that stream S had finished everything submitted before
 * host time s at GPU time d (converted to the host clock). For the
 * samples of a stream in submission order, the work ahead of sample i was
 * all queued by s_i, so the stream ran without a break from the later of
 * s_i and d_(i-1) until d_i: that span is busy. Between d_(i-1) and s_i,
 * when d_(i-1) < s_i, it idled, except for work submitted after sample
 * i-1 and not sampled (at most one FEEDTRACE_GPU_MS of submissions: the
 * error the interval bounds). Exact where the design says so: a stream
 * drained before a sync (the sync's sample) or seen idle (the next
 * submission's sample).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "gpu_measured.h"
#include "util.h"

struct smp { uint64_t key, s, d; };

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

int ft_gpu_measured_spans(const struct ft_process *p, struct ft_gpu_span **out)
{
	*out = NULL;
	if (!p->ngpu)
		return 0;
	struct smp *v = ft_xrealloc(NULL, (size_t)p->ngpu * sizeof *v);
	for (int i = 0; i < p->ngpu; i++) {
		const struct ft_gpu_sample *g = &p->gpu[i];
		int64_t d = (int64_t)ft_ticks_to_ns(p, g->ref_ticks) + g->gpu_ns;
		v[i] = (struct smp){ key_of(g->stream, g->tid), ft_ticks_to_ns(p, g->submit_ticks),
				     d > 0 ? (uint64_t)d : 0 };
	}
	qsort(v, (size_t)p->ngpu, sizeof *v, smp_cmp);
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

static int span_cmp(const void *x, const void *y)
{
	const struct ft_gpu_span *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

uint64_t ft_gpu_measured_busy(const struct ft_process *p, uint64_t w0, uint64_t w1,
			      uint64_t *covered)
{
	struct ft_gpu_span *sp;
	int n = ft_gpu_measured_spans(p, &sp);
	*covered = 0;
	if (!n) {
		free(sp);
		return 0;
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < p->ngpu; i++) {
		uint64_t s = ft_ticks_to_ns(p, p->gpu[i].submit_ticks);
		int64_t d = (int64_t)ft_ticks_to_ns(p, p->gpu[i].ref_ticks) + p->gpu[i].gpu_ns;
		if (s < lo)
			lo = s;
		if (d > 0 && (uint64_t)d > hi)
			hi = (uint64_t)d;
	}
	if (lo < w0)
		lo = w0;
	if (hi > w1)
		hi = w1;
	*covered = hi > lo ? hi - lo : 0;
	qsort(sp, (size_t)n, sizeof *sp, span_cmp);
	uint64_t busy = 0, cur0 = 0, cur1 = 0;
	for (int i = 0; i <= n; i++) {
		if (i < n && sp[i].start <= cur1) {
			if (sp[i].end > cur1)
				cur1 = sp[i].end;
			continue;
		}
		uint64_t a = cur0 < w0 ? w0 : cur0, b = cur1 > w1 ? w1 : cur1;
		if (b > a)
			busy += b - a;
		if (i < n) {
			cur0 = sp[i].start;
			cur1 = sp[i].end;
		}
	}
	free(sp);
	return busy;
}

void ft_gpu_idle_words(uint64_t model_idle, uint64_t mbusy, uint64_t mcover, uint64_t win,
		       char *out, size_t cap)
{
	double w = win ? (double)win : 1.0;
	if (mcover && mbusy <= mcover)
		snprintf(out, cap, "GPU idle %.0f%% of the loop (measured; samples cover %.0f%% of "
			 "it; the model said %.0f%%)", 100.0 * (double)(mcover - mbusy) / (double)mcover,
			 100.0 * (double)mcover / w, 100.0 * (double)model_idle / w);
	else
		snprintf(out, cap, "GPU idle %.0f%% of the loop (modelled: no samples)",
			 100.0 * (double)model_idle / w);
}

int ft_gpu_idle_share(const struct ft_verdict *v, double *share)
{
	*share = 0;
	if (!v->by_launch)
		return -1;
	if (v->mcover_ns && v->mbusy_ns <= v->mcover_ns) {
		*share = (double)(v->mcover_ns - v->mbusy_ns) / (double)v->mcover_ns;
		return 1;
	}
	uint64_t w = v->win_end > v->win_start ? v->win_end - v->win_start : 0;
	*share = w ? (double)v->idle_ns / (double)w : 0;
	return 0;
}
