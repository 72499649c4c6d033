/* pywalk.h: the calling thread's Python frames, read without the GIL (pywalk.c) */
#ifndef FT_PYWALK_H
#define FT_PYWALK_H
#include <stddef.h>

/* Finds CPython in the program and its layout, once: 1 when frames can be
 * read; 0 when not (no CPython yet, or one older than 3.9); -1 when this
 * CPython's layout was refused (one line said why): no Python sites at
 * all. Never from a hook's hot path (a failed dlsym allocates). */
int ft_pywalk_init(void);
/* "file:line in function" of the innermost `frames` frames, ';'-separated,
 * into text (NUL-terminated); its length, 0 if the thread runs no Python. */
size_t ft_pywalk(char *text, size_t cap, int frames);
#endif
