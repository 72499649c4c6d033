/*
 * report.c: the report of a run (`feedtrace report`): analyses every
 * process (merge.c, analysis.c), picks the main process, the roles and the
 * loop's window, analyses the main process and its workers again within
 * that window (the verdict, its producers and start-up), and prints the
 * verdict, the findings
 * ranked by time lost and the top call sites in 80 columns (the same as
 * JSON: report_json.c). Also the report `feedtrace run` prints.
 * Never decides a limit itself: verdict.c does, per process. The command
 * and its options are cmd_report.c's.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "analyse.h"
#include "cover.h"
#include "phases.h"
#include "problems.h"
#include "report.h"
#include "ranksum.h"
#include "progress.h"
#include "gpu_measured.h"
#include "roles.h"
#include "steps.h"
#include "symbolize.h"
#include "words.h"

/* ---- building ---- */

/* a kept storm's covered intervals: its own copy (the sink's are the
 * analysis's, valid during the call) */
static void keep_cov(struct ft_finding *f)
{
	if (!f->ncov) {
		f->cov = NULL;
		return;
	}
	struct ft_iv *c = ft_xmalloc((size_t)f->ncov * sizeof *c);
	memcpy(c, f->cov, (size_t)f->ncov * sizeof *c);
	f->cov = c;
}

static void keep(void *arg, const struct ft_finding *f)
{
	struct ft_report *r = arg;
	if (f->candidate) {
		if (r->ncand == r->capcand)
			FT_GROW(r->cand, r->capcand, 16);
		r->cand[r->ncand++] = *f;
		r->cand[r->ncand - 1].bins = NULL;      /* valid during this call only */
		r->cand[r->ncand - 1].nbins = 0;
		keep_cov(&r->cand[r->ncand - 1]);
		return;
	}
	if (f->kind == FT_FK_GAP && f->scope == 0 && r->ngaps >= FT_REPORT_MAX_GAPS) {
		/* replace the shortest kept stream gap if this one is longer */
		int min = -1;
		for (int i = 0; i < r->nf; i++)
			if (r->f[i].kind == FT_FK_GAP && r->f[i].scope == 0 &&
			    (min < 0 || r->f[i].lost_ns < r->f[min].lost_ns))
				min = i;
		r->gaps_left_out++;
		if (min >= 0 && r->f[min].lost_ns < f->lost_ns)
			r->f[min] = *f;
		return;
	}
	if (f->kind == FT_FK_GAP && f->scope == 1 && r->ngaps >= FT_REPORT_MAX_GAPS) {
		r->gaps_left_out++;
		return;
	}
	if (r->nf == r->capf)
		FT_GROW(r->f, r->capf, 64);
	r->f[r->nf++] = *f;
	r->f[r->nf - 1].bursts = NULL;          /* valid during this call only */
	r->f[r->nf - 1].nbursts = 0;
	r->f[r->nf - 1].bins = NULL;
	r->f[r->nf - 1].nbins = 0;
	keep_cov(&r->f[r->nf - 1]);
	if (f->kind == FT_FK_GAP)
		r->ngaps++;
}

/* report's progress line (ft_report_progress): the process being read */
static struct ft_progress *rep_pg;
static int rep_i, rep_n;

void ft_report_progress(struct ft_progress *pg)
{
	rep_pg = pg;
}

static void tick(void *arg, const struct ft_process *p, uint64_t events)
{
	(void)arg;
	if (rep_pg)
		ft_progress_line(rep_pg, 0, "feedtrace report: process %d/%d (pid %d): %llu events",
				 rep_i + 1, rep_n, p->hdr.pid, (unsigned long long)events);
}

