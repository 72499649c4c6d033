/*
 * diff.c: `feedtrace diff BEFORE AFTER [--json] [-o FILE.pftrace]`: two runs
 * of one program, before and after a change: each metric with absolute and
 * relative change, findings that appeared or disappeared, one conclusion;
 * -o writes both runs into one Perfetto trace, aligned at their start.
 */
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "dump.h"
#include "report.h"

struct metric { const char *name, *key; int time; size_t off; };

#define M(name, key, time, field) { name, key, time, offsetof(struct ft_metrics, field) }
static const struct metric metrics[] = {
	M("wall time", "wall_ns", 1, wall_ns),
	M("events", "events", 0, events),
	M("kernel launches", "launches", 0, launches),
	M("submissions", "submissions", 0, submissions),
	M("launch gaps", "launch_gaps", 0, gaps),
	M("launch-gap time", "launch_gap_ns", 1, gap_ns),
	M("explicit syncs", "syncs", 0, syncs),
	M("explicit sync time", "sync_ns", 1, sync_ns),
	M("hidden syncs", "hidden_syncs", 0, hidden),
	M("hidden-sync time", "hidden_sync_ns", 1, hidden_ns),
	M("reads", "reads", 0, reads),
	M("bytes read", "read_bytes", 0, read_bytes),
	M("small reads", "small_reads", 0, small_reads),
	M("small-read bytes", "small_read_bytes", 0, small_read_bytes),
	M("module/system reads", "module_reads", 0, module_reads),
	M("small-read storms", "storms", 0, storms),
	M("lock waits", "lock_waits", 0, lock_waits),
	M("lock wait time", "lock_wait_ns", 1, lock_ns),
	M("semaphore waits", "sem_waits", 0, sem_waits),
	M("semaphore wait time", "sem_wait_ns", 1, sem_ns),
	M("dropped events", "dropped", 0, dropped),
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

static uint64_t get(const struct ft_metrics *m, const struct metric *d)
{
	return *(const uint64_t *)((const char *)m + d->off);
}

/* Findings are matched across runs by kind and what they are about (not by
 * address or stream, which differ from run to run). */
struct label { char text[160]; int kind; uint64_t n, lost; };

static int collect(const struct ft_report *r, struct label *l, int cap)
{
	int n = 0;
	for (int i = 0; i < r->nf; i++) {
		const struct ft_finding *f = &r->f[i];
		char t[160];
		switch (f->kind) {
		case FT_FK_HIDDEN: snprintf(t, sizeof t, "hidden syncs in %s%s%.*s", f->symbol,
					    *f->site ? " at " : "", (int)strcspn(f->site, "\n;"),
					    f->site); break;
		case FT_FK_LOCK: snprintf(t, sizeof t, "lock contention in %s%s%s%s%.*s", f->symbol,
					  f->lock_name ? " on " : "", f->lock_name ? f->lock_name : "",
					  *f->site ? " at " : "", (int)strcspn(f->site, "\n;"),
					  f->site); break;
		case FT_FK_STORM: snprintf(t, sizeof t, "small-read storm"); break;
		default: snprintf(t, sizeof t, "launch gaps (%s)", ft_cat_label[f->cause]); break;
		}
		int j;
		for (j = 0; j < n; j++)
			if (!strcmp(l[j].text, t))
				break;
		if (j == n) {
			if (n == cap)
				continue;
			memset(&l[n], 0, sizeof l[n]);
			snprintf(l[n].text, sizeof l[n].text, "%s", t);
			l[n].kind = f->kind;
			n++;
		}
		l[j].n += f->kind == FT_FK_HIDDEN || f->kind == FT_FK_LOCK ? f->count : 1;
		l[j].lost += f->lost_ns;
	}
	return n;
}

static const struct label *find(const struct label *l, int n, const char *t)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(l[i].text, t))
			return &l[i];
	return NULL;
}

