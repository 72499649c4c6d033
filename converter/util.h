/*
 * util.h: the converter's allocation helpers, one definition each (util.c).
 * Every converter allocation exits with one line when memory runs out: a
 * half-written report helps no one.
 */
#ifndef FT_UTIL_H
#define FT_UTIL_H

#include <stddef.h>

void *ft_xmalloc(size_t n);
void *ft_xcalloc(size_t n, size_t size);
void *ft_xrealloc(void *p, size_t n);
char *ft_xstrdup(const char *s);
/* an array of *cap elements of size bytes grown to twice as many (8 at first) */
void *ft_grow(void *p, int *cap, size_t size);

#endif
