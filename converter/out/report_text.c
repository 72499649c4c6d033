/*
 * report_text.c: the report of a run (`feedtrace report`) in 80 columns:
 * the run, its losses and steps, the verdict, the process tree, the
 * findings ranked by time lost and the top call sites, all read from the
 * model (report_model.c) and its words (words.c); the same as JSON:
 * report_json.c. Also ft_report_build, the model with its words, and the
 * report `feedtrace run` prints. The command and its options are
 * cmd_report.c's.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "phases.h"
#include "problems.h"
#include "report.h"
#include "ranksum.h"
#include "gpu_measured.h"
#include "roles.h"
#include "steps.h"
#include "stepfigs.h"
#include "symbolize.h"
#include "words.h"

/* ---- losses ----
 * What the recorder counted but could not record (reader.h's ft_loss,
 * summed by ft_report_loss): one line per kind with what to change (not
 * wrapped: one line each); in JSON, "losses" with every kind (0 when none). */
/* the capture window's line (words.c), when the main process has one */
static void report_window(const struct ft_report *r, FILE *out)
{
	char w[200];
	if (ft_words_capture(r->tr.procs[r->main], w, sizeof w))
		fprintf(out, "  capture window: %s\n", w);
}

/* a LOST line per kind of loss the run had */
static void report_losses(const struct ft_report *r, FILE *out)
{
	for (int k = 0; k < FT_LOSS_N; k++) {
		int procs = 0;
		uint64_t n = ft_report_loss(r, (enum ft_loss)k, &procs);
		if (!n)
			continue;
		fprintf(out, "  LOST %llu %s", (unsigned long long)n, ft_loss_info[k].what);
		if (r->tr.nprocs > 1)
			fprintf(out, " (%d of %d processes)", procs, r->tr.nprocs);
		fprintf(out, ": %s\n", ft_loss_info[k].fix);
	}
}

/* ---- text ---- */

/* The process tree as print_tree walks it, made once: each image's exec
 * successor (same pid, the next start), the images each one replaced, and
 * each one's children that no exec replaced, all in process order (each
 * list in CSR form: the entries of i are x[at[i]] .. x[at[i + 1] - 1]).
 * A lookup over every process for every process at every position made
 * the text report cubic in the number of processes. */
struct tree {
	int *succ;
	int *pred_at, *pred;
	int *kid_at, *kid;
};

