/*
 * ranks.h: which rank starves a job (ranks.c, docs/ANALYSES.md, "Ranks"):
 * the collectives of each rank's main process matched across the ranks
 * (the k-th of a communicator with the k-th), each rank's arrival against
 * the last one's, and the straggler, when one rank arrives last at most of
 * them and makes the others wait. Ranks on several hosts are put on the
 * first one's clock: their wall clocks' offsets, refined from collectives
 * they leave together.
 */
#ifndef FT_RANKS_H
#define FT_RANKS_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"

struct ft_rank_sum {
	int proc;                 /* index of the rank's main process */
	int32_t pid, rank;
	int host;                 /* index into hosts */
	uint64_t colls;           /* its collectives */
	uint64_t last;            /* matched collectives it arrived at last */
	int64_t late_ns;          /* median of its arrival minus the others' median arrival */
	uint64_t waited_ns;       /* the others' waiting for it, where it came last */
	/* filled by the caller, for the table: its main process's own verdict */
	const char *limit;        /* ft_verdict's limit; NULL: unknown */
	uint64_t step_median_ns;  /* 0: no steps */
};

/* A host of the job: its ranks' clock against the first rank's host. */
struct ft_rank_host {
	const char *name;
	int ranks;
	int64_t wall_ns;          /* the offset its wall clock gives (realtime - monotonic,
	                             against the reference host's) */
	int64_t fix_ns;           /* the correction the collectives give to that */
	uint64_t err_ns;          /* their residual: median deviation from fix_ns */
};

struct ft_ranks {
	int n;                    /* ranks with collectives (0: no cross-rank report) */
	int32_t world;
	struct ft_rank_sum *r;    /* by rank */
	uint64_t matched;         /* collectives matched across all ranks */
	int comms;                /* communicators */
	uint64_t spread_ns;       /* median of last minus first arrival */
	uint64_t interval_ns;     /* median time between matched collectives */
	int straggler;            /* index into r, -1: none */
	struct ft_rank_host *hosts;   /* the reference host (the lowest rank's) first */
	int nhosts;
	int refined;              /* 1: clocks refined from collectives the ranks leave
	                             together (blocking ones); 0: wall clocks only */
	unsigned stride;          /* every stride-th collective of a communicator was
	                             matched (summaries keep a sample: ranksum.c); 1: all */
};

/* One process as ranks.c needs it. */
struct ft_rank_in {
	int32_t pid, rank, world;
	const char *host;         /* the header's host name */
	int64_t wall_ns;          /* its start's realtime minus monotonic */
	const struct ft_coll *colls;  /* per communicator in call order: its 0th,
	                                 stride-th, 2*stride-th... collective */
	int ncolls;
	uint64_t total;           /* its collectives, sampled or not */
	unsigned stride;          /* a power of two; 0 or 1: every collective */
};

/* The ranks of n processes (those without a rank of a world of 2 or more,
 * or without collectives, are left out). */
void ft_ranks_build(struct ft_ranks *rk, const struct ft_rank_in *p, int n);
void ft_ranks_free(struct ft_ranks *rk);

/* The "Ranks:" block of a text report (then: a sentence after the
 * straggler's line, or NULL), and the JSON "ranks" object (ranks_out.c). */
struct ft_json;
void ft_ranks_text(const struct ft_ranks *rk, FILE *out, const char *then);
void ft_ranks_json(struct ft_json *j, const struct ft_ranks *rk);

#endif
