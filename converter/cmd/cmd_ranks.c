/*
 * cmd_ranks.c: `feedtrace ranks SUMMARY|DIR...`: the cross-rank report of a
 * job from its ranks' summaries (`report --json` of each rank's or host's
 * trace, made where the traces are: ranksum.c), or from trace directories
 * reported here one at a time. Only the summaries' collectives are kept,
 * so memory grows with the ranks. Prints the "Ranks:" block (ranks_out.c)
 * and the straggler's own verdict, as its summary gives it.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmds.h"
#include "json.h"
#include "ranksum.h"
#include "report.h"
#include "roles.h"
#include "util.h"
#include "words.h"

static const char ranks_usage[] =
	"usage: feedtrace ranks SUMMARY.json|DIR... [--json] [--mixed]\n"
	"Which rank starves a job: the ranks' collectives matched across their\n"
	"summaries, the straggler and its own verdict (docs/ANALYSES.md, \"Ranks\").\n"
	"A summary is `feedtrace report --json RANK_DIR > rank.json`, run where each\n"
	"rank's (or host's) trace is; a DIR holds summaries (*.json) or is a trace\n"
	"directory (reported here).\n"
	"  --json               machine-readable (docs/REPORT-SCHEMA.md, \"ranks\")\n"
	"  --mixed              merge summaries of several jobs (refused else)\n"
	"  --reorder-ms MS      a trace directory's merge window across threads (1000)\n"
	"  -h, --help           this text\n"
	"Example: feedtrace ranks summaries/\n";

struct input { char *name; int procs; };

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n > k && !strcmp(s + n - k, suf);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the file names of dir ending in suf, sorted, into *out (malloc'd; NULL
 * when none); -1 when dir cannot be read */
static int list_dir(const char *dir, const char *suf, char ***out, int *n)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	int cap = 0;
	*n = 0;
	*out = NULL;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));) {
		if (!has_suffix(e->d_name, suf))
			continue;
		if (*n == cap)
			FT_GROW(v, cap, 8);
		size_t l = strlen(dir) + strlen(e->d_name) + 2;
		v[*n] = ft_xmalloc(l);
		snprintf(v[*n], l, "%s/%s", dir, e->d_name);
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, (size_t)*n, sizeof *v, by_name);
	*out = v;
	return 0;
}

static int read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	FILE *m = open_memstream(text, len);
	char buf[65536];
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, k, m);
	int bad = ferror(f);
	fclose(f);
	fclose(m);
	if (bad) {
		free(*text);
		return -1;
	}
	return 0;
}

