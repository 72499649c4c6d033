/*
 * dump.c: `feedtrace dump DIR [--json]`: every record as one line (process,
 * thread, time, call, arguments, duration), then a tally per process.
 * The text is for people; --json (one object per line) is for tests and
 * scripts. Both are stable: fields are named after events.def.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"
#include "cli.h"
#include "cmds.h"
#include "events.h"
#include "gpu_measured.h"
#include "reader.h"
#include "roles.h"
#include "symbolize.h"
#include "words.h"

struct dump_ctx {
	FILE *out;
	int json;
	int summary;            /* tally only */
	uint64_t t0;
	uint64_t counts[FT_EV_COUNT];
	uint64_t unknown;
	uint64_t exec_failed;   /* EXEC records with an errno: exec returned */
	const struct ft_trace *tr;
	struct ft_process *p;   /* the process read now */
};

/* text form: a string without spaces or quotes stands as is */
static void text_string(FILE *out, const char *s)
{
	int plain = *s != 0;
	for (const char *p = s; *p; p++)
		if (*p <= ' ' || *p == '"' || *p == '\\' || *p == 0x7f)
			plain = 0;
	if (plain)
		fputs(s, out);
	else
		ft_json_string(out, s);
}

static const char *str_field(const struct ft_process *p, const struct ft_field *f, uint64_t v)
{
	const char *s = strcmp(f->name, "site") == 0 ? ft_site_text(p, (uint32_t)v)
						     : ft_string(p, (uint32_t)v);
	return s ? s : "";
}

static void print_field(FILE *out, const struct ft_process *p, const struct ft_rec *r,
			const struct ft_field *f)
{
	uint64_t v = ft_field_raw(r, f);
	switch (f->type) {
	case FT_F_I32:
	case FT_F_I64:
		fprintf(out, "%lld", (long long)ft_field_signed(r, f));
		break;
	case FT_F_U32:
	case FT_F_U64:
		fprintf(out, "%llu", (unsigned long long)v);
		break;
	case FT_F_X32:
	case FT_F_PTR:
		fprintf(out, "0x%llx", (unsigned long long)v);
		break;
	case FT_F_STR:
		text_string(out, str_field(p, f, v));
		break;
	}
}

static void json_field(struct ft_json *j, const struct ft_process *p, const struct ft_rec *r,
		       const struct ft_field *f)
{
	uint64_t v = ft_field_raw(r, f);
	switch (f->type) {
	case FT_F_I32:
	case FT_F_I64:
		ft_json_int(j, f->name, ft_field_signed(r, f));
		break;
	case FT_F_U32:
	case FT_F_U64:
		ft_json_u64(j, f->name, v);
		break;
	case FT_F_X32:
	case FT_F_PTR:
		ft_json_hex(j, f->name, v);
		break;
	case FT_F_STR:
		ft_json_str(j, f->name, str_field(p, f, v));
		break;
	}
}

static int dump_event(const struct ft_event *ev, void *arg)
{
	struct dump_ctx *c = arg;
	const struct ft_rec *r = ev->rec;
	const struct ft_kind_info *k = ft_kind(r->kind);
	FILE *out = c->out;
	if (ferror(out))
		return 1;               /* the output is lost: stop reading */
	if (!k) {
		c->unknown++;
		return 0;
	}
	c->counts[r->kind]++;
	if (r->kind == FT_EV_EXEC && r->p.u32[1] != 0)
		c->exec_failed++;
	int32_t child = ft_an_forked(r);
	if (child && !ft_trace_has_pid(c->tr, child))
		c->p->children_untraced++;
	if (c->summary)
		return 0;
	if (c->json) {
		struct ft_json jw, *j = &jw;
		ft_json_begin(j, out);
		ft_json_obj(j, NULL);
		ft_json_int(j, "pid", ev->proc->hdr.pid);
		ft_json_int(j, "tid", ev->tid);
		ft_json_u64(j, "ts_ns", ev->ts_ns - c->t0);
		ft_json_u64(j, "dur_ns", ev->dur_ns);
		ft_json_str(j, "call", k->name);
		ft_json_obj(j, "args");
		for (int i = 0; i < k->nfields; i++)
			if (k->f[i].name)
				json_field(j, ev->proc, r, &k->f[i]);
		ft_json_end(j);
		ft_json_end(j);
		fputc('\n', out);
	} else {
		uint64_t rel = ev->ts_ns - c->t0;
		fprintf(out, "%7d %7d %4llu.%09llu %-22s", ev->proc->hdr.pid, ev->tid,
			(unsigned long long)(rel / 1000000000u),
			(unsigned long long)(rel % 1000000000u), k->name);
		for (int i = 0; i < k->nfields; i++) {
			if (!k->f[i].name)
				continue;
			fprintf(out, " %s=", k->f[i].name);
			print_field(out, ev->proc, r, &k->f[i]);
		}
		fprintf(out, " dur=%lluns\n", (unsigned long long)ev->dur_ns);
	}
	return 0;
}

