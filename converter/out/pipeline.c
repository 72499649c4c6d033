/*
 * pipeline.c: owns the hand-off between the converter's two stages, the
 * second thread.
 *
 * Stage 1 (convert.c, ranges.c on the caller's thread: reading, merging,
 * analyses) appends commands to a batch: a call slice (the record copied,
 * drawn later by convert.c's callback), a track declaration, a counter
 * value, a slice or instant with its arguments (their strings copied into
 * the batch). A full batch goes into a bounded queue (QUEUE batches) that
 * stage 2 empties in order into the pftrace.c writer, which only stage 2
 * touches until ft_pipe_finish. Memory: at most QUEUE + 2 batches of
 * BATCH_BYTES (more only for a single command larger than that), whatever
 * the trace's length. Each side sleeps on a condition variable when the
 * queue is full (stage 1) or empty (stage 2): no spinning.
 *
 * Tracks and flows are named by ids the caller chooses (pftrace.h, pf_id):
 * stage 1 never waits for an answer of the writer, and the queue is only
 * a queue.
 *
 * With one thread the commands run at once on the caller's thread, through
 * the writer's own functions: exactly the converter without a pipeline.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "pipeline.h"

#define BATCH_BYTES (128u << 10)
#define QUEUE 4

enum { OP_CALL = 1, OP_TRACK, OP_COUNTER, OP_SLICE, OP_INSTANT };
enum { TK_PROCESS = 1, TK_THREAD, TK_CHILD, TK_COUNTER };

struct hdr { uint32_t op, size; };          /* size: the whole command, 8-aligned */

struct cmd_call {
	struct hdr h;
	struct ft_pipe_call c;                  /* c.rec: set by stage 2 */
	uint32_t nbytes;                        /* record bytes that follow */
};

struct cmd_track {
	struct hdr h;
	int kind, unit;
	int32_t pid;
	int64_t tid;
	uint64_t id, parent;
	const char *name;                       /* in the command, or NULL */
};

struct cmd_counter { struct hdr h; uint64_t track, ts; int64_t v; };

struct cmd_event {                          /* OP_SLICE, OP_INSTANT */
	struct hdr h;
	uint64_t track, ts, dur;
	const char *name;
	int nargs;
	struct pf_arg args[];                          /* then the strings */
};

struct batch {
	unsigned char *buf;
	size_t len, cap;
	struct batch *next;                     /* on the free list */
};

struct ft_pipe {
	struct pf_writer *w;
	ft_pipe_call_fn call_fn;
	int threaded;
	/* the queue */
	pthread_mutex_t mu;
	pthread_cond_t nonempty, nonfull;
	struct batch *q[QUEUE];
	unsigned head, count;
	int done;
	struct batch *free_list;                /* emptied by stage 2 */
	struct batch *cur;                      /* being filled by stage 1 */
	pthread_t thr;
};

int ft_pipe_default_threads(void)
{
	cpu_set_t set;                           /* the CPUs this process may use */
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		return CPU_COUNT(&set) > 1 ? 2 : 1;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? 2 : 1;
}

/* ---- stage 2 ---- */

/* a declaration the writer refuses leaves its id unknown: the events on
 * it are refused too, as without the pipeline */
static void run_track(struct ft_pipe *pl, const struct cmd_track *t)
{
	switch (t->kind) {
	case TK_PROCESS: pf_process_track(pl->w, t->id, t->pid, t->name, NULL); break;
	case TK_THREAD: pf_thread_track(pl->w, t->id, t->pid, t->tid, t->name); break;
	case TK_CHILD: pf_child_track(pl->w, t->id, t->parent, t->name); break;
	case TK_COUNTER: pf_counter_track(pl->w, t->id, t->parent, t->name, t->unit); break;
	}
}

static void run_batch(struct ft_pipe *pl, const struct batch *b)
{
	size_t o = 0;
	while (o < b->len) {
		const struct hdr *h = (const void *)(b->buf + o);
		switch (h->op) {
		case OP_CALL: {
			const struct cmd_call *cc = (const void *)h;
			struct ft_pipe_call c = cc->c;
			c.rec = (const struct ft_rec *)(cc + 1);
			pl->call_fn(pl->w, &c);
			break;
		}
		case OP_TRACK:
			run_track(pl, (const void *)h);
			break;
		case OP_COUNTER: {
			const struct cmd_counter *c = (const void *)h;
			pf_counter(pl->w, c->track, c->ts, c->v);
			break;
		}
		case OP_SLICE:
		case OP_INSTANT: {
			const struct cmd_event *e = (const void *)h;
			if (h->op == OP_SLICE)
				pf_slice(pl->w, e->track, e->ts, e->dur, e->name, e->args, e->nargs);
			else
				pf_instant(pl->w, e->track, e->ts, e->name, e->args, e->nargs);
			break;
		}
		}
		o += h->size;
	}
}

