/*
 * analysis.c: the diagnoses of docs/ANALYSES.md over one process's events
 * in start-time order: per-thread time accounts, per-stream submission
 * state (gaps, outstanding work), hidden-sync and lock groups, small-read
 * bursts, per-ms counters, the GPU busy model and the verdict. Memory
 * grows with threads, streams, locks, call sites, files in one storm and
 * stream work open at once, never with events.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"
#include "analysis.h"
#include "../libfeedtrace/modpath.h"
#include "counters.h"
#include "events.h"
#include "groups.h"
#include "steps.h"
#include "storm.h"
#include "symbolize.h"

const char *const ft_cat_name[FT_CAT_N] = {
	"submit", "gpu_wait", "hidden_sync", "io", "locks", "data_wait", "other_cpu" };
const char *const ft_cat_label[FT_CAT_N] = {
	"submitting", "waiting on GPU", "hidden sync", "file I/O", "locks",
	"waiting for data", "other CPU" };
const char *const ft_fkind_track[FT_FK_N] = {
	"launch gaps", "hidden syncs", "small-read storms", "lock contention" };
const char *const ft_fkind_slice[FT_FK_N] = {
	"launch gap", "hidden sync", "small-read storm", "lock contention" };
const char *const ft_fkind_key[FT_FK_N] = {
	"launch_gap", "hidden_sync", "small_read_storm", "lock_contention" };
const char *const ft_ctr_name[FT_CTR_N] = {
	"kernel launches per ms", "bytes read per ms", "reads per ms",
	"outstanding async work" };
const char *const ft_storm_hist_label[FT_STORM_HIST] = {
	"<512", "<1K", "<4K", "<16K", "<64K", "<256K", "<1M", ">=1M" };

const char *ft_sync_word(unsigned s)
{
	static const char *const w[] = { "submit", "wait", "hidden sync", "poll", "other" };
	return s < 5 ? w[s] : "unknown";
}

const char *ft_dir_word(unsigned d)
{
	static const char *const w[] = { "unified", "HtoD", "DtoH", "DtoD", "peer", "memset" };
	return d < 6 ? w[d] : "unknown";
}

/* ---- options ---- */

void ft_an_default_opts(struct ft_an_opts *o)
{
	o->gap_ns = 1000000;
	o->storm_window_ns = 1000000000;
	o->storm_reads = 1000;
	o->small_read = 65536;
	o->storm_ref_read = 1 << 20;
	o->lock_min_ns = 0;
	o->bin_ns = 1000000;
	o->step_range = FT_STEP_DEFAULT;
}

const char ft_an_opts_help[] =
	"  --gap-ms MS          launch gap threshold (1)\n"
	"  --storm-reads N      small reads within one window that make a storm (1000)\n"
	"  --storm-window-ms MS storm window (1000)\n"
	"  --small-read BYTES   reads asking for fewer bytes are small (65536)\n"
	"  --lock-min-ms MS     report locks with at least this total wait (0)\n"
	"  --bin-ms MS          counter bin (1)\n"
	"  --step-range NAME   ranges whose name starts with NAME are steps (step)\n"
	"  --symbols DIR        also look for debug files and copies of the program's\n"
	"                       files in DIR (repeatable): by build-id, by\n"
	"                       .gnu_debuglink, by file name\n";

int ft_parse_ms(const char *cmd, const char *opt, const char *text, uint64_t *ns)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || *end || !(v >= 0) || v > 3600e3) {
		fprintf(stderr, "feedtrace %s: %s needs milliseconds from 0 to 3600000, not '%s'\n",
			cmd, opt, text);
		return -1;
	}
	*ns = (uint64_t)(v * 1e6 + 0.5);
	return 0;
}

/* ---- per-kind facts, built once from events.def ---- */

struct kfacts {
	int cat, read, launch, mutex, cuda;
	int got;                  /* a wait that returned data: 1 when ret > 0, 2 when ret == 0 */
	int open;                 /* opens a file by path */
	const struct ft_field *ret, *req, *path, *fd, *sync, *stream, *sym, *handle, *lock;
	const struct ft_field *site, *py, *cond;
};
static struct kfacts kf[FT_EV_COUNT];
static int kf_built;

static void build_facts(void)
{
	for (unsigned k = 1; k < FT_EV_COUNT; k++) {
		const struct ft_kind_info *ki = ft_kind(k);
		struct kfacts *f = &kf[k];
		f->ret = ft_kind_field(ki, "ret");
		f->req = ft_kind_field(ki, "req");
		f->path = ft_kind_field(ki, "path");
		f->fd = ft_kind_field(ki, "fd");
		f->sync = ft_kind_field(ki, "sync");
		f->stream = ft_kind_field(ki, "stream");
		f->sym = ft_kind_field(ki, "sym");
		f->handle = ft_kind_field(ki, "handle");
		f->lock = ft_kind_field(ki, "lock");
		f->site = ft_kind_field(ki, "site");
		f->py = ft_kind_field(ki, "py");
		f->cond = ft_kind_field(ki, "cond");
		f->cuda = ki->group == FT_G_CUDA && f->sync;
		switch (ki->group) {
		case FT_G_IO: f->cat = FT_CAT_IO; break;
		case FT_G_LOCK: f->cat = FT_CAT_LOCK; break;
		case FT_G_CUDA: f->cat = FT_CAT_SUBMIT; break;
		default: f->cat = FT_CAT_CPU; break;
		}
		f->read = f->req && f->ret && ki->group == FT_G_IO;
		f->mutex = f->lock != NULL;       /* mutex and rwlock records carry "lock" */
		/* waiting for another thread or process to deliver: semaphores,
		 * condition variables (signalled by a producer), multiplexed waits,
		 * reads of pipes and sockets */
		if ((k >= FT_EV_COND_WAIT && k <= FT_EV_SEM_CLOCKWAIT)) {
			f->cat = FT_CAT_DATA;
			f->got = 2;
		}
		if (k >= FT_EV_POLL && k <= FT_EV_PIPE_READ) {
			f->cat = FT_CAT_DATA;
			f->got = 1;
		}
		if (k == FT_EV_FD_NEW || k == FT_EV_PIPE_WRITE)
			f->cat = FT_CAT_CPU;    /* a producer handing over: not a lock */
		f->open = (k >= FT_EV_OPEN && k <= FT_EV_OPEN64_2) || k == FT_EV_CREAT ||
			  k == FT_EV_FOPEN || k == FT_EV_FOPEN64;
		f->launch = k == FT_EV_CU_LAUNCH_KERNEL || k == FT_EV_CU_LAUNCH_KERNEL_EX ||
			    k == FT_EV_CU_LAUNCH_COOP || k == FT_EV_CU_GRAPH_LAUNCH;
	}
	kf_built = 1;
}

