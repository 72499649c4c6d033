/*
 * storm.c: small-read storms of one process (docs/ANALYSES.md, "Small-read
 * storms"): a burst of reads smaller than the small-read size, with
 * storm_reads of them within storm_window, is a storm; a burst of
 * FT_STORM_CANDIDATE reads or more that is not is handed on as a
 * candidate for the run-wide check across workers (problems.c). Each
 * burst counts its files (and how often each was opened again: another
 * epoch), its read sizes, its reads per 100 ms and the Python sites that
 * opened its files. Fed by reads.c (one of analysis.c's analyses), which
 * tells it the opens and small reads of the process in start order.
 */
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "storm.h"
#include "util.h"

struct file_acc { uint64_t key; uint32_t path; int32_t fd; uint64_t reads, bytes, opens; };

struct ft_storm {
	const struct ft_process *p;
	const struct ft_an_opts *o;
	struct ft_an_sink sink;
	uint64_t storms;                 /* storms found (candidates not counted) */
	uint64_t *ring; uint32_t ring_n, ring_pos;   /* the last storm_reads reads' starts */
	int in_burst, qualified;
	struct ft_finding burst;
	uint64_t burst_last_start;
	struct ft_cover cov;             /* the wall time the burst's reads covered */
	struct file_acc *files; int nfiles, capfiles; struct ft_map filemap;
	uint32_t *fdsite; int nfdsite;  /* per fd: the Python site of its open, or 0 */
	struct { uint32_t site; uint64_t reads; } opener[8]; int nopener;  /* the burst's */
	uint32_t *sbin; int nsbin, capsbin;   /* the burst's small reads per FT_STORM_BIN_NS */
	uint64_t sbin0;                       /* ... from this bin's start */
	uint32_t filecache[64];  /* key hash -> files[] index, checked against its key */
};

struct ft_storm *ft_storm_new(const struct ft_process *p, const struct ft_an_opts *o,
			      const struct ft_an_sink *sink)
{
	struct ft_storm *s = ft_xcalloc(1, sizeof *s);
	s->p = p;
	s->o = o;
	s->sink = *sink;
	s->ring = ft_xcalloc(o->storm_reads, sizeof *s->ring);
	return s;
}

void ft_storm_free(struct ft_storm *s)
{
	if (!s)
		return;
	free(s->ring);
	free(s->files);
	ft_map_free(&s->filemap);
	free(s->fdsite);
	free(s->sbin);
	ft_cover_free(&s->cov);
	free(s);
}

void ft_storm_opener(struct ft_storm *a, int32_t fd, uint32_t site)
{
	if (fd < 0 || fd >= 1 << 20)
		return;
	if (fd >= a->nfdsite) {
		int n = fd + 64;
		a->fdsite = ft_xrealloc(a->fdsite, (size_t)n * sizeof *a->fdsite);
		memset(a->fdsite + a->nfdsite, 0, (size_t)(n - a->nfdsite) * sizeof *a->fdsite);
		a->nfdsite = n;
	}
	a->fdsite[fd] = site;
}

void ft_storm_opened(struct ft_storm *a, uint32_t path)
{
	if (!a->in_burst)
		return;
	/* a file of the burst opened again: another pass over it */
	long i = ft_map_get(&a->filemap, path);
	if (i >= 0)
		a->files[i].opens++;
}

static int hist_bucket(uint64_t n)
{
	static const uint64_t lim[] = { 512, 1024, 4096, 16384, 65536, 262144, 1048576 };
	for (int i = 0; i < 7; i++)
		if (n < lim[i])
			return i;
	return 7;
}

static void close_burst(struct ft_storm *a)
{
	struct ft_finding *f = &a->burst;
	if (a->in_burst && (a->qualified || f->reads >= FT_STORM_CANDIDATE)) {
		f->candidate = !a->qualified;
		f->files = (uint64_t)a->nfiles;
		f->reads_needed = 0;
		for (int i = 0; i < a->nfiles; i++) {
			struct file_acc *x = &a->files[i];
			/* each pass over the file (an epoch opens it again) needs
			 * its own whole reads */
			uint64_t passes = 1 + x->opens, per = (x->bytes + passes - 1) / passes;
			f->reads_needed += passes * ((per + a->o->storm_ref_read - 1) / a->o->storm_ref_read);
			/* top files by reads (insertion into a short sorted list) */
			int j = f->ntop < FT_STORM_TOP ? f->ntop++ : FT_STORM_TOP;
			while (j > 0 && f->top_reads[j - 1] < x->reads) {
				if (j < FT_STORM_TOP) {
					f->top_reads[j] = f->top_reads[j - 1];
					f->top_file[j] = f->top_file[j - 1];
				}
				j--;
			}
			if (j < FT_STORM_TOP) {
				const char *path = ft_string(a->p, x->path);
				f->top_reads[j] = x->reads;
				f->top_file[j] = path ? path : "(unknown file)";
			}
		}
		for (int k = 0; k < a->nopener; k++)
			if (a->opener[k].reads > f->opener_reads) {
				f->opener_reads = a->opener[k].reads;
				f->opener = ft_string(a->p, a->opener[k].site);
			}
		f->bins = a->sbin;
		f->nbins = a->nsbin;
		f->bin0 = a->sbin0;
		f->covered_ns = a->cov.len;
		f->cov = a->cov.iv;
		f->ncov = a->cov.n;
		a->storms += !f->candidate;
		if (a->sink.finding)
			a->sink.finding(a->sink.arg, f);
	}
	a->in_burst = a->qualified = 0;
	a->nfiles = 0;
	a->nopener = 0;
	a->nsbin = 0;
	ft_map_clear(&a->filemap);
}

