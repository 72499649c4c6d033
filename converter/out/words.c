/*
 * words.c: the English of the model's decisions (words.h): the verdict's
 * sentence from what verdict.c decided (its say, its limit) and the
 * verdict's own figures (a CPU loop's from its phases, phases.c); the run verdict's detail from what report_model.c
 * decided (detail_say, data_cause, the flags) and the producers' figures;
 * the run verdict's process; all three for a decided run at once
 * (ft_words_report); the mapped-data finding from what mapped.c
 * counted; the GPU's idle line from what gpu_measured.c measured; a
 * process's capture window and flight recorder's window; a diff's
 * findings and its conclusion from what diff.c decided it credits.
 * Shares are worded as whole percentages.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fkind.h"
#include "gpu_measured.h"
#include "phases.h"
#include "roles.h"
#include "stats.h"
#include "util.h"
#include "words.h"

/* the end of a "locks" sentence into buf: when the feeding threads' lock
 * time is mostly waits for CPython's GIL, which lock and what to change */
static const char *gil_words(const struct ft_verdict *v, double wall, char *buf, size_t cap)
{
	if (!v->gil_ns || v->gil_ns * 2 < v->t[FT_CAT_LOCK])
		return ".";
	snprintf(buf, cap, ", %.0f%% for the Python GIL (other threads run Python meanwhile): "
		 "move their work into worker processes.", 100 * (double)v->gil_ns / wall);
	return buf;
}

/* "he loop waits for data 61% of each step: the main process loads it
 * itself (num_workers=0), ...: use DataLoader workers (...)." (the caller
 * writes the "T" or "; t" before it) */
static void self_loading_words(const struct ft_phases_sum *ph, char *out, size_t cap)
{
	double d = ft_phases_data_wait(ph);
	/* the main process loads its own data: its file I/O, and the CPU (the rest) */
	double io = ph->next_ns ? (double)ph->io_ns / (double)ph->next_ns : 0;
	/* workers that each take the loading time L per batch keep a step of
	 * compute C fed when n >= L / C */
	unsigned n = d >= 0.94 ? 16 : (unsigned)(d / (1 - d) + 0.999);
	if (n < 1)
		n = 1;
	snprintf(out, cap, "he loop waits for data %.0f%% of each "
		 "step: the main process loads it itself (num_workers=0), mostly %s in %s "
		 "(file I/O %.0f%%, CPU %.0f%% of each step): use DataLoader workers "
		 "(num_workers=%u or more).", 100 * d, io >= 0.5 ? "in file I/O" : "on the CPU",
		 *ph->getitem ? ph->getitem : "the dataset", 100 * d * io, 100 * d * (1 - io), n);
}

/* FT_SAY_NOGPU_PHASES: the loop's own clock (phases.c's limit) */
static void phases_words(const struct ft_phases_sum *ph, enum ft_limit limit, char *out,
			 size_t cap)
{
	double d = ft_phases_data_wait(ph);
	if (limit == FT_LIMIT_NONE)
		snprintf(out, cap, "No GPU work was recorded and the data feed keeps up: the "
			 "loop waits for data %.0f%% of each step (time in the DataLoader's "
			 "__next__).", 100 * d);
	else if (ph->workers)
		snprintf(out, cap, "No GPU work was recorded; the loop waits for data %.0f%% of "
			 "each step (time in the DataLoader's __next__): its %u DataLoader worker%s "
			 "do%s not keep up.", 100 * d, ph->workers, ph->workers == 1 ? "" : "s",
			 ph->workers == 1 ? "es" : "");
	else {
		snprintf(out, cap, "No GPU work was recorded; t");
		self_loading_words(ph, out + strlen(out), cap - strlen(out));
	}
}

