/*
 * capture.h: the capture gate (capture.c): when the process records.
 * The step entry points are called by the user-range wrappers
 * (shim/nvtx.c) on the program's threads; the rest by lifecycle.c and the
 * flusher.
 */
#ifndef FT_CAPTURE_H
#define FT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

unsigned ft_capture_init(void);          /* start-up: ft_active's first value */
int ft_capture_parse(const char *v);     /* FEEDTRACE_CAPTURE's syntax; 0 if understood */
unsigned ft_capture_after_fork_child(unsigned groups);  /* the child's ft_active */
int ft_capture_on(void);                 /* a window is open (or capture is always on) */
int ft_capture_ever(void);               /* this process's file has records to hold */

/* step boundaries: a range pushed (its name, NULL if not ASCII, and level),
 * popped, a mark made */
void ft_capture_push(const char *name, int level);
void ft_capture_pop(int level);
void ft_capture_mark(const char *name);
/* a follower's open outside a window: start following now? 1 if so */
int ft_capture_follow_now(void);

/* the flusher: every cycle, before draining; how long it may sleep (-1:
 * no limit); the window marks not yet written */
void ft_capture_tick(void);
long ft_capture_wait_ms(void);
size_t ft_capture_marks(struct ft_window_mark *out, size_t cap);

#endif
