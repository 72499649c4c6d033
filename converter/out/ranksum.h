/*
 * ranksum.h: a rank's summary, the part of `report --json` that a merge of
 * many ranks needs (ranksum.c, docs/REPORT-SCHEMA.md "collectives"): per
 * process with a rank, its host, its wall clock's offset and its
 * collectives (arrival and duration; a sample of at most FT_RANKSUM_KEEP per
 * communicator, every stride-th, stride a power of two). `feedtrace ranks`
 * reads summaries back into ranks.h's input, so its memory grows with the
 * ranks, not with the events.
 */
#ifndef FT_RANKSUM_H
#define FT_RANKSUM_H

#include <stddef.h>
#include <stdio.h>

#include "analysis.h"
#include "ranks.h"
#include "reader.h"
#include "vfields.h"

#define FT_RANKSUM_KEEP 1024       /* collectives kept per communicator */

struct ft_json;
/* "collectives" of process p in a report's JSON: null without any */
void ft_ranksum_json(struct ft_json *j, const struct ft_process *p, const struct ft_coll *c,
		     int n, uint64_t step_median_ns);

/* What a summary says of one process with collectives, beside ranks.h's input. */
struct ft_ranksum_proc {
	const char *file;          /* the summary it came from */
	char *dir;                 /* the trace directory it summarises */
	char *job;                 /* the launcher's job id, "" */
	char *cmdline;
	/* verdict.def's rows read back (ranks 1): a P row from its own
	 * verdict, an R row from the run's when it was about this process
	 * (NULL: none) */
#define VERDICT(name, scope, type, key, expr, ranks, diff, dkey, label) \
	FT_VF_IF(ranks, char *name;)
#include "verdict.def"
#undef VERDICT
	uint64_t step_median_ns;
	/* the run verdict's process when it was about this one (about): its
	 * workers (pids; python: they and it run Python) and its loader
	 * threads among the producers, the parts words.c words it from */
	int about;
	int32_t *workers;
	int nworkers, python, nloaders;
};

/* Processes with collectives read from summaries: in[i] and meta[i]. */
struct ft_ranksums {
	struct ft_rank_in *in;
	struct ft_ranksum_proc *meta;
	int n, cap;
};

/* Adds the processes of the report JSON text (len bytes, from file name).
 * Returns how many, or -1 with one line on err naming the file and, for
 * text that is not JSON, the offset. */
int ft_ranksum_read(struct ft_ranksums *s, const char *name, const char *text, size_t len,
		    FILE *err);
void ft_ranksums_free(struct ft_ranksums *s);

#endif