static int by_pid_start(const void *x, const void *y, void *arg)
{
	const struct ft_rep_proc *p = arg;
	const struct ft_rep_proc *a = &p[*(const int *)x], *b = &p[*(const int *)y];
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

/* x[at[i]..] lists, for each i, the k (in order) whose key[k] is i */
static void csr(int n, const int *key, int **at_out, int **x_out)
{
	int *at = ft_xcalloc((size_t)n + 1, sizeof *at), *x = ft_xmalloc(((size_t)n + 1) * sizeof *x);
	for (int k = 0; k < n; k++)
		if (key[k] >= 0)
			at[key[k] + 1]++;
	for (int i = 0; i < n; i++)
		at[i + 1] += at[i];
	int *fill = ft_xmalloc(((size_t)n + 1) * sizeof *fill);
	memcpy(fill, at, (size_t)n * sizeof *fill);
	for (int k = 0; k < n; k++)
		if (key[k] >= 0)
			x[fill[key[k]]++] = k;
	free(fill);
	*at_out = at, *x_out = x;
}

static void tree_make(const struct ft_report *r, struct tree *t)
{
	int n = r->nprocs;
	int *o = ft_xmalloc(((size_t)n + 1) * sizeof *o), *key = ft_xmalloc(((size_t)n + 1) * sizeof *key);
	t->succ = ft_xmalloc(((size_t)n + 1) * sizeof *t->succ);
	for (int i = 0; i < n; i++)
		o[i] = i;
	qsort_r(o, (size_t)n, sizeof *o, by_pid_start, r->procs);
	for (int p = 0, q = 0; p < n; p++) {    /* q: the first later start of p's pid */
		const struct ft_rep_proc *a = &r->procs[o[p]];
		if (q <= p)
			q = p + 1;
		while (q < n && r->procs[o[q]].pid == a->pid && r->procs[o[q]].start == a->start)
			q++;
		t->succ[o[p]] = q < n && r->procs[o[q]].pid == a->pid ? o[q] : -1;
	}
	csr(n, t->succ, &t->pred_at, &t->pred);
	for (int k = 0; k < n; k++)
		key[k] = t->succ[k] < 0 ? r->procs[k].parent : -1;
	csr(n, key, &t->kid_at, &t->kid);
	free(o);
	free(key);
}

static void tree_free(struct tree *t)
{
	free(t->succ);
	free(t->pred_at);
	free(t->pred);
	free(t->kid_at);
	free(t->kid);
}

/* process i and its children, indented by depth: one line per image; an
 * image replaced by exec is named on its successor's line ("(exec'd from
 * timeout ...)") instead of its own */
static void print_tree(const struct ft_report *r, const struct tree *t, int i, int d, FILE *out)
{
	char cmd[72], from[72] = "";
	ft_brief_command(r->procs[i].cmdline, cmd, sizeof cmd);
	if (t->pred_at[i] < t->pred_at[i + 1])
		ft_brief_command(r->procs[t->pred[t->pred_at[i]]].cmdline, from, sizeof from);
	char rk[40];                                   /* "rank 1/4 " */
	int rkn = ft_rank_text(r->tr.procs[i], rk, sizeof rk - 1);
	if (rkn)
		strcat(rk, " "), rkn++;
	int ind = 2 * (d < 8 ? d + 1 : 9);
	int room = 78 - 2 - ind - snprintf(NULL, 0, "%d", r->procs[i].pid) - 8 - rkn;
	int fw = *from ? 12 : 0;                       /* "timeout 100 " */
	int cw = room - (*from ? fw + 15 : 0);
	if (cw > 48)
		cw = 48;
	fprintf(out, "  %*s%d %-6s %s%.*s%s%.*s%s\n", ind, "", r->procs[i].pid,
		ft_proc_role_name(r->procs[i].role), rk, cw > 8 ? cw : 8, cmd, *from ? " (exec'd from " : "", fw, from,
		*from ? ")" : "");
	if (d >= 16)
		return;
	for (int j = t->kid_at[i]; j < t->kid_at[i + 1]; j++)
		print_tree(r, t, t->kid[j], d + 1, out);
	/* the children of images this one replaced */
	for (int j = t->pred_at[i]; j < t->pred_at[i + 1]; j++) {
		int x = t->pred[j];
		for (int m = t->kid_at[x]; m < t->kid_at[x + 1]; m++)
			print_tree(r, t, t->kid[m], d + 1, out);
	}
}

/* Ranks of a job that made no collective feedtrace records (MPI's, or
 * gloo built into the program rather than loaded as libgloo): nothing to
 * compare, said so, since each rank's waits for the others then read as
 * waits for data or for other threads. */
static int by_int32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	return (a > b) - (a < b);
}

static void report_ranks_unmatched(const struct ft_report *r, FILE *out)
{
	if (r->ranks.n)
		return;
	int32_t world = 0, *rank = ft_xmalloc((size_t)(r->nprocs ? r->nprocs : 1) * sizeof *rank);
	int k = 0, n = 0;
	for (int i = 0; i < r->nprocs; i++) {
		const struct ft_file_header *h = &r->tr.procs[i]->hdr;
		if (h->world_size >= 2 && h->rank >= 0)
			world = h->world_size, rank[k++] = h->rank;
	}
	qsort(rank, (size_t)k, sizeof *rank, by_int32);
	for (int i = 0; i < k; i++)          /* distinct ranks (workers share theirs) */
		n += !i || rank[i] != rank[i - 1];
	free(rank);
	if (n < 2)
		return;
	char line[400];
	snprintf(line, sizeof line, "%d of %d here, and no collective was recorded (NCCL's and "
		 "libgloo's are; MPI's are not): the ranks are not compared. A rank that waits for "
		 "the others in a collective not recorded shows those waits as waits for another "
		 "thread or for data in its own verdict.", n, world);
	fputs("Ranks:", out);
	ft_wrap_from(out, line, 7, 7 + 1);
	fputc('\n', out);
}

