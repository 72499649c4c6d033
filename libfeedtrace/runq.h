/*
 * runq.h: a thread's run-queue delay (runq.c).
 */
#ifndef FT_RUNQ_H
#define FT_RUNQ_H

#include <stdint.h>

/* the thread's run-queue delay so far (ns): 0, or -1 when unreadable */
int ft_sched_wait_ns(int32_t tid, uint64_t *wait_ns);

#endif
