/*
 * xflows.c: flows between processes (xflows.h). A multiprocessing queue
 * is a pipe: its maker (the main process) keeps the read end, the workers
 * it forks after write into the write end (the same number in their
 * copy of its descriptor table). Each message is one write (a 4-byte
 * length and the body together; a large body after a 4-byte write of its
 * own, which is the message's write then) and one 4-byte read of the
 * length by the receiver, in order: the k-th message written is the k-th
 * read. So, for each pipe a process made and read 4-byte lengths from,
 * its children's writes on the other end, by their start (concurrent
 * writes of a message or less are atomic, in the order they took the
 * pipe), are matched in order with those reads (a write that began after
 * the read returned is not its message). Flow ids come from their own range (FLOW_BASE up),
 * apart from the converter's per-process ones.
 */
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "util.h"
#include "xflows.h"

#define FLOW_BASE (1ull << 48)

struct pipe_made { int32_t r, w; uint64_t ts; };
struct call { int32_t tid, fd; uint64_t ts, end; uint32_t req; int skip; };
struct hit { int32_t tid; uint64_t ts, flow; int term; };

struct proc {
	struct pipe_made *pm; int npm, cappm;
	struct call *wr; int nwr, capwr;        /* pipe writes */
	struct call *rd; int nrd, caprd;        /* 4-byte reads of a pipe */
	struct hit *hit; int nhit, caphit;      /* sorted by (tid, ts) after pairing */
	int32_t last_tid, last_fd;              /* the last write was a 4-byte header */
};

struct ft_xflows {
	struct proc *p;
	int n;
	uint64_t next, pairs;
};

struct ft_xflows *ft_xflows_new(int nprocs)
{
	struct ft_xflows *x = ft_xcalloc(1, sizeof *x);
	x->p = ft_xcalloc((size_t)(nprocs > 0 ? nprocs : 1), sizeof *x->p);
	x->n = nprocs;
	x->next = FLOW_BASE;
	return x;
}

void ft_xflows_event(struct ft_xflows *x, int i, const struct ft_event *ev)
{
	const struct ft_rec *r = ev->rec;
	struct proc *p = &x->p[i];
	const uint32_t *u = r->p.u32;
	if (r->kind == FT_EV_FD_NEW && u[2] == FT_FDK_PIPE && (int32_t)u[3] == 0) {
		if (p->npm == p->cappm)
			FT_GROW(p->pm, p->cappm, 8);
		p->pm[p->npm++] = (struct pipe_made){ (int32_t)u[0], (int32_t)u[1], ev->ts_ns };
	} else if (r->kind == FT_EV_PIPE_WRITE && u[1] == FT_FDK_PIPE && (int32_t)u[3] > 0) {
		/* a body written after its own 4-byte header is that message's */
		int body = p->last_tid == ev->tid && p->last_fd == (int32_t)u[0];
		p->last_tid = u[2] == 4 ? ev->tid : 0;
		p->last_fd = u[2] == 4 ? (int32_t)u[0] : -1;
		if (body)
			return;
		if (p->nwr == p->capwr)
			FT_GROW(p->wr, p->capwr, 8);
		p->wr[p->nwr++] = (struct call){ ev->tid, (int32_t)u[0], ev->ts_ns,
						 ev->ts_ns + ev->dur_ns, u[2], 0 };
	} else if (r->kind == FT_EV_PIPE_READ && u[1] == FT_FDK_PIPE && u[2] == 4 &&
		   (int32_t)u[3] == 4) {
		if (p->nrd == p->caprd)
			FT_GROW(p->rd, p->caprd, 8);
		p->rd[p->nrd++] = (struct call){ ev->tid, (int32_t)u[0], ev->ts_ns,
						 ev->ts_ns + ev->dur_ns, 4, 0 };
	}
}

