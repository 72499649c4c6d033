/*
 * wait_prog.c: a process that waits for another one, N times, through one
 * mechanism; tests/traced/test_waits.py checks what the tracer recorded.
 *
 *   wait_prog MODE N
 *     poll ppoll select pselect epoll   the parent waits on a pipe, then reads
 *                                       the byte a forked child wrote
 *     read                              the parent blocks in read of the pipe
 *     recvmsg                           the child sends a descriptor over a
 *                                       socketpair (SCM_RIGHTS); the parent
 *                                       blocks in recvmsg
 *     eventfd                           a thread writes an eventfd; the main
 *                                       thread blocks in read of it
 *     ready                             the data is there before each poll:
 *                                       nothing blocks
 *     efault                            open, openat, fopen and readv with an
 *                                       unreadable pointer: prints each errno
 *
 * The writer writes only once the waiter sleeps in the expected system call
 * (/proc/PID/task/TID/syscall names it; a call that did not block is never
 * seen there), so every wait blocks, whatever the machine's load.
 * Prints "MODE ok N" (or the errnos).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* thread tid of pid is asleep ('S' in its stat): a hook's zero-timeout
 * probe of the same system call never sleeps, the wait itself does */
static int asleep(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY);
	ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (k <= 0)
		return 0;
	buf[k] = 0;
	const char *e = strrchr(buf, ')');        /* the name may hold spaces */
	return e && e[1] == ' ' && e[2] == 'S';
}

/* waits until thread tid of pid sleeps in one of the system calls nr */
static void until_in(pid_t pid, pid_t tid, const int *nr, int n)
{
	char path[64], buf[128];
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	for (;;) {
		int fd = open(path, O_RDONLY);
		ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (k > 0) {
			buf[k] = 0;
			int cur = atoi(buf);
			if (buf[0] >= '0' && buf[0] <= '9')
				for (int i = 0; i < n; i++)
					if (cur == nr[i] && asleep(pid, tid))
						return;
		}
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
}

static int syscalls_of(const char *mode, int nr[3])
{
	if (!strcmp(mode, "poll"))
		return nr[0] = SYS_poll, nr[1] = SYS_ppoll, 2;     /* glibc may use ppoll */
	if (!strcmp(mode, "ppoll"))
		return nr[0] = SYS_ppoll, 1;
	if (!strcmp(mode, "select"))
		return nr[0] = SYS_select, nr[1] = SYS_pselect6, 2;
	if (!strcmp(mode, "pselect"))
		return nr[0] = SYS_pselect6, 1;
	if (!strcmp(mode, "epoll"))
		return nr[0] = SYS_epoll_wait, nr[1] = SYS_epoll_pwait, 2;
	if (!strcmp(mode, "recvmsg"))
		return nr[0] = SYS_recvmsg, 1;
	return nr[0] = SYS_read, 1;
}

static void wait_once(const char *mode, int fd, int ep)
{
	if (!strcmp(mode, "poll") || !strcmp(mode, "ready")) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 10000) != 1)
			exit(80);
	} else if (!strcmp(mode, "ppoll")) {
		struct pollfd p = { fd, POLLIN, 0 };
		struct timespec ts = { 10, 0 };
		if (ppoll(&p, 1, &ts, NULL) != 1)
			exit(81);
	} else if (!strcmp(mode, "select")) {
		fd_set r;
		FD_ZERO(&r);
		FD_SET(fd, &r);
		struct timeval tv = { 10, 0 };
		if (select(fd + 1, &r, NULL, NULL, &tv) != 1 || !FD_ISSET(fd, &r))
			exit(82);
	} else if (!strcmp(mode, "pselect")) {
		fd_set r;
		FD_ZERO(&r);
		FD_SET(fd, &r);
		struct timespec ts = { 10, 0 };
		if (pselect(fd + 1, &r, NULL, NULL, &ts, NULL) != 1 || !FD_ISSET(fd, &r))
			exit(83);
	} else if (!strcmp(mode, "epoll")) {
		struct epoll_event ev;
		if (epoll_wait(ep, &ev, 1, 10000) != 1)
			exit(84);
	}
}

