/*
 * convert.c: `feedtrace convert DIR [-o FILE.pftrace]`. Streams each
 * process through the merge (merge.c) and the analyses (analysis.c) and
 * describes tracks, slices, counters, findings and flows to the pipeline
 * (pipeline.c), whose second thread writes them with pftrace.c; a call's
 * arguments are built there too (draw_call). Memory: the merge window,
 * per-thread, per-stream and per-lane state, and the pipeline's batches.
 * The output file appears whole or not at all (a temporary file renamed
 * into place); a symbolic link at the target is never followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "analyse.h"
#include "convert.h"
#include "gpu_measured.h"
#include "events.h"
#include "pipeline.h"
#include "problems.h"
#include "progress.h"
#include "roles.h"
#include "xflows.h"
#include "ranges.h"
#include "symbolize.h"
#include "words.h"

#define REC_MAX FT_PIPE_REC_MAX

struct lanes {                      /* same-named tracks so slices never overlap */
	const char *name;
	uint64_t id[FT_CONV_MAX_LANES], last_end[FT_CONV_MAX_LANES];   /* track ids */
	int n;
};

struct held {                        /* a slice not yet written */
	int has;
	int32_t tid;
	struct ft_evinfo in;             /* ft_an_info() of rec */
	uint64_t ts, end, next_start;    /* next_start: the thread's next call (0 unknown) */
	uint64_t kflow;                  /* the flow to its measured kernel (0: none) */
	unsigned char rec[REC_MAX];
};

/* a measured kernel's launch: the flow from it, a copy of its record
 * (every CUDA kind is 2 slots, events.def: 72 bytes a kernel, beside the
 * reader's 56 a sample) */
#define KREC_MAX (2 * FT_SLOT_SIZE)
struct kdraw { uint64_t flow; unsigned char rec[KREC_MAX]; };
struct cthread { int32_t tid; uint64_t id; struct held h; };   /* id: its track's */
struct cstream { uint64_t id; struct held h; };

struct conv {
	struct ft_pipe *pl;
	const struct ft_conv_opts *o;
	struct ft_conv_stats *st;
	struct ft_process *p;
	struct ft_an *an;
	int32_t pid;
	uint64_t proc_id, ctr_id[FT_CTR_N];     /* track ids (pipeline.h); 0: not declared */
	struct { char name[600]; uint64_t id; } ds[16];   /* findings' counters (fkind.h) by name */
	const struct ft_xflows *xf;      /* flows between processes */
	int nds;
	struct lanes syncs, fl[FT_FK_N];
	struct cthread *th; int nth, capth, last_th;
	struct cstream *sm; int nsm, capsm;
	struct ft_ranges *ranges;       /* user ranges and marks (ranges.c) */
	uint64_t gm_key[256]; int ngm;  /* streams whose modelled track is declared */
	struct ft_gpu_kernel *kern;     /* exactly measured submissions (gpu_measured.c) */
	struct kdraw *kd; int nkern;    /* and their launches, once seen */
	/* progress */
	int iproc, nproc;
	uint64_t next_check;
};

static uint64_t shifted(const struct conv *c, uint64_t ts)
{
	return (uint64_t)((int64_t)ts + c->o->ts_shift);
}

/* A lane of l free over [start, end), declared on first use; 0 if none. */
static uint64_t lane(struct conv *c, struct lanes *l, uint64_t start, uint64_t end)
{
	int i;
	for (i = 0; i < l->n; i++)
		if (l->last_end[i] <= start)
			break;
	if (i == l->n) {
		if (l->n == FT_CONV_MAX_LANES) {
			c->st->lane_overflow++;
			return 0;
		}
		l->id[l->n] = pf_id(FT_ID_LANE | (uint64_t)l->n << 8, c->proc_id, ft_hash_str(l->name));
		ft_pipe_child_track(c->pl, l->id[l->n], c->proc_id, l->name);
		l->last_end[l->n] = 0;
		l->n++;
	}
	if (end > l->last_end[i])
		l->last_end[i] = end;
	return l->id[i];
}

/* ---- raw calls ---- */

/* How each field of a kind becomes an argument, worked out once per kind
 * (the field table's names and types do not change). */
enum { AP_INT, AP_UINT, AP_PTR, AP_STR, AP_SITE, AP_SYNC, AP_DIR };
struct argplan {
	const char *name;
	unsigned char how, off, size;
};
struct kplan {
	int built, n;
	const char *name;        /* the kind's name */
	struct argplan a[FT_MAX_FIELDS];
};
static struct kplan kplans[FT_EV_COUNT];

