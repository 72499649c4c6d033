/*
 * solo.h: the I/O wrappers' own system call while the program has one
 * thread of its own. glibc makes read, pread, open and close cancellation
 * points only once a process has a second thread: each call then turns
 * asynchronous cancellation on and off (two atomic updates; +44 to +60 ns
 * a cached read on this project's machine, docs/BENCHMARKS.md). The
 * tracer's flusher thread would put every single-threaded program on that
 * path. So while the program itself has made no thread (ft_solo, owned by
 * shim/solo.c), these wrappers make the system call glibc would make for
 * it untraced, and otherwise call the real function. ft_solo is also off
 * when the real function is not libc's own (another interposer is next).
 * x86-64 only: elsewhere ft_solo stays 0.
 */
#ifndef FT_SOLO_H
#define FT_SOLO_H

#include <errno.h>
#include <stdatomic.h>

#include "../libfeedtrace/recorder.h"

extern _Atomic int ft_solo;

void ft_solo_init(void);        /* the constructor, before the flusher starts */
void ft_solo_end(void);         /* the program makes (or may make) a thread */

#if defined(__x86_64__)
/* One system call with up to four arguments; errno set as glibc sets it. */
static inline long ft_sys4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	if (ft_unlikely((unsigned long)r > -4096ul)) {
		errno = (int)-r;
		r = -1;
	}
	return r;
}

/* real_call, or while ft_solo the system call nr with a..d */
#define FT_SOLO_OR(real_call, nr, a, b, c, d)                                   \
	(atomic_load_explicit(&ft_solo, memory_order_relaxed)                  \
		 ? ft_sys4((nr), (long)(a), (long)(b), (long)(c), (long)(d))    \
		 : (real_call))
#else
#define FT_SOLO_OR(real_call, nr, a, b, c, d) (real_call)
#endif

#endif