void ft_storm_read(struct ft_storm *a, const struct ft_event *ev, uint32_t path, int32_t fd,
		   uint64_t got)
{
	struct ft_finding *f = &a->burst;
	uint64_t end = ev->ts_ns + ev->dur_ns;
	if (a->in_burst && ev->ts_ns >= a->burst_last_start + a->o->storm_window_ns)
		close_burst(a);
	if (!a->in_burst) {
		memset(f, 0, sizeof *f);
		f->kind = FT_FK_STORM;
		f->pid = a->p->hdr.pid;
		f->start = ev->ts_ns;
		f->tid = ev->tid;
		a->in_burst = 1;
		a->cov.n = 0;
		a->cov.len = 0;
	}
	if (ev->ts_ns > a->burst_last_start)
		a->burst_last_start = ev->ts_ns;
	if (ev->ts_ns < f->start)
		f->start = ev->ts_ns;
	if (end > f->end)
		f->end = end;
	f->reads++;
	f->bytes += got;
	f->lost_ns += ev->dur_ns;
	/* the union of the reads' intervals (in start order, but for a late one) */
	ft_cover_put(&a->cov, ev->ts_ns, end);
	/* per 100 ms from the burst's first bin (reads come in start order) */
	if (!a->nsbin)
		a->sbin0 = ev->ts_ns - ev->ts_ns % FT_STORM_BIN_NS;
	uint64_t b = ev->ts_ns > a->sbin0 ? (ev->ts_ns - a->sbin0) / FT_STORM_BIN_NS : 0;
	if (b < 1u << 20) {
		while ((uint64_t)a->nsbin <= b) {
			if (a->nsbin == a->capsbin)
				FT_GROW(a->sbin, a->capsbin, 8);
			a->sbin[a->nsbin++] = 0;
		}
		a->sbin[b]++;
	}
	f->hist[hist_bucket(got)]++;
	uint64_t key = path ? path : (uint64_t)1 << 40 | (uint32_t)fd;
	/* files[] holds each key once per burst: an index whose entry has
	 * this key is the key's (a stale one fails the check) */
	uint32_t *fc = &a->filecache[(key * 0x9e3779b97f4a7c15ull) >> 58];
	long i = *fc < (uint32_t)a->nfiles && a->files[*fc].key == key ? (long)*fc : -1;
	if (i < 0)
		i = ft_map_get(&a->filemap, key);
	if (i < 0) {
		if (a->nfiles == a->capfiles)
			FT_GROW(a->files, a->capfiles, 8);
		i = a->nfiles++;
		a->files[i] = (struct file_acc){ key, path, fd, 0, 0, 0 };
		ft_map_put(&a->filemap, key, (uint32_t)i);
	}
	*fc = (uint32_t)i;
	a->files[i].reads++;
	a->files[i].bytes += got;
	/* who opened it: the Python site of its fd's open, when taken */
	uint32_t site = fd >= 0 && fd < a->nfdsite ? a->fdsite[fd] : 0;
	if (site) {
		int k = 0;
		while (k < a->nopener && a->opener[k].site != site)
			k++;
		if (k == a->nopener && k < 8)
			a->opener[a->nopener++].site = site, a->opener[k].reads = 0;
		if (k < 8)
			a->opener[k].reads++;
	}
	/* N small reads within one window? */
	uint32_t n = a->o->storm_reads;
	a->ring[a->ring_pos] = ev->ts_ns;
	if (++a->ring_pos == n)                 /* no division per read */
		a->ring_pos = 0;
	if (a->ring_n < n)
		a->ring_n++;
	if (a->ring_n == n && ev->ts_ns - a->ring[a->ring_pos] < a->o->storm_window_ns)
		a->qualified = 1;   /* ring[ring_pos] is the read n-1 before this one */
}

uint64_t ft_storm_finish(struct ft_storm *s)
{
	close_burst(s);
	return s->storms;
}