void ft_words_verdict(const struct ft_verdict *v, char *out, size_t cap)
{
	double w = v->wall_ns ? (double)v->wall_ns : 1.0;
	double sh[FT_CAT_N];
	for (int c = 0; c < FT_CAT_N; c++)
		sh[c] = (double)v->t[c] / w;
	double data = sh[FT_CAT_IO] + sh[FT_CAT_DATA], sync = sh[FT_CAT_HIDDEN];
	double locks = sh[FT_CAT_LOCK], ranks = sh[FT_CAT_RANKS], gpu = sh[FT_CAT_GPU_WAIT];
	double win = v->win_end > v->win_start ? (double)(v->win_end - v->win_start) : 1.0;
	double idle = (double)v->idle_ns / win, held = (double)v->lock_union / win;
	const char *who = v->nfeeders > 1 ? "the feeding threads spend" : "the feeding thread spends";
	const char *how = v->gpu_measured ? " (measured)" : "";
	char gw[160];
	*out = 0;
	switch (v->say) {
	case FT_SAY_UNSET:
		break;
	case FT_SAY_NOTHING:
		snprintf(out, cap, "No GPU work and no data feed was recorded: nothing to limit.");
		break;
	case FT_SAY_NOGPU_RANKS:
		snprintf(out, cap,
			 "No GPU work was recorded; the process waits for other ranks: %s "
			 "%.0f%% of the time in collectives and %.0f%% waiting for data. The "
			 "last rank to arrive sets the pace: with every rank traced, the Ranks "
			 "block names it.",
			 who, 100 * ranks, 100 * data);
		break;
	case FT_SAY_NOGPU_PHASES:
		phases_words(v->phases, v->limit, out, cap);
		break;
	case FT_SAY_NOGPU_DATA:
		snprintf(out, cap,
			 "No GPU work was recorded; the process is limited by data delivery: "
			 "%s %.0f%% of the time waiting for data and %.0f%% in file I/O.",
			 who, 100 * sh[FT_CAT_DATA], 100 * sh[FT_CAT_IO]);
		break;
	case FT_SAY_NOGPU_LOCKS:
		snprintf(out, cap,
			 "No GPU work was recorded; the process is limited by locks: %s "
			 "%.0f%% of the time waiting on locks%s", who, 100 * locks,
			 gil_words(v, w, gw, sizeof gw));
		break;
	case FT_SAY_NOGPU_NONE:
		snprintf(out, cap,
			 "No GPU work was recorded and the data feed keeps up: the loop is the "
			 "limit (%s %.0f%% of the time waiting for data).", who, 100 * data);
		break;
	case FT_SAY_LOCK_TURNS:
		snprintf(out, cap,
			 "The GPU feed is limited by locks: the launching threads take turns on a "
			 "lock (one of them waits %.0f%% of the loop; %s %.0f%% of the time "
			 "waiting on locks).", 100 * held, who, 100 * locks);
		break;
	case FT_SAY_STREAM_SYNCS:
		snprintf(out, cap,
			 "The GPU feed is limited by synchronization: each feeding thread's "
			 "stream idles %.0f%% of its time behind its syncs, though the device, "
			 "all streams together, is busy %.0f%% of the loop%s (kernels of different "
			 "streams overlap when they fit).", 100 * v->said_share, 100 * (1 - idle), how);
		break;
	case FT_SAY_GPU_BUSY:
		snprintf(out, cap,
			 "The GPU is the limit: it is busy %.0f%% of the loop%s and the feed keeps "
			 "up (%s %.0f%% of the time waiting for the GPU).", 100 * (1 - idle), how,
			 who, 100 * (gpu + sync));
		break;
	case FT_SAY_GPU_IDLE:
		snprintf(out, cap,
			 "The GPU feed is limited by %s: the GPU idles %.0f%% of the loop%s, and "
			 "the streams idle %.0f%% of their time because of it.", ft_limit_name(v->limit),
			 100 * idle, how, 100 * v->said_share);
		break;
	case FT_SAY_GPU_WAIT:
		snprintf(out, cap,
			 "The GPU is the limit: %s %.0f%% of the time waiting for the GPU and little "
			 "else.", who, 100 * gpu);
		break;
	case FT_SAY_DATA:
		snprintf(out, cap,
			 "The GPU feed is limited by data delivery: %s %.0f%% of the time waiting "
			 "for data and %.0f%% in file I/O.", who, 100 * sh[FT_CAT_DATA], 100 * sh[FT_CAT_IO]);
		break;
	case FT_SAY_SYNC:
		snprintf(out, cap,
			 "The GPU feed is limited by synchronization: %s %.0f%% of the time in "
			 "hidden syncs the program did not ask for.", who, 100 * sync);
		break;
	case FT_SAY_LOCKS:
		snprintf(out, cap,
			 "The GPU feed is limited by locks: %s %.0f%% of the time waiting on locks%s",
			 who, 100 * locks, gil_words(v, w, gw, sizeof gw));
		break;
	case FT_SAY_RANKS:
		snprintf(out, cap,
			 "The GPU feed waits for other ranks: %s %.0f%% of the time in collectives. "
			 "The last rank to arrive sets the pace: with every rank traced, the Ranks "
			 "block names it.",
			 who, 100 * ranks);
		break;
	case FT_SAY_SUBMISSION: {
		char rq[64] = "";
		if (sh[FT_CAT_RUNQ] >= 0.005)
			snprintf(rq, sizeof rq, " (and %.0f%% runnable, waiting for a core)",
				 100 * sh[FT_CAT_RUNQ]);
		snprintf(out, cap,
			 "The GPU feed is limited by work submission: %s %.0f%% of the time on the "
			 "CPU between launches%s and %.0f%% submitting, while the GPU waits for work.",
			 who, 100 * sh[FT_CAT_CPU], rq, 100 * sh[FT_CAT_SUBMIT]);
		break;
	}
	}
}

