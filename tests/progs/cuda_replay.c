/*
 * cuda_replay.c: test program for tests/traced/test_cuda.py. Reaches the CUDA
 * driver as libcudart does: dlopen("libcuda.so.1") (not linked with it) and
 * dlsym of cuGetProcAddress_v2. Run traced and untraced; the test compares.
 *
 *   cuda_replay replay TSV   every request of TSV (symbol, version, flags),
 *                            in three passes: P1 through the dlsym'd
 *                            cuGetProcAddress_v2; P2 through the function
 *                            P1 returned for ("cuGetProcAddress", 12000);
 *                            P3 through the one for ("cuGetProcAddress",
 *                            11030) (the v1 signature, no status). One line
 *                            per request: pass, symbol, version, flags,
 *                            result, status, and the returned pointer as
 *                            LIBRARY:SYMBOL+OFFSET (dladdr), or NULL.
 *   cuda_replay calls        resolves a few functions (cuGetProcAddress_v2,
 *                            resolved through itself, as libcudart) and
 *                            calls them; prints each call's result. The
 *                            sequence of wrapped calls is listed in
 *                            tests/traced/test_cuda.py (CALLS).
 *   cuda_replay dlsym        dlsym/dlvsym of non-CUDA names (and unwrapped
 *                            CUDA names) in several handles, each compared
 *                            with libc's own dlsym called directly; prints
 *                            LIBRARY:SYMBOL+OFFSET of each answer.
 *   cuda_replay read FILE    read()s FILE 100 bytes at a time; prints the
 *                            number of reads and bytes.
 *
 * Prints no raw addresses, so that traced and untraced output can be
 * compared (only the library a pointer lies in may differ, for the
 * functions feedtrace wraps).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef CUresult (*gpa2_t)(const char *, void **, int, unsigned long long, int *);
typedef CUresult (*gpa1_t)(const char *, void **, int, unsigned long long);

static void *cuda;

static void die(const char *what)
{
	fprintf(stderr, "cuda_replay: %s\n", what);
	exit(2);
}

/* LIBRARY:SYMBOL+OFFSET of p (LIBRARY: basename of the object file). */
static void describe(char *out, size_t cap, const void *p)
{
	Dl_info info;
	if (!p) {
		snprintf(out, cap, "NULL");
		return;
	}
	if (!dladdr(p, &info) || !info.dli_fname) {
		snprintf(out, cap, "?");
		return;
	}
	const char *base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	if (info.dli_sname)
		snprintf(out, cap, "%s:%s+0x%lx", base, info.dli_sname,
			 (unsigned long)((uintptr_t)p - (uintptr_t)info.dli_saddr));
	else
		snprintf(out, cap, "%s:?+0x%lx", base,
			 (unsigned long)((uintptr_t)p - (uintptr_t)info.dli_fbase));
}

static gpa2_t load_gpa(void)
{
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cuda)
		die(dlerror());
	gpa2_t g = (gpa2_t)dlsym(cuda, "cuGetProcAddress_v2");
	if (!g)
		die("no cuGetProcAddress_v2");
	return g;
}

struct req {
	char sym[128];
	int version;
	unsigned long long flags;
};

static int read_tsv(const char *path, struct req **out)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die("cannot open the TSV");
	char line[512];
	int n = 0, cap = 0;
	struct req *v = NULL;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		struct req r;
		if (sscanf(line, "%127[^\t]\t%d\t%llu", r.sym, &r.version, &r.flags) != 3)
			die("bad TSV line");
		if (strcmp(r.sym, "(empty)") == 0)
			r.sym[0] = 0;
		if (n == cap) {
			cap = cap ? cap * 2 : 512;
			v = realloc(v, (size_t)cap * sizeof *v);
		}
		v[n++] = r;
	}
	fclose(f);
	*out = v;
	return n;
}

