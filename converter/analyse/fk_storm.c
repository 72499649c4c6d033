/*
 * fk_storm.c: the small-read storm as a finding kind (fkind.h): a
 * process's burst of small file reads (reads.c, storm.c). Its data set
 * (the directory its most-read files share) makes its Problems row, one
 * per data set across processes, with the bursts of several workers each
 * under the threshold (extra_rows), and its identity across runs (diff, by
 * that row), and the timeline's counter of its reads (one per data set).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fkind.h"
#include "json.h"
#include "pfarg.h"
#include "fkrow.h"
#include "util.h"

static const char *suggestion(const struct ft_finding *f)
{
	if (f->files && f->reads >= 2 * f->files)
		return "files are read in small pieces: read each file whole (one read of "
		       "its size) or through a larger buffer";
	return "many small files, each read once: pack them into larger shards (tar, "
	       "WebDataset, one array file) and read those in large pieces";
}

static void label(const struct ft_finding *f, char *buf, size_t cap)
{
	char a[32], b[32];
	ft_fmt_bytes(a, sizeof a, f->bytes);
	ft_fmt_count(b, sizeof b, f->reads);
	snprintf(buf, cap, "%s reads, %s in %llu files (%llu reads of up to 1 MiB each would do)",
		 b, a, (unsigned long long)f->files, (unsigned long long)f->reads_needed);
}

static void json(struct ft_json *j, const struct ft_finding *f)
{
	ft_json_u64(j, "reads", f->reads);
	ft_json_u64(j, "bytes", f->bytes);
	ft_json_u64(j, "files", f->files);
	ft_json_u64(j, "time_ns", f->lost_ns);
	ft_json_u64(j, "reads_needed_1MiB", f->reads_needed);
	ft_json_obj(j, "read_sizes");
	for (int k = 0; k < FT_STORM_HIST; k++)
		ft_json_u64(j, ft_storm_hist_label[k], f->hist[k]);
	ft_json_end(j);
	ft_json_arr(j, "top_files");
	for (int k = 0; k < f->ntop; k++) {
		ft_json_obj(j, NULL);
		ft_json_str(j, "path", ft_txt(f->top_file[k]));
		ft_json_u64(j, "reads", f->top_reads[k]);
		ft_json_end(j);
	}
	ft_json_end(j);
}

static int args(const struct ft_finding *f, struct pf_arg *a, char (*key)[32])
{
	int n = 0;
	a[n++] = PF_ARG_UINT("reads", f->reads);
	a[n++] = PF_ARG_UINT("bytes", f->bytes);
	a[n++] = PF_ARG_UINT("files", f->files);
	a[n++] = PF_ARG_UINT("read_ns", f->lost_ns);
	a[n++] = PF_ARG_UINT("reads_needed_1MiB", f->reads_needed);
	for (int k = 0; k < FT_STORM_HIST; k++)
		if (f->hist[k])
			a[n++] = PF_ARG_UINT(ft_storm_hist_label[k], f->hist[k]);
	for (int k = 0; k < f->ntop; k++) {
		snprintf(key[2 * k], 32, "top_file_%d", k + 1);
		snprintf(key[2 * k + 1], 32, "top_file_%d_reads", k + 1);
		a[n++] = PF_ARG_STR(key[2 * k], f->top_file[k]);
		a[n++] = PF_ARG_UINT(key[2 * k + 1], f->top_reads[k]);
	}
	if (f->opener)
		a[n++] = PF_ARG_STR("opened_at", f->opener);
	return n;
}

/* its data set: the directory its most-read files share ("" if none) */
static void data_set(const struct ft_finding *f, char *out, size_t cap)
{
	out[0] = 0;
	/* a relative path (the program opened "data/x.bin") gives a relative
	 * data set: the program's own words for it */
	if (!f->ntop || !f->top_file[0] || !f->top_file[0][0] || f->top_file[0][0] == '(')
		return;
	size_t n = strlen(f->top_file[0]);
	for (int k = 1; k < f->ntop; k++) {
		size_t i = 0;
		while (i < n && f->top_file[k][i] == f->top_file[0][i])
			i++;
		n = i;
	}
	while (n > 0 && f->top_file[0][n - 1] != '/')
		n--;
	if (n > 1)
		n--;                    /* without the trailing '/' */
	snprintf(out, cap, "%.*s", (int)n, f->top_file[0]);
}

