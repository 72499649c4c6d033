/*
 * log.h: the tracer's only way to speak: one line to stderr with a raw
 * write(2) syscall, formatted on the stack. Never called from a hook's
 * hot path; safe in a signal handler only with a constant message.
 */
#ifndef FT_LOG_H
#define FT_LOG_H

void ft_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ft_log_own_table(void);   /* this thread's stderr is the program's, borrowed */

#endif
