/*
 * fk_storm.c: the small-read storm as a finding kind (fkind.h): a
 * process's burst of small file reads (reads.c, storm.c), matched across
 * runs by its data set (its Problems row: problems.c groups storms by
 * data set across processes).
 */
#include <stdio.h>

#include "fkind.h"
#include "json.h"
#include "pftrace.h"
#include "problems.h"
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

static void row_identity(const struct ft_problem *p, char *t, size_t cap)
{
	snprintf(t, cap, "small-read storm%s%s", *p->dir ? " in " : "", p->dir);
}

const struct ft_fkind_ops ft_fk_storm = {
	.key = "small_read_storm", .slice = "small-read storm", .track = "small-read storms",
	.row = "small-read storm", .flags = FT_FKF_COVER,
	.suggestion = suggestion, .label = label, .json = json, .args = args,
	.row_identity = row_identity,
};