static const struct kplan *kplan_of(unsigned kind)
{
	if (kind >= FT_EV_COUNT)
		return NULL;
	struct kplan *p = &kplans[kind];
	if (p->built)                   /* every event: no trip to ft_kind() */
		return p;
	const struct ft_kind_info *k = ft_kind(kind);
	if (!k)
		return NULL;
	p->name = k->name;
	int cuda = k->group == FT_G_CUDA;
	for (int i = 0; i < k->nfields; i++) {
		const struct ft_field *f = &k->f[i];
		if (!f->name)
			continue;
		struct argplan *a = &p->a[p->n++];
		a->name = f->name;
		a->off = (unsigned char)f->off;
		a->size = (unsigned char)f->size;
		if (cuda && !strcmp(f->name, "sync"))
			a->how = AP_SYNC;
		else if (cuda && !strcmp(f->name, "dir"))
			a->how = AP_DIR;
		else switch (f->type) {
		case FT_F_I32: case FT_F_I64: a->how = AP_INT; break;
		case FT_F_U32: case FT_F_U64: a->how = AP_UINT; break;
		case FT_F_X32: case FT_F_PTR: a->how = AP_PTR; break;
		default: a->how = !strcmp(f->name, "site") ? AP_SITE : AP_STR; break;
		}
	}
	p->built = 1;
	return p;
}

/* The record's fields as arguments: names are the field table's, string
 * values the reader's string table (read-only while events stream) or
 * literals, all of which outlive the writer (struct pf_event.stable). */
static int call_args(const struct ft_process *p, const struct ft_rec *r,
		     const struct kplan *k, struct pf_arg *a)
{
	if (!k)
		return 0;
	const unsigned char *b = (const unsigned char *)r;
	const int n = k->n;             /* not reloaded after each store to a[] */
	for (int i = 0; i < n; i++) {
		const struct argplan *f = &k->a[i];
		uint64_t v;
		if (f->size == 8) {
			memcpy(&v, b + f->off, 8);
		} else {
			uint32_t u;
			memcpy(&u, b + f->off, 4);
			v = u;
		}
		struct pf_arg *o = &a[i];
		o->name = f->name;
		switch (f->how) {
		case AP_SYNC:
			o->kind = PF_STRING;
			o->v.s = ft_sync_word((unsigned)v);
			break;
		case AP_DIR:
			o->kind = PF_STRING;
			o->v.s = ft_dir_word((unsigned)v);
			break;
		case AP_INT:
			o->kind = PF_INT;
			o->v.i = f->size == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
			break;
		case AP_UINT:
			o->kind = PF_UINT;
			o->v.u = v;
			break;
		case AP_PTR:
			o->kind = PF_POINTER;
			o->v.u = v;
			break;
		default: {
			const char *s = f->how == AP_SITE ? ft_site_text(p, (uint32_t)v)
							  : ft_string(p, (uint32_t)v);
			o->kind = PF_STRING;
			o->v.s = s ? s : "";
			break;
		}
		}
	}
	return n;
}

static const char *call_name(const struct ft_rec *r, const struct kplan *k,
			     char *buf, size_t cap)
{
	if (k)
		return k->name;
	snprintf(buf, cap, "kind %u", r->kind);
	return buf;
}

static void draw_kernel(struct pf_writer *w, const struct ft_pipe_call *pc);

/* Stage 2 (pipeline.c): a call as one complete slice, its fields as
 * arguments. Runs on the pipeline's thread: it touches only the writer,
 * the command (its own copy of the record) and the read-only string tables. */
static void draw_call(struct pf_writer *w, const struct ft_pipe_call *pc)
{
	struct pf_arg args[FT_MAX_FIELDS];
	char nb[32];
	const struct ft_rec *r = pc->rec;
	if (pc->gpu) {
		draw_kernel(w, pc);
		return;
	}
	const struct kplan *k = kplan_of(r->kind);
	struct pf_event ev = {
		.type = PF_SLICE_BEGIN,
		.track = pc->track,
		.ts = pc->ts,
		.name = call_name(r, k, nb, sizeof nb),
		.args = args,
		.nargs = call_args(pc->p, r, k, args),
		.stable = k != NULL,
	};
	uint64_t flow = pc->flow, starts[2];
	int ns = 0;
	if (flow && pc->terminating) {
		ev.term_flow_ids = &flow;
		ev.nterm_flow_ids = 1;
	} else if (flow) {
		starts[ns++] = flow;
	}
	if (pc->flow2)
		starts[ns++] = pc->flow2;
	ev.flow_ids = ns ? starts : NULL;
	ev.nflow_ids = ns;
	pf_slice_complete(w, &ev, pc->end);     /* BEGIN and END */
}

/* A string field of a record by name ("" when it has none) */
static const char *rec_str(const struct ft_process *p, const struct ft_rec *r, const char *name)
{
	const struct ft_kind_info *k = ft_kind(r->kind);
	const struct ft_field *f = k ? ft_kind_field(k, name) : NULL;
	if (!f || f->size != 4)
		return "";
	uint32_t id;
	memcpy(&id, (const unsigned char *)r + f->off, 4);
	const char *s = strcmp(name, "site") == 0 ? ft_site_text(p, id) : ft_string(p, id);
	return s ? s : "";
}

