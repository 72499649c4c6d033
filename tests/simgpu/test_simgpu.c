/* test_simgpu.c - cmocka tests of simgpu's time model (non-blocking launches,
 * syncs that wait N*D, queries, copies, pageable vs pinned, events, legacy vs
 * per-thread default stream) and a replay of libcudart 13's 440 cuGetProcAddress_v2
 * requests. Usage: test_simgpu [cudart13-getprocaddress.tsv] (or SIMGPU_TSV=...) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "simgpu.h"

#define US 1000ull
#define MS 1000000ull
/* step_fwd in the image below: long enough that 100 launches (which must
 * not block) finish well inside half of their GPU time even when this
 * process loses the CPU for a scheduler tick or two on a loaded machine */
#define KERNEL_NS (2 * MS)
#define SLACK (150 * MS)      /* generous upper bound on scheduling noise */

static const char *tsv_path;
static CUmodule g_mod;
static CUfunction g_step, g_tiny, g_over;

static const char image[] = "kernel step_fwd 2000000\n"
                            "kernel tiny 2000\n"
                            "kernel overridden 1\n"
                            "kernel untimed\n";

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

#define OK(call) assert_int_equal((call), CUDA_SUCCESS)

static void launch_n(CUfunction f, CUstream s, int n)
{
    for (int i = 0; i < n; i++)
        OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
}

static int setup(void **state)
{
    (void)state;
    CUcontext ctx;
    CUdevice dev;
    setenv("SIMGPU_KERNEL_NS", "overridden=20000", 1);
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx) || cuModuleLoadData(&g_mod, image) ||
        cuModuleGetFunction(&g_step, g_mod, "step_fwd") ||
        cuModuleGetFunction(&g_tiny, g_mod, "tiny") ||
        cuModuleGetFunction(&g_over, g_mod, "overridden"))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cuModuleUnload(g_mod) || cuDevicePrimaryCtxRelease_v2(0);
}

static void test_device(void **state)
{
    (void)state;
    int v = 0;
    char name[64];
    size_t mem = 0;
    const char *s = NULL;
    OK(cuDriverGetVersion(&v));
    assert_int_equal(v, 13000);
    OK(cuDeviceGetCount(&v));
    assert_int_equal(v, 1);
    OK(cuDeviceGetName(name, sizeof name, 0));
    assert_string_equal(name, "feedtrace simulated GPU");
    OK(cuDeviceGetAttribute(&v, 75, 0)); /* compute capability major */
    assert_int_equal(v, 8);
    OK(cuDeviceGetAttribute(&v, 16, 0)); /* multiprocessors */
    assert_true(v > 0);
    OK(cuDeviceTotalMem_v2(&mem, 0));
    assert_true(mem >= (1ull << 30));
    assert_int_equal(cuDeviceGet((CUdevice *)&v, 1), CUDA_ERROR_INVALID_DEVICE);
    OK(cuGetErrorName(CUDA_ERROR_NOT_READY, &s));
    assert_string_equal(s, "CUDA_ERROR_NOT_READY");
    OK(cuGetErrorString(CUDA_ERROR_NOT_SUPPORTED, &s));
    assert_non_null(s);
    assert_int_equal(cuGetExportTable((const void **)&s, NULL), CUDA_ERROR_NOT_SUPPORTED);
    CUcontext cur;
    CUdevice d = -1;
    OK(cuCtxGetCurrent(&cur));
    assert_non_null(cur);
    OK(cuCtxGetDevice(&d));
    assert_int_equal(d, 0);
}

static void test_launch_does_not_block_and_sync_waits(void **state)
{
    (void)state;
    enum { N = 100 };
    CUstream s;
    OK(cuStreamCreate(&s, 0));
    unsigned long long t0 = now_ns();
    launch_n(g_step, s, N);
    unsigned long long t_launch = now_ns() - t0;
    assert_true(t_launch < N * KERNEL_NS / 2);
    OK(cuStreamSynchronize(s));
    unsigned long long t = now_ns() - t0;
    assert_true(t >= N * KERNEL_NS);
    assert_true(t < N * KERNEL_NS + SLACK);
    /* SIMGPU_KERNEL_NS overrides the image's 1 ns */
    t0 = now_ns();
    launch_n(g_over, s, 10);
    OK(cuCtxSynchronize());
    assert_true(now_ns() - t0 >= 10 * 20 * US);
    OK(cuStreamDestroy_v2(s));
}

