/*
 * report_json.c: the report as JSON (`feedtrace report --json`,
 * docs/REPORT-SCHEMA.md): the run's metrics, capture window, verdict,
 * flight record, ranks, processes, findings, problems, mapped data, call
 * sites and symbol notes, from the report ft_report_build built. Decides
 * nothing: it writes what the report holds.
 */
#include <stdlib.h>

#include "util.h"
#include "fkind.h"
#include "json.h"
#include "phases.h"
#include "problems.h"
#include "report.h"
#include "ranksum.h"
#include "roles.h"
#include "stepfigs.h"
#include "symbolize.h"
#include "vfields.h"
#include "words.h"

/* the step figures (stepfigs.def): null when no step was marked */

static void json_steps(struct ft_json *j, const struct ft_metrics *m)
{
	for (int k = 0; k < FT_SF_N; k++) {
		const char *key = ft_stepfigs[k].key;
		if (!m->steps) {
			ft_json_null(j, key);
			continue;
		}
		struct ft_stepval v = ft_stepfig(m, (enum ft_stepfig)k);
		switch (ft_stepfigs[k].type) {
		case FT_SF_COUNT: ft_json_u64(j, key, v.count); break;
		case FT_SF_RATE: ft_json_fixed(j, key, v.rate, FT_STEP_PLACES); break;
		case FT_SF_TEXT: ft_json_str(j, key, v.text); break;
		}
	}
}

static void json_metrics(struct ft_json *j, const struct ft_metrics *m)
{
	ft_json_obj(j, "metrics");
#define METRIC(field, key, label, ns) ft_json_u64(j, key, m->field);
#include "metrics.def"
#undef METRIC
	json_steps(j, m);
	ft_json_end(j);
}

/* one value per feed category, under key */
static void json_by_cat(struct ft_json *j, const char *key, const uint64_t *v)
{
	ft_json_obj(j, key);
	for (int k = 0; k < FT_CAT_N; k++)
		ft_json_u64(j, ft_cat_name[k], v[k]);
	ft_json_end(j);
}