/* Every exec attempt writes END(exec) before it happens; one that failed
 * adds an EXEC record with its errno after that END. When the last END is
 * an exec's (every earlier one was too), it is the last attempt's, and it
 * failed if every attempt has its failure record. */
/* The GPU's timing samples: how many, the losses, each stream's measured
 * busy spans ([start, end] ns, from t0 as the events' ts_ns) */
static void dump_gpu_json(struct ft_json *j, const struct ft_process *p, uint64_t t0)
{
	char key[32];
	ft_json_obj(j, "gpu");
	ft_json_u64(j, "origin_ns", t0);    /* the spans' 0, in trace ns */
	ft_json_int(j, "samples", p->ngpu);
	int why[5] = { 0 };
	for (int i = 0; i < p->ngpu; i++)
		why[p->gpu[i].why < 5 ? p->gpu[i].why : 0]++;
	ft_json_int(j, "after_idle", why[FT_GPU_WHY_IDLE]);
	ft_json_int(j, "interval", why[FT_GPU_WHY_INTERVAL]);
	ft_json_int(j, "before_sync", why[FT_GPU_WHY_SYNC]);
	ft_json_int(j, "before_wait", why[FT_GPU_WHY_WAIT]);
	ft_json_obj(j, "lost");
	ft_json_u64(j, "exhausted", p->gpu_lost.exhausted);
	ft_json_u64(j, "capture", p->gpu_lost.capture);
	ft_json_u64(j, "pending", p->gpu_lost.pending);
	ft_json_u64(j, "ctx_gone", p->gpu_lost.ctx_gone);
	ft_json_u64(j, "errors", p->gpu_lost.errors);
	ft_json_end(j);
	struct ft_gpu_span *sp;
	int n = ft_gpu_measured_spans(p, &sp);
	ft_json_obj(j, "streams");
	for (int i = 0; i < n;) {
		snprintf(key, sizeof key, "%llu", (unsigned long long)sp[i].stream);
		ft_json_arr(j, key);
		uint64_t s = sp[i].stream;
		for (; i < n && sp[i].stream == s; i++) {
			ft_json_arr(j, NULL);
			ft_json_u64(j, NULL, sp[i].start > t0 ? sp[i].start - t0 : 0);
			ft_json_u64(j, NULL, sp[i].end > t0 ? sp[i].end - t0 : 0);
			ft_json_end(j);
		}
		ft_json_end(j);
	}
	ft_json_end(j);
	free(sp);
	ft_json_end(j);
}

static const char *end_reason(const struct dump_ctx *c, const struct ft_process *p)
{
	if (p->has_end && p->end.reason == FT_END_EXEC &&
	    c->exec_failed >= (uint64_t)p->end_count)
		return "exec failed, continued; no end record after (killed, or still running)";
	if (!p->has_end)
		return "no end record (killed, or still running)";
	switch (p->end.reason) {
	case FT_END_EXIT: return "exit";
	case FT_END__EXIT: return "_exit";
	case FT_END_SIGNAL: return "signal";
	case FT_END_EXEC: return "exec";
	default: return "unknown";
	}
}