static const struct kfacts *facts(unsigned kind)
{
	if (!kf_built)
		build_facts();
	return kind > 0 && kind < FT_EV_COUNT ? &kf[kind] : NULL;
}

/* a wait that returned data: a batch received (the GIL's waits aside) */
static int got_data(const struct kfacts *f, const struct ft_rec *r)
{
	if (!f->got || !f->ret)
		return 0;
	int64_t ret = ft_field_signed(r, f->ret);
	return f->got == 1 ? ret > 0 : ret == 0;
}

void ft_an_role_count(const struct ft_rec *r, uint64_t *launches, uint64_t *batches)
{
	const struct kfacts *f = facts(r->kind);
	if (!f)
		return;
	*launches += f->launch != 0;
	*batches += got_data(f, r);
}

void ft_an_info(const struct ft_rec *r, struct ft_evinfo *o)
{
	const struct kfacts *f = facts(r->kind);
	memset(o, 0, sizeof *o);
	o->cat = FT_CAT_CPU;
	if (!f)
		return;
	o->cat = f->cat;
	o->read = f->read;
	o->launch = f->launch;
	if (f->cuda) {
		o->cuda = 1;
		o->sync = (unsigned)ft_field_raw(r, f->sync);
		o->stream = f->stream ? ft_field_raw(r, f->stream) : 0;
		switch (o->sync) {
		case FT_SYNC_WAIT: case FT_SYNC_POLL: o->cat = FT_CAT_GPU_WAIT; break;
		case FT_SYNC_HIDDEN: o->cat = FT_CAT_HIDDEN; break;
		default: o->cat = FT_CAT_SUBMIT; break;
		}
	}
}

/* ---- state ---- */

#define RECENT 256                 /* per-thread calls kept for gap attribution */

struct recent { uint64_t start, end; int cat; };

struct thread {
	int32_t tid;
	uint64_t first, last_end, events, launches;
	uint64_t t[FT_CAT_N];
	uint64_t ct[FT_CAT_N];       /* t clipped to the window */
	uint64_t wevents, batches, first_batch, last_batch;
	struct recent ring[RECENT];
	uint32_t nring, ring_head;   /* entries, next write position */
	uint64_t last_sub_end, last_sync_end;
	int submitted;
};

struct stream {
	uint64_t id;
	uint64_t last_sub_end, last_sync_end;
	int submitted;
	uint64_t seq, done;          /* submissions, known complete */
	/* the GPU model: busy from a submission to a wait that drained it */
	int busy, idle_hidden;       /* idle_hidden: drained by a hidden sync */
	uint64_t busy_since, idle_from, first_sub;
};

struct busy { uint64_t start, end; int hidden; };



struct ft_an {
	const struct ft_process *p;
	struct { uint64_t addr; int gil; } gilc[16];  /* is_gil's answers by address */
	struct { uint32_t path; uint8_t module; } modc[1024];  /* module_path's, by string id */
	struct ft_an_opts o;
	struct ft_an_sink sink;
	struct thread *th; int nth, capth; struct ft_map thmap; long last_th;
	int32_t th_tid[8];       /* tids of th[0..7] */
	struct stream *st; int nst, capst; struct ft_map stmap;
	struct ft_group_set hid, lk;   /* hidden syncs, lock waits (groups.c) */
	struct evrec { int stream; uint64_t seq; } *ev;  /* cuEventRecord: where, when */
	int nev, capev; struct ft_map evmap;
	struct ft_storm *storm;  /* small-read storms (storm.c) */
	struct ft_counters ctr;  /* the per-bin counters (counters.c) */
	/* the GPU model: busy intervals of all streams (one per drain) */
	struct busy *busy; int nbusy, capbusy;
	uint64_t busy_done, busy_last; /* busy time merged and dropped; the latest end */
	uint64_t now;                /* the current event's start */
	uint64_t sidle[FT_CAT_N];    /* streams' idle time in the window, by cause */
	uint64_t first_launch;
	/* launching threads' lock waits: their union in the window */
	uint64_t lk0, lk1, lk_union;
	/* run */
	uint64_t first_ts, last_end;
	struct ft_metrics m;
	struct ft_steps *steps;
};

struct ft_an *ft_an_new(const struct ft_process *p, const struct ft_an_opts *o,
			const struct ft_an_sink *sink)
{
	struct ft_an *a = ft_xcalloc(1, sizeof *a);
	a->p = p;
	if (o)
		a->o = *o;
	else
		ft_an_default_opts(&a->o);
	if (sink)
		a->sink = *sink;
	a->last_th = -1;
	if (a->o.storm_reads < 1)
		a->o.storm_reads = 1;
	a->storm = ft_storm_new(p, &a->o, &a->sink);
	ft_counters_init(&a->ctr, a->o.bin_ns, &a->sink);
	a->steps = ft_steps_new(p, a->o.step_range);
	return a;
}