static int replay(const char *tsv)
{
	struct req *reqs;
	int n = read_tsv(tsv, &reqs);
	gpa2_t g1 = load_gpa();
	void *p2 = NULL, *p3 = NULL;
	char d[512];
	for (int pass = 1; pass <= 3; pass++) {
		for (int i = 0; i < n; i++) {
			void *fn = (void *)0x1;    /* a failing look-up must set NULL */
			int status = -7;
			CUresult r;
			if (pass == 1)
				r = g1(reqs[i].sym, &fn, reqs[i].version, reqs[i].flags, &status);
			else if (pass == 2)
				r = ((gpa2_t)p2)(reqs[i].sym, &fn, reqs[i].version, reqs[i].flags, &status);
			else
				r = ((gpa1_t)p3)(reqs[i].sym, &fn, reqs[i].version, reqs[i].flags);
			if (fn == (void *)0x1)
				snprintf(d, sizeof d, "UNTOUCHED");
			else
				describe(d, sizeof d, fn);
			printf("P%d\t%s\t%d\t%llu\t%d\t%d\t%s\n", pass, reqs[i].sym[0] ? reqs[i].sym : "(empty)",
			       reqs[i].version, reqs[i].flags, r, status, d);
			if (pass == 1 && r == 0 && strcmp(reqs[i].sym, "cuGetProcAddress") == 0) {
				if (reqs[i].version == 12000)
					p2 = fn;
				else if (reqs[i].version == 11030)
					p3 = fn;
			}
		}
		if (pass == 1 && (!p2 || !p3))
			die("cuGetProcAddress not resolved through itself");
	}
	/* P4: look-ups beyond the TSV, failing ones mostly; each through the
	 * dlsym'd cuGetProcAddress_v2 */
	static const struct req extra[] = {
		{ "cuNoSuchFunction", 13000, 0 },      /* unknown name */
		{ "cuLaunchKernelEx", 11000, 0 },      /* known, version too old */
		{ "cuLaunchKernelEx", 11000, 2 },
		{ "cuMemcpyDtoH", 1000, 0 },           /* older than any variant */
		{ "cuMemcpyDtoH", 2000, 0 },           /* the pre-3.2 32-bit ABI */
		{ "cuMemcpyDtoH", 3020, 2 },           /* flags 2 below the ptds version */
		{ "cuMemcpyDtoH", 99999, 2 },          /* newer than all: the newest */
		{ "cuInit", 2000, 2 },                 /* flags 2, no per-thread variant */
		{ "cuLaunchKernel", 4000, 4 },         /* an invalid flag */
		{ "cuGetProcAddress", 11000, 0 },      /* too old for itself */
	};
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
		void *fn = (void *)0x1;
		int status = -7;
		CUresult r = g1(extra[i].sym, &fn, extra[i].version, extra[i].flags, &status);
		if (fn == (void *)0x1)
			snprintf(d, sizeof d, "UNTOUCHED");
		else
			describe(d, sizeof d, fn);
		printf("P4\t%s\t%d\t%llu\t%d\t%d\t%s\n", extra[i].sym, extra[i].version,
		       extra[i].flags, r, status, d);
	}
	{	/* a NULL pfn: the driver's error, untouched */
		int status = -7;
		CUresult r = g1("cuInit", NULL, 2000, 0, &status);
		printf("P4\tcuInit(NULL pfn)\t2000\t0\t%d\t%d\tNULL\n", r, status);
	}
	return 0;
}

/* ---- calls: a few functions, called through what the driver handed out ---- */

static gpa2_t gpa;

static void *get(const char *sym, int version, unsigned long long flags)
{
	void *fn = NULL;
	int status = 0;
	CUresult r = gpa(sym, &fn, version, flags, &status);
	if (r != 0 || !fn) {
		fprintf(stderr, "cuda_replay: %s@%d/%llu: %d\n", sym, version, flags, r);
		exit(2);
	}
	return fn;
}

#define CALL(label, expr) do { CUresult r_ = (expr); printf("%s ret=%d\n", label, r_); } while (0)

