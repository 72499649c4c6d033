/*
 * pipeline.h: the converter's two stages (pipeline.c). Stage 1 (the
 * caller: reading, merging, analyses) describes the Perfetto output as
 * commands; stage 2, a second thread, encodes them with pftrace.c in the
 * same order, so the file is byte for byte what one thread would write.
 * With one thread the commands run at once, on the caller's thread.
 */
#ifndef FT_PIPELINE_H
#define FT_PIPELINE_H

#include <stdint.h>

#include "pftrace.h"
#include "reader.h"

/* The largest record a call command carries (longer ones are cut). */
#define FT_PIPE_REC_MAX (8 * FT_SLOT_SIZE)

/* A traced call to draw as one slice: filled by stage 1, drawn by the
 * callback (ft_pipe_new's call_fn) in stage 2. rec is a copy; p's string
 * tables are read-only while events stream (reader.c builds them when the
 * trace is opened), so the callback may look strings up in them. */
struct ft_pipe_call {
	uint64_t track, ts, end;     /* track: its id; timestamps already shifted */
	uint64_t flow;               /* 0: none */
	int terminating;
	uint64_t flow2;              /* 0: none; a second flow it starts (its kernel's) */
	int gpu;                     /* nonzero: the call's work as measured on the
	                                GPU, not the call (convert.c) */
	const struct ft_process *p;
	const struct ft_rec *rec;
};

typedef void (*ft_pipe_call_fn)(struct pf_writer *w, const struct ft_pipe_call *c);

struct ft_pipe;

/* threads: 1 runs everything on the caller's thread, 2 starts stage 2. */
struct ft_pipe *ft_pipe_new(struct pf_writer *w, int threads, ft_pipe_call_fn call_fn);
/* Waits for stage 2 to write everything, then frees the pipeline. */
void ft_pipe_finish(struct ft_pipe *pl);
/* The default number of threads: 2, or 1 when this process may run on a
 * single CPU only (one online, or an affinity mask of one). */
int ft_pipe_default_threads(void);

/* As pftrace.h's functions of the same names: tracks and flows are named
 * by the caller's ids (pf_id), nothing comes back; strings are copied (the
 * caller's buffers may be reused). */
/* The kinds of the converter's track and flow ids: pf_id(kind, parent's
 * id or what tells them apart, ...) (convert.c, ranges.c). */
enum {
	FT_ID_PROCESS = 1,  /* pf_id(., pid, index of the process in the run) */
	FT_ID_THREAD,       /* pf_id(., process, tid) */
	FT_ID_LANE,         /* | lane << 8: pf_id(., process, hash of the name) */
	FT_ID_COUNTER,      /* pf_id(., process, enum FT_CTR_*) */
	FT_ID_CPU,          /* pf_id(., thread, 0: CPU %, 1: waiting for a core %) */
	FT_ID_DATASET,      /* pf_id(., process, data set) */
	FT_ID_RANGES,       /* pf_id(., process, lane) */
	FT_ID_FLOW,         /* pf_id(., process, flow number in the run) */
	FT_ID_GPU_STREAM,   /* pf_id(., process, stream key): measured busy (gpu_measured.c) */
	FT_ID_GPU_MODEL,    /* pf_id(., process, stream key): the model's busy (gpu.c) */
};
void ft_pipe_process_track(struct ft_pipe *pl, uint64_t id, int32_t pid, const char *name);
void ft_pipe_thread_track(struct ft_pipe *pl, uint64_t id, int32_t pid, int64_t tid,
			  const char *name);
void ft_pipe_child_track(struct ft_pipe *pl, uint64_t id, uint64_t parent, const char *name);
void ft_pipe_counter_track(struct ft_pipe *pl, uint64_t id, uint64_t parent, const char *name,
			   int unit);
void ft_pipe_counter(struct ft_pipe *pl, uint64_t track, uint64_t ts, int64_t v);
void ft_pipe_slice(struct ft_pipe *pl, uint64_t track, uint64_t ts, uint64_t dur,
		   const char *name, const struct pf_arg *args, int nargs);
void ft_pipe_instant(struct ft_pipe *pl, uint64_t track, uint64_t ts,
		     const char *name, const struct pf_arg *args, int nargs);
/* A call slice: c->rec (nslots slots, at most FT_PIPE_REC_MAX bytes) is copied. */
void ft_pipe_call(struct ft_pipe *pl, const struct ft_pipe_call *c);

#endif