static int by_lost(const void *x, const void *y)
{
	const struct ft_finding *a = x, *b = y;
	if (a->lost_ns != b->lost_ns)
		return a->lost_ns > b->lost_ns ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* one process analysed: its findings to sink (NULL: none), m and v, with
 * v's sentence worded */
static void analyse(struct ft_process *p, const struct ft_an_opts *o,
		    const struct ft_merge_opts *mg, const struct ft_an_sink *sink, FILE *err,
		    struct ft_metrics *m, struct ft_verdict *v)
{
	ft_analyse(p, o, mg, sink, err, tick, NULL, m, v);
	ft_words_verdict(v, v->sentence, sizeof v->sentence);
}

/* ---- the run's verdict (docs/ANALYSES.md, "The verdict") ---- */

/* The producer numbers of thread s of process p within [w0, w1]. */
static void producer(struct ft_producer *o, const struct ft_process *p,
		     const struct ft_thread_sum *s, uint64_t w0, uint64_t w1)
{
	o->tid = s->tid;
	o->wall = s->wall;
	o->io = s->t[FT_CAT_IO];
	o->lock = s->t[FT_CAT_LOCK];
	uint64_t waits = s->t[FT_CAT_DATA], traced = 0;
	for (int c = 0; c < FT_CAT_N; c++)
		traced += s->t[c];
	/* untraced, less its time runnable waiting for a core (verdict.c) */
	uint64_t busy = o->wall > traced ? o->wall - traced : 0;
	busy += traced - waits - o->io - o->lock - s->t[FT_CAT_RUNQ];   /* other traced calls */
	o->handover = s->handover < busy ? s->handover : busy;     /* a write that blocked */
	busy -= o->handover;
	uint64_t a = s->first > w0 ? s->first : w0, b = s->last_end < w1 ? s->last_end : w1;
	int64_t cpu = b > a ? ft_thread_cpu_ns(p, s->tid, a, b) : -1;
	o->cpu_sampled = cpu >= 0;
	o->runq = s->t[FT_CAT_RUNQ];
	uint64_t room = o->wall > o->io + o->lock ? o->wall - o->io - o->lock : 0;
	o->cpu = cpu >= 0 ? (uint64_t)cpu : busy;
	if (o->cpu > room)
		o->cpu = room;
	o->idle = room - o->cpu;
	if (o->handover > o->idle)
		o->handover = o->idle;
	if (o->runq > o->idle)
		o->runq = o->idle;
}

/* The feed keeps up: the loop is the limit, and its producers wait for it
 * (a full queue or pipe: each hands a batch over when the loop takes one)
 * half of their time or more (words.c says it) */
static void slack(struct ft_run_verdict *rv)
{
	uint64_t wall = 0, idle = 0;
	for (int i = 0; i < rv->nprod; i++)  /* waiting for a core is not waiting for the loop */
		wall += rv->prod[i].wall, idle += rv->prod[i].idle - rv->prod[i].runq;
	if (wall && idle * 2 >= wall)
		rv->detail_say = FT_DETAIL_SLACK;
}

/* The feeding threads' time runnable, waiting for a core, in the window:
 * their category of it (verdict.c, from the SCHED samples). A share of 20%
 * or more is said in the detail: the loop does not get a core. */
static void feed_runq(const struct ft_verdict *v, struct ft_run_verdict *rv)
{
	rv->feed_runq_ns = v->t[FT_CAT_RUNQ];
	rv->feed_runq_said = v->wall_ns && rv->feed_runq_ns * 5 >= v->wall_ns;
}

/* the read shape of the producers: that of the producing process (a worker,
 * or the main process for its loader threads) whose reads took most time */
static void read_shape(const struct ft_report *r, struct ft_run_verdict *rv)
{
	memset(&rv->shape, 0, sizeof rv->shape);
	for (int i = 0; i < rv->nprod; i++)
		for (int k = 0; k < r->nprocs; k++)
			if (r->procs[k].pid == rv->prod[i].pid &&
			    r->procs[k].v.shape.io_ns > rv->shape.io_ns)
				rv->shape = r->procs[k].v.shape;
}

/* the major page faults producer q (of process i) took in [w0, w1] on
 * mapped data (mapped.c: it or an ancestor mapped a data file): its own,
 * or for a worker its process's; their block I/O wait where the kernel's
 * delay accounting gave it (a worker's: its threads'), which is time off
 * the CPU: CPU inferred from untraced time gives it up to idle */
static void producer_faults(const struct ft_report *r, int i, struct ft_producer *q,
			    uint64_t w0, uint64_t w1)
{
	int d = r->mapped.data && r->mapped.data[i];
	for (int a = r->procs[i].parent, hops = 0; r->mapped.data && !d && a >= 0 &&
	     hops < r->nprocs; a = r->procs[a].parent, hops++)
		d = r->mapped.data[a];
	const struct ft_process *p = r->tr.procs[i];
	/* a worker's: its process's (all its threads'); a loader thread's:
	 * its own, where the trace has it */
	uint64_t ns;
	int32_t who = q->tid;
	if (!d)
		return;
	if (i != r->main && ft_thread_faults(p, 0, w0, w1, &q->majflt, &ns))
		who = 0;
	else if (!ft_thread_faults(p, q->tid, w0, w1, &q->majflt, &ns))
		return;
	q->fault_timed = ft_fault_wait(p, who, w0, w1, &q->fault_ns);
	if (q->fault_timed && !q->cpu_sampled) {
		uint64_t off = q->fault_ns < q->cpu ? q->fault_ns : q->cpu;
		q->cpu -= off;
		q->idle += off;
	}
}

static void add_producer(struct ft_run_verdict *rv, const struct ft_producer *p)
{
	rv->prod = ft_xrealloc(rv->prod, (size_t)(rv->nprod + 1) * sizeof *rv->prod);
	rv->prod[rv->nprod++] = *p;
}

/* The window of a process's verdict, the training loop, from its whole-run
 * analysis v0: its steps (less the warm-up), else from its first launch
 * or batch, else the whole run. */
static void loop_window(const struct ft_verdict *v0, struct ft_run_verdict *rv)
{
	if (v0->first_step && (v0->by_launch || v0->batches || v0->nfeeders)) {
		rv->from = FT_FROM_STEPS;
		rv->w0 = v0->first_step, rv->w1 = v0->last_step_end;
		/* the warm-up steps stay out: the loop's verdict, not its first
		 * step's module loads and autotuning */
		if (v0->warmup_steps && v0->warmup_end > rv->w0 && v0->warmup_end < rv->w1) {
			rv->warmup_steps = v0->warmup_steps;
			rv->warmup_ns = v0->warmup_end - v0->first_step;
			rv->w0 = v0->warmup_end;
		}
	} else if (v0->by_launch) {
		rv->from = FT_FROM_LAUNCH;
		rv->w0 = v0->loop_launch ? v0->loop_launch : v0->first_launch;
		rv->launches_before = v0->loop_launch ? v0->launches_before : 0;
		rv->w1 = v0->last_gpu_end;
	} else if (v0->batches) {
		rv->from = FT_FROM_BATCH;
		rv->w0 = v0->first_batch, rv->w1 = v0->last_batch;
	}
	if (!rv->from || rv->w1 <= rv->w0) {
		rv->from = FT_FROM_WHOLE;
		rv->w0 = v0->win_start, rv->w1 = v0->win_end;
	}
}

/* process i's verdict again, within [w0, w1] */
static void reanalyse(struct ft_report *r, int i, const struct ft_an_opts *o, uint64_t w0,
		      uint64_t w1, const struct ft_merge_opts *mg, FILE *err)
{
	struct ft_an_opts wo = *o;
	wo.win_start = w0;
	wo.win_end = w1;
	struct ft_metrics m;
	ft_verdict_free(&r->procs[i].v);
	analyse(r->tr.procs[i], &wo, mg, NULL, err, &m, &r->procs[i].v);
}

/* process i is a worker of the main process (another rank's workers are
 * workers too, of their rank's main) */
static int main_worker(const struct ft_report *r, int i)
{
	return r->procs[i].role == FT_ROLE_WORKER && r->procs[i].parent == r->main;
}

static void run_verdict(struct ft_report *r, const struct ft_an_opts *o,
			const struct ft_merge_opts *mg, FILE *err)
{
	struct ft_run_verdict *rv = &r->rv;
	if (!r->nprocs)
		return;
	struct ft_rep_proc *mp = &r->procs[r->main];
	const struct ft_verdict *v0 = &mp->v;
	loop_window(v0, rv);
	/* roles */
	int nworkers = 0, allpy = ft_is_python(mp->cmdline);
	for (int i = 0; i < r->nprocs; i++)
		if (main_worker(r, i))
			nworkers++, allpy &= ft_is_python(r->procs[i].cmdline);
	/* again, within the window: the main process and its workers */
	int32_t tid0 = mp->pid;
	for (int i = 0; i < r->nprocs; i++)
		if (r->procs[i].role != FT_ROLE_HELPER && rv->from != FT_FROM_WHOLE)
			reanalyse(r, i, o, rv->w0, rv->w1, mg, err);
	const struct ft_verdict *v = &mp->v;
	/* start-up: the time before the window, and the main thread's calls in it */
	uint64_t pstart = mp->start;
	rv->startup_ns = rv->w0 > pstart ? rv->w0 - pstart : 0;
	const struct ft_process *mproc = r->tr.procs[r->main];
	if (mproc->nwin && mproc->win[0].first_step)
		rv->startup_ns = 0;     /* a window of steps: it starts at a step, no start-up in it */
	uint64_t traced = 0;
	for (int i = 0; i < v->nths; i++)
		if (v->ths[i].tid == tid0)
			for (int c = 0; c < FT_CAT_N; c++)
				if (c != FT_CAT_CPU) {
					uint64_t x = v->ths[i].pre[c];
					rv->startup[c] = x < rv->startup_ns ? x : rv->startup_ns;
					traced += rv->startup[c];
				}
	rv->startup[FT_CAT_CPU] = rv->startup_ns > traced ? rv->startup_ns - traced : 0;
	/* a window of steps: its steps, and the feeding threads' wait for
	 * data (data_wait and io, summed over them) per step */
	rv->data_wait_step_ns = -1;
	if (rv->from == FT_FROM_STEPS) {
		uint64_t st = mp->m.steps_from_optimizer && v->phases ? v->phases->win_steps
								      : mp->m.steps;
		rv->window_steps = st > rv->warmup_steps ? st - rv->warmup_steps : 0;
	}
	if (rv->window_steps)
		rv->data_wait_step_ns = (int64_t)((v->t[FT_CAT_DATA] + v->t[FT_CAT_IO] +
						   rv->window_steps / 2) / rv->window_steps);
	/* the workers' file reads in a window of steps: the main process's
	 * own reads per step leave out the reads that feed those steps */
	if (rv->from == FT_FROM_STEPS)
		for (int i = 0; i < r->nprocs; i++)
			if (main_worker(r, i) && !ft_phases_eval_worker(v->phases, r->procs[i].start))
				rv->worker_reads += r->procs[i].v.shape.calls;
	/* producers: the workers (each one's busiest thread) and the main
	 * process's loader threads (not feeding, busy in the window) */
	for (int i = 0; i < r->nprocs; i++) {
		struct ft_rep_proc *p = &r->procs[i];
		if (!main_worker(r, i) || !p->v.nths || !v->nfeeders ||
		    ft_phases_eval_worker(v->phases, p->start))
			continue;
		int b = 0;
		for (int k = 0; k < p->v.nths; k++) {
			const struct ft_thread_sum *t = &p->v.ths[k], *x = &p->v.ths[b];
			if (t->tid == p->pid || (x->tid != p->pid && t->wall > x->wall))
				b = k;
		}
		struct ft_producer pr = { 0 };
		producer(&pr, r->tr.procs[i], &p->v.ths[b], rv->w0, rv->w1);
		producer_faults(r, i, &pr, rv->w0, rv->w1);
		pr.pid = p->pid;
		pr.role = FT_PROD_WORKER;
		if (pr.wall)
			add_producer(rv, &pr);
	}
	for (int k = 0; k < v->nths && v->nfeeders; k++) {
		const struct ft_thread_sum *t = &v->ths[k];
		int feeder = v->by_launch ? t->launches > 0 :
			     v->loop_tid ? t->tid == v->loop_tid : t->batches > 0;
		for (int j = 0; j < v->nfeeders && j < 8 && !feeder; j++)
			feeder = v->feeder[j] == t->tid;     /* a loop that loads its own data */
		if (feeder || t->events < 2 || !t->wall)
			continue;
		struct ft_producer pr = { 0 };
		producer(&pr, r->tr.procs[r->main], t, rv->w0, rv->w1);
		if ((pr.io + pr.cpu) * 10 < pr.wall)
			continue;             /* a helper thread: it waits */
		producer_faults(r, r->main, &pr, rv->w0, rv->w1);
		pr.pid = mp->pid;
		pr.role = FT_PROD_LOADER;
		add_producer(rv, &pr);
	}
	/* threads with no call in the window but CPU samples: busy loaders */
	const struct ft_process *mpr = r->tr.procs[r->main];
	for (int k = 0; k < mpr->nthreads && v->nfeeders; k++) {
		int32_t tid = mpr->threads[k].tid;
		int seen = 0;
		for (int j = 0; j < v->nths && !seen; j++)
			seen = v->ths[j].tid == tid && v->ths[j].events >= 2;
		int64_t cpu = seen ? -1 : ft_thread_cpu_ns(mpr, tid, rv->w0, rv->w1);
		if (cpu < 0 || (uint64_t)cpu * 10 < rv->w1 - rv->w0)
			continue;
		struct ft_producer pr = { mp->pid, tid, FT_PROD_LOADER, rv->w1 - rv->w0, 0,
					  (uint64_t)cpu, 0, 0, 1, 0, 0, 0, 0, 0 };
		if (pr.cpu > pr.wall)
			pr.cpu = pr.wall;
		pr.idle = pr.wall - pr.cpu;
		producer_faults(r, r->main, &pr, rv->w0, rv->w1);
		add_producer(rv, &pr);
	}
	/* what the producers did, for data delivery */
	uint64_t pw = 0, pio = 0, pcpu = 0, pflt = 0, prq = 0;
	for (int i = 0; i < rv->nprod; i++) {
		pw += rv->prod[i].wall, pio += rv->prod[i].io, pcpu += rv->prod[i].cpu;
		prq += rv->prod[i].runq;
		pflt += rv->prod[i].majflt;
	}
	rv->busiest = -1;
	if (v->limit == FT_LIMIT_NONE && v->nfeeders && rv->nprod)
		slack(rv);
	if (v->limit == FT_LIMIT_DATA && ft_phases_self_loading(v->phases)) {
		/* the loop loads its own data: the sentence says how (phases.c) */
		rv->data_cause = v->phases->io_ns * 2 >= v->phases->next_ns ? FT_CAUSE_IO
									     : FT_CAUSE_PREPROCESSING;
		if (v->first_launch)    /* a GPU loop: the verdict's sentence is the GPU's */
			rv->detail_say = FT_DETAIL_SELF_LOADING;
	} else if (v->limit == FT_LIMIT_DATA) {
		if (rv->nprod) {
			rv->data_cause = (pio > pcpu ? pio : pcpu) * 5 < pw ? FT_CAUSE_UNKNOWN
					 : pio >= pcpu ? FT_CAUSE_IO : FT_CAUSE_PREPROCESSING;
			/* neither: runnable but not running (more busy threads
			 * than cores), where they waited for a core 20% or more */
			if (rv->data_cause == FT_CAUSE_UNKNOWN && prq * 5 >= pw)
				rv->data_cause = FT_CAUSE_RUNQ;
		} else {
			rv->data_cause = v->t[FT_CAT_IO] > v->t[FT_CAT_DATA] ? FT_CAUSE_IO
									     : FT_CAUSE_UNKNOWN;
		}
		read_shape(r, rv);
		/* producers faulting on mapped data look idle or busy on the CPU:
		 * their reads are the faults */
		if (rv->data_cause != FT_CAUSE_IO && pflt >= FT_MAPPED_MIN_FAULTS)
			rv->data_cause = FT_CAUSE_MAPPED;
		rv->detail_say = FT_DETAIL_PRODUCERS;
		/* busy producers that also waited for a core 20% of their time
		 * (none without producers) */
		rv->prod_runq_said = rv->data_cause != FT_CAUSE_RUNQ && pw && prq * 5 >= pw;
		/* one producer far busier than the set (a pin-memory thread beside
		 * idle workers): named, since more workers do not help it */
		int b = -1;
		for (int i = 0; i < rv->nprod; i++) {
			const struct ft_producer *x = &rv->prod[i];
			if (x->wall && (b < 0 || (x->io + x->cpu) * rv->prod[b].wall >
						 (rv->prod[b].io + rv->prod[b].cpu) * x->wall))
				b = i;
		}
		if (b >= 0 && rv->nprod > 1) {
			const struct ft_producer *x = &rv->prod[b];
			double share = (double)(x->io + x->cpu) / (double)x->wall;
			double all = (double)(pio + pcpu) / (double)(pw ? pw : 1);
			if (share >= 0.3 && share >= 1.5 * all)
				rv->busiest = b;
		}
	}
	feed_runq(v, rv);
	ft_words_detail(rv, v, &r->mapped, rv->detail, sizeof rv->detail);
	/* the process in words (words.c), from its parts */
	int32_t *wk = ft_xcalloc(nworkers ? (size_t)nworkers : 1, sizeof *wk);
	int k = 0;
	for (int i = 0; i < r->nprocs; i++)
		if (main_worker(r, i))
			wk[k++] = r->procs[i].pid;
	int nl = 0;
	for (int i = 0; i < rv->nprod; i++)
		nl += rv->prod[i].role == FT_PROD_LOADER;
	struct ft_proc_words said = { r->ranks.straggler >= 0, r->tr.procs[r->main], mp->pid,
				    mp->cmdline, wk, nworkers, allpy, nl };
	ft_words_process(&said, rv->process, sizeof rv->process);
	free(wk);
}

/* The feeding threads' time waiting for data or in file I/O of their own
 * (and, apart, in lock waits), within the verdict's window: what a storm
 * row's reads or a lock row's waits can have cost the feed (problems.c,
 * docs/ANALYSES.md "Problems"). Read only when the run has such rows. */
struct feedpass { struct ft_report *r; const struct ft_verdict *v; struct ft_cover lock; };

static int feed_event(const struct ft_event *ev, void *arg)
{
	struct feedpass *fp = arg;
	const struct ft_verdict *v = fp->v;
	int feeder = 0;
	for (int i = 0; i < v->nfeeders && i < 8 && !feeder; i++)
		feeder = v->feeder[i] == ev->tid;
	if (!feeder)
		return 0;
	struct ft_evinfo in;
	ft_an_info(ev->rec, &in);
	if (in.cat != FT_CAT_DATA && in.cat != FT_CAT_IO && in.cat != FT_CAT_LOCK)
		return 0;
	uint64_t s = ev->ts_ns, e = ev->ts_ns + ev->dur_ns;
	const struct ft_run_verdict *rv = &fp->r->rv;
	if (s < rv->w0)
		s = rv->w0;
	if (e > rv->w1)
		e = rv->w1;
	ft_cover_put(in.cat == FT_CAT_LOCK ? &fp->lock : &fp->r->feed, s, e);
	return 0;
}

static void feed_waits(struct ft_report *r, const struct ft_merge_opts *mg, FILE *err)
{
	int rows = r->ncand > 0;
	for (int i = 0; i < r->nf && !rows; i++)
		rows = (ft_fkind(&r->f[i])->flags & FT_FKF_COVER) != 0;
	if (!r->nprocs || !rows || !r->procs[r->main].v.nfeeders)
		return;
	r->feed_known = 1;
	struct feedpass fp = { r, &r->procs[r->main].v, { 0 } };
	ft_merge_events(r->tr.procs[r->main], mg, feed_event, &fp, ft_said_once(err), NULL);
	ft_cover_merge(&r->feed_all, &r->feed, &fp.lock);
	ft_cover_free(&fp.lock);
}

static void add_metrics(struct ft_metrics *t, const struct ft_metrics *m)
{
	const uint64_t *s = (const uint64_t *)m;
	uint64_t *d = (uint64_t *)t;
	for (size_t i = 0; i < sizeof *m / sizeof *s; i++)
		d[i] += s[i];
}

int ft_report_build(struct ft_report *r, const char *dir, const struct ft_an_opts *o,
		    const struct ft_merge_opts *mg, FILE *err)
{
	memset(r, 0, sizeof *r);
	r->dir = dir;
	{
		struct ft_an_opts d;
		ft_an_default_opts(&d);
		r->storm_reads = o ? o->storm_reads : d.storm_reads;
		r->storm_window_ns = o ? o->storm_window_ns : d.storm_window_ns;
	}
	if (ft_trace_open(dir, &r->tr, err) != 0)
		return -1;
	r->nprocs = r->tr.nprocs;
	r->procs = ft_xrealloc(NULL, (size_t)r->nprocs * sizeof *r->procs);
	uint64_t first = 0, last = 0;
	for (int i = 0; i < r->nprocs; i++) {
		struct ft_process *p = r->tr.procs[i];
		struct ft_rep_proc *rp = &r->procs[i];
		struct ft_an_sink sink = { keep, NULL, r, NULL };
		rep_i = i, rep_n = r->nprocs;
		analyse(p, o, mg, &sink, err, &rp->m, &rp->v);
		rp->pid = p->hdr.pid;
		rp->ppid = p->hdr.ppid;
		rp->cmdline = *p->cmdline ? p->cmdline : p->exe;
		rp->start = p->base_ns;
		uint64_t wfrom, wto;
		if (ft_process_windowed(p, &wfrom, &wto))
			rp->start = wfrom;      /* the time before its window is not its start-up */
		if ((uint64_t)ft_traced_threads(p) > rp->m.threads)
			rp->m.threads = (uint64_t)ft_traced_threads(p);
		if (rp->m.dropped)
			fprintf(err, "feedtrace: %s: pid %d dropped %llu events (its trace buffers were full)\n",
				p->path, p->hdr.pid, (unsigned long long)rp->m.dropped);
		uint64_t b = p->base_ns, e = p->base_ns + rp->m.wall_ns;
		if (ft_process_windowed(p, &wfrom, &wto))
			b = wfrom, e = wto;     /* its recorded span */
		if (!first || b < first)
			first = b;
		if (e > last)
			last = e;
	}
	uint64_t wall = last - first;          /* the run: first start to last end */
	for (int i = 0; i < r->nprocs; i++)    /* forked children that left no file */
		for (int f = 0; f < r->procs[i].v.nforked; f++)
			r->tr.procs[i]->children_untraced +=
				!ft_trace_has_pid(&r->tr, r->procs[i].v.forked[f]);
	/* a rank known from its gloo collectives only (analyse.c): its
	 * children without an identity (its DataLoader workers) are of it */
	int *gloo = ft_xmalloc((2 * (size_t)r->nprocs + 1) * sizeof *gloo), ng = 0;
	for (int k = 0; k < r->nprocs; k++)
		if (r->tr.procs[k]->hdr.launcher == FT_LAUNCH_GLOO)
			gloo[ng++] = k;
	for (int i = 0; i < r->nprocs; i++) {
		struct ft_file_header *h = &r->tr.procs[i]->hdr;
		for (int j = 0; j < ng && !h->world_size; j++) {
			const struct ft_file_header *q = &r->tr.procs[gloo[j]]->hdr;
			if (q->pid == h->ppid) {
				ft_take_gloo_identity(h, q->rank, q->world_size);
				gloo[ng++] = i;         /* its own children are of it */
			}
		}
	}
	free(gloo);
	/* a job of ranks: the straggler's main process, if any, is the one the
	 * verdict is about (ranks.c) */
	struct ft_rank_in *ri = ft_xrealloc(NULL, (size_t)(r->nprocs ? r->nprocs : 1) * sizeof *ri);
	for (int i = 0; i < r->nprocs; i++) {
		const struct ft_process *p = r->tr.procs[i];
		ri[i] = (struct ft_rank_in){ .pid = p->hdr.pid, .rank = p->hdr.rank,
					     .world = p->hdr.world_size, .host = p->hdr.host,
					     .wall_ns = ft_wall_offset(p),
					     .colls = r->procs[i].v.colls, .ncolls = r->procs[i].v.ncolls };
	}
	ft_ranks_build(&r->ranks, ri, r->nprocs);
	free(ri);
	/* parents, the main process and the roles (roles.c) */
	struct ft_role_proc *rl = ft_xrealloc(NULL, (size_t)(r->nprocs ? r->nprocs : 1) * sizeof *rl);
	for (int i = 0; i < r->nprocs; i++) {
		const struct ft_rep_proc *q = &r->procs[i];
		const struct ft_process *p = r->tr.procs[i];
		rl[i] = (struct ft_role_proc){ .pid = q->pid, .ppid = q->ppid, .cmdline = q->cmdline,
					       .start = q->start, .launches = q->m.launches,
					       .events = q->m.events, .batches = q->v.batches,
					       .forked = q->v.forked, .nforked = q->v.nforked,
					       .rank = p->hdr.rank, .world = p->hdr.world_size };
	}
	if (r->ranks.straggler >= 0)
		rl[r->ranks.r[r->ranks.straggler].proc].chosen = 1;
	r->main = ft_roles(rl, r->nprocs);
	for (int i = 0; i < r->nprocs; i++)
		r->procs[i].parent = rl[i].parent, r->procs[i].role = rl[i].role;
	free(rl);
	ft_mapped_build(r);
	struct ft_an_opts dflt;
	ft_an_default_opts(&dflt);
	/* steps from batches are the main process's: a worker's receipts are
	 * the indices it is sent, not training steps */
	for (int i = 0; i < r->nprocs; i++) {
		struct ft_metrics *m = &r->procs[i].m;
		r->procs[i].own_step_median_ns = m->step_median_ns;
		if (i != r->main && m->steps_from_batches) {
			m->steps = m->step_ns = m->step_median_ns = m->step_launches = 0;
			m->step_hidden = m->step_reads = m->steps_from_batches = 0;
			r->procs[i].v.first_step = r->procs[i].v.last_step_end = 0;
			r->procs[i].v.warmup_steps = r->procs[i].v.warmup_end = 0;
		}
		add_metrics(&r->total, m);         /* the run's sums, those steps left out */
	}
	r->total.wall_ns = wall;
	run_verdict(r, o ? o : &dflt, mg, err);
	feed_waits(r, mg, err);
	/* every other rank's own verdict is about its own loop, as the main
	 * process's is: its whole run would count its start-up as CPU */
	for (int j = 0; j < r->ranks.n; j++) {
		int i = r->ranks.r[j].proc;
		struct ft_run_verdict w = { 0 };
		loop_window(&r->procs[i].v, &w);
		if (i != r->main && w.from != FT_FROM_WHOLE)
			reanalyse(r, i, o ? o : &dflt, w.w0, w.w1, mg, ft_said_once(err));
	}
	for (int j = 0; j < r->ranks.n; j++) {
		r->ranks.r[j].limit = ft_limit_name(r->procs[r->ranks.r[j].proc].v.limit);
		r->ranks.r[j].step_median_ns = r->procs[r->ranks.r[j].proc].own_step_median_ns;
	}
	/* a median does not add up: the run's is that of the process with most steps */
	r->total.step_median_ns = 0;
	uint64_t most = 0;
	for (int i = 0; i < r->nprocs; i++)
		if (r->procs[i].m.steps > most) {
			most = r->procs[i].m.steps;
			r->total.step_median_ns = r->procs[i].m.step_median_ns;
		}
	r->step_range = o && o->step_range ? o->step_range : FT_STEP_DEFAULT;
	if (r->nf > 1)                  /* r->f is NULL when there are none */
		qsort(r->f, (size_t)r->nf, sizeof *r->f, by_lost);
	return 0;
}

void ft_report_free(struct ft_report *r)
{
	ft_ranks_free(&r->ranks);
	for (int i = 0; i < r->nprocs; i++)
		ft_verdict_free(&r->procs[i].v);
	free(r->rv.prod);
	ft_mapped_free(&r->mapped);
	free(r->procs);
	for (int i = 0; i < r->nf; i++)
		free((void *)r->f[i].cov);
	for (int i = 0; i < r->ncand; i++)
		free((void *)r->cand[i].cov);
	ft_cover_free(&r->feed);
	ft_cover_free(&r->feed_all);
	free(r->f);
	free(r->cand);
	ft_trace_close(&r->tr);
	memset(r, 0, sizeof *r);
}


/* ---- losses ----
 * What the recorder counted but could not record (reader.h's ft_loss),
 * summed over the processes: in the text, one line per kind with what to
 * change (not wrapped: one line each); in JSON, "losses" with every kind (0 when none). */
/* what the run lost of kind k, summed over its processes; *procs: how
 * many processes lost some */
uint64_t ft_report_loss(const struct ft_report *r, enum ft_loss k, int *procs)
{
	uint64_t n = 0;
	for (int i = 0; i < r->tr.nprocs; i++) {
		uint64_t x = ft_process_loss(r->tr.procs[i], k);
		n += x;
		if (procs)
			*procs += x != 0;
	}
	return n;
}

/* the capture window's line (words.c), when the main process has one */
static void report_window(const struct ft_report *r, FILE *out)
{
	char w[200];
	if (ft_words_capture(r->tr.procs[r->main], w, sizeof w))
		fprintf(out, "  capture window: %s\n", w);
}

/* a LOST line per kind of loss the run had */
static void report_losses(const struct ft_report *r, FILE *out)
{
	for (int k = 0; k < FT_LOSS_N; k++) {
		int procs = 0;
		uint64_t n = ft_report_loss(r, (enum ft_loss)k, &procs);
		if (!n)
			continue;
		fprintf(out, "  LOST %llu %s", (unsigned long long)n, ft_loss_info[k].what);
		if (r->tr.nprocs > 1)
			fprintf(out, " (%d of %d processes)", procs, r->tr.nprocs);
		fprintf(out, ": %s\n", ft_loss_info[k].fix);
	}
}

/* ---- text ---- */

/* The process tree as print_tree walks it, made once: each image's exec
 * successor (same pid, the next start), the images each one replaced, and
 * each one's children that no exec replaced, all in process order (each
 * list in CSR form: the entries of i are x[at[i]] .. x[at[i + 1] - 1]).
 * A lookup over every process for every process at every position made
 * the text report cubic in the number of processes. */
struct tree {
	int *succ;
	int *pred_at, *pred;
	int *kid_at, *kid;
};

static int by_pid_start(const void *x, const void *y, void *arg)
{
	const struct ft_rep_proc *p = arg;
	const struct ft_rep_proc *a = &p[*(const int *)x], *b = &p[*(const int *)y];
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

/* x[at[i]..] lists, for each i, the k (in order) whose key[k] is i */
static void csr(int n, const int *key, int **at_out, int **x_out)
{
	int *at = ft_xcalloc((size_t)n + 1, sizeof *at), *x = ft_xmalloc(((size_t)n + 1) * sizeof *x);
	for (int k = 0; k < n; k++)
		if (key[k] >= 0)
			at[key[k] + 1]++;
	for (int i = 0; i < n; i++)
		at[i + 1] += at[i];
	int *fill = ft_xmalloc(((size_t)n + 1) * sizeof *fill);
	memcpy(fill, at, (size_t)n * sizeof *fill);
	for (int k = 0; k < n; k++)
		if (key[k] >= 0)
			x[fill[key[k]]++] = k;
	free(fill);
	*at_out = at, *x_out = x;
}

static void tree_make(const struct ft_report *r, struct tree *t)
{
	int n = r->nprocs;
	int *o = ft_xmalloc(((size_t)n + 1) * sizeof *o), *key = ft_xmalloc(((size_t)n + 1) * sizeof *key);
	t->succ = ft_xmalloc(((size_t)n + 1) * sizeof *t->succ);
	for (int i = 0; i < n; i++)
		o[i] = i;
	qsort_r(o, (size_t)n, sizeof *o, by_pid_start, r->procs);
	for (int p = 0, q = 0; p < n; p++) {    /* q: the first later start of p's pid */
		const struct ft_rep_proc *a = &r->procs[o[p]];
		if (q <= p)
			q = p + 1;
		while (q < n && r->procs[o[q]].pid == a->pid && r->procs[o[q]].start == a->start)
			q++;
		t->succ[o[p]] = q < n && r->procs[o[q]].pid == a->pid ? o[q] : -1;
	}
	csr(n, t->succ, &t->pred_at, &t->pred);
	for (int k = 0; k < n; k++)
		key[k] = t->succ[k] < 0 ? r->procs[k].parent : -1;
	csr(n, key, &t->kid_at, &t->kid);
	free(o);
	free(key);
}

static void tree_free(struct tree *t)
{
	free(t->succ);
	free(t->pred_at);
	free(t->pred);
	free(t->kid_at);
	free(t->kid);
}

/* process i and its children, indented by depth: one line per image; an
 * image replaced by exec is named on its successor's line ("(exec'd from
 * timeout ...)") instead of its own */
static void print_tree(const struct ft_report *r, const struct tree *t, int i, int d, FILE *out)
{
	char cmd[72], from[72] = "";
	ft_brief_command(r->procs[i].cmdline, cmd, sizeof cmd);
	if (t->pred_at[i] < t->pred_at[i + 1])
		ft_brief_command(r->procs[t->pred[t->pred_at[i]]].cmdline, from, sizeof from);
	char rk[40];                                   /* "rank 1/4 " */
	int rkn = ft_rank_text(r->tr.procs[i], rk, sizeof rk - 1);
	if (rkn)
		strcat(rk, " "), rkn++;
	int ind = 2 * (d < 8 ? d + 1 : 9);
	int room = 78 - 2 - ind - snprintf(NULL, 0, "%d", r->procs[i].pid) - 8 - rkn;
	int fw = *from ? 12 : 0;                       /* "timeout 100 " */
	int cw = room - (*from ? fw + 15 : 0);
	if (cw > 48)
		cw = 48;
	fprintf(out, "  %*s%d %-6s %s%.*s%s%.*s%s\n", ind, "", r->procs[i].pid,
		ft_proc_role_name(r->procs[i].role), rk, cw > 8 ? cw : 8, cmd, *from ? " (exec'd from " : "", fw, from,
		*from ? ")" : "");
	if (d >= 16)
		return;
	for (int j = t->kid_at[i]; j < t->kid_at[i + 1]; j++)
		print_tree(r, t, t->kid[j], d + 1, out);
	/* the children of images this one replaced */
	for (int j = t->pred_at[i]; j < t->pred_at[i + 1]; j++) {
		int x = t->pred[j];
		for (int m = t->kid_at[x]; m < t->kid_at[x + 1]; m++)
			print_tree(r, t, t->kid[m], d + 1, out);
	}
}

/* Ranks of a job that made no collective feedtrace records (MPI's, or
 * gloo built into the program rather than loaded as libgloo): nothing to
 * compare, said so, since each rank's waits for the others then read as
 * waits for data or for other threads. */
static int by_int32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	return (a > b) - (a < b);
}

static void report_ranks_unmatched(const struct ft_report *r, FILE *out)
{
	if (r->ranks.n)
		return;
	int32_t world = 0, *rank = ft_xmalloc((size_t)(r->nprocs ? r->nprocs : 1) * sizeof *rank);
	int k = 0, n = 0;
	for (int i = 0; i < r->nprocs; i++) {
		const struct ft_file_header *h = &r->tr.procs[i]->hdr;
		if (h->world_size >= 2 && h->rank >= 0)
			world = h->world_size, rank[k++] = h->rank;
	}
	qsort(rank, (size_t)k, sizeof *rank, by_int32);
	for (int i = 0; i < k; i++)          /* distinct ranks (workers share theirs) */
		n += !i || rank[i] != rank[i - 1];
	free(rank);
	if (n < 2)
		return;
	char line[400];
	snprintf(line, sizeof line, "%d of %d here, and no collective was recorded (NCCL's and "
		 "libgloo's are; MPI's are not): the ranks are not compared. A rank that waits for "
		 "the others in a collective not recorded shows those waits as waits for another "
		 "thread or for data in its own verdict.", n, world);
	fputs("Ranks:", out);
	ft_wrap_from(out, line, 7, 7 + 1);
	fputc('\n', out);
}

/* the workers' file reads per step of the verdict's window */
static double worker_reads_per_step(const struct ft_report *r)
{
	uint64_t steps = r->rv.window_steps;
	return steps ? (double)r->rv.worker_reads / (double)steps : 0;
}

void ft_report_text(const struct ft_report *r, FILE *out)
{
	char a[48], b[48], c[48], line[320];
	const struct ft_metrics *t = &r->total;
	ft_fmt_count(a, sizeof a, t->events);
	ft_fmt_ns(b, sizeof b, t->wall_ns);
	const struct ft_process *mainp = r->tr.procs[r->main];
	int sig = mainp->has_end && mainp->end.reason == FT_END_SIGNAL ? mainp->end.status : 0;
	const char *sname = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;
	fprintf(out, "feedtrace report: %s", ft_fit(r->dir, sig ? 30 : 60));
	/* a run cut short is judged on what it did before: said first */
	if (sig)
		fprintf(out, " INTERRUPTED (killed by SIG%s)",
			sname ? sname : "?");
	fputc('\n', out);
	fprintf(out, "  %d process%s, %llu thread%s, %s events over %s", r->nprocs,
		r->nprocs == 1 ? "" : "es", (unsigned long long)t->threads,
		t->threads == 1 ? "" : "s", a, b);
	if (t->dropped)
		fprintf(out, "; %llu DROPPED", (unsigned long long)t->dropped);
	if (r->tr.errors)
		fprintf(out, "; %llu damaged places", (unsigned long long)r->tr.errors);
	fputc('\n', out);
	report_window(r, out);
	if (ft_flight_words(mainp, line, sizeof line))
		ft_wrap(out, line, 2);
	report_losses(r, out);
	if (t->steps) {
		ft_fmt_ns(a, sizeof a, t->step_ns / t->steps);
		ft_fmt_ns(b, sizeof b, t->step_median_ns);
		if (t->steps_from_optimizer) {
			snprintf(line, sizeof line, "%llu steps (no \"%.20s\" ranges: one per optimizer "
				 "step of the training phases, thread %d of the main process), mean %s, "
				 "median %s", (unsigned long long)t->steps, r->step_range,
				 r->procs[r->main].v.phases ? r->procs[r->main].v.phases->tid : 0, a, b);
		} else if (t->steps_from_batches) {
			int32_t tid = r->procs[r->main].v.batch_tid;
			char who[64];
			ft_thread_label(r->tr.procs[r->main], tid, who, sizeof who);
			snprintf(line, sizeof line, "%llu steps (no \"%.20s\" ranges: one per batch "
				 "received by %s (tid %d) of the main process), mean %s, median %s",
				 (unsigned long long)t->steps, r->step_range, who, tid, a, b);
		} else {
			/* a job of ranks: the steps of every process that has them */
			int np = 0, same = 1;
			uint64_t first = 0;
			for (int i = 0; i < r->nprocs; i++)
				if (r->procs[i].m.steps) {
					if (!np++)
						first = r->procs[i].m.steps;
					same &= r->procs[i].m.steps == first;
				}
			char in[64] = "";
			if (np > 1 && same)
				snprintf(in, sizeof in, ", %llu in each of %d processes",
					 (unsigned long long)first, np);
			else if (np > 1)
				snprintf(in, sizeof in, " of %d processes", np);
			snprintf(line, sizeof line, "%llu steps (\"%.20s\" ranges%s), mean %s, median %s",
				 (unsigned long long)t->steps, r->step_range, in, a, b);
		}
		ft_wrap(out, line, 2);
		int n = snprintf(line, sizeof line, "per step: %.1f launches, %.1f hidden syncs, "
				 "%.1f reads", ft_per_step(t, t->step_launches),
				 ft_per_step(t, t->step_hidden), ft_per_step(t, t->step_reads));
		if (r->rv.worker_reads)
			snprintf(line + n, sizeof line - (size_t)n, "; %.1f file reads in the "
				 "loader workers", worker_reads_per_step(r));
		ft_wrap(out, line, 2);
	}
	ft_phases_text(r->procs[r->main].v.phases, out);
	fputc('\n', out);

	ft_ranks_text(&r->ranks, out, "The verdict below is about it.");
	report_ranks_unmatched(r, out);
	const struct ft_rep_proc *mp = &r->procs[r->main];
	const struct ft_verdict *v = &mp->v;
	const struct ft_run_verdict *rv = &r->rv;
	fputs("Verdict:", out);
	ft_wrap_from(out, rv->process, 9, 9 + 1);        /* wraps under the process */
	ft_wrap(out, v->sentence, 2);
	if (*rv->detail)
		ft_wrap(out, rv->detail, 2);
	/* one line of evidence */
	if (v->by_launch && v->basis == FT_BASIS_GPU_IDLE) {
		ft_fmt_ns(a, sizeof a, v->idle_ns);
		ft_fmt_ns(b, sizeof b, rv->w1 - rv->w0);
		int n = snprintf(line, sizeof line, "evidence: GPU idle %s of the %s loop%s", a, b,
				 v->gpu_measured ? " (measured)" : "");
		int k1 = -1, k2 = -1;
		for (int k = 0; k < FT_CAT_N; k++)
			if (v->idle_by_feed[k] && (k1 < 0 || v->idle_by_feed[k] > v->idle_by_feed[k1]))
				k1 = k;
		for (int k = 0; k < FT_CAT_N; k++)
			if (k != k1 && v->idle_by_feed[k] &&
			    (k2 < 0 || v->idle_by_feed[k] > v->idle_by_feed[k2]))
				k2 = k;
		for (int j = 0, k = k1; j < 2 && k >= 0; j++, k = k2) {
			ft_fmt_ns(c, sizeof c, v->idle_by_feed[k]);
			n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %s", j ? "," : ":",
				      ft_cat_label[k], c);
		}
		ft_wrap(out, line, 2);
	} else if (v->nfeeders) {
		int n = snprintf(line, sizeof line, "evidence: the feeding thread%s",
				 v->nfeeders > 1 ? "s'" : "'s");
		n += snprintf(line + n, sizeof line - (size_t)n, " time in the %s window:",
			      ft_from_name(rv->from));
		ft_wrap(out, line, 2);
		int col = 0;
		const struct ft_file_header *mh = &r->tr.procs[r->main]->hdr;
		for (int k = 0; k < FT_CAT_N; k++) {
			/* waiting for other ranks: shown for a rank, or when there was some */
			if (k == FT_CAT_RANKS && !v->t[k] && !mh->world_size)
				continue;
			double pc = v->wall_ns ? 100.0 * (double)v->t[k] / (double)v->wall_ns : 0;
			/* waiting for a core: when the samples show some that
			 * its one decimal can say */
			if (k == FT_CAT_RUNQ && pc < 0.05)
				continue;
			int m = snprintf(line, sizeof line, "%s %.1f%%", ft_cat_label[k], pc);
			if (col + m + 3 > 78) {
				fputc('\n', out);
				col = 0;
			}
			col += fprintf(out, "%s%s", col ? "   " : "    ", line);
		}
		fputc('\n', out);
	}
	if (v->by_launch) {             /* the device's idle: measured, or the model's */
		ft_gpu_idle_words(v, rv->w1 - rv->w0, line, sizeof line);
		ft_wrap(out, line, 2);
	}
	if (rv->startup_ns && rv->from != FT_FROM_WHOLE) {
		ft_fmt_ns(a, sizeof a, rv->startup_ns);
		int n;
		/* a flight recorder's window starts mid-run: no start-up in it */
		const char *before = r->tr.procs[r->main]->nflight ? "window's start" : "start-up";
		if (rv->warmup_steps) {
			ft_fmt_ns(b, sizeof b, rv->warmup_ns);
			n = snprintf(line, sizeof line, "%s %s before the window, with %llu "
				     "warm-up step%s (%s, each over %dx the median step)", before, a,
				     (unsigned long long)rv->warmup_steps,
				     rv->warmup_steps > 1 ? "s" : "", b, FT_WARMUP_X);
		} else if (rv->launches_before) {
			n = snprintf(line, sizeof line, "%s %s before the loop's first launch, "
				     "with %llu launch%s before a pause (set-up)", before, a,
				     (unsigned long long)rv->launches_before,
				     rv->launches_before > 1 ? "es" : "");
		} else {
			n = snprintf(line, sizeof line, "%s %s before the %s", before, a,
				     rv->from == FT_FROM_STEPS ? "first step" : ft_from_name(rv->from));
		}
		int k = 0;
		for (int c2 = 0; c2 < FT_CAT_N; c2++)
			if (rv->startup[c2] * 20 >= rv->startup_ns && rv->startup[c2]) {
				ft_fmt_ns(b, sizeof b, rv->startup[c2]);
				n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %s",
					      k++ ? "," : ":", ft_cat_label[c2], b);
			}
		ft_wrap(out, line, 2);
	}
	if (r->nprocs > 1) {
		fputs("  processes:\n", out);
		struct tree t;
		tree_make(r, &t);
		for (int i = 0; i < r->nprocs; i++)
			if (r->procs[i].parent < 0)
				print_tree(r, &t, i, 0, out);
		tree_free(&t);
	}
	fputc('\n', out);

	char mapped[1024];
	ft_mapped_sentence(&r->mapped, mapped, sizeof mapped);
	if (*mapped) {
		fputs("Mapped data\n", out);
		ft_wrap(out, mapped, 2);
		fputc('\n', out);
	}
	if (t->io_uring_rings) {
		int n = snprintf(line, sizeof line, "%llu io_uring ring%s set up (process",
				 (unsigned long long)t->io_uring_rings,
				 t->io_uring_rings == 1 ? "" : "s");
		for (int i = 0, k = 0; i < r->nprocs && n < (int)sizeof line - 80; i++)
			if (r->procs[i].m.io_uring_rings)
				n += snprintf(line + n, sizeof line - (size_t)n, "%s %d",
					      k++ ? "," : "", r->procs[i].pid);
		snprintf(line + n, sizeof line - (size_t)n, "): the reads submitted through "
			 "io_uring are not traced: this report's file I/O leaves them out.");
		fputs("io_uring\n", out);
		ft_wrap(out, line, 2);
		fputc('\n', out);
	}

	/* one row per problem, each with its suggestion (problems.c) */
	struct ft_problem *pb;
	int npb = ft_problems(r, &pb);
	fprintf(out, "Findings, by time the feed lost (%d", npb);
	if (r->gaps_left_out)
		fprintf(out, "; %llu shorter launch gaps left out", (unsigned long long)r->gaps_left_out);
	fputs(")\n", out);
	if (!npb)
		fputs("  none\n", out);
	int shown_pb = ft_problems_shown(r, pb, npb);
	uint64_t negligible = rv->w1 > rv->w0 ? (rv->w1 - rv->w0) / 1000 : 0;
	for (int i = 0; i < shown_pb; i++) {
		const struct ft_problem *p = &pb[i];
		ft_fmt_ns(a, sizeof a, p->lost_ns);
		if (r->nprocs > 1 && p->nprocs == 1)
			snprintf(c, sizeof c, "%d", p->pid);
		else
			c[0] = 0;
		int col = fprintf(out, "%3d %9s  %-16s %s%s", i + 1, a, p->kind, c, *c ? " " : "");
		ft_wrap_from(out, p->what, 31, col);
		if (p->suggestion && *p->suggestion) {
			snprintf(line, sizeof line, "-> %s", p->suggestion);
			ft_wrap(out, line, 31);
		}
	}
	if (npb > shown_pb && ft_problem_rank_ns(&pb[shown_pb]) < negligible)
		fprintf(out, "  %s%d smaller, each under 0.1%% of the %s (--json lists them all)\n",
			shown_pb ? "... " : "", npb - shown_pb,
			rv->from == FT_FROM_WHOLE ? "run" : "loop");
	else if (npb > shown_pb)
		fprintf(out, "  ... %d smaller (--json lists them all)\n", npb - shown_pb);
	free(pb);
	if (t->gaps) {
		int queued = 0, early = 0;
		for (int i = 0; i < r->nf; i++) {
			queued += ft_gap_queued(r, i) && r->f[i].scope == 0;
			early += ft_gap_startup(r, i) && r->f[i].scope == 0;
		}
		ft_fmt_ns(a, sizeof a, t->gap_ns);
		int n = snprintf(line, sizeof line, "launch gaps in all: %llu on streams, %s%s",
				 (unsigned long long)t->gaps, a, queued ? "; those with work still "
				 "queued on the GPU are no finding, the GPU being the limit" : "");
		if (early)
			snprintf(line + n, sizeof line - (size_t)n, "; %d before the loop (start-up) "
				 "%s no finding", early, early > 1 ? "are" : "is");
		ft_wrap(out, line, 2);
	}
	fputc('\n', out);

	fputs("Top call sites (hidden syncs and contended locks)\n", out);
	int shown = 0;
	for (int i = 0; i < r->nf && shown < 10; i++) {
		const struct ft_finding *f = &r->f[i];
		if (!ft_fkind(f)->site)
			continue;
		if (!shown++)
			fprintf(out, "  %8s %9s %9s  %s\n", "calls", "total", "max", "site");
		ft_fmt_ns(a, sizeof a, f->total_ns);
		ft_fmt_ns(b, sizeof b, f->max_ns);
		ft_fmt_count(c, sizeof c, f->count);
		ft_fkind(f)->site(f, line, sizeof line);
		/* the site in full: it says where to change the code */
		fprintf(out, "  %8s %9s %9s  %s\n", c, a, b, line);
	}
	if (!shown)
		fputs("  none\n", out);
	ft_symbols_print_notes(out, "  note: ");
}