/* A measured kernel (pc->gpu: 1 + queued, ft_gpu_kernel): on its stream's
 * measured track, named after the kernel (a copy or memset: its call),
 * the flow from its launch ending there. */
static void draw_kernel(struct pf_writer *w, const struct ft_pipe_call *pc)
{
	const struct ft_rec *r = pc->rec;
	const struct kplan *k = kplan_of(r->kind);
	const char *name = rec_str(pc->p, r, "kernel"), *site = rec_str(pc->p, r, "site");
	if (!*name)
		name = k ? k->name : "GPU work";
	struct pf_arg a[3];
	int n = 0;
	a[n++] = PF_ARG_STR("bound", pc->gpu == 2
			? "ran within: from the previous sample's completion (work ahead of it) "
			  "to its own sample's completion"
			: "ran within: from its submission (the stream idle) to its sample's completion");
	a[n++] = PF_ARG_STR("call", k ? k->name : "");
	if (*site)
		a[n++] = PF_ARG_STR("site", site);
	uint64_t flow = pc->flow;
	struct pf_event ev = {
		.type = PF_SLICE_BEGIN, .track = pc->track, .ts = pc->ts, .name = name,
		.args = a, .nargs = n, .stable = 1,
		.term_flow_ids = flow ? &flow : NULL, .nterm_flow_ids = flow != 0,
	};
	pf_slice_complete(w, &ev, pc->end);
}

/* Writes one complete slice; flow != 0 attaches a flow id (terminating or not). */
static void write_slice(struct conv *c, uint64_t track, uint64_t ts, uint64_t end,
			const struct ft_rec *r, uint64_t flow, int terminating, uint64_t flow2)
{
	if (!track)
		return;
	if (end < ts)
		end = ts;
	struct ft_pipe_call pc = {
		.track = track, .ts = shifted(c, ts), .end = shifted(c, end),
		.flow = flow, .terminating = terminating, .flow2 = flow2, .p = c->p, .rec = r,
	};
	ft_pipe_call(c->pl, &pc);
	c->st->slices++;
}

static struct cthread *cthread_of(struct conv *c, int32_t tid)
{
	if (c->last_th >= 0 && c->th[c->last_th].tid == tid)
		return &c->th[c->last_th];
	for (int i = 0; i < c->nth; i++)
		if (c->th[i].tid == tid)
			return &c->th[c->last_th = i];
	if (c->nth == c->capth)
		FT_GROW(c->th, c->capth, 16);
	struct cthread *t = &c->th[c->nth];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	char name[64];
	ft_thread_label(c->p, tid, name, sizeof name);
	t->id = c->proc_id;
	if (tid > 0) {
		t->id = pf_id(FT_ID_THREAD, c->proc_id, (uint32_t)tid);
		ft_pipe_thread_track(c->pl, t->id, c->pid, (int64_t)tid + c->o->pid_add, name);
	}
	c->last_th = c->nth++;
	return t;
}

static struct cstream *cstream_of(struct conv *c, uint64_t id)
{
	for (int i = 0; i < c->nsm; i++)
		if (c->sm[i].id == id)
			return &c->sm[i];
	if (c->nsm == c->capsm)
		FT_GROW(c->sm, c->capsm, 8);
	struct cstream *s = &c->sm[c->nsm++];
	memset(s, 0, sizeof *s);
	s->id = id;
	return s;
}

/* A held submission written after later slices of its thread: keep its end
 * strictly before the thread's next call so the two sort apart. */
static void write_held(struct conv *c, struct held *h, uint64_t flow)
{
	if (!h->has)
		return;
	struct cthread *t = cthread_of(c, h->tid);
	uint64_t end = h->end;
	if (h->next_start && end >= h->next_start && h->next_start > h->ts)
		end = h->next_start - 1;
	write_slice(c, t->id, h->ts, end, (const struct ft_rec *)h->rec, flow, 0, h->kflow);
	h->has = 0;
}

/* The thread's previous call is complete: clamp it to the next call's start
 * and write it, or hold it as its stream's last submission. */
static void settle(struct conv *c, struct cthread *t, uint64_t next_start)
{
	struct held *h = &t->h;
	if (!h->has)
		return;
	if (next_start && h->end > next_start)
		h->end = next_start;
	h->next_start = next_start;
	if (h->in.cuda && h->in.sync == FT_SYNC_SUBMIT) {
		struct cstream *s = cstream_of(c, h->in.stream);
		write_held(c, &s->h, 0);            /* the older one waited for nothing */
		s->h = *h;
		h->has = 0;
		return;
	}
	/* a message between processes: its flow (xflows.c) */
	uint64_t flow = 0;
	int term = 0;
	unsigned kind = ((const struct ft_rec *)h->rec)->kind;
	if (kind == FT_EV_PIPE_WRITE || kind == FT_EV_PIPE_READ)
		flow = ft_xflows_of(c->xf, c->iproc, h->tid, h->ts, &term);
	write_slice(c, t->id, h->ts, h->end, (const struct ft_rec *)h->rec, flow, term, h->kflow);
	h->has = 0;
}

