/*
 * runq.c: a thread's run-queue delay, the time it spent runnable but
 * waiting for a core: the second field of the kernel's
 * /proc/self/task/TID/schedstat. Read by the flusher (schedstat.c), whose
 * table of descriptors is its own, never by a program thread (the file
 * would take one of the program's descriptors); raw system calls, so the
 * program's own open and read hooks never see them. ft_task_read is that
 * reading, for any of the thread's files (faults.c reads its stat).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runq.h"

int ft_task_read(int32_t tid, const char *file, char *buf, size_t cap)
{
	char path[64] = "/proc/self/task/";
	size_t n = strlen(path), f = strlen(file);
	char digits[12];
	int k = 0;
	uint32_t v = (uint32_t)tid;
	if (cap < 2 || f > sizeof path - n - 12)
		return -1;
	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 11);
	while (k)
		path[n++] = digits[--k];
	path[n++] = '/';
	memcpy(path + n, file, f + 1);
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long got = syscall(SYS_read, (int)fd, buf, cap - 1);
	syscall(SYS_close, (int)fd);
	if (got <= 0)
		return -1;
	buf[got] = 0;
	return (int)got;
}

int ft_sched_wait_ns(int32_t tid, uint64_t *wait_ns)
{
	char buf[96];
	if (ft_task_read(tid, "schedstat", buf, sizeof buf) < 0)
		return -1;
	/* "on_cpu_ns wait_ns timeslices\n": the second number */
	const char *p = buf;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != ' ')
		return -1;
	uint64_t w = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		w = w * 10 + (uint64_t)(*p - '0');
	*wait_ns = w;
	return 0;
}
