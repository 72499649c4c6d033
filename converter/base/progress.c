/*
 * progress.c: the progress line on stderr (progress.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

void ft_progress_init(struct ft_progress *pg, int quiet)
{
	memset(pg, 0, sizeof *pg);
	pg->on = !quiet && isatty(2);
}

void ft_progress_line(struct ft_progress *pg, int force, const char *fmt, ...)
{
	if (!pg || !pg->on)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - pg->last.tv_sec) +
		    (double)(now.tv_nsec - pg->last.tv_nsec) / 1e9;
	if (pg->shown && !force && dt < 0.25)
		return;
	pg->last = now;
	pg->shown = 1;
	va_list ap;
	va_start(ap, fmt);
	fputc('\r', stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\033[K", stderr);        /* what a longer line left */
	va_end(ap);
	fflush(stderr);
}

void ft_progress_end(struct ft_progress *pg, int keep)
{
	if (!pg || !pg->on || !pg->shown)
		return;
	fputs(keep ? "\n" : "\r\033[K", stderr);
	fflush(stderr);
	pg->shown = 0;
}