void ft_an_free(struct ft_an *a)
{
	if (!a)
		return;
	free(a->th); ft_map_free(&a->thmap);
	free(a->st); ft_map_free(&a->stmap);
	ft_groups_free(&a->hid);
	ft_groups_free(&a->lk);
	free(a->ev); ft_map_free(&a->evmap);
	ft_steps_free(a->steps);
	ft_storm_free(a->storm);
	free(a->busy);
	free(a);
}

static struct thread *thread_of(struct ft_an *a, int32_t tid)
{
	if (a->last_th >= 0 && a->th[a->last_th].tid == tid)
		return &a->th[a->last_th];
	/* the few threads of most processes: a scan of one cache line beats
	 * hashing (a struct thread is kilobytes: its tid is not scanned) */
	for (int k = 0; k < a->nth && k < 8; k++)
		if (a->th_tid[k] == tid) {
			a->last_th = k;
			return &a->th[k];
		}
	long i = ft_map_get(&a->thmap, (uint64_t)(uint32_t)tid);
	if (i < 0) {
		if (a->nth == a->capth)
			a->th = ft_grow(a->th, &a->capth, sizeof *a->th);
		i = a->nth++;
		memset(&a->th[i], 0, sizeof a->th[i]);
		a->th[i].tid = tid;
		if (i < 8)
			a->th_tid[i] = tid;
		ft_map_put(&a->thmap, (uint64_t)(uint32_t)tid, (uint32_t)i);
	}
	a->last_th = i;
	return &a->th[i];
}

static struct stream *stream_of(struct ft_an *a, uint64_t id)
{
	long i = ft_map_get(&a->stmap, id);
	if (i < 0) {
		if (a->nst == a->capst)
			a->st = ft_grow(a->st, &a->capst, sizeof *a->st);
		i = a->nst++;
		memset(&a->st[i], 0, sizeof a->st[i]);
		a->st[i].id = id;
		ft_map_put(&a->stmap, id, (uint32_t)i);
	}
	return &a->st[i];
}

/* A lock wait's call site: Python's, else the native stack's (groups.c
 * sums them per site) */
static void lock_site(struct ft_an *a, struct ft_group *g, const struct ft_rec *r, uint64_t dur)
{
	const struct kfacts *f = &kf[r->kind];
	uint32_t py = f->py ? (uint32_t)ft_field_raw(r, f->py) : 0;
	uint32_t site = py ? py : f->site ? ft_site_key(a->p, (uint32_t)ft_field_raw(r, f->site)) : 0;
	ft_group_site(g, site, py != 0, dur);
}

static void outstanding_set(struct ft_an *a, struct stream *s, uint64_t done)
{
	if (done > s->seq)
		done = s->seq;
	if (done > s->done) {
		a->ctr.out_total -= done - s->done;
		s->done = done;
	}
}

/* ---- launch gaps ---- */

/* What thread t did in [g0, g1): overlap of its recent calls, the rest CPU. */
static void attribute(const struct thread *t, uint64_t g0, uint64_t g1, uint64_t out[FT_CAT_N])
{
	memset(out, 0, FT_CAT_N * sizeof *out);
	uint64_t covered_from = g1, traced = 0;
	uint32_t n = t->nring;
	for (uint32_t k = 0; k < n; k++) {
		const struct recent *r = &t->ring[(t->ring_head + RECENT - 1 - k) % RECENT];
		if (r->end <= g0)
			break;
		uint64_t s = r->start > g0 ? r->start : g0, e = r->end < g1 ? r->end : g1;
		if (e > s) {
			out[r->cat] += e - s;
			traced += e - s;
		}
		covered_from = r->start > g0 ? r->start : g0;
		if (k + 1 == n && n == RECENT && r->start > g0)
			covered_from = r->start;   /* older calls were evicted */
	}
	uint64_t gap = g1 - g0;
	if (n == RECENT && covered_from > g0 && g1 > covered_from) {
		/* extrapolate the evicted part with the covered part's mix */
		double scale = (double)gap / (double)(g1 - covered_from);
		traced = 0;
		for (int c = 0; c < FT_CAT_N; c++) {
			out[c] = (uint64_t)((double)out[c] * scale);
			traced += out[c];
		}
	}
	out[FT_CAT_CPU] += gap > traced ? gap - traced : 0;
}

/* length of [s, e) within the window (all of it without a window) */
static uint64_t clip(const struct ft_an *a, uint64_t s, uint64_t e)
{
	if (a->o.win_end) {
		if (s < a->o.win_start)
			s = a->o.win_start;
		if (e > a->o.win_end)
			e = a->o.win_end;
	}
	return e > s ? e - s : 0;
}

/* The key of a stream as the GPU sees it: each thread's per-thread default
 * stream (2) is its own; the legacy stream's two names (0, 1) are one. */
static uint64_t stream_key(uint64_t stream, int32_t tid)
{
	if (stream == 2)
		return 1ull << 63 | (uint32_t)tid;
	return stream == 1 ? 0 : stream;
}

/* Stream s idled in [g0, g1) until thread t submitted to it: what t did
 * meanwhile, within the window; after a hidden sync, the time t spent on
 * the CPU or submitting is the sync's cost (without it the GPU would have
 * had queued work). */
static void stream_idle(struct ft_an *a, const struct stream *s, const struct thread *t,
			uint64_t g0, uint64_t g1)
{
	if (a->o.win_end) {
		if (g0 < a->o.win_start)
			g0 = a->o.win_start;
		if (g1 > a->o.win_end)
			g1 = a->o.win_end;
	}
	if (g1 <= g0)
		return;
	uint64_t attr[FT_CAT_N];
	attribute(t, g0, g1, attr);
	if (s->idle_hidden) {
		attr[FT_CAT_HIDDEN] += attr[FT_CAT_SUBMIT] + attr[FT_CAT_CPU] + attr[FT_CAT_GPU_WAIT];
		attr[FT_CAT_SUBMIT] = attr[FT_CAT_CPU] = attr[FT_CAT_GPU_WAIT] = 0;
	}
	for (int c = 0; c < FT_CAT_N; c++)
		a->sidle[c] += attr[c];
}