static void hold(struct held *h, const struct ft_event *ev, const struct ft_evinfo *in)
{
	size_t n = (size_t)ev->rec->nslots * FT_SLOT_SIZE;
	h->has = 1;
	h->in = *in;
	h->tid = ev->tid;
	h->ts = ev->ts_ns;
	h->end = ev->ts_ns + ev->dur_ns;
	h->next_start = 0;
	h->kflow = 0;
	/* slot by slot: a memcpy of bounded size would be inlined as a rep
	 * movs, slow to start for the one or two slots of most records */
	const unsigned char *src = (const unsigned char *)ev->rec;
	for (size_t o = 0; o < n && o < REC_MAX; o += FT_SLOT_SIZE)
		memcpy(h->rec + o, src + o, FT_SLOT_SIZE);
	if (n > REC_MAX) {                       /* longer than any known kind */
		((struct ft_rec *)h->rec)->kind = 0;
		ft_an_info((const struct ft_rec *)h->rec, &h->in);
	}
}

/* A sync call: on the process's sync lanes; a hidden sync also gets a flow
 * from the last submission on its stream. */
static void sync_slice(struct conv *c, const struct ft_event *ev, const struct ft_evinfo *in)
{
	uint64_t end = ev->ts_ns + ev->dur_ns;
	uint64_t track = lane(c, &c->syncs, ev->ts_ns, end);
	uint64_t flow = 0;
	if (in->sync == FT_SYNC_HIDDEN) {
		struct cstream *s = NULL;
		for (int i = 0; i < c->nsm; i++)
			if (c->sm[i].id == in->stream)
				s = &c->sm[i];
		/* a submission still waiting on its own thread may be newer */
		for (int i = 0; i < c->nth; i++) {
			struct held *h = &c->th[i].h;
			if (!h->has || c->th[i].tid == ev->tid)
				continue;
			const struct ft_evinfo *hi = &h->in;
			if (hi->cuda && hi->sync == FT_SYNC_SUBMIT && hi->stream == in->stream &&
			    h->ts <= ev->ts_ns && (!s || !s->h.has || h->ts > s->h.ts)) {
				settle(c, &c->th[i], 0);
				s = cstream_of(c, in->stream);
			}
		}
		if (s && s->h.has && track) {
			flow = pf_id(FT_ID_FLOW, c->proc_id, ++c->st->flows);
			write_held(c, &s->h, flow);
		}
	}
	if (track)
		write_slice(c, track, ev->ts_ns, end, ev->rec, flow, 1, 0);
}

/* ---- analysis output ---- */

static void on_counter(void *arg, int which, uint64_t ts, int64_t v)
{
	struct conv *c = arg;
	static const int unit[FT_CTR_N] = { PF_UNIT_COUNT, PF_UNIT_SIZE_BYTES, PF_UNIT_COUNT,
					    PF_UNIT_COUNT };
	if (!c->ctr_id[which]) {
		c->ctr_id[which] = pf_id(FT_ID_COUNTER, c->proc_id, (uint64_t)which);
		ft_pipe_counter_track(c->pl, c->ctr_id[which], c->proc_id, ft_ctr_name[which],
				      unit[which]);
	}
	ft_pipe_counter(c->pl, c->ctr_id[which], shifted(c, ts), v);
}

/* One series of a thread's samples (cumulative ns at each) as a counter on
 * its track: the share of the time between two samples, in percent
 * (capped at 100), at the first one's time. */
static void share_track(struct conv *c, const struct ft_process *p, int32_t tid,
			const struct ft_cpu_point *s, int n, int which, const char *name)
{
	if (n < 2 || tid <= 0)
		return;
	uint64_t th = cthread_of(c, tid)->id, u = pf_id(FT_ID_CPU, th, (uint64_t)which);
	ft_pipe_counter_track(c->pl, u, th, name, PF_UNIT_COUNT);
	for (int k = 1; k < n; k++) {
		uint64_t a = ft_ticks_to_ns(p, s[k - 1].ticks);
		uint64_t b = ft_ticks_to_ns(p, s[k].ticks);
		uint64_t d = s[k].cpu_ns > s[k - 1].cpu_ns ? s[k].cpu_ns - s[k - 1].cpu_ns : 0;
		if (b <= a)
			continue;
		double pc = 100.0 * (double)d / (double)(b - a);
		ft_pipe_counter(c->pl, u, shifted(c, a), (int64_t)(pc > 100 ? 100 : pc + 0.5));
	}
}