/* "2 workers and 1 loader thread": rv's producers by kind */
static void producers_who(const struct ft_run_verdict *rv, int *nw, char *who, size_t cap)
{
	*nw = 0;
	for (int i = 0; i < rv->nprod; i++)
		*nw += rv->prod[i].role == FT_PROD_WORKER;
	int nl = rv->nprod - *nw;
	char lt[32] = "";
	if (nl)
		snprintf(lt, sizeof lt, "%d loader thread%s", nl, nl == 1 ? "" : "s");
	if (*nw)
		snprintf(who, cap, "%d worker%s%s%s", *nw, *nw == 1 ? "" : "s", nl ? " and " : "", lt);
	else
		snprintf(who, cap, "%s", lt);
}

/* FT_DETAIL_SLACK: the producers wait for the loop */
static void slack_words(const struct ft_run_verdict *rv, char *out, size_t cap)
{
	uint64_t wall = 0, idle = 0, hand = 0;
	for (int i = 0; i < rv->nprod; i++) {
		wall += rv->prod[i].wall, idle += rv->prod[i].idle - rv->prod[i].runq;
		hand += rv->prod[i].handover;
	}
	char who[64], hw[96] = "";
	int nw;
	producers_who(rv, &nw, who, sizeof who);
	if (hand * 5 >= wall)
		snprintf(hw, sizeof hw, ", %.0f%% blocked handing batches over (pipe writes: the "
			 "pipe is full)", 100 * (double)hand / (double)wall);
	snprintf(out, cap, "The %s wait%s for the loop %.0f%% of %s time%s: "
		 "a full queue or pipe, each batch handed over when the loop takes one. "
		 "More or faster producers do not help; a faster step does.", who,
		 rv->nprod == 1 ? "s" : "", 100 * (double)idle / (double)wall,
		 rv->nprod == 1 ? "its" : "their", hw);
}


/* the words of a run's model, once report_model.c decided it: every
 * process's verdict sentence, the run verdict's detail (the main
 * process's verdict) and the process (with its workers and loaders) */
void ft_words_report(struct ft_report *r)
{
	for (int i = 0; i < r->nprocs; i++)
		ft_words_verdict(&r->procs[i].v, r->procs[i].v.sentence,
				 sizeof r->procs[i].v.sentence);
	if (!r->nprocs)
		return;
	struct ft_run_verdict *rv = &r->rv;
	struct ft_rep_proc *mp = &r->procs[r->main];
	const struct ft_verdict *v = &mp->v;
	/* roles */
	int nworkers = 0, allpy = ft_is_python(mp->cmdline);
	for (int i = 0; i < r->nprocs; i++)
		if (ft_report_main_worker(r, i))
			nworkers++, allpy &= ft_is_python(r->procs[i].cmdline);
	ft_words_detail(rv, v, &r->mapped, rv->detail, sizeof rv->detail);
	/* the process in words, from its parts */
	int32_t *wk = ft_xcalloc(nworkers ? (size_t)nworkers : 1, sizeof *wk);
	int k = 0;
	for (int i = 0; i < r->nprocs; i++)
		if (ft_report_main_worker(r, i))
			wk[k++] = r->procs[i].pid;
	int nl = 0;
	for (int i = 0; i < rv->nprod; i++)
		nl += rv->prod[i].role == FT_PROD_LOADER;
	const struct ft_file_header *h = &r->tr.procs[r->main]->hdr;
	struct ft_proc_words said = { r->ranks.straggler >= 0, h->rank, h->world_size, mp->pid,
				    mp->cmdline, wk, nworkers, allpy, nl };
	ft_words_process(&said, rv->process, sizeof rv->process);
	free(wk);
}