static int busy_cmp(const void *x, const void *y)
{
	const struct busy *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The busy intervals merged into their union, sorted; those that end
 * before `before` (no later interval can start earlier) summed into
 * busy_done within the window and dropped: memory stays bounded by the
 * streams' work open at once, not by the drains. */
static void busy_compact(struct ft_an *a, uint64_t before)
{
	if (a->nbusy > 1)
		qsort(a->busy, (size_t)a->nbusy, sizeof *a->busy, busy_cmp);
	int n = 0;
	for (int i = 0; i < a->nbusy; i++) {
		if (n && a->busy[i].start <= a->busy[n - 1].end) {
			if (a->busy[i].end > a->busy[n - 1].end)
				a->busy[n - 1].end = a->busy[i].end;
			continue;
		}
		a->busy[n++] = a->busy[i];
	}
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (a->busy[i].end < before) {
			uint64_t s = a->busy[i].start, e = a->busy[i].end;
			if (!a->o.win_end && s < a->first_launch)
				s = a->first_launch;
			a->busy_done += a->o.win_end ? clip(a, s, e) : e > s ? e - s : 0;
		} else {
			a->busy[k++] = a->busy[i];
		}
	}
	a->nbusy = k;
}

/* stream s's queued work is known complete at end */
static void gpu_drained(struct ft_an *a, struct stream *s, uint64_t end, int hidden)
{
	if (!s->busy)
		return;
	if (a->nbusy >= 1024 && a->nbusy == a->capbusy) {
		uint64_t before = a->now;       /* later intervals start at or after it */
		for (int i = 0; i < a->nst; i++)
			if (a->st[i].busy && a->st[i].busy_since < before)
				before = a->st[i].busy_since;
		busy_compact(a, before);
	}
	if (a->nbusy == a->capbusy)
		a->busy = ft_grow(a->busy, &a->capbusy, sizeof *a->busy);
	if (end > a->busy_last)
		a->busy_last = end;
	a->busy[a->nbusy++] = (struct busy){ s->busy_since, end, hidden };
	s->busy = 0;
	s->idle_from = end;
	s->idle_hidden = hidden;
}

static int cause_of(const uint64_t attr[FT_CAT_N])
{
	int best = FT_CAT_CPU;
	for (int c = 0; c < FT_CAT_N; c++)
		if (attr[c] > attr[best])
			best = c;
	return best;
}

static void report_gap(struct ft_an *a, int scope, uint64_t stream, struct thread *t,
		       uint64_t g0, uint64_t g1, int after_sync, const struct ft_event *ev)
{
	struct ft_finding f;
	memset(&f, 0, sizeof f);
	f.kind = FT_FK_GAP;
	f.pid = a->p->hdr.pid;
	f.start = g0;
	f.end = g1;
	f.lost_ns = g1 - g0;
	f.tid = t->tid;
	f.scope = scope;
	f.stream = stream;
	f.after_sync = after_sync;
	attribute(t, g0, g1, f.attr);
	f.cause = cause_of(f.attr);
	const struct ft_kind_info *k = ft_kind(ev->rec->kind);
	f.next_call = k ? k->name : "";
	if (scope == 0) {
		a->m.gaps++;
		a->m.gap_ns += g1 - g0;
		if (after_sync)
			a->m.idle_ns += g1 - g0;        /* the GPU is known to be idle */
	}
	if (a->sink.finding)
		a->sink.finding(a->sink.arg, &f);
}

static void on_submit(struct ft_an *a, struct thread *t, const struct ft_event *ev,
		      const struct ft_evinfo *in)
{
	struct stream *s = stream_of(a, stream_key(in->stream, ev->tid));
	uint64_t end = ev->ts_ns + ev->dur_ns;
	uint64_t sg0 = 0, sg1 = 0;
	if (!s->busy) {
		if (s->submitted && ev->ts_ns > s->idle_from)
			stream_idle(a, s, t, s->idle_from, ev->ts_ns);
		s->busy = 1;
		s->busy_since = ev->ts_ns;
	}
	if (!s->first_sub)
		s->first_sub = ev->ts_ns;
	if (s->submitted) {
		int after_sync = s->last_sync_end >= s->last_sub_end;
		uint64_t g0 = after_sync ? s->last_sync_end : s->last_sub_end;
		if (ev->ts_ns > g0 && ev->ts_ns - g0 >= a->o.gap_ns) {
			report_gap(a, 0, in->stream, t, g0, ev->ts_ns, after_sync, ev);
			sg0 = g0, sg1 = ev->ts_ns;
		}
	}
	if (t->submitted) {
		int after_sync = t->last_sync_end >= t->last_sub_end;
		uint64_t g0 = after_sync ? t->last_sync_end : t->last_sub_end;
		if (ev->ts_ns > g0 && ev->ts_ns - g0 >= a->o.gap_ns &&
		    !(g0 == sg0 && ev->ts_ns == sg1))
			report_gap(a, 1, in->stream, t, g0, ev->ts_ns, after_sync, ev);
	}
	s->submitted = t->submitted = 1;
	if (end > s->last_sub_end)
		s->last_sub_end = end;
	if (end > t->last_sub_end)
		t->last_sub_end = end;
	s->seq++;
	a->ctr.out_total++;
	a->m.submissions++;
}

/* a wait that leaves stream s (all streams for s == NULL) drained */
static void drained(struct ft_an *a, struct stream *s, uint64_t end, int hidden)
{
	for (int i = 0; i < a->nst; i++) {
		struct stream *x = &a->st[i];
		if (s && x != s)
			continue;
		if (end > x->last_sync_end)
			x->last_sync_end = end;
		outstanding_set(a, x, x->seq);
		gpu_drained(a, x, end, hidden);
	}
}