static int efault(void)
{
	const char *volatile bad = (const char *)16;
	const struct iovec *volatile badv = (const struct iovec *)16;
	errno = 0;
	int a = open(bad, O_RDONLY) < 0 ? errno : 0;
	errno = 0;
	int b = openat(AT_FDCWD, bad, O_RDONLY) < 0 ? errno : 0;
	errno = 0;
	int c = fopen(bad, "r") ? 0 : errno;
	int fd = open("/dev/zero", O_RDONLY);
	errno = 0;
	int d = readv(fd, badv, 2) < 0 ? errno : 0;
	close(fd);
	printf("efault open=%d openat=%d fopen=%d readv=%d\n", a, b, c, d);
	return 0;
}

static int efd;
static pid_t main_tid;

static void *eventfd_writer(void *arg)
{
	int n = *(int *)arg;
	const int nr[1] = { SYS_read };
	for (int i = 0; i < n; i++) {
		until_in(getpid(), main_tid, nr, 1);
		uint64_t one = 1;
		if (write(efd, &one, sizeof one) != sizeof one)
			exit(85);
		struct timespec ts = { 0, 2000000 };      /* the reader takes it first */
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *mode = argv[1];
	int n = atoi(argv[2]);
	if (!strcmp(mode, "efault"))
		return efault();
	if (!strcmp(mode, "eventfd")) {
		efd = eventfd(0, 0);
		main_tid = (pid_t)syscall(SYS_gettid);
		pthread_t th;
		pthread_create(&th, NULL, eventfd_writer, &n);
		for (int i = 0; i < n; i++) {
			uint64_t v;
			if (read(efd, &v, sizeof v) != sizeof v)
				return 86;
		}
		pthread_join(th, NULL);
		printf("%s ok %d\n", mode, n);
		return 0;
	}
	int sock = !strcmp(mode, "recvmsg");
	int p[2];
	if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p))
		return 3;
	if (!strcmp(mode, "ready")) {
		for (int i = 0; i < n; i++) {
			char c = 'x';
			if (write(p[1], &c, 1) != 1)
				return 4;
			wait_once(mode, p[0], -1);
			if (read(p[0], &c, 1) != 1)
				return 5;
		}
		printf("%s ok %d\n", mode, n);
		return 0;
	}
	pid_t parent = getpid();
	pid_t kid = fork();
	if (kid == 0) {
		int nr[3], k = syscalls_of(mode, nr);
		for (int i = 0; i < n; i++) {
			until_in(parent, parent, nr, k);
			if (sock) {
				int passed = open("/dev/null", O_RDONLY);
				char c = 'x', ctl[CMSG_SPACE(sizeof(int))];
				struct iovec iov = { &c, 1 };
				struct msghdr m = { 0 };
				m.msg_iov = &iov;
				m.msg_iovlen = 1;
				m.msg_control = ctl;
				m.msg_controllen = sizeof ctl;
				struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
				cm->cmsg_level = SOL_SOCKET;
				cm->cmsg_type = SCM_RIGHTS;
				cm->cmsg_len = CMSG_LEN(sizeof(int));
				memcpy(CMSG_DATA(cm), &passed, sizeof(int));
				if (sendmsg(p[1], &m, 0) != 1)
					_exit(6);
				close(passed);
			} else if (write(p[1], "x", 1) != 1) {
				_exit(6);
			}
			/* the parent reads it before the next round's wait */
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
		_exit(0);
	}
	int ep = -1;
	if (!strcmp(mode, "epoll")) {
		ep = epoll_create1(0);
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = p[0] };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) != 0)
			return 7;
	}
	for (int i = 0; i < n; i++) {
		char c;
		if (sock) {
			char ctl[CMSG_SPACE(sizeof(int))];
			struct iovec iov = { &c, 1 };
			struct msghdr m = { 0 };
			m.msg_iov = &iov;
			m.msg_iovlen = 1;
			m.msg_control = ctl;
			m.msg_controllen = sizeof ctl;
			if (recvmsg(p[0], &m, 0) != 1)
				return 8;
			int got;
			memcpy(&got, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof got);
			close(got);
			continue;
		}
		wait_once(mode, p[0], ep);
		if (read(p[0], &c, 1) != 1)
			return 9;
	}
	int st;
	waitpid(kid, &st, 0);
	printf("%s ok %d\n", mode, n);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 10;
}
