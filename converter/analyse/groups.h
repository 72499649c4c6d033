/*
 * groups.h: waits grouped by what was waited on (groups.c): hidden syncs
 * by call site, contended locks by address, made findings at the end.
 */
#ifndef FT_GROUPS_H
#define FT_GROUPS_H

#include <stdint.h>

#include "analysis.h"
#include "cover.h"
#include "reader.h"
#include "util.h"

struct ft_group {                   /* hidden sync (site or sym+tid) or lock (addr) */
	uint64_t key;
	uint32_t sym, site;                 /* site: a py or native site string id */
	int py;
	int32_t tid;
	unsigned kind;
	uint64_t count, total, max, first, last_end;
	int32_t tids[8];
	int ntids, more_tids;
	struct { uint32_t site; int py; uint64_t total; } sites[8];   /* lock: its waiters' sites */
	int nsites;
	struct ft_burst *bu; int nbu, capbu;   /* its occurrences in bursts */
	uint64_t idle;                      /* hidden sync: its streams' idle charged to it */
	uint64_t midle;                     /* hidden sync: the same of the measured idle */
	uint64_t gpu_idle;                  /* hidden sync: the device's idle after it (gpu.c) */
	uint64_t covered, cov_end;          /* the wall time its waits covered (their union
	                                       over threads; waits come in start order) */
	int keep;                           /* the set's keep_cover */
	struct ft_cover cov;                /* that time as intervals (keep_cover only) */
};

struct ft_group_set {
	struct ft_group *g;
	int n, cap;
	struct ft_map map;            /* key -> index in g */
	int gpu_idle_known;           /* hidden syncs: gpu_idle set (a launch was seen) */
	int keep_cover;               /* keep each group's waits as intervals (locks: what
	                                 the feeding threads lost to them, problems.c) */
};

/* the group of key, made empty (but for its key) on first use */
struct ft_group *ft_group_of(struct ft_group_set *s, uint64_t key);
/* one wait of thread tid, [ts, end], dur long */
void ft_group_add(struct ft_group *g, int32_t tid, uint64_t ts, uint64_t end, uint64_t dur);
/* a lock wait's call site (py: a Python site's string id, else a native
 * site key; 0: none) */
void ft_group_site(struct ft_group *g, uint32_t site, int py, uint64_t dur);
/* the groups of total min_ns or more as findings of kind, to the sink, in
 * order of their first wait; returns how many were handed on */
int ft_groups_emit(struct ft_group_set *s, int kind, const struct ft_process *p,
		   uint64_t min_ns, const struct ft_an_sink *sink);
void ft_groups_free(struct ft_group_set *s);
/* a data symbol inside CPython's _PyRuntime: the GIL's mutex or condvar */
int ft_is_gil_name(const char *sym);

#endif