static void on_cuda(struct ft_an *a, struct thread *t, const struct ft_event *ev,
		    const struct ft_evinfo *in)
{
	const struct ft_rec *r = ev->rec;
	const struct kfacts *f = facts(r->kind);
	uint64_t end = ev->ts_ns + ev->dur_ns;
	if (in->launch) {
		a->m.launches++;
		t->launches++;
		a->ctr.v[FT_CTR_LAUNCHES]++;
	}
	if (in->launch && !a->first_launch)
		a->first_launch = ev->ts_ns;
	/* a query that said done drains like a wait (CUDA_SUCCESS is 0) */
	int done = in->sync == FT_SYNC_WAIT || in->sync == FT_SYNC_HIDDEN ||
		   (in->sync == FT_SYNC_POLL && f->ret && ft_field_signed(r, f->ret) == 0);
	if (in->sync == FT_SYNC_SUBMIT) {
		on_submit(a, t, ev, in);
	} else if (done) {
		int hidden = in->sync == FT_SYNC_HIDDEN;
		if (in->sync != FT_SYNC_POLL && end > t->last_sync_end)
			t->last_sync_end = end;
		if ((r->kind == FT_EV_CU_EVENT_SYNC || r->kind == FT_EV_CU_EVENT_QUERY) && f->handle) {
			long e = ft_map_get(&a->evmap, ft_field_raw(r, f->handle));
			if (e >= 0) {
				struct stream *s = &a->st[a->ev[e].stream];
				if (end > s->last_sync_end && in->sync != FT_SYNC_POLL)
					s->last_sync_end = end;
				outstanding_set(a, s, a->ev[e].seq);
				if (a->ev[e].seq >= s->seq)     /* nothing queued after it */
					gpu_drained(a, s, end, hidden);
			}
		} else if (r->kind == FT_EV_CU_CTX_SYNC || in->stream == 0 || in->stream == 1) {
			drained(a, NULL, end, hidden);
		} else if (r->kind != FT_EV_CU_STREAM_WAIT_EVENT) {
			drained(a, stream_of(a, stream_key(in->stream, ev->tid)), end, hidden);
		}
		if (in->sync == FT_SYNC_POLL) {
			/* a query: no sync */
		} else if (in->sync == FT_SYNC_HIDDEN) {
			uint32_t sym = f->sym ? (uint32_t)ft_field_raw(r, f->sym) : 0;
			uint32_t py = f->py ? (uint32_t)ft_field_raw(r, f->py) : 0;
			uint32_t site = py ? py : f->site ? ft_site_key(a->p, (uint32_t)ft_field_raw(r, f->site)) : 0;
			/* by call site when recorded, else by (symbol, thread) */
			uint64_t key = site ? 1ull << 63 | (uint64_t)sym << 32 | site
					    : (uint64_t)sym << 32 | (uint32_t)ev->tid;
			struct ft_group *g = ft_group_of(&a->hid, key);
			g->sym = sym;
			g->site = site;
			g->py = py != 0;
			g->tid = ev->tid;
			g->kind = r->kind;
			ft_group_add(g, ev->tid, ev->ts_ns, end, ev->dur_ns);
			a->m.hidden++;
			a->m.hidden_ns += ev->dur_ns;
		} else {
			a->m.syncs++;
			a->m.sync_ns += ev->dur_ns;
		}
	} else if (r->kind == FT_EV_CU_EVENT_RECORD && f->handle) {
		struct stream *s = stream_of(a, stream_key(in->stream, ev->tid));
		uint64_t h = ft_field_raw(r, f->handle);
		long e = ft_map_get(&a->evmap, h);
		if (e < 0) {
			if (a->nev == a->capev)
				a->ev = ft_grow(a->ev, &a->capev, sizeof *a->ev);
			e = a->nev++;
			ft_map_put(&a->evmap, h, (uint32_t)e);
		}
		a->ev[e].stream = (int)(s - a->st);
		a->ev[e].seq = s->seq;
	}
	if (a->ctr.out_total > a->ctr.out_max)
		a->ctr.out_max = a->ctr.out_total;
}

/* ---- the event ---- */

static int is_gil(struct ft_an *a, uint64_t addr)
{
	unsigned h = (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> 60);
	if (a->gilc[h].addr == addr + 1)
		return a->gilc[h].gil;
	a->gilc[h].addr = addr + 1;
	a->gilc[h].gil = ft_is_gil_name(ft_data_symbol(a->p, addr));
	return a->gilc[h].gil;
}

/* ft_is_module_path of a string id, remembered (a path's reads come in
 * runs: the look-up was a tenth of a conversion) */
static int module_path(struct ft_an *a, uint32_t path)
{
	unsigned h = (path * 2654435761u) >> 22;
	if (a->modc[h].path != path) {
		a->modc[h].path = path;
		a->modc[h].module = (uint8_t)ft_is_module_path(ft_string(a->p, path));
	}
	return a->modc[h].module;
}

void ft_an_event(struct ft_an *a, const struct ft_event *ev)
{
	struct ft_evinfo in;
	ft_an_event_info(a, ev, &in);
}

