/*
 * gate_out.h: `--fail-if` conditions (gate.h decides them) worded and
 * written (gate_out.c): an error's line, the results as lines, as JSON
 * and as a JUnit XML file for CI systems (docs/ANALYSES.md, "CI gate").
 */
#ifndef FT_GATE_OUT_H
#define FT_GATE_OUT_H

#include <stdio.h>

#include "gate.h"

/* 0 when e is FT_GATE_OK; else e's line about g on err (exit 2) and -1 */
int ft_gate_error(const struct ft_gate *g, enum ft_gate_err e, FILE *err);
/* one line per condition on out ("FAIL ...", "ok ...") */
void ft_gate_print(const struct ft_gate *g, int n, FILE *out);
/* 0, or -1 (message on stderr) */
int ft_gate_junit(const struct ft_gate *g, int n, const char *suite, const char *path);
struct ft_json;
/* the conditions under key, as a JSON array */
void ft_gate_json(const struct ft_gate *g, int n, struct ft_json *j, const char *key);

#endif
