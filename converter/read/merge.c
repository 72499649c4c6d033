/*
 * merge.c: k-way merge of one process's per-thread event streams. Events
 * arrive in file order (each thread in time order); each is copied into its
 * thread's FIFO of pooled 64 KiB blocks, and a heap over the threads' heads
 * releases the oldest once it is `horizon` older than the newest seen.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "merge.h"

#define BLOCK_DATA (64u << 10)

struct block {
	struct block *next;
	uint32_t used;
	/* entries hold struct ft_rec (8-byte fields) at 16-byte steps */
	_Alignas(8) unsigned char data[BLOCK_DATA];
};

struct fifo {
	int32_t tid;
	struct block *head, *tail;
	uint32_t off;                    /* read offset in head */
	int heap_pos;                    /* -1 when not in the heap */
};

struct merger {
	struct ft_merge_opts o;
	struct ft_process *p;
	ft_event_fn fn;
	void *arg;
	struct fifo *q;
	int nq, capq, last;
	struct hent *heap;       /* fifos by head timestamp, the key kept here */
	int nheap;
	struct block *free;
	size_t bytes;
	uint64_t max_ts, last_out;
	int stop;
	struct ft_merge_stats st;
};

struct hent {
	uint64_t key;            /* head_ts of q[qi]: no trip to the fifo's block */
	int qi;
};

/* entry: u64 ts_ns, u64 dur_ns, record (nslots * 32 bytes) */
static uint64_t head_ts(const struct fifo *f)
{
	uint64_t ts;
	memcpy(&ts, f->head->data + f->off, 8);
	return ts;
}

static uint64_t key(struct merger *m, int h)
{
	return m->heap[h].key;
}

static void heap_swap(struct merger *m, int a, int b)
{
	struct hent t = m->heap[a];
	m->heap[a] = m->heap[b];
	m->heap[b] = t;
	m->q[m->heap[a].qi].heap_pos = a;
	m->q[m->heap[b].qi].heap_pos = b;
}

