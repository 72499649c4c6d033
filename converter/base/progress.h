/*
 * progress.h: a progress line on stderr (progress.c), only when stderr is
 * a terminal and not --quiet: "\r" + the text, at most every 0.25 s (every
 * call when force); ft_progress_end leaves the last line (keep) or clears
 * it. The commands make one (cmd_report.c, cmd_convert.c); report_model.c and
 * convert.c write it as they go.
 */
#ifndef FT_PROGRESS_H
#define FT_PROGRESS_H

#include <time.h>

struct ft_progress {
	int on, shown;
	struct timespec last;
};
void ft_progress_init(struct ft_progress *pg, int quiet);
void ft_progress_line(struct ft_progress *pg, int force, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ft_progress_end(struct ft_progress *pg, int keep);

#endif
