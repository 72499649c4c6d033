/*
 * wait.c: waits for another thread or process (poll, select, epoll and
 * recv in their forms) and the calls that make pipes, sockets, eventfds
 * and epoll descriptors, so that each descriptor's kind is known (the fd
 * table, recorder.h). A multiplexed wait is recorded only when it blocked:
 * a first try with no timeout found nothing ready, and the caller asked to
 * wait. Never allocates, never locks, keeps errno.
 */
#include <errno.h>
#include <string.h>

#include "real.h"
#include "shape.h"
#include "../libfeedtrace/internal.h"

/* every non-static function below is a wrapper: exported */
#pragma GCC visibility push(default)

static inline int32_t res32(long r, int e)
{
	if (r < 0)
		return -e;
	return r > 0x7fffffff ? 0x7fffffff : (int32_t)r;
}

static inline uint32_t sat32(uint64_t v)
{
	return v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

static inline int ms_of_timespec(const struct timespec *ts)
{
	if (!ts)
		return -1;
	uint64_t ms = (uint64_t)ts->tv_sec * 1000u + (uint64_t)ts->tv_nsec / 1000000u;
	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/* a wait record (events.def): ret, nfds, timeout, kinds, fd0..fd7 */
static void record_wait(struct ft_thread *t, unsigned kind, uint64_t t0, long r, int e,
			unsigned nfds, int timeout_ms, const int *fds, int nf)
{
	uint64_t t1 = ft_now();
	uint32_t kinds = 0, f[8];
	for (int i = 0; i < 8; i++) {
		f[i] = i < nf ? (uint32_t)fds[i] : (uint32_t)-1;
		if (i < nf && fds[i] >= 0)
			kinds |= (ft_fd_kind(fds[i]) & 0xfu) << (4 * i);
	}
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_rec_header(rec, kind, 2, t0, t1);
	rec->p.u32[0] = (uint32_t)res32(r, e);
	rec->p.u32[1] = nfds;
	rec->p.u32[2] = (uint32_t)timeout_ms;
	rec->p.u32[3] = kinds;
	uint32_t *ext = (uint32_t *)ft_slot(t, 1);
	for (int i = 0; i < 8; i++)
		ext[i] = f[i];
	ft_commit(t, 2);
}

/* ---- poll, ppoll (and their fortified forms) ---- */

static int poll_fds(const struct pollfd *fds, nfds_t n, int out[8])
{
	int k = 0;
	for (nfds_t i = 0; i < n && k < 8; i++)
		out[k++] = fds[i].fd;
	return k;
}

/* chk: the fortified entry (fdslen checked by libc) */
static int poll_common(struct pollfd *fds, nfds_t n, int timeout, int chk, size_t fdslen)
{
#define POLL_CALL(tmo) (chk ? REAL(__poll_chk)(fds, n, (tmo), fdslen) \
			    : REAL(poll)(fds, n, (tmo)))
	/* no descriptors: a sleep, not a wait for anyone */
	struct ft_thread *t = timeout && n ? ft_enter(FT_G_LOCK) : NULL;
	if (!t)
		return POLL_CALL(timeout);
	int r = POLL_CALL(0);
	if (r != 0)
		return r;
	uint64_t t0 = ft_now();
	r = POLL_CALL(timeout);
	int e = errno;
	int f[8];
	record_wait(t, FT_EV_POLL, t0, r, e, (unsigned)n, timeout, f, poll_fds(fds, n, f));
	errno = e;
	return r;
#undef POLL_CALL
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	return poll_common(fds, n, timeout, 0, 0);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	return poll_common(fds, n, timeout, 1, fdslen);
}

static int ppoll_common(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
			const sigset_t *mask, int chk, size_t fdslen)
{
#define PPOLL_CALL(tm) (chk ? REAL(__ppoll_chk)(fds, n, (tm), mask, fdslen) \
			    : REAL(ppoll)(fds, n, (tm), mask))
	int zero = tmo && !tmo->tv_sec && !tmo->tv_nsec;
	struct ft_thread *t = !zero && n ? ft_enter(FT_G_LOCK) : NULL;
	if (!t)
		return PPOLL_CALL(tmo);
	const struct timespec now = { 0, 0 };
	int r = PPOLL_CALL(&now);
	if (r != 0)
		return r;
	uint64_t t0 = ft_now();
	r = PPOLL_CALL(tmo);
	int e = errno;
	int f[8];
	record_wait(t, FT_EV_PPOLL, t0, r, e, (unsigned)n, ms_of_timespec(tmo), f,
		    poll_fds(fds, n, f));
	errno = e;
	return r;
#undef PPOLL_CALL
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
	return ppoll_common(fds, n, tmo, mask, 0, 0);
}

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		const sigset_t *mask, size_t fdslen)
{
	return ppoll_common(fds, n, tmo, mask, 1, fdslen);
}

/* ---- select, pselect: the first try works on copies of the sets ---- */

struct sets {
	fd_set r, w, x;
	int f[8], nf;
	unsigned count;                  /* descriptors in any set */
};