/* a trace directory reported here, its JSON read back as a summary's */
static int add_trace_dir(struct ft_ranksums *s, const char *dir, const struct ft_merge_opts *mg)
{
	struct ft_report r;
	struct ft_an_opts o;
	ft_an_default_opts(&o);
	if (ft_report_build(&r, dir, &o, mg, stderr) != 0) {
		fprintf(stderr, "feedtrace ranks: %s: nothing to report\n", dir);
		return -1;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	ft_report_json(&r, m);
	fclose(m);
	ft_report_free(&r);
	int k = ft_ranksum_read(s, dir, text, len, stderr);
	free(text);
	return k;
}

static int add_file(struct ft_ranksums *s, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	if (read_file(path, &text, &len) != 0) {
		fprintf(stderr, "feedtrace ranks: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int k = ft_ranksum_read(s, path, text, len, stderr);
	free(text);
	return k;
}

/* one argument: a summary, a directory of summaries or a trace directory;
 * the inputs read are appended to in */
static int add_arg(struct ft_ranksums *s, const char *arg, const struct ft_merge_opts *mg,
		   struct input **in, int *nin, int *cap)
{
	struct stat st;
	if (stat(arg, &st) != 0) {
		fprintf(stderr, "feedtrace ranks: %s: %s\n", arg, strerror(errno));
		return -1;
	}
	int nf = 0, traces = 0;
	char **files = NULL;
	if (S_ISDIR(st.st_mode)) {
		char **ft;
		if (list_dir(arg, ".ft", &ft, &traces) != 0 ||
		    (!traces && list_dir(arg, ".json", &files, &nf) != 0)) {
			fprintf(stderr, "feedtrace ranks: %s: %s\n", arg, strerror(errno));
			return -1;
		}
		for (int i = 0; i < traces; i++)
			free(ft[i]);
		free(ft);
		if (!traces && !nf) {
			fprintf(stderr, "feedtrace ranks: %s: neither summaries (*.json) nor a "
				"trace (*.ft)\n", arg);
			return -1;
		}
	}
	int rc = 0;
	for (int i = 0; i < (nf ? nf : 1); i++) {
		/* the name outlives the files' list: the summaries' processes point to it */
		if (*nin == *cap)
			FT_GROW(*in, *cap, 8);
		struct input *x = &(*in)[(*nin)++];
		*x = (struct input){ ft_xstrdup(nf ? files[i] : arg), 0 };
		x->procs = traces ? add_trace_dir(s, x->name, mg) : add_file(s, x->name);
		if (x->procs < 0) {
			rc = -1;
			break;
		}
	}
	for (int i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	return rc;
}

/* summaries of two jobs are not merged unless --mixed (one line, -1) */
static int one_job(const struct ft_ranksums *s)
{
	const struct ft_ranksum_proc *first = NULL;
	int32_t world = 0;
	for (int i = 0; i < s->n; i++) {
		const struct ft_ranksum_proc *m = &s->meta[i];
		if (!first) {
			first = m, world = s->in[i].world;
			continue;
		}
		if (strcmp(m->job ? m->job : "", first->job ? first->job : "") ||
		    s->in[i].world != world) {
			fprintf(stderr, "feedtrace ranks: the summaries are of two jobs (%s: job '%s', "
				"world %d; %s: job '%s', world %d); give one job's, or --mixed to merge "
				"them\n", first->file, first->job ? first->job : "", world, m->file,
				m->job ? m->job : "", s->in[i].world);
			return -1;
		}
	}
	return 0;
}

/* a rank given twice (a host's summary beside its ranks' own): said once */
static void say_duplicates(const struct ft_ranksums *s)
{
	for (int i = 0; i < s->n; i++)
		for (int k = 0; k < i; k++)
			if (s->in[i].rank == s->in[k].rank && s->in[i].rank >= 0 &&
			    (s->meta[i].file != s->meta[k].file || s->in[i].pid != s->in[k].pid)) {
				fprintf(stderr, "feedtrace ranks: rank %d is in %s and in %s: the "
					"process with more collectives is used\n", s->in[i].rank,
					s->meta[k].file, s->meta[i].file);
				break;
			}
}

static void text_out(const struct ft_ranks *rk, const struct ft_ranksums *s, int nin)
{
	char line[1024];
	fprintf(stdout, "feedtrace ranks: %d input%s, %d process%s with collectives\n\n", nin,
		nin == 1 ? "" : "s", s->n, s->n == 1 ? "" : "es");
	if (!rk->n) {
		ft_wrap(stdout, "Ranks: no job of ranks: the inputs hold fewer than 2 ranks with "
			"collectives (a rank comes from RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK or "
			"PMI_RANK with a world of 2 or more).", 0);
		return;
	}
	ft_ranks_text(rk, stdout, rk->straggler >= 0 ? "Its own verdict follows." : NULL);
	if (rk->straggler < 0)
		return;
	const struct ft_rank_sum *x = &rk->r[rk->straggler];
	const struct ft_ranksum_proc *m = &s->meta[x->proc];
	if (m->about) {             /* the run verdict's process, from its parts */
		/* its own world where its rank is one of it, else the job's */
		int32_t world = s->in[x->proc].world;
		if (x->rank < 0 || x->rank >= world)
			world = rk->world;
		struct ft_proc_words w = { 0, x->rank, world, x->pid,
					   m->cmdline ? m->cmdline : "",
					   m->workers, m->nworkers, m->python, m->nloaders };
		ft_words_process(&w, line, sizeof line);
	} else {
		char cmd[72];
		ft_brief_command(m->cmdline ? m->cmdline : "", cmd, sizeof cmd);
		snprintf(line, sizeof line, "rank %d/%d, main process %d (%s)", x->rank, rk->world,
			 x->pid, cmd);
	}
	fputs("Straggler's verdict:", stdout);
	ft_wrap_from(stdout, line, 21, 21 + 1);
	if (m->sentence)
		ft_wrap(stdout, m->sentence, 2);
	if (m->detail && *m->detail)
		ft_wrap(stdout, m->detail, 2);
	if (!m->dir) {
		snprintf(line, sizeof line, "from %s; its findings: feedtrace report on its "
			 "trace", m->file);
		ft_wrap(stdout, line, 2);
		return;
	}
	/* the command to run, whole on a line of its own (never cut to fit 80
	 * columns: it is copied from here) */
	snprintf(line, sizeof line, "from %s; its findings:", m->file);
	ft_wrap(stdout, line, 2);
	fputs("    feedtrace report ", stdout);
	ft_put_clean(stdout, m->dir);
	fputc('\n', stdout);
}

static void json_out(const struct ft_ranks *rk, const struct ft_ranksums *s,
		     const struct input *in, int nin)
{
	struct ft_json jw, *j = &jw;
	ft_json_begin(j, stdout);
	ft_json_obj(j, NULL);
	ft_json_str(j, "schema", "feedtrace-ranks/1");
	ft_json_arr(j, "inputs");
	for (int i = 0; i < nin; i++) {
		ft_json_obj(j, NULL);
		ft_json_str(j, "file", in[i].name);
		ft_json_int(j, "processes", in[i].procs);
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_ranks_json(j, rk);
	if (rk->straggler >= 0) {
		const struct ft_rank_sum *x = &rk->r[rk->straggler];
		const struct ft_ranksum_proc *m = &s->meta[x->proc];
		ft_json_obj(j, "straggler_verdict");
		ft_json_int(j, "rank", x->rank);
		ft_json_int(j, "pid", x->pid);
		ft_json_str(j, "file", m->file);
#define VERDICT(name, scope, type, key, expr, ranks, diff, dkey, label) \
		FT_VF_IF(ranks, ft_json_str(j, key, m->name);)
#include "verdict.def"
#undef VERDICT
		ft_json_end(j);
	} else {
		ft_json_null(j, "straggler_verdict");
	}
	ft_json_end(j);
	fputc('\n', stdout);
}

int ft_cmd_ranks(int argc, char **argv)
{
	enum { JSON = FT_OPT_OWN };
	static const struct option opts[] = {
		FT_READ_LONGOPTS,
		{ "json", no_argument, NULL, JSON },
		FT_HELP_LONGOPTS,
	};
	int json = 0, mixed = 0, c;
	struct ft_merge_opts mg = { 0, 0 };
	struct ft_cli cli;
	ft_cli_begin(&cli, "ranks", argc, argv);
	const struct ft_cli_shared sh = { NULL, &mg, &mixed };
	while ((c = ft_cli_next(&cli, ":h", opts, &sh)) != -1) {
		switch (c) {
		case FT_CLI_BADVAL: goto bad;
		case JSON: json = 1; break;
		case 'h':
			fputs(ranks_usage, stdout);
			ft_cli_end(&cli);
			return 0;
		default:
			ft_cli_bad(&cli, c);
			fputs(ranks_usage, stderr);
			goto bad;
		}
	}
	if (optind >= cli.argc) {
		fputs(ranks_usage, stderr);
		goto bad;
	}
	struct ft_ranksums s = { 0 };
	struct input *in = NULL;
	int nin = 0, cap = 0, rc = 0;
	for (int i = optind; i < cli.argc && !rc; i++)
		rc = add_arg(&s, cli.argv[i], &mg, &in, &nin, &cap);
	ft_cli_end(&cli);
	if (!rc && !mixed)
		rc = one_job(&s);
	struct ft_ranks rk;
	memset(&rk, 0, sizeof rk);
	if (!rc) {
		say_duplicates(&s);
		ft_ranks_build(&rk, s.in, s.n);
		for (int j = 0; j < rk.n; j++) {
			rk.r[j].limit = s.meta[rk.r[j].proc].limit;
			rk.r[j].step_median_ns = s.meta[rk.r[j].proc].step_median_ns;
		}
		if (json)
			json_out(&rk, &s, in, nin);
		else
			text_out(&rk, &s, nin);
		if (!rk.n)
			rc = 1;
	} else {
		rc = 2;
	}
	ft_ranks_free(&rk);
	ft_ranksums_free(&s);
	for (int i = 0; i < nin; i++)
		free(in[i].name);
	free(in);
	return rc < 0 ? 2 : rc;
bad:
	ft_cli_end(&cli);
	return 2;
}
