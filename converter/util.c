/*
 * util.c: the converter's allocation helpers (util.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void *need(void *p)
{
	if (!p) {
		fprintf(stderr, "feedtrace: out of memory\n");
		exit(2);
	}
	return p;
}

void *ft_xmalloc(size_t n)
{
	return need(malloc(n ? n : 1));
}

void *ft_xcalloc(size_t n, size_t size)
{
	return need(calloc(n ? n : 1, size ? size : 1));
}

void *ft_xrealloc(void *p, size_t n)
{
	return need(realloc(p, n ? n : 1));
}

char *ft_xstrdup(const char *s)
{
	return need(strdup(s));
}

void *ft_grow(void *p, int *cap, size_t size)
{
	*cap = *cap ? *cap * 2 : 8;
	return need(realloc(p, (size_t)*cap * size));
}
