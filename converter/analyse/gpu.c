/*
 * gpu.c: the GPU side of one process's events: per-stream submission
 * state (launch gaps, outstanding work), the device's busy model (a
 * stream is busy from a submission until a wait drains it), why streams
 * idled (what the submitting thread did meanwhile, threads.c), hidden
 * syncs grouped by call site (groups.c), and the CUDA metrics. Memory
 * grows with streams, events recorded, call sites and stream work open
 * at once, never with events.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "analyses.h"
#include "events.h"
#include "gpu_measured.h"
#include "groups.h"
#include "symbolize.h"

struct stream {
	uint64_t id;
	uint64_t last_sub_end, last_sync_end;
	int submitted;
	uint64_t seq, done;          /* submissions, known complete */
	/* the GPU model: busy from a submission to a wait that drained it */
	int busy, idle_hidden;       /* idle_hidden: drained by a hidden sync, its
	                                group in hid + 1 (0: by another wait) */
	uint64_t busy_since, idle_from, first_sub;
	uint64_t drain_start;        /* the wait that drained it last began */
};

struct busy { uint64_t start, end; };



struct gpu {
	struct ft_an_ctx *c;
	struct stream *st; int nst, capst; struct ft_map stmap;
	struct ft_group_set hid;       /* hidden syncs (groups.c) */
	struct evrec { int stream; uint64_t seq; } *ev;  /* cuEventRecord: where, when */
	int nev, capev; struct ft_map evmap;
	/* the GPU model: busy intervals of all streams (one per drain) */
	struct busy *busy; int nbusy, capbusy;
	uint64_t busy_done, busy_last; /* busy time merged and dropped; the latest end */
	uint64_t sidle[FT_CAT_N];      /* streams' idle time in the window, by cause */
	/* the measured side: the streams' known idle gaps (gpu_measured.c),
	 * charged in time order as the events pass them, by cause */
	struct ft_gpu_gap *gaps; int ngaps, gi, gaps_read;
	uint64_t msidle[FT_CAT_N];
	/* of those gaps, the starts that the drain's waits covered */
	struct ft_gpu_gap *lat; int nlat, caplat;
	uint64_t first_launch;
	/* the longest pause between two launches: its end, the launches before */
	uint64_t last_launch_end, pause, pause_end, pause_after;
};

static struct stream *stream_of(struct gpu *g, uint64_t id)
{
	long i = ft_map_get(&g->stmap, id);
	if (i < 0) {
		if (g->nst == g->capst)
			FT_GROW(g->st, g->capst, 8);
		i = g->nst++;
		memset(&g->st[i], 0, sizeof g->st[i]);
		g->st[i].id = id;
		ft_map_put(&g->stmap, id, (uint32_t)i);
	}
	return &g->st[i];
}

static void outstanding_set(struct gpu *g, struct stream *s, uint64_t done)
{
	if (done > s->seq)
		done = s->seq;
	if (done > s->done) {
		g->c->ctr.out_total -= done - s->done;
		s->done = done;
	}
}

/* The key of a stream as the GPU sees it: each thread's per-thread default
 * stream (2) is its own; the legacy stream's two names (0, 1) are one. */
static uint64_t stream_key(uint64_t stream, int32_t tid)
{
	if (stream == 2)
		return 1ull << 63 | (uint32_t)tid;
	return stream == 1 ? 0 : stream;
}

/* A stream idled in [g0, g1) until thread t submitted to it: what t did
 * meanwhile, within the window, into the model's account (measured 0) or
 * the measured one; after a hidden sync (hidden: its group + 1), the time
 * t spent on the CPU or submitting is the sync's cost (without it the GPU
 * would have had queued work). */