void ft_an_event_info(struct ft_an *a, const struct ft_event *ev, struct ft_evinfo *inp)
{
	const struct ft_rec *r = ev->rec;
	const struct kfacts *f = facts(r->kind);
	uint64_t end = ev->ts_ns + ev->dur_ns;
	ft_an_info(r, inp);
	int gil = f && f->cond && is_gil(a, ft_field_raw(r, f->cond));
	if (gil)
		inp->cat = FT_CAT_LOCK;
	const struct ft_evinfo in = *inp;
	ft_steps_event(a->steps, ev, in.launch, in.cuda && in.sync == FT_SYNC_HIDDEN, in.read);
	a->now = ev->ts_ns;
	struct thread *t = thread_of(a, ev->tid);
	if (!a->m.events++ || ev->ts_ns < a->first_ts)
		a->first_ts = ev->ts_ns;
	if (end > a->last_end)
		a->last_end = end;
	ft_counters_at(&a->ctr, ev->ts_ns);
	if (!t->events)
		t->first = ev->ts_ns;
	t->events++;
	if (end > t->last_end)
		t->last_end = end;
	if (!f)
		return;                          /* a kind this reader does not know */
	/* calls recorded inside this one (a driver's own waits) were written
	 * first: take their time back, it is this call's */
	while (t->nring) {
		uint32_t last = (t->ring_head + RECENT - 1) % RECENT;
		struct recent *n = &t->ring[last];
		if (n->start < ev->ts_ns || n->end > end)
			break;
		t->t[n->cat] -= n->end - n->start;
		t->ct[n->cat] -= clip(a, n->start, n->end);
		t->ring_head = last;
		t->nring--;
	}
	t->t[in.cat] += ev->dur_ns;
	t->ct[in.cat] += clip(a, ev->ts_ns, end);
	if (!a->o.win_end || (ev->ts_ns >= a->o.win_start && ev->ts_ns < a->o.win_end))
		t->wevents++;
	if (f && !gil && got_data(f, r)) {
		if (!t->batches++)
			t->first_batch = end;
		if (end > t->last_batch)
			t->last_batch = end;
	}
	if (in.cuda)
		on_cuda(a, t, ev, &in);
	if (f->open && f->py && f->fd)
		ft_storm_opener(a->storm, (int32_t)ft_field_signed(r, f->fd),
				(uint32_t)ft_field_raw(r, f->py));
	if (f->open && f->path)
		ft_storm_opened(a->storm, (uint32_t)ft_field_raw(r, f->path));
	if (in.read) {
		int64_t ret = ft_field_signed(r, f->ret);
		uint64_t req = ft_field_raw(r, f->req);
		uint64_t got = ret > 0 ? (uint64_t)ret : 0;
		a->m.reads++;
		a->m.read_bytes += got;
		a->ctr.v[FT_CTR_READS]++;
		a->ctr.v[FT_CTR_READ_BYTES] += (int64_t)got;
		uint32_t path = f->path ? (uint32_t)ft_field_raw(r, f->path) : 0;
		if (req < a->o.small_read && path && module_path(a, path)) {
			a->m.module_reads++;
		} else if (req < a->o.small_read) {
			a->m.small_reads++;
			a->m.small_read_bytes += got;
			ft_storm_read(a->storm, ev, path,
				      f->fd ? (int32_t)ft_field_signed(r, f->fd) : -1, got);
		}
	}
	if (f->mutex) {
		uint64_t addr = ft_field_raw(r, f->lock);
		struct ft_group *g = ft_group_of(&a->lk, addr);
		if (!g->count)
			g->kind = r->kind;
		ft_group_add(g, ev->tid, ev->ts_ns, end, ev->dur_ns);
		lock_site(a, g, r, ev->dur_ns);
		a->m.lock_waits++;
		a->m.lock_ns += ev->dur_ns;
		uint64_t s0 = ev->ts_ns, s1 = end;
		if (a->o.win_end) {
			s0 = s0 < a->o.win_start ? a->o.win_start : s0;
			s1 = s1 > a->o.win_end ? a->o.win_end : s1;
		}
		if (t->launches && s1 > s0) {      /* start order: a running union */
			if (s0 > a->lk1) {
				a->lk_union += a->lk1 - a->lk0;
				a->lk0 = s0, a->lk1 = s1;
			} else if (s1 > a->lk1) {
				a->lk1 = s1;
			}
		}
	}
	if (r->kind >= FT_EV_SEM_WAIT && r->kind <= FT_EV_SEM_CLOCKWAIT) {
		a->m.sem_waits++;
		a->m.sem_ns += ev->dur_ns;
	}
	struct recent *rc = &t->ring[t->ring_head];
	rc->start = ev->ts_ns;
	rc->end = end;
	rc->cat = in.cat;
	t->ring_head = (t->ring_head + 1) % RECENT;
	if (t->nring < RECENT)
		t->nring++;
}

/* ---- the end ---- */

/* The device's busy time in [w0, w1): the union of the streams' busy
 * intervals (never above the window); also the last moment the GPU had work. */
static uint64_t gpu_busy(struct ft_an *a, uint64_t w0, uint64_t w1, uint64_t *last)
{
	for (int i = 0; i < a->nst; i++) {       /* work never known complete */
		struct stream *s = &a->st[i];
		if (s->busy) {
			uint64_t e = s->last_sub_end > s->busy_since ? s->last_sub_end : s->busy_since;
			if (a->nbusy == a->capbusy)
				a->busy = ft_grow(a->busy, &a->capbusy, sizeof *a->busy);
			a->busy[a->nbusy++] = (struct busy){ s->busy_since, e, 0 };
			if (e > a->busy_last)
				a->busy_last = e;
			s->busy = 0;
		}
	}
	busy_compact(a, 0);                      /* the union, nothing dropped */
	uint64_t sum = a->busy_done;
	for (int i = 0; i < a->nbusy; i++) {
		uint64_t s = a->busy[i].start > w0 ? a->busy[i].start : w0;
		uint64_t e = a->busy[i].end < w1 ? a->busy[i].end : w1;
		if (e > s)
			sum += e - s;
	}
	*last = a->busy_last;
	return sum;
}

static void thread_sums(struct ft_an *a, struct ft_verdict *v)
{
	v->ths = ft_xcalloc((size_t)a->nth, sizeof *v->ths);
	v->nths = a->nth;
	for (int i = 0; i < a->nth; i++) {
		const struct thread *t = &a->th[i];
		struct ft_thread_sum *o = &v->ths[i];
		o->tid = t->tid;
		o->launches = t->launches;
		o->events = t->wevents;
		o->first = t->first;
		o->last_end = t->last_end;
		o->wall = clip(a, t->first, t->last_end);
		memcpy(o->t, t->ct, sizeof o->t);
		memcpy(o->all, t->t, sizeof o->all);
		o->batches = t->batches;
		o->first_batch = t->first_batch;
		o->last_batch = t->last_batch;
		v->batches += t->batches;
	}
}

