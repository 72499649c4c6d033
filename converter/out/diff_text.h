/*
 * diff_text.h: `feedtrace diff`'s text (diff_text.c), written from the
 * figures the model of the comparison decided (diff.h).
 */
#ifndef FT_DIFF_TEXT_H
#define FT_DIFF_TEXT_H

#include "diff.h"

/* the comparison d as text on stdout */
void ft_diff_text(const struct ft_diff_figures *d);

#endif