static void fmt(char *b, size_t cap, const struct metric *d, uint64_t v)
{
	if (d->time)
		ft_fmt_ns(b, cap, v);
	else
		ft_fmt_count(b, cap, v);
}

#define MAXL 64

/* the step rows: count, mean and median step time ("-" for a run without) */
struct step_row { const char *name, *key; int time; };
static const struct step_row step_rows[] = {
	{ "steps", "steps", 0 }, { "time per step", "step_mean_ns", 1 },
	{ "median step", "step_median_ns", 1 },
};

static int step_value(const struct ft_metrics *m, int row, uint64_t *v)
{
	if (!m->steps)
		return 0;
	*v = row == 0 ? m->steps : row == 1 ? m->step_ns / m->steps : m->step_median_ns;
	return 1;
}

static void json_steps(const struct ft_metrics *a, const struct ft_metrics *b)
{
	for (int i = 0; i < 3; i++) {
		uint64_t x = 0, y = 0;
		int hx = step_value(a, i, &x), hy = step_value(b, i, &y);
		fprintf(stdout, ",\"%s\":{\"before\":", step_rows[i].key);
		if (hx)
			fprintf(stdout, "%llu", (unsigned long long)x);
		else
			fputs("null", stdout);
		fputs(",\"after\":", stdout);
		if (hy)
			fprintf(stdout, "%llu", (unsigned long long)y);
		else
			fputs("null", stdout);
		if (hx && hy)
			fprintf(stdout, ",\"change\":%lld,\"relative\":", (long long)(y - x));
		else
			fputs(",\"change\":null,\"relative\":", stdout);
		if (hx && hy && x)
			fprintf(stdout, "%.4f}", ((double)y - (double)x) / (double)x);
		else
			fputs("null}", stdout);
	}
}

static void text_steps(const struct ft_metrics *a, const struct ft_metrics *b)
{
	for (int i = 0; i < 3; i++) {
		uint64_t x = 0, y = 0;
		int hx = step_value(a, i, &x), hy = step_value(b, i, &y);
		char bx[32] = "-", by[32] = "-", bc[40] = "-", br[16] = "";
		if (hx)
			(step_rows[i].time ? ft_fmt_ns : ft_fmt_count)(bx, sizeof bx, x);
		if (hy)
			(step_rows[i].time ? ft_fmt_ns : ft_fmt_count)(by, sizeof by, y);
		if (hx && hy) {
			(step_rows[i].time ? ft_fmt_ns : ft_fmt_count)(bc + 1, sizeof bc - 1,
								       x > y ? x - y : y - x);
			bc[0] = x > y ? '-' : y > x ? '+' : ' ';
			if (x)
				snprintf(br, sizeof br, "%+.0f%%",
					 100.0 * ((double)y - (double)x) / (double)x);
		}
		printf("%-22s %13s %13s %13s %8s\n", step_rows[i].name, bx, by, bc, br);
	}
}

static void wrap78(const char *s)
{
	int col = 0;
	while (*s) {
		int w = (int)strcspn(s, " ");
		if (col && col + 1 + w > 78) {
			fputc('\n', stdout);
			col = 0;
		} else if (col) {
			fputc(' ', stdout);
			col++;
		}
		fwrite(s, 1, (size_t)w, stdout);
		col += w;
		s += w;
		while (*s == ' ')
			s++;
	}
	fputc('\n', stdout);
}