void ft_verdict_free(struct ft_verdict *v)
{
	free(v->ths);
	v->ths = NULL;
	v->nths = 0;
}

/* The process's verdict (docs/ANALYSES.md, "The verdict"): about its
 * feeding threads (those that launch kernels; without launches, those that
 * received batches), within the window. */
static void verdict(struct ft_an *a, struct ft_verdict *v, const struct ft_steps_result *sr)
{
	memset(v, 0, sizeof *v);
	thread_sums(a, v);
	v->first_step = sr->steps ? sr->first_ns : 0;
	v->last_step_end = sr->steps ? sr->last_end_ns : 0;
	v->warmup_steps = sr->warmup_steps;
	v->warmup_end = sr->warmup_end_ns;
	v->batch_tid = sr->from_batches ? sr->batch_tid : 0;
	v->first_launch = a->first_launch;
	v->lock_union = a->lk_union + (a->lk1 - a->lk0);
	v->win_start = a->o.win_end ? a->o.win_start : a->first_ts;
	v->win_end = a->o.win_end ? a->o.win_end : a->last_end;
	v->basis = "thread_time";
	/* without launches, the threads that received most batches (at least
	 * half as many as the most): not idle pools woken now and then */
	uint64_t maxb = 0;
	for (int i = 0; i < a->nth; i++) {
		if (a->th[i].launches)
			v->by_launch = 1;
		if (a->th[i].batches > maxb)
			maxb = a->th[i].batches;
	}
	for (int i = 0; i < a->nth; i++) {
		const struct thread *t = &a->th[i];
		if (v->by_launch ? !t->launches : !t->batches || t->batches * 2 < maxb)
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
		uint64_t wall = clip(a, t->first, t->last_end), traced = 0;
		for (int c = 0; c < FT_CAT_N; c++)
			if (c != FT_CAT_CPU)
				traced += t->ct[c], v->t[c] += t->ct[c];
		uint64_t cpu = t->ct[FT_CAT_CPU];
		v->t[FT_CAT_CPU] += cpu + (wall > traced + cpu ? wall - traced - cpu : 0);
		v->wall_ns += wall > traced + cpu ? wall : traced + cpu;
	}
	uint64_t last = 0;
	if (v->by_launch) {
		uint64_t w0 = v->win_start, w1 = v->win_end;
		if (!a->o.win_end)
			w0 = a->first_launch;
		v->busy_ns = gpu_busy(a, w0, w1, &last);
		v->idle_ns = w1 > w0 + v->busy_ns ? w1 - w0 - v->busy_ns : 0;
		v->last_gpu_end = last;
		uint64_t sum = 0;
		for (int c = 0; c < FT_CAT_N; c++)
			sum += v->sidle[c] = a->sidle[c];
		for (int c = 0; c < FT_CAT_N && sum; c++)
			v->idle_by_feed[c] = (uint64_t)((double)v->idle_ns * (double)a->sidle[c] / (double)sum + 0.5);
		for (int i = 0; i < a->nst; i++)
			if (a->st[i].first_sub)
				v->sidle_den += clip(a, a->st[i].first_sub > w0 ? a->st[i].first_sub : w0, w1);
	}
	double w = v->wall_ns ? (double)v->wall_ns : 1.0;
	double sh[FT_CAT_N];
	for (int c = 0; c < FT_CAT_N; c++)
		sh[c] = (double)v->t[c] / w;
	double data = sh[FT_CAT_IO] + sh[FT_CAT_DATA], sync = sh[FT_CAT_HIDDEN];
	double locks = sh[FT_CAT_LOCK], sub = sh[FT_CAT_SUBMIT] + sh[FT_CAT_CPU];
	const char *who = v->nfeeders > 1 ? "the feeding threads spend" : "the feeding thread spends";
	if (!v->nfeeders) {
		v->limit = "none";
		snprintf(v->sentence, sizeof v->sentence,
			 "No GPU work and no data feed was recorded: nothing to limit.");
		return;
	}
	if (!v->by_launch) {
		if (data >= locks && data >= 0.2) {
			v->limit = "data delivery";
			snprintf(v->sentence, sizeof v->sentence,
				 "No GPU work was recorded; the process is limited by data delivery: "
				 "%s %.0f%% of the time waiting for data and %.0f%% in file I/O.",
				 who, 100 * sh[FT_CAT_DATA], 100 * sh[FT_CAT_IO]);
		} else if (locks >= 0.2) {
			v->limit = "locks";
			snprintf(v->sentence, sizeof v->sentence,
				 "No GPU work was recorded; the process is limited by locks: %s "
				 "%.0f%% of the time waiting on locks.", who, 100 * locks);
		} else {
			v->limit = "none";
			snprintf(v->sentence, sizeof v->sentence,
				 "No GPU work was recorded and the data feed keeps up: %s %.0f%% of "
				 "the time waiting for data.", who, 100 * data);
		}
		return;
	}
	double gpu = sh[FT_CAT_GPU_WAIT];
	double win = v->win_end > v->win_start ? (double)(v->win_end - v->win_start) : 1.0;
	double idle = (double)v->idle_ns / win;
	/* some launching thread waits for a lock most of the loop: the feeding
	 * threads take turns on it, whatever the GPU does meanwhile */
	double held = (double)v->lock_union / win;
	int shared = 0;                 /* a lock that two launching threads waited for */
	for (int i = 0; i < a->lk.n; i++) {
		int n = 0;
		for (int k = 0; k < a->lk.g[i].ntids; k++) {
			long x = ft_map_get(&a->thmap, (uint64_t)(uint32_t)a->lk.g[i].tids[k]);
			n += x >= 0 && a->th[x].launches > 0;
		}
		shared |= n >= 2;
	}
	if (held >= 0.5 || (shared && locks >= 0.3)) {
		v->limit = "locks";
		snprintf(v->sentence, sizeof v->sentence,
			 "The GPU feed is limited by locks: the launching threads take turns on a "
			 "lock (one of them waits %.0f%% of the loop; %s %.0f%% of the time "
			 "waiting on locks).", 100 * held, who, 100 * locks);
		return;
	}
	/* The model's busy time is an upper bound (a stream counts busy until a
	 * wait drains it): it is evidence only when it shows idle time, or when
	 * the feeding threads did wait for the GPU. */
	if (v->busy_ns && (idle >= 0.1 || gpu + sync >= 0.1)) {
		v->basis = "gpu_idle";
		double den = v->sidle_den ? (double)v->sidle_den : 1.0, S[FT_CAT_N];
		for (int c = 0; c < FT_CAT_N; c++)
			S[c] = (double)v->sidle[c] / den;
		double g[4] = { S[FT_CAT_IO] + S[FT_CAT_DATA], S[FT_CAT_HIDDEN], S[FT_CAT_LOCK],
				S[FT_CAT_SUBMIT] + S[FT_CAT_CPU] + S[FT_CAT_GPU_WAIT] };
		static const char *const lim[4] = { "data delivery", "synchronization", "locks",
						    "work submission" };
		int best = 0;
		for (int k = 1; k < 4; k++)
			if (g[k] > g[best])
				best = k;
		/* a GPU busy 85% of the loop is the limit (removing all its idle
		 * time would gain under a sixth), unless one feed kept the streams
		 * idle half of the time (serialized streams) */
		v->limit = idle < 0.15 && g[best] < 0.5 ? "GPU-bound" : lim[best];
		if (!strcmp(v->limit, "GPU-bound"))
			snprintf(v->sentence, sizeof v->sentence,
				 "The GPU is the limit: it is busy %.0f%% of the loop and the feed keeps "
				 "up (%s %.0f%% of the time waiting for the GPU).", 100 * (1 - idle), who,
				 100 * (gpu + sync));
		else
			snprintf(v->sentence, sizeof v->sentence,
				 "The GPU feed is limited by %s: the GPU idles %.0f%% of the loop, and "
				 "the streams idle %.0f%% of their time because of it.", v->limit,
				 100 * idle, 100 * g[best]);
		return;
	}
	double best = data;
	v->limit = "data delivery";
	if (sync > best) best = sync, v->limit = "synchronization";
	if (locks > best) best = locks, v->limit = "locks";
	if (sub > best) best = sub, v->limit = "work submission";
	if (gpu >= best || (gpu >= 0.5 && data < 0.1 && sync < 0.1 && locks < 0.1))
		v->limit = "GPU-bound";
	if (!strcmp(v->limit, "GPU-bound"))
		snprintf(v->sentence, sizeof v->sentence,
			 "The GPU is the limit: %s %.0f%% of the time waiting for the GPU and little "
			 "else.", who, 100 * gpu);
	else if (!strcmp(v->limit, "data delivery"))
		snprintf(v->sentence, sizeof v->sentence,
			 "The GPU feed is limited by data delivery: %s %.0f%% of the time waiting "
			 "for data and %.0f%% in file I/O.", who, 100 * sh[FT_CAT_DATA], 100 * sh[FT_CAT_IO]);
	else if (!strcmp(v->limit, "synchronization"))
		snprintf(v->sentence, sizeof v->sentence,
			 "The GPU feed is limited by synchronization: %s %.0f%% of the time in "
			 "hidden syncs the program did not ask for.", who, 100 * sync);
	else if (!strcmp(v->limit, "locks"))
		snprintf(v->sentence, sizeof v->sentence,
			 "The GPU feed is limited by locks: %s %.0f%% of the time waiting on locks.",
			 who, 100 * locks);
	else
		snprintf(v->sentence, sizeof v->sentence,
			 "The GPU feed is limited by work submission: %s %.0f%% of the time on the "
			 "CPU between launches and %.0f%% submitting, while the GPU waits for work.",
			 who, 100 * sh[FT_CAT_CPU], 100 * sh[FT_CAT_SUBMIT]);
}

