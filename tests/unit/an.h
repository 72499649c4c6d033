/*
 * tests/unit/an.h: the harness of the C tests of the analyses
 * (tests/unit/an_*.c, run by tests/unit/test_analyses.py): a process made
 * in memory (ft_process_mem), its events built as records field by field
 * from events.def's names, run through ft_an_new/ft_an_event/ft_an_finish
 * in start-time order, the findings, metrics and verdict kept for exact
 * checks. No file is read or written. Each check that fails prints its
 * line and both values; the program exits 1 if any failed.
 */
#ifndef FT_TEST_AN_H
#define FT_TEST_AN_H

#include <stdint.h>

#include "analysis.h"

#define MS 1000000ull
#define US 1000ull
#define T0 1000000000000ull           /* the process's start */

/* a finding as the sink saw it; its arrays valid during that call are
 * not kept (bursts: their count only) */
#define AN_MAX_FINDINGS 64

struct an_item { struct ft_event ev; int seq; };  /* seq: the order given */

struct an_run {
	struct ft_process *p;
	struct an_item *ev;
	int n, cap;
	struct ft_an_opts o;              /* ft_an_default_opts() until changed */
	struct ft_finding f[AN_MAX_FINDINGS];
	int nf;
	struct ft_metrics m;
	struct ft_verdict v;
};

/* process pid running cmdline, started at T0 */
void an_init(struct an_run *r, int32_t pid, const char *cmdline);
/* An event of kind (FT_EV_*) on thread tid at ts for dur, its fields given
 * as name, value pairs ended by NULL, each value a uint64_t (cast it: it
 * is read as one); a field of type str takes a text through S(). An
 * unknown field name fails the program. */
void an_ev(struct an_run *r, int32_t tid, unsigned kind, uint64_t ts, uint64_t dur, ...);
/* the events in start-time order (stable) through the analyses */
void an_analyse(struct an_run *r);
void an_free(struct an_run *r);
/* the findings of one kind (enum ft_fkind), in the sink's order */
int an_count(const struct an_run *r, int kind);
const struct ft_finding *an_nth(const struct an_run *r, int kind, int i);

#define S(text) ((uint64_t)(uintptr_t)(text))

extern int an_failed;
void an_fail_u(const char *file, int line, const char *what, uint64_t got, uint64_t want);
void an_fail_s(const char *file, int line, const char *what, const char *got, const char *want);
#define EQ(got, want) do { uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want); \
	if (g_ != w_) an_fail_u(__FILE__, __LINE__, #got, g_, w_); } while (0)
#define STREQ(got, want) do { const char *g_ = (got), *w_ = (want); \
	if (!g_ || strcmp(g_, w_)) an_fail_s(__FILE__, __LINE__, #got, g_, w_); } while (0)
/* ends main: 0 when every check passed */
int an_done(const char *name);

#endif
