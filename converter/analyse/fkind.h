/*
 * fkind.h: one place per finding kind. Each kind of finding (enum
 * ft_fkind, fkinds.def) has one `const struct ft_fkind_ops` in a file of
 * its own (fk_NAME.c): its names, its suggestion, its cost, its line of
 * evidence, its members in the report's JSON, its timeline arguments
 * and counter, its identity across runs (diff), its call-site row, its
 * Problems row, the findings that have no row (folded), the rows it
 * makes across processes (extra_rows), its line after the Problems
 * (summary) and how many of its findings a report keeps (cap). fkind.c
 * lists them (ft_fkinds, from fkinds.def) and dispatches; the report, the
 * Problems, the timeline, diff and the HTML page index that table. A kind
 * is named outside its file only by the analysis that makes it.
 *
 * A new kind: a file with its ops, one line in fkinds.def, and the
 * analysis that finds it (an existing analysis handing it to the sink, or
 * the kind's own `emit`, which runs after the analyses' finishes).
 */
#ifndef FT_FKIND_H
#define FT_FKIND_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

struct ft_json;
struct pf_arg;
struct ft_problem;
struct ft_an_ctx;
struct ft_rowctx;
struct ft_rows;

/* most timeline arguments one kind's `args` writes (the suggestion and a
 * burst's two come after them) */
#define FT_FK_MAX_ARGS 44
#define FT_FK_MAX_KEYS 16         /* and of names it makes up (key[]) */

enum {
	FT_FKF_BURSTS = 1,        /* one timeline slice per burst of its occurrences
	                             (f->bursts), not one over its extent */
	FT_FKF_COVER = 2,         /* a Problems row costs the wall time its findings
	                             covered (f->cov), not their sum */
	FT_FKF_COVER_WAITS = 4,   /* that time is waits (the feeding threads' lock
	                             waits count), not reads */
	FT_FKF_OCCURRENCES = 8,   /* diff counts its occurrences (f->count), not its
	                             findings */
};

struct ft_fkind_ops {
	const char *key;          /* report JSON's "kind": "launch_gap" */
	const char *slice;        /* a timeline slice: "launch gap" */
	const char *track;        /* its process's timeline track: "launch gaps" */
	const char *row;          /* a Problems row's kind: "launch gaps" */
	unsigned flags;           /* FT_FKF_* */
	/* one suggestion, whatever process it is in (the timeline's) */
	const char *(*suggestion)(const struct ft_finding *f);
	/* the suggestion fitted to the run (report rows, --json), worker: f's
	 * process is a worker (roles.c: FT_ROLE_WORKER); NULL: suggestion */
	const char *(*advice)(const struct ft_finding *f, int worker);
	/* what it cost the feed, v its process's verdict (NULL: none known);
	 * NULL: f->lost_ns */
	uint64_t (*cost)(const struct ft_verdict *v, const struct ft_finding *f);
	/* one line of evidence (a Problems row of one finding) */
	void (*label)(const struct ft_finding *f, char *buf, size_t cap);
	/* its own members of a report JSON finding (docs/REPORT-SCHEMA.md),
	 * between "lost_ns" and "suggestion" */
	void (*json)(struct ft_json *j, const struct ft_finding *f);
	/* its timeline arguments into a[] (at most FT_FK_MAX_ARGS; key[] for
	 * names made up on the way); returns how many */
	int (*args)(const struct ft_finding *f, struct pf_arg *a, char (*key)[32]);
	/* the timeline counter its bins (f->nbins) go on, per process: its
	 * name; NULL: none */
	void (*counter)(const struct ft_finding *f, char *name, size_t cap);
	/* diff: what two runs' findings are matched by; NULL: by their
	 * Problems row (row_identity) */
	void (*identity)(const struct ft_finding *f, char *t, size_t cap);
	void (*row_identity)(const struct ft_problem *p, char *t, size_t cap);
	/* its row under "Top call sites" (text) without the counts; NULL: it has
	 * no call site (nor a row in the JSON's call_sites and HTML's table) */
	void (*site)(const struct ft_finding *f, char *line, size_t cap);
	/* Problems (problems.c): findings a and b of this kind make one row;
	 * NULL: each finding is a row of its own */
	int (*same_row)(const struct ft_finding *a, const struct ft_finding *b);
	/* a row's line (p->what) and totals from its findings f[m[0..nm)], v
	 * the first one's process verdict (NULL: none); NULL: its label */
	void (*describe)(const struct ft_verdict *v, const struct ft_finding *f,
			 const int *m, int nm, struct ft_problem *p);
	/* the end of a row whose cost is the wall time its findings covered
	 * (FT_FKF_COVER): appended to p->what once problems.c set p->lost_ns
	 * (that time), p->summed_ns, p->nprocs and p->feed_ns; threads: the
	 * first finding's threads; nfeeders: the main process's feeding
	 * threads; NULL: nothing appended */
	void (*wall)(struct ft_problem *p, int threads, int nfeeders);
	/* the analysis that finds it, when no other does: runs after the
	 * analyses' finishes, hands its findings to c->sink; NULL: none */
	void (*emit)(struct ft_an_ctx *c);
	/* Problems: finding c->f[i] (of this kind) makes no row, its time
	 * being another row's or none the run could gain; NULL: never */
	int (*folded)(const struct ft_rowctx *c, int i);
	/* Problems: the rows of this kind that no finding makes alone (across
	 * processes: c->cand), after the findings' rows, which are in rows
	 * and which it may add to; NULL: none */
	void (*extra_rows)(const struct ft_rowctx *c, struct ft_rows *rows);
	/* the text report's line on all of this kind's findings, after the
	 * Problems, into line (total: the run's metrics); returns 0 for none;
	 * NULL: none */
	int (*summary)(const struct ft_rowctx *c, const struct ft_metrics *total, char *line,
		       size_t cap);
	/* the report keeps at most FT_REPORT_MAX_GAPS of the findings whose
	 * kind caps them (report_model.c), all counted: FT_CAP_*; NULL: none */
	int (*cap)(const struct ft_finding *f);
};

