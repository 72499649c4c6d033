/*
 * fk_hidden.c: the hidden sync as a finding kind (fkind.h): a CUDA call
 * that waited for the GPU without being a synchronize, one finding per
 * call and call site (gpu.c, groups.c), its occurrences in bursts.
 */
#include <stdio.h>
#include <string.h>

#include "fkind.h"
#include "json.h"
#include "pfarg.h"
#include "fkrow.h"
#include "util.h"

static const char *suggestion(const struct ft_finding *f)
{
	if (f->symbol && strstr(f->symbol, "DtoH"))
		return "a device-to-host copy waits for the GPU each time (.item(), .cpu(), "
		       "printing a tensor): keep the value on the device and read it every "
		       "N steps";
	if (f->symbol && strstr(f->symbol, "HtoD"))
		return "a copy from pageable host memory synchronizes: pin the host buffer "
		       "(pin_memory=True) and copy with non_blocking=True";
	if (f->symbol && strstr(f->symbol, "Free"))
		return "freeing device memory waits for the GPU: keep and reuse buffers "
		       "(a caching allocator) instead of freeing in the loop";
	return "this call waits for the GPU: make it asynchronous or move it out of "
	       "the loop";
}

/* the device's idle after these syncs, when the verdict stands on it */
static uint64_t cost(const struct ft_verdict *v, const struct ft_finding *f)
{
	if (f->gpu_idle_known && v && v->basis == FT_BASIS_GPU_IDLE)
		return f->gpu_idle_ns;
	return f->lost_ns;
}

static void label(const struct ft_finding *f, char *buf, size_t cap)
{
	char a[32];
	int n;
	const char *site = ft_site_brief(f->site, &n);
	ft_fmt_ns(a, sizeof a, f->max_ns);
	snprintf(buf, cap, "%s%s%.*s x%llu (max %s), tid %d", f->symbol,
		 n ? " at " : "", n, site, (unsigned long long)f->count, a, f->tid);
}

static void json(struct ft_json *j, const struct ft_finding *f)
{
	ft_json_str(j, "symbol", ft_txt(f->symbol));
	ft_json_str(j, "site", ft_txt(f->site));
	ft_json_int(j, "tid", f->tid);
	ft_json_u64(j, "count", f->count);
	ft_json_u64(j, "total_ns", f->total_ns);
	ft_json_u64(j, "max_ns", f->max_ns);
	ft_json_int(j, "threads", f->threads);
	if (f->gpu_idle_known)
		ft_json_u64(j, "gpu_idle_ns", f->gpu_idle_ns);
	else
		ft_json_null(j, "gpu_idle_ns");
}

static int args(const struct ft_finding *f, struct pf_arg *a, char (*key)[32])
{
	(void)key;
	int n = 0;
	a[n++] = PF_ARG_STR("symbol", f->symbol);
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
	snprintf(t, cap, "hidden syncs in %s%s%.*s", f->symbol, *f->site ? " at " : "",
		 (int)strcspn(f->site, "\n;"), f->site);
}

static void site(const struct ft_finding *f, char *line, size_t cap)
{
	int n;
	const char *s = ft_site_brief(f->site, &n);
	if (n)
		snprintf(line, cap, "%.*s (%s)", n, s, f->symbol);
	else
		snprintf(line, cap, "%s in thread %d", f->symbol, f->tid);
}

/* one finding a row; with its GPU idle where that is its cost */
static void describe(const struct ft_verdict *v, const struct ft_finding *all,
		     const int *m, int nm, struct ft_problem *p)
{
	(void)nm;
	const struct ft_finding *f = &all[m[0]];
	label(f, p->what, sizeof p->what);
	if (cost(v, f) != f->lost_ns) {
		char w[32], i[32];
		size_t n = strlen(p->what);
		ft_fmt_ns(w, sizeof w, f->total_ns);
		ft_fmt_ns(i, sizeof i, f->gpu_idle_ns);
		snprintf(p->what + n, sizeof p->what - n, "; waited %s in all, the GPU idle %s "
			 "after them", w, i);
	}
}

const struct ft_fkind_ops ft_fk_hidden = {
	.key = "hidden_sync", .slice = "hidden sync", .track = "hidden syncs",
	.row = "hidden sync", .flags = FT_FKF_BURSTS | FT_FKF_OCCURRENCES,
	.suggestion = suggestion, .cost = cost, .label = label, .json = json,
	.args = args, .identity = identity, .site = site, .describe = describe,
};