/* Each thread's CPU samples: the share of one core it used ("CPU %");
 * its SCHED samples: the share of the time it was runnable, waiting for a
 * core ("waiting for a core %") */
static void cpu_tracks(struct conv *c, const struct ft_process *p)
{
	for (int i = 0; i < p->nthreads; i++) {
		const struct ft_thread_rec *t = &p->threads[i];
		share_track(c, p, t->tid, t->cpu, t->ncpu, 0, "CPU %");
		share_track(c, p, t->tid, t->runq, t->nrunq, 1, "waiting for a core %");
	}
}

/* "GPU stream 0x... (what)", or the per-thread default's name */
static void stream_name(char *name, size_t cap, uint64_t key, const char *what)
{
	if (key >> 63)
		snprintf(name, cap, "GPU stream: thread %u's default (%s)", (unsigned)(uint32_t)key,
			 what);
	else
		snprintf(name, cap, "GPU stream 0x%llx (%s)", (unsigned long long)key, what);
}

/* The GPU model's busy interval of a stream (gpu.c): "busy (modelled)" on
 * the stream's modelled track, beside its measured one, where a user sees
 * where the two disagree (the model keeps a stream busy until a wait
 * drains it). */
static void on_gpu_busy(void *arg, uint64_t key, uint64_t start, uint64_t end)
{
	struct conv *c = arg;
	if (end <= start)
		return;
	int k = 0;
	while (k < c->ngm && c->gm_key[k] != key)
		k++;
	if (k == c->ngm) {
		if (c->ngm == (int)(sizeof c->gm_key / sizeof c->gm_key[0]))
			return;
		char name[64];
		c->gm_key[c->ngm++] = key;
		stream_name(name, sizeof name, key, "modelled");
		ft_pipe_child_track(c->pl, pf_id(FT_ID_GPU_MODEL, c->proc_id, key), c->proc_id, name);
	}
	struct pf_arg a[1] = { PF_ARG_PTR("stream", key) };
	ft_pipe_slice(c->pl, pf_id(FT_ID_GPU_MODEL, c->proc_id, key), shifted(c, start),
		      end - start, "busy (modelled)", a, 1);
	c->st->slices++;
}

/* The GPU's measured busy spans (gpu_measured.c): a track per stream,
 * "GPU stream 0x... (measured)", one "busy (measured)" slice per span. */
static void gpu_tracks(struct conv *c, const struct ft_process *p)
{
	struct ft_gpu_span *sp;
	int n = ft_gpu_measured_spans(p, &sp);
	uint64_t track = 0, cur = 0;
	char name[64];
	for (int i = 0; i < n; i++) {
		if (!track || sp[i].stream != cur) {
			cur = sp[i].stream;
			track = pf_id(FT_ID_GPU_STREAM, c->proc_id, cur);
			stream_name(name, sizeof name, cur, "measured");
			ft_pipe_child_track(c->pl, track, c->proc_id, name);
		}
		struct pf_arg a[1] = { PF_ARG_PTR("stream", cur) };
		ft_pipe_slice(c->pl, track, shifted(c, sp[i].start), sp[i].end - sp[i].start,
			      "busy (measured)", a, 1);
		c->st->slices++;
	}
	free(sp);
	/* the exactly measured kernels whose launch was seen, inside those */
	for (int i = 0; i < c->nkern; i++) {
		const struct ft_gpu_kernel *k = &c->kern[i];
		if (!c->kd[i].flow)
			continue;
		struct ft_pipe_call pc = {
			.track = pf_id(FT_ID_GPU_STREAM, c->proc_id, k->stream),
			.ts = shifted(c, k->start), .end = shifted(c, k->end),
			.flow = c->kd[i].flow, .terminating = 1, .gpu = 1 + k->queued,
			.p = p, .rec = (const struct ft_rec *)c->kd[i].rec,
		};
		ft_pipe_call(c->pl, &pc);
		c->st->slices++;
	}
}

/* The flow to the measured kernel of a submission (its thread and time
 * are its sample's), 0 when none was measured exactly; the launch's
 * record is kept for the kernel's slice. */
static uint64_t kernel_flow(struct conv *c, const struct ft_event *ev)
{
	int lo = 0, hi = c->nkern;
	while (lo < hi) {
		int m = lo + (hi - lo) / 2;
		const struct ft_gpu_kernel *k = &c->kern[m];
		if (k->tid < ev->tid || (k->tid == ev->tid && k->submit < ev->ts_ns))
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == c->nkern || c->kern[lo].tid != ev->tid || c->kern[lo].submit != ev->ts_ns ||
	    c->kd[lo].flow)
		return 0;
	struct kdraw *d = &c->kd[lo];
	size_t n = (size_t)ev->rec->nslots * FT_SLOT_SIZE;
	if (n > KREC_MAX)
		return 0;
	memcpy(d->rec, ev->rec, n);
	d->flow = pf_id(FT_ID_FLOW, c->proc_id, ++c->st->flows);
	return d->flow;
}