static int calls(void)
{
	gpa2_t g1 = load_gpa();
	void *fn = NULL;
	int status;
	if (g1("cuGetProcAddress", &fn, 12000, 0, &status) != 0 || !fn)
		die("cuGetProcAddress@12000");
	gpa = (gpa2_t)fn;               /* as libcudart: resolved through itself */

	CUresult (*init)(unsigned) = get("cuInit", 2000, 0);
	CUresult (*version)(int *) = get("cuDriverGetVersion", 2020, 0);
	CUresult (*dev_get)(int *, int) = get("cuDeviceGet", 2000, 0);
	CUresult (*retain)(void **, int) = get("cuDevicePrimaryCtxRetain", 7000, 0);
	CUresult (*set_cur)(void *) = get("cuCtxSetCurrent", 4000, 0);
	CUresult (*alloc2)(CUdeviceptr *, size_t) = get("cuMemAlloc", 3020, 0);
	CUresult (*alloc1)(unsigned *, unsigned) = get("cuMemAlloc", 2000, 0);
	CUresult (*htod2)(CUdeviceptr, const void *, size_t) = get("cuMemcpyHtoD", 3020, 0);
	CUresult (*htod2p)(CUdeviceptr, const void *, size_t) = get("cuMemcpyHtoD", 7000, 2);
	CUresult (*htod1)(unsigned, const void *, unsigned) = get("cuMemcpyHtoD", 2000, 0);
	CUresult (*dtoh2)(void *, CUdeviceptr, size_t) = get("cuMemcpyDtoH", 3020, 0);
	CUresult (*dtoh2p)(void *, CUdeviceptr, size_t) = get("cuMemcpyDtoH", 7000, 2);
	CUresult (*dtoh1)(void *, unsigned, unsigned) = get("cuMemcpyDtoH", 2000, 0);
	CUresult (*htod_async_p)(CUdeviceptr, const void *, size_t, void *) =
		get("cuMemcpyHtoDAsync", 7000, 2);
	CUresult (*memset8p)(CUdeviceptr, unsigned char, size_t) = get("cuMemsetD8", 7000, 2);
	CUresult (*ctx_sync1)(void) = get("cuCtxSynchronize", 2000, 0);
	CUresult (*ctx_sync2)(void *) = get("cuCtxSynchronize", 13000, 0);
	CUresult (*stream_sync)(void *) = get("cuStreamSynchronize", 2000, 0);
	CUresult (*stream_sync_p)(void *) = get("cuStreamSynchronize", 7000, 2);
	CUresult (*lib_load)(void **, const void *, void *, void **, unsigned, void *, void **,
			     unsigned) = get("cuLibraryLoadData", 12000, 0);
	CUresult (*lib_kernel)(void **, void *, const char *) = get("cuLibraryGetKernel", 12000, 0);
	CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, void *, void **, void **) = get("cuLaunchKernel", 4000, 0);
	CUresult (*launch_p)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			     unsigned, void *, void **, void **) = get("cuLaunchKernel", 7000, 2);
	CUresult (*free2)(CUdeviceptr) = get("cuMemFree", 3020, 0);

	/* cuDriverGetVersion is not wrapped: the same function as dlsym gives */
	printf("cuDriverGetVersion same as dlsym: %d\n",
	       (void *)version == dlsym(cuda, "cuDriverGetVersion"));
	int v = 0;
	CALL("cuDriverGetVersion", version(&v));
	printf("driver version %d\n", v);

	int dev;
	void *ctx;
	CALL("cuInit", init(0));
	CALL("cuDeviceGet", dev_get(&dev, 0));
	CALL("cuDevicePrimaryCtxRetain", retain(&ctx, dev));
	CALL("cuCtxSetCurrent", set_cur(ctx));

	CUdeviceptr d2 = 0;
	unsigned d1 = 0;
	CALL("cuMemAlloc_v2", alloc2(&d2, 4096));
	CALL("cuMemAlloc", alloc1(&d1, 4096));
	unsigned char out[64], in[64];
	for (int i = 0; i < 64; i++)
		out[i] = (unsigned char)(i * 7 + 1);
	/* each ABI variant moves the bytes (v1: 32-bit pointers and sizes) */
	memset(in, 0, sizeof in);
	CALL("cuMemcpyHtoD_v2", htod2(d2, out, 64));
	CALL("cuMemcpyDtoH_v2", dtoh2(in, d2, 64));
	printf("roundtrip v2 %s\n", memcmp(in, out, 64) == 0 ? "ok" : "BAD");
	memset(in, 0, sizeof in);
	CALL("cuMemcpyHtoD_v2_ptds", htod2p(d2 + 64, out, 64));
	CALL("cuMemcpyDtoH_v2_ptds", dtoh2p(in, d2 + 64, 64));
	printf("roundtrip v2_ptds %s\n", memcmp(in, out, 64) == 0 ? "ok" : "BAD");
	memset(in, 0, sizeof in);
	CALL("cuMemcpyHtoD", htod1(d1, out, 64));
	CALL("cuMemcpyDtoH", dtoh1(in, d1, 64));
	printf("roundtrip v1 %s\n", memcmp(in, out, 64) == 0 ? "ok" : "BAD");

	CALL("cuMemcpyHtoDAsync_v2_ptsz", htod_async_p(d2, out, 64, NULL));  /* pageable */
	CALL("cuMemsetD8_v2_ptds", memset8p(d2, 0x5a, 128));
	CALL("cuMemcpyDtoH_v2", dtoh2(in, d2, 64));
	printf("memset %s\n", in[0] == 0x5a && in[63] == 0x5a ? "ok" : "BAD");

	/* a failing call: an image without any kernel line */
	void *lib = NULL;
	CALL("cuLibraryLoadData(bad image)", lib_load(&lib, "not a module\n", NULL, NULL, 0, NULL, NULL, 0));
	CALL("cuLibraryLoadData", lib_load(&lib, "kernel replay_kernel 1000\n", NULL, NULL, 0, NULL, NULL, 0));
	void *k = NULL;
	CALL("cuLibraryGetKernel", lib_kernel(&k, lib, "replay_kernel"));
	void *args[] = { &d2 };
	CALL("cuLaunchKernel", launch(k, 2, 3, 4, 32, 2, 1, 0, NULL, args, NULL));
	CALL("cuLaunchKernel_ptsz", launch_p(k, 5, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
	CALL("cuStreamSynchronize", stream_sync(NULL));
	CALL("cuStreamSynchronize_ptsz", stream_sync_p(NULL));
	CALL("cuCtxSynchronize", ctx_sync1());
	CALL("cuCtxSynchronize_v2", ctx_sync2(ctx));
	CALL("cuMemFree_v2", free2(d2));
	return 0;
}

/* ---- dlsym: non-CUDA names stay exactly libc's answers ---- */

static int dlsym_check(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!libc)
		die("libc.so.6 not loaded?");
	/* libc's dlsym, found through dlvsym in libc's own handle */
	void *(*libc_dlsym)(void *, const char *) =
		(void *(*)(void *, const char *))dlvsym(libc, "dlsym", "GLIBC_2.34");
	if (!libc_dlsym)
		libc_dlsym = (void *(*)(void *, const char *))dlvsym(libc, "dlsym", "GLIBC_2.2.5");
	char d[512];
	describe(d, sizeof d, (void *)libc_dlsym);
	printf("libc dlsym is %s\n", strncmp(d, "libc.so.6:", 10) == 0 ? "in libc" : d);
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *self = dlopen(NULL, RTLD_NOW);
	void *libm = dlopen("libm.so.6", RTLD_NOW);
	struct {
		const char *name;
		void *h;
	} handles[] = {
		{ "RTLD_DEFAULT", RTLD_DEFAULT }, { "RTLD_NEXT", RTLD_NEXT }, { "self", self },
		{ "libc", libc }, { "libm", libm }, { "libcuda", cuda },
	};
	const char *names[] = { "strlen", "malloc", "printf", "cos", "pthread_create",
				"read", "open", "pthread_mutex_lock", "dlopen",
				"cuDriverGetVersion", "cuInit", "cuGetErrorName",
				"cuDeviceGetName", "no_such_symbol_at_all", "cuNoSuchFunction" };
	int mismatches = 0;
	for (size_t h = 0; h < sizeof handles / sizeof handles[0]; h++) {
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			dlerror();
			void *p = dlsym(handles[h].h, names[i]);
			const char *err = dlerror();
			void *q = libc_dlsym(handles[h].h, names[i]);
			if (p != q)
				mismatches++;
			describe(d, sizeof d, p);
			printf("%s %s %s %s%s\n", handles[h].name, names[i], d,
			       p == q ? "same" : "DIFFERENT", p ? "" : (err ? " error" : " NO-ERROR"));
		}
	}
	/* dlvsym of a versioned libc name */
	void *p = dlvsym(libc, "memcpy", "GLIBC_2.14");
	describe(d, sizeof d, p);
	printf("dlvsym libc memcpy@GLIBC_2.14 %s\n", d);
	printf("mismatches %d\n", mismatches);
	return 0;
}

static int read_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open");
	char buf[100];
	long calls = 0, bytes = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		calls++;
		bytes += r;
	}
	calls++;
	close(fd);
	printf("reads %ld bytes %ld\n", calls, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc == 3 && strcmp(argv[1], "replay") == 0)
		return replay(argv[2]);
	if (argc == 2 && strcmp(argv[1], "calls") == 0)
		return calls();
	if (argc == 2 && strcmp(argv[1], "dlsym") == 0)
		return dlsym_check();
	if (argc == 3 && strcmp(argv[1], "read") == 0)
		return read_file(argv[2]);
	fprintf(stderr, "usage: cuda_replay replay TSV | calls | dlsym | read FILE\n");
	return 2;
}
