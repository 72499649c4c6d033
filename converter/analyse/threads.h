/*
 * threads.h: every thread's time account in one process (threads.c): the
 * traced time per category (within the verdict's window, and before it:
 * start-up), its launches and batches received, and its recent calls, which
 * say what it did during a launch gap. The analysis driver (analysis.c)
 * counts each event here before the analyses see it; they read it.
 */
#ifndef FT_THREADS_H
#define FT_THREADS_H

#include <stdint.h>

#include "analysis.h"
#include "util.h"

#define FT_RECENT 256                 /* per-thread calls kept for gap attribution */

struct ft_recent { uint64_t start, end; int cat; };
#define FT_NEXT_SPANS 8

struct ft_thacc {
	int32_t tid;
	uint64_t first, last_end, events, launches;
	uint64_t ct[FT_CAT_N];       /* traced time per category within the window */
	uint64_t pre[FT_CAT_N];      /* the same before the window (start-up) */
	uint64_t gil;                /* of ct[FT_CAT_LOCK]: waits for CPython's GIL */
	uint64_t handover;           /* of ct[FT_CAT_CPU]: pipe writes (handing data over) */
	uint64_t wevents, batches, first_batch, last_batch;
	struct ft_recent ring[FT_RECENT];
	uint32_t nring, ring_head;   /* entries, next write position */
	uint64_t last_sub_end, last_sync_end;   /* gpu.c's: the thread's submissions */
	int submitted;
	/* its DataLoader __next__ ranges (phases.h): the latest closed ones
	 * and the open one, whose untraced time is the loop loading data */
	uint64_t nx_s[FT_NEXT_SPANS], nx_e[FT_NEXT_SPANS];
	uint32_t nnx, nx_head;
	uint64_t nx_open;
	int32_t nx_level;            /* the open one's range level; -1: none open */
};

/* the accounts (threads.c; fields for ft_thread_of's fast path only) */
struct ft_threads {
	struct ft_an_opts o;         /* the window (ft_an_clip) */
	struct ft_thacc *th; int nth, capth; struct ft_map map; long last;
	int32_t tid8[8];         /* tids of th[0..7] */
};
struct ft_threads *ft_threads_new(const struct ft_an_opts *o);
void ft_threads_free(struct ft_threads *th);
/* the account of tid after a miss of ft_thread_of's fast path (made on
 * first sight) */
struct ft_thacc *ft_thread_add(struct ft_threads *th, int32_t tid);

/* the account of tid: the last one, or one of the first eight (a scan of
 * one cache line beats hashing; an account is kilobytes: its tid is not
 * scanned), else ft_thread_add */
static inline struct ft_thacc *ft_thread_of(struct ft_threads *th, int32_t tid)
{
	if (th->last >= 0 && th->th[th->last].tid == tid)
		return &th->th[th->last];
	for (int k = 0; k < th->nth && k < 8; k++)
		if (th->tid8[k] == tid) {
			th->last = k;
			return &th->th[k];
		}
	return ft_thread_add(th, tid);
}
/* tid's account, or NULL if it never had an event */
const struct ft_thacc *ft_thread_find(const struct ft_threads *th, int32_t tid);

/* An event of t starts (a kind known or not): its first and last moments. */
static inline void ft_thread_seen(struct ft_thacc *t, uint64_t ts, uint64_t end)
{
	if (!t->events)
		t->first = ts;
	t->events++;
	if (end > t->last_end)
		t->last_end = end;
}

/* the part of [s, e) before o's window (none without a window) */
static inline uint64_t ft_thread_pre(const struct ft_an_opts *o, uint64_t s, uint64_t e)
{
	if (!o->win_end || s >= o->win_start)
		return 0;
	return (e < o->win_start ? e : o->win_start) - s;
}

/* A known kind's call of category cat, in window o: its time counted
 * (calls recorded inside it, written first, give theirs back); got: it
 * returned data. */
static inline void ft_thread_call(const struct ft_an_opts *o, struct ft_thacc *t, uint64_t ts,
				  uint64_t end, int cat, int got)
{
	while (t->nring) {
		uint32_t last = (t->ring_head + FT_RECENT - 1) % FT_RECENT;
		struct ft_recent *n = &t->ring[last];
		if (n->start < ts || n->end > end)
			break;
		t->ct[n->cat] -= ft_an_clip(o, n->start, n->end);
		t->pre[n->cat] -= ft_thread_pre(o, n->start, n->end);
		t->ring_head = last;
		t->nring--;
	}
	t->ct[cat] += ft_an_clip(o, ts, end);
	t->pre[cat] += ft_thread_pre(o, ts, end);
	if (!o->win_end || (ts >= o->win_start && ts < o->win_end))
		t->wevents++;
	if (got) {
		if (!t->batches++)
			t->first_batch = end;
		if (end > t->last_batch)
			t->last_batch = end;
	}
}

/* After the analyses saw it: the call joins t's recent calls. */
static inline void ft_thread_recent(struct ft_thacc *t, uint64_t ts, uint64_t end, int cat)
{
	struct ft_recent *rc = &t->ring[t->ring_head];
	rc->start = ts;
	rc->end = end;
	rc->cat = cat;
	t->ring_head = (t->ring_head + 1) % FT_RECENT;
	if (t->nring < FT_RECENT)
		t->nring++;
}
/* A DataLoader __next__ range opens at ts on t (level: its range level),
 * or a range pop of level closes the levels from it up. */
void ft_thread_next_push(struct ft_thacc *t, uint64_t ts, int32_t level);
void ft_thread_next_pop(struct ft_thacc *t, uint64_t ts, int32_t level);
/* The end of t's recent wait for the GPU (a sync or query, a hidden sync)
 * that was on at `at`, begun at or before it; 0: none. */
uint64_t ft_thread_gpu_wait_over(const struct ft_thacc *t, uint64_t at);
/* What t did in [g0, g1): overlap of its recent calls, the rest CPU; of
 * the rest, what lies inside its __next__ ranges is waiting for data (the
 * loop loading it itself: num_workers=0's decoding and transforms). */
void ft_thread_attribute(const struct ft_thacc *t, uint64_t g0, uint64_t g1,
			 uint64_t out[FT_CAT_N]);
/* every thread's sums, clipped to the window (malloc'd array of count) */
struct ft_thread_sum *ft_thread_sums(const struct ft_threads *th, int *count);

#endif
