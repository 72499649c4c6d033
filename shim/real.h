/*
 * real.h: pointers to the real libc functions behind the wrappers, typed
 * from libc's own prototypes. REAL(f) resolves every pointer on first use,
 * so a wrapper works even when called before the library's constructor.
 */
#ifndef FT_REAL_H
#define FT_REAL_H

#include <aio.h>
#include <dirent.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <threads.h>
#include <unistd.h>
#include <wchar.h>

/* fortified entry points: declared by glibc only under _FORTIFY_SOURCE */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		const sigset_t *mask, size_t fdslen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *addr, socklen_t *addrlen);
char *__fgets_chk(char *s, size_t size, int n, FILE *f);
char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *f);
size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f);
wchar_t *__fgetws_chk(wchar_t *s, size_t size, int n, FILE *f);
wchar_t *__fgetws_unlocked_chk(wchar_t *s, size_t size, int n, FILE *f);
/* the C99 scanf (what <stdio.h> names fscanf without _GNU_SOURCE) */
int __isoc99_fscanf(FILE *f, const char *fmt, ...);
int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap);
/* liburing's ring set-up (liburing.h is not needed: the ring is opaque) */
struct io_uring;
struct io_uring_params;
int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags);
int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
			       struct io_uring_params *p);
int io_uring_queue_init_mem(unsigned entries, struct io_uring *ring,
			    struct io_uring_params *p, void *buf, size_t buf_size);
int io_uring_setup(unsigned entries, struct io_uring_params *p);
/* the stat family's forms before glibc 2.33, still exported (no header
 * has them since) */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dir, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dir, const char *path, struct stat64 *st, int flags);
/* getc's old name, still exported (no header has it) */
int _IO_getc(FILE *f);
/* what every dynamically linked program's _start calls (no header has it) */
int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
		      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
		      void *stack_end);

/* hidden: internal to the library, never exported (a program's own
 * symbol of the same name must not capture them, nor they the program's) */
#define REAL_FN(name, version) \
	extern __attribute__((visibility("hidden"))) __typeof__(&name) real_##name;
#include "libc.def"
#undef REAL_FN

void ft_real_init(void);
int ft_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

#define REAL(name) (__builtin_expect(real_##name != NULL, 1) ? real_##name \
		    : (ft_real_init(), real_##name))

#endif
