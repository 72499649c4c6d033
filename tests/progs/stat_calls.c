/*
 * stat_calls.c: a path's metadata looked up through every entry point of
 * the stat family (tests/traced/test_stat.py).
 *   stat_calls DIR N   DIR holds f0..f(N-1) and link (a symlink to f0),
 *                      not missing. The main thread calls stat on each
 *                      f<i>, then once each: stat64 f0, stat missing,
 *                      stat of an unreadable address (EFAULT), lstat and
 *                      lstat64 link, fstatat (DIR's fd, "f1", 0),
 *                      fstatat64 (DIR's fd, "link", AT_SYMLINK_NOFOLLOW),
 *                      fstatat (f2's fd, "", AT_EMPTY_PATH), statx f0 and
 *                      statx (f2's fd, "", AT_EMPTY_PATH), and glibc's
 *                      forms before 2.33: __xstat f0, __xstat64 f0,
 *                      __lxstat link, __lxstat64 link, __fxstatat (DIR's
 *                      fd, "f1", 0), __fxstatat64 (DIR's fd, "link",
 *                      AT_SYMLINK_NOFOLLOW); a second thread calls stat on
 *                      each f<i>; a forked child calls lstat on link N
 *                      times. Prints each call's result, errno and size,
 *                      and the thread's and the child's sums.
 * Built -g -O2 as users build.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* glibc's exports before 2.33, which no header declares any more */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dir, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dir, const char *path, struct stat64 *st, int flags);
#define STAT_VER 1      /* _STAT_VER_LINUX on x86_64 */

static const char *dir;
static int n;

/* one call: its result, errno's name when it failed, the size it read */
#define SHOW(name, call, size)                                                  \
	do {                                                                    \
		int r_ = (call);                                                \
		int e_ = errno;                                                 \
		printf("%s %d %s %lld\n", name, r_, r_ ? strerror(e_) : "ok",  \
		       r_ ? -1 : (long long)(size));                            \
	} while (0)

static char *file(const char *name)
{
	static char buf[8][4096];
	static int next;
	char *p = buf[next++ % 8];
	snprintf(p, sizeof buf[0], "%s/%s", dir, name);
	return p;
}

static long long sum_stat(void)
{
	long long sum = 0;
	char name[32];
	struct stat st;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "f%d", i);
		if (stat(file(name), &st) == 0)
			sum += st.st_size;
	}
	return sum;
}

static void *thread_main(void *arg)
{
	*(long long *)arg = sum_stat();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	dir = argv[1];
	n = atoi(argv[2]);
	struct stat st;
	struct stat64 st64;
	struct statx sx;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	int f2 = open(file("f2"), O_RDONLY);
	if (dfd < 0 || f2 < 0)
		return 3;

	printf("stat sum %lld\n", sum_stat());
	SHOW("stat64", stat64(file("f0"), &st64), st64.st_size);
	SHOW("stat-missing", stat(file("missing"), &st), st.st_size);
	SHOW("stat-efault", stat((const char *)1, &st), 0);
	SHOW("lstat", lstat(file("link"), &st), st.st_size);
	SHOW("lstat64", lstat64(file("link"), &st64), st64.st_size);
	SHOW("fstatat", fstatat(dfd, "f1", &st, 0), st.st_size);
	SHOW("fstatat64", fstatat64(dfd, "link", &st64, AT_SYMLINK_NOFOLLOW), st64.st_size);
	SHOW("fstatat-empty", fstatat(f2, "", &st, AT_EMPTY_PATH), st.st_size);
	SHOW("statx", statx(AT_FDCWD, file("f0"), 0, STATX_SIZE, &sx), (long long)sx.stx_size);
	SHOW("statx-empty", statx(f2, "", AT_EMPTY_PATH, STATX_SIZE, &sx), (long long)sx.stx_size);
	SHOW("__xstat", __xstat(STAT_VER, file("f0"), &st), st.st_size);
	SHOW("__xstat64", __xstat64(STAT_VER, file("f0"), &st64), st64.st_size);
	SHOW("__lxstat", __lxstat(STAT_VER, file("link"), &st), st.st_size);
	SHOW("__lxstat64", __lxstat64(STAT_VER, file("link"), &st64), st64.st_size);
	SHOW("__fxstatat", __fxstatat(STAT_VER, dfd, "f1", &st, 0), st.st_size);
	SHOW("__fxstatat64", __fxstatat64(STAT_VER, dfd, "link", &st64, AT_SYMLINK_NOFOLLOW),
	     st64.st_size);

	long long tsum = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, &tsum) != 0)
		return 4;
	pthread_join(th, NULL);
	printf("thread sum %lld\n", tsum);

	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		int links = 0;
		for (int i = 0; i < n; i++)
			links += lstat(file("link"), &st) == 0 && S_ISLNK(st.st_mode);
		_exit(links == n ? 0 : 1);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) != child)
		return 5;
	printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