/* A kind's name in the tally: a kind that shares its call's name with
 * a file call's kind (read of a pipe, socket or eventfd: a wait) says so,
 * so that the file reads' count is not taken for the whole. */
static const char *tally_name(unsigned k)
{
	return k == FT_EV_PIPE_READ ? "read (pipe)" : ft_kind(k)->name;
}

/* one line per kind of loss the process counted, with what to change */
static void loss_lines(FILE *out, const struct ft_process *p)
{
	for (int k = 0; k < FT_LOSS_N; k++) {
		uint64_t n = ft_process_loss(p, (enum ft_loss)k);
		if (n)
			fprintf(out, "   LOST %llu %s: %s\n", (unsigned long long)n,
				ft_loss_info[k].what, ft_loss_info[k].fix);
	}
}

/* the major page faults since the process first mapped a file */
static void fault_line(FILE *out, const struct ft_process *p)
{
	uint64_t n, ns;
	if (!ft_thread_faults(p, 0, 0, UINT64_MAX, &n, &ns))
		return;
	fprintf(out, "   major page faults since a file was mapped: %llu", (unsigned long long)n);
	if (ft_fault_wait(p, 0, 0, UINT64_MAX, &ns))
		fprintf(out, " (block I/O wait %.3f s)", (double)ns / 1e9);
	int shown = 0;
	for (int i = 0; i < p->nfaults && shown < 8; i++) {
		uint64_t tn, tns;
		if (!p->faults[i].tid || !ft_thread_faults(p, p->faults[i].tid, 0, UINT64_MAX, &tn, &tns) ||
		    !tn)
			continue;
		fprintf(out, "%s %d: %llu", shown++ ? "," : "; thread", p->faults[i].tid,
			(unsigned long long)tn);
	}
	fputc('\n', out);
}

