/*
 * diff_json.h: `feedtrace diff --json` (diff_json.c) written from the
 * figures the model of the comparison (diff.c, diff.h) decided: plain
 * values, no run loaded here. The schema is docs/REPORT-SCHEMA.md's
 * "feedtrace-diff/1".
 */
#ifndef FT_DIFF_JSON_H
#define FT_DIFF_JSON_H

#include <stdio.h>

#include "diff.h"

/* the figures as one JSON object and a newline on out */
void ft_diff_json(const struct ft_diff_figures *d, FILE *out);

#endif
