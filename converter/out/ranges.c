/*
 * ranges.c: user ranges and marks in the timeline (convert.c hands them
 * over). A push/pop range becomes a slice on its thread's track, named
 * after the range (nested ranges nest); a start/end range, which may end
 * on another thread, a slice on the process's "ranges" tracks (lanes so
 * slices never overlap); a mark an instant on its thread's track. Ranges
 * still open at the end of the process are closed at its last event and
 * say so (arg "unclosed").
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "util.h"
#include "ranges.h"

#define MAX_DEPTH 64
#define MAX_LANES 32

struct rpush { int32_t level; uint32_t name, api; uint64_t ts; };
struct rthread { int32_t tid; uint64_t track; int n; struct rpush s[MAX_DEPTH]; };
struct rasync { uint64_t id, ts; uint32_t name, api; };

struct ft_ranges {
	struct ft_pipe *pl;
	const struct ft_process *p;
	uint64_t proc_id;
	int64_t shift;
	struct rthread *th; int nth, capth;
	struct rasync *as; int nas, capas;
	uint64_t lane_id[MAX_LANES], lane_end[MAX_LANES];
	int nlanes;
	uint64_t last_ts;
	uint64_t *slices;
};

static const char *const api_word[] = { "nvtx", "nvtx domain", "feedtrace" };

int ft_ranges_kind(unsigned kind)
{
	return kind == FT_EV_RANGE_PUSH || kind == FT_EV_RANGE_POP ||
	       kind == FT_EV_RANGE_START || kind == FT_EV_RANGE_END || kind == FT_EV_MARK;
}

struct ft_ranges *ft_ranges_new(struct ft_pipe *pl, const struct ft_process *p, uint64_t proc_id,
				int64_t ts_shift, uint64_t *slices)
{
	struct ft_ranges *r = ft_xcalloc(1, sizeof *r);
	r->pl = pl;
	r->p = p;
	r->proc_id = proc_id;
	r->shift = ts_shift;
	r->slices = slices;
	return r;
}

static struct rthread *thread_of(struct ft_ranges *r, int32_t tid, uint64_t track)
{
	for (int i = 0; i < r->nth; i++)
		if (r->th[i].tid == tid)
			return &r->th[i];
	if (r->nth == r->capth)
		FT_GROW(r->th, r->capth, 8);
	struct rthread *t = &r->th[r->nth++];
	t->tid = tid;
	t->track = track;
	t->n = 0;
	return t;
}

static const char *name_of(const struct ft_ranges *r, uint32_t id, const char *none)
{
	const char *s = id ? ft_string(r->p, id) : NULL;
	return s && *s ? s : none;
}

static void slice(struct ft_ranges *r, uint64_t track, uint64_t ts, uint64_t end, uint32_t name,
		  uint32_t api, int32_t level, int unclosed)
{
	struct pf_arg a[3];
	int n = 0;
	if (!track)
		return;
	a[n++] = PF_ARG_STR("api", api < 3 ? api_word[api] : "?");
	if (level >= 0)
		a[n++] = PF_ARG_INT("level", level);
	if (unclosed)
		a[n++] = PF_ARG_BOOL("unclosed", 1);
	ft_pipe_slice(r->pl, track, (uint64_t)((int64_t)ts + r->shift), end > ts ? end - ts : 0,
		      name_of(r, name, "(unnamed range)"), a, n);
	if (r->slices)
		(*r->slices)++;
}

/* a lane of the process's "ranges" tracks free from start on */
static uint64_t lane(struct ft_ranges *r, uint64_t start, uint64_t end)
{
	int i;
	for (i = 0; i < r->nlanes; i++)
		if (r->lane_end[i] <= start)
			break;
	if (i == r->nlanes) {
		if (r->nlanes == MAX_LANES)
			return 0;
		r->lane_id[i] = pf_id(FT_ID_RANGES, r->proc_id, (uint64_t)i);
		ft_pipe_child_track(r->pl, r->lane_id[i], r->proc_id, "ranges");
		r->lane_end[i] = 0;
		r->nlanes++;
	}
	if (end > r->lane_end[i])
		r->lane_end[i] = end;
	return r->lane_id[i];
}

static void unwind(struct ft_ranges *r, struct rthread *t, int32_t level, uint64_t ts,
		   int unclosed)
{
	while (t->n && t->s[t->n - 1].level >= level) {
		struct rpush *o = &t->s[--t->n];
		slice(r, t->track, o->ts, ts, o->name, o->api, o->level, unclosed);
	}
}

void ft_ranges_event(struct ft_ranges *r, const struct ft_event *ev, uint64_t thread_track)
{
	const struct ft_rec *rec = ev->rec;
	uint64_t ts = ev->ts_ns;
	if (ts > r->last_ts)
		r->last_ts = ts;
	switch (rec->kind) {
	case FT_EV_RANGE_PUSH: {
		struct rthread *t = thread_of(r, ev->tid, thread_track);
		int32_t level = (int32_t)rec->p.u32[1];
		unwind(r, t, level < 0 ? 0 : level, ts, 1);   /* pops never recorded */
		if (t->n < MAX_DEPTH)
			t->s[t->n++] = (struct rpush){ level, rec->p.u32[0], rec->p.u32[2], ts };
		break;
	}
	case FT_EV_RANGE_POP: {
		struct rthread *t = thread_of(r, ev->tid, thread_track);
		int32_t level = (int32_t)rec->p.u32[0];
		if (level >= 0 && t->n && t->s[t->n - 1].level >= level)
			unwind(r, t, level, ts, 0);
		break;
	}
	case FT_EV_RANGE_START:
		if (r->nas == r->capas)
			FT_GROW(r->as, r->capas, 8);
		r->as[r->nas++] = (struct rasync){ rec->p.u64[0], ts, rec->p.u32[2], rec->p.u32[3] };
		break;
	case FT_EV_RANGE_END:
		for (int i = 0; i < r->nas; i++)
			if (r->as[i].id == rec->p.u64[0]) {
				struct rasync a = r->as[i];
				r->as[i] = r->as[--r->nas];
				slice(r, lane(r, a.ts, ts), a.ts, ts, a.name, a.api, -1, 0);
				break;
			}
		break;
	case FT_EV_MARK: {
		uint32_t api = rec->p.u32[1];
		struct pf_arg a = PF_ARG_STR("api", api < 3 ? api_word[api] : "?");
		ft_pipe_instant(r->pl, thread_track, (uint64_t)((int64_t)ts + r->shift),
				name_of(r, rec->p.u32[0], "(unnamed mark)"), &a, 1);
		break;
	}
	}
}

void ft_ranges_finish(struct ft_ranges *r, uint64_t end_ts)
{
	if (end_ts < r->last_ts)
		end_ts = r->last_ts;
	for (int i = 0; i < r->nth; i++)
		unwind(r, &r->th[i], 0, end_ts, 1);
	for (int i = 0; i < r->nas; i++)
		slice(r, lane(r, r->as[i].ts, end_ts), r->as[i].ts, end_ts, r->as[i].name,
		      r->as[i].api, -1, 1);
	r->nas = 0;
}

void ft_ranges_free(struct ft_ranges *r)
{
	if (!r)
		return;
	free(r->th);
	free(r->as);
	free(r);
}
