/*
 * reader.c: trace files in, processes and events out. Every size, count
 * and offset read from a file is checked before use; a damaged chunk is
 * reported (file, offset, reason), skipped by scanning for the next valid
 * chunk header (one line per damaged region, found in one pass), and
 * never stops the rest of the file from being read. Files are read with
 * pread, never mapped: a file cut short under the reader is damage, not a
 * crash. Must never block on or follow what is not a regular file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "util.h"
#include "events.h"
#include "reader.h"
#include "shuffle.h"

struct strent {
	uint32_t id;
	const char *s;
};

/* ---- file access ----
 * Every byte comes in with pread (no mmap): a file that shrinks while it
 * is read gives short reads, reported once, never SIGBUS. */

/* Reads up to n bytes at off into dst; returns the count read. Fewer
 * than asked inside the size seen at open: the file shrank; its size is
 * cut to what is there and that is reported once. */
static size_t read_at(struct ft_process *p, uint64_t off, void *dst, size_t n, FILE *err)
{
	if (off >= p->size)
		return 0;
	if (n > p->size - off)
		n = (size_t)(p->size - off);
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(p->fd, (char *)dst + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : 0;
			p->size = off + got;
			if (!p->shrunk) {
				p->shrunk = 1;
				if (e)
					fprintf(err, "feedtrace: %s: offset %llu: read failed: %s; "
						"the rest of the file is not read\n", p->path,
						(unsigned long long)p->size, strerror(e));
				else
					fprintf(err, "feedtrace: %s: offset %llu: the file shrank while "
						"being read; the rest is gone\n", p->path,
						(unsigned long long)p->size);
			}
			break;
		}
		got += (size_t)r;
	}
	return got;
}

/* The end of a pass over the file: nothing of it is kept open or
 * buffered between passes (a run may have thousands of processes). */
static void pass_end(struct ft_process *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	free(p->buf);
	free(p->scan);
	p->buf = p->scan = NULL;
	p->buf_cap = p->scan_cap = 0;
}

/* ---- chunk framing ---- */

static int header_ok(const struct ft_chunk_header *h)
{
	return h->magic == FT_CHUNK_MAGIC &&
	       h->header_hash == ft_hash32(h, offsetof(struct ft_chunk_header, header_hash));
}

/* The first offset >= from holding a valid chunk header, or the end of
 * the file: one pass over the bytes, a window at a time (linear in the
 * damaged length, whatever fills it). */
static uint64_t resync(struct ft_process *p, uint64_t from, FILE *err)
{
	enum { WIN = 1 << 20 };
	const uint32_t mv = FT_CHUNK_MAGIC;     /* stored little-endian */
	unsigned char magic[4];
	memcpy(magic, &mv, 4);
	const size_t hs = sizeof(struct ft_chunk_header);
	if (p->scan_cap < WIN) {
		p->scan = ft_xrealloc(p->scan, WIN);
		p->scan_cap = WIN;
	}
	uint64_t o = from;
	while (o + hs <= p->size) {
		size_t got = read_at(p, o, p->scan, WIN, err);
		if (got < hs)
			break;
		size_t pos = 0, again = got - 3;   /* a magic may start in the last 3 bytes */
		const unsigned char *m;
		while ((m = memmem(p->scan + pos, got - pos, magic, 4)) != NULL) {
			pos = (size_t)(m - p->scan);
			if (pos + hs > got) {
				again = pos;            /* a header cut by the window */
				break;
			}
			struct ft_chunk_header h;
			memcpy(&h, m, hs);
			if (header_ok(&h))
				return o + pos;
			pos++;
		}
		if (o + got >= p->size)
			break;
		o += again;                     /* > 0: a full window is > hs */
	}
	return p->size;
}

/* Finds the next chunk at or after *off. Reports damage between: one
 * line per damaged region. Returns 1 with *h and *payload (p's buffer,
 * valid until the next call) set and *off past the chunk, 0 at end. */
static int next_chunk(struct ft_process *p, uint64_t *off, struct ft_chunk_header *h,
		      const unsigned char **payload, FILE *err, int report)
{
	uint64_t o = *off;
	while (o < p->size) {
		const char *why = NULL;
		size_t got = read_at(p, o, h, sizeof *h, err);
		if (got < sizeof *h) {
			why = "file ends inside a chunk header";
		} else if (!header_ok(h)) {
			why = "no valid chunk header";
		} else if (h->stored_size > p->size - o - sizeof *h) {
			why = "chunk runs past the end of the file (cut off)";
		} else if (h->raw_size > FT_CHUNK_MAX_RAW ||
			   h->stored_size > ZSTD_compressBound(FT_CHUNK_MAX_RAW)) {
			why = "chunk claims an implausible size";
		} else {
			if (p->buf_cap < (size_t)h->stored_size + 1) {
				p->buf_cap = (size_t)h->stored_size + 1;
				p->buf = ft_xrealloc(p->buf, p->buf_cap);
			}
			if (read_at(p, o + sizeof *h, p->buf, h->stored_size, err) < h->stored_size)
				why = "chunk runs past the end of the file (cut off)";
			else if (ft_hash32(p->buf, h->stored_size) != h->payload_hash)
				why = "chunk payload does not match its checksum";
		}
		if (!why) {
			*payload = p->buf;
			*off = o + sizeof *h + h->stored_size;
			p->chunks++;
			return 1;
		}
		/* resynchronise: the next offset holding a valid header */
		uint64_t bad = o;
		o = resync(p, bad + 1, err);
		if (o > p->size)
			o = p->size;
		if (report) {
			fprintf(err, "feedtrace: %s: offset %llu: %s; skipped %llu bytes\n",
				p->path, (unsigned long long)bad, why,
				(unsigned long long)(o - bad));
			p->bad_chunks++;
			p->bad_bytes += o - bad;
		}
	}
	*off = o;
	return 0;
}

/* Decodes a chunk's payload into *buf (grown as needed). Returns the raw
 * size, or -1 with *why set. */
