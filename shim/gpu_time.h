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
#include "../libfeedtrace/recorder.h"

/* a submission to stream (as recorded) succeeded; t0: when it was called */
void ft_gpu_submitted(struct ft_thread *t, uint64_t stream, uint64_t t0);
/* a stream sync: a sample first if the stream has unsampled work; after it */
void ft_gpu_before_sync(struct ft_thread *t, uint64_t stream);
void ft_gpu_synced(struct ft_thread *t, uint64_t stream, CUresult r);
void ft_gpu_synced_all(CUresult r);            /* cuCtxSynchronize returned */
/* a stream capture: before its begin, its begin's result, its end's */
void ft_gpu_capture_begin(void);
void ft_gpu_capture_begun(CUresult r);
void ft_gpu_capture_end(CUresult r);
/* before a context, or a device's primary context, may be destroyed */
void ft_gpu_ctx_gone(uint64_t ctx);
void ft_gpu_dev_gone(CUdevice dev);

/* the flusher's side (ft_shim_ops) */
size_t ft_gpu_poll(void *buf, size_t cap);
int ft_gpu_active(void);
void ft_gpu_fork_child(void);

#endif
