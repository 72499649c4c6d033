/*
 * report.h: a run's report: the model (report_model.h) built and worded
 * (ft_report_build: report_model.c decides, words.c words), printed as
 * 80-column text (report_text.c), as JSON (report_json.c,
 * docs/REPORT-SCHEMA.md) or as a page (html.c). diff.c compares two of them.
 */
#ifndef FT_REPORT_H
#define FT_REPORT_H

#include <stdio.h>

#include "report_model.h"

/* the model of the run in dir with its words; 0 on success; -1 when
 * nothing usable was found (messages on err) */
int ft_report_build(struct ft_report *r, const char *dir, const struct ft_an_opts *o,
		    const struct ft_merge_opts *mg, FILE *err);
void ft_report_text(const struct ft_report *r, FILE *out);
void ft_report_json(const struct ft_report *r, FILE *out);
/* `feedtrace run`: the text report of dir on out */
int ft_report_print(const char *dir, FILE *out);
/* report --html: one self-contained page (html.c); 0 on success */
int ft_report_html(struct ft_report *r, const char *path);
/* diff --html (html.c): one side of the diff, as its first run shows it */
struct ft_diff_side {
	const char *label;              /* "before", "after": also in ids and classes */
	int nruns;                      /* runs on this side */
	const struct ft_report *r;      /* its first run */
	const uint64_t *len;            /* that run's step times, in order */
	size_t nlen;                    /* 0: no steps (no chart) */
};
int ft_diff_html(const char *path, const struct ft_diff_side side[2], const char *conclusion);
#endif
