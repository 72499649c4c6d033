/*
 * fk_runq.c: "CPU oversubscribed" as a finding kind (fkind.h), and the
 * pass that finds it: two or more busy threads of a process (on a CPU
 * FT_RUNQ_PCT of their sampled time in the window or more, by the CPU
 * samples) runnable but waiting for a core (their run-queue delay, by
 * the SCHED samples) FT_RUNQ_PCT of it or more: the process runs more
 * busy threads than it gets cores (an intra-op pool per DataLoader
 * worker, OMP threads beside loader threads). One thread waiting alone
 * is a machine shared with other work, not this process's threads
 * crowding each other; a thread that barely runs (waking from short
 * sleeps) waits for a core at each wake on a loaded machine, whatever
 * its process does: neither makes a finding (docs/ANALYSES.md, "CPU
 * oversubscribed").
 *
 * Its fields: tid, max_ns (the thread that waited longest, its delay),
 * threads (the busy ones waiting), total_ns (their delay summed),
 * count (the threads sampled in the window); lost_ns is max_ns, the wall
 * time in which at least one of its threads waited for a core.
 */
#include <stdio.h>

#include "analyses.h"
#include "fkind.h"
#include "json.h"
#include "pfarg.h"
#include "util.h"

#define FT_RUNQ_PCT 10          /* a thread runs, and waits for a core, this share
                                   of its time or more */
#define FT_RUNQ_THREADS 2       /* threads that do, for a finding */

static void emit(struct ft_an_ctx *c)
{
	const struct ft_process *p = c->p;
	uint64_t w0 = c->o.win_end ? c->o.win_start : c->first_ts;
	uint64_t w1 = c->o.win_end ? c->o.win_end : c->last_end;
	if (!c->sink.finding || !c->m.events || w1 <= w0)
		return;
	struct ft_finding f = { .kind = FT_FK_RUNQ, .pid = p->hdr.pid, .start = w0, .end = w1 };
	for (int i = 0; i < p->nthreads; i++) {
		const struct ft_thread_rec *t = &p->threads[i];
		if (t->nrunq < 2)
			continue;
		/* its sampled time in the window: the delay is known there only */
		uint64_t a = ft_ticks_to_ns(p, t->runq[0].ticks);
		uint64_t b = ft_ticks_to_ns(p, t->runq[t->nrunq - 1].ticks);
		a = a > w0 ? a : w0;
		b = b < w1 ? b : w1;
		int64_t q = b > a ? ft_thread_runq_ns(p, t->tid, a, b) : -1;
		if (q < 0)
			continue;
		f.count++;
		int64_t cpu = ft_thread_cpu_ns(p, t->tid, a, b);      /* -1: no samples */
		if ((uint64_t)q * 100 < (b - a) * FT_RUNQ_PCT ||
		    cpu < 0 || (uint64_t)cpu * 100 < (b - a) * FT_RUNQ_PCT)
			continue;
		f.threads++;
		f.total_ns += (uint64_t)q;
		if ((uint64_t)q > f.max_ns)
			f.max_ns = (uint64_t)q, f.tid = t->tid;
	}
	if (f.threads < FT_RUNQ_THREADS)
		return;
	f.lost_ns = f.max_ns;
	c->sink.finding(c->sink.arg, &f);
}

static const char *suggestion(const struct ft_finding *f)
{
	(void)f;
	return "more threads are runnable than there are cores: run fewer (torch.set_num_threads "
	       "or OMP_NUM_THREADS for the intra-op pool, fewer DataLoader workers), or give "
	       "the job cores of its own (taskset)";
}

/* a DataLoader worker: PyTorch runs its own pool on one thread there
 * (torch.set_num_threads(1) in its worker loop), so the busy threads are
 * its transforms' libraries' */
static const char *advice(const struct ft_finding *f, int worker)
{
	if (worker)
		return "this DataLoader worker runs several busy threads, those of the "
		       "libraries its transforms call (OpenCV, OpenMP, BLAS): one thread "
		       "per worker (cv2.setNumThreads(0), OMP_NUM_THREADS=1 in the "
		       "worker_init_fn) or fewer workers";
	return suggestion(f);
}

static void label(const struct ft_finding *f, char *buf, size_t cap)
{
	char a[32], b[32];
	ft_fmt_ns(a, sizeof a, f->total_ns);
	ft_fmt_ns(b, sizeof b, f->max_ns);
	uint64_t w = f->end > f->start ? f->end - f->start : 1;
	snprintf(buf, cap, "%d of %llu threads busy and runnable, waiting for a core %d%% of "
		 "their time or more: %s in all; thread %d %s (%.0f%% of the window)", f->threads,
		 (unsigned long long)f->count, FT_RUNQ_PCT, a, f->tid, b,
		 100.0 * (double)f->max_ns / (double)w);
}

static void json(struct ft_json *j, const struct ft_finding *f)
{
	ft_json_int(j, "tid", f->tid);
	ft_json_int(j, "threads", f->threads);
	ft_json_u64(j, "threads_sampled", f->count);
	ft_json_u64(j, "total_ns", f->total_ns);
	ft_json_u64(j, "max_ns", f->max_ns);
}

static int args(const struct ft_finding *f, struct pf_arg *a, char (*key)[32])
{
	(void)key;
	int n = 0;
	a[n++] = PF_ARG_INT("tid", f->tid);
	a[n++] = PF_ARG_UINT("threads", (uint64_t)f->threads);
	a[n++] = PF_ARG_UINT("threads_sampled", f->count);
	a[n++] = PF_ARG_UINT("wait_ns", f->total_ns);
	a[n++] = PF_ARG_UINT("longest_thread_wait_ns", f->max_ns);
	return n;
}

static void identity(const struct ft_finding *f, char *t, size_t cap)
{
	(void)f;
	snprintf(t, cap, "CPU oversubscribed (threads waiting for a core)");
}

const struct ft_fkind_ops ft_fk_runq = {
	.key = "cpu_oversubscribed", .slice = "CPU oversubscribed",
	.track = "CPU oversubscribed", .row = "CPU oversubscribed",
	.suggestion = suggestion, .advice = advice, .label = label, .json = json,
	.args = args, .identity = identity, .emit = emit,
};