void ft_an_finish(struct ft_an *a, struct ft_metrics *m, struct ft_verdict *v)
{
	a->m.storms += ft_storm_finish(a->storm);
	ft_counters_finish(&a->ctr);
	ft_groups_emit(&a->hid, FT_FK_HIDDEN, a->p, 0, &a->sink);
	a->m.locks += ft_groups_emit(&a->lk, FT_FK_LOCK, a->p, a->o.lock_min_ns, &a->sink);
	const struct ft_process *p = a->p;
	uint64_t lost = 0;
	for (int i = 0; i < p->nthreads; i++)
		lost += p->threads[i].lost;
	if (p->has_end && p->end.lost > lost)
		lost = p->end.lost;
	a->m.dropped = lost;
	a->m.threads = (uint64_t)a->nth;
	uint64_t start = p->base_ns, stop = a->last_end;
	if (a->m.events && a->first_ts < start)
		start = a->first_ts;
	if (p->last_ns > stop)
		stop = p->last_ns;
	a->m.wall_ns = stop > start ? stop - start : 0;
	struct ft_steps_result sr;
	ft_steps_finish(a->steps, &sr);
	a->m.steps = sr.steps;
	a->m.step_ns = sr.step_ns;
	a->m.step_median_ns = sr.median_ns;
	a->m.step_launches = sr.launches;
	a->m.step_hidden = sr.hidden;
	a->m.step_reads = sr.reads;
	a->m.steps_from_batches = sr.steps && sr.from_batches;
	if (m)
		*m = a->m;
	if (v)
		verdict(a, v, &sr);
}
