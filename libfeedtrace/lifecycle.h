/*
 * lifecycle.h: what the process wrappers in shim/ ask of the lifecycle
 * (exit status, exec, signal disposition bookkeeping).
 */
#ifndef FT_LIFECYCLE_H
#define FT_LIFECYCLE_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

void ft_note_exit_status(int status);
void ft_watch_exit_status(void);      /* from the main wrapper, before main */
void ft_note_quick_exit(int status); /* before libc's quick_exit runs */
int ft_fork_overlapped(void);         /* the last fork overlapped a compression */
int ft_alone_begin(void);             /* flusher stopped for a single-threaded-only call: 1 */
void ft_alone_end(void);              /* ... and started again after it */
void ft_exec_failed(const char *path, int err);  /* exec returned err */
int ft_signal_is_ours(int sig);      /* our handler stands in for SIG_DFL */
int ft_signal_wanted(int sig);       /* one we commit the trace on */
int ft_signal_take(int sig);         /* install ours if SIG_DFL; 0 if done */
void ft_signal_release(int sig);     /* the program installed its own */

/* What the wrappers hand the runtime as the library starts (shim/init.c,
 * the library's constructor): the runtime never calls up into shim/
 * (docs/ARCHITECTURE.md, "Layers"; tests/unit/test_layers.py). */
struct ft_shim_ops {
	void (*init)(void);           /* the real functions; after the configuration */
	int (*sigaction)(int sig, const struct sigaction *act, struct sigaction *old);   /* libc's */
	int (*pthread_create)(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg);   /* past our wrapper: the flusher is no program thread */
	void (*fork_child)(void);     /* a fork child's wrapper state, before its file opens */
	/* the GPU's timing events (shim/gpu_time.c), on the flusher thread:
	 * fills buf with struct ft_gpu_sample records, returns their bytes;
	 * gpu_active: whether any context is sampled (the flusher looks often) */
	size_t (*gpu_poll)(void *buf, size_t cap);
	int (*gpu_active)(void);
};
extern struct ft_shim_ops ft_shim;
void ft_lifecycle_start(const struct ft_shim_ops *ops);

#endif
