/* dlreal.h: libc's own dlsym and dlvsym (libfeedtrace/dlreal.c) */
#ifndef FT_DLREAL_H
#define FT_DLREAL_H

#define FT_HIDDEN __attribute__((visibility("hidden")))
/* A sanitizer's runtime calls dlsym (ours) while it initialises, before
 * its shadow memory exists: the boot path must not be instrumented. */
#define FT_NO_SAN __attribute__((no_sanitize("address", "thread", "undefined")))

extern void *(*ft_real_dlsym)(void *, const char *);
extern void *(*ft_real_dlvsym)(void *, const char *, const char *);
/* finds both, once; the dlsym stubs (dl.c) call it before the first
 * pass-through, from assembler */
void ft_dl_boot(void);
#endif
