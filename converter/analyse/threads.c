/*
 * threads.c: every thread's time account in one process (threads.h).
 * Memory grows with threads (each keeps its last FT_RECENT calls), never
 * with events.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "analyses.h"
#include "threads.h"


struct ft_threads *ft_threads_new(const struct ft_an_opts *o)
{
	struct ft_threads *th = ft_xcalloc(1, sizeof *th);
	th->o = *o;
	th->last = -1;
	return th;
}

void ft_threads_free(struct ft_threads *th)
{
	if (!th)
		return;
	free(th->th);
	ft_map_free(&th->map);
	free(th);
}

struct ft_thacc *ft_thread_add(struct ft_threads *th, int32_t tid)
{
	long i = ft_map_get(&th->map, (uint64_t)(uint32_t)tid);
	if (i < 0) {
		if (th->nth == th->capth)
			FT_GROW(th->th, th->capth, 8);
		i = th->nth++;
		memset(&th->th[i], 0, sizeof th->th[i]);
		th->th[i].tid = tid;
		th->th[i].nx_level = -1;
		if (i < 8)
			th->tid8[i] = tid;
		ft_map_put(&th->map, (uint64_t)(uint32_t)tid, (uint32_t)i);
	}
	th->last = i;
	return &th->th[i];
}

const struct ft_thacc *ft_thread_find(const struct ft_threads *th, int32_t tid)
{
	long i = ft_map_get(&th->map, (uint64_t)(uint32_t)tid);
	return i < 0 ? NULL : &th->th[i];
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;
	return e > s ? e - s : 0;
}

/* t's time in [a0, a1) inside its __next__ ranges (the open one up to a1) */
static uint64_t in_next(const struct ft_thacc *t, uint64_t a0, uint64_t a1)
{
	uint64_t n = t->nx_level >= 0 ? overlap(a0, a1, t->nx_open, a1) : 0;
	for (uint32_t k = 0; k < t->nnx; k++)
		n += overlap(a0, a1, t->nx_s[k], t->nx_e[k]);
	return n;
}

/* of [g0, g1), the time inside t's __next__ ranges not in a recent call */
static uint64_t next_untraced(const struct ft_thacc *t, uint64_t g0, uint64_t g1)
{
	uint64_t inside = in_next(t, g0, g1);
	if (!inside)
		return 0;
	uint64_t traced = 0;
	for (uint32_t k = 0; k < t->nring; k++) {
		const struct ft_recent *r = &t->ring[(t->ring_head + FT_RECENT - 1 - k) % FT_RECENT];
		if (r->end <= g0)
			break;
		uint64_t s = r->start > g0 ? r->start : g0, e = r->end < g1 ? r->end : g1;
		if (e > s)
			traced += in_next(t, s, e);
	}
	return inside > traced ? inside - traced : 0;
}

void ft_thread_attribute(const struct ft_thacc *t, uint64_t g0, uint64_t g1,
			 uint64_t out[FT_CAT_N])
{
	memset(out, 0, FT_CAT_N * sizeof *out);
	uint64_t covered_from = g1, traced = 0;
	uint32_t n = t->nring;
	for (uint32_t k = 0; k < n; k++) {
		const struct ft_recent *r = &t->ring[(t->ring_head + FT_RECENT - 1 - k) % FT_RECENT];
		if (r->end <= g0)
			break;
		uint64_t s = r->start > g0 ? r->start : g0, e = r->end < g1 ? r->end : g1;
		if (e > s) {
			out[r->cat] += e - s;
			traced += e - s;
		}
		covered_from = r->start > g0 ? r->start : g0;
		if (k + 1 == n && n == FT_RECENT && r->start > g0)
			covered_from = r->start;   /* older calls were evicted */
	}
	uint64_t gap = g1 - g0;
	if (n == FT_RECENT && covered_from > g0 && g1 > covered_from) {
		/* extrapolate the evicted part with the covered part's mix */
		double scale = (double)gap / (double)(g1 - covered_from);
		traced = 0;
		for (int c = 0; c < FT_CAT_N; c++) {
			out[c] = (uint64_t)((double)out[c] * scale);
			traced += out[c];
		}
	}
	out[FT_CAT_CPU] += gap > traced ? gap - traced : 0;
	uint64_t moved = next_untraced(t, g0, g1);
	if (moved > out[FT_CAT_CPU])
		moved = out[FT_CAT_CPU];
	out[FT_CAT_CPU] -= moved;
	out[FT_CAT_DATA] += moved;
}

uint64_t ft_thread_gpu_wait_over(const struct ft_thacc *t, uint64_t at)
{
	for (uint32_t k = 0; k < t->nring; k++) {
		const struct ft_recent *r = &t->ring[(t->ring_head + FT_RECENT - 1 - k) % FT_RECENT];
		if (r->end <= at)
			break;
		if (r->start <= at && (r->cat == FT_CAT_GPU_WAIT || r->cat == FT_CAT_HIDDEN))
			return r->end;
	}
	return 0;
}

void ft_thread_next_push(struct ft_thacc *t, uint64_t ts, int32_t level)
{
	if (t->nx_level < 0 || level < t->nx_level) {
		t->nx_open = ts;
		t->nx_level = level;
	}
}

void ft_thread_next_pop(struct ft_thacc *t, uint64_t ts, int32_t level)
{
	if (t->nx_level < 0 || level < 0 || t->nx_level < level)
		return;
	t->nx_s[t->nx_head] = t->nx_open;
	t->nx_e[t->nx_head] = ts;
	t->nx_head = (t->nx_head + 1) % FT_NEXT_SPANS;
	if (t->nnx < FT_NEXT_SPANS)
		t->nnx++;
	t->nx_level = -1;
}

struct ft_thread_sum *ft_thread_sums(const struct ft_threads *th, int *count)
{
	struct ft_thread_sum *v = ft_xcalloc((size_t)th->nth, sizeof *v);
	for (int i = 0; i < th->nth; i++) {
		const struct ft_thacc *t = &th->th[i];
		struct ft_thread_sum *o = &v[i];
		o->tid = t->tid;
		o->launches = t->launches;
		o->events = t->wevents;
		o->first = t->first;
		o->last_end = t->last_end;
		o->wall = ft_an_clip(&th->o, t->first, t->last_end);
		memcpy(o->t, t->ct, sizeof o->t);
		memcpy(o->pre, t->pre, sizeof o->pre);
		o->gil = t->gil;
		o->handover = t->handover;
		o->batches = t->batches;
		o->first_batch = t->first_batch;
		o->last_batch = t->last_batch;
	}
	*count = th->nth;
	return v;
}
