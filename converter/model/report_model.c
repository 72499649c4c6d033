/*
 * report_model.c: the model of a run (`feedtrace report`, report_model.h):
 * analyses every process (merge.c, analysis.c), picks the main process,
 * the roles and the loop's window, analyses the main process and its
 * workers again within that window, and decides the run's verdict (its
 * producers, start-up, data cause and detail_say), keeps the findings
 * ranked by time lost, the losses, the steps and which Problems rows the
 * text and HTML list. Decides and words nothing (it prints only the
 * dropped events of a process, on err): words.c words what this decided
 * (report_text.c's ft_report_build calls both), report_text.c,
 * report_json.c and html.c print it. Never decides a limit itself:
 * verdict.c does, per process. The command and its options are
 * cmd_report.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "analyse.h"
#include "cover.h"
#include "phases.h"
#include "problems.h"
#include "report_model.h"
#include "progress.h"
#include "roles.h"
#include "steps.h"

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

/* whether and how the report caps the findings it keeps of f's kind (fkind.h) */
static int capped(const struct ft_finding *f)
{
	const struct ft_fkind_ops *k = ft_fkind(f);
	return k->cap ? k->cap(f) : FT_CAP_NONE;
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
	int cap = capped(f);
	if (cap == FT_CAP_LONGEST && r->ngaps >= FT_REPORT_MAX_GAPS) {
		/* replace the shortest kept one of its kind and cap if this one is longer */
		int min = -1;
		for (int i = 0; i < r->nf; i++)
			if (r->f[i].kind == f->kind && capped(&r->f[i]) == FT_CAP_LONGEST &&
			    (min < 0 || r->f[i].lost_ns < r->f[min].lost_ns))
				min = i;
		r->gaps_left_out++;
		if (min >= 0 && r->f[min].lost_ns < f->lost_ns)
			r->f[min] = *f;
		return;
	}
	if (cap == FT_CAP_DROP && r->ngaps >= FT_REPORT_MAX_GAPS) {
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
	if (cap != FT_CAP_NONE)
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

/* one process analysed: its findings to sink (NULL: none), m and v (its
 * sentence is worded once the run is decided: ft_words_report) */
static void analyse(struct ft_process *p, const struct ft_an_opts *o,
		    const struct ft_merge_opts *mg, const struct ft_an_sink *sink, FILE *err,
		    struct ft_metrics *m, struct ft_verdict *v)
{
	ft_analyse(p, o, mg, sink, err, tick, NULL, m, v);
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

int ft_report_main_worker(const struct ft_report *r, int i)
{
	return main_worker(r, i);
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

int ft_report_model_build(struct ft_report *r, const char *dir, const struct ft_an_opts *o,
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

/* ---- the steps of the run ---- */

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
