/*
 * fault_prog.c: the C side of tests/traced/test_faults.py and tests/stress/.
 * One program, many modes. Every "data read" is open()+read(fd, buf, 100)
 * +close() of a 100-byte file, so the test counts "read of PATH, ret=100"
 * exactly. Modes that report memory print their own peak RSS (maxrss_kb=,
 * from VmHWM), so traced and untraced runs are compared per process.
 *
 *   fault_prog reads FILE N CODE        N data reads, prints "reads=N", exit(CODE)
 *   fault_prog reads_exit FILE N CODE   the same, leaving by _exit(CODE)
 *   fault_prog zero N                   N one-byte reads of /dev/zero
 *   fault_prog lockthreads FILE T R     T threads, all alive at once (barrier),
 *                                       each R x (lock shared mutex, data read,
 *                                       unlock), then waits for all the others
 *                                       (barrier) before it exits
 *   fault_prog churn FILE T B           T short-lived threads, B at a time,
 *                                       one data read each
 *   fault_prog forkstorm FILE N         1 data read, then N forked children
 *                                       (forked in a row, reaped at the end),
 *                                       each 1 data read and _exit(0)
 *   fault_prog forkintern FILE N        N forked children (in a row), while a
 *                                       thread opens new 3000-byte paths that
 *                                       do not exist, without pause; child i
 *                                       opens FILE.child<i> (not there either)
 *                                       and _exit(0)s
 *   fault_prog eintr N                  SIGALRM every 1 ms (setitimer, no
 *                                       SA_RESTART); N one-byte reads of a pipe,
 *                                       a byte written before every 4th read:
 *                                       prints "eintr=E data=D other=O"
 *   fault_prog steady FILE COUNTER US   data reads forever, one every US
 *                                       microseconds (busy pacing); after each,
 *                                       the count is stored in the first 8
 *                                       bytes of COUNTER (a MAP_SHARED file)
 *   fault_prog dlopen LIB FILE N        dlopen(LIB), N data reads through the
 *                                       program's own read(), then 1 through
 *                                       dlsym(LIB, "read")
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef FAULT_STATIC
#include <dlfcn.h>
#endif

static const char *file;

static void data_read(void)
{
	char buf[100];
	int fd = open(file, O_RDONLY);
	if (fd < 0) {
		perror(file);
		_exit(90);
	}
	if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
		fprintf(stderr, "short read of %s\n", file);
		_exit(91);
	}
	close(fd);
}

/* Peak RSS of this image: VmHWM, not getrusage's ru_maxrss, which keeps
 * the peak of the image before exec (the forking python's, for a test).
 * Raw syscalls: the measurement leaves no record in the trace. */
static long maxrss_kb(void)
{
	static char st[8192];
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY);
	if (fd < 0)
		return -1;
	long n = syscall(SYS_read, fd, st, sizeof st - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return -1;
	st[n] = 0;
	const char *h = strstr(st, "VmHWM:");
	return h ? atol(h + 6) : -1;
}

/* ---- lockthreads */
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_alive;
static long rounds;

static void *locker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all_alive);
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&shared);
		data_read();
		pthread_mutex_unlock(&shared);
	}
	pthread_barrier_wait(&all_alive);
	return NULL;
}

static void *one_read(void *arg)
{
	(void)arg;
	data_read();
	return NULL;
}

/* ---- forkintern: a thread that interns a new long path in a loop */
static _Atomic int interning_stop;

static void *new_paths(void *arg)
{
	static char path[3001];
	(void)arg;
	memset(path, 'p', 3000);
	memcpy(path, "/nonexistent-feedtrace/", 23);
	for (unsigned long i = 0; !interning_stop; i++) {
		snprintf(path + 2980, 20, "%019lu", i);
		int fd = open(path, O_RDONLY);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/* ---- forkstorm, forkintern */
static int child_data_read(int i)
{
	(void)i;
	data_read();
	return 0;
}

/* child i opens FILE.child<i>, which is not there */
static int child_open_own(int i)
{
	char path[4096];
	snprintf(path, sizeof path, "%s.child%d", file, i);
	return open(path, O_RDONLY) < 0 && errno == ENOENT ? 0 : 96;
}

/* Forks n children in a row, child i leaving by _exit(child(i)), then
 * reaps them all; prints "children=N bad=B" (B: not exited with 0). */
static int fork_children(int n, int (*child)(int))
{
	pid_t *kids = calloc((size_t)n, sizeof *kids);
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("fork");
			return 95;
		}
		if (kids[i] == 0)
			_exit(child(i));
	}
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int st;
		if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad++;
	}
	printf("children=%d bad=%d\n", n, bad);
	return bad ? 1 : 0;
}

