/*
 * groups.c: the findings that are one row per thing waited on, not per
 * wait: hidden syncs grouped by call site (else by symbol and thread),
 * contended locks by address, each with its waits' count, total and
 * longest, the threads that waited (the first 8, and how many more), its
 * bursts (waits less than FT_BURST_GAP_NS apart: the timeline's slices)
 * and, for a lock, the waiters' call sites. gpu.c and locks.c add the waits;
 * the groups become findings, in order of their first wait, at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "groups.h"
#include "symbolize.h"
#include "util.h"

/* CPython's GIL: a pthread mutex and condition variable inside the
 * interpreter's `_PyRuntime` (CPython 3.11 and 3.12, the main interpreter
 * being part of it); the symbol table that owns the address says so. A
 * thread waiting on it waits for the interpreter, not for data: its
 * condition-variable waits are lock time (and never a batch received),
 * its mutex waits a lock named "Python GIL". */
int ft_is_gil_name(const char *sym)
{
	return sym && strncmp(sym, "_PyRuntime", 10) == 0 && (sym[10] == 0 || sym[10] == '+');
}

struct ft_group *ft_group_of(struct ft_group_set *s, uint64_t key)
{
	long i = ft_map_get(&s->map, key);
	if (i < 0) {
		if (s->n == s->cap)
			FT_GROW(s->g, s->cap, 8);
		i = s->n++;
		memset(&s->g[i], 0, sizeof s->g[i]);
		s->g[i].key = key;
		s->g[i].keep = s->keep_cover;
		ft_map_put(&s->map, key, (uint32_t)i);
	}
	return &s->g[i];
}

void ft_group_add(struct ft_group *g, int32_t tid, uint64_t ts, uint64_t end, uint64_t dur)
{
	if (!g->count || ts < g->first)
		g->first = ts;
	if (end > g->last_end)
		g->last_end = end;
	g->count++;
	g->total += dur;
	uint64_t from = ts > g->cov_end ? ts : g->cov_end;
	g->covered += end > from ? end - from : 0;
	if (end > g->cov_end)
		g->cov_end = end;
	if (g->keep)
		ft_cover_put(&g->cov, ts, end);
	if (dur > g->max)
		g->max = dur;
	struct ft_burst *b = g->nbu ? &g->bu[g->nbu - 1] : NULL;
	if (!b || ts > b->end + FT_BURST_GAP_NS) {
		if (g->nbu == g->capbu)
			FT_GROW(g->bu, g->capbu, 8);
		b = &g->bu[g->nbu++];
		*b = (struct ft_burst){ ts, end, 0, 0 };
	}
	if (end > b->end)
		b->end = end;
	b->count++;
	b->total_ns += dur;
	for (int i = 0; i < g->ntids; i++)
		if (g->tids[i] == tid)
			return;
	if (g->ntids < 8)
		g->tids[g->ntids++] = tid;
	else
		g->more_tids++;
}

/* A lock wait's call site, summed per site: the lock's finding shows the
 * one that waited longest (the first 8 sites of a lock). */
void ft_group_site(struct ft_group *g, uint32_t site, int py, uint64_t dur)
{
	if (!site)
		return;
	int i = 0;
	while (i < g->nsites && (g->sites[i].site != site || g->sites[i].py != py))
		i++;
	if (i == g->nsites) {
		if (i == 8)
			return;
		g->sites[g->nsites++].site = site;
		g->sites[i].py = py;
		g->sites[i].total = 0;
	}
	g->sites[i].total += dur;
}

static int group_cmp(const void *x, const void *y)
{
	const struct ft_group *a = x, *b = y;
	return a->first < b->first ? -1 : a->first > b->first;
}

int ft_groups_emit(struct ft_group_set *s, int kind, const struct ft_process *p,
		   uint64_t min_ns, const struct ft_an_sink *sink)
{
	struct ft_group *g = s->g;
	int n = s->n, locks = 0;
	if (n > 1)                      /* g is NULL when there are none */
		qsort(g, (size_t)n, sizeof *g, group_cmp);
	for (int i = 0; i < n; i++) {
		if (g[i].total < min_ns)
			continue;
		struct ft_finding f;
		memset(&f, 0, sizeof f);
		f.kind = kind;
		f.pid = p->hdr.pid;
		f.start = g[i].first;
		f.end = g[i].last_end;
		f.lost_ns = g[i].total;
		f.covered_ns = g[i].covered;
		f.cov = g[i].cov.iv;
		f.ncov = g[i].cov.n;
		f.tid = g[i].tid;
		f.count = g[i].count;
		f.total_ns = g[i].total;
		f.max_ns = g[i].max;
		f.threads = g[i].ntids + g[i].more_tids;
		f.bursts = g[i].bu;
		f.nbursts = g[i].nbu;
		f.gpu_idle_ns = g[i].gpu_idle;
		f.gpu_idle_known = kind == FT_FK_HIDDEN && s->gpu_idle_known;
		f.site = "";
		if (kind == FT_FK_HIDDEN && g[i].site) {
			const char *st = g[i].py ? ft_string(p, g[i].site)
						 : ft_site_text(p, g[i].site);
			f.site = st ? st : "";
		}
		if (kind == FT_FK_HIDDEN) {
			const char *s = ft_string(p, g[i].sym);
			const struct ft_kind_info *k = ft_kind(g[i].kind);
			f.symbol = s ? s : k ? k->name : "";
		} else {
			const struct ft_kind_info *k = ft_kind(g[i].kind);
			f.symbol = k ? k->name : "";
			f.addr = g[i].key;
			f.tid = g[i].tids[0];
			int best = -1;
			for (int j = 0; j < g[i].nsites; j++)
				if (best < 0 || g[i].sites[j].total > g[i].sites[best].total)
					best = j;
			if (best >= 0) {
				uint32_t id = g[i].sites[best].site;
				const char *st = g[i].sites[best].py ? ft_string(p, id)
								     : ft_site_text(p, id);
				f.site = st ? st : "";
			}
			f.lock_name = ft_data_symbol(p, f.addr);
			f.gil = ft_is_gil_name(f.lock_name);
			if (f.gil)
				f.lock_name = "Python GIL";
			locks++;
		}
		if (sink->finding)
			sink->finding(sink->arg, &f);
	}
	return locks;
}

void ft_groups_free(struct ft_group_set *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->g[i].bu);
		ft_cover_free(&s->g[i].cov);
	}
	free(s->g);
	ft_map_free(&s->map);
	memset(s, 0, sizeof *s);
}