static void test_query_not_ready_then_success(void **state)
{
    (void)state;
    CUstream s;
    CUevent e;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, 0));
    launch_n(g_step, s, 4);
    OK(cuEventRecord(e, s));
    assert_int_equal(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    OK(cuEventSynchronize(e));
    OK(cuEventQuery(e));
    OK(cuStreamQuery(s));
    OK(cuEventDestroy_v2(e));
    OK(cuStreamDestroy_v2(s));
}

static void test_copies_move_bytes(void **state)
{
    (void)state;
    enum { N = 1024 };
    unsigned int in[N], out[N];
    CUdeviceptr a, b;
    for (int i = 0; i < N; i++)
        in[i] = (unsigned)i * 2654435761u;
    OK(cuMemAlloc_v2(&a, sizeof in));
    OK(cuMemAlloc_v2(&b, sizeof in));
    OK(cuMemcpyHtoD_v2(a, in, sizeof in));
    OK(cuMemcpyPeer(b, NULL, a, NULL, sizeof in));
    memset(out, 0, sizeof out);
    OK(cuMemcpyDtoH_v2(out, b, sizeof out));
    assert_memory_equal(in, out, sizeof in);
    OK(cuMemsetD8_v2(b, 0, sizeof in));
    OK(cuMemcpyDtoD_v2(b, a, sizeof in));
    memset(out, 0, sizeof out);
    OK(cuMemcpyDtoH_v2(out, b, sizeof out));
    assert_memory_equal(in, out, sizeof in);
    OK(cuMemsetD32_v2(a, 0xdeadbeef, N));
    OK(cuMemcpy((CUdeviceptr)(uintptr_t)out, a, sizeof out));
    for (int i = 0; i < N; i++)
        assert_int_equal(out[i], 0xdeadbeef);
    OK(cuMemsetD8Async(b, 7, 16, NULL));
    OK(cuMemcpyDtoHAsync_v2(out, b, 16, NULL));   /* pageable: done on return */
    assert_int_equal(((unsigned char *)out)[15], 7);
    assert_int_equal(cuMemcpyDtoH_v2(out, (CUdeviceptr)(uintptr_t)in, 4), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree_v2(a));
    OK(cuMemFree_v2(b));
}

/* an async copy from pageable memory waits for the busy stream, from pinned or
 * registered memory it returns at once */
static void test_pageable_async_blocks_pinned_does_not(void **state)
{
    (void)state;
    enum { N = 100 };
    static char registered[4096]; /* static: a failed run must not leave a stack range registered */
    char pageable[4096];
    void *pinned;
    CUdeviceptr d;
    CUstream s;
    OK(cuStreamCreate(&s, 0));
    OK(cuMemAlloc_v2(&d, 4096));
    OK(cuMemAllocHost_v2(&pinned, 4096));
    OK(cuMemHostRegister_v2(registered, sizeof registered, 0));

    unsigned long long t0 = now_ns();
    launch_n(g_step, s, N);
    OK(cuMemcpyHtoDAsync_v2(d, pinned, 4096, s));
    OK(cuMemcpyHtoDAsync_v2(d, registered, 4096, s));
    assert_true(now_ns() - t0 < N * KERNEL_NS / 2);
    OK(cuMemcpyHtoDAsync_v2(d, pageable, 4096, s));
    assert_true(now_ns() - t0 >= N * KERNEL_NS);
    OK(cuStreamQuery(s));

    t0 = now_ns();
    launch_n(g_step, s, N);
    OK(cuMemcpyDtoHAsync_v2_ptsz(pinned, d, 4096, s));
    assert_true(now_ns() - t0 < N * KERNEL_NS / 2);
    OK(cuMemcpyDtoH_v2(pageable, d, 16));          /* legacy sync copy waits too */
    assert_true(now_ns() - t0 >= N * KERNEL_NS);

    t0 = now_ns();
    launch_n(g_step, s, N);
    OK(cuMemFreeHost(pinned));                     /* frees wait for the context */
    assert_true(now_ns() - t0 >= N * KERNEL_NS);
    OK(cuMemHostUnregister(registered));
    OK(cuMemFree_v2(d));
    OK(cuStreamDestroy_v2(s));
}

