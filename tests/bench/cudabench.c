/*
 * cudabench.c: feedtrace benchmark program for the CUDA driver hooks, run
 * on the simulated driver (build/simgpu/libcuda.so.1, a test double; see
 * tests/simgpu/README.md). Built by scripts/bench.sh into
 * build/bench/cudabench; not part of the test suite.
 *
 *   cudabench MODE DRIVER N [REPS [NEST]]
 *
 * dlopen()s DRIVER (a path to libcuda.so.1), sets up the primary context,
 * and times REPS blocks of N calls (clock_gettime, one untimed warm-up
 * round). Prints
 *
 *   MODE ns_per_call direct_ns_per_call interposed
 *
 * like micro.c: the median block of calls through the pointer the program
 * was handed (what a tracer interposes on) and, interleaved with them, the
 * median block of the same calls through the driver's own function, found
 * in the driver's ELF symbol table (never interposed). "interposed" is 1
 * when the two pointers differ (a tracer handed out its wrapper); 0 in an
 * untraced run. The in-process difference of a traced run is the wrapper
 * alone.
 *
 *   launch  cuLaunchKernel of a 0 ns kernel (1 block of 32 threads) on the
 *           legacy default stream; the pointer from dlsym (Triton, ctypes)
 *   proc    the same through cuGetProcAddress_v2("cuLaunchKernel", 7000,
 *           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM): the function
 *           libcudart, hence PyTorch, calls (cuLaunchKernel_ptsz)
 *   floor_launch, floor_proc
 *           the minimal recorder (issue 20's floor) around the driver's own
 *           function of launch (cuLaunchKernel) and proc
 *           (cuLaunchKernel_ptsz): TSC, the call, TSC, one 32-byte store
 *           into a 1 MiB ring, against the bare call through the same
 *           pointer; "interposed" is 0. floor - direct is what any timing
 *           recorder must add to a launch here
 *   copy    synchronous 4-byte cuMemcpyDtoH_v2 into pageable (malloc)
 *           memory: a hidden sync, where feedtrace captures the call site;
 *           made NEST (default 20) nested function calls below main, so
 *           that the stack is deeper than the default capture depth (16),
 *           as it is under any framework
 *
 * Set SIMGPU_LAUNCH_NS=0 and SIMGPU_COPY_LATENCY_NS=0 so that the
 * simulated driver's own costs do not dominate (the driver still takes its
 * mutex and updates its queues: ~100 ns per call).
 *
 * MICRO_IDLE_THREAD=1 starts one idle thread first (a multi-threaded
 * baseline, as in micro.c: glibc's mutexes, which the simulated driver
 * takes on every call, skip their atomics while a process has one thread).
 * CUDABENCH_NAME_ONLY=1 runs the by-name blocks only (instruction counts).
 */
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;

typedef CUresult (*init_t)(unsigned);
typedef CUresult (*devget_t)(CUdevice *, int);
typedef CUresult (*retain_t)(CUcontext *, CUdevice);
typedef CUresult (*setcur_t)(CUcontext);
typedef CUresult (*modload_t)(CUmodule *, const void *);
typedef CUresult (*getfn_t)(CUfunction *, CUmodule, const char *);
typedef CUresult (*alloc_t)(CUdeviceptr *, size_t);
typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			     unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*dtoh_t)(void *, CUdeviceptr, size_t);
typedef CUresult (*proc_t)(const char *, void **, int, unsigned long long, int *);

static void die(const char *what, long v)
{
	fprintf(stderr, "cudabench: %s (%ld)\n", what, v);
	exit(1);
}

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

/* st_value of a defined dynamic symbol of the ELF file at path (0 if none) */
static uint64_t elf_sym(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		die("cannot open the driver file", 0);
	const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		die("cannot map the driver file", 0);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		die("the driver is not a 64-bit ELF file", 0);
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	uint64_t val = 0;
	for (int i = 0; i < eh->e_shnum && !val; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
		const char *str = (const char *)(m + sh[sh[i].sh_link].sh_offset);
		size_t n = sh[i].sh_size / sizeof *sym;
		for (size_t k = 0; k < n; k++)
			if (sym[k].st_shndx != SHN_UNDEF && strcmp(str + sym[k].st_name, name) == 0) {
				val = sym[k].st_value;
				break;
			}
	}
	munmap((void *)m, (size_t)st.st_size);
	return val;
}