static void tally(struct dump_ctx *c, const struct ft_process *p)
{
	FILE *out = c->out;
	uint64_t lost = ft_process_loss(p, FT_LOSS_RECORDS);
	if (c->json) {
		struct ft_json jw, *j = &jw;
		char key[16], run[24];
		ft_json_begin(j, out);
		ft_json_obj(j, NULL);
		ft_json_obj(j, "process");
		ft_json_int(j, "pid", p->hdr.pid);
		ft_json_int(j, "ppid", p->hdr.ppid);
		ft_json_u64(j, "exec_seq", p->hdr.exec_seq);
		snprintf(run, sizeof run, "%016llx", (unsigned long long)p->hdr.run_id);
		ft_json_str(j, "run_id", run);
		ft_rank_json(j, p);
		ft_json_str(j, "host", p->hdr.host);
		ft_json_int(j, "clock_kind", (int)p->hdr.clock_kind);
		ft_json_str(j, "cmdline", p->cmdline ? p->cmdline : "");
		ft_json_str(j, "exe", p->exe);
		ft_json_str(j, "file", p->path ? p->path : "");
		ft_json_str(j, "end", end_reason(c, p));
		ft_json_int(j, "status", p->has_end ? p->end.status : 0);
		ft_json_int(j, "threads", ft_traced_threads(p));
		ft_json_u64(j, "records", p->records);
		ft_json_u64(j, "damaged_chunks", p->bad_chunks);
		ft_json_u64(j, "duplicate_slots", p->dup_slots);
		for (int k = 0; k < FT_LOSS_N; k++)
			ft_json_u64(j, ft_loss_info[k].key, ft_process_loss(p, (enum ft_loss)k));
		ft_json_u64(j, "strings", ft_string_count(p));
		if (p->nflight) {
			ft_json_obj(j, "flight");
			ft_json_str(j, "why", ft_flight_why(p->flight_last.why));
			ft_json_int(j, "detail", p->flight_last.detail);
			ft_json_int(j, "windows", p->nflight);
			ft_json_u64(j, "window_ns", ft_flight_window_ns(p));
			ft_json_u64(j, "run_ns", ft_flight_run_ns(p));
			ft_json_u64(j, "dropped_chunks", p->flight_last.dropped_chunks);
			ft_json_u64(j, "dropped_slots", p->flight_last.dropped_slots);
			ft_json_end(j);
		}
		ft_json_obj(j, "thread_names");
		for (int i = 0; i < p->nthreads; i++) {
			if (!ft_thread_traced(&p->threads[i]))
				continue;
			snprintf(key, sizeof key, "%d", p->threads[i].tid);
			ft_json_str(j, key, ft_thread_name(p, p->threads[i].tid));
		}
		ft_json_end(j);
		/* CPU samples per thread: how many, the last CPU time (ns) */
		ft_json_obj(j, "cpu");
		for (int i = 0; i < p->nthreads; i++) {
			const struct ft_thread_rec *t = &p->threads[i];
			if (!t->ncpu)
				continue;
			snprintf(key, sizeof key, "%d", t->tid);
			ft_json_obj(j, key);
			ft_json_int(j, "samples", t->ncpu);
			ft_json_u64(j, "last_ns", t->cpu[t->ncpu - 1].cpu_ns);
			ft_json_end(j);
		}
		ft_json_end(j);
		/* major page faults since the first mapping of a file, per
		 * thread ("0": the process), with their block I/O wait */
		ft_json_obj(j, "faults");
		for (int i = 0; i < p->nfaults; i++) {
			uint64_t n, ns;
			ft_thread_faults(p, p->faults[i].tid, 0, UINT64_MAX, &n, &ns);
			snprintf(key, sizeof key, "%d", p->faults[i].tid);
			ft_json_obj(j, key);
			ft_json_int(j, "samples", p->faults[i].n);
			ft_json_u64(j, "majflt", n);
			if (p->faults[i].timed)
				ft_json_u64(j, "blkio_ns", ns);
			ft_json_end(j);
		}
		ft_json_end(j);
		/* run-queue delay samples per thread: how many, the last delay (ns) */
		ft_json_obj(j, "runq");
		for (int i = 0; i < p->nthreads; i++) {
			const struct ft_thread_rec *t = &p->threads[i];
			if (!t->nrunq)
				continue;
			snprintf(key, sizeof key, "%d", t->tid);
			ft_json_obj(j, key);
			ft_json_int(j, "samples", t->nrunq);
			ft_json_u64(j, "last_ns", t->runq[t->nrunq - 1].cpu_ns);
			ft_json_end(j);
		}
		ft_json_end(j);
		dump_gpu_json(j, p, c->t0);
		ft_json_arr(j, "windows");
		for (int i = 0; i < p->nwin; i++) {
			const struct ft_window *w = &p->win[i];
			ft_json_obj(j, NULL);
			ft_json_int(j, "seq", w->seq);
			ft_json_str(j, "reason", ft_window_reason_name(w->reason));
			ft_json_str(j, "unit", ft_window_unit_name(w->unit));
			ft_json_u64(j, "demand", w->demand);
			ft_json_u64(j, "first_step", w->first_step);
			ft_json_u64(j, "last_step", w->last_step);
			/* on the events' clock: ns since the trace's start */
			ft_json_int(j, "start_ns", (int64_t)(ft_ticks_to_ns(p, w->start_ticks) - c->t0));
			if (w->end_ticks)
				ft_json_int(j, "end_ns", (int64_t)(ft_ticks_to_ns(p, w->end_ticks) - c->t0));
			else
				ft_json_null(j, "end_ns");
			ft_json_end(j);
		}
		ft_json_end(j);
		ft_json_obj(j, "calls");
		for (unsigned k = 1; k < FT_EV_COUNT; k++)
			if (c->counts[k])
				ft_json_u64(j, tally_name(k), c->counts[k]);
		ft_json_end(j);
		ft_json_end(j);
		ft_json_end(j);
		fputc('\n', out);
		return;
	}
	char rk[40];
	ft_rank_text(p, rk, sizeof rk);
	fprintf(out, "== process %d (%s) on %s, parent %d, run %016llx%s%s\n", p->hdr.pid,
		p->cmdline, p->hdr.host, p->hdr.ppid, (unsigned long long)p->hdr.run_id,
		*rk ? ", " : "", rk);
	fprintf(out, "   end: %s", end_reason(c, p));
	if (p->has_end)
		fprintf(out, " (status %d)", p->end.status);
	fprintf(out, "; threads %d, records %llu, lost %llu, damaged chunks %llu",
		ft_traced_threads(p), (unsigned long long)p->records, (unsigned long long)lost,
		(unsigned long long)p->bad_chunks);
	if (p->dup_slots)
		fprintf(out, ", duplicate slots skipped %llu", (unsigned long long)p->dup_slots);
	fputc('\n', out);
	char fw[320];
	if (ft_words_flight(p, fw, sizeof fw))
		fprintf(out, "   %s\n", fw);
	loss_lines(out, p);
	fault_line(out, p);
	int col = 0;
	for (unsigned k = 1; k < FT_EV_COUNT; k++) {
		if (!c->counts[k])
			continue;
		col += fprintf(out, "%s%s %llu", col ? ", " : "   ", tally_name(k),
			       (unsigned long long)c->counts[k]);
		if (col > 68) {
			fputc('\n', out);
			col = 0;
		}
	}
	if (col)
		fputc('\n', out);
}