static void sets_take(struct sets *s, int n, const fd_set *rd, const fd_set *wr,
		      const fd_set *ex)
{
	if (rd) s->r = *rd;
	if (wr) s->w = *wr;
	if (ex) s->x = *ex;
	s->nf = 0;
	s->count = 0;
	for (int fd = 0; fd < n; fd++)
		if ((rd && FD_ISSET(fd, rd)) || (wr && FD_ISSET(fd, wr)) ||
		    (ex && FD_ISSET(fd, ex))) {
			if (s->nf < 8)
				s->f[s->nf++] = fd;
			s->count++;
		}
}

static void sets_give(const struct sets *s, fd_set *rd, fd_set *wr, fd_set *ex)
{
	if (rd) *rd = s->r;
	if (wr) *wr = s->w;
	if (ex) *ex = s->x;
}

int select(int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	int zero = tv && !tv->tv_sec && !tv->tv_usec;
	struct ft_thread *t = !zero && n > 0 && n <= FD_SETSIZE ? ft_enter(FT_G_LOCK) : NULL;
	if (!t)
		return REAL(select)(n, rd, wr, ex, tv);
	struct sets s;
	sets_take(&s, n, rd, wr, ex);
	if (!s.count)                    /* a sleep */
		return REAL(select)(n, rd, wr, ex, tv);
	struct timeval now = { 0, 0 };
	int r = REAL(select)(n, rd ? &s.r : NULL, wr ? &s.w : NULL, ex ? &s.x : NULL, &now);
	if (r != 0) {
		if (r > 0)
			sets_give(&s, rd, wr, ex);
		return r;
	}
	int ms = tv ? (int)((uint64_t)tv->tv_sec * 1000u + (uint64_t)tv->tv_usec / 1000u) : -1;
	uint64_t t0 = ft_now();
	r = REAL(select)(n, rd, wr, ex, tv);
	int e = errno;
	record_wait(t, FT_EV_SELECT, t0, r, e, s.count, ms, s.f, s.nf);
	errno = e;
	return r;
}

int pselect(int n, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *ts,
	    const sigset_t *mask)
{
	int zero = ts && !ts->tv_sec && !ts->tv_nsec;
	struct ft_thread *t = !zero && n > 0 && n <= FD_SETSIZE ? ft_enter(FT_G_LOCK) : NULL;
	if (!t)
		return REAL(pselect)(n, rd, wr, ex, ts, mask);
	struct sets s;
	sets_take(&s, n, rd, wr, ex);
	if (!s.count)
		return REAL(pselect)(n, rd, wr, ex, ts, mask);
	const struct timespec now = { 0, 0 };
	int r = REAL(pselect)(n, rd ? &s.r : NULL, wr ? &s.w : NULL, ex ? &s.x : NULL,
			      &now, mask);
	if (r != 0) {
		if (r > 0)
			sets_give(&s, rd, wr, ex);
		return r;
	}
	uint64_t t0 = ft_now();
	r = REAL(pselect)(n, rd, wr, ex, ts, mask);
	int e = errno;
	record_wait(t, FT_EV_PSELECT, t0, r, e, s.count, ms_of_timespec(ts), s.f, s.nf);
	errno = e;
	return r;
}

/* ---- epoll: the record names the epoll descriptor ---- */

int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	struct ft_thread *t = timeout ? ft_enter(FT_G_LOCK) : NULL;
	if (!t)
		return REAL(epoll_wait)(epfd, ev, max, timeout);
	int r = REAL(epoll_wait)(epfd, ev, max, 0);
	if (r != 0)
		return r;
	uint64_t t0 = ft_now();
	r = REAL(epoll_wait)(epfd, ev, max, timeout);
	int e = errno;
	record_wait(t, FT_EV_EPOLL_WAIT, t0, r, e, 1, timeout, &epfd, 1);
	errno = e;
	return r;
}

int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask)
{
	struct ft_thread *t = timeout ? ft_enter(FT_G_LOCK) : NULL;
	if (!t)
		return REAL(epoll_pwait)(epfd, ev, max, timeout, mask);
	int r = REAL(epoll_pwait)(epfd, ev, max, 0, mask);
	if (r != 0)
		return r;
	uint64_t t0 = ft_now();
	r = REAL(epoll_pwait)(epfd, ev, max, timeout, mask);
	int e = errno;
	record_wait(t, FT_EV_EPOLL_PWAIT, t0, r, e, 1, timeout, &epfd, 1);
	errno = e;
	return r;
}

int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *tmo,
		 const sigset_t *mask)
{
	int zero = tmo && !tmo->tv_sec && !tmo->tv_nsec;
	struct ft_thread *t = !zero ? ft_enter(FT_G_LOCK) : NULL;
	if (!t)
		return REAL(epoll_pwait2)(epfd, ev, max, tmo, mask);
	const struct timespec now = { 0, 0 };
	int r = REAL(epoll_pwait2)(epfd, ev, max, &now, mask);
	if (r != 0)
		return r;
	uint64_t t0 = ft_now();
	r = REAL(epoll_pwait2)(epfd, ev, max, tmo, mask);
	int e = errno;
	record_wait(t, FT_EV_EPOLL_PWAIT2, t0, r, e, 1, ms_of_timespec(tmo), &epfd, 1);
	errno = e;
	return r;
}

