/*
 * reads.c: one process's reads: the read metrics, the per-bin read
 * counters, and the small reads that may make a storm (storm.c), told
 * apart from module imports and /proc files; opens tell the storm who
 * opened its files. Memory: the storm's (files in one burst), never
 * events.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "analyses.h"
#include "modpath.h"
#include "events.h"
#include "storm.h"

#define SIZES 32                    /* distinct request sizes kept (a loader uses a few) */
#define PATHS 4096                  /* distinct files kept for the directory */

struct reads {
	struct ft_storm *storm;
	struct { uint32_t path; uint8_t module; } modc[1024];  /* module_path's, by string id */
	/* the window's file reads: time by request size, and by file */
	struct { uint64_t req, ns, calls; } size[SIZES];
	int nsize;
	struct ft_map pathi;            /* path id -> index in path[] */
	struct { uint32_t path; uint64_t ns; } path[PATHS];
	int npath;
	uint64_t io_ns, calls;
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

/* a file read's time in the window, by its size and its file */
static void shape_read(struct reads *rd, uint64_t req, uint32_t path, uint64_t ns)
{
	rd->io_ns += ns;
	rd->calls++;
	int k = 0;
	while (k < rd->nsize && rd->size[k].req != req)
		k++;
	if (k == rd->nsize && rd->nsize < SIZES)
		rd->size[rd->nsize++].req = req;
	if (k < rd->nsize)
		rd->size[k].ns += ns, rd->size[k].calls++;
	if (!path)
		return;
	long i = ft_map_get(&rd->pathi, path);
	if (i < 0 && rd->npath < PATHS) {
		i = rd->npath++;
		rd->path[i].path = path;
		ft_map_put(&rd->pathi, path, (uint32_t)i);
	}
	if (i >= 0)
		rd->path[i].ns += ns;
}

/* the shape: the size with most time; the directory whose files took most */
static void shape_finish(struct reads *rd, const struct ft_process *p, struct ft_read_shape *o)
{
	memset(o, 0, sizeof *o);
	o->io_ns = rd->io_ns;
	o->calls = rd->calls;
	for (int k = 0; k < rd->nsize; k++)
		if (rd->size[k].ns > o->req_ns) {
			o->req = rd->size[k].req;
			o->req_ns = rd->size[k].ns;
			o->req_calls = rd->size[k].calls;
		}
	/* directories: each file's, summed (few distinct: a scan per file) */
	struct { char d[256]; uint64_t ns; } *dir = ft_xcalloc(64, sizeof *dir);
	int nd = 0;
	for (int i = 0; i < rd->npath; i++) {
		const char *s = ft_string(p, rd->path[i].path), *slash = s ? strrchr(s, '/') : NULL;
		if (!slash)
			continue;
		size_t len = (size_t)(slash - s) + 1;
		if (len >= sizeof dir->d)
			len = sizeof dir->d - 1;
		int k = 0;
		while (k < nd && (strlen(dir[k].d) != len || strncmp(dir[k].d, s, len)))
			k++;
		if (k == nd) {
			if (nd == 64)
				continue;
			memcpy(dir[nd].d, s, len);
			dir[nd++].d[len] = 0;
		}
		dir[k].ns += rd->path[i].ns;
	}
	for (int k = 0; k < nd; k++)
		if (dir[k].ns > o->dir_ns) {
			o->dir_ns = dir[k].ns;
			memcpy(o->dir, dir[k].d, sizeof o->dir);
		}
	free(dir);
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
	if (f->uring && ft_field_signed(r, f->ret) >= 0)
		c->m.io_uring_rings++;
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
	uint64_t in = ft_an_clip(&c->o, e->ev->ts_ns, e->end);
	if (in && !(path && module_path(rd, c->p, path)))
		shape_read(rd, req, path, in);
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
	shape_finish(rd, c->p, &c->out.shape);
}

static void reads_free(void *s)
{
	struct reads *rd = s;
	ft_storm_free(rd->storm);
	ft_map_free(&rd->pathi);
	free(rd);
}

static int reads_wants(const struct ft_kfacts *f)
{
	return f->read || f->open || f->uring;
}

const struct ft_an_ops ft_an_reads = { "reads", reads_new, reads_wants, reads_event, reads_finish,
				       reads_free };
