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
	struct ft_progress *progress;   /* the progress line (cli.h), or NULL */
	const char *label;       /* prefix of process names ("before: "), or NULL */
	int64_t ts_shift;        /* added to every timestamp */
	int32_t pid_add;         /* added to every pid and tid (two runs in one trace) */
	int threads;             /* 1 or 2 (pipeline.c); 0: ft_pipe_default_threads() */
};

struct ft_conv_stats {
	uint64_t events, slices, findings, flows, dropped, late, lane_overflow;
	size_t peak_bytes;
};

/* Writes the clock snapshot for tr (once per output, before any event). */
void ft_conv_clock(pf_writer *w, const struct ft_trace *tr);
/* Converts every process of tr into w. */
void ft_conv_trace(pf_writer *w, struct ft_trace *tr, const struct ft_conv_opts *o,
		   FILE *err, struct ft_conv_stats *st);
int ft_cmd_convert(int argc, char **argv);

/* An output file that appears whole or not at all (convert.c): a regular
 * file is written as a temporary beside the target and renamed over it;
 * a device or FIFO is written directly; a symbolic link is refused. cmd
 * names the command in messages. */
struct ft_outfile {
	const char *target, *cmd;
	char tmp[4096];                  /* "" when written directly */
	char via[64];                    /* the path pf_open opens */
	int fd;
};
int ft_out_open(struct ft_outfile *o, const char *target, const char *cmd);
const char *ft_out_path(const struct ft_outfile *o);
int ft_out_close(struct ft_outfile *o, int ok);        /* ok: complete; 0 when in place */

#endif