enum {
	FT_CAP_NONE,              /* kept */
	FT_CAP_LONGEST,           /* past the cap: replaces the shortest kept one of
	                             its kind and FT_CAP_LONGEST, if longer */
	FT_CAP_DROP,              /* past the cap: left out */
};

/* every kind's, indexed by enum ft_fkind */
extern const struct ft_fkind_ops *const ft_fkinds[FT_FK_N];
#define FKIND(name, ops) extern const struct ft_fkind_ops ops;
#include "fkinds.def"
#undef FKIND

static inline const struct ft_fkind_ops *ft_fkind(const struct ft_finding *f)
{
	return ft_fkinds[f->kind];
}

/* One suggestion for a finding, whatever process it is in (the timeline's). */
const char *ft_finding_suggestion(const struct ft_finding *f);
/* (fitted to the run it is in, and what it cost the feed there:
 * ft_finding_advice, ft_finding_cost, problems.h) */
/* one line of evidence for a finding */
void ft_finding_label(const struct ft_finding *f, char *buf, size_t cap);
/* The end of a row of covered time (rowfeed.c, for the kinds' wall):
 * "; 3.1 s of WHAT in IN, over 1.2 s of the run" when p->lost_ns (the
 * time covered) is under p->summed_ns, then "; the feeding threads
 * waited 0.4 s of it" when p->feed_known */
void ft_row_wall(struct ft_problem *p, const char *what, const char *in, int nfeeders);
/* The launch-bound row's kind, line and suggestion (fk_gap.c: the gaps
 * it folds in are that kind's): launches by the feeding threads, steps
 * (0: none marked), the main process's verdict v. */
void ft_launch_bound_words(struct ft_problem *p, const struct ft_verdict *v,
			  uint64_t launches, uint64_t steps);
/* The innermost frame of a call site, for 80 columns: a Python frame
 * ("dir/file.py:57 in step") without its directory; *n is its length
 * (sitebrief.c). */
const char *ft_site_brief(const char *site, int *n);

#endif