static void *stage2(void *arg)
{
	struct ft_pipe *pl = arg;
	pthread_mutex_lock(&pl->mu);
	for (;;) {
		while (!pl->count && !pl->done)
			pthread_cond_wait(&pl->nonempty, &pl->mu);
		if (!pl->count)
			break;                          /* done and drained */
		struct batch *b = pl->q[pl->head];
		pl->head = (pl->head + 1) % QUEUE;
		pl->count--;
		pthread_cond_signal(&pl->nonfull);
		pthread_mutex_unlock(&pl->mu);
		run_batch(pl, b);
		b->len = 0;
		pthread_mutex_lock(&pl->mu);
		b->next = pl->free_list;
		pl->free_list = b;
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* ---- stage 1: the queue ---- */

static struct batch *batch_new(void)
{
	struct batch *b = ft_xmalloc(sizeof *b);
	b->buf = ft_xmalloc(BATCH_BYTES);
	b->cap = BATCH_BYTES;
	b->len = 0;
	b->next = NULL;
	return b;
}

static void batch_free(struct batch *b)
{
	free(b->buf);
	free(b);
}

/* Hands the current batch to stage 2 (waiting while the queue is full)
 * and takes an empty one. */
static void send_cur(struct ft_pipe *pl)
{
	pthread_mutex_lock(&pl->mu);
	while (pl->count == QUEUE)
		pthread_cond_wait(&pl->nonfull, &pl->mu);
	pl->q[(pl->head + pl->count) % QUEUE] = pl->cur;
	pl->count++;
	pthread_cond_signal(&pl->nonempty);
	struct batch *b = pl->free_list;
	if (b)
		pl->free_list = b->next;
	pthread_mutex_unlock(&pl->mu);
	pl->cur = b ? b : batch_new();
}

/* Room for a command of n bytes (8-aligned) in the current batch. */
static void *put(struct ft_pipe *pl, uint32_t op, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	struct batch *b = pl->cur;
	if (b->len + n > b->cap) {
		if (b->len) {
			send_cur(pl);
			b = pl->cur;
		}
		if (n > b->cap) {                    /* one command larger than a batch */
			free(b->buf);
			b->buf = ft_xmalloc(n);
			b->cap = n;
		}
	}
	struct hdr *h = (void *)(b->buf + b->len);
	b->len += n;
	h->op = op;
	h->size = (uint32_t)n;
	return h;
}

/* ---- stage 1: the commands ---- */

static void track(struct ft_pipe *pl, int kind, uint64_t id, int32_t pid, int64_t tid,
		  uint64_t parent, const char *name, int unit)
{
	size_t len = name ? strlen(name) + 1 : 0;
	struct cmd_track *t = put(pl, OP_TRACK, sizeof *t + len);
	t->kind = kind;
	t->unit = unit;
	t->id = id;
	t->pid = pid;
	t->tid = tid;
	t->parent = parent;
	t->name = NULL;
	if (name) {
		memcpy(t + 1, name, len);
		t->name = (const char *)(t + 1);
	}
}

void ft_pipe_process_track(struct ft_pipe *pl, uint64_t id, int32_t pid, const char *name)
{
	if (!pl->threaded)
		pf_process_track(pl->w, id, pid, name, NULL);
	else
		track(pl, TK_PROCESS, id, pid, 0, 0, name, 0);
}

void ft_pipe_thread_track(struct ft_pipe *pl, uint64_t id, int32_t pid, int64_t tid,
			  const char *name)
{
	if (!pl->threaded)
		pf_thread_track(pl->w, id, pid, tid, name);
	else
		track(pl, TK_THREAD, id, pid, tid, 0, name, 0);
}

void ft_pipe_child_track(struct ft_pipe *pl, uint64_t id, uint64_t parent, const char *name)
{
	if (!pl->threaded)
		pf_child_track(pl->w, id, parent, name);
	else
		track(pl, TK_CHILD, id, 0, 0, parent, name, 0);
}

void ft_pipe_counter_track(struct ft_pipe *pl, uint64_t id, uint64_t parent, const char *name,
			   int unit)
{
	if (!pl->threaded)
		pf_counter_track(pl->w, id, parent, name, unit);
	else
		track(pl, TK_COUNTER, id, 0, 0, parent, name, unit);
}

void ft_pipe_counter(struct ft_pipe *pl, uint64_t track, uint64_t ts, int64_t v)
{
	if (!pl->threaded) {
		pf_counter(pl->w, track, ts, v);
		return;
	}
	struct cmd_counter *c = put(pl, OP_COUNTER, sizeof *c);
	c->track = track;
	c->ts = ts;
	c->v = v;
}

static size_t str_room(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* Copies s to *at (advanced); NULL stays NULL. */
static const char *str_copy(char **at, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = *at;
	memcpy(d, s, n);
	*at += n;
	return d;
}

static void event(struct ft_pipe *pl, uint32_t op, uint64_t track, uint64_t ts, uint64_t dur,
		  const char *name, const struct pf_arg *args, int nargs)
{
	if (nargs < 0 || (nargs && !args))
		nargs = 0;
	size_t n = sizeof(struct cmd_event) + (size_t)nargs * sizeof(struct pf_arg) + str_room(name);
	for (int i = 0; i < nargs; i++) {
		n += str_room(args[i].name);
		if (args[i].kind == PF_STRING)
			n += str_room(args[i].v.s);
	}
	struct cmd_event *e = put(pl, op, n);
	e->track = track;
	e->ts = ts;
	e->dur = dur;
	e->nargs = nargs;
	char *at = (char *)(e->args + nargs);
	e->name = str_copy(&at, name);
	for (int i = 0; i < nargs; i++) {
		e->args[i] = args[i];
		e->args[i].name = str_copy(&at, args[i].name);
		if (args[i].kind == PF_STRING)
			e->args[i].v.s = str_copy(&at, args[i].v.s);
	}
}

void ft_pipe_slice(struct ft_pipe *pl, uint64_t track, uint64_t ts, uint64_t dur,
		   const char *name, const struct pf_arg *args, int nargs)
{
	if (!pl->threaded) {
		pf_slice(pl->w, track, ts, dur, name, args, nargs);
		return;
	}
	event(pl, OP_SLICE, track, ts, dur, name, args, nargs);
}

void ft_pipe_instant(struct ft_pipe *pl, uint64_t track, uint64_t ts,
		     const char *name, const struct pf_arg *args, int nargs)
{
	if (!pl->threaded) {
		pf_instant(pl->w, track, ts, name, args, nargs);
		return;
	}
	event(pl, OP_INSTANT, track, ts, 0, name, args, nargs);
}

void ft_pipe_call(struct ft_pipe *pl, const struct ft_pipe_call *c)
{
	if (!pl->threaded) {
		pl->call_fn(pl->w, c);
		return;
	}
	size_t n = (size_t)c->rec->nslots * FT_SLOT_SIZE;
	if (n > FT_PIPE_REC_MAX)
		n = FT_PIPE_REC_MAX;
	struct cmd_call *cc = put(pl, OP_CALL, sizeof *cc + n);
	cc->c = *c;
	cc->c.rec = NULL;
	cc->nbytes = (uint32_t)n;
	/* slot by slot: most records are one or two slots */
	const unsigned char *src = (const unsigned char *)c->rec;
	unsigned char *dst = (unsigned char *)(cc + 1);
	for (size_t o = 0; o < n; o += FT_SLOT_SIZE)
		memcpy(dst + o, src + o, FT_SLOT_SIZE);
}

/* ---- life ---- */

struct ft_pipe *ft_pipe_new(struct pf_writer *w, int threads, ft_pipe_call_fn call_fn)
{
	struct ft_pipe *pl = ft_xmalloc(sizeof *pl);
	memset(pl, 0, sizeof *pl);
	pl->w = w;
	pl->call_fn = call_fn;
	if (threads < 2)
		return pl;
	pthread_mutex_init(&pl->mu, NULL);
	pthread_cond_init(&pl->nonempty, NULL);
	pthread_cond_init(&pl->nonfull, NULL);
	pl->cur = batch_new();
	if (pthread_create(&pl->thr, NULL, stage2, pl) != 0) {
		batch_free(pl->cur);                 /* no thread: run on this one */
		pl->cur = NULL;
		pthread_cond_destroy(&pl->nonfull);
		pthread_cond_destroy(&pl->nonempty);
		pthread_mutex_destroy(&pl->mu);
		return pl;
	}
	pl->threaded = 1;
	return pl;
}

void ft_pipe_finish(struct ft_pipe *pl)
{
	if (pl->threaded) {
		if (pl->cur->len)
			send_cur(pl);
		pthread_mutex_lock(&pl->mu);
		pl->done = 1;
		pthread_cond_signal(&pl->nonempty);
		pthread_mutex_unlock(&pl->mu);
		pthread_join(pl->thr, NULL);
		batch_free(pl->cur);
		while (pl->free_list) {
			struct batch *b = pl->free_list;
			pl->free_list = b->next;
			batch_free(b);
		}
		pthread_cond_destroy(&pl->nonfull);
		pthread_cond_destroy(&pl->nonempty);
		pthread_mutex_destroy(&pl->mu);
	}
	free(pl);
}
