/*
 * fkrow.h: one row of the Problems (struct ft_problem): problems.c
 * (model/) makes the rows of a run, a finding kind's ops (fkind.h:
 * describe, row_identity) fill and read a row of their kind; and what
 * its passes across findings and processes (folded, extra_rows) see of
 * the run (struct ft_rowctx), which problems.c fills. Only the types,
 * below both.
 */
#ifndef FT_FKROW_H
#define FT_FKROW_H

#include <stdint.h>

#include "analysis.h"

struct ft_problem {
	const char *kind;         /* "launch-bound", "launch gaps", "hidden sync",
	                             "small-read storm", "lock contention" */
	int fk;                   /* enum ft_fkind of its findings; -1: launch-bound */
	int32_t pid;              /* the first finding's process (launch-bound: main) */
	int nprocs;               /* processes its findings come from */
	uint64_t lost_ns;         /* summed over its findings; a storm's or a lock's:
	                             the wall time its reads or waits covered */
	uint64_t summed_ns;       /* storm, lock: its reads' or waits' time summed over
	                             threads and processes (0: other kinds) */
	uint64_t count;           /* findings merged into it (gaps, storms); 1 else */
	char what[400];           /* one line of evidence */
	const char *suggestion;
	int first;                /* index of its first finding in r->f; -1: none */
	/* a storm's data set and totals (what is written from them) */
	char dir[160];
	uint64_t reads, files, bytes, need;
	int under;                /* of its processes, those under the per-process threshold */
	const char *opener;       /* the Python site that opened most of its files, or NULL */
	uint64_t opener_reads;
	/* storm, lock: what the feeding threads lost to it (feed_known: the run
	 * has feeding threads): their waits for data and their own file I/O
	 * (a lock's: and lock waits) in the verdict's window while its reads
	 * or waits were in progress */
	uint64_t feed_ns;
	int feed_known;
	/* storm, lock: its findings, while ft_problems builds it (NULL after) */
	const struct ft_finding **mem;
	int nmem, capmem;
};

/* the rows of a run as problems.c makes them: p[0..n) */
struct ft_rows {
	struct ft_problem *p;
	int n, cap;
};

/* the run as a kind's passes across its findings see it (fkind.h:
 * folded, extra_rows); problems.c fills it from the report */
struct ft_rowctx {
	const struct ft_finding *f;   /* the report's findings, f[0..nf) */
	int nf;
	const struct ft_finding *cand;    /* storm candidates: bursts under the
	                                     per-process threshold, cand[0..ncand) */
	int ncand;
	uint32_t storm_reads;         /* the analyses' storm threshold */
	uint64_t storm_window_ns;
	int32_t main_pid;             /* the process the verdict is about; -1: none */
	enum ft_from from;            /* what the verdict's window starts from */
	uint64_t w0;                  /* and where it starts */
	int32_t launch_bound_pid;     /* the launch-bound row's process; -1: no such row */
	/* process pid's verdict, NULL when pid is none of the run's (run: the
	 * report it is asked of) */
	const struct ft_verdict *(*verdict)(const struct ft_rowctx *c, int32_t pid);
	const void *run;
	/* a new row in rows: zeroed but for first (-1), nprocs and count (1) */
	struct ft_problem *(*add)(struct ft_rows *rows);
	/* finding f joins row p's covered wall time (a kind of FT_FKF_COVER) */
	void (*join)(struct ft_problem *p, const struct ft_finding *f);
};

#endif
