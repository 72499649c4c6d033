/*
 * rankpick.c: the processes of chosen ranks, on one clock (rankpick.h).
 * Ranks on one host share its monotonic clock and need nothing. With
 * several hosts, the chosen ranks' collectives are found by the same
 * analysis the report runs (colls.c), and ranks.c gives each host's
 * offset (wall clocks, refined from the collectives the ranks leave
 * together); every process of a host moves by its host's offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyse.h"
#include "rankpick.h"
#include "ranks.h"
#include "util.h"

#define MAX_RANK (1 << 24)

/* "0,5,17", "0-3,8" into a sorted list of ranks; -1 when malformed */
static int parse_list(const char *list, int32_t **out, int *n)
{
	int cap = 0;
	*out = NULL;
	*n = 0;
	const char *s = list;
	while (*s) {
		char *end;
		errno = 0;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || errno || a < 0 || a >= MAX_RANK)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || errno || b < a || b >= MAX_RANK || b - a > 65536)
				return -1;
			s = end;
		}
		for (long r = a; r <= b; r++) {
			if (*n == cap)
				FT_GROW(*out, cap, 8);
			(*out)[(*n)++] = (int32_t)r;
		}
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			return -1;
	}
	return *n ? 0 : -1;
}

static int chosen(const int32_t *v, int n, int32_t r)
{
	for (int i = 0; i < n; i++)
		if (v[i] == r)
			return 1;
	return 0;
}

int ft_rank_pick(struct ft_trace *tr, const char *list, int mixed, const struct ft_an_opts *o,
		 const struct ft_merge_opts *mg, int64_t **shift, FILE *err)
{
	int32_t *want;
	int nw;
	*shift = NULL;
	if (parse_list(list, &want, &nw) != 0) {
		fprintf(err, "feedtrace convert: --ranks: a list of ranks such as 0,5 or 0-3,8, "
			"not '%s'\n", list);
		free(want);
		return -1;
	}
	unsigned char *keep = ft_xcalloc((size_t)tr->nprocs + 1, 1);
	int kept = 0, lo = -1, hi = -1;
	for (int i = 0; i < tr->nprocs; i++) {
		int32_t r = tr->procs[i]->hdr.rank;
		if (tr->procs[i]->hdr.world_size >= 1 && r >= 0) {
			lo = lo < 0 || r < lo ? r : lo;
			hi = r > hi ? r : hi;
		}
		keep[i] = tr->procs[i]->hdr.world_size >= 1 && chosen(want, nw, r);
		kept += keep[i];
	}
	free(want);
	if (!kept) {
		if (lo < 0)
			fprintf(err, "feedtrace convert: --ranks %s: no process here has a rank (RANK, "
				"SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK)\n", list);
		else
			fprintf(err, "feedtrace convert: --ranks %s: none of them is here (ranks %d to "
				"%d are)\n", list, lo, hi);
		free(keep);
		return -1;
	}
	ft_trace_keep(tr, keep);
	free(keep);
	int n = tr->nprocs, hosts = 0;
	for (int i = 1; i < n && !mixed; i++) {
		const struct ft_file_header *a = &tr->procs[0]->hdr, *b = &tr->procs[i]->hdr;
		if (strncmp(a->job, b->job, sizeof a->job) || a->world_size != b->world_size) {
			fprintf(err, "feedtrace convert: --ranks %s: %s and %s are of two jobs (job "
				"'%.48s', world %d; job '%.48s', world %d): --mixed to draw them together\n",
				list, tr->procs[0]->path, tr->procs[i]->path, a->job, a->world_size,
				b->job, b->world_size);
			return -1;
		}
	}
	*shift = ft_xcalloc((size_t)n, sizeof **shift);
	for (int i = 1; i < n && !hosts; i++)
		hosts = strcmp(tr->procs[i]->hdr.host, tr->procs[0]->hdr.host) != 0;
	if (!hosts)
		return 0;                        /* one host: one monotonic clock */
	struct ft_rank_in *in = ft_xcalloc((size_t)n, sizeof *in);
	struct ft_verdict *v = ft_xcalloc((size_t)n, sizeof *v);
	for (int i = 0; i < n; i++) {
		struct ft_process *p = tr->procs[i];
		struct ft_metrics m;
		ft_analyse(p, o, mg, NULL, ft_said_once(err), NULL, NULL, &m, &v[i]);  /* the conversion says it */
		in[i] = (struct ft_rank_in){ .pid = p->hdr.pid, .rank = p->hdr.rank,
					     .world = p->hdr.world_size, .host = p->hdr.host,
					     .wall_ns = ft_wall_offset(p), .colls = v[i].colls,
					     .ncolls = v[i].ncolls };
	}
	struct ft_ranks rk;
	ft_ranks_build(&rk, in, n);
	if (rk.n < 2 || rk.nhosts < 2)
		fprintf(err, "feedtrace convert: --ranks: the ranks on several hosts have no "
			"collectives in common: their times are left on their own hosts' clocks\n");
	else
		for (int i = 0; i < n; i++)
			for (int h = 0; h < rk.nhosts; h++)
				if (!strcmp(rk.hosts[h].name, tr->procs[i]->hdr.host))
					(*shift)[i] = rk.hosts[h].wall_ns + rk.hosts[h].fix_ns;
	ft_ranks_free(&rk);
	for (int i = 0; i < n; i++)
		ft_verdict_free(&v[i]);
	free(v);
	free(in);
	return 0;
}
