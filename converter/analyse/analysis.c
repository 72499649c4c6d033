/*
 * analysis.c: drives the diagnoses of docs/ANALYSES.md over one process's
 * events in start-time order. Each event is counted once in its thread's
 * account (threads.c) and handed to a fixed table of analyses, each a
 * file of its own behind struct ft_an_ops (analyses.h): steps, reads and
 * storms, per-ms counters, the GPU (streams, gaps, hidden syncs), locks,
 * collectives.
 * At the end their finishes run in table order, then the `emit` of each
 * finding kind that finds itself (fkind.h), then the run's metrics and
 * the verdict (verdict.c). Memory grows with threads, streams, locks,
 * call sites, files in one storm and stream work open at once, never with
 * events.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "analyses.h"
#include "fkind.h"
#include "events.h"
#include "groups.h"
#include "phases.h"
#include "symbolize.h"

const char *const ft_ctr_name[FT_CTR_N] = {
	"kernel launches per ms", "bytes read per ms", "reads per ms",
	"outstanding async work" };

/* ---- options ---- */

void ft_an_default_opts(struct ft_an_opts *o)
{
	memset(o, 0, sizeof *o);             /* no window: the whole process */
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

/* ---- the driver ---- */

/* The analyses, in the order they see each event and finish: a finish
 * that hands findings or values to the sink comes where they should
 * appear (storms, the last counter bins, hidden syncs, locks). */
static const struct ft_an_ops *const table[] = {
	&ft_an_steps, &ft_an_reads, &ft_an_counters, &ft_an_gpu, &ft_an_locks, &ft_an_colls,
};
#define NAN_OPS ((int)(sizeof table / sizeof table[0]))
_Static_assert(NAN_OPS <= 8, "sees[] holds 8 analyses");

/* per kind, the analyses that see its events (bit i: table[i]); unknown
 * kinds at 0: only those that see every event */
static uint8_t sees[FT_EV_COUNT];
static int sees_built;

static void build_sees(void)
{
	for (unsigned k = 0; k < FT_EV_COUNT; k++) {
		const struct ft_kfacts *f = ft_kfacts(k);
		uint8_t m = 0;
		for (int i = 0; i < NAN_OPS; i++)
			if (table[i]->event && (!table[i]->wants || (f && table[i]->wants(f))))
				m |= (uint8_t)(1u << i);
		sees[k] = m;
	}
	sees_built = 1;
}

struct ft_an {
	struct ft_an_ctx c;
	void *state[NAN_OPS];
	struct { uint64_t addr; int gil; } gilc[16];  /* is_gil's answers by address */
	/* ft_an_blocking: the union of the blocking collectives, disjoint and
	 * in order, the first that may still overlap an event (events come in
	 * start order), and the communication workers that run them */
	struct ft_span *blk; int nblk, blk_at;
	int32_t blk_tid[16]; int nblk_tid;
	int32_t *forked; int nforked, capforked;  /* its fork records' children, in order */
};

struct ft_an *ft_an_new(const struct ft_process *p, const struct ft_an_opts *o,
			const struct ft_an_sink *sink)
{
	struct ft_an *a = ft_xcalloc(1, sizeof *a);
	struct ft_an_ctx *c = &a->c;
	if (!sees_built)
		build_sees();
	c->p = p;
	if (o)
		c->o = *o;
	else
		ft_an_default_opts(&c->o);
	if (sink)
		c->sink = *sink;
	if (c->o.storm_reads < 1)
		c->o.storm_reads = 1;
	ft_counters_init(&c->ctr, c->o.bin_ns, &c->sink);
	c->th = ft_threads_new(&c->o);
	for (int i = 0; i < NAN_OPS; i++)
		a->state[i] = table[i]->new(c);
	return a;
}

void ft_an_free(struct ft_an *a)
{
	if (!a)
		return;
	for (int i = 0; i < NAN_OPS; i++)
		table[i]->free(a->state[i]);
	ft_threads_free(a->c.th);
	free(a->c.out.colls);
	free(a->c.out.sr.phases);
	free(a->blk);
	free(a->forked);
	free(a);
}

static int by_span_start(const void *x, const void *y)
{
	const struct ft_span *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

void ft_an_blocking(struct ft_an *a, const struct ft_span *s, int n)
{
	free(a->blk);
	a->blk = NULL;
	a->nblk = a->blk_at = a->nblk_tid = 0;
	if (n <= 0)
		return;
	struct ft_span *v = ft_xmalloc((size_t)n * sizeof *v);
	memcpy(v, s, (size_t)n * sizeof *v);
	qsort(v, (size_t)n, sizeof *v, by_span_start);
	/* the communication workers: the threads that run at least half as
	 * many collectives as the busiest (ProcessGroupGloo's take turns), not
	 * a training thread that called one itself (a barrier) */
	int32_t tid[16];
	int cnt[16] = { 0 }, nt = 0, most = 0;
	for (int i = 0; i < n; i++) {
		int k = 0;
		while (k < nt && tid[k] != v[i].tid)
			k++;
		if (k == nt && nt < 16)
			tid[nt++] = v[i].tid;
		if (k < nt && ++cnt[k] > most)
			most = cnt[k];
	}
	for (int k = 0; k < nt; k++)
		if (2 * cnt[k] >= most)
			a->blk_tid[a->nblk_tid++] = tid[k];
	for (int i = 0; i < n; i++) {
		if (a->nblk && v[i].start <= v[a->nblk - 1].end) {
			if (v[i].end > v[a->nblk - 1].end)
				v[a->nblk - 1].end = v[i].end;
		} else {
			v[a->nblk++] = v[i];
		}
	}
	a->blk = v;
}

/* [s, e) lies at least half within the blocking collectives */
static int in_blocking(struct ft_an *a, uint64_t s, uint64_t e)
{
	while (a->blk_at < a->nblk && a->blk[a->blk_at].end <= s)
		a->blk_at++;
	uint64_t in = 0;
	for (int i = a->blk_at; i < a->nblk && a->blk[i].start < e; i++) {
		uint64_t lo = a->blk[i].start > s ? a->blk[i].start : s;
		uint64_t hi = a->blk[i].end < e ? a->blk[i].end : e;
		in += hi - lo;
	}
	return e > s && 2 * in >= e - s;
}

/* A wait that may be for a collective: a condition or semaphore (a
 * training thread waiting for its collective's worker), or a socket or
 * epoll wait (the collective's transport). Pipes carry DataLoader batches
 * (multiprocessing queues): waits on them stay waits for data. */
static int rank_wait(const struct ft_kfacts *f, const struct ft_rec *r)
{
	if (f->got == 2)
		return 1;
	unsigned k = f->kind ? (unsigned)ft_field_raw(r, f->kind)
			     : f->kinds ? (unsigned)ft_field_raw(r, f->kinds) & 0xfu : 0;
	return k == FT_FDK_SOCKET || k == FT_FDK_EPOLL;
}

static int blocking_thread(const struct ft_an *a, int32_t tid)
{
	for (int k = 0; k < a->nblk_tid; k++)
		if (a->blk_tid[k] == tid)
			return 1;
	return 0;
}

static int is_gil(struct ft_an *a, uint64_t addr)
{
	unsigned h = (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> 60);
	if (a->gilc[h].addr == addr + 1)
		return a->gilc[h].gil;
	a->gilc[h].addr = addr + 1;
	a->gilc[h].gil = ft_is_gil_name(ft_data_symbol(a->c.p, addr));
	return a->gilc[h].gil;
}

void ft_an_event(struct ft_an *a, const struct ft_event *ev)
{
	struct ft_evinfo in;
	ft_an_event_info(a, ev, &in);
}

void ft_an_event_info(struct ft_an *a, const struct ft_event *ev, struct ft_evinfo *inp)
{
	struct ft_an_ctx *c = &a->c;
	struct ft_an_ev e = { .ev = ev, .r = ev->rec, .f = ft_kfacts(ev->rec->kind),
			      .end = ev->ts_ns + ev->dur_ns };
	ft_evinfo_of(e.f, e.r, &e.in);
	e.gil = e.f && e.f->cond && is_gil(a, ft_field_raw(e.r, e.f->cond));
	if (e.gil)
		e.in.cat = FT_CAT_LOCK;
	int got = e.f && !e.gil && ft_kf_got_data(e.f, e.r);
	if (a->nblk && e.f && e.f->got && !e.gil) {
		if (blocking_thread(a, ev->tid))
			got = 0;            /* a communication worker waiting for work */
		else if (rank_wait(e.f, e.r) && in_blocking(a, ev->ts_ns, e.end))
			e.in.cat = FT_CAT_RANKS, got = 0;
	}
	*inp = e.in;
	c->now = ev->ts_ns;
	if (!c->m.events++ || ev->ts_ns < c->first_ts)
		c->first_ts = ev->ts_ns;
	if (e.end > c->last_end)
		c->last_end = e.end;
	ft_counters_at(&c->ctr, ev->ts_ns);
	e.t = ft_thread_of(c->th, ev->tid);
	ft_thread_seen(e.t, ev->ts_ns, e.end);
	if (e.f)
		ft_thread_call(&c->o, e.t, ev->ts_ns, e.end, e.in.cat, got);
	if (e.gil)
		e.t->gil += ft_an_clip(&c->o, ev->ts_ns, e.end);
	if (e.r->kind == FT_EV_PIPE_WRITE)
		e.t->handover += ft_an_clip(&c->o, ev->ts_ns, e.end);
	if (e.r->kind == FT_EV_RANGE_PUSH) {
		const char *name = ft_string(c->p, e.r->p.u32[0]);
		if (name && !strncmp(name, FT_NEXT_PREFIX, sizeof FT_NEXT_PREFIX - 1))
			ft_thread_next_push(e.t, ev->ts_ns, (int32_t)e.r->p.u32[1]);
	} else if (e.r->kind == FT_EV_RANGE_POP) {
		ft_thread_next_pop(e.t, ev->ts_ns, (int32_t)e.r->p.u32[0]);
	}
	unsigned k = e.r->kind;
	for (unsigned m = sees[e.f ? k : 0]; m; m &= m - 1) {
		int i = __builtin_ctz(m);
		table[i]->event(a->state[i], c, &e);
	}
	if (e.f)
		ft_thread_recent(e.t, ev->ts_ns, e.end, e.in.cat);
	if (e.f && e.f->child) {
		int32_t child = ft_an_forked(e.r);
		if (child) {
			if (a->nforked == a->capforked)
				FT_GROW(a->forked, a->capforked, 8);
			a->forked[a->nforked++] = child;
		}
	}
}

void ft_an_finish(struct ft_an *a, struct ft_metrics *m, struct ft_verdict *v)
{
	struct ft_an_ctx *c = &a->c;
	for (int i = 0; i < NAN_OPS; i++)
		table[i]->finish(a->state[i], c);
	for (int k = 0; k < FT_FK_N; k++)       /* the kinds that find themselves */
		if (ft_fkinds[k]->emit)
			ft_fkinds[k]->emit(c);
	const struct ft_process *p = c->p;
	uint64_t lost = 0;
	for (int i = 0; i < p->nthreads; i++)
		lost += p->threads[i].lost;
	if (p->has_end && p->end.lost > lost)
		lost = p->end.lost;
	c->m.dropped = lost;
	c->m.threads = (uint64_t)c->th->nth;
	uint64_t start = p->base_ns, stop = c->last_end;
	if (c->m.events && c->first_ts < start)
		start = c->first_ts;
	if (p->last_ns > stop)
		stop = p->last_ns;
	uint64_t wfrom, wto;
	if (ft_process_windowed(p, &wfrom, &wto)) {
		/* only its capture windows: the time before and after is unrecorded */
		start = wfrom;
		stop = wto > c->last_end ? wto : c->last_end;
	}
	c->m.wall_ns = stop > start ? stop - start : 0;
	if (m)
		*m = c->m;
	if (v) {
		ft_verdict_of(c, v);
		v->shape = c->out.shape;
		v->coll_rank = c->out.coll_rank;
		v->coll_world = c->out.coll_world;
		v->colls = c->out.colls;            /* the verdict's now */
		v->ncolls = c->out.ncolls;
		c->out.colls = NULL;
		c->out.ncolls = 0;
		v->phases = c->out.sr.phases;       /* the verdict's now */
		c->out.sr.phases = NULL;
		v->forked = a->forked;
		v->nforked = a->nforked;
		a->forked = NULL;
		a->nforked = a->capforked = 0;
	}
}