/* A finding's occurrences per second on its kind's counter (a storm's
 * reads on its data set's, "small reads/s: DIR"), one per name in the
 * process (the first 16), per 100 ms over the finding, then 0. */
static void finding_counter(struct conv *c, const struct ft_finding *f)
{
	char name[600];
	ft_fkind(f)->counter(f, name, sizeof name);
	int k = 0;
	while (k < c->nds && strcmp(c->ds[k].name, name) != 0)
		k++;
	if (k == c->nds) {
		if (c->nds == (int)(sizeof c->ds / sizeof c->ds[0]))
			return;
		snprintf(c->ds[k].name, sizeof c->ds[k].name, "%s", name);
		c->ds[k].id = pf_id(FT_ID_DATASET, c->proc_id, (uint64_t)k);
		ft_pipe_counter_track(c->pl, c->ds[k].id, c->proc_id, c->ds[k].name, PF_UNIT_COUNT);
		c->nds++;
	}
	uint64_t per_s = 1000000000ull / FT_STORM_BIN_NS;
	for (int i = 0; i < f->nbins; i++)
		ft_pipe_counter(c->pl, c->ds[k].id, shifted(c, f->bin0 + (uint64_t)i * FT_STORM_BIN_NS),
				(int64_t)(f->bins[i] * per_s));
	ft_pipe_counter(c->pl, c->ds[k].id,
			shifted(c, f->bin0 + (uint64_t)f->nbins * FT_STORM_BIN_NS), 0);
}

/* A finding on its process's findings tracks (its kind's, fkind.h): one
 * slice over its extent, or for a kind of FT_FKF_BURSTS (a hidden sync, a
 * contended lock) one slice per burst of its occurrences (analysis.h,
 * FT_BURST_GAP_NS), so that it spans its waits, not the seconds between
 * them. The kind's arguments, each fact once, with the suggestion. A
 * storm's reads per bin (f->nbins) also go to its data set's counter. */
static void on_finding(void *arg, const struct ft_finding *f)
{
	if (f->candidate)
		return;                 /* under the per-process threshold */
	struct conv *c = arg;
	const struct ft_fkind_ops *k = ft_fkind(f);
	struct pf_arg a[FT_FK_MAX_ARGS + 3];
	char key[FT_FK_MAX_KEYS][32];
	int n = k->args(f, a, key);
	if (f->nbins && k->counter)
		finding_counter(c, f);
	const char *sug = ft_finding_suggestion(f);
	if (sug)
		a[n++] = PF_ARG_STR("suggestion", sug);
	if ((k->flags & FT_FKF_BURSTS) && f->nbursts > 0) {
		for (int b = 0; b < f->nbursts; b++) {
			const struct ft_burst *u = &f->bursts[b];
			a[n] = PF_ARG_UINT("waits_here", u->count);
			a[n + 1] = PF_ARG_UINT("wait_ns_here", u->total_ns);
			uint64_t track = lane(c, &c->fl[f->kind], u->start, u->end);
			if (!track)
				continue;
			ft_pipe_slice(c->pl, track, shifted(c, u->start), u->end - u->start,
				      k->slice, a, n + 2);
			c->st->findings++;
		}
		return;
	}
	uint64_t track = lane(c, &c->fl[f->kind], f->start, f->end);
	if (!track)
		return;
	ft_pipe_slice(c->pl, track, shifted(c, f->start), f->end - f->start, k->slice, a, n);
	c->st->findings++;
}

/* ---- the stream of events ---- */

/* the progress line (cli.c): the process being converted; one line kept
 * per process */
static void progress(struct conv *c, int done)
{
	ft_progress_line(c->o->progress, done, "feedtrace convert: process %d/%d (pid %d): %llu events",
			 c->iproc + 1, c->nproc, c->p->hdr.pid, (unsigned long long)c->st->events);
	if (done)
		ft_progress_end(c->o->progress, 1);
}

static int on_event(const struct ft_event *ev, void *arg)
{
	struct conv *c = arg;
	struct ft_evinfo in;
	ft_an_event_info(c->an, ev, &in);
	struct cthread *t = cthread_of(c, ev->tid);
	settle(c, t, ev->ts_ns);
	if (in.cuda && (in.sync == FT_SYNC_WAIT || in.sync == FT_SYNC_HIDDEN ||
			in.sync == FT_SYNC_POLL))
		sync_slice(c, ev, &in);
	if (ft_ranges_kind(ev->rec->kind))
		ft_ranges_event(c->ranges, ev, t->id);     /* a range, not a call */
	else
		hold(&t->h, ev, &in);
	if (in.cuda && c->nkern && !ft_ranges_kind(ev->rec->kind))
		t->h.kflow = kernel_flow(c, ev);
	if (++c->st->events >= c->next_check && c->o->progress) {
		c->next_check = c->st->events + 65536;
		progress(c, 0);
	}
	return 0;
}

