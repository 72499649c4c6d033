/*
 * fk_storm.c: the small-read storm as a finding kind (fkind.h): a
 * process's burst of small file reads (reads.c, storm.c). Its data set
 * (the directory its most-read files share) makes its Problems row, one
 * per data set across processes, and its identity across runs (diff, by
 * that row); the data-set helpers are also what problems.c's pass over
 * several workers' candidates and the timeline's per-data-set counter
 * (convert.c) use.
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

void ft_storm_dir(const struct ft_finding *f, char *out, size_t cap)
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
void ft_storm_common_dir(char *a, const char *b)
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
int ft_storm_depth(const char *d)
{
	int n = *d && *d != '/';
	for (; *d; d++)
		n += *d == '/' && d[1] && d[1] != '/';
	return n;
}

/* the opener of the storm findings that read most of their files */
void ft_storm_take_opener(struct ft_problem *p, const struct ft_finding *f)
{
	if (f->opener && f->opener_reads > p->opener_reads)
		p->opener = f->opener, p->opener_reads = f->opener_reads;
}

/* a storm row's line, from its totals */
void ft_storm_what(struct ft_problem *p)
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
	ft_storm_dir(a, da, sizeof da);
	ft_storm_dir(b, db, sizeof db);
	ft_storm_common_dir(da, db);
	return ft_storm_depth(da) >= 2;
}

static void describe(const struct ft_verdict *v, const struct ft_finding *all,
		     const int *m, int nm, struct ft_problem *p)
{
	(void)v;
	char other[160];
	ft_storm_dir(&all[m[0]], p->dir, sizeof p->dir);
	for (int k = 0; k < nm; k++) {
		const struct ft_finding *x = &all[m[k]];
		p->reads += x->reads, p->files += x->files, p->bytes += x->bytes;
		p->need += x->reads_needed;
		ft_storm_take_opener(p, x);
		ft_storm_dir(x, other, sizeof other);
		ft_storm_common_dir(p->dir, other);
	}
	ft_storm_what(p);
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
	.wall = wall,
};
