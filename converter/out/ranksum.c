/*
 * ranksum.c: a rank's summary written into `report --json` and read back
 * (ranksum.h). The collectives of a process are kept per communicator:
 * the first arrival on its monotonic clock, then each arrival as the
 * difference from the one before, and each call's duration, in ns. A
 * communicator with more than FT_RANKSUM_KEEP keeps every stride-th (one
 * stride per process, the smallest power of two that fits), so a summary
 * stays tens of KB however long the job; ranks.c matches ranks on the
 * largest stride among them.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "json.h"
#include "ranksum.h"
#include "roles.h"
#include "util.h"

/* ---- writing ---- */

static unsigned stride_for(const struct ft_coll *c, int n, uint32_t *ncomm)
{
	uint32_t nc = 0;
	for (int i = 0; i < n; i++)
		if (c[i].comm + 1 > nc)
			nc = c[i].comm + 1;
	uint64_t *count = ft_xcalloc(nc ? nc : 1, sizeof *count), most = 0;
	for (int i = 0; i < n; i++)
		if (++count[c[i].comm] > most)
			most = count[c[i].comm];
	free(count);
	unsigned s = 1;
	while ((most + s - 1) / s > FT_RANKSUM_KEEP)
		s *= 2;
	*ncomm = nc;
	return s;
}

