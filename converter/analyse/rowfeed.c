/*
 * rowfeed.c: the end of a Problems row whose cost is covered wall time
 * (a storm's, a lock's: their kinds' wall, fkind.h): what the feeding
 * threads waited of it. Apart from fkind.c, which lists the kinds.
 */
#include <stdio.h>

#include "fkind.h"
#include "fkrow.h"
#include "util.h"

void ft_row_feed_words(const struct ft_problem *p, int nfeeders, char *buf, size_t cap)
{
	*buf = 0;
	if (!p->feed_known)
		return;
	char x[32];
	ft_fmt_ns(x, sizeof x, p->feed_ns);
	snprintf(buf, cap, "; the feeding thread%s waited %s of it", nfeeders > 1 ? "s" : "", x);
}