/* FT_DETAIL_PRODUCERS: what the producers did, by the data cause */
static void producers_words(const struct ft_run_verdict *rv, const struct ft_mapped *m,
			    char *out, size_t cap)
{
	uint64_t pw = 0, pio = 0, pcpu = 0, pflt = 0, pflt_ns = 0, prq = 0;
	int sampled = 1, ptimed = 0;
	for (int i = 0; i < rv->nprod; i++) {
		pw += rv->prod[i].wall, pio += rv->prod[i].io, pcpu += rv->prod[i].cpu;
		prq += rv->prod[i].runq;
		sampled &= rv->prod[i].cpu_sampled;
		pflt += rv->prod[i].majflt, pflt_ns += rv->prod[i].fault_ns;
		ptimed |= rv->prod[i].fault_timed;
	}
	/* more of the first kind suggested */
	char who[64];
	int nw;
	producers_who(rv, &nw, who, sizeof who);
	const char *more = nw ? "workers" : "loader threads";
	const char *verb = rv->nprod == 1 ? "is" : "are", *spend = rv->nprod == 1 ? "spends" : "spend";
	const char *their = rv->nprod == 1 ? "its" : "their";
	double d = pw ? (double)pw : 1.0;
	char how[400] = "";
	if (rv->shape.req && rv->shape.req_ns * 2 >= rv->shape.io_ns) {
		char n[32], sz[32];
		ft_fmt_count(n, sizeof n, rv->shape.req_calls);
		ft_fmt_count(sz, sizeof sz, rv->shape.req);
		snprintf(how, sizeof how, ", mostly in %s reads of %s bytes%s%.256s", n, sz,
			 *rv->shape.dir ? " in " : "", rv->shape.dir);
	}
	if (rv->data_cause == FT_CAUSE_MAPPED) {
		char n[32], files[400], wait[128] = "";
		ft_fmt_count(n, sizeof n, pflt);
		ft_words_mapped_files(m, files, sizeof files);
		/* their wait in the faults, apart from their CPU time */
		if (ptimed) {
			char t[32], c[32];
			ft_fmt_ns(t, sizeof t, pflt_ns);
			ft_fmt_ns(c, sizeof c, pcpu);
			if (pcpu)
				snprintf(wait, sizeof wait, " and waited %s in them for block "
					 "I/O, besides %s on the CPU", t, c);
			else
				snprintf(wait, sizeof wait, " and waited %s in them for block "
					 "I/O", t);
		}
		snprintf(out, cap,
			 "The %s took %s major page faults on mapped data (%.300s)%s: the "
			 "data set is read from disk through memory maps (see Mapped data).",
			 who, n, files, wait);
	} else if (rv->data_cause == FT_CAUSE_IO && rv->nprod)
		snprintf(out, cap,
			 "The %s %s %.0f%% of %s time in "
			 "file I/O%s: read fewer, larger pieces or add %s.", who, spend,
			 100 * (double)pio / d, their, how, more);
	else if (rv->data_cause == FT_CAUSE_RUNQ)
		snprintf(out, cap,
			 "The %s %s runnable, waiting for a core %.0f%% of %s time (on the "
			 "CPU %.0f%%, in file I/O %.0f%%): more busy threads than cores; use "
			 "fewer threads per core (torch.set_num_threads, fewer workers, "
			 "taskset).", who, verb, 100 * (double)prq / d, their,
			 100 * (double)pcpu / d, 100 * (double)pio / d);
	else if (rv->data_cause == FT_CAUSE_PREPROCESSING)
		snprintf(out, cap,
			 "The %s %s on the CPU %.0f%% of the "
			 "time%s: preprocessing; add %s or a cheaper transform.", who, verb,
			 100 * (double)pcpu / d, sampled ? "" : " (untraced time: no CPU samples)",
			 more);
	else if (rv->data_cause == FT_CAUSE_IO)
		snprintf(out, cap,
			 "The feeding threads read the files "
			 "themselves.");
	else if (!rv->nprod)
		snprintf(out, cap,
			 "The producers made no traced call in the "
			 "loop and have no CPU samples: what they did is unknown.");
	else
		snprintf(out, cap,
			 "The %d producer%s %s under 20%% of %s "
			 "time in file I/O or on the CPU: %s wait%s %s.", rv->nprod,
			 rv->nprod == 1 ? "" : "s", spend, their, rv->nprod == 1 ? "it" : "they",
			 rv->nprod == 1 ? "s" : "", rv->nprod == 1 ? "itself" : "themselves");
	size_t dn = strlen(out);
	if (rv->prod_runq_said && dn < cap)
		snprintf(out + dn, cap - dn, " %s also runnable, "
			 "waiting for a core %.0f%% of %s time: more busy threads than cores; "
			 "use fewer threads per core (torch.set_num_threads, fewer workers, "
			 "taskset).", rv->nprod == 1 ? "It is" : "They are",
			 100 * (double)prq / d, their);
	size_t n = strlen(out);
	if (rv->busiest >= 0 && n < cap) {
		const struct ft_producer *x = &rv->prod[rv->busiest];
		double share = (double)(x->io + x->cpu) / (double)x->wall;
		snprintf(out + n, cap - n,
			 " The busiest, %s %d%s, is %s %.0f%% of the time%s.",
			 ft_prod_name(x->role), x->tid,
			 x->role != FT_PROD_WORKER ? " of the main process" : "",
			 x->io > x->cpu ? "in file I/O" : "on the CPU", 100 * share,
			 x->role != FT_PROD_WORKER ? "; more workers do not speed it up" : "");
	}
}