static void stream_idle(struct gpu *g, int hidden, const struct ft_thacc *t,
			uint64_t g0, uint64_t g1, int measured)
{
	if (g->c->o.win_end) {
		if (g0 < g->c->o.win_start)
			g0 = g->c->o.win_start;
		if (g1 > g->c->o.win_end)
			g1 = g->c->o.win_end;
	}
	if (g1 <= g0)
		return;
	uint64_t attr[FT_CAT_N];
	ft_thread_attribute(t, g0, g1, attr);
	if (hidden) {
		attr[FT_CAT_HIDDEN] += attr[FT_CAT_SUBMIT] + attr[FT_CAT_CPU] + attr[FT_CAT_GPU_WAIT];
		attr[FT_CAT_SUBMIT] = attr[FT_CAT_CPU] = attr[FT_CAT_GPU_WAIT] = 0;
		if (measured)
			g->hid.g[hidden - 1].midle += attr[FT_CAT_HIDDEN];
		else
			g->hid.g[hidden - 1].idle += attr[FT_CAT_HIDDEN];
	}
	for (int c = 0; c < FT_CAT_N; c++)
		(measured ? g->msidle : g->sidle)[c] += attr[c];
}

/* The measured idle gaps that ended by `upto` (their sample's submission
 * or sync), charged as the model's are: to what the thread that ended
 * each did in it, to a hidden sync when the model's stream was last
 * drained by one and has had no submission since. */
static void measured_idle(struct gpu *g, uint64_t upto)
{
	for (; g->gi < g->ngaps && g->gaps[g->gi].g1 <= upto; g->gi++) {
		const struct ft_gpu_gap *x = &g->gaps[g->gi];
		const struct ft_thacc *t = ft_thread_find(g->c->th, x->tid);
		if (!t)
			continue;
		long i = ft_map_get(&g->stmap, x->stream);
		const struct stream *m = i >= 0 && !g->st[i].busy ? &g->st[i] : NULL;
		uint64_t g0 = x->g0, upto = 0;
		/* the stream finished while a wait for the GPU was on (the one
		 * that drained it, or the ending thread's own: an event sync on
		 * earlier work): until that wait returned, the idle is its
		 * return's latency (the driver waking the thread), as in the
		 * model, not the feed's */
		if (m && m->drain_start <= g0 && m->idle_from > g0)
			upto = m->idle_from;
		uint64_t w = ft_thread_gpu_wait_over(t, g0);
		if (w > upto)
			upto = w;
		if (upto > x->g1)
			upto = x->g1;
		if (upto > g0) {
			if (g->nlat == g->caplat)
				FT_GROW(g->lat, g->caplat, 8);
			g->lat[g->nlat++] = (struct ft_gpu_gap){ x->stream, g0, upto, x->tid };
			g0 = upto;
		}
		stream_idle(g, m ? m->idle_hidden : 0, t, g0, x->g1, 1);
	}
}

static int busy_cmp(const void *x, const void *y)
{
	const struct busy *p = x, *q = y;
	return p->start < q->start ? -1 : p->start > q->start;
}

/* The busy intervals merged into their union, sorted; those that end
 * before `before` (no later interval can start earlier) summed into
 * busy_done within the window and dropped: memory stays bounded by the
 * streams' work open at once, not by the drains. */
static void busy_compact(struct gpu *g, uint64_t before)
{
	if (g->nbusy > 1)
		qsort(g->busy, (size_t)g->nbusy, sizeof *g->busy, busy_cmp);
	int n = 0;
	for (int i = 0; i < g->nbusy; i++) {
		if (n && g->busy[i].start <= g->busy[n - 1].end) {
			if (g->busy[i].end > g->busy[n - 1].end)
				g->busy[n - 1].end = g->busy[i].end;
			continue;
		}
		g->busy[n++] = g->busy[i];
	}
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (g->busy[i].end < before) {
			uint64_t s = g->busy[i].start, e = g->busy[i].end;
			if (!g->c->o.win_end && s < g->first_launch)
				s = g->first_launch;
			g->busy_done += g->c->o.win_end ? ft_an_clip(&g->c->o, s, e) : e > s ? e - s : 0;
		} else {
			g->busy[k++] = g->busy[i];
		}
	}
	g->nbusy = k;
}

/* stream s's queued work is known complete at end, by a wait that began
 * at start; hidden: the hidden
 * sync's group + 1 when one drained it, else 0 */
