/*
 * colls.c: one process's NCCL collectives (all-reduce, broadcast,
 * all-gather, reduce-scatter) in call order, each with its communicator's
 * number in the process (by first use: ranks create their communicators
 * in the same order) for ranks.c to match the k-th collective of a
 * communicator across ranks. Point-to-point sends and receives are not
 * collectives. Memory grows with collectives (tens of thousands in a long
 * job: 24 bytes each).
 */
#include <stdlib.h>

#include "util.h"
#include "analyses.h"
#include "events.h"

struct colls {
	struct ft_coll *v; int n, cap;
	struct ft_map comms;             /* the communicator's handle -> its number */
	uint32_t ncomms;
};

static void *colls_new(struct ft_an_ctx *c)
{
	(void)c;
	return ft_xcalloc(1, sizeof(struct colls));
}

static void colls_event(void *s, struct ft_an_ctx *c, const struct ft_an_ev *e)
{
	struct colls *cl = s;
	if (!e->f || !e->f->coll)
		return;
	uint64_t comm = e->f->comm ? ft_field_raw(e->r, e->f->comm) : 0;
	long i = ft_map_get(&cl->comms, comm);
	if (i < 0) {
		i = cl->ncomms++;
		ft_map_put(&cl->comms, comm, (uint32_t)i);
	}
	if (e->f->rank && e->f->size && !c->out.coll_world) {
		int32_t rank = (int32_t)ft_field_signed(e->r, e->f->rank);
		int32_t size = (int32_t)ft_field_signed(e->r, e->f->size);
		if (size >= 2 && rank >= 0 && rank < size)
			c->out.coll_rank = rank, c->out.coll_world = size;
	}
	if (cl->n == cl->cap)
		FT_GROW(cl->v, cl->cap, 8);
	cl->v[cl->n++] = (struct ft_coll){ (uint32_t)i, e->r->kind, e->ev->ts_ns, e->end };
}

static void colls_finish(void *s, struct ft_an_ctx *c)
{
	struct colls *cl = s;
	c->out.colls = cl->v;
	c->out.ncolls = cl->n;
	cl->v = NULL;
	cl->n = cl->cap = 0;
}

static void colls_free(void *s)
{
	struct colls *cl = s;
	free(cl->v);
	ft_map_free(&cl->comms);
	free(cl);
}

static int colls_wants(const struct ft_kfacts *f)
{
	return f->coll;
}

const struct ft_an_ops ft_an_colls = { "colls", colls_new, colls_wants, colls_event, colls_finish,
				       colls_free };