static void conv_process(struct conv *c, FILE *err, const char *role_name)
{
	struct ft_process *p = c->p;
	char name[512];
	snprintf(name, sizeof name, "%s%s", c->o->label ? c->o->label : "", role_name);
	/* a damaged pid must not overflow: wrap it */
	c->pid = (int32_t)((uint32_t)p->hdr.pid + (uint32_t)c->o->pid_add);
	c->proc_id = pf_id(FT_ID_PROCESS, (uint32_t)c->pid, (uint64_t)c->iproc);
	ft_pipe_process_track(c->pl, c->proc_id, c->pid, name);
	c->syncs.name = "syncs";
	c->ranges = ft_ranges_new(c->pl, p, c->proc_id, c->o->ts_shift, &c->st->slices);
	for (int k = 0; k < FT_FK_N; k++)
		c->fl[k].name = ft_fkinds[k]->track;
	struct ft_an_sink sink = { on_finding, on_counter, c, on_gpu_busy };
	c->ngm = 0;
	c->nkern = ft_gpu_measured_kernels(p, &c->kern);
	c->kd = c->nkern ? ft_xrealloc(NULL, (size_t)c->nkern * sizeof *c->kd) : NULL;
	for (int i = 0; i < c->nkern; i++)
		c->kd[i].flow = 0;
	c->an = ft_an_new(p, &c->o->an, &sink);
	if (ft_may_block_in_collectives(p)) {   /* its blocking collectives first */
		struct ft_span *sp;
		int n = ft_coll_spans(p, &c->o->mg, ft_said_once(err), &sp);
		ft_an_blocking(c->an, sp, n);
		free(sp);
	}
	struct ft_merge_stats ms;
	ft_merge_events(p, &c->o->mg, on_event, c, err, &ms);
	for (int i = 0; i < c->nth; i++)
		settle(c, &c->th[i], 0);
	for (int i = 0; i < c->nsm; i++)
		write_held(c, &c->sm[i].h, 0);
	ft_ranges_finish(c->ranges, p->last_ns);
	ft_ranges_free(c->ranges);
	cpu_tracks(c, p);
	gpu_tracks(c, p);
	free(c->kern);
	free(c->kd);
	struct ft_metrics m;
	ft_an_finish(c->an, &m, NULL);
	ft_an_free(c->an);
	c->st->late += ms.late;
	if (ms.peak_bytes > c->st->peak_bytes)
		c->st->peak_bytes = ms.peak_bytes;
	c->st->dropped += m.dropped;
	if (m.dropped)
		fprintf(err, "feedtrace: %s: pid %d dropped %llu events (its trace buffers were full)\n",
			p->path, p->hdr.pid, (unsigned long long)m.dropped);
	if (p->has_end && p->end.threads_untraced)
		fprintf(err, "feedtrace: %s: pid %d: %llu threads were not traced (memory bound)\n",
			p->path, p->hdr.pid, (unsigned long long)p->end.threads_untraced);
	char fw[320];
	if (ft_words_flight(p, fw, sizeof fw))
		fprintf(err, "feedtrace: %s: pid %d: %s\n", p->path, p->hdr.pid, fw);
	if (c->o->progress)
		progress(c, 1);
}

void ft_conv_clock(struct pf_writer *w, const struct ft_trace *tr)
{
	uint64_t t0 = tr->start_ns, real = 0;
	for (int i = 0; i < tr->nprocs; i++)
		if (tr->procs[i]->base_ns == t0 && tr->procs[i]->hdr.start_real_ns)
			real = tr->procs[i]->hdr.start_real_ns - (tr->procs[i]->hdr.start_mono_ns - t0);
	/* BOOTTIME and MONOTONIC differ only by suspended time: equal here */
	pf_clock_snapshot(w, t0, real, t0);
	pf_set_clock(w, PF_CLOCK_MONOTONIC);
}

/* ---- process roles (roles.c) ----
 * The timeline names each process by its role ("main: python3 train.py",
 * "DataLoader worker 1 (pid 5562)") and links it to its parent. With more
 * than one process the roles need each one's launches and batches: a
 * light pass over its records, before the conversion. */
struct prepass {
	struct ft_role_proc *rp; struct ft_xflows *xf; int i;
	int32_t *forked; int capforked;       /* rp->forked, growing */
};

static int role_count(const struct ft_event *ev, void *arg)
{
	struct prepass *pp = arg;
	pp->rp->events++;
	ft_an_role_count(ev->rec, &pp->rp->launches, &pp->rp->batches);
	int32_t child = ft_an_forked(ev->rec);
	if (child) {
		if (pp->rp->nforked == pp->capforked)
			FT_GROW(pp->forked, pp->capforked, 8);
		pp->forked[pp->rp->nforked++] = child;
	}
	ft_xflows_event(pp->xf, pp->i, ev);
	return 0;
}

