/*
 * rowfeed.c: the end of a Problems row whose cost is covered wall time
 * (a storm's, a lock's: their kinds' wall, fkind.h): the time summed and
 * the time covered, and what the feeding threads waited of it. Apart
 * from fkind.c, which lists the kinds.
 */
#include <stdio.h>
#include <string.h>

#include "fkind.h"
#include "fkrow.h"
#include "util.h"

void ft_row_wall(struct ft_problem *p, const char *what, const char *in, int nfeeders)
{
	char a[32], b[32], f[96] = "";
	if (p->feed_known) {
		char x[32];
		ft_fmt_ns(x, sizeof x, p->feed_ns);
		snprintf(f, sizeof f, "; the feeding thread%s waited %s of it",
			 nfeeders > 1 ? "s" : "", x);
	}
	size_t k = strlen(p->what);
	if (p->lost_ns >= p->summed_ns) {          /* no overlap: the sum is the time */
		snprintf(p->what + k, sizeof p->what - k, "%s", f);
		return;
	}
	ft_fmt_ns(a, sizeof a, p->summed_ns);
	ft_fmt_ns(b, sizeof b, p->lost_ns);
	snprintf(p->what + k, sizeof p->what - k, "; %s of %s in %s, over %s of the run%s", a,
		 what, in, b, f);
}
