/*
 * verdict.c: one process's verdict (docs/ANALYSES.md, "The verdict"):
 * which feed limits its feeding threads, from what the analyses left in
 * the context: the threads' time accounts (threads.c), the device's busy
 * and idle time and why the streams idled (gpu.c), the launching threads'
 * lock waits (locks.c), the steps (steps.c) and, for a PyTorch loop, its
 * training steps' time in __next__ (phases.c). It decides the limit and
 * which sentence says it (v->say); words.c words it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses.h"
#include "phases.h"
#include "cmdline.h"

void ft_verdict_free(struct ft_verdict *v)
{
	free(v->ths);
	v->ths = NULL;
	v->nths = 0;
	free(v->colls);
	v->colls = NULL;
	v->ncolls = 0;
	free(v->forked);
	v->forked = NULL;
	free(v->phases);
	v->phases = NULL;
	v->nforked = 0;
}

/* The process's verdict (docs/ANALYSES.md, "The verdict"): about its
 * feeding threads (those that launch kernels; without launches, those that
 * received batches), within the window. */

void ft_verdict_of(const struct ft_an_ctx *cx, struct ft_verdict *v)
{
	const struct ft_an_out *out = &cx->out;
	const struct ft_steps_result *sr = &out->sr;
	memset(v, 0, sizeof *v);
	v->ths = ft_thread_sums(cx->th, &v->nths);
	for (int i = 0; i < v->nths; i++)
		v->batches += v->ths[i].batches;
	v->first_step = sr->steps ? sr->first_ns : 0;
	v->last_step_end = sr->steps ? sr->last_end_ns : 0;
	if (sr->from_optimizer && sr->phases && sr->phases->win_steps) {
		/* one training phase, no evaluation pass between two (phases.h) */
		v->first_step = sr->phases->win_start;
		v->last_step_end = sr->phases->win_end;
	}
	v->warmup_steps = sr->warmup_steps;
	v->warmup_end = sr->warmup_end_ns;
	v->batch_tid = sr->from_batches ? sr->batch_tid : 0;
	v->first_launch = out->first_launch;
	v->loop_launch = out->loop_launch;
	v->launches_before = out->launches_before;
	v->lock_union = out->lock_union;
	v->win_start = cx->o.win_end ? cx->o.win_start : cx->first_ts;
	v->win_end = cx->o.win_end ? cx->o.win_end : cx->last_end;
	v->basis = FT_BASIS_THREAD_TIME;
	/* each thread's run-queue delay in the window, from its SCHED samples:
	 * the part of its untraced time it was runnable, waiting for a core,
	 * a category of its own (FT_CAT_RUNQ) */
	for (int i = 0; i < v->nths; i++) {
		struct ft_thread_sum *t = &v->ths[i];
		uint64_t a = t->first > v->win_start ? t->first : v->win_start;
		uint64_t b = t->last_end < v->win_end ? t->last_end : v->win_end;
		int64_t q = b > a ? ft_thread_runq_ns(cx->p, t->tid, a, b) : -1;
		uint64_t traced = 0;
		for (int c = 0; c < FT_CAT_N; c++)
			traced += t->t[c];
		uint64_t untraced = t->wall > traced ? t->wall - traced : 0;
		t->t[FT_CAT_RUNQ] = q <= 0 ? 0 : (uint64_t)q < untraced ? (uint64_t)q : untraced;
	}
	/* without launches, the threads that received most batches (at least
	 * half as many as the most): not idle pools woken now and then */
	uint64_t maxb = 0;
	for (int i = 0; i < v->nths; i++) {
		if (v->ths[i].launches)
			v->by_launch = 1;
		if (v->ths[i].batches > maxb)
			maxb = v->ths[i].batches;
	}
	/* without launches, a training loop's thread (its step ranges, or the
	 * DataLoader batches its steps are) that receives batches is the one
	 * feeder: not a rendezvous server receiving on sockets (TCPStore);
	 * when no thread receives batches, the thread of the step ranges is
	 * (a loop that loads its data itself: DataLoader with no workers) */
	int32_t loop = 0;
	for (int i = 0; i < v->nths && !v->by_launch && sr->steps; i++)
		if (v->ths[i].tid == sr->step_tid && (v->ths[i].batches || !maxb))
			loop = sr->step_tid;
	/* without steps, a CPython program's loop runs on its main thread: when
	 * that receives batches, it is the one feeder. Threads feeding it
	 * through a queue.Queue also "receive" (the wait that ends when the
	 * loop takes an item from a full queue), more often than the loop when
	 * it is slow: they are its producers, not feeders */
	int python = ft_is_python(*cx->p->cmdline ? cx->p->cmdline : cx->p->exe);
	for (int i = 0; i < v->nths && !v->by_launch && !sr->steps && python; i++)
		if (v->ths[i].tid == cx->p->hdr.pid && v->ths[i].batches)
			loop = cx->p->hdr.pid;
	v->loop_tid = loop;
	for (int i = 0; i < v->nths; i++) {
		const struct ft_thread_sum *t = &v->ths[i];
		if (loop ? t->tid != loop
			 : v->by_launch ? !t->launches : !t->batches || t->batches * 2 < maxb)
			continue;
		if (!v->by_launch) {
			if (!v->first_batch || t->first_batch < v->first_batch)
				v->first_batch = t->first_batch;
			if (t->last_batch > v->last_batch)
				v->last_batch = t->last_batch;
		}
		if (v->nfeeders < 8)
			v->feeder[v->nfeeders] = t->tid;
		v->nfeeders++;
		uint64_t wall = t->wall, traced = 0;
		for (int c = 0; c < FT_CAT_N; c++)
			if (c != FT_CAT_CPU)
				traced += t->t[c], v->t[c] += t->t[c];
		v->gil_ns += t->gil;
		uint64_t cpu = t->t[FT_CAT_CPU];
		v->t[FT_CAT_CPU] += cpu + (wall > traced + cpu ? wall - traced - cpu : 0);
		v->wall_ns += wall > traced + cpu ? wall : traced + cpu;
	}
	if (v->by_launch) {                  /* the device's evidence (gpu.c) */
		v->busy_ns = out->busy_ns;
		v->idle_ns = out->idle_ns;
		v->model_busy_ns = out->model_busy_ns;
		v->model_idle_ns = out->model_idle_ns;
		v->mbusy_ns = out->mbusy_ns;
		v->mcover_ns = out->mcover_ns;
		v->mdrain_ns = out->mdrain_ns;
		v->gpu_measured = out->measured;
		v->last_gpu_end = out->last_gpu_end;
		uint64_t sum = 0;
		for (int c = 0; c < FT_CAT_N; c++)
			sum += v->sidle[c] = out->sidle[c];
		for (int c = 0; c < FT_CAT_N && sum; c++)
			v->idle_by_feed[c] = (uint64_t)((double)v->idle_ns * (double)out->sidle[c] / (double)sum + 0.5);
		v->sidle_den = out->sidle_den;
	}
	double w = v->wall_ns ? (double)v->wall_ns : 1.0;
	double sh[FT_CAT_N];
	for (int c = 0; c < FT_CAT_N; c++)
		sh[c] = (double)v->t[c] / w;
	double data = sh[FT_CAT_IO] + sh[FT_CAT_DATA], sync = sh[FT_CAT_HIDDEN];
	/* a thread waiting for a core has CPU work to do: submission's share */
	double locks = sh[FT_CAT_LOCK];
	double sub = sh[FT_CAT_SUBMIT] + sh[FT_CAT_CPU] + sh[FT_CAT_RUNQ];
	double ranks = sh[FT_CAT_RANKS];
	if (!v->nfeeders) {
		v->limit = FT_LIMIT_NONE;
		v->say = FT_SAY_NOTHING;
		return;
	}
	if (!v->by_launch) {
		/* a loop whose optimizer steps were seen has its own clock: the
		 * training steps' time in the DataLoader's __next__ (phases.c),
		 * which decides between data delivery and none */
		enum ft_limit own = FT_LIMIT_UNSET;
		ft_phases_limit(sr->phases, &own);
		if (ranks > data && ranks >= locks && ranks >= 0.2) {
			v->limit = FT_LIMIT_RANKS;
			v->say = FT_SAY_NOGPU_RANKS;
		} else if (own && (own == FT_LIMIT_DATA || locks < 0.2)) {
			v->limit = own;
			v->say = FT_SAY_NOGPU_PHASES;
		} else if (!own && data >= locks && data >= 0.2) {
			v->limit = FT_LIMIT_DATA;
			v->say = FT_SAY_NOGPU_DATA;
		} else if (locks >= 0.2) {
			v->limit = FT_LIMIT_LOCKS;
			v->say = FT_SAY_NOGPU_LOCKS;
		} else {
			v->limit = FT_LIMIT_NONE;
			v->say = FT_SAY_NOGPU_NONE;
		}
		return;
	}
	double gpu = sh[FT_CAT_GPU_WAIT];
	double win = v->win_end > v->win_start ? (double)(v->win_end - v->win_start) : 1.0;
	double idle = (double)v->idle_ns / win;
	/* some launching thread waits for a lock most of the loop: the feeding
	 * threads take turns on it, whatever the GPU does meanwhile */
	double held = (double)v->lock_union / win;
	int shared = out->lock_shared;  /* a lock that two launching threads waited for */
	if (held >= 0.5 || (shared && locks >= 0.3)) {
		v->limit = FT_LIMIT_LOCKS;
		v->say = FT_SAY_LOCK_TURNS;
		return;
	}
	/* The model's busy time is an upper bound (a stream counts busy until a
	 * wait drains it): it is evidence only when it shows idle time, or when
	 * the feeding threads did wait for the GPU. The measured one is evidence
	 * either way (gpu_measured.h). */
	if (v->gpu_measured || (v->busy_ns && (idle >= 0.1 || gpu + sync >= 0.1))) {
		v->basis = FT_BASIS_GPU_IDLE;
		double den = v->sidle_den ? (double)v->sidle_den : 1.0, S[FT_CAT_N];
		for (int c = 0; c < FT_CAT_N; c++)
			S[c] = (double)v->sidle[c] / den;
		double g[5] = { S[FT_CAT_IO] + S[FT_CAT_DATA], S[FT_CAT_HIDDEN], S[FT_CAT_LOCK],
				S[FT_CAT_SUBMIT] + S[FT_CAT_CPU] + S[FT_CAT_GPU_WAIT], S[FT_CAT_RANKS] };
		static const enum ft_limit lim[5] = { FT_LIMIT_DATA, FT_LIMIT_SYNC, FT_LIMIT_LOCKS,
						      FT_LIMIT_SUBMISSION, FT_LIMIT_RANKS };
		int best = 0;
		for (int k = 1; k < 5; k++)
			if (g[k] > g[best])
				best = k;
		/* a GPU busy 85% of the loop is the limit (removing all its idle
		 * time would gain under a sixth), unless one feed kept the streams
		 * idle half of the time (serialized streams), or the feeding
		 * threads' streams idle behind their syncs 15% of their time or
		 * more: kernels of different streams overlap on a real GPU when
		 * they fit, so the device's union of busy streams hides what each
		 * thread's stream lost to its syncs */
		int behind = g[1] >= 0.15 && idle < 0.15;
		v->limit = idle < 0.15 && g[best] < 0.5 && !behind ? FT_LIMIT_GPU : lim[best];
		v->say = behind && best == 1 ? FT_SAY_STREAM_SYNCS
			 : v->limit == FT_LIMIT_GPU ? FT_SAY_GPU_BUSY : FT_SAY_GPU_IDLE;
		v->said_share = g[best];
		return;
	}
	double best = data;
	v->limit = FT_LIMIT_DATA;
	if (sync > best) best = sync, v->limit = FT_LIMIT_SYNC;
	if (locks > best) best = locks, v->limit = FT_LIMIT_LOCKS;
	if (sub > best) best = sub, v->limit = FT_LIMIT_SUBMISSION;
	if (ranks > best) best = ranks, v->limit = FT_LIMIT_RANKS;
	if (gpu >= best || (gpu >= 0.5 && data < 0.1 && sync < 0.1 && locks < 0.1))
		v->limit = FT_LIMIT_GPU;
	static const enum ft_say say[] = {
		[FT_LIMIT_GPU] = FT_SAY_GPU_WAIT, [FT_LIMIT_DATA] = FT_SAY_DATA,
		[FT_LIMIT_SYNC] = FT_SAY_SYNC, [FT_LIMIT_LOCKS] = FT_SAY_LOCKS,
		[FT_LIMIT_RANKS] = FT_SAY_RANKS, [FT_LIMIT_SUBMISSION] = FT_SAY_SUBMISSION,
	};
	v->say = say[v->limit];
}
