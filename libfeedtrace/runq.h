/*
 * runq.h: a thread's run-queue delay, and its /proc files (runq.c).
 */
#ifndef FT_RUNQ_H
#define FT_RUNQ_H

#include <stddef.h>
#include <stdint.h>

/* /proc/self/task/TID/FILE into buf (NUL-terminated, cap - 1 bytes at
 * most), by raw system calls: the bytes read, or -1. The flusher only
 * (its own table of descriptors). */
int ft_task_read(int32_t tid, const char *file, char *buf, size_t cap);

/* the thread's run-queue delay so far (ns): 0, or -1 when unreadable */
int ft_sched_wait_ns(int32_t tid, uint64_t *wait_ns);

#endif