/* the workers' file reads per step of the verdict's window */
static double worker_reads_per_step(const struct ft_report *r)
{
	uint64_t steps = r->rv.window_steps;
	return steps ? (double)r->rv.worker_reads / (double)steps : 0;
}

/* one line per DataLoader phase of the main process */
static void phases_text(const struct ft_phases_sum *ph, FILE *out)
{
	if (!ph || !ph->nall)
		return;
	char line[320], t[32];
	snprintf(line, sizeof line, "phases (DataLoader iterations of thread %d; train: the loop "
		 "steps an optimizer):", ph->tid);
	ft_wrap(out, line, 2);
	for (int i = 0; i < ph->n; i++) {
		const struct ft_phase *p = &ph->ph[i];
		char steps[40] = "";
		if (p->steps)
			snprintf(steps, sizeof steps, "%llu step%s, ", (unsigned long long)p->steps,
				 p->steps == 1 ? "" : "s");
		ft_fmt_ns(t, sizeof t, p->end - p->start);
		snprintf(line, sizeof line, "%-5s loader %u %s, %u worker%s: %s%llu batch%s, %s, "
			 "data wait %.0f%%", ft_phase_kind(p), p->loader,
			 *p->dataset ? p->dataset : "?", p->workers, p->workers == 1 ? "" : "s", steps,
			 (unsigned long long)p->batches, p->batches == 1 ? "" : "es", t,
			 100 * ft_phase_data_wait(p));
		ft_wrap(out, line, 4);
	}
	if (ph->nall > (uint64_t)ph->n) {
		uint64_t tr = ph->ntrain;
		for (int i = 0; i < ph->n; i++)
			tr -= ph->ph[i].train != 0;
		snprintf(line, sizeof line, "and %llu more (%llu train, %llu eval)",
			 (unsigned long long)(ph->nall - (uint64_t)ph->n), (unsigned long long)tr,
			 (unsigned long long)(ph->nall - (uint64_t)ph->n - tr));
		ft_wrap(out, line, 4);
	}
}

