/*
 * diff.h: runs before and after a change, compared (diff.c); the command
 * line that asks for it is cmd_diff.c's.
 */
#ifndef FT_DIFF_H
#define FT_DIFF_H

#include "analysis.h"
#include "gate.h"
#include "merge.h"

#define FT_DIFF_MAX_RUNS 32

struct ft_diff_args {
	/* before [0] and after [1]: run directories, or directories of them */
	const char *dirs[2][FT_DIFF_MAX_RUNS];
	int ndirs[2];
	struct ft_an_opts an;
	struct ft_merge_opts mg;
	int mixed;                       /* --mixed: runs of several ids */
	int json;
	const char *out, *junit, *html;  /* -o FILE.pftrace, --junit, --html, or NULL */
	struct ft_gate *gates;           /* --fail-if conditions */
	int ngates;
};

/* prints the comparison; the command's exit status (0, 1: a condition
 * holds or an output failed, 2: bad input) */
int ft_diff(const struct ft_diff_args *args);

#endif
