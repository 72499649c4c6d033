/*
 * counters.c: the per-bin counters of one process (launches, reads and
 * bytes read per bin, work outstanding on the GPU at most), handed to the
 * sink at each bin's end, only when a value changed; idle bins in between
 * drop the rates to 0 (docs/ANALYSES.md). gpu.c and reads.c add to the
 * current bin; analysis.c moves the bins on with each event's start.
 */
#include <string.h>

#include "analyses.h"
#include "counters.h"

void ft_counters_init(struct ft_counters *c, uint64_t bin_ns, const struct ft_an_sink *sink)
{
	memset(c, 0, sizeof *c);
	c->bin_ns = bin_ns;
	c->sink = *sink;
}

static void emit_ctr(struct ft_counters *a, int which, uint64_t ts, int64_t v)
{
	if (a->shown[which] == v)
		return;
	a->shown[which] = v;
	if (a->sink.counter)
		a->sink.counter(a->sink.arg, which, ts, v);
}

static void close_bin(struct ft_counters *a, uint64_t next_bin)
{
	uint64_t t = a->bin * a->bin_ns;
	a->v[FT_CTR_OUTSTANDING] = (int64_t)a->out_max;
	for (int c = 0; c < FT_CTR_N; c++)
		emit_ctr(a, c, t, a->v[c]);
	if (next_bin > a->bin + 1) {         /* idle bins in between: rates drop to 0 */
		for (int c = 0; c < FT_CTR_OUTSTANDING; c++)
			emit_ctr(a, c, t + a->bin_ns, 0);
		emit_ctr(a, FT_CTR_OUTSTANDING, t + a->bin_ns, (int64_t)a->out_total);
	}
	memset(a->v, 0, sizeof a->v);
	a->bin = next_bin;
	a->out_max = a->out_total;
}

void ft_counters_at(struct ft_counters *a, uint64_t ts)
{
	if (a->have_bin && ts < a->bin_end)  /* in the current bin (or earlier) */
		return;
	uint64_t b = ts / a->bin_ns;
	if (!a->have_bin) {
		a->have_bin = 1;
		a->bin = b;
	} else if (b > a->bin) {
		close_bin(a, b);
	}
	a->bin_end = (a->bin + 1) * a->bin_ns;   /* wraps: only divides again */
}

void ft_counters_finish(struct ft_counters *c)
{
	if (c->have_bin)
		close_bin(c, c->bin + 2);        /* the last bin, then rates back to 0 */
}

/* ---- as one of the analyses (analyses.h): the driver moves the bins on
 * before each event (ctx->ctr is shared); in the table for its finish,
 * whose place orders its last values among the findings ---- */

static void *counters_op_new(struct ft_an_ctx *c)
{
	return &c->ctr;
}

static void counters_op_finish(void *s, struct ft_an_ctx *c)
{
	(void)c;
	ft_counters_finish(s);
}

static void counters_op_free(void *s)
{
	(void)s;
}

const struct ft_an_ops ft_an_counters = { "counters", counters_op_new, NULL, NULL,
					  counters_op_finish, counters_op_free };
