/*
 * analysis.h: the diagnoses (docs/ANALYSES.md): launch gaps, hidden syncs,
 * small-read storms, lock contention, per-ms counters and the verdict,
 * computed in one streaming pass over a process's time-ordered events
 * (analysis.c drives the analyses of analyses.h; verdict.c decides).
 */
#ifndef FT_ANALYSIS_H
#define FT_ANALYSIS_H

#include <stdint.h>
#include <stdio.h>

#include "reader.h"
#include "states.h"

/* where a thread's time goes (verdict shares, gap attribution) */
enum ft_cat {
	FT_CAT_SUBMIT,      /* CUDA submissions and other driver calls */
	FT_CAT_GPU_WAIT,    /* explicit synchronize calls and polls */
	FT_CAT_HIDDEN,      /* hidden syncs */
	FT_CAT_IO,          /* file I/O */
	FT_CAT_LOCK,        /* mutex and rwlock waits */
	FT_CAT_DATA,        /* waiting for data: semaphore, condition, poll/select/
	                       epoll waits, pipe/socket reads, recv* */
	FT_CAT_RANKS,       /* waiting for other ranks: a collective that runs on
	                       its thread (gloo), and another thread's wait
	                       for data while its process is in one */
	FT_CAT_CPU,         /* untraced CPU time (and process calls) */
	FT_CAT_RUNQ,        /* runnable, waiting for a core: of the untraced time,
	                       the run-queue delay its SCHED samples give (verdict.c) */
	FT_CAT_N
};
extern const char *const ft_cat_name[FT_CAT_N];   /* "submit", "gpu_wait", ... */
extern const char *const ft_cat_label[FT_CAT_N];  /* "submitting", ... */

/* CUDA call classes (events.def) */
enum { FT_SYNC_SUBMIT, FT_SYNC_WAIT, FT_SYNC_HIDDEN, FT_SYNC_POLL, FT_SYNC_OTHER };
const char *ft_sync_word(unsigned sync);          /* "submit", "wait", ... */
const char *ft_dir_word(unsigned dir);            /* "HtoD", ... */

struct ft_an_opts {
	uint64_t gap_ns;          /* launch gap threshold (1 ms) */
	uint64_t storm_window_ns; /* storm window (1 s) */
	uint32_t storm_reads;     /* small reads per window (1000) */
	uint32_t small_read;      /* a small read asks for fewer bytes (65536) */
	uint64_t storm_ref_read;  /* reference read size for reads_needed (1 MiB) */
	uint64_t lock_min_ns;     /* report locks waited on at least this long in total (0) */
	uint64_t bin_ns;          /* counter bin (1 ms) */
	const char *step_range;   /* a range whose name starts with this is a step ("step") */
	uint64_t win_start, win_end; /* the verdict's window (0, 0: the whole process) */
};
void ft_an_default_opts(struct ft_an_opts *o);
/* length of [s, e) within o's window (all of it without a window) */
static inline uint64_t ft_an_clip(const struct ft_an_opts *o, uint64_t s, uint64_t e)
{
	if (o->win_end) {
		if (s < o->win_start)
			s = o->win_start;
		if (e > o->win_end)
			e = o->win_end;
	}
	return e > s ? e - s : 0;
}
/* the analysis options' lines of a command's --help */
extern const char ft_an_opts_help[];
/* "--reorder-ms MS": 0 and *ns set, or -1 after one line naming cmd and opt */
int ft_parse_ms(const char *cmd, const char *opt, const char *text, uint64_t *ns);

/* the finding kinds (fkinds.def; each kind's names and ops: fkind.h) */
enum ft_fkind {
#define FKIND(name, ops) FT_FK_##name,
#include "fkinds.def"
#undef FKIND
	FT_FK_N
};

#define FT_STORM_TOP 5
#define FT_STORM_HIST 8           /* read sizes: <512, <1K, <4K, <16K, <64K, <256K, <1M, more */
extern const char *const ft_storm_hist_label[FT_STORM_HIST];

/* Occurrences of a hidden sync or a lock wait less than this apart form
 * one burst: one timeline slice each, so a finding spans its waits, not
 * the seconds between them. */
#define FT_BURST_GAP_NS 10000000ull
struct ft_burst { uint64_t start, end, count, total_ns; };
struct ft_iv;

