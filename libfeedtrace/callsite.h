/* callsite.h: where a wait came from, and what Python calls a thread (callsite.c) */
#ifndef FT_CALLSITE_H
#define FT_CALLSITE_H
#include <stddef.h>
#include <stdint.h>

void ft_callsite_init(void);
uint32_t ft_callsite_native(void);      /* "#S:" return addresses, interned */
uint32_t ft_callsite_python(void);      /* "file:line in function;...", interned */
int ft_callsite_python_on(void);        /* Python sites can be taken in this process */
/* the name of the threading.Thread being started, from pthread_create */
size_t ft_callsite_python_thread(char *out, size_t cap);
#endif