/* the loop's phases under key (null: none) */
static void phases_json(struct ft_json *j, const char *key, const struct ft_phases_sum *ph)
{
	if (!ph) {
		ft_json_null(j, key);
		return;
	}
	ft_json_obj(j, key);
	ft_json_int(j, "tid", ph->tid);
	ft_json_u64(j, "count", ph->nall);
	ft_json_u64(j, "train", ph->ntrain);
	ft_json_arr(j, "list");
	for (int i = 0; i < ph->n; i++) {
		const struct ft_phase *p = &ph->ph[i];
		ft_json_obj(j, NULL);
		ft_json_str(j, "kind", ft_phase_kind(p));
		ft_json_u64(j, "loader", p->loader);
		ft_json_u64(j, "iterator", p->it);
		ft_json_u64(j, "workers", p->workers);
		ft_json_str(j, "dataset", p->dataset);
		ft_json_str(j, "getitem", p->getitem);
		ft_json_u64(j, "batches", p->batches);
		ft_json_u64(j, "steps", p->steps);
		ft_json_u64(j, "start_ns", p->start);
		ft_json_u64(j, "end_ns", p->end);
		ft_json_u64(j, "next_ns", p->next_ns);
		ft_json_u64(j, "next_io_ns", p->io_ns);
		ft_json_fixed(j, "data_wait_share", ft_phase_data_wait(p), 4);
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_json_obj(j, "training");
	ft_json_u64(j, "steps", ph->steps);
	ft_json_u64(j, "step_ns", ph->step_ns);
	ft_json_u64(j, "next_ns", ph->next_ns);
	ft_json_u64(j, "next_io_ns", ph->io_ns);
	ft_json_fixed(j, "data_wait_share", ph->step_ns ? (double)ph->next_ns / (double)ph->step_ns : 0, 4);
	ft_json_u64(j, "workers", ph->workers);
	ft_json_str(j, "dataset", ph->dataset);
	ft_json_str(j, "getitem", ph->getitem);
	ft_json_end(j);
	ft_json_end(j);
}

/* the writers of verdict.def's OBJ rows */

static void json_feeders(struct ft_json *j, const struct ft_rep_proc *p,
			 const struct ft_run_verdict *rv)
{
	(void)rv;
	ft_json_arr(j, "feeding_threads");
	for (int i = 0; i < p->v.nfeeders && i < 8; i++)
		ft_json_int(j, NULL, p->v.feeder[i]);
	ft_json_end(j);
}

static void json_share(struct ft_json *j, const struct ft_rep_proc *p,
		       const struct ft_run_verdict *rv)
{
	const struct ft_verdict *v = &p->v;
	(void)rv;
	ft_json_obj(j, "share");
	for (int k = 0; k < FT_CAT_N; k++)
		ft_json_fixed(j, ft_cat_name[k],
			      v->wall_ns ? (double)v->t[k] / (double)v->wall_ns : 0.0, 4);
	ft_json_end(j);
}

static void json_phases(struct ft_json *j, const struct ft_rep_proc *p,
			const struct ft_run_verdict *rv)
{
	(void)rv;
	phases_json(j, "phases", p->v.phases);
}

static void json_producer_reads(struct ft_json *j, const struct ft_rep_proc *p,
				const struct ft_run_verdict *rv)
{
	(void)p;
	if (!rv->data_cause || !rv->shape.calls) {
		ft_json_null(j, "producer_reads");
		return;
	}
	ft_json_obj(j, "producer_reads");
	ft_json_u64(j, "calls", rv->shape.calls);
	ft_json_u64(j, "io_ns", rv->shape.io_ns);
	ft_json_u64(j, "req_bytes", rv->shape.req);
	ft_json_u64(j, "req_calls", rv->shape.req_calls);
	ft_json_u64(j, "req_ns", rv->shape.req_ns);
	ft_json_str(j, "dir", rv->shape.dir);
	ft_json_u64(j, "dir_ns", rv->shape.dir_ns);
	ft_json_end(j);
}

static void json_loop_window(struct ft_json *j, const struct ft_rep_proc *p,
			     const struct ft_run_verdict *rv)
{
	(void)p;
	ft_json_obj(j, "window");
	ft_json_u64(j, "start_ns", rv->w0);
	ft_json_u64(j, "end_ns", rv->w1);
	ft_json_str(j, "from", ft_from_name(rv->from));
	ft_json_u64(j, "warmup_steps", rv->warmup_steps);
	ft_json_u64(j, "warmup_ns", rv->warmup_ns);
	ft_json_u64(j, "worker_file_reads", rv->worker_reads);
	ft_json_u64(j, "launches_before", rv->launches_before);
	ft_json_end(j);
}

static void json_gpu(struct ft_json *j, const struct ft_rep_proc *p,
		     const struct ft_run_verdict *rv)
{
	const struct ft_verdict *v = &p->v;
	(void)rv;
	if (!v->by_launch) {
		ft_json_null(j, "gpu");
		return;
	}
	ft_json_obj(j, "gpu");
	ft_json_u64(j, "busy_ns", v->busy_ns);
	ft_json_u64(j, "idle_ns", v->idle_ns);
	json_by_cat(j, "idle_by_feed", v->idle_by_feed);
	ft_json_u64(j, "streams_ns", v->sidle_den);
	json_by_cat(j, "streams_idle_by_feed", v->sidle);
	ft_json_str(j, "idle_basis", v->gpu_measured ? "measured" : "modelled");
	ft_json_obj(j, "modelled");
	ft_json_u64(j, "busy_ns", v->model_busy_ns);
	ft_json_u64(j, "idle_ns", v->model_idle_ns);
	ft_json_end(j);
	if (v->mcover_ns) {
		ft_json_obj(j, "measured");
		ft_json_u64(j, "covered_ns", v->mcover_ns);
		ft_json_u64(j, "busy_ns", v->mbusy_ns);
		ft_json_u64(j, "idle_ns", v->mcover_ns - v->mbusy_ns);
		ft_json_u64(j, "drain_wait_ns", v->mdrain_ns);
		ft_json_end(j);
	} else {
		ft_json_null(j, "measured");
	}
	ft_json_end(j);
}

static void json_producers(struct ft_json *j, const struct ft_rep_proc *p,
			   const struct ft_run_verdict *rv)
{
	(void)p;
	ft_json_arr(j, "producers");
	for (int i = 0; i < rv->nprod; i++) {
		const struct ft_producer *q = &rv->prod[i];
		ft_json_obj(j, NULL);
		ft_json_int(j, "pid", q->pid);
		ft_json_int(j, "tid", q->tid);
		ft_json_str(j, "role", ft_prod_name(q->role));
		ft_json_u64(j, "wall_ns", q->wall);
		ft_json_u64(j, "io_ns", q->io);
		ft_json_u64(j, "cpu_ns", q->cpu);
		ft_json_u64(j, "lock_ns", q->lock);
		ft_json_u64(j, "idle_ns", q->idle);
		ft_json_u64(j, "handover_ns", q->handover);
		ft_json_u64(j, "runq_ns", q->runq);
		ft_json_str(j, "cpu_from", q->cpu_sampled ? "samples" : "untraced time");
		ft_json_u64(j, "major_faults", q->majflt);
		if (q->fault_timed)
			ft_json_u64(j, "fault_wait_ns", q->fault_ns);
		else
			ft_json_null(j, "fault_wait_ns");
		ft_json_end(j);
	}
	ft_json_end(j);
}

/* "verdict": verdict.def's rows, in its order; the run's (R) rows only
 * with rv (the report's top verdict) */
#define VJ_INT(key, x) ft_json_int(j, key, x);
#define VJ_U64(key, x) ft_json_u64(j, key, x);
#define VJ_BOOL(key, x) ft_json_bool(j, key, x);
#define VJ_STR(key, x) ft_json_str(j, key, x);
#define VJ_CATS(key, x) json_by_cat(j, key, x);
#define VJ_OPT_NS(key, x) { int64_t x_ = (x); if (x_ >= 0) ft_json_u64(j, key, (uint64_t)x_); \
			    else ft_json_null(j, key); }
