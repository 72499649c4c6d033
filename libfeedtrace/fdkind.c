/*
 * fdkind.c: what a descriptor of unknown origin is (inherited across exec,
 * opened before the tracer was ready, made by a raw syscall): one fstat,
 * remembered in the fd table until close. Off the common path: descriptors
 * the tracer saw made carry their kind already (recorder.h). Never
 * allocates, never locks.
 */
#include <errno.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

unsigned ft_fd_kind_probe(int fd)
{
	struct stat st;
	int e = errno;                   /* hooks keep the program's errno */
	if ((unsigned)fd >= FT_FD_SLOTS || syscall(SYS_fstat, fd, &st) != 0) {
		errno = e;
		return FT_FDK_UNKNOWN;
	}
	unsigned k;
	switch (st.st_mode & S_IFMT) {
	case S_IFREG: case S_IFBLK: case S_IFDIR: k = FT_FDK_FILE; break;
	case S_IFIFO:  k = FT_FDK_PIPE; break;
	case S_IFSOCK: k = FT_FDK_SOCKET; break;
	default:
		/* eventfd and epoll descriptors are anonymous inodes: no mode
		 * bits of their own; their kind is known only when made */
		k = FT_FDK_OTHER;
		break;
	}
	/* keep whatever another thread stored meanwhile (an open, a close) */
	uint32_t w = atomic_load_explicit(&ft_fd_paths[fd], memory_order_relaxed);
	if (!(w >> FT_FD_KIND_SHIFT))
		atomic_compare_exchange_strong_explicit(&ft_fd_paths[fd], &w,
			w | (uint32_t)k << FT_FD_KIND_SHIFT, memory_order_relaxed, memory_order_relaxed);
	return k;
}