static long decode(const struct ft_chunk_header *h, const unsigned char *payload,
		   unsigned char **buf, size_t *cap, unsigned char **tmp, size_t *tcap,
		   const char **why)
{
	if (*cap < h->raw_size + 1) {
		*cap = h->raw_size + 1;
		*buf = ft_xrealloc(*buf, *cap);
	}
	switch (h->codec) {
	case FT_CODEC_RAW:
		if (h->stored_size != h->raw_size) {
			*why = "raw chunk sizes disagree";
			return -1;
		}
		memcpy(*buf, payload, h->raw_size);
		return h->raw_size;
	case FT_CODEC_ZSTD:
	case FT_CODEC_ZSTD_SHUFFLE: {
		unsigned long long fsz = ZSTD_getFrameContentSize(payload, h->stored_size);
		if (fsz != h->raw_size) {
			*why = "compressed frame size disagrees with the chunk header";
			return -1;
		}
		unsigned char *dst = *buf;
		if (h->codec == FT_CODEC_ZSTD_SHUFFLE) {
			if (*tcap < h->raw_size + 1) {
				*tcap = h->raw_size + 1;
				*tmp = ft_xrealloc(*tmp, *tcap);
			}
			dst = *tmp;
		}
		size_t n = ZSTD_decompress(dst, h->raw_size, payload, h->stored_size);
		if (ZSTD_isError(n) || n != h->raw_size) {
			*why = "compressed frame does not decode";
			return -1;
		}
		if (h->codec == FT_CODEC_ZSTD_SHUFFLE) {
			size_t pre = sizeof(struct ft_events_prefix);
			if (n < pre || (n - pre) % FT_SLOT_SIZE) {
				*why = "event chunk is not a whole number of slots";
				return -1;
			}
			memcpy(*buf, dst, pre);
			ft_unshuffle_slots(dst + pre, *buf + pre, (n - pre) / FT_SLOT_SIZE);
		}
		return (long)n;
	}
	default:
		*why = "unknown codec";
		return -1;
	}
}

/* ---- per-process tables ---- */