void ft_words_detail(const struct ft_run_verdict *rv, const struct ft_verdict *v,
		     const struct ft_mapped *m, char *out, size_t cap)
{
	*out = 0;
	switch (rv->detail_say) {
	case FT_DETAIL_NONE:
		break;
	case FT_DETAIL_SLACK:
		slack_words(rv, out, cap);
		break;
	case FT_DETAIL_SELF_LOADING:
		snprintf(out, cap, "T");
		self_loading_words(v->phases, out + 1, cap - 1);
		break;
	case FT_DETAIL_PRODUCERS:
		producers_words(rv, m, out, cap);
		break;
	}
	/* the feeding threads waited for a core 20% of the window */
	size_t n = strlen(out);
	if (rv->feed_runq_said && n < cap)
		snprintf(out + n, cap - n, "%sThe feeding thread%s %s runnable, "
			 "waiting for a core %.0f%% of the time: more busy threads than cores; use "
			 "fewer threads per core (torch.set_num_threads, fewer workers, taskset).",
			 n ? " " : "", v->nfeeders > 1 ? "s" : "", v->nfeeders > 1 ? "are" : "is",
			 100 * (double)rv->feed_runq_ns / (double)v->wall_ns);
}

/* "the 4 workers", "the main process", "3 processes" */
static void mapped_who(const struct ft_mapped *m, char *out, size_t cap)
{
	if (m->nprocs == 1 && m->main_too)
		snprintf(out, cap, "the main process");
	else if (m->nworkers == m->nprocs)
		snprintf(out, cap, m->nworkers == 1 ? "the worker" : "the %d workers", m->nworkers);
	else
		snprintf(out, cap, "%d processes", m->nprocs);
}

void ft_words_mapped_files(const struct ft_mapped *m, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; i < m->nfiles && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s",
				      i == 0 ? "" : i + 1 == m->nfiles && !m->more_files ? " and " : ", ",
				      m->files[i]);
	if (m->more_files && n < cap)
		snprintf(out + n, cap - n, " and %d more", m->more_files);
}

const char *ft_words_mapped_thread(const struct ft_mapped_thread *t, char *out, size_t cap)
{
	if (*t->name)
		snprintf(out, cap, "%s", t->name);
	else
		snprintf(out, cap, "thread %d", t->tid);
	return out;
}

/* "loader-0 (24,000), loader-1 (23,000) and 2 more", "" when none */
static void mapped_threads_text(const struct ft_mapped *m, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; i < m->nthreads && n < cap; i++) {
		char c[32], name[40];
		ft_fmt_count(c, sizeof c, m->threads[i].faults);
		n += (size_t)snprintf(out + n, cap - n, "%s%s (%s)",
				      i == 0 ? "" : i + 1 == m->nthreads && !m->more_threads ? " and " : ", ",
				      ft_words_mapped_thread(&m->threads[i], name, sizeof name), c);
	}
	if (m->more_threads && n < cap)
		snprintf(out + n, cap - n, " and %d more", m->more_threads);
}

void ft_words_mapped(const struct ft_mapped *m, char *out, size_t cap)
{
	out[0] = 0;
	if (!m->said)
		return;
	char who[48], n[32], files[600], wait[64] = "", ths[400] = "", in[420] = "";
	mapped_who(m, who, sizeof who);
	ft_fmt_count(n, sizeof n, m->faults);
	ft_words_mapped_files(m, files, sizeof files);
	if (m->timed) {
		char t[32];
		ft_fmt_ns(t, sizeof t, m->blkio_ns);
		snprintf(wait, sizeof wait, ", waiting %s for block I/O", t);
	}
	mapped_threads_text(m, ths, sizeof ths);
	if (*ths)
		snprintf(in, sizeof in, ", in threads %s", ths);
	snprintf(out, cap, "%s took %s major page faults on mapped data (%s)%s%s: the data "
		 "set is read from disk through memory maps, a fault at a time, in no traced "
		 "call. Keep it in the page cache (memory enough for it, read once before "
		 "training), read it in contiguous runs rather than scattered samples "
		 "(contiguous indices, madvise(MADV_WILLNEED or MADV_SEQUENTIAL)), or move it "
		 "to a faster local disk.", who, n, files, in, wait);
	if (out[0] >= 'a' && out[0] <= 'z')
		out[0] = (char)(out[0] - 'a' + 'A');
}