static int by_end(const void *a, const void *b)
{
	const struct call *x = *(const struct call *const *)a, *y = *(const struct call *const *)b;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int by_start(const void *a, const void *b)
{
	const struct call *x = *(const struct call *const *)a, *y = *(const struct call *const *)b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int by_tid_ts(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void add_hit(struct proc *p, int32_t tid, uint64_t ts, uint64_t flow, int term)
{
	if (p->nhit == p->caphit)
		FT_GROW(p->hit, p->caphit, 8);
	p->hit[p->nhit++] = (struct hit){ tid, ts, flow, term };
}

void ft_xflows_pair(struct ft_xflows *x, const struct ft_role_proc *rl)
{
	for (int ri = 0; ri < x->n; ri++) {
		struct proc *rp = &x->p[ri];
		for (int k = 0; k < rp->npm; k++) {
			const struct pipe_made *pm = &rp->pm[k];
			/* this pipe's reads: on its read end, after it was made and
			 * before the number was made again */
			uint64_t until = ~0ull;
			for (int q = 0; q < rp->npm; q++)
				if (q != k && rp->pm[q].r == pm->r && rp->pm[q].ts > pm->ts &&
				    rp->pm[q].ts < until)
					until = rp->pm[q].ts;
			int nr = 0, nw = 0;
			for (int q = 0; q < rp->nrd; q++)
				nr += rp->rd[q].fd == pm->r && rp->rd[q].ts > pm->ts && rp->rd[q].ts < until;
			if (!nr)
				continue;
			for (int wi = 0; wi < x->n; wi++)
				if (rl[wi].parent == ri)
					for (int q = 0; q < x->p[wi].nwr; q++)
						nw += x->p[wi].wr[q].fd == pm->w && x->p[wi].wr[q].ts > pm->ts;
			if (!nw)
				continue;
			struct call **rs = ft_xmalloc(sizeof *rs * (size_t)nr);
			struct call **ws = ft_xmalloc(sizeof *ws * (size_t)nw);
			int *wp = ft_xmalloc(sizeof *wp * (size_t)nw);
			nr = nw = 0;
			for (int q = 0; q < rp->nrd; q++)
				if (rp->rd[q].fd == pm->r && rp->rd[q].ts > pm->ts && rp->rd[q].ts < until)
					rs[nr++] = &rp->rd[q];
			for (int wi = 0; wi < x->n; wi++)
				if (rl[wi].parent == ri)
					for (int q = 0; q < x->p[wi].nwr; q++)
						if (x->p[wi].wr[q].fd == pm->w && x->p[wi].wr[q].ts > pm->ts)
							wp[nw] = wi, ws[nw++] = &x->p[wi].wr[q];
			/* the process index travels with the write: sort pairs */
			struct call **order = ft_xmalloc(sizeof *order * (size_t)nw);
			memcpy(order, ws, sizeof *order * (size_t)nw);
			qsort(order, (size_t)nw, sizeof *order, by_start);
			qsort(rs, (size_t)nr, sizeof *rs, by_end);
			int j = 0;
			for (int q = 0; q < nr && j < nw; q++) {
				/* the write began before the read returned (its own
				 * end may come later: the writer is descheduled as
				 * the reader wakes) */
				if (order[j]->ts > rs[q]->end)
					continue;       /* not written yet: a message from elsewhere */
				int wi = -1;
				for (int m = 0; m < nw && wi < 0; m++)
					if (ws[m] == order[j])
						wi = wp[m];
				uint64_t flow = x->next++;
				add_hit(&x->p[wi], order[j]->tid, order[j]->ts, flow, 0);
				add_hit(rp, rs[q]->tid, rs[q]->ts, flow, 1);
				x->pairs++;
				j++;
			}
			free(rs);
			free(ws);
			free(wp);
			free(order);
		}
	}
	for (int i = 0; i < x->n; i++)
		if (x->p[i].nhit > 1)
			qsort(x->p[i].hit, (size_t)x->p[i].nhit, sizeof *x->p[i].hit, by_tid_ts);
}

uint64_t ft_xflows_of(const struct ft_xflows *x, int i, int32_t tid, uint64_t ts,
		      int *terminating)
{
	if (!x || i < 0 || i >= x->n || !x->p[i].nhit)
		return 0;
	const struct proc *p = &x->p[i];
	int lo = 0, hi = p->nhit - 1;
	while (lo <= hi) {
		int m = (lo + hi) / 2;
		const struct hit *h = &p->hit[m];
		if (h->tid == tid && h->ts == ts) {
			*terminating = h->term;
			return h->flow;
		}
		if (h->tid < tid || (h->tid == tid && h->ts < ts))
			lo = m + 1;
		else
			hi = m - 1;
	}
	return 0;
}

uint64_t ft_xflows_count(const struct ft_xflows *x)
{
	return x ? x->pairs : 0;
}

void ft_xflows_free(struct ft_xflows *x)
{
	if (!x)
		return;
	for (int i = 0; i < x->n; i++) {
		free(x->p[i].pm);
		free(x->p[i].wr);
		free(x->p[i].rd);
		free(x->p[i].hit);
	}
	free(x->p);
	free(x);
}
