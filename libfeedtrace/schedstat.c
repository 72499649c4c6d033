/*
 * schedstat.c: each traced thread's run-queue delay (runq.c) as SCHED
 * chunks (docs/FORMAT.md): each live thread sampled by the flusher at
 * every cycle, in the flusher's own table of descriptors.
 */
#include <string.h>
#include <sys/uio.h>

#include "internal.h"
#include "runq.h"
#include "schedstat.h"

void ft_sched_add(struct ft_sched_batch *b, int32_t tid, uint64_t ticks, uint64_t wait_ns)
{
	struct ft_sched_sample *s = &b->s[b->n];
	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->ticks = ticks;
	s->wait_ns = wait_ns;
	if (++b->n == sizeof b->s / sizeof b->s[0])
		ft_sched_write(b);
}

void ft_sched_sample(struct ft_sched_batch *b, const struct ft_thread *t)
{
	uint64_t w;
	if (ft_sched_wait_ns(t->tid, &w) == 0)
		ft_sched_add(b, t->tid, ft_now(), w);
}

void ft_sched_write(struct ft_sched_batch *b)
{
	if (!b->n)
		return;
	struct iovec v = { b->s, b->n * sizeof b->s[0] };
	ft_output_write_chunk(FT_CHUNK_SCHED, FT_CODEC_RAW, (uint32_t)v.iov_len, &v, 1);
	b->n = 0;
}