void ft_words_gpu_idle(const struct ft_verdict *v, uint64_t win, char *out, size_t cap)
{
	double w = win ? (double)win : 1.0;
	if (v->gpu_measured)
		snprintf(out, cap, "GPU idle %.0f%% of the loop (measured; samples cover %.0f%% of "
			 "it; the model said %.0f%%)",
			 100.0 * ft_gpu_measured_idle(v),
			 100.0 * (double)v->mcover_ns / w, 100.0 * (double)v->model_idle_ns / w);
	else if (v->mcover_ns)      /* what the few samples saw, said beside the model */
		snprintf(out, cap, "GPU idle %.0f%% of the loop (modelled: samples cover only %.0f%% "
			 "of it, idle %.0f%% there)", 100.0 * (double)v->model_idle_ns / w,
			 100.0 * (double)v->mcover_ns / w,
			 100.0 * ft_gpu_measured_idle(v));
	else
		snprintf(out, cap, "GPU idle %.0f%% of the loop (modelled: no samples)",
			 100.0 * (double)v->model_idle_ns / w);
}

int ft_words_flight(const struct ft_process *p, char *buf, size_t cap)
{
	const struct ft_flight_info *f = &p->flight_last;
	char win[48], run[48], why[96], kept[48];
	if (!p->nflight)
		return 0;
	ft_fmt_ns(win, sizeof win, ft_flight_window_ns(p));
	ft_fmt_ns(run, sizeof run, ft_flight_run_ns(p));
	const char *sn = f->detail > 0 && f->detail < NSIG ? sigabbrev_np(f->detail) : NULL;
	switch (f->why) {
	case FT_FLIGHT_SIGNAL:
		snprintf(why, sizeof why, "SIG%s", sn ? sn : "?");
		break;
	case FT_FLIGHT_HANG:
		if (f->detail == p->hdr.pid)
			snprintf(why, sizeof why, "a hang (no step for %u s)", f->hang_s);
		else
			snprintf(why, sizeof why, "a hang of pid %d", f->detail);
		break;
	case FT_FLIGHT_REQUEST:
		snprintf(why, sizeof why, "a request (feedtrace flight)");
		break;
	case FT_FLIGHT_EXIT:
		snprintf(why, sizeof why, "exit (status %d)", f->detail);
		break;
	default:
		snprintf(why, sizeof why, "%s", ft_flight_why(f->why));
	}
	if (f->keep_s)
		snprintf(kept, sizeof kept, "%u s", f->keep_s);
	else if (f->keep_bytes % (1u << 20))
		snprintf(kept, sizeof kept, "%llu KiB", (unsigned long long)(f->keep_bytes >> 10));
	else
		snprintf(kept, sizeof kept, "%llu MiB", (unsigned long long)(f->keep_bytes >> 20));
	int n = snprintf(buf, cap, "flight recorder: the last %s before %s (keeps %s), of a run "
			 "started %s before; the time before it was not recorded", win, why, kept, run);
	if (p->nflight > 1 && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " (%d windows written)", p->nflight);
	return 1;
}

int ft_words_data_wait_step(const struct ft_run_verdict *rv, const struct ft_verdict *v,
			    char *out, size_t cap)
{
	if (rv->data_wait_step_ns < 0)
		return 0;
	char t[32];
	ft_fmt_ns(t, sizeof t, (uint64_t)rv->data_wait_step_ns);
	snprintf(out, cap, "data wait per step: %s (the feeding thread%s waiting for data or "
		 "in file I/O, over %llu step%s of the window)", t, v->nfeeders > 1 ? "s" : "",
		 (unsigned long long)rv->window_steps, rv->window_steps == 1 ? "" : "s");
	return 1;
}

int ft_words_capture(const struct ft_process *p, char *out, size_t cap)
{
	if (!p->nwin)
		return 0;
	const struct ft_window *w = &p->win[0];
	char ago[32], len[32];
	uint64_t from, to;
	ft_process_windowed(p, &from, &to);
	ft_fmt_ns(ago, sizeof ago, from > p->base_ns ? from - p->base_ns : 0);
	uint64_t end = w->end_ticks ? ft_ticks_to_ns(p, w->end_ticks) : p->last_ns;
	uint64_t start = ft_ticks_to_ns(p, w->start_ticks);
	ft_fmt_ns(len, sizeof len, end > start ? end - start : 0);
	int n;
	if (w->first_step)
		n = snprintf(out, cap, "steps %llu-%llu (%s%s%s)",
			     (unsigned long long)w->first_step,
			     (unsigned long long)(w->last_step ? w->last_step : w->first_step),
			     ft_window_unit_name(w->unit), w->reason == FT_WIN_STEPS ? "" : ", ",
			     w->reason == FT_WIN_STEPS ? "" : ft_window_reason_name(w->reason));
	else
		n = snprintf(out, cap, "%s (%s)", len, ft_window_reason_name(w->reason));
	n += snprintf(out + n, cap - (size_t)n, " of a run started %s before", ago);
	if (p->nwin > 1)
		snprintf(out + n, cap - (size_t)n, "; %d windows in all", p->nwin);
	return 1;
}