static void gpu_drained(struct gpu *g, struct stream *s, uint64_t start, uint64_t end,
			int hidden)
{
	if (!s->busy)
		return;
	if (g->nbusy >= 1024 && g->nbusy == g->capbusy) {
		uint64_t before = g->c->now;       /* later intervals start at or after it */
		for (int i = 0; i < g->nst; i++)
			if (g->st[i].busy && g->st[i].busy_since < before)
				before = g->st[i].busy_since;
		busy_compact(g, before);
	}
	if (g->nbusy == g->capbusy)
		FT_GROW(g->busy, g->capbusy, 8);
	if (end > g->busy_last)
		g->busy_last = end;
	g->busy[g->nbusy++] = (struct busy){ s->busy_since, end };
	if (g->c->sink.gpu_busy)
		g->c->sink.gpu_busy(g->c->sink.arg, s->id, s->busy_since, end);
	s->busy = 0;
	s->idle_from = end;
	s->drain_start = start;
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

static void report_gap(struct gpu *g, int scope, uint64_t stream, struct ft_thacc *t,
		       uint64_t g0, uint64_t g1, int after_sync, const struct ft_event *ev)
{
	struct ft_finding f;
	memset(&f, 0, sizeof f);
	f.kind = FT_FK_GAP;
	f.pid = g->c->p->hdr.pid;
	f.start = g0;
	f.end = g1;
	f.lost_ns = g1 - g0;
	f.tid = t->tid;
	f.scope = scope;
	f.stream = stream;
	f.after_sync = after_sync;
	ft_thread_attribute(t, g0, g1, f.attr);
	f.cause = cause_of(f.attr);
	const struct ft_kind_info *k = ft_kind(ev->rec->kind);
	f.next_call = k ? k->name : "";
	if (scope == 0) {
		g->c->m.gaps++;
		g->c->m.gap_ns += g1 - g0;
		if (after_sync)
			g->c->m.idle_ns += g1 - g0;        /* the GPU is known to be idle */
	}
	if (g->c->sink.finding)
		g->c->sink.finding(g->c->sink.arg, &f);
}

static void on_submit(struct gpu *g, struct ft_thacc *t, const struct ft_event *ev,
		      const struct ft_evinfo *in)
{
	struct stream *s = stream_of(g, stream_key(in->stream, ev->tid));
	uint64_t end = ev->ts_ns + ev->dur_ns;
	uint64_t sg0 = 0, sg1 = 0;
	/* a collective's GPU time is its wait for the other ranks, done when the
	 * last one arrives (ranks.c says which): it makes no stream busy */
	if (!s->busy && !ft_kfacts(ev->rec->kind)->coll) {
		if (s->submitted && ev->ts_ns > s->idle_from)
			stream_idle(g, s->idle_hidden, t, s->idle_from, ev->ts_ns, 0);
		s->busy = 1;
		s->busy_since = ev->ts_ns;
	}
	if (!s->first_sub)
		s->first_sub = ev->ts_ns;
	if (s->submitted) {
		int after_sync = s->last_sync_end >= s->last_sub_end;
		uint64_t g0 = after_sync ? s->last_sync_end : s->last_sub_end;
		if (ev->ts_ns > g0 && ev->ts_ns - g0 >= g->c->o.gap_ns) {
			report_gap(g, 0, in->stream, t, g0, ev->ts_ns, after_sync, ev);
			sg0 = g0, sg1 = ev->ts_ns;
		}
	}
	if (t->submitted) {
		int after_sync = t->last_sync_end >= t->last_sub_end;
		uint64_t g0 = after_sync ? t->last_sync_end : t->last_sub_end;
		if (ev->ts_ns > g0 && ev->ts_ns - g0 >= g->c->o.gap_ns &&
		    !(g0 == sg0 && ev->ts_ns == sg1))
			report_gap(g, 1, in->stream, t, g0, ev->ts_ns, after_sync, ev);
	}
	s->submitted = t->submitted = 1;
	if (end > s->last_sub_end)
		s->last_sub_end = end;
	if (end > t->last_sub_end)
		t->last_sub_end = end;
	s->seq++;
	g->c->ctr.out_total++;
	g->c->m.submissions++;
}

/* a wait that leaves stream s (all streams for s == NULL) drained */
static void drained(struct gpu *g, struct stream *s, uint64_t start, uint64_t end, int hidden)
{
	for (int i = 0; i < g->nst; i++) {
		struct stream *x = &g->st[i];
		if (s && x != s)
			continue;
		if (end > x->last_sync_end)
			x->last_sync_end = end;
		outstanding_set(g, x, x->seq);
		gpu_drained(g, x, start, end, hidden);
	}
}

static void on_cuda(struct gpu *g, struct ft_thacc *t, const struct ft_event *ev,
		    const struct ft_evinfo *in)
{
	const struct ft_rec *r = ev->rec;
	const struct ft_kfacts *f = ft_kfacts(r->kind);
	uint64_t end = ev->ts_ns + ev->dur_ns;
	if (in->launch) {
		uint64_t before = g->c->m.launches++;
		t->launches++;
		g->c->ctr.v[FT_CTR_LAUNCHES]++;
		if (!g->first_launch)
			g->first_launch = ev->ts_ns;
		/* the longest pause between two launches (gpu_finish) */
		if (before && ev->ts_ns > g->last_launch_end &&
		    ev->ts_ns - g->last_launch_end > g->pause) {
			g->pause = ev->ts_ns - g->last_launch_end;
			g->pause_end = ev->ts_ns;
			g->pause_after = before;
		}
		if (end > g->last_launch_end)
			g->last_launch_end = end;
	}
	/* a query that said done drains like a wait (CUDA_SUCCESS is 0) */
	int done = in->sync == FT_SYNC_WAIT || in->sync == FT_SYNC_HIDDEN ||
		   (in->sync == FT_SYNC_POLL && f->ret && ft_field_signed(r, f->ret) == 0);
	if (in->sync == FT_SYNC_SUBMIT) {
		on_submit(g, t, ev, in);
	} else if (done) {
		/* a hidden sync's group (by call site when recorded, else by
		 * (symbol, thread)): the idle after the drain is charged to it */
		struct ft_group *grp = NULL;
		int hidden = 0;
		if (in->sync == FT_SYNC_HIDDEN) {
			uint32_t sym = f->sym ? (uint32_t)ft_field_raw(r, f->sym) : 0;
			uint32_t py = f->py ? (uint32_t)ft_field_raw(r, f->py) : 0;
			uint32_t site = py ? py : f->site ? ft_site_key(g->c->p, (uint32_t)ft_field_raw(r, f->site)) : 0;
			uint64_t key = site ? 1ull << 63 | (uint64_t)sym << 32 | site
					    : (uint64_t)sym << 32 | (uint32_t)ev->tid;
			grp = ft_group_of(&g->hid, key);
			grp->sym = sym;
			grp->site = site;
			grp->py = py != 0;
			hidden = (int)(grp - g->hid.g) + 1;
		}
		if (in->sync != FT_SYNC_POLL && end > t->last_sync_end)
			t->last_sync_end = end;
		if ((r->kind == FT_EV_CU_EVENT_SYNC || r->kind == FT_EV_CU_EVENT_QUERY) && f->handle) {
			long e = ft_map_get(&g->evmap, ft_field_raw(r, f->handle));
			if (e >= 0) {
				struct stream *s = &g->st[g->ev[e].stream];
				outstanding_set(g, s, g->ev[e].seq);
				/* a drain only when nothing was queued after the event:
				 * else the stream still has work, and a later gap on it
				 * is no "after a sync" one (the GPU is not known idle) */
				if (g->ev[e].seq >= s->seq) {
					if (end > s->last_sync_end && in->sync != FT_SYNC_POLL)
						s->last_sync_end = end;
					gpu_drained(g, s, ev->ts_ns, end, hidden);
				}
			}
		} else if (r->kind == FT_EV_CU_CTX_SYNC || in->stream == 0 || in->stream == 1) {
			drained(g, NULL, ev->ts_ns, end, hidden);
		} else if (r->kind != FT_EV_CU_STREAM_WAIT_EVENT) {
			drained(g, stream_of(g, stream_key(in->stream, ev->tid)), ev->ts_ns, end, hidden);
		}
		if (in->sync == FT_SYNC_POLL) {
			/* a query: no sync */
		} else if (grp) {
			grp->tid = ev->tid;
			grp->kind = r->kind;
			ft_group_add(grp, ev->tid, ev->ts_ns, end, ev->dur_ns);
			g->c->m.hidden++;
			g->c->m.hidden_ns += ev->dur_ns;
		} else {
			g->c->m.syncs++;
			g->c->m.sync_ns += ev->dur_ns;
		}
	} else if (r->kind == FT_EV_CU_EVENT_RECORD && f->handle) {
		struct stream *s = stream_of(g, stream_key(in->stream, ev->tid));
		uint64_t h = ft_field_raw(r, f->handle);
		long e = ft_map_get(&g->evmap, h);
		if (e < 0) {
			if (g->nev == g->capev)
				FT_GROW(g->ev, g->capev, 8);
			e = g->nev++;
			ft_map_put(&g->evmap, h, (uint32_t)e);
		}
		g->ev[e].stream = (int)(s - g->st);
		g->ev[e].seq = s->seq;
	}
	if (g->c->ctr.out_total > g->c->ctr.out_max)
		g->c->ctr.out_max = g->c->ctr.out_total;
}

/* The device's busy time in [w0, w1): the union of the streams' busy
 * intervals (never above the window); also the last moment the GPU had work. */
static uint64_t gpu_busy(struct gpu *g, uint64_t w0, uint64_t w1, uint64_t *last)
{
	for (int i = 0; i < g->nst; i++) {       /* work never known complete */
		struct stream *s = &g->st[i];
		if (s->busy) {
			uint64_t e = s->last_sub_end > s->busy_since ? s->last_sub_end : s->busy_since;
			if (g->nbusy == g->capbusy)
				FT_GROW(g->busy, g->capbusy, 8);
			g->busy[g->nbusy++] = (struct busy){ s->busy_since, e };
			if (g->c->sink.gpu_busy)
				g->c->sink.gpu_busy(g->c->sink.arg, s->id, s->busy_since, e);
			if (e > g->busy_last)
				g->busy_last = e;
			s->busy = 0;
		}
	}
	busy_compact(g, 0);                      /* the union, nothing dropped */
	uint64_t sum = g->busy_done;
	for (int i = 0; i < g->nbusy; i++) {
		uint64_t s = g->busy[i].start > w0 ? g->busy[i].start : w0;
		uint64_t e = g->busy[i].end < w1 ? g->busy[i].end : w1;
		if (e > s)
			sum += e - s;
	}
	*last = g->busy_last;
	return sum;
}


/* ---- the ops ---- */

static void *gpu_new(struct ft_an_ctx *c)
{
	struct gpu *g = ft_xcalloc(1, sizeof *g);
	g->c = c;
	return g;
}

static void gpu_event(void *s, struct ft_an_ctx *c, const struct ft_an_ev *e)
{
	struct gpu *g = s;
	if (!g->gaps_read) {
		g->ngaps = ft_gpu_measured_gaps(c->p, &g->gaps);
		g->gaps_read = 1;
	}
	if (g->gi < g->ngaps)           /* before the submission that ends one */
		measured_idle(g, e->ev->ts_ns);
	if (e->in.cuda)
		on_cuda(s, e->t, e->ev, &e->in);
}

/* The device's evidence over the verdict's window (docs/ANALYSES.md, "The
 * verdict"): from the first launch, without a window; then the hidden
 * syncs to the sink, each with the device's idle time after it: its
 * streams' idle charged to it, scaled as the device's idle is split over
 * the streams' (idle_by_feed), never above its streams' own. */
static void gpu_finish(void *s, struct ft_an_ctx *c)
{
	struct gpu *g = s;
	struct ft_an_out *out = &c->out;
	out->first_launch = g->first_launch;
	/* an initialisation before the loop (model set-up on the GPU, then a
	 * data set loaded): a few launches (a twentieth of them at most), then
	 * a pause of a quarter of the launches' span or more; the loop starts
	 * at the launch after it */
	if (g->pause_after && g->pause_after * 20 <= c->m.launches &&
	    g->pause * 4 >= g->last_launch_end - g->first_launch) {
		out->loop_launch = g->pause_end;
		out->launches_before = g->pause_after;
	}
	if (!g->gaps_read)
		g->ngaps = ft_gpu_measured_gaps(c->p, &g->gaps);
	measured_idle(g, UINT64_MAX);
	if (g->first_launch) {
		uint64_t w0 = c->o.win_end ? c->o.win_start : g->first_launch;
		uint64_t w1 = c->o.win_end ? c->o.win_end : c->last_end;
		out->model_busy_ns = gpu_busy(g, w0, w1, &out->last_gpu_end);
		uint64_t mlast = ft_gpu_measured_last(c->p);
		if (mlast > out->last_gpu_end)
			out->last_gpu_end = mlast;
		out->model_idle_ns = w1 > w0 + out->model_busy_ns ? w1 - w0 - out->model_busy_ns : 0;
		out->mbusy_ns = ft_gpu_measured_busy(c->p, w0, w1, NULL, 0, &out->mcover_ns);
		uint64_t cover;
		out->mdrain_ns = ft_gpu_measured_busy(c->p, w0, w1, g->lat, g->nlat, &cover) -
				 out->mbusy_ns;
		if (out->mbusy_ns + out->mdrain_ns > out->mcover_ns)
			out->mdrain_ns = out->mcover_ns > out->mbusy_ns ? out->mcover_ns - out->mbusy_ns : 0;
		/* the samples cover the window well enough: the verdict's device
		 * idle is the measured share of the covered part, over the window,
		 * and its split the measured gaps' */
		out->measured = FT_GPU_MEASURED(out->mcover_ns, w1 - w0) &&
				out->mbusy_ns <= out->mcover_ns;
		const uint64_t *sidle = out->measured ? g->msidle : g->sidle;
		if (out->measured) {
			double share = (double)(out->mcover_ns - out->mbusy_ns - out->mdrain_ns) /
				       (double)out->mcover_ns;
			out->idle_ns = (uint64_t)(share * (double)(w1 - w0) + 0.5);
			out->busy_ns = w1 - w0 - out->idle_ns;
		} else {
			out->busy_ns = out->model_busy_ns;
			out->idle_ns = out->model_idle_ns;
		}
		memcpy(out->sidle, sidle, sizeof out->sidle);
		for (int i = 0; i < g->nst; i++)
			if (g->st[i].first_sub)
				out->sidle_den += ft_an_clip(&c->o, g->st[i].first_sub > w0 ?
							     g->st[i].first_sub : w0, w1);
		uint64_t sum = 0;
		for (int k = 0; k < FT_CAT_N; k++)
			sum += sidle[k];
		for (int i = 0; i < g->hid.n; i++) {
			struct ft_group *x = &g->hid.g[i];
			uint64_t mine = out->measured ? x->midle : x->idle;
			double share = sum ? (double)out->idle_ns * (double)mine / (double)sum : 0;
			x->gpu_idle = share < (double)mine ? (uint64_t)(share + 0.5) : mine;
		}
		g->hid.gpu_idle_known = 1;
	}
	ft_groups_emit(&g->hid, FT_FK_HIDDEN, c->p, 0, &c->sink);
}

static void gpu_free(void *s)
{
	struct gpu *g = s;
	free(g->st);
	ft_map_free(&g->stmap);
	ft_groups_free(&g->hid);
	free(g->ev);
	ft_map_free(&g->evmap);
	free(g->busy);
	free(g->gaps);
	free(g->lat);
	free(g);
}

static int gpu_wants(const struct ft_kfacts *f)
{
	return f->cuda;
}

const struct ft_an_ops ft_an_gpu = { "gpu", gpu_new, gpu_wants, gpu_event, gpu_finish, gpu_free };