/* A finding: a head every kind has, then its kind's payload (one arm of
 * the union: read only the arm of f->kind; the kinds' files, fkind.h). */
struct ft_finding {
	int kind;                 /* enum ft_fkind */
	int32_t pid;
	uint64_t start, end;      /* CLOCK_MONOTONIC ns */
	uint64_t lost_ns;         /* the time it cost (ranking) */
	int32_t tid;              /* gap: thread that ended it; hidden: the thread */
	int candidate;            /* storm: a burst under the per-process threshold
	                             (FT_STORM_CANDIDATE reads or more), for the
	                             run-wide check across workers (problems.c) */
	/* valid during the sink's call only (a kept copy clears them) */
	const struct ft_burst *bursts;  /* hidden sync, lock: its occurrences as bursts
	                                   (FT_BURST_GAP_NS) */
	int nbursts;
	const uint32_t *bins;     /* storm: small reads per FT_STORM_BIN_NS from bin0 */
	int nbins;
	uint64_t covered_ns;      /* storm, lock, hidden sync: the wall time its reads
	                             or waits covered (the union over the process's
	                             threads; lost_ns sums them) */
	const struct ft_iv *cov;  /* storm, lock: that time as sorted, disjoint
	                             intervals (cover.h; valid during the sink's call) */
	int ncov;
	union {
		struct {                  /* launch gap */
			int scope;        /* 0 stream, 1 submitting thread */
			uint64_t stream;
			int after_sync;   /* the gap began when a sync returned */
			uint64_t attr[FT_CAT_N];  /* what the submitting thread did meanwhile */
			int cause;        /* enum ft_cat: the largest share of attr */
			const char *next_call;    /* the submission that ended it */
		};
		struct {                  /* waits: hidden sync, lock contention, CPU
		                             oversubscribed (count, total_ns, max_ns, threads) */
			const char *symbol;   /* exact driver symbol; lock: the call */
			const char *site;     /* call site ("" until call sites are recorded) */
			uint64_t count, total_ns, max_ns;
			uint64_t addr;        /* lock address */
			const char *lock_name;  /* the symbol that holds it ("launch_lock"), or NULL */
			int gil;              /* lock: CPython's interpreter lock ("Python GIL") */
			int threads;          /* distinct threads that waited */
			uint64_t gpu_idle_ns; /* hidden sync: the device's idle time after these
			                         syncs, by the GPU model (ANALYSES.md, "Hidden syncs") */
			int gpu_idle_known;   /* hidden sync: gpu_idle_ns is the model's (a launch seen) */
		};
		struct {                  /* small-read storm */
			uint64_t reads, bytes, files, reads_needed;
			uint64_t hist[FT_STORM_HIST];
			const char *top_file[FT_STORM_TOP];
			uint64_t top_reads[FT_STORM_TOP];
			int ntop;
			uint64_t bin0;        /* the start of bins[0] */
			const char *opener;   /* the Python site that opened most of its files'
			                         descriptors ("f.py:42 in __getitem__;..."), or NULL */
			uint64_t opener_reads;  /* the reads of files it opened */
		};
	};
};
#define FT_STORM_CANDIDATE 100
#define FT_STORM_BIN_NS 100000000ull    /* a storm's reads counted per 100 ms */

/* run-level numbers, also what `diff` compares: metrics.def's, then */
struct ft_metrics {
#define METRIC(field, key, label, ns) uint64_t field;
#include "metrics.def"
#undef METRIC
	uint64_t idle_ns;                 /* of gap_ns, after a sync: the GPU known idle */
	/* steps (steps.c): closed step ranges, their summed and median length,
	 * launches, hidden syncs and reads that started inside one */
	uint64_t steps, step_ns, step_median_ns;
	uint64_t step_launches, step_hidden, step_reads;
	uint64_t steps_from_batches;      /* 1: no step range, one step per batch received */
	uint64_t steps_from_optimizer;    /* 1: no step range, one per optimizer step (phases.h) */
};