void ft_words_process(const struct ft_proc_words *w, char *out, size_t cap)
{
	char cmd[72];
	ft_brief_command(w->cmdline, cmd, sizeof cmd);
	char rk[40] = "";                            /* "rank 2/4, " */
	if (ft_rank_words(w->rank, w->world, rk, sizeof rk - 2))
		strcat(rk, ", ");
	int n = snprintf(out, cap, "%s%smain process %d (%s)",
			 w->straggler ? "the straggler, " : "", rk, w->pid, cmd);
	if (w->nworkers && n < (int)cap) {
		n += snprintf(out + n, cap - (size_t)n, ", %d %s (", w->nworkers,
			      w->python ? (w->nworkers == 1 ? "DataLoader worker" : "DataLoader workers")
					: (w->nworkers == 1 ? "worker" : "workers"));
		for (int k = 0; k < w->nworkers && n < (int)cap - 16; k++)
			n += snprintf(out + n, cap - (size_t)n, "%s%d", k ? ", " : "", w->workers[k]);
		if (n < (int)cap - 1)
			strcat(out, ")");
	}
	n = (int)strlen(out);
	if (w->nloaders && n < (int)cap - 32)
		snprintf(out + n, cap - (size_t)n, ", %d loader thread%s", w->nloaders,
			 w->nloaders == 1 ? "" : "s");
}

/* the feeds the time per step is split into: the verdict's categories of
 * the feeding threads (docs/ANALYSES.md, "The verdict") */
static const char *const feed_label[FT_CAT_N] = {
	[FT_CAT_SUBMIT] = "launch", [FT_CAT_GPU_WAIT] = "explicit sync",
	[FT_CAT_HIDDEN] = "hidden sync", [FT_CAT_IO] = "I/O", [FT_CAT_LOCK] = "locks",
	[FT_CAT_DATA] = "waiting for data", [FT_CAT_RANKS] = "other ranks", [FT_CAT_CPU] = "CPU",
	[FT_CAT_RUNQ] = "waiting for a core",
};

const char *ft_words_feed(int cat)
{
	return feed_label[cat];
}

const char *ft_words_diff_unit(int by_step)
{
	return by_step ? "per step" : "per run";
}

int ft_words_diff_finding(const struct ft_diff_finding *f, const char *unit, char *b,
			  size_t cap)
{
	char x[32], y[32], rx[32], ry[32], nx[32], ny[32];
	ft_fmt_ns(x, sizeof x, (uint64_t)f->lost_per_unit[0]);
	ft_fmt_ns(y, sizeof y, (uint64_t)f->lost_per_unit[1]);
	ft_fmt_count(nx, sizeof nx, f->count[0]);
	ft_fmt_count(ny, sizeof ny, f->count[1]);
	int n = snprintf(b, cap, "%s: %s -> %s", f->what, nx, ny);
	if (ft_fkinds[f->kind]->row_identity) {    /* a storm's row: its reads */
		ft_fmt_count(rx, sizeof rx, f->reads[0]);
		ft_fmt_count(ry, sizeof ry, f->reads[1]);
		n += snprintf(b + n, cap - (size_t)n, " (%s -> %s reads)", rx, ry);
	}
	n += snprintf(b + n, cap - (size_t)n, "; lost %s %s -> %s", unit, x, y);
	return n;
}

/* the median step's change after the conclusion: ". Median step 75 us ->
 * 615 us (+723%, slower)"; where it resolves a move that the time per
 * step (ch; NULL: not resolved) does not show the same way, says which the
 * conclusion stands on */
static int median_words(char *b, size_t cap, const struct ft_change *m, const struct ft_change *ch)
{
	char x[32], y[32];
	ft_fmt_ns(x, sizeof x, (uint64_t)m->before);
	ft_fmt_ns(y, sizeof y, (uint64_t)m->after);
	int n = snprintf(b, cap, ". Median step %s -> %s (%+.0f%%, %s)", x, y,
			 m->before ? 100 * (m->after - m->before) / m->before : 0,
			 ft_change_word[m->verdict]);
	int moved = m->verdict == FT_CH_FASTER || m->verdict == FT_CH_SLOWER;
	if (moved && ch && m->verdict != ch->verdict)
		n += snprintf(b + n, cap - (size_t)n, ": the typical step moved, the time per step "
			      "%s; the conclusion stands on the time per step (the loop's "
			      "throughput)", ch->verdict == FT_CH_FASTER || ch->verdict == FT_CH_SLOWER ?
			      "moved the other way" : "did not");
	return n;
}