static void test_stream_wait_event(void **state)
{
    (void)state;
    enum { N = 100 };
    CUstream s1, s2;
    CUevent e, start, end;
    OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, 0));
    OK(cuEventCreate(&start, 0));
    OK(cuEventCreate(&end, 0));
    unsigned long long t0 = now_ns();
    OK(cuEventRecord(start, s1));
    launch_n(g_step, s1, N);
    OK(cuEventRecord(e, s1));
    OK(cuStreamWaitEvent(s2, e, 0));
    launch_n(g_tiny, s2, 1);
    OK(cuEventRecord(end, s2));
    OK(cuEventSynchronize(end));
    assert_true(now_ns() - t0 >= N * KERNEL_NS + 2 * US);
    float ms = 0;
    OK(cuEventElapsedTime_v2(&ms, start, end));
    assert_true(ms >= (N * KERNEL_NS + 2 * US) / 1e6 - 1e-3);
    assert_true(ms < (N * KERNEL_NS + SLACK) / 1e6);

    /* without the wait, s2 runs alongside s1 */
    launch_n(g_step, s1, N);
    t0 = now_ns();
    launch_n(g_tiny, s2, 1);
    OK(cuStreamSynchronize(s2));
    assert_true(now_ns() - t0 < N * KERNEL_NS / 2);
    assert_int_equal(cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
    OK(cuCtxSynchronize());
    OK(cuEventDestroy_v2(e));
    OK(cuEventDestroy_v2(start));
    OK(cuEventDestroy_v2(end));
    OK(cuStreamDestroy_v2(s1));
    OK(cuStreamDestroy_v2(s2));
}

static void *other_thread_ptds(void *arg)
{
    CUcontext ctx = arg;
    if (cuCtxSetCurrent(ctx))
        return NULL;
    for (int i = 0; i < 100; i++)
        cuLaunchKernel_ptsz(g_step, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    return arg;
}

static void test_legacy_vs_per_thread_default_stream(void **state)
{
    (void)state;
    enum { N = 100 };
    CUstream blocking, nonblocking;
    CUevent e;
    CUcontext ctx;
    OK(cuCtxGetCurrent(&ctx));
    OK(cuStreamCreate(&blocking, 0));
    OK(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));

    /* legacy stream (handle 0) waits for the blocking stream */
    unsigned long long t0 = now_ns();
    launch_n(g_step, blocking, N);
    launch_n(g_tiny, NULL, 1);
    OK(cuEventRecord(e, NULL));
    OK(cuEventSynchronize(e));
    assert_true(now_ns() - t0 >= N * KERNEL_NS);

    /* ... and blocking streams wait for the legacy stream */
    t0 = now_ns();
    launch_n(g_step, CU_STREAM_LEGACY, N);
    launch_n(g_tiny, blocking, 1);
    OK(cuStreamSynchronize(blocking));
    assert_true(now_ns() - t0 >= N * KERNEL_NS);

    /* not for a non-blocking stream */
    launch_n(g_step, nonblocking, N);
    t0 = now_ns();
    launch_n(g_tiny, NULL, 1);
    OK(cuStreamSynchronize(NULL));
    assert_true(now_ns() - t0 < N * KERNEL_NS / 2);
    OK(cuCtxSynchronize());

    /* the per-thread default stream (0 via _ptsz) is not ordered after a user stream */
    launch_n(g_step, blocking, N);
    t0 = now_ns();
    OK(cuLaunchKernel_ptsz(g_tiny, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    OK(cuEventRecord_ptsz(e, NULL));
    OK(cuEventSynchronize(e));
    assert_true(now_ns() - t0 < N * KERNEL_NS / 2);
    OK(cuCtxSynchronize());

    /* each host thread has its own per-thread default stream */
    pthread_t th;
    void *ret;
    assert_int_equal(pthread_create(&th, NULL, other_thread_ptds, ctx), 0);
    assert_int_equal(pthread_join(th, &ret), 0);
    assert_ptr_equal(ret, ctx);
    t0 = now_ns();
    OK(cuLaunchKernel(g_tiny, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_PER_THREAD, NULL, NULL));
    OK(cuStreamSynchronize_ptsz(NULL));
    assert_true(now_ns() - t0 < N * KERNEL_NS / 2);
    t0 = now_ns();
    OK(cuCtxSynchronize());                 /* but the context waits for all of them */
    assert_true(now_ns() - t0 >= N * KERNEL_NS / 2);

    OK(cuEventDestroy_v2(e));
    OK(cuStreamDestroy_v2(blocking));
    OK(cuStreamDestroy_v2(nonblocking));
}

struct hostfn_probe {
    pthread_t caller;
    unsigned long long when;
    int ran_elsewhere;
};

static void hostfn(void *arg)
{
    struct hostfn_probe *p = arg;
    p->when = now_ns();
    p->ran_elsewhere = !pthread_equal(p->caller, pthread_self());
}

static void test_host_func_graph_and_library(void **state)
{
    (void)state;
    CUstream s;
    OK(cuStreamCreate(&s, 0));
    struct hostfn_probe probe = { pthread_self(), 0, 0 };
    unsigned long long t0 = now_ns();
    launch_n(g_step, s, 10);
    OK(cuLaunchHostFunc(s, hostfn, &probe));
    OK(cuStreamSynchronize(s));
    assert_true(probe.when >= t0 + 10 * KERNEL_NS);
    assert_true(probe.ran_elsewhere);

    CUgraph g;
    CUgraphExec ge;
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphInstantiateWithFlags(&ge, g, 0));
    t0 = now_ns();
    for (int i = 0; i < 3; i++)
        OK(cuGraphLaunch(ge, s));
    OK(cuStreamSynchronize(s));
    assert_true(now_ns() - t0 >= 3 * 100 * US);
    OK(cuGraphExecDestroy(ge));
    OK(cuGraphDestroy(g));

    /* libcudart's path: library + kernel handle launched as a function */
    CUlibrary lib;
    CUkernel k;
    CUfunction f;
    const char *name;
    OK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, "step_fwd"));
    OK(cuKernelGetName(&name, k));
    assert_string_equal(name, "step_fwd");
    OK(cuKernelGetFunction(&f, k));
    OK(cuFuncGetName(&name, f));
    assert_string_equal(name, "step_fwd");
    assert_int_equal(cuLibraryGetKernel(&k, lib, "nope"), CUDA_ERROR_NOT_FOUND);
    t0 = now_ns();
    OK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    OK(cuLibraryUnload(lib));              /* waits for the launch */
    assert_true(now_ns() - t0 >= KERNEL_NS);
    OK(cuStreamDestroy_v2(s));
}

