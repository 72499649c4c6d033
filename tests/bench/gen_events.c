/*
 * gen_events.c: writes a large synthetic feedtrace trace directly in the
 * trace format (docs/FORMAT.md), fast, for converter benchmarks (built by
 * scripts/bench_convert.sh into build/bench/gen_events; not a test).
 *
 *   gen_events DIR N [THREADS]
 *
 * Writes DIR/benchhost.4242.ft holding N events (records) of one process
 * with THREADS threads (default 4), as the recorder would: per-thread
 * EVENTS chunks of up to 16384 slots, delta+byte-shuffled and compressed
 * with zstd level 1 (codec 2), strings first, TSC clock (3 ticks per ns)
 * with a CLOCK chunk per flush round, an END chunk last. Deterministic.
 *
 * The event mix is that of a training input pipeline feeding one GPU:
 *   thread 1 (main): per step, sem_wait for a batch, cuMemcpyHtoDAsync,
 *     8 cuLaunchKernel (16 kernel names), pthread_mutex_lock, every 10th
 *     step a cuMemcpyDtoH (a hidden sync, 4 call sites), then
 *     cuStreamSynchronize; about 2.5 us per call.
 *   threads 2..: loaders: openat one of 2000 files, 16 read()s of 4 KiB
 *     (every 8th of 64 KiB), close, pthread_mutex_lock every 4th file;
 *     about 1.5 us per call.
 * So it exercises every stage of `convert`: interned paths, CUDA held
 * submissions, sync lanes and flows, storms, counters and findings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "events.h"

#define CHUNK_SLOTS 16384
#define NFILES 2000
#define NKERNELS 16
#define NSITES 4
#define TICKS_PER_NS 3
#define PID 4242
#define MAXT 64

static FILE *out;
static ZSTD_CCtx *cctx;
static unsigned char *shuf, *packed;
static size_t packed_cap;

static void die(const char *m)
{
	fprintf(stderr, "gen_events: %s: %s\n", m, strerror(errno));
	exit(1);
}

static void chunk(uint16_t type, uint16_t codec, const void *data, uint32_t stored,
		  uint32_t raw)
{
	struct ft_chunk_header h = { FT_CHUNK_MAGIC, type, codec, stored, raw,
				     ft_hash32(data, stored), 0 };
	h.header_hash = ft_hash32(&h, offsetof(struct ft_chunk_header, header_hash));
	if (fwrite(&h, sizeof h, 1, out) != 1 || fwrite(data, 1, stored, out) != stored)
		die("write");
}

/* ---- strings ---- */

static char strbuf[1 << 20];
static size_t strlen_used;
static uint32_t nstr;

static uint32_t add_string(const char *s)
{
	struct ft_string_entry e = { ++nstr, (uint32_t)strlen(s) + 1 };
	size_t pad = (e.len + 7) & ~7u;
	memcpy(strbuf + strlen_used, &e, sizeof e);
	memset(strbuf + strlen_used + sizeof e, 0, pad);
	memcpy(strbuf + strlen_used + sizeof e, s, e.len);
	strlen_used += sizeof e + pad;
	return e.id;
}

/* ---- records ---- */

struct gthread {
	int32_t tid;
	uint64_t now;                   /* ns since start */
	uint64_t n;                     /* records made */
	uint32_t step, sub;             /* state machine */
	int32_t fd;
	uint32_t path;
	struct ft_rec slots[CHUNK_SLOTS];
	uint32_t used;
	uint64_t first_slot;
};

static uint64_t start_ns = 1000000000000ull, start_ticks = 5000000000ull;

