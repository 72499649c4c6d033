/*
 * problems.h: the report's findings as a user reads them (problems.c):
 * one row per problem, never per occurrence, ranked by what it cost the
 * feed, each with one suggestion (docs/ANALYSES.md, "Problems").
 */
#ifndef FT_PROBLEMS_H
#define FT_PROBLEMS_H

#include <stdint.h>

#include "analysis.h"
#include "fkind.h"

struct ft_report;

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

/* what a row is ranked by: what the feeding threads lost to it where that
 * is known (feed_ns), else its cost (lost_ns) */
uint64_t ft_problem_rank_ns(const struct ft_problem *p);



/* The problems of a built report, largest first: *out malloc'd (free it);
 * returns how many. */
int ft_problems(const struct ft_report *r, struct ft_problem **out);
/* finding i is a launch gap that ft_problems leaves out because work was
 * still queued on its stream while its process's verdict says the GPU is
 * the limit (docs/ANALYSES.md, "Findings") */
int ft_gap_queued(const struct ft_report *r, int i);
/* finding i is a launch gap of the main process that ends before the
 * verdict's window starts: start-up, no row of its own */
int ft_gap_startup(const struct ft_report *r, int i);


#endif