/* one thread's time, clipped to the window (the whole process without one) */
struct ft_thread_sum {
	int32_t tid;
	uint64_t launches, events;     /* events: that started in the window */
	uint64_t first, last_end;      /* its first call's start, last call's end */
	uint64_t wall;                 /* [first, last_end] within the window */
	uint64_t t[FT_CAT_N];          /* traced time per category (CPU: process calls) */
	uint64_t pre[FT_CAT_N];        /* the same before the window (start-up) */
	uint64_t gil;                  /* of t[FT_CAT_LOCK]: waits for CPython's GIL */
	uint64_t handover;             /* of t[FT_CAT_CPU]: pipe writes (a producer handing
	                                  over; blocked while the pipe is full) */
	uint64_t batches;              /* data waits that returned data */
	uint64_t first_batch, last_batch; /* their ends */
};

/* A collective (NCCL all-reduce, broadcast, all-gather, reduce-scatter) of
 * one process, in call order: the k-th of a communicator is matched with
 * the k-th of the same communicator in the other ranks (ranks.c). */
struct ft_coll {
	uint32_t comm;            /* the communicator's number in this process, by first use */
	uint32_t kind;            /* FT_EV_NCCL_* */
	uint64_t start, end;      /* the call: arrival, leaving */
};

/* The reads that took most of a process's file I/O time in the window: the
 * size asked for most (by time) and the directory read most (by time). */
struct ft_read_shape {
	uint64_t req;             /* bytes asked for (0: no file reads) */
	uint64_t req_ns, req_calls;   /* the time and calls of reads of that size */
	uint64_t io_ns, calls;    /* every file read's */
	char dir[256];            /* the directory read most, "" when unknown */
	uint64_t dir_ns;
};

/* which sentence says a process's verdict: verdict.c picks it with the
 * limit, words.c words it from the verdict's figures */
enum ft_say {
	FT_SAY_UNSET,
	FT_SAY_NOTHING,          /* no feeding thread */
	FT_SAY_NOGPU_RANKS,      /* no GPU work: waits in collectives */
	FT_SAY_NOGPU_PHASES,     /* no GPU work: the loop's phases decide (phases.c) */
	FT_SAY_NOGPU_DATA,
	FT_SAY_NOGPU_LOCKS,
	FT_SAY_NOGPU_NONE,       /* no GPU work, the feed keeps up */
	FT_SAY_LOCK_TURNS,       /* launching threads take turns on a lock */
	FT_SAY_STREAM_SYNCS,     /* streams idle behind syncs, the device busy */
	FT_SAY_GPU_BUSY,         /* GPU-bound by its idle time */
	FT_SAY_GPU_IDLE,         /* a feed by the streams' idle time (said_share) */
	FT_SAY_GPU_WAIT,         /* GPU-bound by the feeding threads' time */
	FT_SAY_DATA,             /* the rest: by the feeding threads' time */
	FT_SAY_SYNC,
	FT_SAY_LOCKS,
	FT_SAY_RANKS,
	FT_SAY_SUBMISSION,
};