/* a becomes the directory a and b share ("/data/set" of /data/set/part0
 * and /data/set/part1): shards of one data set read by different workers */
static void common_dir(char *a, const char *b)
{
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	if (!((a[i] == 0 && (b[i] == 0 || b[i] == '/')) || (a[i] == '/' && b[i] == 0)))
		while (i > 0 && a[i - 1] != '/')
			i--;
	if (i > 1 && a[i - 1] == '/')
		i--;
	a[i] = 0;
}

/* path components: 2 for "/data/set", and for "pair/data" */
static int depth(const char *d)
{
	int n = *d && *d != '/';
	for (; *d; d++)
		n += *d == '/' && d[1] && d[1] != '/';
	return n;
}

/* the opener of the storm findings that read most of their files */
static void take_opener(struct ft_problem *p, const struct ft_finding *f)
{
	if (f->opener && f->opener_reads > p->opener_reads)
		p->opener = f->opener, p->opener_reads = f->opener_reads;
}

/* a storm row's line, from its totals */
static void what(struct ft_problem *p)
{
	char a[32], b[32], c[32], procs[96] = "";
	ft_fmt_count(a, sizeof a, p->reads);
	ft_fmt_count(b, sizeof b, p->files);
	ft_fmt_count(c, sizeof c, p->need);
	if (p->nprocs > 1)
		snprintf(procs, sizeof procs, ", over %d processes%s", p->nprocs,
			 p->under == p->nprocs ? ", each under the per-process threshold"
			 : p->under ? " (some under the per-process threshold)" : "");
	int len = snprintf(p->what, sizeof p->what, "%s: %s reads of %llu bytes on average in %s "
			   "files%s (%s reads of up to 1 MiB each would do)",
			   *p->dir ? p->dir : "(no common directory)", a,
			   (unsigned long long)(p->reads ? p->bytes / p->reads : 0), b, procs, c);
	if (len >= (int)sizeof p->what)
		return;                 /* cut (a directory of 160 characters): no opener */
	if (p->opener) {
		/* its innermost frame: where the program opens them */
		size_t n = strlen(p->what), k = strcspn(p->opener, ";");
		snprintf(p->what + n, sizeof p->what - n, "; opened at %.*s", (int)k, p->opener);
	}
}

/* one row: storms whose data sets share a directory two components deep */
static int same_row(const struct ft_finding *a, const struct ft_finding *b)
{
	char da[512], db[512];
	data_set(a, da, sizeof da);
	data_set(b, db, sizeof db);
	common_dir(da, db);
	return depth(da) >= 2;
}

static void describe(const struct ft_verdict *v, const struct ft_finding *all,
		     const int *m, int nm, struct ft_problem *p)
{
	(void)v;
	char other[160];
	data_set(&all[m[0]], p->dir, sizeof p->dir);
	for (int k = 0; k < nm; k++) {
		const struct ft_finding *x = &all[m[k]];
		p->reads += x->reads, p->files += x->files, p->bytes += x->bytes;
		p->need += x->reads_needed;
		take_opener(p, x);
		data_set(x, other, sizeof other);
		common_dir(p->dir, other);
	}
	what(p);
}

/* Bursts of small reads under the per-process threshold, in several
 * processes of the run on one data set (four workers each reading 700
 * times a second): together a storm when their reads, over the span from
 * the first one's start to the last one's end, reach the threshold's rate
 * (--storm-reads per --storm-window-ms). One row per data set, as for the
 * storms each process made alone. */
