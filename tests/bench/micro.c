/*
 * micro.c: feedtrace benchmark program (built by scripts/bench.sh into
 * build/bench/micro, not part of the test suite).
 *
 *   micro MODE N FILE [REPS]
 *
 * Times REPS blocks of N calls each with clock_gettime(CLOCK_MONOTONIC)
 * and prints "MODE ns_per_call direct_ns_per_call": the median block of
 * calls made by name (what a tracer interposes on) and, interleaved with
 * them, the median block of the same calls made without any
 * wrapper (never interposed: below). The same binary runs with and
 * without a tracer; the driver subtracts. The in-process difference
 * "by name - direct" of a traced run is the hook alone, in the same thread
 * state and at the same moment (low noise); untraced it is ~0.
 * MICRO_IDLE_THREAD=1 starts one idle thread first (a multi-threaded
 * baseline: glibc takes faster paths while a process has one thread).
 *
 *   pread1     pread(fd, buf, 1, 0)               on a cached file
 *   read4k     read(fd, buf, 4096), lseek(fd,0) once per 64 reads
 *              (cached 256 KiB file: the lseek is amortised and untraced)
 *   openclose  open(FILE, O_RDONLY) + close       (per pair)
 *   mutex      pthread_mutex_lock + unlock, one thread (per pair)
 *   contended  2 threads hammer one mutex; ns per acquisition
 *              (wall time of the block / acquisitions by both threads)
 *   storm      N reads of 4 KiB through FILE (lseek back at EOF), once;
 *              prints elapsed ns per read, then the CPU ns per read of the
 *              reading thread and of all other threads (a tracer's flusher)
 *              during the loop (trace-size and RSS runs)
 *   clock      two TSC reads around 40 dependent multiply-adds (what every
 *              traced call pays for its start and end time), against the
 *              same loop without them: the clock's floor under any hook on
 *              this machine (x86 only)
 *   floor_pread1, floor_read4k, floor_openclose, floor_mutex
 *              the minimal recorder around the same call as pread1, read4k,
 *              openclose, mutex (issue 20's floor): TSC, the call through
 *              libc's own pointer, TSC, one 32-byte store into a 1 MiB ring
 *              (per call: two records per open+close pair; one per lock
 *              pair, around the lock, as a lock tracer times the
 *              acquisition); against the bare calls through the same
 *              pointers. floor - direct is what any timing recorder must
 *              add to these calls here. floor is floor_pread1 (old name)
 *   mixed      N iterations of: open one of 16 files, reads of varied sizes,
 *              close; a second thread takes a shared mutex so that some
 *              locks wait (trace-size run); prints ns per iteration
 *   stat1      stat(FILE) (a dataset scan's lookup); direct: the system
 *              call glibc's stat makes (newfstatat)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

static char buf[1 << 16];

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* keep the compiler from dropping or merging calls */
static volatile long sink;

/* the calls, by name (interposable) or from libc.so.6 directly */
struct fns {
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*read)(int, void *, size_t);
	int (*open)(const char *, int, ...);
	int (*close)(int);
	int (*lock)(pthread_mutex_t *);
	int (*unlock)(pthread_mutex_t *);
};
static struct fns direct;

/* The system calls themselves (syscall(2), never interposed): what a
 * read, open or close costs with no wrapper at all. glibc's own wrappers
 * add the cancellation switch once a process has a second thread (a
 * tracer's flusher), which is no part of a hook's cost. */
static ssize_t sys_pread(int fd, void *b, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, b, n, off);
}

static ssize_t sys_read(int fd, void *b, size_t n)
{
	return syscall(SYS_read, fd, b, n);
}

static int sys_open(const char *path, int flags, ...)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, 0);
}

static int sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static void resolve(void)
{
	direct.pread = sys_pread;
	direct.read = sys_read;
	direct.open = sys_open;
	direct.close = sys_close;
	void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
	if (!libc) {
		fprintf(stderr, "micro: libc.so.6 not found: %s\n", dlerror());
		exit(1);
	}
	void *p;
#define GET(field, sym) do {                                                   \
		if ((p = dlsym(libc, sym)) == NULL) {                          \
			fprintf(stderr, "micro: no %s in libc.so.6\n", sym);   \
			exit(1);                                               \
		}                                                              \
		memcpy(&direct.field, &p, sizeof p);                           \
	} while (0)
	GET(lock, "pthread_mutex_lock");
	GET(unlock, "pthread_mutex_unlock");
