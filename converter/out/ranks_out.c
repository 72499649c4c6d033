/*
 * ranks_out.c: a job's ranks as the report and `feedtrace ranks` print them
 * (ranks.h): the "Ranks:" block of the text, with the straggler or that
 * there is none and a row per rank, and the "ranks" object of the JSON
 * (docs/REPORT-SCHEMA.md). One writer for both commands, so a merge of
 * summaries and a report of one directory say the same in the same words.
 */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "ranks.h"
#include "util.h"

#define TEXT_ROWS 16               /* ranks listed in the text; all in JSON */

void ft_ranks_text(const struct ft_ranks *rk, FILE *out, const char *then)
{
	char a[48], b[48], c[48], line[480];
	if (!rk->n)
		return;
	int n = snprintf(line, sizeof line, "%d of %d with collectives, %llu matched on %d "
			 "communicator%s", rk->n, rk->world, (unsigned long long)rk->matched,
			 rk->comms, rk->comms == 1 ? "" : "s");
	if (rk->stride > 1)
		snprintf(line + n, sizeof line - (size_t)n, " (every %u%s of each, as the "
			 "summaries keep them)", rk->stride, rk->stride == 2 ? "nd" : "th");
	fputs("Ranks:", out);
	ft_wrap_from(out, line, 7, 7 + 1);
	if (rk->nhosts > 1) {
		uint64_t worst = 0;
		for (int h = 1; h < rk->nhosts; h++)
			if (rk->hosts[h].err_ns > worst)
				worst = rk->hosts[h].err_ns;
		ft_fmt_ns(a, sizeof a, worst);
		if (rk->refined)
			snprintf(line, sizeof line, "clocks: %d hosts, on %.40s's clock: wall clocks "
				 "corrected by the collectives the ranks leave together (residual %s "
				 "at most)", rk->nhosts, rk->hosts[0].name, a);
		else
			snprintf(line, sizeof line, "clocks: %d hosts, on %.40s's clock by their wall "
				 "clocks only (the collectives do not block: the clocks' own error "
				 "stays)", rk->nhosts, rk->hosts[0].name);
		ft_wrap(out, line, 2);
	}
	if (!rk->matched) {
		ft_wrap(out, "no collective was reached by every rank: nothing to compare", 2);
		fputc('\n', out);
		return;
	}
	if (rk->straggler >= 0) {
		const struct ft_rank_sum *x = &rk->r[rk->straggler];
		uint64_t all_waited = 0;
		for (int j = 0; j < rk->n; j++)
			all_waited += rk->r[j].waited_ns;
		ft_fmt_ns(a, sizeof a, (uint64_t)x->late_ns);
		ft_fmt_ns(b, sizeof b, x->waited_ns);
		snprintf(line, sizeof line, "rank %d/%d (pid %d%s%.40s) is the straggler: it arrived "
			 "last at %llu of %llu collectives (%.0f%%), %s after the ranks' median; the "
			 "other ranks waited %s%s for it in all (%.0f%% of their waiting).%s%s",
			 x->rank, rk->world, x->pid, rk->nhosts > 1 ? " on " : "",
			 rk->nhosts > 1 ? rk->hosts[x->host].name : "", (unsigned long long)x->last,
			 (unsigned long long)rk->matched,
			 100.0 * (double)x->last / (double)rk->matched, a, rk->stride > 1 ? "~" : "",
			 b, 100.0 * (double)x->waited_ns / (double)(all_waited ? all_waited : 1),
			 then ? " " : "", ft_txt(then));
	} else {
		uint64_t most = 0;
		for (int j = 0; j < rk->n; j++)
			if (rk->r[j].last > most)
				most = rk->r[j].last;
		ft_fmt_ns(a, sizeof a, rk->spread_ns);
		snprintf(line, sizeof line, "no straggler: the ranks arrive within %s of each other "
			 "(median), none arrived last at more than %llu of the %llu collectives, "
			 "and none made most of the others' waiting.",
			 a, (unsigned long long)most, (unsigned long long)rk->matched);
	}
	ft_wrap(out, line, 2);
	fprintf(out, "  %5s %7s %6s %11s %13s %11s %s\n", "rank", "pid", "last", "late median",
		"others waited", "step median", "own verdict");
	for (int j = 0; j < rk->n && j < TEXT_ROWS; j++) {
		const struct ft_rank_sum *x = &rk->r[j];
		ft_fmt_ns(a, sizeof a, (uint64_t)(x->late_ns < 0 ? -x->late_ns : x->late_ns));
		ft_fmt_ns(b, sizeof b, x->waited_ns);
		if (x->step_median_ns)
			ft_fmt_ns(c, sizeof c, x->step_median_ns);
		else
			strcpy(c, "-");
		char late[56];
		snprintf(late, sizeof late, "%s%s", x->late_ns < 0 ? "-" : "", a);
		char own[64];
		if (rk->straggler >= 0 && j != rk->straggler)   /* it waits for the straggler */
			snprintf(own, sizeof own, "waits for %d", rk->r[rk->straggler].rank);
		else
			snprintf(own, sizeof own, "%s", x->limit ? x->limit : "?");
		fprintf(out, "  %5d %7d %6llu %11s %13s %11s %s\n", x->rank, x->pid,
			(unsigned long long)x->last, late, b, c, own);
	}
	if (rk->n > TEXT_ROWS)
		fprintf(out, "  (%d more ranks in --json)\n", rk->n - TEXT_ROWS);
	fputc('\n', out);
}