static void test_pointer_attributes(void **state)
{
    (void)state;
    CUdeviceptr d, m;
    void *h;
    char pageable[64];
    unsigned int type = 0, managed = 0;
    OK(cuMemAlloc_v2(&d, 256));
    OK(cuMemAllocManaged(&m, 256, 1));
    OK(cuMemHostAlloc(&h, 256, 0));
    OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 8));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)h));
    assert_int_equal(type, CU_MEMORYTYPE_HOST);
    OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
    assert_int_equal(managed, 1);
    OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
    assert_int_equal(managed, 0);
    assert_int_equal(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                           (CUdeviceptr)(uintptr_t)pageable),
                     CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree_v2(d));
    OK(cuMemFree_v2(m));
    OK(cuMemFreeHost(h));
}

/* ---- cuGetProcAddress_v2, reached the way libcudart reaches it ---- */

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, unsigned long long, int *);

static void expect_symbol(void *lib, gpa_v2_fn gpa, const char *name, int version, int flags,
                          const char *symbol)
{
    void *pfn = NULL;
    int status = -1;
    OK(gpa(name, &pfn, version, (unsigned long long)flags, &status));
    assert_int_equal(status, CU_GET_PROC_ADDRESS_SUCCESS);
    void *want = dlsym(lib, symbol);
    assert_non_null(want);
    if (pfn != want)
        fail_msg("%s@%d flags %d: want %s", name, version, flags, symbol);
}

/* "cuFoo" may resolve to cuFoo, cuFoo_vN, and with flag 2 also their _ptsz/_ptds */
static int variant_of(const char *name, const char *sym, int flags)
{
    size_t n = strlen(name);
    if (strncmp(sym, name, n) != 0)
        return 0;
    sym += n;
    if (sym[0] == '_' && sym[1] == 'v') {
        sym += 2;
        if (*sym < '0' || *sym > '9')
            return 0;
        while (*sym >= '0' && *sym <= '9')
            sym++;
    }
    if (!*sym)
        return 1;
    return flags == 2 && (!strcmp(sym, "_ptsz") || !strcmp(sym, "_ptds"));
}