/* the driver's own function: its load address plus st_value */
static void *direct_fn(void *h, const char *path, const char *name)
{
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		die("dlinfo failed", 0);
	uint64_t v = elf_sym(path, name);
	if (!v) {
		fprintf(stderr, "cudabench: no %s in %s\n", name, path);
		exit(1);
	}
	return (void *)(lm->l_addr + v);
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "cudabench: no %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

#define CHECK(call) do { CUresult r_ = (call); if (r_) die(#call, r_); } while (0)

static CUfunction fn;
static CUdeviceptr dptr;
static char *hostbuf;
static volatile long sink;

static double block_launch(launch_t launch, CUstream s, long n)
{
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++)
		sink += launch(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
	return (double)(now_ns() - t0) / (double)n;
}

/* the minimal recorder (floor modes) */
struct min_rec { uint64_t ts; uint32_t dur; uint32_t res; uint64_t fn; uint64_t stream; };
static struct min_rec min_ring[1 << 15];

static double block_floor(launch_t launch, CUstream s, long n)
{
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
		uint64_t a = __rdtsc();
		CUresult r = launch(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
		uint64_t b = __rdtsc();
#else
		uint64_t a = 0, b = 0;
		CUresult r = launch(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
#endif
		struct min_rec *m = &min_ring[i & ((1 << 15) - 1)];
		m->ts = a;
		m->dur = (uint32_t)(b - a);
		m->res = (uint32_t)r;
		m->fn = (uint64_t)(uintptr_t)fn;
		m->stream = (uint64_t)(uintptr_t)s;
		sink += r;
	}
	return (double)(now_ns() - t0) / (double)n;
}

static double block_copy(dtoh_t copy, long n)
{
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++)
		sink += copy(hostbuf, dptr, 4);
	return (double)(now_ns() - t0) / (double)n;
}

struct run {
	int is_copy, is_floor;
	void *by_name, *direct;
	CUstream stream;
	long n;
	int reps;
	double res[64], dres[64];
};

static int name_only;

static void run_blocks(struct run *r)
{
	for (int k = -1; k < r->reps; k++) {
		for (int v = 0; v < 2; v++) {
			int d = (k & 1) ^ v;          /* alternate which variant goes first */
			if (name_only && d) {
				r->dres[k < 0 ? 0 : k] = 0;
				continue;
			}
			void *f = d ? r->direct : r->by_name;
			double x = r->is_copy ? block_copy((dtoh_t)f, r->n)
				 : r->is_floor && !d ? block_floor((launch_t)f, r->stream, r->n)
				 : block_launch((launch_t)f, r->stream, r->n);
			if (k >= 0)
				*(d ? &r->dres[k] : &r->res[k]) = x;
		}
	}
}

/* NEST frames that the compiler can neither inline nor turn into a loop */
__attribute__((noinline)) static void nest(struct run *r, int depth)
{
	if (depth > 0)
		nest(r, depth - 1);
	else
		run_blocks(r);
	__asm__ volatile("" ::: "memory");
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: cudabench launch|proc|copy|floor_launch|floor_proc DRIVER N [REPS [NEST]]\n");
		return 2;
	}
	const char *mode = argv[1], *path = argv[2];
	struct run r;
	memset(&r, 0, sizeof r);
	r.n = atol(argv[3]);
	r.reps = argc > 4 ? atoi(argv[4]) : 5;
	int depth = argc > 5 ? atoi(argv[5]) : 20;
	if (r.n <= 0 || r.reps <= 0 || r.reps > 64 || depth < 0 || depth > 1000)
		return 2;
	const char *e = getenv("MICRO_IDLE_THREAD");
	if (e && strcmp(e, "1") == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, idle_thread, NULL) != 0)
			die("pthread_create", 0);
		pthread_detach(th);
	}
	e = getenv("CUDABENCH_NAME_ONLY");
	name_only = e && strcmp(e, "1") == 0;

	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "cudabench: %s\n", dlerror());
		return 1;
	}
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CHECK(((init_t)sym(h, "cuInit"))(0));
	CHECK(((devget_t)sym(h, "cuDeviceGet"))(&dev, 0));
	CHECK(((retain_t)sym(h, "cuDevicePrimaryCtxRetain"))(&ctx, dev));
	CHECK(((setcur_t)sym(h, "cuCtxSetCurrent"))(ctx));
	CHECK(((modload_t)sym(h, "cuModuleLoadData"))(&mod, "kernel bench_noop 0\n"));
	CHECK(((getfn_t)sym(h, "cuModuleGetFunction"))(&fn, mod, "bench_noop"));

	if (strcmp(mode, "floor_launch") == 0) {
		r.is_floor = 1;
		r.by_name = r.direct = direct_fn(h, path, "cuLaunchKernel");
	} else if (strcmp(mode, "floor_proc") == 0) {
		r.is_floor = 1;
		r.by_name = r.direct = direct_fn(h, path, "cuLaunchKernel_ptsz");
	} else if (strcmp(mode, "launch") == 0) {
		r.by_name = sym(h, "cuLaunchKernel");
		r.direct = direct_fn(h, path, "cuLaunchKernel");
	} else if (strcmp(mode, "proc") == 0) {
		proc_t proc = (proc_t)sym(h, "cuGetProcAddress_v2");
		int status = -1;
		void *p = NULL;
		CHECK(proc("cuLaunchKernel", &p, 7000, 2 /* per-thread default stream */, &status));
		if (!p || status != 0)
			die("cuGetProcAddress_v2(cuLaunchKernel, 7000, 2) failed", status);
		r.by_name = p;
		r.direct = direct_fn(h, path, "cuLaunchKernel_ptsz");
	} else if (strcmp(mode, "copy") == 0) {
		r.is_copy = 1;
		CHECK(((alloc_t)sym(h, "cuMemAlloc_v2"))(&dptr, 4));
		hostbuf = malloc(64);          /* pageable: a synchronous copy waits */
		if (!hostbuf)
			die("malloc", 0);
		r.by_name = sym(h, "cuMemcpyDtoH_v2");
		r.direct = direct_fn(h, path, "cuMemcpyDtoH_v2");
	} else {
		fprintf(stderr, "cudabench: unknown mode %s\n", mode);
		return 2;
	}
	nest(&r, r.is_copy ? depth : 0);
	qsort(r.res, (size_t)r.reps, sizeof r.res[0], cmp_double);
	qsort(r.dres, (size_t)r.reps, sizeof r.dres[0], cmp_double);
	printf("%s %.2f %.2f %d\n", mode, r.res[r.reps / 2], r.dres[r.reps / 2],
	       r.by_name != r.direct);
	return 0;
}