static void sift_up(struct merger *m, int i)
{
	while (i > 0 && key(m, (i - 1) / 2) > key(m, i)) {
		heap_swap(m, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct merger *m, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, s = i;
		if (l < m->nheap && key(m, l) < key(m, s))
			s = l;
		if (r < m->nheap && key(m, r) < key(m, s))
			s = r;
		if (s == i)
			return;
		heap_swap(m, i, s);
		i = s;
	}
}

static struct fifo *fifo_of(struct merger *m, int32_t tid)
{
	if (m->last >= 0 && m->q[m->last].tid == tid)
		return &m->q[m->last];
	for (int i = 0; i < m->nq; i++)
		if (m->q[i].tid == tid) {
			m->last = i;
			return &m->q[i];
		}
	if (m->nq == m->capq) {
		FT_GROW(m->q, m->capq, 16);
		m->heap = ft_xrealloc(m->heap, (size_t)m->capq * sizeof *m->heap);
	}
	struct fifo *f = &m->q[m->nq];
	memset(f, 0, sizeof *f);
	f->tid = tid;
	f->heap_pos = -1;
	m->last = m->nq++;
	return f;
}

/* Delivers the oldest buffered event. */
static void release_one(struct merger *m)
{
	int qi = m->heap[0].qi;
	struct fifo *f = &m->q[qi];
	unsigned char *e = f->head->data + f->off;
	const struct ft_rec *r = (const struct ft_rec *)(e + 16);
	uint32_t size = 16 + (uint32_t)r->nslots * FT_SLOT_SIZE;
	struct ft_event ev = { .proc = m->p, .tid = f->tid, .rec = r };
	memcpy(&ev.ts_ns, e, 8);
	memcpy(&ev.dur_ns, e + 8, 8);
	if (ev.ts_ns < m->last_out)
		m->st.late++;
	else
		m->last_out = ev.ts_ns;
	m->st.events++;
	/* the thread's next entries were written about a horizon ago: out of
	 * cache by now; fetch them while fn runs (a hint: never faults) */
	__builtin_prefetch(e + size);
	__builtin_prefetch(e + size + 64);
	__builtin_prefetch(e + size + 128);
	if (!m->stop)
		m->stop = m->fn(&ev, m->arg);
	m->bytes -= size;
	f->off += size;
	if (f->off >= f->head->used) {          /* head block consumed */
		struct block *b = f->head;
		f->head = b->next;
		f->off = 0;
		if (!f->head)
			f->tail = NULL;
		b->next = m->free;
		m->free = b;
	}
	if (f->head) {
		m->heap[0].key = head_ts(f);
		sift_down(m, 0);
	} else {                                 /* thread drained: leave the heap */
		heap_swap(m, 0, m->nheap - 1);
		m->nheap--;
		f->heap_pos = -1;
		if (m->nheap)
			sift_down(m, 0);
	}
}

static int on_event(const struct ft_event *ev, void *arg)
{
	struct merger *m = arg;
	struct fifo *f = fifo_of(m, ev->tid);
	uint32_t size = 16 + (uint32_t)ev->rec->nslots * FT_SLOT_SIZE;
	if (!f->tail || f->tail->used + size > BLOCK_DATA) {
		struct block *b = m->free;
		if (b)
			m->free = b->next;
		else
			b = ft_xmalloc(sizeof *b);
		b->next = NULL;
		b->used = 0;
		if (f->tail)
			f->tail->next = b;
		else
			f->head = b, f->off = 0;
		f->tail = b;
	}
	unsigned char *e = f->tail->data + f->tail->used;
	memcpy(e, &ev->ts_ns, 8);
	memcpy(e + 8, &ev->dur_ns, 8);
	/* slot by slot: a memcpy of bounded size would be inlined as a rep
	 * movs, slow to start for the one or two slots of most records */
	const unsigned char *src = (const unsigned char *)ev->rec;
	for (uint32_t o = 0; o < size - 16; o += FT_SLOT_SIZE)
		memcpy(e + 16 + o, src + o, FT_SLOT_SIZE);
	f->tail->used += size;
	m->bytes += size;
	if (m->bytes > m->st.peak_bytes)
		m->st.peak_bytes = m->bytes;
	if (f->heap_pos < 0) {                   /* first buffered event of the thread */
		f->heap_pos = m->nheap;
		m->heap[m->nheap].key = ev->ts_ns;
		m->heap[m->nheap++].qi = (int)(f - m->q);
		sift_up(m, f->heap_pos);
	}
	if (ev->ts_ns > m->max_ts)
		m->max_ts = ev->ts_ns;
	while (m->nheap) {
		uint64_t t = key(m, 0);
		if (t + m->o.horizon_ns <= m->max_ts) {
			release_one(m);
		} else if (m->bytes > m->o.max_bytes) {
			m->st.forced++;
			release_one(m);
		} else {
			break;
		}
	}
	return m->stop;
}

int ft_merge_events(struct ft_process *p, const struct ft_merge_opts *o,
		    ft_event_fn fn, void *arg, FILE *err, struct ft_merge_stats *st)
{
	struct merger m;
	memset(&m, 0, sizeof m);
	m.o.horizon_ns = o && o->horizon_ns ? o->horizon_ns : FT_MERGE_HORIZON_DEFAULT;
	m.o.max_bytes = o && o->max_bytes ? o->max_bytes : FT_MERGE_BYTES_DEFAULT;
	m.p = p;
	m.fn = fn;
	m.arg = arg;
	m.last = -1;
	ft_process_events(p, on_event, &m, err);
	while (m.nheap)
		release_one(&m);
	while (m.free) {
		struct block *b = m.free;
		m.free = b->next;
		free(b);
	}
	free(m.q);
	free(m.heap);
	if (st)
		*st = m.st;
	return m.stop;
}
