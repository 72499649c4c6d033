/*
 * convert.h: a trace directory into a Perfetto timeline (convert.c): raw
 * calls as slices, syncs on their own tracks, per-ms counters, findings and
 * flows from hidden syncs to the submission they waited on.
 */
#ifndef FT_CONVERT_H
#define FT_CONVERT_H

#include <stdio.h>

#include "analysis.h"
#include "merge.h"
#include "pftrace.h"
#include "reader.h"

struct ft_progress;

struct ft_conv_opts {
	struct ft_an_opts an;
	struct ft_merge_opts mg;
	struct ft_progress *progress;   /* the progress line (progress.h), or NULL */
	const char *label;       /* prefix of process names ("before: "), or NULL */
	int64_t ts_shift;        /* added to every timestamp */
	const int64_t *proc_shift;  /* and per process (convert --ranks: rankpick.h), or NULL */
	int32_t pid_add;         /* added to every pid and tid (two runs in one trace) */
	int threads;             /* 1 or 2 (pipeline.c); 0: ft_pipe_default_threads() */
};

/* overlapping slices drawn on one thread at most (lanes); more are left out */
#define FT_CONV_MAX_LANES 32

struct ft_conv_stats {
	uint64_t events, slices, findings, flows, dropped, late, lane_overflow;
	size_t peak_bytes;
};

/* Writes the clock snapshot for tr (once per output, before any event). */
void ft_conv_clock(struct pf_writer *w, const struct ft_trace *tr);
/* Converts every process of tr into w. */
void ft_conv_trace(struct pf_writer *w, struct ft_trace *tr, const struct ft_conv_opts *o,
		   FILE *err, struct ft_conv_stats *st);

#endif
