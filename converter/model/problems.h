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
#include "fkrow.h"

struct ft_report;

/* A finding's suggestion fitted to the process it is in (report rows,
 * --json's findings): a GIL wait inside a DataLoader worker is no reason
 * to move work into worker processes. */
const char *ft_finding_advice(const struct ft_report *r, const struct ft_finding *f);
/* What finding f cost the feed (problems' and diff's measure): a hidden
 * sync's device idle after it (gpu_idle_ns) when its process's verdict
 * stands on the GPU model (a sync that waited while the GPU had work cost
 * only the idle that followed), else its lost_ns */
uint64_t ft_finding_cost(const struct ft_report *r, const struct ft_finding *f);

/* what a row is ranked by: what the feeding threads lost to it where that
 * is known (feed_ns), else its cost (lost_ns) */
uint64_t ft_problem_rank_ns(const struct ft_problem *p);



/* The problems of a built report, largest first: *out malloc'd (free it);
 * returns how many. */
int ft_problems(const struct ft_report *r, struct ft_problem **out);
/* what a kind's passes across its findings see of report r (fkrow.h):
 * its launch_bound_pid -1 (ft_problems sets it) */
void ft_rowctx_of(const struct ft_report *r, struct ft_rowctx *c);


#endif