void ft_report_text(const struct ft_report *r, FILE *out)
{
	char a[48], b[48], c[48], line[320];
	const struct ft_metrics *t = &r->total;
	ft_fmt_count(a, sizeof a, t->events);
	ft_fmt_ns(b, sizeof b, t->wall_ns);
	const struct ft_process *mainp = r->tr.procs[r->main];
	int sig = mainp->has_end && mainp->end.reason == FT_END_SIGNAL ? mainp->end.status : 0;
	const char *sname = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;
	fprintf(out, "feedtrace report: %s", ft_fit(r->dir, sig ? 30 : 60));
	/* a run cut short is judged on what it did before: said first */
	if (sig)
		fprintf(out, " INTERRUPTED (killed by SIG%s)",
			sname ? sname : "?");
	fputc('\n', out);
	fprintf(out, "  %d process%s, %llu thread%s, %s events over %s", r->nprocs,
		r->nprocs == 1 ? "" : "es", (unsigned long long)t->threads,
		t->threads == 1 ? "" : "s", a, b);
	if (t->dropped)
		fprintf(out, "; %llu DROPPED", (unsigned long long)t->dropped);
	if (r->tr.errors)
		fprintf(out, "; %llu damaged places", (unsigned long long)r->tr.errors);
	fputc('\n', out);
	report_window(r, out);
	if (ft_words_flight(mainp, line, sizeof line))
		ft_wrap(out, line, 2);
	report_losses(r, out);
	if (t->steps) {
		ft_fmt_ns(a, sizeof a, t->step_ns / t->steps);
		ft_fmt_ns(b, sizeof b, t->step_median_ns);
		if (t->steps_from_optimizer) {
			snprintf(line, sizeof line, "%llu steps (no \"%.20s\" ranges: one per optimizer "
				 "step of the training phases, thread %d of the main process), mean %s, "
				 "median %s", (unsigned long long)t->steps, r->step_range,
				 r->procs[r->main].v.phases ? r->procs[r->main].v.phases->tid : 0, a, b);
		} else if (t->steps_from_batches) {
			int32_t tid = r->procs[r->main].v.batch_tid;
			char who[64];
			ft_thread_label(r->tr.procs[r->main], tid, who, sizeof who);
			snprintf(line, sizeof line, "%llu steps (no \"%.20s\" ranges: one per batch "
				 "received by %s (tid %d) of the main process), mean %s, median %s",
				 (unsigned long long)t->steps, r->step_range, who, tid, a, b);
		} else {
			/* a job of ranks: the steps of every process that has them */
			int np = 0, same = 1;
			uint64_t first = 0;
			for (int i = 0; i < r->nprocs; i++)
				if (r->procs[i].m.steps) {
					if (!np++)
						first = r->procs[i].m.steps;
					same &= r->procs[i].m.steps == first;
				}
			char in[64] = "";
			if (np > 1 && same)
				snprintf(in, sizeof in, ", %llu in each of %d processes",
					 (unsigned long long)first, np);
			else if (np > 1)
				snprintf(in, sizeof in, " of %d processes", np);
			snprintf(line, sizeof line, "%llu steps (\"%.20s\" ranges%s), mean %s, median %s",
				 (unsigned long long)t->steps, r->step_range, in, a, b);
		}
		ft_wrap(out, line, 2);
		int n = snprintf(line, sizeof line, "per step: %.1f launches, %.1f hidden syncs, "
				 "%.1f reads", ft_per_step(t, t->step_launches),
				 ft_per_step(t, t->step_hidden), ft_per_step(t, t->step_reads));
		if (r->rv.worker_reads)
			snprintf(line + n, sizeof line - (size_t)n, "; %.1f file reads in the "
				 "loader workers", worker_reads_per_step(r));
		ft_wrap(out, line, 2);
	}
	phases_text(r->procs[r->main].v.phases, out);
	fputc('\n', out);

	ft_ranks_text(&r->ranks, out, "The verdict below is about it.");
	report_ranks_unmatched(r, out);
	const struct ft_rep_proc *mp = &r->procs[r->main];
	const struct ft_verdict *v = &mp->v;
	const struct ft_run_verdict *rv = &r->rv;
	fputs("Verdict:", out);
	ft_wrap_from(out, rv->process, 9, 9 + 1);        /* wraps under the process */
	ft_wrap(out, v->sentence, 2);
	if (*rv->detail)
		ft_wrap(out, rv->detail, 2);
	/* one line of evidence */
	if (v->by_launch && v->basis == FT_BASIS_GPU_IDLE) {
		ft_fmt_ns(a, sizeof a, v->idle_ns);
		ft_fmt_ns(b, sizeof b, rv->w1 - rv->w0);
		int n = snprintf(line, sizeof line, "evidence: GPU idle %s of the %s loop%s", a, b,
				 v->gpu_measured ? " (measured)" : "");
		int k1 = -1, k2 = -1;
		for (int k = 0; k < FT_CAT_N; k++)
			if (v->idle_by_feed[k] && (k1 < 0 || v->idle_by_feed[k] > v->idle_by_feed[k1]))
				k1 = k;
		for (int k = 0; k < FT_CAT_N; k++)
			if (k != k1 && v->idle_by_feed[k] &&
			    (k2 < 0 || v->idle_by_feed[k] > v->idle_by_feed[k2]))
				k2 = k;
		for (int j = 0, k = k1; j < 2 && k >= 0; j++, k = k2) {
			ft_fmt_ns(c, sizeof c, v->idle_by_feed[k]);
			n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %s", j ? "," : ":",
				      ft_cat_label[k], c);
		}
		ft_wrap(out, line, 2);
	} else if (v->nfeeders) {
		int n = snprintf(line, sizeof line, "evidence: the feeding thread%s",
				 v->nfeeders > 1 ? "s'" : "'s");
		n += snprintf(line + n, sizeof line - (size_t)n, " time in the %s window:",
			      ft_from_name(rv->from));
		ft_wrap(out, line, 2);
		int col = 0;
		const struct ft_file_header *mh = &r->tr.procs[r->main]->hdr;
		for (int k = 0; k < FT_CAT_N; k++) {
			/* waiting for other ranks: shown for a rank, or when there was some */
			if (k == FT_CAT_RANKS && !v->t[k] && !mh->world_size)
				continue;
			double pc = v->wall_ns ? 100.0 * (double)v->t[k] / (double)v->wall_ns : 0;
			/* waiting for a core: when the samples show some that
			 * its one decimal can say */
			if (k == FT_CAT_RUNQ && pc < 0.05)
				continue;
			int m = snprintf(line, sizeof line, "%s %.1f%%", ft_cat_label[k], pc);
			if (col + m + 3 > 78) {
				fputc('\n', out);
				col = 0;
			}
			col += fprintf(out, "%s%s", col ? "   " : "    ", line);
		}
		fputc('\n', out);
	}
	if (v->by_launch) {             /* the device's idle: measured, or the model's */
		ft_words_gpu_idle(v, rv->w1 - rv->w0, line, sizeof line);
		ft_wrap(out, line, 2);
	}
	if (ft_words_data_wait_step(rv, v, line, sizeof line))
		ft_wrap(out, line, 2);
	if (rv->startup_ns && rv->from != FT_FROM_WHOLE) {
		ft_fmt_ns(a, sizeof a, rv->startup_ns);
		int n;
		/* a flight recorder's window starts mid-run: no start-up in it */
		const char *before = r->tr.procs[r->main]->nflight ? "window's start" : "start-up";
		if (rv->warmup_steps) {
			ft_fmt_ns(b, sizeof b, rv->warmup_ns);
			n = snprintf(line, sizeof line, "%s %s before the window, with %llu "
				     "warm-up step%s (%s, each over %dx the median step)", before, a,
				     (unsigned long long)rv->warmup_steps,
				     rv->warmup_steps > 1 ? "s" : "", b, FT_WARMUP_X);
		} else if (rv->launches_before) {
			n = snprintf(line, sizeof line, "%s %s before the loop's first launch, "
				     "with %llu launch%s before a pause (set-up)", before, a,
				     (unsigned long long)rv->launches_before,
				     rv->launches_before > 1 ? "es" : "");
		} else {
			n = snprintf(line, sizeof line, "%s %s before the %s", before, a,
				     rv->from == FT_FROM_STEPS ? "first step" : ft_from_name(rv->from));
		}
		int k = 0;
		for (int c2 = 0; c2 < FT_CAT_N; c2++)
			if (rv->startup[c2] * 20 >= rv->startup_ns && rv->startup[c2]) {
				ft_fmt_ns(b, sizeof b, rv->startup[c2]);
				n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %s",
					      k++ ? "," : ":", ft_cat_label[c2], b);
			}
		ft_wrap(out, line, 2);
	}
	if (r->nprocs > 1) {
		fputs("  processes:\n", out);
		struct tree t;
		tree_make(r, &t);
		for (int i = 0; i < r->nprocs; i++)
			if (r->procs[i].parent < 0)
				print_tree(r, &t, i, 0, out);
		tree_free(&t);
	}
	fputc('\n', out);

	char mapped[1024];
	ft_words_mapped(&r->mapped, mapped, sizeof mapped);
	if (*mapped) {
		fputs("Mapped data\n", out);
		ft_wrap(out, mapped, 2);
		fputc('\n', out);
	}
	if (t->io_uring_rings) {
		int n = snprintf(line, sizeof line, "%llu io_uring ring%s set up (process",
				 (unsigned long long)t->io_uring_rings,
				 t->io_uring_rings == 1 ? "" : "s");
		for (int i = 0, k = 0; i < r->nprocs && n < (int)sizeof line - 80; i++)
			if (r->procs[i].m.io_uring_rings)
				n += snprintf(line + n, sizeof line - (size_t)n, "%s %d",
					      k++ ? "," : "", r->procs[i].pid);
		snprintf(line + n, sizeof line - (size_t)n, "): the reads submitted through "
			 "io_uring are not traced: this report's file I/O leaves them out.");
		fputs("io_uring\n", out);
		ft_wrap(out, line, 2);
		fputc('\n', out);
	}

	/* one row per problem, each with its suggestion (problems.c) */
	struct ft_problem *pb;
	int npb = ft_problems(r, &pb);
	fprintf(out, "Findings, by time the feed lost (%d", npb);
	if (r->gaps_left_out)
		fprintf(out, "; %llu shorter launch gaps left out", (unsigned long long)r->gaps_left_out);
	fputs(")\n", out);
	if (!npb)
		fputs("  none\n", out);
	int shown_pb = ft_problems_shown(r, pb, npb);
	uint64_t negligible = rv->w1 > rv->w0 ? (rv->w1 - rv->w0) / 1000 : 0;
	for (int i = 0; i < shown_pb; i++) {
		const struct ft_problem *p = &pb[i];
		ft_fmt_ns(a, sizeof a, p->lost_ns);
		if (r->nprocs > 1 && p->nprocs == 1)
			snprintf(c, sizeof c, "%d", p->pid);
		else
			c[0] = 0;
		int col = fprintf(out, "%3d %9s  %-16s %s%s", i + 1, a, p->kind, c, *c ? " " : "");
		ft_wrap_from(out, p->what, 31, col);
		if (p->suggestion && *p->suggestion) {
			snprintf(line, sizeof line, "-> %s", p->suggestion);
			ft_wrap(out, line, 31);
		}
	}
	if (npb > shown_pb && ft_problem_rank_ns(&pb[shown_pb]) < negligible)
		fprintf(out, "  %s%d smaller, each under 0.1%% of the %s (--json lists them all)\n",
			shown_pb ? "... " : "", npb - shown_pb,
			rv->from == FT_FROM_WHOLE ? "run" : "loop");
	else if (npb > shown_pb)
		fprintf(out, "  ... %d smaller (--json lists them all)\n", npb - shown_pb);
	free(pb);
	struct ft_rowctx rc;
	ft_rowctx_of(r, &rc);
	for (int k = 0; k < FT_FK_N; k++)
		if (ft_fkinds[k]->summary && ft_fkinds[k]->summary(&rc, t, line, sizeof line))
			ft_wrap(out, line, 2);
	fputc('\n', out);

	fputs("Top call sites (hidden syncs and contended locks)\n", out);
	int shown = 0;
	for (int i = 0; i < r->nf && shown < 10; i++) {
		const struct ft_finding *f = &r->f[i];
		if (!ft_fkind(f)->site)
			continue;
		if (!shown++)
			fprintf(out, "  %8s %9s %9s  %s\n", "calls", "total", "max", "site");
		ft_fmt_ns(a, sizeof a, f->total_ns);
		ft_fmt_ns(b, sizeof b, f->max_ns);
		ft_fmt_count(c, sizeof c, f->count);
		ft_fkind(f)->site(f, line, sizeof line);
		/* the site in full: it says where to change the code */
		fprintf(out, "  %8s %9s %9s  %s\n", c, a, b, line);
	}
	if (!shown)
		fputs("  none\n", out);
	ft_symbols_print_notes(out, "  note: ");
}

/* ---- commands ---- */

int ft_report_build(struct ft_report *r, const char *dir, const struct ft_an_opts *o,
		    const struct ft_merge_opts *mg, FILE *err)
{
	if (ft_report_model_build(r, dir, o, mg, err) != 0)
		return -1;
	ft_words_report(r);
	return 0;
}

int ft_report_print(const char *dir, FILE *out)
{
	struct ft_report r;
	struct ft_an_opts o;
	ft_an_default_opts(&o);
	if (ft_report_build(&r, dir, &o, NULL, stderr) != 0)
		return 1;
	ft_report_text(&r, out);
	ft_report_free(&r);
	return 0;
}