#undef GET
}

/*
 * Each block exists twice: calling by name through the PLT (what LD_PRELOAD,
 * ltrace and uftrace intercept) and through the libc pointers above. A
 * function pointer taken by name would bypass the PLT, so the by-name
 * variant really calls by name.
 */
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;

#define DEF_BLOCKS(sfx, PREAD, READ, OPEN, CLOSE, LOCK, UNLOCK)                \
static double block_pread1_##sfx(int fd, long n)                               \
{                                                                              \
	uint64_t t0 = now_ns();                                                \
	for (long i = 0; i < n; i++)                                           \
		sink += PREAD(fd, buf, 1, 0);                                  \
	return (double)(now_ns() - t0) / (double)n;                            \
}                                                                              \
static double block_read4k_##sfx(int fd, long n)                               \
{                                                                              \
	uint64_t t0 = now_ns();                                                \
	for (long i = 0; i < n; i++) {                                         \
		if ((i & 63) == 0)                                             \
			lseek(fd, 0, SEEK_SET);                                \
		sink += READ(fd, buf, 4096);                                   \
	}                                                                      \
	return (double)(now_ns() - t0) / (double)n;                            \
}                                                                              \
static double block_openclose_##sfx(const char *path, long n)                  \
{                                                                              \
	uint64_t t0 = now_ns();                                                \
	for (long i = 0; i < n; i++) {                                         \
		int fd = OPEN(path, O_RDONLY);                                 \
		if (fd < 0)                                                    \
			die("open");                                           \
		CLOSE(fd);                                                     \
	}                                                                      \
	return (double)(now_ns() - t0) / (double)n;                            \
}                                                                              \
static double block_mutex_##sfx(long n)                                        \
{                                                                              \
	uint64_t t0 = now_ns();                                                \
	for (long i = 0; i < n; i++) {                                         \
		LOCK(&mtx);                                                    \
		sink++;                                                        \
		UNLOCK(&mtx);                                                  \
	}                                                                      \
	return (double)(now_ns() - t0) / (double)n;                            \
}

DEF_BLOCKS(name, pread, read, open, close, pthread_mutex_lock, pthread_mutex_unlock)
DEF_BLOCKS(direct, direct.pread, direct.read, direct.open, direct.close,
	   direct.lock, direct.unlock)

static __attribute__((noinline)) double block_stat1(const char *path, long n, int by_name)
{
	struct stat st;
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		int r = by_name ? stat(path, &st)
				: (int)syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0);
		if (r != 0)
			die("stat");
		sink += st.st_size;
	}
	return (double)(now_ns() - t0) / (double)n;
}

static void *hammer(void *arg)
{
	long n = *(long *)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&mtx);
		sink++;
		pthread_mutex_unlock(&mtx);
	}
	return NULL;
}

static double block_contended(long n)
{
	pthread_t th[2];
	uint64_t t0 = now_ns();
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, hammer, &n) != 0)
			die("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return (double)(now_ns() - t0) / (double)(2 * n);
}

static uint64_t cpu_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU of the calling thread and of the other threads (a tracer's flusher)
 * during the storm, per read: printed after the wall figure. */
static double storm_self_cpu, storm_other_cpu;

static double run_storm(const char *path, long n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open");
	uint64_t c0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		ssize_t r = read(fd, buf, 4096);
		if (r < 4096) {
			lseek(fd, 0, SEEK_SET);
			r = read(fd, buf, 4096);
		}
		sink += r;
	}
	double ns = (double)(now_ns() - t0) / (double)n;
	uint64_t c1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), p1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	storm_self_cpu = (double)(c1 - c0) / (double)n;
	storm_other_cpu = ((double)(p1 - p0) - (double)(c1 - c0)) / (double)n;
	close(fd);
	return ns;
}