static void test_get_proc_address_replay(void **state)
{
    (void)state;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    gpa_v2_fn gpa;
    void *p = dlsym(lib, "cuGetProcAddress_v2");
    assert_non_null(p);
    memcpy(&gpa, &p, sizeof gpa);

    FILE *fp = fopen(tsv_path, "r");
    if (!fp)
        fail_msg("cannot open %s (pass it as argv[1] or SIMGPU_TSV)", tsv_path);
    char line[512];
    int requests = 0, found = 0, per_thread = 0;
    while (fgets(line, sizeof line, fp)) {
        char name[256];
        int version, flags;
        if (line[0] == '#' || sscanf(line, "%255[^\t]\t%d\t%d", name, &version, &flags) != 3)
            continue;
        requests++;
        const char *sym = strcmp(name, "(empty)") ? name : "";
        void *pfn = NULL;
        int status = -1;
        CUresult r = gpa(sym, &pfn, version, (unsigned long long)flags, &status);
        if (!*sym) {   /* the probe: like the real driver, not found */
            assert_int_equal(r, CUDA_ERROR_NOT_FOUND);
            assert_int_equal(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
            assert_null(pfn);
            continue;
        }
        if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !pfn)
            fail_msg("%s@%d flags %d: r=%d status=%d", name, version, flags, r, status);
        Dl_info info;
        if (!dladdr(pfn, &info) || !info.dli_sname || !variant_of(name, info.dli_sname, flags))
            fail_msg("%s@%d flags %d resolved to %s", name, version, flags,
                     info.dli_sname ? info.dli_sname : "?");
        assert_ptr_equal(dlsym(lib, info.dli_sname), pfn);
        per_thread += strstr(info.dli_sname, "_pt") != NULL;
        found++;
    }
    fclose(fp);
    assert_int_equal(requests, 440);
    assert_int_equal(found, 439);
    assert_true(per_thread > 60);

    expect_symbol(lib, gpa, "cuMemcpyDtoH", 3020, 0, "cuMemcpyDtoH_v2");
    expect_symbol(lib, gpa, "cuMemcpyDtoH", 2000, 0, "cuMemcpyDtoH");
    expect_symbol(lib, gpa, "cuMemcpyDtoH", 7000, 2, "cuMemcpyDtoH_v2_ptds");
    expect_symbol(lib, gpa, "cuMemcpyDtoH", 3020, 2, "cuMemcpyDtoH_v2"); /* no ptds yet */
    expect_symbol(lib, gpa, "cuLaunchKernel", 4000, 0, "cuLaunchKernel");
    expect_symbol(lib, gpa, "cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz");
    expect_symbol(lib, gpa, "cuMemcpyHtoDAsync", 7000, 2, "cuMemcpyHtoDAsync_v2_ptsz");
    expect_symbol(lib, gpa, "cuCtxSynchronize", 2000, 0, "cuCtxSynchronize");
    expect_symbol(lib, gpa, "cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2");
    expect_symbol(lib, gpa, "cuCtxCreate", 3020, 0, "cuCtxCreate_v2");
    expect_symbol(lib, gpa, "cuCtxCreate", 13000, 0, "cuCtxCreate_v4");
    expect_symbol(lib, gpa, "cuStreamSynchronize", 7000, 2, "cuStreamSynchronize_ptsz");
    expect_symbol(lib, gpa, "cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    expect_symbol(lib, gpa, "cuGetProcAddress", 11030, 0, "cuGetProcAddress");
    expect_symbol(lib, gpa, "cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
    expect_symbol(lib, gpa, "cuEventElapsedTime", 12080, 0, "cuEventElapsedTime_v2");

    void *pfn = (void *)1;
    int status = -1;
    assert_int_equal(gpa("cuNoSuchThing", &pfn, 13000, 0, &status), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    assert_null(pfn);
    assert_int_equal(gpa("cuMemAllocAsync", &pfn, 11000, 0, &status), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

    /* a stub answers NOT_SUPPORTED; the old cuGetProcAddress agrees with _v2 */
    CUresult (*stub)(void);
    OK(gpa("cuMemcpy2D", &pfn, 3020, 0, &status));
    memcpy(&stub, &pfn, sizeof stub);
    assert_int_equal(stub(), CUDA_ERROR_NOT_SUPPORTED);
    void *v1 = NULL;
    OK(cuGetProcAddress("cuMemcpyDtoHAsync", &v1, 7000, 2));
    assert_ptr_equal(v1, dlsym(lib, "cuMemcpyDtoHAsync_v2_ptsz"));
    dlclose(lib);
}

int main(int argc, char **argv)
{
    tsv_path = argc > 1 ? argv[1] : getenv("SIMGPU_TSV");
    if (!tsv_path)
        tsv_path = "tests/data/cudart13-getprocaddress.tsv";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device),
        cmocka_unit_test(test_launch_does_not_block_and_sync_waits),
        cmocka_unit_test(test_query_not_ready_then_success),
        cmocka_unit_test(test_copies_move_bytes),
        cmocka_unit_test(test_pageable_async_blocks_pinned_does_not),
        cmocka_unit_test(test_stream_wait_event),
        cmocka_unit_test(test_legacy_vs_per_thread_default_stream),
        cmocka_unit_test(test_host_func_graph_and_library),
        cmocka_unit_test(test_pointer_attributes),
        cmocka_unit_test(test_get_proc_address_replay),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