struct ft_verdict {
	int nfeeders;
	int32_t feeder[8];        /* the GPU-feeding threads (first 8) */
	int by_launch;            /* feeders chosen because they launch kernels */
	uint64_t wall_ns;         /* summed over the feeders */
	uint64_t t[FT_CAT_N];     /* time per category, summed over the feeders */
	enum ft_limit limit;      /* UNSET: no verdict */
	char sentence[384];       /* say, worded by the report (words.c) */
	enum ft_say say;
	double said_share;        /* GPU_IDLE, STREAM_SYNCS: the streams' idle share
	                             the decision stood on */
	/* the model (docs/ANALYSES.md, "The verdict") */
	enum ft_basis basis;
	uint64_t win_start, win_end;
	uint64_t first_launch, last_gpu_end;   /* 0: no launch */
	uint64_t loop_launch, launches_before; /* gpu.c: the loop's first launch after
	                                          an initialisation (0: none) */
	uint64_t first_step, last_step_end;    /* 0: no closed step */
	uint64_t warmup_steps, warmup_end;     /* leading warm-up steps (steps.h), the last one's end */
	int32_t batch_tid;                     /* steps from batches: the thread receiving them */
	uint64_t first_batch, last_batch, batches; /* data waits that returned data */
	uint64_t busy_ns, idle_ns;             /* the device, in the window: measured when
	                                          gpu_measured, else the model's */
	uint64_t model_busy_ns, model_idle_ns; /* the model's */
	uint64_t mbusy_ns, mcover_ns;          /* measured busy, in the part of the window
	                                          the timing samples cover (0: none) */
	uint64_t mdrain_ns;                    /* measured idle inside the waits that
	                                          drained the streams (counted busy) */
	int gpu_measured;                      /* the samples cover enough of the window
	                                          (FT_GPU_MEASURED): the GPU idle, its
	                                          split and the hidden syncs' cost stand
	                                          on them */
	uint64_t lock_union;                   /* some launching thread waits for a lock */
	uint64_t gil_ns;                       /* of t[FT_CAT_LOCK]: the GIL's waits */
	uint64_t idle_by_feed[FT_CAT_N];       /* idle_ns split by what the feeders did */
	uint64_t sidle[FT_CAT_N], sidle_den;   /* streams' idle by cause; streams' time */
	struct ft_thread_sum *ths; int nths;   /* every thread (malloc'd; ft_verdict_free) */
	struct ft_coll *colls; int ncolls;     /* its collectives (malloc'd; ft_verdict_free) */
	int32_t coll_rank, coll_world;         /* its gloo contexts' rank of world (0: none) */
	int32_t *forked; int nforked;          /* children it forked, in fork order (malloc'd) */
	struct ft_phases_sum *phases;          /* the loop's phases (phases.h; malloc'd; NULL: none) */
	struct ft_read_shape shape;            /* its file reads in the window, mostly */
	int32_t loop_tid;                      /* without launches: the loop's thread, the
	                                          one feeder (0: the threads that received
	                                          most batches) */
};
void ft_verdict_free(struct ft_verdict *v);

struct ft_an_sink {
	void (*finding)(void *arg, const struct ft_finding *f);
	void (*counter)(void *arg, int which, uint64_t ts, int64_t value);
	void *arg;
	/* the GPU model's busy interval of one stream (its key: gpu.c's), each
	 * stream's in time order (NULL: not wanted) */
	void (*gpu_busy)(void *arg, uint64_t stream, uint64_t start, uint64_t end);
};
enum { FT_CTR_LAUNCHES, FT_CTR_READ_BYTES, FT_CTR_READS, FT_CTR_OUTSTANDING, FT_CTR_N };
extern const char *const ft_ctr_name[FT_CTR_N];

struct ft_an;
struct ft_an *ft_an_new(const struct ft_process *p, const struct ft_an_opts *o,
			const struct ft_an_sink *sink);
/* A call that blocks its thread in a collective (a gloo collective). */
struct ft_span { uint64_t start, end; int32_t tid; };
/* The process's blocking collectives (any order; copied), before its
 * events: a wait for a condition or semaphore by another thread that lies
 * at least half within them counts as a wait for other ranks, and the
 * collectives' threads (communication workers) receive no batches. */
void ft_an_blocking(struct ft_an *a, const struct ft_span *s, int n);
/* events in start-time order (ft_merge_events) */
void ft_an_event(struct ft_an *a, const struct ft_event *ev);
/* flushes open windows and grouped findings to the sink, computes the verdict */
void ft_an_finish(struct ft_an *a, struct ft_metrics *m, struct ft_verdict *v);
void ft_an_free(struct ft_an *a);

/* Per-record facts the converter needs as well. */
struct ft_evinfo {
	int cat;                  /* enum ft_cat */
	int cuda;                 /* a CUDA record: sync and stream are valid */
	unsigned sync;
	uint64_t stream;
	int launch;               /* a kernel (or graph) launch */
	int read;                 /* a read-kind call */
};
void ft_an_info(const struct ft_rec *r, struct ft_evinfo *out);
/* what roles.c needs of a record: a kernel launch, a data wait that
 * returned data (a batch received; the GIL's waits not told apart) */
void ft_an_role_count(const struct ft_rec *r, uint64_t *launches, uint64_t *batches);
/* the child a fork record made (its pid), 0 for any other record */
int32_t ft_an_forked(const struct ft_rec *r);
/* ft_an_event(), also handing back ft_an_info() of the event (computed
 * once for both). */
void ft_an_event_info(struct ft_an *a, const struct ft_event *ev, struct ft_evinfo *in);

#endif