/* Field names are literals: the lookup is memoised by (kind, pointer). */
static void set(struct ft_rec *r, const char *field, uint64_t v)
{
	static struct { unsigned kind; const char *name; const struct ft_field *f; } memo[256];
	uintptr_t h = ((uintptr_t)field >> 3) ^ (r->kind * 31u);
	unsigned i = (unsigned)(h ^ (h >> 8)) & 255;
	const struct ft_field *f;
	if (memo[i].name == field && memo[i].kind == r->kind) {
		f = memo[i].f;
	} else {
		f = ft_kind_field(ft_kind(r->kind), field);
		if (!f) {
			fprintf(stderr, "gen_events: no field %s\n", field);
			exit(1);
		}
		memo[i].kind = r->kind;
		memo[i].name = field;
		memo[i].f = f;
	}
	memcpy((unsigned char *)r + f->off, &v, f->size);
}

static void flush_thread(struct gthread *t)
{
	if (!t->used)
		return;
	struct ft_events_prefix pre = { t->tid, t->used, t->first_slot, 0, 0 };
	uint64_t n = t->used, prev = 0;
	const unsigned char *in = (const unsigned char *)t->slots;
	unsigned char *o = shuf + sizeof pre;
	memcpy(shuf, &pre, sizeof pre);
	for (uint64_t i = 0; i < n; i++) {             /* the recorder's shuffle */
		unsigned char slot[FT_SLOT_SIZE];
		memcpy(slot, in + i * FT_SLOT_SIZE, FT_SLOT_SIZE);
		uint64_t ts, d;
		memcpy(&ts, slot, 8);
		d = ts - prev;
		prev = ts;
		memcpy(slot, &d, 8);
		for (unsigned b = 0; b < FT_SLOT_SIZE; b++)
			o[b * n + i] = slot[b];
	}
	size_t raw = sizeof pre + n * FT_SLOT_SIZE;
	size_t z = ZSTD_compressCCtx(cctx, packed, packed_cap, shuf, raw, 1);
	if (ZSTD_isError(z)) {
		fprintf(stderr, "gen_events: zstd: %s\n", ZSTD_getErrorName(z));
		exit(1);
	}
	chunk(FT_CHUNK_EVENTS, FT_CODEC_ZSTD_SHUFFLE, packed, (uint32_t)z, (uint32_t)raw);
	t->first_slot += n;
	t->used = 0;
}

static struct ft_rec *rec(struct gthread *t, unsigned kind, uint64_t dur_ns, uint64_t gap_ns)
{
	const struct ft_kind_info *k = ft_kind(kind);
	if (t->used + k->nslots > CHUNK_SLOTS)
		flush_thread(t);
	struct ft_rec *r = &t->slots[t->used];
	memset(r, 0, (size_t)k->nslots * FT_SLOT_SIZE);
	r->ts = start_ticks + t->now * TICKS_PER_NS;
	r->dur = (uint32_t)(dur_ns * TICKS_PER_NS);
	r->kind = (uint16_t)kind;
	r->nslots = (uint8_t)k->nslots;
	t->used += k->nslots;
	t->now += dur_ns + gap_ns;
	t->n++;
	return r;
}

static uint32_t files[NFILES], kernels[NKERNELS], sites[NSITES];
static uint32_t s_launch, s_htod, s_dtoh, s_ssync;

/* One call of the main (GPU-feeding) thread. */
static void step_main(struct gthread *t)
{
	struct ft_rec *r;
	uint32_t s = t->sub++;
	if (s == 0) {
		r = rec(t, FT_EV_SEM_WAIT, 20000, 500);
		set(r, "sem", 0x7f0000001000ull);
	} else if (s == 1) {
		r = rec(t, FT_EV_CU_MEMCPY_HTOD_ASYNC, 4000, 300);
		set(r, "sym", s_htod);
		set(r, "dir", 1);
		set(r, "sync", 0);
		set(r, "stream", 0x10);
		set(r, "bytes", 1 << 20);
		set(r, "pinned", 1);
	} else if (s < 10) {
		r = rec(t, FT_EV_CU_LAUNCH_KERNEL, 3000, 200);
		set(r, "sym", s_launch);
		set(r, "kernel", kernels[(t->step * 8 + s) % NKERNELS]);
		set(r, "sync", 0);
		set(r, "stream", 0x10);
		set(r, "gx", 1024), set(r, "gy", 1), set(r, "gz", 1);
		set(r, "bx", 256), set(r, "by", 1), set(r, "bz", 1);
	} else if (s == 10) {
		r = rec(t, FT_EV_MUTEX_LOCK, 80, 300);
		set(r, "lock", 0x7f0000002000ull);
	} else if (s == 11 && t->step % 10 == 9) {
		r = rec(t, FT_EV_CU_MEMCPY_DTOH, 200000, 300);
		set(r, "sym", s_dtoh);
		set(r, "dir", 2);
		set(r, "sync", 2);
		set(r, "stream", 0x10);
		set(r, "bytes", 4096);
		set(r, "site", sites[(t->step / 10) % NSITES]);
	} else {
		r = rec(t, FT_EV_CU_STREAM_SYNC, 500000, 400);
		set(r, "sym", s_ssync);
		set(r, "sync", 1);
		set(r, "stream", 0x10);
		set(r, "handle", 0x10);
		t->sub = 0;
		t->step++;
	}
}