void ft_ranks_json(struct ft_json *j, const struct ft_ranks *rk)
{
	if (!rk->n) {
		ft_json_null(j, "ranks");
		return;
	}
	ft_json_obj(j, "ranks");
	ft_json_int(j, "world", rk->world);
	ft_json_int(j, "ranks", rk->n);
	ft_json_int(j, "communicators", rk->comms);
	ft_json_u64(j, "matched", rk->matched);
	ft_json_u64(j, "sampled_every", rk->stride);
	ft_json_u64(j, "spread_median_ns", rk->spread_ns);
	ft_json_u64(j, "interval_median_ns", rk->interval_ns);
	if (rk->straggler >= 0)
		ft_json_int(j, "straggler", rk->r[rk->straggler].rank);
	else
		ft_json_null(j, "straggler");
	ft_json_bool(j, "clocks_refined", rk->refined);
	ft_json_arr(j, "hosts");
	for (int h = 0; h < rk->nhosts; h++) {
		const struct ft_rank_host *x = &rk->hosts[h];
		ft_json_obj(j, NULL);
		ft_json_str(j, "host", ft_txt(x->name));
		ft_json_int(j, "ranks", x->ranks);
		ft_json_int(j, "wall_offset_ns", x->wall_ns);
		ft_json_int(j, "correction_ns", x->fix_ns);
		ft_json_u64(j, "residual_ns", x->err_ns);
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_json_arr(j, "per_rank");
	for (int i = 0; i < rk->n; i++) {
		const struct ft_rank_sum *x = &rk->r[i];
		ft_json_obj(j, NULL);
		ft_json_int(j, "rank", x->rank);
		ft_json_int(j, "pid", x->pid);
		ft_json_str(j, "host", ft_txt(rk->hosts[x->host].name));
		ft_json_u64(j, "collectives", x->colls);
		ft_json_u64(j, "last", x->last);
		ft_json_int(j, "late_median_ns", x->late_ns);
		ft_json_u64(j, "others_waited_ns", x->waited_ns);
		if (x->step_median_ns)
			ft_json_u64(j, "step_median_ns", x->step_median_ns);
		else
			ft_json_null(j, "step_median_ns");
		ft_json_str(j, "limit", x->limit);
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_json_end(j);
}