static void extra_rows(const struct ft_rowctx *r, struct ft_rows *acc)
{
	char *taken = ft_xcalloc((size_t)r->ncand + 1, 1);
	char dir[160], other[160], both[160];
	/* a candidate on the data set of a storm row joins it (a third worker
	 * that stayed under the threshold beside two that did not) */
	for (int j = 0; j < r->ncand; j++) {
		const struct ft_finding *c = &r->cand[j];
		data_set(c, other, sizeof other);
		for (int k = 0; k < acc->n && !taken[j]; k++) {
			struct ft_problem *p = &acc->p[k];
			if (p->fk != FT_FK_STORM || !*p->dir)
				continue;
			snprintf(both, sizeof both, "%s", p->dir);
			common_dir(both, other);
			if (depth(both) < 2)
				continue;
			snprintf(p->dir, sizeof p->dir, "%s", both);
			p->reads += c->reads, p->files += c->files, p->bytes += c->bytes;
			p->need += c->reads_needed, p->lost_ns += c->lost_ns;
			r->join(p, c);
			take_opener(p, c);
			p->count++;
			int seen = 0;
			for (int q = 0; q < r->nf && !seen; q++)
				seen = r->f[q].kind == FT_FK_STORM && r->f[q].pid == c->pid;
			for (int q = 0; q < j && !seen; q++)
				seen = taken[q] && r->cand[q].pid == c->pid;
			if (!seen)
				p->nprocs++, p->under++;
			what(p);
			taken[j] = 1;
		}
	}
	for (int i = 0; i < r->ncand; i++) {
		if (taken[i])
			continue;
		data_set(&r->cand[i], dir, sizeof dir);
		if (depth(dir) < 2)
			continue;
		uint64_t reads = 0, files = 0, bytes = 0, need = 0, lost = 0;
		uint64_t t0 = r->cand[i].start, t1 = r->cand[i].end;
		int32_t pids[64];
		int npids = 0, n = 0;
		for (int j = i; j < r->ncand; j++) {
			if (taken[j])
				continue;
			data_set(&r->cand[j], other, sizeof other);
			snprintf(both, sizeof both, "%s", dir);
			common_dir(both, other);
			if (depth(both) < 2)
				continue;
			const struct ft_finding *c = &r->cand[j];
			snprintf(dir, sizeof dir, "%s", both);
			taken[j] = 2;            /* this group's, for now */
			n++;
			reads += c->reads, files += c->files, bytes += c->bytes;
			need += c->reads_needed, lost += c->lost_ns;
			if (c->start < t0)
				t0 = c->start;
			if (c->end > t1)
				t1 = c->end;
			int seen = 0;
			for (int k = 0; k < npids && !seen; k++)
				seen = pids[k] == c->pid;
			if (!seen && npids < 64)
				pids[npids++] = c->pid;
		}
		/* rate over the span against the threshold's, without division */
		uint64_t span = t1 > t0 ? t1 - t0 : 1;
		int storm = npids >= 2 && (double)reads * (double)r->storm_window_ns >=
					  (double)r->storm_reads * (double)span;
		for (int j = i; j < r->ncand; j++)
			if (taken[j] == 2)
				taken[j] = storm ? 4 : 3;    /* 4: this storm's; 3: looked at, no storm */
		if (!storm)
			continue;
		struct ft_problem *p = r->add(acc);
		p->kind = ft_fk_storm.row;
		p->fk = FT_FK_STORM;
		p->pid = r->cand[i].pid;
		p->nprocs = p->under = npids;
		p->count = (uint64_t)n;
		p->lost_ns = lost;
		snprintf(p->dir, sizeof p->dir, "%s", dir);
		p->reads = reads, p->files = files, p->bytes = bytes, p->need = need;
		for (int j = i; j < r->ncand; j++)
			if (taken[j] == 4) {
				take_opener(p, &r->cand[j]);
				r->join(p, &r->cand[j]);
				taken[j] = 1;
			}
		struct ft_finding like = r->cand[i];
		like.reads = reads, like.files = files;
		p->suggestion = suggestion(&like);
		what(p);
	}
	free(taken);
}

/* its reads per second on its data set's counter */
static void counter(const struct ft_finding *f, char *name, size_t cap)
{
	char dir[512];
	data_set(f, dir, sizeof dir);
	snprintf(name, cap, "small reads/s: %s", *dir ? dir : "(no common directory)");
}

/* a storm row's wall time: its reads in its threads or processes */
static void wall(struct ft_problem *p, int threads, int nfeeders)
{
	(void)threads;
	char in[32];
	if (p->nprocs > 1)
		snprintf(in, sizeof in, "%d processes", p->nprocs);
	else
		snprintf(in, sizeof in, "its threads");
	ft_row_wall(p, "reads", in, nfeeders);
}

static void row_identity(const struct ft_problem *p, char *t, size_t cap)
{
	snprintf(t, cap, "small-read storm%s%s", *p->dir ? " in " : "", p->dir);
}

const struct ft_fkind_ops ft_fk_storm = {
	.key = "small_read_storm", .slice = "small-read storm", .track = "small-read storms",
	.row = "small-read storm", .flags = FT_FKF_COVER,
	.suggestion = suggestion, .label = label, .json = json, .args = args,
	.row_identity = row_identity, .same_row = same_row, .describe = describe,
	.extra_rows = extra_rows, .counter = counter,
	.wall = wall,
};