/* ---- shared with report_json.c ---- */

double ft_per_step(const struct ft_metrics *m, uint64_t x)
{
	return m->steps ? (double)x / (double)m->steps : 0;
}

struct stepfeed { struct ft_steps *s; };

static int step_event(const struct ft_event *ev, void *arg)
{
	ft_steps_event(((struct stepfeed *)arg)->s, ev, 0, 0, 0);
	return 0;
}

/* the steps of the process with most steps (that of the report's median),
 * fed with its events; NULL without steps */
static struct ft_steps *steps_of(struct ft_report *r)
{
	int best = -1;
	for (int i = 0; i < r->nprocs; i++)
		if (r->procs[i].m.steps && (best < 0 || r->procs[i].m.steps > r->procs[best].m.steps))
			best = i;
	if (best < 0)
		return NULL;
	struct stepfeed sf = { ft_steps_new(r->tr.procs[best], r->step_range) };
	/* the report has said what is damaged: not again */
	ft_merge_events(r->tr.procs[best], NULL, step_event, &sf, ft_said_once(stderr), NULL);
	return sf.s;
}

/* the step times of the process with most steps (that of the report's
 * median), in the order they closed; *len malloc'd, NULL without steps */
void ft_report_step_lengths(struct ft_report *r, uint64_t **len, size_t *n)
{
	struct ft_steps *s = steps_of(r);
	*len = NULL;
	*n = 0;
	if (!s)
		return;
	*len = ft_steps_lengths(s, n);
	ft_steps_free(s);
}