/* One call of a loader thread. */
static void step_loader(struct gthread *t)
{
	struct ft_rec *r;
	uint32_t s = t->sub++;
	if (s == 0) {
		t->path = files[(t->step * 7 + (uint32_t)t->tid) % NFILES];
		t->fd = 3 + (int32_t)(t->step % 64);
		r = rec(t, FT_EV_OPENAT, 3000, 300);
		set(r, "fd", (uint32_t)t->fd);
		set(r, "path", t->path);
		set(r, "dirfd", (uint32_t)-100);
	} else if (s <= 16) {
		uint32_t req = s % 8 == 0 ? 65536 : 4096;
		r = rec(t, FT_EV_READ, req / 4, 400);
		set(r, "fd", (uint32_t)t->fd);
		set(r, "path", t->path);
		set(r, "req", req);
		set(r, "ret", req);
	} else if (s == 17) {
		r = rec(t, FT_EV_CLOSE, 1000, 300);
		set(r, "fd", (uint32_t)t->fd);
		set(r, "path", t->path);
		if (t->step % 4 != 3) {
			t->sub = 0;
			t->step++;
		}
	} else {
		r = rec(t, FT_EV_MUTEX_LOCK, 2000, 300);
		set(r, "lock", 0x7f0000002000ull);
		t->sub = 0;
		t->step++;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gen_events DIR N [THREADS]\n");
		return 2;
	}
	const char *dir = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	int nt = argc > 3 ? atoi(argv[3]) : 4;
	if (nt < 1 || nt > MAXT) {
		fprintf(stderr, "gen_events: 1..%d threads\n", MAXT);
		return 2;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		die(dir);
	char path[4096];
	snprintf(path, sizeof path, "%s/benchhost.%d.ft", dir, PID);
	if (!(out = fopen(path, "wb")))
		die(path);
	static char obuf[1 << 20];
	setvbuf(out, obuf, _IOFBF, sizeof obuf);
	cctx = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	size_t raw_max = sizeof(struct ft_events_prefix) + CHUNK_SLOTS * FT_SLOT_SIZE;
	shuf = malloc(raw_max);
	packed_cap = ZSTD_compressBound(raw_max);
	packed = malloc(packed_cap);
	struct gthread *th = calloc((size_t)nt, sizeof *th);
	if (!shuf || !packed || !th)
		die("malloc");

	struct ft_file_header fh;
	memset(&fh, 0, sizeof fh);
	memcpy(fh.magic, FT_FILE_MAGIC, 8);
	fh.version = FT_FORMAT_VERSION;
	fh.header_size = sizeof fh;
	fh.clock_kind = FT_CLOCK_TSC;
	fh.pid = PID;
	fh.ppid = 1;
	fh.hooks = FT_G_ALL;
	fh.start_ticks = start_ticks;
	fh.start_mono_ns = start_ns;
	fh.start_real_ns = 1700000000000000000ull;
	fh.ticks_per_sec_guess = 1000000000ull * TICKS_PER_NS;
	fh.ring_slots = CHUNK_SLOTS;
	snprintf(fh.host, sizeof fh.host, "benchhost");
	if (fwrite(&fh, sizeof fh, 1, out) != 1)
		die("write");

	char s[256];
	uint32_t exe = add_string("/usr/bin/python3");
	for (int i = 0; i < NFILES; i++) {
		snprintf(s, sizeof s, "/data/train/shard-%02d/sample-%06d.bin", i % 20, i);
		files[i] = add_string(s);
	}
	for (int i = 0; i < NKERNELS; i++) {
		snprintf(s, sizeof s, "void at::native::kernel_%d<float>(int, float const*, float*)", i);
		kernels[i] = add_string(s);
	}
	for (int i = 0; i < NSITES; i++) {
		snprintf(s, sizeof s, "train.py:%d in step", 100 + i * 10);
		sites[i] = add_string(s);
	}
	s_launch = add_string("cuLaunchKernel");
	s_htod = add_string("cuMemcpyHtoDAsync_v2");
	s_dtoh = add_string("cuMemcpyDtoH_v2");
	s_ssync = add_string("cuStreamSynchronize");
	chunk(FT_CHUNK_STRINGS, FT_CODEC_RAW, strbuf, (uint32_t)strlen_used, (uint32_t)strlen_used);

	const char args[] = "python3\0train.py\0--bench";
	unsigned char pi[sizeof(struct ft_process_info) + sizeof args];
	struct ft_process_info info = { 3, sizeof args, exe, 0 };
	memcpy(pi, &info, sizeof info);
	memcpy(pi + sizeof info, args, sizeof args);
	chunk(FT_CHUNK_PROCESS, FT_CODEC_RAW, pi, sizeof pi, sizeof pi);
	for (int i = 0; i < nt; i++) {
		struct ft_thread_info ti;
		memset(&ti, 0, sizeof ti);
		th[i].tid = PID + i;
		ti.tid = th[i].tid;
		ti.flags = i == 0;
		snprintf(ti.name, sizeof ti.name, i == 0 ? "python3" : "loader-%d", i);
		chunk(FT_CHUNK_THREAD, FT_CODEC_RAW, &ti, sizeof ti, sizeof ti);
	}

	/* The thread whose clock is furthest behind makes the next call; a
	 * thread's chunk is written when full, as the recorder's flusher would
	 * (chunks of different threads interleave, each in time order). */
	uint64_t made = 0, last_clock = 0;
	while (made < n) {
		struct gthread *t = &th[0];
		for (int i = 1; i < nt; i++)
			if (th[i].now < t->now)
				t = &th[i];
		if (t == &th[0])
			step_main(t);
		else
			step_loader(t);
		made++;
		if (t->now - last_clock > 200000000ull) {        /* every 200 ms */
			last_clock = t->now;
			struct ft_clock_pair c = { start_ticks + t->now * TICKS_PER_NS,
						   start_ns + t->now, 0, 0 };
			chunk(FT_CHUNK_CLOCK, FT_CODEC_RAW, &c, sizeof c, sizeof c);
		}
	}
	uint64_t end = 0;
	for (int i = 0; i < nt; i++) {
		flush_thread(&th[i]);
		if (th[i].now > end)
			end = th[i].now;
	}
	struct ft_clock_pair c = { start_ticks + end * TICKS_PER_NS, start_ns + end, 0, 0 };
	chunk(FT_CHUNK_CLOCK, FT_CODEC_RAW, &c, sizeof c, sizeof c);
	struct ft_end_info e = { FT_END_EXIT, 0, made, 0, (uint64_t)nt, 0, 0 };
	chunk(FT_CHUNK_END, FT_CODEC_RAW, &e, sizeof e, sizeof e);
	if (fclose(out) != 0)
		die(path);
	fprintf(stderr, "gen_events: %s: %llu events, %d threads, %.3f s of trace\n", path,
		(unsigned long long)made, nt, (double)end / 1e9);
	return 0;
}
