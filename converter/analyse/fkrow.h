/*
 * fkrow.h: one row of the Problems (struct ft_problem): problems.c
 * (model/) makes the rows of a run, a finding kind's ops (fkind.h:
 * describe, row_identity) fill and read a row of their kind. Only the
 * type, below both.
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

#endif