/* ---- eintr */
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IOLBF, 0);

	if ((!strcmp(mode, "reads") || !strcmp(mode, "reads_exit")) && argc == 5) {
		file = argv[2];
		long n = atol(argv[3]);
		for (long i = 0; i < n; i++)
			data_read();
		printf("reads=%ld\n", n);
		if (mode[5])
			_exit(atoi(argv[4]));
		exit(atoi(argv[4]));
	}
	if (!strcmp(mode, "zero") && argc == 3) {
		long n = atol(argv[2]);
		int fd = open("/dev/zero", O_RDONLY);
		char c;
		long ok = 0;
		for (long i = 0; i < n; i++)
			ok += read(fd, &c, 1) == 1;
		printf("zero reads=%ld maxrss_kb=%ld\n", ok, maxrss_kb());
		return 0;
	}
	if (!strcmp(mode, "lockthreads") && argc == 5) {
		file = argv[2];
		int nt = atoi(argv[3]);
		rounds = atol(argv[4]);
		pthread_t *th = calloc((size_t)nt, sizeof *th);
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 << 10);
		pthread_barrier_init(&all_alive, NULL, (unsigned)nt);
		for (int i = 0; i < nt; i++)
			if (pthread_create(&th[i], &at, locker, NULL) != 0) {
				fprintf(stderr, "pthread_create %d failed\n", i);
				return 95;
			}
		for (int i = 0; i < nt; i++)
			pthread_join(th[i], NULL);
		printf("threads=%d reads=%ld maxrss_kb=%ld\n", nt, nt * rounds, maxrss_kb());
		return 0;
	}
	if (!strcmp(mode, "churn") && argc == 5) {
		file = argv[2];
		int nt = atoi(argv[3]), batch = atoi(argv[4]);
		pthread_t th[256];
		if (batch < 1 || batch > 256)
			return 2;
		int done = 0;
		while (done < nt) {
			int k = nt - done < batch ? nt - done : batch;
			for (int i = 0; i < k; i++)
				if (pthread_create(&th[i], NULL, one_read, NULL) != 0)
					return 95;
			for (int i = 0; i < k; i++)
				pthread_join(th[i], NULL);
			done += k;
		}
		printf("threads=%d maxrss_kb=%ld\n", done, maxrss_kb());
		return 0;
	}
	if (!strcmp(mode, "forkstorm") && argc == 4) {
		file = argv[2];
		data_read();
		return fork_children(atoi(argv[3]), child_data_read);
	}
	if (!strcmp(mode, "forkintern") && argc == 4) {
		file = argv[2];
		pthread_t th;
		pthread_create(&th, NULL, new_paths, NULL);
		int r = fork_children(atoi(argv[3]), child_open_own);
		interning_stop = 1;
		pthread_join(th, NULL);
		return r;
	}
	if (!strcmp(mode, "eintr") && argc == 3) {
		long n = atol(argv[2]);
		int p[2];
		if (pipe(p) != 0)
			return 95;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sa.sa_flags = 0;                /* no SA_RESTART: reads fail with EINTR */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		long eintr = 0, data = 0, other = 0;
		char c = 'x';
		for (long i = 0; i < n; i++) {
			if (i % 4 == 0 && write(p[1], &c, 1) != 1)
				return 96;
			ssize_t r = read(p[0], &c, 1);
			if (r == 1)
				data++;
			else if (r < 0 && errno == EINTR)
				eintr++;
			else
				other++;
		}
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
		printf("eintr=%ld data=%ld other=%ld\n", eintr, data, other);
		return 0;
	}
	if (!strcmp(mode, "steady") && argc == 5) {
		file = argv[2];
		int cfd = open(argv[3], O_RDWR);
		if (cfd < 0 || ftruncate(cfd, 4096) != 0)
			return 95;
		volatile uint64_t *done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
		if (done == MAP_FAILED)
			return 95;
		uint64_t pace = (uint64_t)atol(argv[4]) * 1000u;
		uint64_t next = now_ns();
		for (uint64_t i = 1;; i++) {
			data_read();
			__atomic_store_n(done, i, __ATOMIC_RELEASE);
			next += pace;
			while (now_ns() < next)
				;
		}
	}
#ifndef FAULT_STATIC
	if (!strcmp(mode, "dlopen") && argc == 5) {
		file = argv[3];
		long n = atol(argv[4]);
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("dlopen failed: %s\n", dlerror());
			return 0;
		}
		for (long i = 0; i < n; i++)
			data_read();
		ssize_t (*dl_read)(int, void *, size_t) = (ssize_t (*)(int, void *, size_t))dlsym(h, "read");
		char buf[100];
		int fd = open(file, O_RDONLY);
		long r = dl_read ? (long)dl_read(fd, buf, sizeof buf) : -1;
		close(fd);
		printf("dlopen ok reads=%ld dlsym_read=%ld\n", n, r);
		return 0;
	}
#endif
	fprintf(stderr, "fault_prog: bad arguments\n");
	return 2;
}
