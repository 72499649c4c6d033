/*
 * rankpick.h: `convert --ranks LIST` (rankpick.c): the processes of the
 * chosen ranks kept (their DataLoader workers share their rank), the others
 * closed, and each host's times put on the clock of the lowest chosen
 * rank's host, as the report compares them (ranks.c).
 */
#ifndef FT_RANKPICK_H
#define FT_RANKPICK_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "merge.h"
#include "reader.h"

/* list: "0,5,17" or ranges "0-3,8". Keeps the chosen ranks' processes of
 * tr (of one launcher job, unless mixed); *shift (malloc'd, one per kept process) is what moves each onto the
 * reference host's clock (0 on that host). -1 with one line on err when
 * the list is bad or names no rank of tr. */
int ft_rank_pick(struct ft_trace *tr, const char *list, int mixed, const struct ft_an_opts *o,
		 const struct ft_merge_opts *mg, int64_t **shift, FILE *err);

#endif