static volatile int mixed_stop;

static void *mixed_locker(void *arg)
{
	(void)arg;
	while (!mixed_stop) {
		pthread_mutex_lock(&mtx);
		for (int i = 0; i < 2000; i++)
			sink++;
		pthread_mutex_unlock(&mtx);
		usleep(50);
	}
	return NULL;
}

static double run_mixed(const char *dir, long n)
{
	static const int sizes[] = {1, 17, 512, 4096, 100, 8192, 65536, 3000};
	char path[4200];
	pthread_t th;
	if (pthread_create(&th, NULL, mixed_locker, NULL) != 0)
		die("pthread_create");
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/f%02ld", dir, i & 15);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			die("open");
		int nread = 1 + (int)(i % 7);
		for (int k = 0; k < nread; k++) {
			size_t sz = (size_t)sizes[(i + k) & 7];
			if (k & 1)
				sink += pread(fd, buf, sz, (off_t)(k * 512));
			else
				sink += read(fd, buf, sz);
		}
		close(fd);
		if ((i & 7) == 0) {
			pthread_mutex_lock(&mtx);
			sink++;
			pthread_mutex_unlock(&mtx);
		}
	}
	double ns = (double)(now_ns() - t0) / (double)n;
	mixed_stop = 1;
	pthread_join(th, NULL);
	return ns;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* "by name": a pair of TSC reads around a little dependent work (as a
 * hook reads it around the real call); "direct": the same work without
 * them. Back-to-back reads would understate: a read waits for the work
 * before it on some machines. */
static __attribute__((noinline)) uint64_t clock_work(uint64_t x)
{
	for (int i = 0; i < 40; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

static double block_clock(long n, int with_clock)
{
	static uint64_t x = 1;
	uint64_t t0 = now_ns();
#ifdef HAVE_TSC
	if (with_clock) {
		for (long i = 0; i < n; i++) {
			uint64_t a = __rdtsc();
			x = clock_work(x);
			uint64_t b = __rdtsc();
			sink += (long)(b - a);
		}
	} else {
		for (long i = 0; i < n; i++) {
			x = clock_work(x);
			sink += (long)x;
		}
	}
#else
	(void)with_clock;
#endif
	return (double)(now_ns() - t0) / (double)n;
}

/* the minimal recorder (mode floor) */
struct min_rec { uint64_t ts; uint32_t dur; uint32_t fd; uint64_t req; int64_t ret; };
static struct min_rec min_ring[1 << 15];

static unsigned min_at;

static inline void min_store(uint64_t a, uint64_t b, int fd, uint64_t req, int64_t ret)
{
	struct min_rec *m = &min_ring[min_at++ & ((1 << 15) - 1)];
	m->ts = a;
	m->dur = (uint32_t)(b - a);
	m->fd = (uint32_t)fd;
	m->req = req;
	m->ret = ret;
}

#ifdef HAVE_TSC
#define TSC() __rdtsc()
#else
#define TSC() 0ull             /* no floor without a TSC: the bare calls */
#endif

static double block_floor_pread1(int fd, long n)
{
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		uint64_t a = TSC();
		ssize_t r = direct.pread(fd, buf, 1, 0);
		uint64_t b = TSC();
		min_store(a, b, fd, 1, r);
		sink += r;
	}
	return (double)(now_ns() - t0) / (double)n;
}

static double block_floor_read4k(int fd, long n)
{
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if ((i & 63) == 0)
			lseek(fd, 0, SEEK_SET);
		uint64_t a = TSC();
		ssize_t r = direct.read(fd, buf, 4096);
		uint64_t b = TSC();
		min_store(a, b, fd, 4096, r);
		sink += r;
	}
	return (double)(now_ns() - t0) / (double)n;
}

static double block_floor_openclose(const char *path, long n)
{
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		uint64_t a = TSC();
		int fd = direct.open(path, O_RDONLY);
		uint64_t b = TSC();
		min_store(a, b, fd, (uint64_t)(uintptr_t)path, fd);
		if (fd < 0)
			die("open");
		a = TSC();
		int r = direct.close(fd);
		b = TSC();
		min_store(a, b, fd, 0, r);
	}
	return (double)(now_ns() - t0) / (double)n;
}

