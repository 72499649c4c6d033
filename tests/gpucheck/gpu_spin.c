/*
 * gpu_spin: a real-GPU check program for the GPU's timing events
 * (scripts/gpu_check.sh). It reaches the driver by dlopen("libcuda.so.1")
 * (no toolkit, no -dev package) and launches a PTX kernel, JIT-compiled by
 * the driver, that spins on %globaltimer for the nanoseconds it is given.
 *
 *   gpu_spin loop N      N launches of a 0 ns kernel, back to back on one
 *                        stream: prints the launching thread's CPU ns and
 *                        wall ns per launch (the tracer's added cost)
 *   gpu_spin drain       5 x (2 ms kernel, host away 10 ms), then a sync
 *   gpu_spin two         3 x (3 ms on stream A, 1 ms on B, host away 10 ms)
 *   gpu_spin graph       a global-mode capture of three 1 ms kernels, then
 *                        3 x (the graph, host away 10 ms): prints the
 *                        capture's result
 *   gpu_spin nosync      20 x (2 ms kernel, host away 5 ms), no sync
 *
 * Prints "expect <shape> <spans> <ms each>" for the script to compare with
 * the measured spans; any driver error: "error <call> <code>", exit 1.
 * A driver that refuses the PTX as CUDA_ERROR_INVALID_IMAGE with
 * GPU_SPIN_SIMGPU=1 set (the simulated driver, for a dry run of the
 * script): one kernel per duration from its text image instead.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef void *CUstream;

static const char ptx[] =
	".version 7.8\n.target sm_80\n.address_size 64\n"
	".visible .entry spin(.param .u64 ns)\n{\n"
	"  .reg .u64 %rd<5>;\n  .reg .pred %p;\n"
	"  ld.param.u64 %rd1, [ns];\n  mov.u64 %rd2, %globaltimer;\n"
	"LOOP:\n  mov.u64 %rd3, %globaltimer;\n  sub.u64 %rd4, %rd3, %rd2;\n"
	"  setp.lt.u64 %p, %rd4, %rd1;\n  @%p bra LOOP;\n  ret;\n}\n";

static void *h, *fn, *sim_fn[4];       /* sim_fn: 0, 1, 2, 3 ms (dry run) */
static CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, CUstream, void **, void **);

static void *sym(const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		printf("error dlsym:%s 0\n", name);
		exit(1);
	}
	return p;
}

static void check(const char *what, CUresult r)
{
	if (r) {
		printf("error %s %d\n", what, r);
		exit(1);
	}
}

static void away_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void spin(unsigned long long ns, CUstream s)
{
	void *args[] = { &ns };
	void *f = sim_fn[0] ? sim_fn[ns / 1000000 < 4 ? ns / 1000000 : 3] : fn;
	check("cuLaunchKernel", launch(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static unsigned long long now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *shape = argc > 1 ? argv[1] : "drain";
	h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("error dlopen:libcuda.so.1 0\n");
		return 1;
	}
	CUresult (*init)(unsigned) = sym("cuInit");
	CUresult (*dev)(int *, int) = sym("cuDeviceGet");
	CUresult (*retain)(void **, int) = sym("cuDevicePrimaryCtxRetain");
	CUresult (*setcur)(void *) = sym("cuCtxSetCurrent");
	CUresult (*load)(void **, const void *) = sym("cuModuleLoadData");
	CUresult (*getfn)(void **, void *, const char *) = sym("cuModuleGetFunction");
	CUresult (*screate)(CUstream *, unsigned) = sym("cuStreamCreate");
	CUresult (*ssync)(CUstream) = sym("cuStreamSynchronize");
	launch = sym("cuLaunchKernel");
	int d;
	void *ctx, *mod;
	check("cuInit", init(0));
	check("cuDeviceGet", dev(&d, 0));
	check("cuDevicePrimaryCtxRetain", retain(&ctx, d));
	check("cuCtxSetCurrent", setcur(ctx));
	CUresult lr = load(&mod, ptx);
	if (lr == 200 && getenv("GPU_SPIN_SIMGPU")) {
		static const char image[] = "kernel s0 0\nkernel s1 1000000\n"
					    "kernel s2 2000000\nkernel s3 3000000\n";
		static const char *const names[4] = { "s0", "s1", "s2", "s3" };
		check("cuModuleLoadData", load(&mod, image));
		for (int i = 0; i < 4; i++)
			check("cuModuleGetFunction", getfn(&sim_fn[i], mod, names[i]));
	} else {
		check("cuModuleLoadData", lr);
		check("cuModuleGetFunction", getfn(&fn, mod, "spin"));
	}
	CUstream a, b;
	check("cuStreamCreate", screate(&a, 1));
	check("cuStreamCreate", screate(&b, 1));
	for (int i = 0; i < 2; i++) {          /* warm-up: the tracer's pool is made */
		spin(10000, a);
		away_ms(30);
	}
	check("cuStreamSynchronize", ssync(a));
	if (strcmp(shape, "loop") == 0) {
		int n = argc > 2 ? atoi(argv[2]) : 100000;
		unsigned long long c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
		for (int i = 0; i < n; i++) {
			spin(0, a);
			if ((i & 1023) == 1023)
				check("cuStreamSynchronize", ssync(a));  /* the queue stays short */
		}
		unsigned long long c1 = now(CLOCK_THREAD_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
		check("cuStreamSynchronize", ssync(a));
		printf("loop %d cpu_ns_per_launch %.1f wall_ns_per_launch %.1f\n", n,
		       (double)(c1 - c0) / n, (double)(w1 - w0) / n);
	} else if (strcmp(shape, "drain") == 0) {
		for (int i = 0; i < 5; i++) {
			spin(2000000, a);
			away_ms(10);
		}
		check("cuStreamSynchronize", ssync(a));
		printf("expect drain 5 2\n");
	} else if (strcmp(shape, "two") == 0) {
		spin(10000, b);
		away_ms(30);
		for (int i = 0; i < 3; i++) {
			spin(3000000, a);
			spin(1000000, b);
			away_ms(10);
		}
		check("cuStreamSynchronize", ssync(a));
		check("cuStreamSynchronize", ssync(b));
		printf("expect two 3 3\nexpect two 3 1\n");
	} else if (strcmp(shape, "graph") == 0) {
		CUresult (*begin)(CUstream, int) = sym("cuStreamBeginCapture_v2");
		CUresult (*end)(CUstream, void **) = sym("cuStreamEndCapture");
		CUresult (*inst)(void **, void *, unsigned long long) = sym("cuGraphInstantiateWithFlags");
		CUresult (*glaunch)(void *, CUstream) = sym("cuGraphLaunch");
		void *g = NULL, *e = NULL;
		check("cuStreamBeginCapture", begin(a, 0));
		for (int i = 0; i < 3; i++)
			spin(1000000, a);
		away_ms(30);
		check("cuStreamEndCapture", end(a, &g));
		check("cuGraphInstantiate", inst(&e, g, 0));
		for (int i = 0; i < 3; i++) {
			check("cuGraphLaunch", glaunch(e, a));
			away_ms(10);
		}
		check("cuStreamSynchronize", ssync(a));
		printf("capture ok\nexpect graph 3 3\n");
	} else if (strcmp(shape, "nosync") == 0) {
		for (int i = 0; i < 20; i++) {
			spin(2000000, a);
			away_ms(5);
		}
		away_ms(30);
		printf("expect nosync 20 2\n");
	}
	return 0;
}