void ft_report_step_periods(struct ft_report *r, uint64_t **per, size_t *n)
{
	struct ft_steps *s = steps_of(r);
	*per = NULL;
	*n = 0;
	if (!s)
		return;
	*per = ft_steps_periods(s, n);
	struct ft_steps_result sr;
	ft_steps_finish(s, &sr);
	ft_steps_free(s);
	if (sr.warmup_steps && sr.warmup_steps < *n) {
		*n -= sr.warmup_steps;
		memmove(*per, *per + sr.warmup_steps, *n * sizeof **per);
	}
}

/* The rows that matter, the text's and the HTML page's: ten at most, past
 * the third none under 1% of the first's cost, and none that cost under a
 * thousandth of the verdict's window (a few microseconds of a library's
 * own lock in a run of seconds is true and beside the point; the rest are
 * in --json); a row's cost here is what it is ranked by
 * (ft_problem_rank_ns: a storm the feeding threads never waited through
 * cost the loop nothing) */
int ft_problems_shown(const struct ft_report *r, const struct ft_problem *pb, int npb)
{
	const struct ft_run_verdict *rv = &r->rv;
	uint64_t negligible = rv->w1 > rv->w0 ? (rv->w1 - rv->w0) / 1000 : 0;
	int n = 0;
	while (n < npb && n < 10 &&
	       !(n >= 3 && ft_problem_rank_ns(&pb[n]) * 100 < ft_problem_rank_ns(&pb[0])) &&
	       ft_problem_rank_ns(&pb[n]) >= negligible)
		n++;
	return n;
}

/* ---- commands ---- */

int ft_report_print(const char *dir, FILE *out)
{
	struct ft_report r;
	struct ft_an_opts o;
	ft_an_default_opts(&o);
	if (ft_report_build(&r, dir, &o, NULL, stderr) != 0)
		return 1;
	ft_report_text(&r, out);
	ft_report_free(&r);
	return 0;
}