#define VJ_OBJ(key, x) x(j, p, rv);

static void json_verdict(struct ft_json *j, const struct ft_rep_proc *p,
			 const struct ft_run_verdict *rv)
{
	const struct ft_verdict *v = &p->v;
	(void)v;
	ft_json_obj(j, "verdict");
#define VERDICT(name, scope, type, key, expr, ranks, diff, dkey, label) \
	FT_VF_IF(FT_VF_RUN_##scope, if (rv)) { VJ_##type(key, expr) }
#include "verdict.def"
#undef VERDICT
	ft_json_end(j);
}

/* data read through memory maps (mapped.c); null when no process that
 * mapped a data file took a major fault */
static void json_mapped(struct ft_json *j, const struct ft_mapped *m)
{
	if (!m->nprocs) {
		ft_json_null(j, "mapped_data");
		return;
	}
	char sentence[1024];
	ft_words_mapped(m, sentence, sizeof sentence);
	ft_json_obj(j, "mapped_data");
	ft_json_u64(j, "major_faults", m->faults);
	if (m->timed)
		ft_json_u64(j, "block_io_wait_ns", m->blkio_ns);
	else
		ft_json_null(j, "block_io_wait_ns");
	ft_json_int(j, "processes", m->nprocs);
	ft_json_int(j, "workers", m->nworkers);
	ft_json_arr(j, "files");
	for (int i = 0; i < m->nfiles; i++)
		ft_json_str(j, NULL, m->files[i]);
	ft_json_end(j);
	ft_json_int(j, "more_files", m->more_files);
	ft_json_arr(j, "threads");
	for (int i = 0; i < m->nthreads; i++) {
		ft_json_obj(j, NULL);
		ft_json_int(j, "pid", m->threads[i].pid);
		ft_json_int(j, "tid", m->threads[i].tid);
		char name[40];
		ft_json_str(j, "name", ft_words_mapped_thread(&m->threads[i], name, sizeof name));
		ft_json_u64(j, "major_faults", m->threads[i].faults);
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_json_int(j, "more_threads", m->more_threads);
	if (*sentence)
		ft_json_str(j, "finding", sentence);
	else
		ft_json_null(j, "finding");
	ft_json_end(j);
}

static void json_finding(struct ft_json *j, const struct ft_report *r,
			 const struct ft_finding *f)
{
	ft_json_obj(j, NULL);
	ft_json_str(j, "kind", ft_fkind(f)->key);
	ft_json_int(j, "pid", f->pid);
	ft_json_u64(j, "start_ns", f->start);
	ft_json_u64(j, "end_ns", f->end);
	ft_json_u64(j, "lost_ns", f->lost_ns);
	ft_fkind(f)->json(j, f);
	ft_json_str(j, "suggestion", ft_finding_advice(r, f));
	ft_json_end(j);
}

/* "capture": the main process's first window, or null (recorded throughout) */
static void json_window(struct ft_json *j, const struct ft_report *r)
{
	const struct ft_process *p = r->tr.procs[r->main];
	if (!p->nwin) {
		ft_json_null(j, "capture");
		return;
	}
	const struct ft_window *w = &p->win[0];
	uint64_t from, to;
	ft_process_windowed(p, &from, &to);
	ft_json_obj(j, "capture");
	ft_json_str(j, "reason", ft_window_reason_name(w->reason));
	ft_json_str(j, "unit", ft_window_unit_name(w->unit));
	ft_json_u64(j, "first_step", w->first_step);
	ft_json_u64(j, "last_step", w->last_step);
	ft_json_u64(j, "started_after_ns", from > p->base_ns ? from - p->base_ns : 0);
	ft_json_int(j, "windows", p->nwin);
	ft_json_end(j);
}

void ft_report_json(const struct ft_report *r, FILE *out)
{
	struct ft_json jw, *j = &jw;
	ft_json_begin(j, out);
	ft_json_obj(j, NULL);
	ft_json_str(j, "schema", "feedtrace-report/1");
	ft_json_str(j, "dir", ft_txt(r->dir));
	ft_json_u64(j, "damaged", (uint64_t)r->tr.errors);
	ft_json_obj(j, "losses");
	for (int k = 0; k < FT_LOSS_N; k++)
		ft_json_u64(j, ft_loss_info[k].key, ft_report_loss(r, (enum ft_loss)k, NULL));
	ft_json_end(j);
	json_metrics(j, &r->total);
	json_window(j, r);
	json_verdict(j, &r->procs[r->main], &r->rv);
	const struct ft_process *fp = r->nprocs ? r->tr.procs[r->main] : NULL;
	if (fp && fp->nflight) {
		char words[320];
		ft_words_flight(fp, words, sizeof words);
		ft_json_obj(j, "flight");
		ft_json_str(j, "why", ft_flight_why(fp->flight_last.why));
		ft_json_int(j, "detail", fp->flight_last.detail);
		ft_json_u64(j, "window_ns", ft_flight_window_ns(fp));
		ft_json_u64(j, "run_ns", ft_flight_run_ns(fp));
		ft_json_str(j, "text", words);
		ft_json_end(j);
	} else {
		ft_json_null(j, "flight");
	}
	ft_ranks_json(j, &r->ranks);
	ft_json_arr(j, "processes");
	for (int i = 0; i < r->nprocs; i++) {
		const struct ft_rep_proc *p = &r->procs[i];
		ft_json_obj(j, NULL);
		ft_json_int(j, "pid", p->pid);
		ft_json_int(j, "ppid", p->ppid);
		ft_json_str(j, "role", p->role ? ft_proc_role_name(p->role) : "helper");
		ft_json_str(j, "cmdline", ft_txt(p->cmdline));
		ft_rank_json(j, r->tr.procs[i]);
		ft_ranksum_json(j, r->tr.procs[i], p->v.colls, p->v.ncolls, p->own_step_median_ns);
		json_metrics(j, &p->m);
		json_verdict(j, p, NULL);
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_json_u64(j, "launch_gaps_left_out", r->gaps_left_out);
	ft_json_arr(j, "findings");
	for (int i = 0; i < r->nf; i++)
		json_finding(j, r, &r->f[i]);
	ft_json_end(j);
	ft_json_arr(j, "problems");
	struct ft_problem *pb;
	int npb = ft_problems(r, &pb);
	for (int i = 0; i < npb; i++) {
		ft_json_obj(j, NULL);
		ft_json_str(j, "kind", pb[i].kind);
		ft_json_int(j, "pid", pb[i].pid);
		ft_json_int(j, "processes", pb[i].nprocs);
		ft_json_u64(j, "count", pb[i].count);
		ft_json_u64(j, "lost_ns", pb[i].lost_ns);
		if (pb[i].summed_ns)
			ft_json_u64(j, "summed_ns", pb[i].summed_ns);
		else
			ft_json_null(j, "summed_ns");
		if (pb[i].feed_known)
			ft_json_u64(j, "feed_lost_ns", pb[i].feed_ns);
		else
			ft_json_null(j, "feed_lost_ns");
		ft_json_int(j, "first_finding", pb[i].first);
		ft_json_str(j, "what", ft_txt(pb[i].what));
		ft_json_str(j, "suggestion", ft_txt(pb[i].suggestion));
		ft_json_str(j, "opener", pb[i].opener);
		ft_json_end(j);
	}
	free(pb);
	ft_json_end(j);
	json_mapped(j, &r->mapped);
	ft_json_arr(j, "call_sites");
	for (int i = 0; i < r->nf; i++) {
		const struct ft_finding *f = &r->f[i];
		if (!ft_fkind(f)->site)
			continue;
		ft_json_obj(j, NULL);
		ft_json_str(j, "kind", ft_fkind(f)->key);
		ft_json_int(j, "pid", f->pid);
		ft_json_str(j, "site", ft_txt(f->site));
		ft_json_str(j, "symbol", ft_txt(f->symbol));
		ft_json_int(j, "tid", f->tid);
		ft_json_u64(j, "count", f->count);
		ft_json_u64(j, "total_ns", f->total_ns);
		ft_json_u64(j, "max_ns", f->max_ns);
		ft_json_end(j);
	}
	ft_json_end(j);
	ft_json_arr(j, "symbol_notes");
	const char **notes;
	int nn = ft_symbols_notes(&notes);
	for (int i = 0; i < nn; i++)
		ft_json_str(j, NULL, ft_txt(notes[i]));
	ft_json_end(j);
	ft_json_end(j);
	fputc('\n', out);
}