static int strent_cmp(const void *a, const void *b)
{
	const struct strent *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct ft_strtab {
	struct strent *e;
	uint32_t n, cap;
	uint32_t *index;         /* id -> position in e + 1 (0 none), when dense enough */
	uint32_t max_id;
};

static const char *strtab_find(const struct ft_strtab *t, uint32_t id);

const char *ft_string(const struct ft_process *p, uint32_t id)
{
	return strtab_find(p->strings, id);
}

const char *ft_site_symbols(const struct ft_process *p, uint32_t id)
{
	const char *s = strtab_find(p->symbols, id);
	return s ? s : strtab_find(p->strings, id);
}

static const char *strtab_find(const struct ft_strtab *t, uint32_t id)
{
	if (!t || id == 0)
		return NULL;
	if (t->index) {
		uint32_t i = id <= t->max_id ? t->index[id] : 0;
		return i ? t->e[i - 1].s : NULL;
	}
	uint32_t lo = 0, hi = t->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->e[lo].id == id ? t->e[lo].s : NULL;
}

/* A direct id -> entry index, looked up for every string field of every
 * event, when ids are dense enough (the recorder's ids are arena offsets
 * / 8, a few per string). The sorted array stays for the binary search
 * otherwise; with duplicate ids both find the first. */
static void strtab_index(struct ft_strtab *t)
{
	uint32_t max = t->e[t->n - 1].id;
	if ((uint64_t)max > 64 * (uint64_t)t->n + 4096)
		return;
	t->index = calloc((size_t)max + 1, sizeof *t->index);
	if (!t->index)
		return;
	t->max_id = max;
	for (uint32_t i = t->n; i-- > 0;)
		t->index[t->e[i].id] = i + 1;
}

static void add_strings(struct ft_process *p, struct ft_strtab **tp, const unsigned char *d,
			size_t n, FILE *err, uint64_t at)
{
	struct ft_strtab *t = *tp;
	if (!t) {
		t = calloc(1, sizeof *t);
		if (!t)
			return;
		*tp = t;
	}
	size_t o = 0;
	while (o + sizeof(struct ft_string_entry) <= n) {
		struct ft_string_entry e;
		memcpy(&e, d + o, sizeof e);
		size_t padded = ((size_t)e.len + 7) & ~(size_t)7;
		if (e.len == 0 || padded > n - o - sizeof e || e.id == 0) {
			fprintf(err, "feedtrace: %s: offset %llu: malformed string entry; rest of chunk skipped\n",
				p->path, (unsigned long long)at);
			return;
		}
		char *s = malloc(e.len + 1);
		if (!s)
			return;
		memcpy(s, d + o + sizeof e, e.len);
		s[e.len] = 0;
		if (t->n == t->cap)
			FT_GROW(t->e, t->cap, 256);
		t->e[t->n++] = (struct strent){ e.id, s };
		o += sizeof e + padded;
	}
}

static struct ft_thread_rec *thread_rec(struct ft_process *p, int32_t tid)
{
	for (int i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	p->threads = ft_xrealloc(p->threads, (size_t)(p->nthreads + 1) * sizeof *p->threads);
	struct ft_thread_rec *t = &p->threads[p->nthreads++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	return t;
}

/* CPU chunk: samples kept per thread, in time order (a sample older
 * than the thread's last one is dropped: chunks of one file come in
 * time order but an exit drain may repeat one). */
static void add_point(struct ft_cpu_point **v, int *n, int *cap, uint64_t ticks, uint64_t x)
{
	if (*n && (int64_t)(ticks - (*v)[*n - 1].ticks) <= 0)
		return;
	if (*n == *cap)
		FT_GROW(*v, *cap, 16);
	(*v)[(*n)++] = (struct ft_cpu_point){ ticks, x };
}

static void add_cpu_samples(struct ft_process *p, const unsigned char *d, size_t n)
{
	for (size_t o = 0; o + sizeof(struct ft_cpu_sample) <= n; o += sizeof(struct ft_cpu_sample)) {
		struct ft_cpu_sample s;
		memcpy(&s, d + o, sizeof s);
		struct ft_thread_rec *t = thread_rec(p, s.tid);
		add_point(&t->cpu, &t->ncpu, &t->cpucap, s.ticks, s.cpu_ns);
	}
}

/* GPU chunk: timing samples kept in file order; loss totals, the latest */
static void add_gpu_samples(struct ft_process *p, const unsigned char *d, size_t n)
{
	for (size_t o = 0; o + sizeof(struct ft_gpu_sample) <= n; o += sizeof(struct ft_gpu_sample)) {
		struct ft_gpu_sample s;
		memcpy(&s, d + o, sizeof s);
		if (s.kind == FT_GPU_LOSSES) {
			memcpy(&p->gpu_lost, &s, sizeof p->gpu_lost);
			continue;
		}
		if (s.kind != FT_GPU_SAMPLE)
			continue;
		if (p->ngpu == p->capgpu)
			FT_GROW(p->gpu, p->capgpu, 8);
		p->gpu[p->ngpu++] = s;
	}
}

/* WINDOW chunk: a start opens a window, a stop closes the window of its seq */
static void add_window_marks(struct ft_process *p, const unsigned char *d, size_t n)
{
	for (size_t o = 0; o + sizeof(struct ft_window_mark) <= n; o += sizeof(struct ft_window_mark)) {
		struct ft_window_mark m;
		memcpy(&m, d + o, sizeof m);
		if (m.what == FT_WIN_START) {
			if (p->nwin == p->capwin)
				FT_GROW(p->win, p->capwin, 8);
			p->win[p->nwin++] = (struct ft_window){ m.seq, m.reason, m.unit, m.demand,
							       m.step, 0, m.ticks, 0 };
			continue;
		}
		for (int i = p->nwin - 1; m.what == FT_WIN_STOP && i >= 0; i--)
			if (p->win[i].seq == m.seq && !p->win[i].end_ticks) {
				p->win[i].end_ticks = m.ticks;
				p->win[i].last_step = m.step;
				break;
			}
	}
}

const char *ft_window_reason_name(uint32_t reason)
{
	switch (reason) {
	case FT_WIN_STEPS: return "steps";
	case FT_WIN_TIME: return "time";
	case FT_WIN_DEMAND: return "on demand";
	case FT_WIN_FOLLOW: return "follows its parent";
	default: return "?";
	}
}

const char *ft_window_unit_name(uint32_t unit)
{
	switch (unit) {
	case FT_WIN_UNIT_RANGE: return "step ranges";
	case FT_WIN_UNIT_OPT: return "optimizer steps";
	case FT_WIN_UNIT_BATCH: return "batches";
	default: return "";
	}
}

int ft_process_windowed(const struct ft_process *p, uint64_t *from_ns, uint64_t *to_ns)
{
	if (!p->nwin)
		return 0;
	*from_ns = ft_ticks_to_ns(p, p->win[0].start_ticks);
	const struct ft_window *w = &p->win[p->nwin - 1];
	*to_ns = w->end_ticks ? ft_ticks_to_ns(p, w->end_ticks) : p->last_ns;
	if (*to_ns < *from_ns)
		*to_ns = *from_ns;
	return 1;
}

/* FAULTS chunk: samples kept per thread (tid 0: the process), in time
 * order, as CPU samples are */
static void add_fault_samples(struct ft_process *p, const unsigned char *d, size_t n)
{
	for (size_t o = 0; o + sizeof(struct ft_fault_sample) <= n;
	     o += sizeof(struct ft_fault_sample)) {
		struct ft_fault_sample s;
		memcpy(&s, d + o, sizeof s);
		struct ft_fault_series *f = NULL;
		for (int i = 0; i < p->nfaults && !f; i++)
			if (p->faults[i].tid == s.tid)
				f = &p->faults[i];
		if (!f) {
			p->faults = ft_xrealloc(p->faults, (size_t)(p->nfaults + 1) * sizeof *p->faults);
			f = &p->faults[p->nfaults++];
			memset(f, 0, sizeof *f);
			f->tid = s.tid;
			f->base = (s.flags & FT_FAULTS_BASE) != 0;
		}
		p->fault_flags |= s.flags;
		if (f->n && (int64_t)(s.ticks - f->pt[f->n - 1].ticks) <= 0)
			continue;
		if (f->n == f->cap)
			FT_GROW(f->pt, f->cap, 16);
		/* a sample without the wait (a count by getrusage) carries the
		 * last one known; a baseline series' wait counts from its first
		 * timed sample, one that counts from 0 from its start */
		if (!(s.flags & FT_FAULTS_DELAYACCT))
			s.blkio_ns = f->n ? f->pt[f->n - 1].blkio_ns : 0;
		else if (!f->timed && f->base)
			for (int k = 0; k < f->n; k++)
				f->pt[k].blkio_ns = s.blkio_ns;
		f->timed |= (s.flags & FT_FAULTS_DELAYACCT) != 0;
		f->pt[f->n++] = (struct ft_fault_point){ s.ticks, s.majflt, s.blkio_ns };
	}
}

/* the series' point in force at ns: its latest sample at or before ns;
 * before the first, the baseline's (a baseline series) or none (NULL) */
static const struct ft_fault_point *fault_at(const struct ft_process *p,
					     const struct ft_fault_series *f, uint64_t ns)
{
	if (ft_ticks_to_ns(p, f->pt[0].ticks) > ns)
		return f->base ? &f->pt[0] : NULL;
	int lo = 0, hi = f->n - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (ft_ticks_to_ns(p, f->pt[mid].ticks) <= ns)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &f->pt[lo];
}

int ft_thread_faults(const struct ft_process *p, int32_t tid, uint64_t t0_ns,
		     uint64_t t1_ns, uint64_t *majflt, uint64_t *blkio_ns)
{
	*majflt = *blkio_ns = 0;
	const struct ft_fault_series *f = NULL;
	for (int i = 0; i < p->nfaults && !f; i++)
		if (p->faults[i].tid == tid && p->faults[i].n)
			f = &p->faults[i];
	if (!f || t1_ns < t0_ns)
		return 0;
	const struct ft_fault_point *a = fault_at(p, f, t0_ns), *b = fault_at(p, f, t1_ns);
	if (!b)
		return 1;
	*majflt = b->majflt - (a && a->majflt <= b->majflt ? a->majflt : 0);
	*blkio_ns = b->blkio_ns - (a && a->blkio_ns <= b->blkio_ns ? a->blkio_ns : 0);
	return 1;
}

int ft_fault_wait(const struct ft_process *p, int32_t tid, uint64_t t0_ns, uint64_t t1_ns,
		  uint64_t *ns)
{
	int timed = 0, process = 0;
	*ns = 0;
	for (int i = 0; i < p->nfaults; i++)
		process |= !tid && !p->faults[i].tid && p->faults[i].timed;
	for (int i = 0; i < p->nfaults; i++) {
		const struct ft_fault_series *f = &p->faults[i];
		uint64_t n, w;
		if (!f->timed || (tid || process ? f->tid != tid : !f->tid) ||
		    !ft_thread_faults(p, f->tid, t0_ns, t1_ns, &n, &w))
			continue;
		timed = 1;
		*ns += w;
	}
	return timed;
}

static void add_sched_samples(struct ft_process *p, const unsigned char *d, size_t n)
{
	for (size_t o = 0; o + sizeof(struct ft_sched_sample) <= n;
	     o += sizeof(struct ft_sched_sample)) {
		struct ft_sched_sample s;
		memcpy(&s, d + o, sizeof s);
		struct ft_thread_rec *t = thread_rec(p, s.tid);
		add_point(&t->runq, &t->nrunq, &t->runqcap, s.ticks, s.wait_ns);
	}
}

/* a counter's value at ns, linear between the samples around it */
static double point_at(const struct ft_process *p, const struct ft_cpu_point *v, int n,
		       uint64_t ns)
{
	int lo = 0, hi = n - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (ft_ticks_to_ns(p, v[mid].ticks) <= ns)
			lo = mid;
		else
			hi = mid;
	}
	uint64_t a = ft_ticks_to_ns(p, v[lo].ticks), b = ft_ticks_to_ns(p, v[hi].ticks);
	double ca = (double)v[lo].cpu_ns, cb = (double)v[hi].cpu_ns;
	if (b <= a || ns <= a)
		return ca;
	if (ns >= b)
		return cb;
	return ca + (cb - ca) * (double)(ns - a) / (double)(b - a);
}

/* a thread counter's growth in [t0_ns, t1_ns]: none before its first
 * sample and after its last (the recorder samples a thread at its start
 * and at its end); -1 when they do not overlap at all (nothing said) */
static int64_t grown(const struct ft_process *p, const struct ft_cpu_point *v, int n,
		     uint64_t t0_ns, uint64_t t1_ns)
{
	if (n < 2 || t1_ns < t0_ns || t1_ns < ft_ticks_to_ns(p, v[0].ticks) ||
	    t0_ns > ft_ticks_to_ns(p, v[n - 1].ticks))
		return -1;
	double d = point_at(p, v, n, t1_ns) - point_at(p, v, n, t0_ns);
	return d > 0 ? (int64_t)d : 0;
}

static const struct ft_thread_rec *thread_find(const struct ft_process *p, int32_t tid)
{
	const struct ft_thread_rec *t = NULL;
	for (int i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			t = &p->threads[i];
	return t;
}

int64_t ft_thread_cpu_ns(const struct ft_process *p, int32_t tid,
			 uint64_t t0_ns, uint64_t t1_ns)
{
	const struct ft_thread_rec *t = thread_find(p, tid);
	return t ? grown(p, t->cpu, t->ncpu, t0_ns, t1_ns) : -1;
}

int64_t ft_thread_runq_ns(const struct ft_process *p, int32_t tid,
			  uint64_t t0_ns, uint64_t t1_ns)
{
	const struct ft_thread_rec *t = thread_find(p, tid);
	return t ? grown(p, t->runq, t->nrunq, t0_ns, t1_ns) : -1;
}

int ft_thread_traced(const struct ft_thread_rec *t)
{
	return t->records || t->name[0] || t->lost;
}

int ft_traced_threads(const struct ft_process *p)
{
	int n = 0;
	for (int i = 0; i < p->nthreads; i++)
		n += ft_thread_traced(&p->threads[i]);
	return n;
}

uint32_t ft_string_count(const struct ft_process *p)
{
	return p->strings ? p->strings->n : 0;
}

/* "LOST <n> <what>: <fix>" stays one line (dump, report) */
int ft_trace_one_run(const struct ft_trace *tr, const char *cmd, FILE *err)
{
	const struct ft_process *first = NULL;
	for (int i = 0; i < tr->nprocs; i++) {
		const struct ft_process *p = tr->procs[i];
		if (!p->hdr.run_id)
			continue;                /* written before run ids */
		if (!first) {
			first = p;
		} else if (p->hdr.run_id != first->hdr.run_id) {
			fprintf(err, "feedtrace %s: the directory holds files of two runs (%s: run "
				"%016llx; %s: run %016llx); give one run's directory, or --mixed to "
				"read them together\n", cmd, first->path,
				(unsigned long long)first->hdr.run_id, p->path,
				(unsigned long long)p->hdr.run_id);
			return -1;
		}
	}
	return 0;
}

const struct ft_loss_info ft_loss_info[FT_LOSS_N] = {
	[FT_LOSS_RECORDS] = { "lost", "records lost (full rings, failed writes)",
			      "raise FEEDTRACE_BUF_KB" },
	[FT_LOSS_THREADS] = { "threads_untraced", "threads untraced",
			      "raise FEEDTRACE_MEM_MB or lower FEEDTRACE_BUF_KB" },
	[FT_LOSS_STRINGS] = { "strings_lost", "paths recorded empty (string table full)",
			      "fewer distinct files" },
	[FT_LOSS_HANDLER] = { "handler_lost", "calls in signal handlers not recorded",
			      "counted only" },
	[FT_LOSS_ENDS] = { "unended", "processes without an end record (killed, still running, "
			   "or output failed)",
			   "their last records (up to FEEDTRACE_FLUSH_MS) are missing" },
	[FT_LOSS_CHILDREN] = { "children_untraced", "processes forked by traced processes left no "
			       "trace", "their trace file could not be made (FEEDTRACE_OUT not "
			       "writable to them, e.g. after setuid; disk full): their calls are "
			       "missing" },
	[FT_LOSS_SHARED] = { "clone_vm_untraced", "calls by clone(CLONE_VM) children on their "
			     "parent's memory not recorded", "counted only (posix_spawn, vfork and "
			     "fork children are traced)" },
	[FT_LOSS_CLOCK] = { "clock_fallbacks", "processes whose TSC parted from CLOCK_MONOTONIC "
			    "(timed by clock_gettime from then on)",
			    "no record lost: one timeline; this host's TSC is not to be trusted" },
};

uint64_t ft_process_loss(const struct ft_process *p, enum ft_loss k)
{
	switch (k) {
	case FT_LOSS_RECORDS: {
		uint64_t lost = 0;
		for (int i = 0; i < p->nthreads; i++)
			lost += p->threads[i].lost;
		/* END also counts records drained but never written (output
		 * disk full): the larger count is the loss */
		if (p->has_end && p->end.lost > lost)
			lost = p->end.lost;
		return lost;
	}
	case FT_LOSS_THREADS:
		return p->has_end ? p->end.threads_untraced : 0;
	case FT_LOSS_STRINGS:
		return p->has_end ? p->end.strings_lost : 0;
	case FT_LOSS_HANDLER:
		return p->has_end ? p->end.handler_lost : 0;
	case FT_LOSS_ENDS:
		return !p->has_end && !p->nflight;   /* a window written: it ends there */
	case FT_LOSS_CHILDREN:
		return p->children_untraced;
	case FT_LOSS_SHARED:
		return p->has_end ? p->end.shared_lost : 0;
	case FT_LOSS_CLOCK:
		return p->clock_parted_ns != 0;
	default:
		return 0;
	}
}

const char *ft_thread_name(const struct ft_process *p, int32_t tid)
{
	for (int i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return *p->threads[i].py_name ? p->threads[i].py_name : p->threads[i].name;
	return "";
}

uint64_t ft_ticks_to_ns(const struct ft_process *p, uint64_t ticks)
{
	if (p->clock_parted_ns && ticks > p->fb_ticks) {
		double f = (double)(ticks - p->fb_ticks) * p->fb_ns_per_tick;
		return f < 9.2e18 ? p->fb_ns + (uint64_t)f : p->fb_ns + (uint64_t)9.2e18;
	}
	double d = ((double)(int64_t)(ticks - p->base_ticks)) * p->ns_per_tick;
	/* a damaged tick count or rate must not overflow the conversion */
	if (!(d > -9.2e18))
		d = -9.2e18;
	else if (d > 9.2e18)
		d = 9.2e18;
	return p->base_ns + (uint64_t)(int64_t)d;
}

uint64_t ft_dur_to_ns(const struct ft_process *p, const struct ft_rec *r)
{
	double d = (double)r->dur;
	if (r->flags & FT_RF_DUR_COARSE)
		d *= (double)(1u << FT_DUR_SHIFT);
	d = d * (p->clock_parted_ns && r->ts > p->fb_ticks ? p->fb_ns_per_tick : p->ns_per_tick) + 0.5;
	return d < 1.8e19 ? (uint64_t)d : UINT64_MAX;   /* d >= 0: a rate is > 0 */
}

/* ---- opening ---- */

/* MODULES entries (docs/FORMAT.md): a damaged or cut entry ends the chunk */
static void add_modules(struct ft_process *p, const unsigned char *d, size_t n)
{
	size_t o = 0;
	while (o + sizeof(struct ft_module_entry) <= n) {
		struct ft_module_entry e;
		memcpy(&e, d + o, sizeof e);
		size_t body = (size_t)e.build_id_len + e.path_len;
		size_t next = o + sizeof e + ((body + 7) & ~(size_t)7);
		if (e.path_len == 0 || body > n - o - sizeof e || next > n)
			break;
		const unsigned char *id = d + o + sizeof e;
		const char *path = (const char *)id + e.build_id_len;
		if (path[e.path_len - 1] != 0 || e.lo >= e.hi)
			break;
		if (p->nmods == p->capmods)
			FT_GROW(p->mods, p->capmods, 32);
		struct ft_module *m = &p->mods[p->nmods++];
		m->bias = e.bias;
		m->lo = e.lo;
		m->hi = e.hi;
		m->build_id_len = e.build_id_len;
		memcpy(m->build_id, id, e.build_id_len);
		m->path = ft_xstrdup(path);
		o = next;
	}
}

static void set_cmdline(struct ft_process *p, const unsigned char *d, size_t n)
{
	if (n < sizeof(struct ft_process_info))
		return;
	struct ft_process_info pi;
	memcpy(&pi, d, sizeof pi);
	size_t len = n - sizeof pi;
	if (pi.cmdline_len < len)
		len = pi.cmdline_len;
	free(p->cmdline);
	p->cmdline = ft_xrealloc(NULL, len + 1);
	memcpy(p->cmdline, d + sizeof pi, len);
	p->cmdline[len] = 0;
	for (size_t i = 0; i + 1 < len; i++)        /* args were NUL-separated */
		if (p->cmdline[i] == 0)
			p->cmdline[i] = ' ';
	/* exe id is resolved after all strings are in */
	p->exe[0] = 0;
	snprintf(p->exe, sizeof p->exe, "#%u", pi.exe_id);
}

static int open_file(const char *path, struct ft_process **out, FILE *err)
{
	/* non-blocking: a FIFO or device named *.ft must not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		fprintf(err, "feedtrace: %s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(err, "feedtrace: %s: not a regular file; not read\n", path);
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size < sizeof(struct ft_file_header)) {
		fprintf(err, "feedtrace: %s: offset 0: file too short for a trace header (%lld bytes)\n",
			path, (long long)st.st_size);
		close(fd);
		return -1;
	}
	struct ft_process *p = calloc(1, sizeof *p);
	if (!p) {
		close(fd);
		return -1;
	}
	p->fd = fd;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->size = (uint64_t)st.st_size;
	p->path = ft_xstrdup(path);
	if (read_at(p, 0, &p->hdr, sizeof p->hdr, err) < sizeof p->hdr) {
		fprintf(err, "feedtrace: %s: offset 0: file too short for a trace header\n", path);
		goto fail;
	}
	if (memcmp(p->hdr.magic, FT_FILE_MAGIC, 8) != 0) {
		fprintf(err, "feedtrace: %s: offset 0: not a feedtrace file (bad magic)\n", path);
		goto fail;
	}
	if (p->hdr.version != FT_FORMAT_VERSION) {
		fprintf(err, "feedtrace: %s: offset 8: format version %u, this reader reads version %u\n",
			path, p->hdr.version, FT_FORMAT_VERSION);
		goto fail;
	}
	if (p->hdr.header_size < sizeof p->hdr || p->hdr.header_size > p->size) {
		fprintf(err, "feedtrace: %s: offset 10: bad header size %u\n", path, p->hdr.header_size);
		goto fail;
	}
	p->hdr.host[sizeof p->hdr.host - 1] = 0;
	p->base_ticks = p->hdr.start_ticks;
	p->base_ns = p->hdr.start_mono_ns;
	p->last_ns = p->base_ns;
	struct ft_clock_pair last = { p->hdr.start_ticks, p->hdr.start_mono_ns, 0, 0 };
	struct ft_clock_pair fb = last;         /* the fall-back's pair, if any */

	uint64_t off = p->hdr.header_size;
	struct ft_chunk_header h;
	const unsigned char *payload;
	unsigned char *buf = NULL, *tmp = NULL;
	size_t cap = 0, tcap = 0;
	while (next_chunk(p, &off, &h, &payload, err, 1)) {
		if (h.type == FT_CHUNK_EVENTS)
			continue;               /* read in the second pass */
		const char *why = NULL;
		long n = decode(&h, payload, &buf, &cap, &tmp, &tcap, &why);
		uint64_t at = off - h.stored_size - sizeof h;
		if (n < 0) {
			fprintf(err, "feedtrace: %s: offset %llu: %s\n", path,
				(unsigned long long)at, why);
			p->bad_chunks++;
			continue;
		}
		switch (h.type) {
		case FT_CHUNK_STRINGS:
			add_strings(p, &p->strings, buf, (size_t)n, err, at);
			break;
		case FT_CHUNK_SYMBOLS:
			add_strings(p, &p->symbols, buf, (size_t)n, err, at);
			break;
		case FT_CHUNK_THREAD:
			if ((size_t)n >= FT_THREAD_INFO_MIN) {
				struct ft_thread_info ti;
				memset(&ti, 0, sizeof ti);
				memcpy(&ti, buf, (size_t)n < sizeof ti ? (size_t)n : sizeof ti);
				ti.name[sizeof ti.name - 1] = 0;
				ti.py_name[sizeof ti.py_name - 1] = 0;
				struct ft_thread_rec *t = thread_rec(p, ti.tid);
				memcpy(t->name, ti.name, sizeof t->name);
				memcpy(t->py_name, ti.py_name, sizeof t->py_name);
			}
			break;
		case FT_CHUNK_CLOCK:
			if ((size_t)n >= sizeof(struct ft_clock_pair)) {
				struct ft_clock_pair c;
				memcpy(&c, buf, sizeof c);
				if (c.mono_ns > last.mono_ns)
					last = c;
				if (c.parted_ns && !p->clock_parted_ns) {
					fb = c;
					p->clock_parted_ns = c.parted_ns;
				}
			}
			break;
		case FT_CHUNK_PROCESS:
			set_cmdline(p, buf, (size_t)n);
			break;
		case FT_CHUNK_CPU:
			add_cpu_samples(p, buf, (size_t)n);
			break;
		case FT_CHUNK_FAULTS:
			add_fault_samples(p, buf, (size_t)n);
			break;
		case FT_CHUNK_MODULES:
			add_modules(p, buf, (size_t)n);
			break;
		case FT_CHUNK_SCHED:
			add_sched_samples(p, buf, (size_t)n);
			break;
		case FT_CHUNK_GPU:
			add_gpu_samples(p, buf, (size_t)n);
			break;
		case FT_CHUNK_WINDOW:
			add_window_marks(p, buf, (size_t)n);
			break;
		case FT_CHUNK_FLIGHT:
			if ((size_t)n >= sizeof(struct ft_flight_info)) {
				memcpy(&p->flight_last, buf, sizeof p->flight_last);
				if (!p->nflight++)
					p->flight = p->flight_last;
			}
			break;
		case FT_CHUNK_END:
			if ((size_t)n >= FT_END_INFO_V1_SIZE) {
				memset(&p->end, 0, sizeof p->end);
				memcpy(&p->end, buf, (size_t)n < sizeof p->end ? (size_t)n : sizeof p->end);
				p->has_end = 1;
				p->end_count++;
			}
			break;
		default:
			break;                  /* newer chunk types: skipped */
		}
	}
	free(buf);
	free(tmp);

	struct ft_strtab *tabs[2] = { p->strings, p->symbols };
	for (int k = 0; k < 2; k++)
		if (tabs[k] && tabs[k]->n) {
			qsort(tabs[k]->e, tabs[k]->n, sizeof *tabs[k]->e, strent_cmp);
			strtab_index(tabs[k]);
		}
	if (p->exe[0] == '#') {
		const char *e = ft_string(p, (uint32_t)strtoul(p->exe + 1, NULL, 10));
		snprintf(p->exe, sizeof p->exe, "%s", e ? e : "");
	}
	if (!p->cmdline)
		p->cmdline = ft_xstrdup("");

	/* clock rate from the longest span we have; a short-lived process may
	 * borrow a better rate from another process of its host (below) */
	p->calib_span_ns = 0;
	/* after a fall-back: the ticks' line up to its pair, MONOTONIC's after */
	struct ft_clock_pair end = p->clock_parted_ns ? fb : last;
	if (p->hdr.clock_kind == FT_CLOCK_MONO) {
		p->ns_per_tick = 1.0;
		p->calib_span_ns = UINT64_MAX;
		p->clock_parted_ns = 0;
	} else if (end.mono_ns > p->base_ns && end.ticks > p->base_ticks) {
		p->ns_per_tick = (double)(end.mono_ns - p->base_ns) /
				 (double)(end.ticks - p->base_ticks);
		p->calib_span_ns = end.mono_ns - p->base_ns;
	} else if (p->hdr.ticks_per_sec_guess) {
		p->ns_per_tick = 1e9 / (double)p->hdr.ticks_per_sec_guess;
	} else {
		p->ns_per_tick = 1.0;
	}
	if (p->clock_parted_ns) {
		p->fb_ticks = fb.ticks;
		p->fb_ns = fb.mono_ns;
		p->fb_ns_per_tick = last.mono_ns > fb.mono_ns && last.ticks > fb.ticks ?
			(double)(last.mono_ns - fb.mono_ns) / (double)(last.ticks - fb.ticks) :
			p->ns_per_tick;
	}
	p->last_ns = last.mono_ns;
	p->run_start_ns = p->base_ns;
	/* a flight recorder's window: the process starts where it does (the
	 * same clock line, from another point on it) */
	if (p->nflight && p->flight.window_ticks > p->base_ticks) {
		uint64_t ns = ft_ticks_to_ns(p, p->flight.window_ticks);
		p->base_ticks = p->flight.window_ticks;
		p->base_ns = ns;
	}
	/* not kept open: a run of thousands of processes must not run out of
	 * descriptors; the event pass opens it again (reopen) */
	pass_end(p);
	*out = p;
	return 0;
fail:
	pass_end(p);
	free(p->path);
	free(p);
	return -1;
}

/* Processes of one host share the TSC: a process whose own calibration
 * span is short (it lived a few milliseconds) takes the rate of the process
 * of its host with the longest span. Spans under 1 ms are not trusted. */
static void borrow_clock_rates(struct ft_trace *tr, FILE *err)
{
	for (int i = 0; i < tr->nprocs; i++) {
		struct ft_process *p = tr->procs[i];
		if (p->calib_span_ns >= 10000000)
			continue;
		const struct ft_process *best = NULL;
		for (int j = 0; j < tr->nprocs; j++) {
			const struct ft_process *q = tr->procs[j];
			if (q->hdr.clock_kind == p->hdr.clock_kind &&
			    strcmp(q->hdr.host, p->hdr.host) == 0 &&
			    q->calib_span_ns > p->calib_span_ns &&
			    (!best || q->calib_span_ns > best->calib_span_ns))
				best = q;
		}
		if (best && best->calib_span_ns >= 1000000)
			p->ns_per_tick = best->ns_per_tick;
		else if (p->calib_span_ns < 1000000 && !p->hdr.ticks_per_sec_guess && p->calib_span_ns < 20000)
			fprintf(err, "feedtrace: %s: process too short to calibrate its clock; "
				"times are approximate\n", p->path);
	}
}

static int pid_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ft_trace_open(const char *dir, struct ft_trace *tr, FILE *err)
{
	memset(tr, 0, sizeof *tr);
	struct stat st;
	if (stat(dir, &st) != 0) {
		fprintf(err, "feedtrace: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	int n = 0;
	if (S_ISREG(st.st_mode)) {
		names = ft_xrealloc(NULL, sizeof *names);
		names[n++] = ft_xstrdup(dir);
	} else {
		DIR *d = opendir(dir);
		if (!d) {
			fprintf(err, "feedtrace: %s: %s\n", dir, strerror(errno));
			return -1;
		}
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			size_t l = strlen(de->d_name);
			if (l < 4 || strcmp(de->d_name + l - 3, ".ft") != 0)
				continue;
			names = ft_xrealloc(names, (size_t)(n + 1) * sizeof *names);
			size_t need = strlen(dir) + l + 2;
			names[n] = ft_xrealloc(NULL, need);
			snprintf(names[n], need, "%s/%s", dir, de->d_name);
			n++;
		}
		closedir(d);
	}
	if (n == 0) {
		fprintf(err, "feedtrace: %s: no trace files (*.ft) here\n", dir);
		free(names);
		return -1;
	}
	qsort(names, (size_t)n, sizeof *names, name_cmp);
	for (int i = 0; i < n; i++) {
		struct ft_process *p;
		if (open_file(names[i], &p, err) == 0) {
			tr->procs = ft_xrealloc(tr->procs, (size_t)(tr->nprocs + 1) * sizeof *tr->procs);
			tr->procs[tr->nprocs++] = p;
			tr->errors += p->bad_chunks;
			if (!tr->start_ns || p->base_ns < tr->start_ns)
				tr->start_ns = p->base_ns;
		} else {
			tr->errors++;
		}
		free(names[i]);
	}
	free(names);
	if (tr->nprocs == 0) {
		fprintf(err, "feedtrace: %s: no readable trace file\n", dir);
		return -1;
	}
	borrow_clock_rates(tr, err);
	tr->pids = ft_xmalloc((size_t)tr->nprocs * sizeof *tr->pids);
	for (int i = 0; i < tr->nprocs; i++)
		tr->pids[i] = tr->procs[i]->hdr.pid;
	tr->npids = tr->nprocs;
	qsort(tr->pids, (size_t)tr->npids, sizeof *tr->pids, pid_cmp);
	return 0;
}

int ft_trace_has_pid(const struct ft_trace *tr, int32_t pid)
{
	return tr->npids && bsearch(&pid, tr->pids, (size_t)tr->npids, sizeof pid, pid_cmp);
}

static void process_free(struct ft_process *p)
{
	struct ft_strtab *tabs[2] = { p->strings, p->symbols };
	for (int k = 0; k < 2; k++) {
		struct ft_strtab *t = tabs[k];
		if (!t)
			continue;
		for (uint32_t j = 0; j < t->n; j++)
			free((void *)t->e[j].s);
		free(t->e);
		free(t->index);
		free(t);
	}
	for (int j = 0; j < p->nthreads; j++) {
		free(p->threads[j].cpu);
		free(p->threads[j].runq);
	}
	free(p->threads);
	for (int j = 0; j < p->nfaults; j++)
		free(p->faults[j].pt);
	free(p->faults);
	free(p->gpu);
	free(p->win);
	if (p->sym_free)
		p->sym_free(p->sym);
	for (int j = 0; j < p->nmods; j++)
		free(p->mods[j].path);
	free(p->mods);
	free(p->cmdline);
	free(p->path);
	pass_end(p);
	free(p);
}

void ft_trace_keep(struct ft_trace *tr, const unsigned char *keep)
{
	int n = 0;
	tr->start_ns = 0;
	for (int i = 0; i < tr->nprocs; i++) {
		struct ft_process *p = tr->procs[i];
		if (!keep[i]) {
			process_free(p);
			continue;
		}
		tr->procs[n++] = p;
		if (!tr->start_ns || p->base_ns < tr->start_ns)
			tr->start_ns = p->base_ns;
	}
	tr->nprocs = n;
}

void ft_trace_close(struct ft_trace *tr)
{
	for (int i = 0; i < tr->nprocs; i++)
		process_free(tr->procs[i]);
	free(tr->procs);
	free(tr->pids);
	memset(tr, 0, sizeof *tr);
}

struct ft_process *ft_process_mem(int32_t pid, const char *cmdline, uint64_t start_ns)
{
	struct ft_process *p = ft_xcalloc(1, sizeof *p);
	p->fd = -1;
	p->path = ft_xstrdup("(memory)");
	p->cmdline = ft_xstrdup(cmdline);
	snprintf(p->exe, sizeof p->exe, "%.*s", (int)strcspn(cmdline, " "), cmdline);
	p->hdr.pid = pid;
	p->ns_per_tick = 1.0;
	p->base_ticks = p->base_ns = p->last_ns = p->run_start_ns = start_ns;
	return p;
}

uint32_t ft_process_mem_string(struct ft_process *p, const char *s)
{
	struct ft_strtab *t = p->strings;
	if (!t)
		t = p->strings = ft_xcalloc(1, sizeof *t);
	for (uint32_t i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].s, s))
			return t->e[i].id;
	if (t->n == t->cap)
		FT_GROW(t->e, t->cap, 16);
	t->e[t->n] = (struct strent){ t->n + 1, ft_xstrdup(s) };
	return ++t->n;
}

void ft_process_mem_free(struct ft_process *p)
{
	process_free(p);
}

const char *ft_flight_why(uint32_t why)
{
	static const char *const name[] = { "?", "request", "signal", "hang", "exit", "exec" };
	return name[why < sizeof name / sizeof name[0] ? why : 0];
}

uint64_t ft_flight_window_ns(const struct ft_process *p)
{
	uint64_t end = ft_ticks_to_ns(p, p->flight_last.dump_ticks);
	return p->nflight && end > p->base_ns ? end - p->base_ns : 0;
}

uint64_t ft_flight_run_ns(const struct ft_process *p)
{
	uint64_t end = ft_ticks_to_ns(p, p->flight_last.dump_ticks);
	return p->nflight && end > p->run_start_ns ? end - p->run_start_ns : 0;
}

/* How many of this chunk's first slots were read already. An exit path
 * that could not take the flush lock drains beside the flusher, and both
 * may write the same slots of a stream: the second copy is skipped. */
static uint32_t already_read(struct ft_process *p, struct ft_thread_rec *t,
			     const struct ft_events_prefix *pre)
{
	if (!pre->stream)
		return 0;               /* a writer that did not say */
	if (pre->stream != t->stream) {
		t->stream = pre->stream;
		t->next_slot = pre->first_slot;
	}
	uint32_t skip = 0;
	if (pre->first_slot < t->next_slot) {
		uint64_t over = t->next_slot - pre->first_slot;
		skip = over < pre->nslots ? (uint32_t)over : pre->nslots;
		p->dup_slots += skip;
	}
	if (pre->first_slot + pre->nslots > t->next_slot)
		t->next_slot = pre->first_slot + pre->nslots;
	return skip;
}

/* The file read at open, opened again for its events: the same file (a
 * name now given to another file is not read), never blocking. */
static int reopen(struct ft_process *p, FILE *err)
{
	int fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	const char *why = NULL;
	if (fd < 0)
		why = strerror(errno);
	else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		 st.st_dev != p->dev || st.st_ino != p->ino)
		why = "replaced since it was opened";
	if (why) {
		fprintf(err, "feedtrace: %s: %s; its events are not read\n", p->path, why);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	p->fd = fd;
	return 0;
}

int ft_process_events(struct ft_process *p, ft_event_fn fn, void *arg, FILE *err)
{
	uint64_t off = p->hdr.header_size;
	struct ft_chunk_header h;
	const unsigned char *payload;
	unsigned char *buf = NULL, *tmp = NULL;
	size_t cap = 0, tcap = 0;
	int stop = 0;
	p->records = 0;
	p->dup_slots = 0;
	if (reopen(p, err) != 0)
		return 0;
	for (int i = 0; i < p->nthreads; i++)
		p->threads[i].stream = p->threads[i].next_slot = 0;
	while (!stop && next_chunk(p, &off, &h, &payload, err, 0)) {
		if (h.type != FT_CHUNK_EVENTS)
			continue;
		uint64_t at = off - h.stored_size - sizeof h;
		const char *why = NULL;
		long n = decode(&h, payload, &buf, &cap, &tmp, &tcap, &why);
		struct ft_events_prefix pre;
		if (n >= 0 && (size_t)n < sizeof pre)
			why = "event chunk shorter than its prefix", n = -1;
		if (n >= 0) {
			memcpy(&pre, buf, sizeof pre);
			if ((uint64_t)pre.nslots * FT_SLOT_SIZE != (uint64_t)n - sizeof pre)
				why = "event chunk slot count disagrees with its size", n = -1;
		}
		if (n < 0) {
			fprintf(err, "feedtrace: %s: offset %llu: %s\n", p->path,
				(unsigned long long)at, why);
			continue;
		}
		struct ft_thread_rec *t = thread_rec(p, pre.tid);
		if (pre.lost_total > t->lost)
			t->lost = pre.lost_total;
		const struct ft_rec *slots = (const struct ft_rec *)(buf + sizeof pre);
		for (uint32_t i = already_read(p, t, &pre); i < pre.nslots && !stop;) {
			const struct ft_rec *r = &slots[i];
			unsigned k = r->nslots;
			if (k == 0 || i + k > pre.nslots) {
				/* fields are read by the kind's layout, never past the
				 * record: one past its slots reads 0 (events.h), so a
				 * record from before fields were added still reads */
				fprintf(err, "feedtrace: %s: offset %llu: record %u has a bad slot count; rest of chunk skipped\n",
					p->path, (unsigned long long)at, i);
				break;
			}
			struct ft_event ev = {
				.proc = p, .tid = pre.tid,
				.ts_ns = ft_ticks_to_ns(p, r->ts),
				.dur_ns = ft_dur_to_ns(p, r), .rec = r,
			};
			p->records++;
			t->records++;
			stop = fn(&ev, arg);
			i += k;
		}
	}
	free(buf);
	free(tmp);
	pass_end(p);
	return stop;
}