void ft_words_diff_conclusion(const struct ft_diff_credit *c, char *concl, size_t cap)
{
	char one[256];
	int len = 0, room = (int)cap;
	const char *unit = ft_words_diff_unit(c->by_step);
	if (c->ch) {
		const struct ft_change *ch = c->ch;
		char x[32], y[32], lo[32], hi[32];
		ft_fmt_ns(x, sizeof x, (uint64_t)ch->before);
		ft_fmt_ns(y, sizeof y, (uint64_t)ch->after);
		ft_fmt_ns(lo, sizeof lo, (uint64_t)(ch->lo < 0 ? -ch->lo : ch->lo));
		ft_fmt_ns(hi, sizeof hi, (uint64_t)(ch->hi < 0 ? -ch->hi : ch->hi));
		const char *w = ft_change_word[ch->verdict];
		len += snprintf(concl, cap, "%c%s: %s %s -> %s (%+.0f%%; 95%% "
				"interval of the change %s%s to %s%s) over %llu and %llu %s",
				w[0] - 32, w + 1, c->by_step ? "time per step" : "median wall time", x, y,
				ch->before ? 100 * (ch->after - ch->before) / ch->before : 0,
				ch->lo < 0 ? "-" : "+", lo, ch->hi < 0 ? "-" : "+", hi,
				(unsigned long long)c->n[0], (unsigned long long)c->n[1],
				c->by_step ? "steps" : "runs");
		if (c->warm[0] || c->warm[1])
			len += snprintf(concl + len, cap - (size_t)len,
					" (after %llu and %llu warm-up steps)",
					(unsigned long long)c->warm[0], (unsigned long long)c->warm[1]);
		if (c->by_step)
			len += snprintf(concl + len, cap - (size_t)len, " in %d and %d run%s",
					c->runs[0], c->runs[1], c->runs[0] + c->runs[1] > 2 ? "s" : "");
		if (c->training_only)
			len += snprintf(concl + len, cap - (size_t)len, " (training steps "
					"only: one per optimizer step, evaluation passes left out)");
		if (ch->verdict == FT_CH_FASTER || ch->verdict == FT_CH_SLOWER) {
			int credited = 0;
			for (int k = 0; k < c->ncredit && len < room - 300; k++) {
				ft_words_diff_finding(&c->findings[c->credit[k]], unit, one, sizeof one);
				len += snprintf(concl + len, cap - (size_t)len, "%s%s",
						credited++ ? "; " : ". Mostly ", one);
			}
			if (c->feed >= 0 && len < room - 200) {
				char x2[32], y2[32];
				ft_fmt_ns(x2, sizeof x2, (uint64_t)c->feed_ns[0]);
				ft_fmt_ns(y2, sizeof y2, (uint64_t)c->feed_ns[1]);
				len += snprintf(concl + len, cap - (size_t)len,
						"%s%s %s %s -> %s", credited ? "; " : ". Mostly ",
						ft_words_feed(c->feed), unit, x2, y2);
				credited++;
			}
			if (!credited)
				len += snprintf(concl + len, cap - (size_t)len,
						". No finding or feed changed by more than the interval");
		} else {
			for (int k = 0; k < c->nnamed && len < room - 300; k++) {
				const struct ft_diff_finding *f = &c->findings[c->named[k]];
				ft_words_diff_finding(f, unit, one, sizeof one);
				len += snprintf(concl + len, cap - (size_t)len, "%s%s %s",
						k ? "; " : ". Within the interval, so not credited: ",
						ft_status_name(f->status), one);
			}
		}
	} else {
		char x[32], y[32];
		ft_fmt_ns(x, sizeof x, c->wall[0]);
		ft_fmt_ns(y, sizeof y, c->wall[1]);
		len += snprintf(concl, cap, "Not resolved: one run per side without marked "
				"steps cannot separate a change from noise (figures only): wall time "
				"%s -> %s (%+.0f%%); run each side several times, or mark steps",
				x, y, c->wall[0] ? 100.0 * ((double)c->wall[1] -
				(double)c->wall[0]) / (double)c->wall[0] : 0);
	}
	if (c->median && len < room - 300)
		len += median_words(concl + len, cap - (size_t)len, c->median, c->ch);
	snprintf(concl + len, cap - (size_t)len, ".");
}