/* the roles and, across processes, the flows from a producer's pipe
 * writes to the consumer's reads (xflows.c): one light pass */
static struct ft_role_proc *roles_of(struct ft_trace *tr, FILE *err, struct ft_xflows *xf)
{
	struct ft_role_proc *rl = ft_xcalloc((size_t)(tr->nprocs ? tr->nprocs : 1), sizeof *rl);
	for (int i = 0; i < tr->nprocs; i++) {
		struct ft_process *p = tr->procs[i];
		rl[i].pid = p->hdr.pid;
		rl[i].ppid = p->hdr.ppid;
		rl[i].cmdline = *p->cmdline ? p->cmdline : p->exe;
		rl[i].start = p->base_ns;
		rl[i].rank = p->hdr.rank;
		rl[i].world = p->hdr.world_size;
		struct prepass pp = { &rl[i], xf, i, NULL, 0 };
		if (tr->nprocs > 1)
			ft_process_events(p, role_count, &pp, ft_said_once(err));  /* said by the conversion */
		rl[i].forked = pp.forked;
	}
	ft_roles(rl, tr->nprocs);
	ft_xflows_pair(xf, rl);
	return rl;
}

/* The ProcessTree packet links each process to its parent (trace
 * processor's parent_upid) and names it: trace processor takes a process's
 * name from the first word of its first argument there, after the track
 * descriptor's name, so the role name goes there with no-break spaces
 * (U+00A0) between its words; the command line follows as the second. */
static void process_tree(struct pf_writer *w, const struct ft_trace *tr,
			 const struct ft_role_proc *rl, const struct ft_conv_opts *o)
{
	int n = tr->nprocs;
	int32_t *pid = ft_xcalloc((size_t)n + 1, sizeof *pid), *ppid = ft_xcalloc((size_t)n + 1, sizeof *ppid);
	char (*name)[600] = ft_xcalloc((size_t)n + 1, sizeof *name);
	const char **argv = ft_xcalloc(2 * (size_t)n + 1, sizeof *argv);
	for (int i = 0; i < n; i++) {
		/* every process with its parent pid, traced or not (a process
		 * listed without one leaves its children unlinked) */
		pid[i] = (int32_t)((uint32_t)rl[i].pid + (uint32_t)o->pid_add);
		ppid[i] = rl[i].parent >= 0 ? (int32_t)((uint32_t)rl[i].ppid + (uint32_t)o->pid_add)
					    : rl[i].ppid;
		char plain[400];
		snprintf(plain, sizeof plain, "%s", o->label ? o->label : "");
		size_t k = strlen(plain);
		ft_role_name(rl, n, i, plain + k, sizeof plain - k);
		size_t j = 0;
		for (const char *c = plain; *c && j + 3 < sizeof name[i]; c++) {
			if (*c == ' ')
				name[i][j++] = (char)0xc2, name[i][j++] = (char)0xa0;
			else
				name[i][j++] = *c;
		}
		name[i][j] = 0;
		argv[2 * i] = name[i];
		argv[2 * i + 1] = rl[i].cmdline;
	}
	pf_process_tree(w, (uint64_t)((int64_t)tr->start_ns + o->ts_shift), n, pid, ppid, argv, 2);
	free(pid);
	free(ppid);
	free(name);
	free(argv);
}

void ft_conv_trace(struct pf_writer *w, struct ft_trace *tr, const struct ft_conv_opts *o,
		   FILE *err, struct ft_conv_stats *st)
{
	struct ft_xflows *xf = ft_xflows_new(tr->nprocs);
	struct ft_role_proc *rl = roles_of(tr, err, xf);
	process_tree(w, tr, rl, o);
	st->flows += ft_xflows_count(xf);
	int threads = o->threads > 0 ? o->threads : ft_pipe_default_threads();
	struct ft_pipe *pl = ft_pipe_new(w, threads, draw_call);
	for (int i = 0; i < tr->nprocs; i++) {
		struct conv c;
		struct ft_conv_opts po = *o;         /* its host's clock (rankpick.c) */
		if (o->proc_shift)
			po.ts_shift += o->proc_shift[i];
		memset(&c, 0, sizeof c);
		c.pl = pl;
		c.o = &po;
		c.st = st;
		c.p = tr->procs[i];
		c.last_th = -1;
		c.iproc = i;
		c.nproc = tr->nprocs;
		c.xf = xf;
		char name[200];
		ft_role_name(rl, tr->nprocs, i, name, sizeof name);
		conv_process(&c, err, name);
		free(c.th);
		free(c.sm);
	}
	ft_pipe_finish(pl);
	for (int i = 0; i < tr->nprocs; i++)
		free((void *)rl[i].forked);
	free(rl);
	ft_xflows_free(xf);
}