void ft_ranksum_json(struct ft_json *j, const struct ft_process *p, const struct ft_coll *c,
		     int n, uint64_t step_median_ns)
{
	if (!n) {
		ft_json_null(j, "collectives");
		return;
	}
	uint32_t ncomm;
	unsigned s = stride_for(c, n, &ncomm);
	ft_json_obj(j, "collectives");
	ft_json_str(j, "host", p->hdr.host);
	ft_json_int(j, "wall_offset_ns", ft_wall_offset(p));
	ft_json_int(j, "count", n);
	ft_json_u64(j, "sampled_every", s);
	if (step_median_ns)
		ft_json_u64(j, "step_median_ns", step_median_ns);
	else
		ft_json_null(j, "step_median_ns");
	ft_json_arr(j, "comms");
	for (uint32_t k = 0; k < ncomm; k++) {
		uint64_t seen = 0, prev = 0;
		for (int i = 0; i < n; i++)
			seen += c[i].comm == k;
		ft_json_obj(j, NULL);
		ft_json_int(j, "comm", k);
		ft_json_u64(j, "count", seen);
		for (int pass = 0; pass < 2; pass++) {
			ft_json_arr(j, pass ? "dur_ns" : "start_delta_ns");
			seen = 0;
			for (int i = 0; i < n; i++) {
				if (c[i].comm != k || seen++ % s)
					continue;
				if (pass)
					ft_json_u64(j, NULL, c[i].end - c[i].start);
				else
					ft_json_int(j, NULL, (int64_t)(c[i].start - prev)), prev = c[i].start;
			}
			ft_json_end(j);
			prev = 0;
		}
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_json_end(j);
}

/* ---- reading ---- */

static json_object *get(json_object *o, const char *key, json_type t)
{
	json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

static char *dup_str(json_object *o, const char *key)
{
	json_object *v = get(o, key, json_type_string);
	return v ? ft_xstrdup(json_object_get_string(v)) : NULL;
}

static int64_t get_int(json_object *o, const char *key, int64_t dflt)
{
	json_object *v = get(o, key, json_type_int);
	return v ? json_object_get_int64(v) : dflt;
}

/* one process's "collectives" into x; its arrays must agree */
static int read_colls(json_object *cl, struct ft_rank_in *x, const char **why)
{
	json_object *comms = get(cl, "comms", json_type_array);
	int64_t every = get_int(cl, "sampled_every", 1);
	if (!comms || every < 1 || every > (1 << 30) || (every & (every - 1))) {
		*why = "its \"collectives\" lack \"comms\" or a power-of-two \"sampled_every\"";
		return -1;
	}
	x->stride = (unsigned)every;
	x->total = (uint64_t)get_int(cl, "count", 0);
	size_t nc = json_object_array_length(comms), n = 0;
	for (size_t k = 0; k < nc; k++) {
		json_object *st = get(json_object_array_get_idx(comms, k), "start_delta_ns",
				      json_type_array);
		n += st ? json_object_array_length(st) : 0;
	}
	struct ft_coll *v = ft_xcalloc(n ? n : 1, sizeof *v);
	size_t at = 0;
	for (size_t k = 0; k < nc; k++) {
		json_object *cm = json_object_array_get_idx(comms, k);
		json_object *st = get(cm, "start_delta_ns", json_type_array);
		json_object *du = get(cm, "dur_ns", json_type_array);
		int64_t comm = get_int(cm, "comm", -1);
		if (!st || !du || json_object_array_length(st) != json_object_array_length(du) ||
		    comm < 0 || comm > 1 << 20) {
			free(v);
			*why = "a communicator's \"start_delta_ns\" and \"dur_ns\" do not pair up";
			return -1;
		}
		uint64_t t = 0;
		for (size_t i = 0; i < json_object_array_length(st); i++) {
			t += (uint64_t)json_object_get_int64(json_object_array_get_idx(st, i));
			uint64_t d = (uint64_t)json_object_get_int64(json_object_array_get_idx(du, i));
			v[at++] = (struct ft_coll){ (uint32_t)comm, 0, t, t + d };
		}
	}
	x->colls = v;
	x->ncolls = (int)at;
	return 0;
}

/* m's process (pid) in parts: its workers among procs, whether they and
 * it run Python, its loader threads among top's producers (the run
 * verdict was about it) */
static void process_parts(struct ft_ranksum_proc *m, json_object *procs, json_object *top,
			  int32_t pid)
{
	size_t n = json_object_array_length(procs);
	m->about = 1;
	m->workers = ft_xcalloc(n ? n : 1, sizeof *m->workers);
	m->python = ft_is_python(m->cmdline ? m->cmdline : "");
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		json_object *role = get(p, "role", json_type_string);
		if (!role || get_int(p, "ppid", -1) != pid ||
		    strcmp(json_object_get_string(role), ft_proc_role_name(FT_ROLE_WORKER)))
			continue;
		json_object *cmd = get(p, "cmdline", json_type_string);
		m->python &= ft_is_python(cmd ? json_object_get_string(cmd) : "");
		m->workers[m->nworkers++] = (int32_t)get_int(p, "pid", 0);
	}
	json_object *prod = get(top, "producers", json_type_array);
	for (size_t i = 0; prod && i < json_object_array_length(prod); i++) {
		json_object *role = get(json_object_array_get_idx(prod, i), "role",
					json_type_string);
		m->nloaders += role && !strcmp(json_object_get_string(role),
					       ft_prod_name(FT_PROD_LOADER));
	}
}

int ft_ranksum_read(struct ft_ranksums *s, const char *name, const char *text, size_t len,
		    FILE *err)
{
	json_tokener *tok = json_tokener_new();
	json_object *root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t off = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root || e != json_tokener_success) {
		fprintf(err, "feedtrace ranks: %s: not JSON at offset %zu (%s)\n", name, off,
			json_tokener_error_desc(e == json_tokener_success ? json_tokener_continue : e));
		json_object_put(root);
		return -1;
	}
	json_object *schema = get(root, "schema", json_type_string);
	json_object *procs = get(root, "processes", json_type_array);
	if (!schema || strcmp(json_object_get_string(schema), "feedtrace-report/1") || !procs) {
		fprintf(err, "feedtrace ranks: %s: not a feedtrace report (feedtrace report --json "
			"writes one)\n", name);
		json_object_put(root);
		return -1;
	}
	json_object *top = get(root, "verdict", json_type_object);
	int64_t top_pid = get_int(top, "pid", -1);
	int added = 0;
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		json_object *cl = get(p, "collectives", json_type_object);
		json_object *rk = get(p, "rank", json_type_object);
		if (!cl || !rk)
			continue;
		if (s->n == s->cap) {
			int cap = s->cap;
			FT_GROW(s->in, cap, 8);
			s->meta = ft_xrealloc(s->meta, (size_t)cap * sizeof *s->meta);
			s->cap = cap;
		}
		struct ft_rank_in *x = &s->in[s->n];
		struct ft_ranksum_proc *m = &s->meta[s->n];
		memset(x, 0, sizeof *x);
		memset(m, 0, sizeof *m);
		const char *why = NULL;
		if (read_colls(cl, x, &why) != 0) {
			fprintf(err, "feedtrace ranks: %s: process %zu: %s\n", name, i, why);
			json_object_put(root);
			return -1;
		}
		x->pid = (int32_t)get_int(p, "pid", 0);
		x->rank = (int32_t)get_int(rk, "rank", -1);
		x->world = (int32_t)get_int(rk, "world_size", 0);
		x->host = dup_str(cl, "host");
		x->wall_ns = get_int(cl, "wall_offset_ns", 0);
		m->file = name;
		m->job = dup_str(rk, "job");
		m->dir = dup_str(root, "dir");
		m->cmdline = dup_str(p, "cmdline");
		json_object *v = get(p, "verdict", json_type_object);
		m->step_median_ns = (uint64_t)get_int(cl, "step_median_ns", 0);
		/* verdict.def's rows that ranks reads: a process's own, or the
		 * run's (top) when it was about this process */
#define VERDICT(name, scope, type, key, expr, ranks, diff, dkey, label) \
		FT_VF_IF(ranks, if (!FT_VF_RUN_##scope) m->name = dup_str(v, key); \
			 else if (top_pid == x->pid) m->name = dup_str(top, key);)
#include "verdict.def"
#undef VERDICT
		if (top_pid == x->pid)
			process_parts(m, procs, top, x->pid);
		s->n++;
		added++;
	}
	json_object_put(root);
	return added;
}

void ft_ranksums_free(struct ft_ranksums *s)
{
	for (int i = 0; i < s->n; i++) {
		struct ft_ranksum_proc *m = &s->meta[i];
		free((void *)s->in[i].colls);
		free((void *)s->in[i].host);
		free(m->job);
		free(m->dir);
		free(m->cmdline);
		free(m->workers);
#define VERDICT(name, scope, type, key, expr, ranks, diff, dkey, label) \
		FT_VF_IF(ranks, free(m->name);)
#include "verdict.def"
#undef VERDICT
	}
	free(s->in);
	free(s->meta);
	memset(s, 0, sizeof *s);
}