int ft_cmd_diff(int argc, char **argv)
{
	const char *dirs[2] = { NULL, NULL }, *out = NULL;
	int json = 0, nd = 0;
	struct ft_an_opts o;
	ft_an_default_opts(&o);
	for (int i = 0; i < argc; i++) {
		int k = ft_an_parse_opt(&o, argc, argv, &i);
		if (k < 0)
			return 2;
		if (k)
			continue;
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (argv[i][0] != '-' && nd < 2)
			dirs[nd++] = argv[i];
		else
			nd = 3;
	}
	if (nd != 2) {
		fprintf(stderr, "usage: feedtrace diff BEFORE AFTER [--json] [-o FILE.pftrace] [options]\n%s",
			ft_an_opts_help);
		return 2;
	}
	struct ft_report r[2];
	for (int k = 0; k < 2; k++)
		if (ft_report_build(&r[k], dirs[k], &o, NULL, stderr) != 0) {
			fprintf(stderr, "feedtrace diff: %s: nothing usable\n", dirs[k]);
			if (k)
				ft_report_free(&r[0]);
			return 1;
		}
	static struct label la[MAXL], lb[MAXL];
	int na = collect(&r[0], la, MAXL), nb = collect(&r[1], lb, MAXL);
	const struct ft_metrics *a = &r[0].total, *b = &r[1].total;

	/* the conclusion: time per step when both runs mark steps, else wall
	 * time; then what went away or came */
	char concl[768];
	int len = 0;
	uint64_t wa = a->wall_ns, wb = b->wall_ns;
	int by_step = a->steps && b->steps;
	if (by_step) {
		wa = a->step_ns / a->steps;
		wb = b->step_ns / b->steps;
	}
	double rel = wa ? 100.0 * ((double)wb - (double)wa) / (double)wa : 0;
	char s1[32], s2[32];
	ft_fmt_ns(s1, sizeof s1, wa);
	ft_fmt_ns(s2, sizeof s2, wb);
	len += snprintf(concl + len, sizeof concl - (size_t)len, "%s: %s %s -> %s (%+.0f%%)",
			rel < -5 ? "Improved" : rel > 5 ? "Regressed" : "About the same",
			by_step ? "time per step" : "wall time", s1, s2, rel);
	if (by_step) {
		ft_fmt_ns(s1, sizeof s1, a->wall_ns);
		ft_fmt_ns(s2, sizeof s2, b->wall_ns);
		len += snprintf(concl + len, sizeof concl - (size_t)len,
				" over %llu and %llu steps; wall time %s -> %s",
				(unsigned long long)a->steps, (unsigned long long)b->steps, s1, s2);
	}
	int first = 1;
	for (int i = 0; i < na; i++)
		if (!find(lb, nb, la[i].text) && len < (int)sizeof concl - 200) {
			len += snprintf(concl + len, sizeof concl - (size_t)len, "%s%s", first ?
					"; gone: " : ", ", la[i].text);
			first = 0;
		}
	first = 1;
	for (int i = 0; i < nb; i++)
		if (!find(la, na, lb[i].text) && len < (int)sizeof concl - 200) {
			len += snprintf(concl + len, sizeof concl - (size_t)len, "%s%s", first ?
					"; new: " : ", ", lb[i].text);
			first = 0;
		}
	snprintf(concl + len, sizeof concl - (size_t)len, ".");

	if (json) {
		fputs("{\"schema\":\"feedtrace-diff/1\",\"before\":", stdout);
		ft_json_string(stdout, dirs[0]);
		fputs(",\"after\":", stdout);
		ft_json_string(stdout, dirs[1]);
		fputs(",\"metrics\":{", stdout);
		for (size_t i = 0; i < NMETRICS; i++) {
			uint64_t x = get(a, &metrics[i]), y = get(b, &metrics[i]);
			fprintf(stdout, "%s\"%s\":{\"before\":%llu,\"after\":%llu,\"change\":%lld,\"relative\":",
				i ? "," : "", metrics[i].key, (unsigned long long)x,
				(unsigned long long)y, (long long)(y - x));
			if (x)
				fprintf(stdout, "%.4f}", ((double)y - (double)x) / (double)x);
			else
				fputs("null}", stdout);
		}
		json_steps(a, b);
		fputc('}', stdout);
		const struct label *sets[2][2] = { { la, lb }, { lb, la } };
		int ns[2] = { na, nb };
		const char *names[2] = { "disappeared", "appeared" };
		for (int s = 0; s < 2; s++) {
			fprintf(stdout, ",\"%s\":[", names[s]);
			int n = 0;
			for (int i = 0; i < ns[s]; i++) {
				const struct label *x = &sets[s][0][i];
				if (find(sets[s][1], ns[1 - s], x->text))
					continue;
				fprintf(stdout, "%s{\"kind\":\"%s\",\"what\":", n++ ? "," : "",
					ft_fkind_key[x->kind]);
				ft_json_string(stdout, x->text);
				fprintf(stdout, ",\"count\":%llu,\"lost_ns\":%llu}",
					(unsigned long long)x->n, (unsigned long long)x->lost);
			}
			fputc(']', stdout);
		}
		fputs(",\"verdict\":{\"before\":", stdout);
		ft_json_string(stdout, r[0].procs[r[0].main].v.limit);
		fputs(",\"after\":", stdout);
		ft_json_string(stdout, r[1].procs[r[1].main].v.limit);
		fputs("},\"conclusion\":", stdout);
		ft_json_string(stdout, concl);
		fputs("}\n", stdout);
	} else {
		printf("feedtrace diff: before %s\n                after  %s\n\n", ft_fit(dirs[0], 57),
		       ft_fit(dirs[1], 57));
		printf("%-22s %13s %13s %13s %8s\n", "metric", "before", "after", "change", "rel");
		text_steps(a, b);
		for (size_t i = 0; i < NMETRICS; i++) {
			uint64_t x = get(a, &metrics[i]), y = get(b, &metrics[i]);
			char bx[32], by[32], bc[40], br[16];
			fmt(bx, sizeof bx, &metrics[i], x);
			fmt(by, sizeof by, &metrics[i], y);
			fmt(bc + 1, sizeof bc - 1, &metrics[i], x > y ? x - y : y - x);
			bc[0] = x > y ? '-' : y > x ? '+' : ' ';
			if (x)
				snprintf(br, sizeof br, "%+.0f%%", 100.0 * ((double)y - (double)x) / (double)x);
			else
				snprintf(br, sizeof br, "%s", y ? "new" : "");
			printf("%-22s %13s %13s %13s %8s\n", metrics[i].name, bx, by, bc, br);
		}
		printf("\nverdict: %s -> %s\n", r[0].procs[r[0].main].v.limit,
		       r[1].procs[r[1].main].v.limit);
		for (int i = 0; i < na; i++)
			if (!find(lb, nb, la[i].text))
				printf("disappeared: %s (%llu)\n", la[i].text, (unsigned long long)la[i].n);
		for (int i = 0; i < nb; i++)
			if (!find(la, na, lb[i].text))
				printf("appeared:    %s (%llu)\n", lb[i].text, (unsigned long long)lb[i].n);
		fputc('\n', stdout);
		wrap78(concl);
	}

	int rc = 0;
	struct ft_outfile of;
	if (out && ft_out_open(&of, out, "diff") != 0)
		rc = 1;
	else if (out) {
		pf_writer *w = pf_open(ft_out_path(&of));
		if (!w) {
			perror(out);
			ft_out_close(&of, 0);
			rc = 1;
		} else {
			struct ft_conv_opts co;
			struct ft_conv_stats st;
			memset(&co, 0, sizeof co);
			memset(&st, 0, sizeof st);
			co.an = o;
			ft_conv_clock(w, &r[0].tr);
			co.label = "before: ";
			ft_conv_trace(w, &r[0].tr, &co, stderr, &st);
			co.label = "after: ";
			co.ts_shift = (int64_t)r[0].tr.start_ns - (int64_t)r[1].tr.start_ns;
			co.pid_add = 1 << 22;          /* above any pid_max: runs never merge */
			ft_conv_trace(w, &r[1].tr, &co, stderr, &st);
			if (pf_close(w) != 0) {
				fprintf(stderr, "feedtrace diff: %s: write failed\n", out);
				rc = 1;
			}
			if (ft_out_close(&of, !rc) != 0)
				rc = 1;
		}
	}
	ft_report_free(&r[0]);
	ft_report_free(&r[1]);
	return rc;
}
