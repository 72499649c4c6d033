/*
 * threads.h: every thread's time account in one process (threads.c): the
 * traced time per category (whole process and within the verdict's
 * window), its launches and batches received, and its recent calls, which
 * say what it did during a launch gap. The analysis driver (analysis.c)
 * counts each event here before the analyses see it; they read it.
 */
#ifndef FT_THREADS_H
#define FT_THREADS_H

#include <stdint.h>

#include "analysis.h"

#define FT_RECENT 256                 /* per-thread calls kept for gap attribution */

struct ft_recent { uint64_t start, end; int cat; };

struct ft_thacc {
	int32_t tid;
	uint64_t first, last_end, events, launches;
	uint64_t t[FT_CAT_N];
	uint64_t ct[FT_CAT_N];       /* t clipped to the window */
	uint64_t wevents, batches, first_batch, last_batch;
	struct ft_recent ring[FT_RECENT];
	uint32_t nring, ring_head;   /* entries, next write position */
	uint64_t last_sub_end, last_sync_end;   /* gpu.c's: the thread's submissions */
	int submitted;
};

struct ft_threads;
struct ft_threads *ft_threads_new(const struct ft_an_opts *o);
void ft_threads_free(struct ft_threads *th);
/* the account of tid (made on first sight) */
struct ft_thacc *ft_thread_of(struct ft_threads *th, int32_t tid);
/* tid's account, or NULL if it never had an event */
const struct ft_thacc *ft_thread_find(const struct ft_threads *th, int32_t tid);
int ft_threads_count(const struct ft_threads *th);
const struct ft_thacc *ft_thread_at(const struct ft_threads *th, int i);

/* An event of t starts (a kind known or not): its first and last moments. */
void ft_thread_seen(struct ft_thacc *t, uint64_t ts, uint64_t end);
/* A known kind's call of category cat: its time counted (calls recorded
 * inside it, written first, give theirs back); got: it returned data. */
void ft_thread_call(struct ft_threads *th, struct ft_thacc *t, uint64_t ts, uint64_t end,
		    int cat, int got);
/* After the analyses saw it: the call joins t's recent calls. */
void ft_thread_recent(struct ft_thacc *t, uint64_t ts, uint64_t end, int cat);
/* What t did in [g0, g1): overlap of its recent calls, the rest CPU. */
void ft_thread_attribute(const struct ft_thacc *t, uint64_t g0, uint64_t g1,
			 uint64_t out[FT_CAT_N]);
/* every thread's sums, clipped to the window (malloc'd array of count) */
struct ft_thread_sum *ft_thread_sums(const struct ft_threads *th, int *count);

#endif
