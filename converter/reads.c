/*
 * reads.c: one process's reads: the read metrics, the per-bin read
 * counters, and the small reads that may make a storm (storm.c), told
 * apart from module imports and /proc files; opens tell the storm who
 * opened its files. Memory: the storm's (files in one burst), never
 * events.
 */
#include <stdlib.h>

#include "util.h"
#include "analyses.h"
#include "../libfeedtrace/modpath.h"
#include "events.h"
#include "storm.h"

struct reads {
	struct ft_storm *storm;
	struct { uint32_t path; uint8_t module; } modc[1024];  /* module_path's, by string id */
};

/* ft_is_module_path of a string id, remembered (a path's reads come in
 * runs: the look-up was a tenth of a conversion) */
static int module_path(struct reads *rd, const struct ft_process *p, uint32_t path)
{
	unsigned h = (path * 2654435761u) >> 22;
	if (rd->modc[h].path != path) {
		rd->modc[h].path = path;
		rd->modc[h].module = (uint8_t)ft_is_module_path(ft_string(p, path));
	}
	return rd->modc[h].module;
}

static void *reads_new(struct ft_an_ctx *c)
{
	struct reads *rd = ft_xcalloc(1, sizeof *rd);
	rd->storm = ft_storm_new(c->p, &c->o, &c->sink);
	return rd;
}

static void reads_event(void *s, struct ft_an_ctx *c, const struct ft_an_ev *e)
{
	struct reads *rd = s;
	const struct ft_kfacts *f = e->f;
	const struct ft_rec *r = e->r;
	if (!f)
		return;
	if (f->open && f->py && f->fd)
		ft_storm_opener(rd->storm, (int32_t)ft_field_signed(r, f->fd),
				(uint32_t)ft_field_raw(r, f->py));
	if (f->open && f->path)
		ft_storm_opened(rd->storm, (uint32_t)ft_field_raw(r, f->path));
	if (!e->in.read)
		return;
	int64_t ret = ft_field_signed(r, f->ret);
	uint64_t req = ft_field_raw(r, f->req);
	uint64_t got = ret > 0 ? (uint64_t)ret : 0;
	c->m.reads++;
	c->m.read_bytes += got;
	c->ctr.v[FT_CTR_READS]++;
	c->ctr.v[FT_CTR_READ_BYTES] += (int64_t)got;
	uint32_t path = f->path ? (uint32_t)ft_field_raw(r, f->path) : 0;
	if (req < c->o.small_read && path && module_path(rd, c->p, path)) {
		c->m.module_reads++;
	} else if (req < c->o.small_read) {
		c->m.small_reads++;
		c->m.small_read_bytes += got;
		ft_storm_read(rd->storm, e->ev, path,
			      f->fd ? (int32_t)ft_field_signed(r, f->fd) : -1, got);
	}
}

static void reads_finish(void *s, struct ft_an_ctx *c)
{
	struct reads *rd = s;
	c->m.storms += ft_storm_finish(rd->storm);
}

static void reads_free(void *s)
{
	struct reads *rd = s;
	ft_storm_free(rd->storm);
	free(rd);
}

static int reads_wants(const struct ft_kfacts *f)
{
	return f->read || f->open;
}

const struct ft_an_ops ft_an_reads = { "reads", reads_new, reads_wants, reads_event, reads_finish,
				       reads_free };