static const char dump_usage[] =
	"usage: feedtrace dump DIR [--json] [--summary]\n"
	"Every recorded call of the run in DIR, one line each, then a tally per\n"
	"process (with LOST lines for anything counted but not recorded).\n"
	"  --json     one JSON object per call, then one per process\n"
	"  --summary  the tally only\n"
	"  -h, --help this text\n"
	"Example: feedtrace dump feedtrace-20261122-001500-4242 --summary\n";

static int dump_main(int argc, char **argv, FILE *out, int summary)
{
	struct dump_ctx c;
	const char *dir = NULL;
	memset(&c, 0, sizeof c);
	c.out = out;
	c.summary = summary;
	enum { JSON = FT_OPT_OWN, SUMMARY };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, JSON },
		{ "summary", no_argument, NULL, SUMMARY },
		FT_HELP_LONGOPTS,
	};
	struct ft_cli cli;
	int code;
	ft_cli_begin(&cli, "dump", argc, argv);
	while ((code = ft_cli_next(&cli, ":h", opts, NULL)) != -1) {
		switch (code) {
		case JSON: c.json = 1; break;
		case SUMMARY: c.summary = 1; break;
		case 'h':
			fputs(dump_usage, stdout);
			ft_cli_end(&cli);
			return 0;
		default:
			ft_cli_bad(&cli, code);
			fputs(dump_usage, stderr);
			ft_cli_end(&cli);
			return 2;
		}
	}
	if (optind + 1 == cli.argc)
		dir = cli.argv[optind];
	ft_cli_end(&cli);
	if (!dir) {
		fputs(dump_usage, stderr);
		return 2;
	}
	struct ft_trace tr;
	if (ft_trace_open(dir, &tr, stderr) != 0)
		return 1;
	c.t0 = tr.start_ns;
	c.tr = &tr;
	for (int i = 0; i < tr.nprocs && !ferror(out); i++) {   /* output lost: stop */
		memset(c.counts, 0, sizeof c.counts);
		c.p = tr.procs[i];
		ft_process_events(tr.procs[i], dump_event, &c, stderr);
		tally(&c, tr.procs[i]);
	}
	/* damage was reported on stderr; what was intact has been printed */
	ft_symbols_print_notes(stderr, "feedtrace dump: ");
	ft_trace_close(&tr);
	return 0;
}

int ft_cmd_dump(int argc, char **argv)
{
	return dump_main(argc, argv, stdout, 0);
}

/* the tally alone, on stderr (feedtrace run) */
int ft_cmd_summary(int argc, char **argv)
{
	return dump_main(argc, argv, stderr, 1);
}
