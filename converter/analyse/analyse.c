/*
 * analyse.c: one process through the analyses (analyse.h), the one driver
 * that report and convert --ranks share. A process with a launcher's rank
 * identity, or that loaded libgloo, gets a light first pass for the collectives
 * that block their thread (gloo runs each on a worker thread of
 * ProcessGroupGloo while the training thread waits for it in a condition
 * variable): the analyses need them before the waits they contain, which
 * start earlier (convert's own pass over a process asks ft_coll_spans for
 * them too). A process with no launcher's identity takes the one its gloo
 * contexts give (torch.multiprocessing.spawn).
 */
#include <stdlib.h>
#include <string.h>

#include "analyse.h"
#include "analyses.h"
#include "util.h"

struct spans { struct ft_span *v; int n, cap; };

static int span_event(const struct ft_event *ev, void *arg)
{
	struct spans *s = arg;
	const struct ft_kfacts *f = ft_kfacts(ev->rec->kind);
	if (!f || f->coll != 2)
		return 0;
	if (s->n == s->cap)
		FT_GROW(s->v, s->cap, 8);
	s->v[s->n++] = (struct ft_span){ ev->ts_ns, ev->ts_ns + ev->dur_ns, ev->tid };
	return 0;
}

int ft_coll_spans(struct ft_process *p, const struct ft_merge_opts *mg, FILE *err,
		  struct ft_span **out)
{
	struct spans s = { 0 };
	ft_merge_events(p, mg, span_event, &s, err, NULL);
	*out = s.v;
	return s.n;
}

int ft_may_block_in_collectives(const struct ft_process *p)
{
	if (p->hdr.world_size > 0)
		return 1;
	for (int i = 0; i < p->nmods; i++) {
		const char *b = strrchr(p->mods[i].path, '/');
		if (!strncmp(b ? b + 1 : p->mods[i].path, "libgloo", 7))
			return 1;
	}
	return 0;
}

struct feed { struct ft_an *an; uint64_t events; ft_analyse_tick tick; void *targ; };

static int feed(const struct ft_event *ev, void *arg)
{
	struct feed *f = arg;
	ft_an_event(f->an, ev);
	if ((f->events++ & 0xffff) == 0 && f->tick)
		f->tick(f->targ, ev->proc, f->events);
	return 0;
}

void ft_analyse(struct ft_process *p, const struct ft_an_opts *o, const struct ft_merge_opts *mg,
		const struct ft_an_sink *sink, FILE *err, ft_analyse_tick tick, void *targ,
		struct ft_metrics *m, struct ft_verdict *v)
{
	struct feed fd = { ft_an_new(p, o, sink), 0, tick, targ };
	if (ft_may_block_in_collectives(p)) {
		struct ft_span *sp;
		int n = ft_coll_spans(p, mg, ft_said_once(err), &sp);
		ft_an_blocking(fd.an, sp, n);
		free(sp);
	}
	ft_merge_events(p, mg, feed, &fd, err, NULL);
	ft_an_finish(fd.an, m, v);
	ft_an_free(fd.an);
	/* no launcher's identity (torch.multiprocessing.spawn): its gloo
	 * contexts say which rank of which world it is */
	if (!p->hdr.world_size && v->coll_world >= 2)
		ft_take_gloo_identity(&p->hdr, v->coll_rank, v->coll_world);
}

void ft_take_gloo_identity(struct ft_file_header *h, int32_t rank, int32_t world)
{
	h->rank = rank;
	h->world_size = world;
	h->local_rank = -1;
	h->launcher = FT_LAUNCH_GLOO;
}
