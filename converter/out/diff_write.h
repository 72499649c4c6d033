/*
 * diff_write.h: `feedtrace diff` (diff_write.c): decide the comparison
 * (diff.h), then write what the command line (cmd_diff.c) asked for.
 */
#ifndef FT_DIFF_WRITE_H
#define FT_DIFF_WRITE_H

#include "diff.h"

/* prints the comparison; the command's exit status (0, 1: a condition
 * holds or an output failed, 2: bad input) */
int ft_diff(const struct ft_diff_args *args);

#endif
