/*
 * gpu_time.h: the GPU's own time, measured without CUPTI (shim/gpu_time.c):
 * what the generated CUDA wrappers call around submissions, syncs,
 * stream captures and a context's end.
 */
#ifndef FT_GPU_TIME_H
#define FT_GPU_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_types.h"
#include "../libfeedtrace/config.h"
#include "../libfeedtrace/recorder.h"

/* A stream as the samples know it (its key: the record value; the legacy
 * stream 0 as 1; the per-thread default stream 2 with its thread's tid).
 * due: the tick from which its next submission takes a sample (0: now, the
 * stream was seen idle); submits: submissions so far; sampled: submits at
 * its latest sample (unsampled work exists while they differ); wait_due:
 * as due, for the samples before a wait (ft_gpu_before_wait). */
struct ft_gpu_stream {
	_Atomic uint64_t key;
	_Atomic uint64_t due;
	_Atomic uint64_t submits, sampled;
	_Atomic uint64_t wait_due;   /* the tick from which a wait may take a sample */
};
#define FT_GPU_STREAMS 1024
extern struct ft_gpu_stream ft_gpu_streams[FT_GPU_STREAMS];

static inline uint64_t ft_gpu_key(uint64_t stream, int32_t tid)
{
	if (stream == 0)
		return 1;
	return stream == 2 ? (uint64_t)(uint32_t)tid << 32 | 2 : stream;
}

static inline uint32_t ft_gpu_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 54);
}

/* the sample, or another stream than the thread's last (gpu_time.c) */
void ft_gpu_submitted_slow(struct ft_thread *t, uint64_t stream, uint64_t t0);
/* ft_gpu_submitted below, as a call: for the submissions other than
 * launches (copies, memsets, graphs), whose wrappers need not grow */
void ft_gpu_submitted_call(struct ft_thread *t, uint64_t stream, uint64_t t0);

/* Each thread's last stream submitted to and its place (a thread feeds one
 * stream mostly): the check needs no hash then. With sampling off, the
 * place is one whose sample is never due; before a thread's first
 * submission, stream is ~0, no stream's record value. */
struct ft_gpu_last {
	uint64_t stream;
	struct ft_gpu_stream *st;
};
extern __thread struct ft_gpu_last ft_gpu_last FT_TLS;

/* A submission to stream (as recorded) succeeded; t0: when it was called.
 * Inline: the thread's last stream, not due, costs four loads, two
 * compares and a store; no call. */
static inline __attribute__((always_inline)) void
ft_gpu_submitted(struct ft_thread *t, uint64_t stream, uint64_t t0)
{
	struct ft_gpu_stream *st = ft_gpu_last.st;
	if (ft_likely(ft_gpu_last.stream == stream &&
		      t0 < atomic_load_explicit(&st->due, memory_order_relaxed))) {
		atomic_store_explicit(&st->submits,
				      atomic_load_explicit(&st->submits, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		return;
	}
	ft_gpu_submitted_slow(t, stream, t0);
}

/* The thread is about to block in a wait (a condition, a semaphore, a
 * multiplexed wait that found nothing ready): when its last stream has
 * unsampled work, a sample now says when that work ended, so that the
 * stream's idle while the thread waits (for data, mostly) is measured.
 * Inline: the usual case (nothing unsampled) costs three loads. */
void ft_gpu_before_wait_slow(struct ft_thread *t);
static inline __attribute__((always_inline)) void ft_gpu_before_wait(struct ft_thread *t)
{
	struct ft_gpu_stream *st = ft_gpu_last.st;
	if (ft_likely(!st || atomic_load_explicit(&st->submits, memory_order_relaxed) ==
			     atomic_load_explicit(&st->sampled, memory_order_relaxed)))
		return;
	ft_gpu_before_wait_slow(t);
}
/* a stream sync: a sample first if the stream has unsampled work; after it */
void ft_gpu_before_sync(struct ft_thread *t, uint64_t stream);
void ft_gpu_synced(struct ft_thread *t, uint64_t stream, CUresult r);
void ft_gpu_synced_all(CUresult r);            /* cuCtxSynchronize returned */
/* a stream capture: before its begin, its begin's result, its end's */
void ft_gpu_capture_begin(void);
void ft_gpu_capture_begun(CUresult r);
void ft_gpu_capture_end(CUresult r);
/* a context made or retained (ctx 0: refused): its pool asked for ahead,
 * so that its first submissions find it made */
void ft_gpu_ctx_new(CUresult r, uint64_t ctx);
/* before a context, or a device's primary context, may be destroyed */
void ft_gpu_ctx_gone(uint64_t ctx);
void ft_gpu_dev_gone(CUdevice dev);

/* the flusher's side (ft_shim_ops) */
size_t ft_gpu_poll(void *buf, size_t cap);
int ft_gpu_active(void);
void ft_gpu_fork_child(void);

#endif
