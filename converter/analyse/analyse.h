/*
 * analyse.h: one process through the analyses (analyse.c): its records
 * merged in time order (merge.c) into analysis.c, after a light first pass
 * when it may be a rank of a job: the spans its threads spend blocked in
 * collectives, so that its other threads' waits for those read as waits
 * for other ranks (docs/ANALYSES.md, "Ranks").
 */
#ifndef FT_ANALYSE_H
#define FT_ANALYSE_H

#include <stdio.h>

#include "analysis.h"
#include "merge.h"

/* p may have collectives that block their thread: it has a launcher's rank
 * identity, or it loaded libgloo (a job started without a launcher's
 * environment: torch.multiprocessing.spawn) */
int ft_may_block_in_collectives(const struct ft_process *p);

/* The calls of p that block their thread in a collective (gloo), in start
 * order (malloc'd; *out NULL when none); returns how many. What the reader
 * says of damage goes to err. */
int ft_coll_spans(struct ft_process *p, const struct ft_merge_opts *mg, FILE *err,
		  struct ft_span **out);

/* called with the events fed so far: the first, then every 65536 */
typedef void (*ft_analyse_tick)(void *arg, const struct ft_process *p, uint64_t events);

/* p analysed: its findings to sink (NULL: none), m and v; tick NULL: none.
 * A process without a launcher's rank identity whose gloo collectives
 * gave their context's rank and size takes them (launcher FT_LAUNCH_GLOO). */
void ft_analyse(struct ft_process *p, const struct ft_an_opts *o, const struct ft_merge_opts *mg,
		const struct ft_an_sink *sink, FILE *err, ft_analyse_tick tick, void *targ,
		struct ft_metrics *m, struct ft_verdict *v);

/* h is rank of world, as its gloo contexts say (no launcher's identity:
 * launcher FT_LAUNCH_GLOO, no local rank) */
void ft_take_gloo_identity(struct ft_file_header *h, int32_t rank, int32_t world);

#endif