/* ---- recv: every call that returned data, an end or an error; a
 * nonblocking call that found nothing (EAGAIN) waited for no one ---- */

static inline void record_recv(struct ft_thread *t, unsigned kind, uint64_t t0, int fd,
			       uint64_t req, long r, int e)
{
	if (r < 0 && (e == EAGAIN || e == EWOULDBLOCK))
		return;
	uint64_t t1 = ft_now();
	ft_record4(t, kind, t0, t1, (uint32_t)fd, ft_fd_kind(fd), sat32(req),
		   (uint32_t)res32(r, e));
}

/* recv, recvfrom and their checked variants: n bytes asked for */
#define RECV_N(name, kind, params, args)                                \
	TIMED(ssize_t, name, FT_G_LOCK, params, args, record_recv(t, kind, t0, fd, n, r, e))

RECV_N(recv, FT_EV_RECV, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
RECV_N(__recv_chk, FT_EV_RECV, (int fd, void *buf, size_t n, size_t buflen, int flags),
       (fd, buf, n, buflen, flags))
RECV_N(recvfrom, FT_EV_RECVFROM,
       (int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *addrlen),
       (fd, buf, n, flags, addr, addrlen))
RECV_N(__recvfrom_chk, FT_EV_RECVFROM,
       (int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr,
	socklen_t *addrlen),
       (fd, buf, n, buflen, flags, addr, addrlen))

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct ft_thread *t = ft_enter(FT_G_LOCK);
	if (!t)
		return REAL(recvmsg)(fd, msg, flags);
	uint64_t t0 = ft_now();
	ssize_t r = REAL(recvmsg)(fd, msg, flags);
	int e = errno;
	uint64_t req = 0;
	/* a header the kernel could not read is not read here either */
	if (r >= 0)
		for (size_t i = 0; i < msg->msg_iovlen && i < 1024; i++)
			req += msg->msg_iov[i].iov_len;
	record_recv(t, FT_EV_RECVMSG, t0, fd, req, r, e);
	errno = e;
	return r;
}

/* ---- descriptors made: their kind is kept in the fd table, and an
 * FD_NEW record says so. A vfork child shares the parent's table: it
 * changes nothing (as dup does not, io.c). ---- */

static void made(struct ft_thread *t, uint64_t t0, int fd0, int fd1, unsigned kind, int r, int e)
{
	if (r >= 0) {
		ft_fd_set(fd0, 0, kind);
		if (fd1 >= 0)
			ft_fd_set(fd1, 0, kind);
	}
	uint64_t t1 = ft_now();
	if (ft_recording(FT_G_IO))      /* else outside a capture window: kinds kept only */
		ft_record4(t, FT_EV_FD_NEW, t0, t1, (uint32_t)(r >= 0 ? fd0 : -1),
			   (uint32_t)(r >= 0 ? fd1 : -1), kind, (uint32_t)(r < 0 ? -e : 0));
}

/* two new descriptors of a known kind, in fds[0] and fds[1] */
#define MADE_TWO(name, kind, params, args, fds)                         \
	TIMED(int, name, FT_G_FD, params, args,                          \
	      made(t, t0, r == 0 ? fds[0] : -1, r == 0 ? fds[1] : -1, kind, r, e))

MADE_TWO(pipe, FT_FDK_PIPE, (int fds[2]), (fds), fds)
MADE_TWO(pipe2, FT_FDK_PIPE, (int fds[2], int flags), (fds, flags), fds)
MADE_TWO(socketpair, FT_FDK_SOCKET, (int domain, int type, int proto, int sv[2]),
	 (domain, type, proto, sv), sv)

/* one new descriptor of a known kind: fd is the call's result */
#define MADE_ONE(kind, call)                                   \
	do {                                                   \
		struct ft_thread *t = ft_enter(FT_G_FD);       \
		if (!t)                                        \
			return call;                           \
		uint64_t t0 = ft_now();                        \
		int made_fd = call;                            \
		int e = errno;                                 \
		made(t, t0, made_fd, -1, kind, made_fd, e);    \
		errno = e;                                     \
		return made_fd;                                \
	} while (0)

int socket(int domain, int type, int proto)
{
	MADE_ONE(FT_FDK_SOCKET, REAL(socket)(domain, type, proto));
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	MADE_ONE(FT_FDK_SOCKET, REAL(accept)(fd, addr, len));
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	MADE_ONE(FT_FDK_SOCKET, REAL(accept4)(fd, addr, len, flags));
}

int eventfd(unsigned int count, int flags)
{
	MADE_ONE(FT_FDK_EVENTFD, REAL(eventfd)(count, flags));
}

int epoll_create(int size)
{
	MADE_ONE(FT_FDK_EPOLL, REAL(epoll_create)(size));
}

int epoll_create1(int flags)
{
	MADE_ONE(FT_FDK_EPOLL, REAL(epoll_create1)(flags));
}
