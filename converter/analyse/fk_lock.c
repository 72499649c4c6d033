/*
 * fk_lock.c: lock contention as a finding kind (fkind.h): one lock's
 * waits in a process (locks.c, groups.c), CPython's interpreter lock
 * among them (gil), its occurrences in bursts.
 */
#include <stdio.h>
#include <string.h>

#include "fkind.h"
#include "fkrow.h"
#include "json.h"
#include "pfarg.h"
#include "util.h"

static const char *suggestion(const struct ft_finding *f)
{
	if (f->gil)
		return "Python threads queue for the interpreter (the GIL): move CPU work "
		       "of the other threads into worker processes (DataLoader workers, "
		       "multiprocessing) or into code that releases the GIL";
	return "threads queue on this lock: shorten the critical section or split the "
	       "lock";
}

/* a GIL inside a DataLoader worker: no reason to move work into workers */
static const char *advice(const struct ft_finding *f, int worker)
{
	if (f->gil && worker)
		return "Python threads of this worker process queue for its interpreter "
		       "(the GIL): do the work on the worker's own thread (no thread "
		       "pools in __getitem__ or the transforms) and add workers for "
		       "more, or use code that releases the GIL";
	return suggestion(f);
}

static void label(const struct ft_finding *f, char *buf, size_t cap)
{
	char a[32];
	int n;
	const char *site = ft_site_brief(f->site, &n);
	ft_fmt_ns(a, sizeof a, f->max_ns);
	snprintf(buf, cap, "%s %s%s0x%llx%s%s%.*s x%llu (max %s), %d thread%s", f->symbol,
		 f->lock_name ? f->lock_name : "", f->lock_name ? " (" : "",
		 (unsigned long long)f->addr, f->lock_name ? ")" : "",
		 n ? " at " : "", n, site, (unsigned long long)f->count, a, f->threads,
		 f->threads == 1 ? "" : "s");
}

static void json(struct ft_json *j, const struct ft_finding *f)
{
	ft_json_str(j, "call", ft_txt(f->symbol));
	ft_json_str(j, "site", ft_txt(f->site));
	ft_json_hex(j, "lock", f->addr);
	ft_json_str(j, "lock_name", f->lock_name);
	ft_json_int(j, "tid", f->tid);
	ft_json_u64(j, "count", f->count);
	ft_json_u64(j, "total_ns", f->total_ns);
	ft_json_u64(j, "max_ns", f->max_ns);
	ft_json_int(j, "threads", f->threads);
}

static int args(const struct ft_finding *f, struct pf_arg *a, char (*key)[32])
{
	(void)key;
	int n = 0;
	a[n++] = PF_ARG_PTR("lock", f->addr);
	if (f->lock_name)
		a[n++] = PF_ARG_STR("lock_name", f->lock_name);
	a[n++] = PF_ARG_STR("call", f->symbol);
	a[n++] = PF_ARG_STR("site", f->site);
	a[n++] = PF_ARG_INT("tid", f->tid);
	a[n++] = PF_ARG_UINT("waits", f->count);
	a[n++] = PF_ARG_UINT("wait_ns", f->total_ns);
	a[n++] = PF_ARG_UINT("longest_wait_ns", f->max_ns);
	a[n++] = PF_ARG_UINT("threads", (uint64_t)f->threads);
	return n;
}

static void identity(const struct ft_finding *f, char *t, size_t cap)
{
	snprintf(t, cap, "lock contention in %s%s%s%s%.*s", f->symbol,
		 f->lock_name ? " on " : "", f->lock_name ? f->lock_name : "",
		 f->site && *f->site ? " at " : "",
		 f->site ? (int)strcspn(f->site, "\n;") : 0, f->site ? f->site : "");
}

static void site(const struct ft_finding *f, char *line, size_t cap)
{
	int n;
	const char *s = ft_site_brief(f->site, &n);
	if (n && f->lock_name)
		snprintf(line, cap, "%.*s (%s on %s)", n, s, f->symbol, f->lock_name);
	else if (n)
		snprintf(line, cap, "%.*s (%s)", n, s, f->symbol);
	else if (f->lock_name)
		snprintf(line, cap, "%s on %s", f->symbol, f->lock_name);
	else
		snprintf(line, cap, "%s on lock 0x%llx", f->symbol, (unsigned long long)f->addr);
}

/* a lock row's wall time: one lock of one process */
static void wall(struct ft_problem *p, int threads, int nfeeders)
{
	char in[32];
	if (p->nprocs > 1)
		snprintf(in, sizeof in, "%d processes", p->nprocs);
	else
		snprintf(in, sizeof in, "%d threads", threads);
	ft_row_wall(p, "waits", in, nfeeders);
}

const struct ft_fkind_ops ft_fk_lock = {
	.key = "lock_contention", .slice = "lock contention", .track = "lock contention",
	.row = "lock contention",
	.flags = FT_FKF_BURSTS | FT_FKF_COVER | FT_FKF_COVER_WAITS | FT_FKF_OCCURRENCES,
	.suggestion = suggestion, .advice = advice, .label = label, .json = json,
	.args = args, .identity = identity, .site = site, .wall = wall,
};
