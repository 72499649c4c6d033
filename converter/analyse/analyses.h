/*
 * analyses.h: what the analyses behind analysis.c share, and the ops
 * table each of them exports. Internal to the analysis files (callers use
 * analysis.h).
 *
 * analysis.c drives one process's events through a fixed table of
 * analyses (steps, small reads, counters, GPU, locks, collectives), each a file of its
 * own with new/event/finish/free. Before they see an event, the driver
 * works out what every analysis needs of it once (struct ft_an_ev: the
 * kind's facts, its category, its thread's account) and moves the shared
 * context on (struct ft_an_ctx: metrics, the current counter bin, the
 * process's first and last moments). The finishes run in table order,
 * which is the order their findings reach the sink; then the driver
 * computes the run's metrics and verdict.c the verdict from what the
 * finishes left in ctx->out.
 *
 * To add an analysis: a file with a `const struct ft_an_ops`, declared
 * here, put in analysis.c's table; its findings go to ctx->sink, its
 * numbers to ctx->m (metrics.def) or ctx->out (the verdict's evidence).
 */
#ifndef FT_ANALYSES_H
#define FT_ANALYSES_H

#include <stdint.h>

#include "analysis.h"
#include "counters.h"
#include "events.h"
#include "steps.h"
#include "threads.h"

/* the events.def fields the analyses read, by name: one list */
#define FT_KF_FIELDS(X) X(ret) X(req) X(path) X(fd) X(sync) X(stream) X(sym) X(handle) \
	X(lock) X(site) X(py) X(cond) X(comm) X(kind) X(kinds) X(rank) X(size) \
	X(child)

/* A kind's facts, built once from events.def (evfacts.c). */
struct ft_kfacts {
	int cat, read, launch, mutex, cuda;
	int got;                  /* a wait that returned data: 1 when ret > 0, 2 when ret == 0 */
	int open;                 /* opens a file by path */
	int uring;                /* sets up an io_uring ring (its reads are not seen) */
	int sem;                  /* a semaphore wait */
	int coll;                 /* 1 an NCCL collective (all-reduce, broadcast, all-gather,
	                             reduce-scatter: every rank of a communicator takes part),
	                             submitted to a stream; 2 a gloo collective, which runs
	                             on the calling thread (its duration is the wait) */
	/* where the kind's fields are (NULL: it has none of that name) */
#define FT_KF_FIELD(name) const struct ft_field *name;
	FT_KF_FIELDS(FT_KF_FIELD)
#undef FT_KF_FIELD
};
/* NULL for a kind this reader does not know (the table is built on first
 * use: one load per event after that) */
extern struct ft_kfacts ft_kf[];
extern int ft_kf_built;
void ft_kfacts_build(void);
static inline const struct ft_kfacts *ft_kfacts(unsigned kind)
{
	if (!ft_kf_built)
		ft_kfacts_build();
	return kind > 0 && kind < FT_EV_COUNT ? &ft_kf[kind] : NULL;
}
/* ft_an_info() of record r of facts f (NULL: an unknown kind), inline for
 * the driver's every event */
static inline void ft_evinfo_of(const struct ft_kfacts *f, const struct ft_rec *r,
				struct ft_evinfo *o)
{
	*o = (struct ft_evinfo){ .cat = FT_CAT_CPU };
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

/* a wait that returned data: a batch received (the GIL's waits aside) */
static inline int ft_kf_got_data(const struct ft_kfacts *f, const struct ft_rec *r)
{
	if (!f->got || !f->ret)
		return 0;
	int64_t ret = ft_field_signed(r, f->ret);
	return f->got == 1 ? ret > 0 : ret == 0;
}

/* What the analyses' finishes leave for the verdict (verdict.c). */
struct ft_an_out {
	struct ft_steps_result sr;        /* steps.c */
	/* gpu.c: the device over the verdict's window, when kernels were launched */
	uint64_t first_launch;            /* 0: no launch */
	uint64_t loop_launch, launches_before;  /* the loop's first launch after an
	                                     initialisation's few launches and a long
	                                     pause (0: none such), and those few */
	uint64_t busy_ns, idle_ns, last_gpu_end;  /* the verdict's: measured or modelled */
	uint64_t sidle[FT_CAT_N], sidle_den;   /* streams' idle by cause; streams' time */
	uint64_t model_busy_ns, model_idle_ns; /* the model's (docs/ANALYSES.md) */
	/* gpu_measured.c: the device's busy time by the tracer's timing events,
	 * within the part of the window the samples cover (0: no samples);
	 * measured: they cover enough of it (FT_GPU_MEASURED), and the three
	 * above stand on them */
	uint64_t mbusy_ns, mcover_ns;
	uint64_t mdrain_ns;               /* of the measured idle, inside the waits that
	                                     drained the stream (counted busy) */
	int measured;
	/* locks.c */
	uint64_t lock_union;              /* some launching thread waits for a lock */
	int lock_shared;                  /* a lock two launching threads waited for */
	/* colls.c: the collectives, in call order (malloc'd; the verdict takes them) */
	struct ft_coll *colls;
	int ncolls;
	int32_t coll_rank, coll_world;    /* a gloo collective's context's (world 0: none) */
	/* reads.c: what the process's file reads in the window were, mostly */
	struct ft_read_shape shape;
};

/* The process as every analysis sees it. */
struct ft_an_ctx {
	const struct ft_process *p;
	struct ft_an_opts o;
	struct ft_an_sink sink;
	struct ft_metrics m;
	struct ft_counters ctr;           /* add to ctr.v[] and ctr.out_total */
	struct ft_threads *th;            /* every thread's account (threads.c) */
	uint64_t now;                     /* the current event's start */
	uint64_t first_ts, last_end;      /* the process's first start, last end */
	struct ft_an_out out;
};

/* One event as every analysis sees it. */
struct ft_an_ev {
	const struct ft_event *ev;
	const struct ft_rec *r;
	const struct ft_kfacts *f;        /* NULL: a kind this reader does not know */
	struct ft_evinfo in;              /* in.cat: the GIL's waits are locks */
	uint64_t end;
	struct ft_thacc *t;               /* the thread's account, this event counted */
	int gil;                          /* a condition wait on CPython's GIL */
};

struct ft_an_ops {
	const char *name;
	void *(*new)(struct ft_an_ctx *c);
	/* the kinds it sees (worked out once per kind); NULL: every event,
	 * unknown kinds too */
	int (*wants)(const struct ft_kfacts *f);
	void (*event)(void *s, struct ft_an_ctx *c, const struct ft_an_ev *e);   /* or NULL */
	void (*finish)(void *s, struct ft_an_ctx *c);
	void (*free)(void *s);
};
extern const struct ft_an_ops ft_an_steps;      /* steps.c */
extern const struct ft_an_ops ft_an_reads;      /* reads.c: read metrics, storms */
extern const struct ft_an_ops ft_an_counters;   /* counters.c: the last bins */
extern const struct ft_an_ops ft_an_gpu;        /* gpu.c: streams, gaps, hidden syncs */
extern const struct ft_an_ops ft_an_locks;      /* locks.c: lock and semaphore waits */
extern const struct ft_an_ops ft_an_colls;      /* colls.c: NCCL collectives */

/* The verdict from ctx (verdict.c). */
void ft_verdict_of(const struct ft_an_ctx *c, struct ft_verdict *v);


#endif
