/*
 * tests/unit/an.c: the harness of tests/unit/an.h: records built from
 * events.def's field names (converter/read/events.h), the analyses' sink, the
 * checks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an.h"
#include "events.h"
#include "reader.h"
#include "util.h"

int an_failed;

void an_init(struct an_run *r, int32_t pid, const char *cmdline)
{
	memset(r, 0, sizeof *r);
	r->p = ft_process_mem(pid, cmdline, T0);
	ft_an_default_opts(&r->o);
}

void an_ev(struct an_run *r, int32_t tid, unsigned kind, uint64_t ts, uint64_t dur, ...)
{
	const struct ft_kind_info *k = ft_kind(kind);
	if (!k) {
		fprintf(stderr, "an_ev: no kind %u\n", kind);
		exit(2);
	}
	struct ft_rec *rec = ft_xcalloc(k->nslots, sizeof *rec);
	rec->ts = ts;
	rec->dur = (uint32_t)dur;
	rec->kind = (uint16_t)kind;
	rec->nslots = (uint8_t)k->nslots;
	va_list ap;
	va_start(ap, dur);
	for (const char *name; (name = va_arg(ap, const char *));) {
		uint64_t v = va_arg(ap, uint64_t);
		const struct ft_field *f = ft_kind_field(k, name);
		if (!f) {
			fprintf(stderr, "an_ev: %s has no field %s\n", k->name, name);
			exit(2);
		}
		if (f->type == FT_F_STR)
			v = ft_process_mem_string(r->p, (const char *)(uintptr_t)v);
		if (f->size == 8) {
			memcpy((unsigned char *)rec + f->off, &v, 8);
		} else {
			uint32_t v32 = (uint32_t)v;
			memcpy((unsigned char *)rec + f->off, &v32, 4);
		}
	}
	va_end(ap);
	if (r->n == r->cap)
		FT_GROW(r->ev, r->cap, 64);
	r->ev[r->n] = (struct an_item){ { r->p, tid, ts, dur, rec }, r->n };
	r->n++;
	if (ts + dur > r->p->last_ns)
		r->p->last_ns = ts + dur;
}

static void sink_finding(void *arg, const struct ft_finding *f)
{
	struct an_run *r = arg;
	if (r->nf == AN_MAX_FINDINGS) {
		fprintf(stderr, "an: more than %d findings\n", AN_MAX_FINDINGS);
		exit(2);
	}
	struct ft_finding *k = &r->f[r->nf++];
	*k = *f;
	k->bursts = NULL;
	k->bins = NULL;
	k->cov = NULL;
}

static int by_start(const void *a, const void *b)
{
	const struct an_item *x = a, *y = b;
	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	return x->seq - y->seq;              /* stable: the order given */
}

void an_analyse(struct an_run *r)
{
	struct ft_an_sink sink = { .finding = sink_finding, .arg = r };
	qsort(r->ev, (size_t)r->n, sizeof *r->ev, by_start);
	struct ft_an *a = ft_an_new(r->p, &r->o, &sink);
	for (int i = 0; i < r->n; i++)
		ft_an_event(a, &r->ev[i].ev);
	ft_an_finish(a, &r->m, &r->v);
	ft_an_free(a);
}

void an_free(struct an_run *r)
{
	for (int i = 0; i < r->n; i++)
		free((void *)r->ev[i].ev.rec);
	free(r->ev);
	ft_verdict_free(&r->v);
	ft_process_mem_free(r->p);
	memset(r, 0, sizeof *r);
}

int an_count(const struct an_run *r, int kind)
{
	int n = 0;
	for (int i = 0; i < r->nf; i++)
		n += r->f[i].kind == kind;
	return n;
}

const struct ft_finding *an_nth(const struct an_run *r, int kind, int i)
{
	for (int j = 0; j < r->nf; j++)
		if (r->f[j].kind == kind && i-- == 0)
			return &r->f[j];
	fprintf(stderr, "an: no finding %d of kind %d\n", i, kind);
	exit(2);
}

void an_fail_u(const char *file, int line, const char *what, uint64_t got, uint64_t want)
{
	fprintf(stderr, "%s:%d: %s is %llu, not %llu\n", file, line, what,
		(unsigned long long)got, (unsigned long long)want);
	an_failed++;
}

void an_fail_s(const char *file, int line, const char *what, const char *got, const char *want)
{
	fprintf(stderr, "%s:%d: %s is \"%s\", not \"%s\"\n", file, line, what,
		got ? got : "(null)", want);
	an_failed++;
}

int an_done(const char *name)
{
	if (an_failed) {
		fprintf(stderr, "%s: %d checks failed\n", name, an_failed);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}