static double block_floor_mutex(long n)
{
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		uint64_t a = TSC();
		int r = direct.lock(&mtx);
		uint64_t b = TSC();
		min_store(a, b, 0, (uint64_t)(uintptr_t)&mtx, r);
		sink++;
		direct.unlock(&mtx);
	}
	return (double)(now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: micro MODE N FILE [REPS]\n");
		return 2;
	}
	const char *idle = getenv("MICRO_IDLE_THREAD");
	if (idle && strcmp(idle, "1") == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, idle_thread, NULL) != 0)
			die("pthread_create");
		pthread_detach(th);
	}
	const char *mode = argv[1];
	long n = atol(argv[2]);
	const char *path = argv[3];
	int reps = argc > 4 ? atoi(argv[4]) : 5;
	if (n <= 0 || reps <= 0 || reps > 64)
		return 2;

	if (strcmp(mode, "storm") == 0) {
		double ns = run_storm(path, n);
		printf("%s %.2f nan %.2f %.2f\n", mode, ns, storm_self_cpu, storm_other_cpu);
		return 0;
	}
	if (strcmp(mode, "mixed") == 0) {
		printf("%s %.2f\n", mode, run_mixed(path, n));
		return 0;
	}

	int fd = -1;
	if (strcmp(mode, "floor") == 0)
		mode = "floor_pread1";
	if (strcmp(mode, "pread1") == 0 || strcmp(mode, "read4k") == 0 ||
	    strcmp(mode, "floor_pread1") == 0 || strcmp(mode, "floor_read4k") == 0) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			die("open");
	}
	double res[64], dres[64];
	int ab = strcmp(mode, "contended") != 0;
	resolve();
	/* one untimed warm-up round (page cache, first touch of the ring) */
	for (int r = -1; r < reps; r++) {
		for (int k = 0; k < (ab ? 2 : 1); k++) {
			/* alternate which variant goes first */
			int d = ab && ((r & 1) ^ k);
			double v;
			if (strcmp(mode, "pread1") == 0)
				v = d ? block_pread1_direct(fd, n) : block_pread1_name(fd, n);
			else if (strcmp(mode, "floor_pread1") == 0)
				v = d ? block_pread1_direct(fd, n) : block_floor_pread1(fd, n);
			else if (strcmp(mode, "floor_read4k") == 0)
				v = d ? block_read4k_direct(fd, n) : block_floor_read4k(fd, n);
			else if (strcmp(mode, "floor_openclose") == 0)
				v = d ? block_openclose_direct(path, n) : block_floor_openclose(path, n);
			else if (strcmp(mode, "floor_mutex") == 0)
				v = d ? block_mutex_direct(n) : block_floor_mutex(n);
			else if (strcmp(mode, "read4k") == 0)
				v = d ? block_read4k_direct(fd, n) : block_read4k_name(fd, n);
			else if (strcmp(mode, "openclose") == 0)
				v = d ? block_openclose_direct(path, n) : block_openclose_name(path, n);
			else if (strcmp(mode, "mutex") == 0)
				v = d ? block_mutex_direct(n) : block_mutex_name(n);
			else if (strcmp(mode, "stat1") == 0)
				v = block_stat1(path, n, !d);
			else if (strcmp(mode, "contended") == 0)
				v = block_contended(n);
			else if (strcmp(mode, "clock") == 0)
				v = block_clock(n, !d);
			else {
				fprintf(stderr, "micro: unknown mode %s\n", mode);
				return 2;
			}
			if (r >= 0)
				*(d ? &dres[r] : &res[r]) = v;
		}
	}
	qsort(res, (size_t)reps, sizeof res[0], cmp_double);
	if (ab) {
		qsort(dres, (size_t)reps, sizeof dres[0], cmp_double);
		printf("%s %.2f %.2f\n", mode, res[reps / 2], dres[reps / 2]);
	} else {
		printf("%s %.2f nan\n", mode, res[reps / 2]);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
