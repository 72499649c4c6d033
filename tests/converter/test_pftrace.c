/* test_pftrace.c - cmocka tests of the Perfetto writer (converter/pftrace).
 * Writes a small trace to argv[1] (2 processes, 3 threads, nested slices,
 * counters, a flow) and an intern-reset trace to argv[2], asserting what the
 * API returns; tests/check_pftrace.py then checks the files themselves. */
#define _POSIX_C_SOURCE 200809L  /* strdup, access */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "pftrace.h"

static const char *trace_path = "pftrace_test.pftrace";
static const char *reset_path = "/dev/null";

/* The main trace, built up by the tests below in order. */
static struct pf_writer *W;
static uint64_t proc_a, proc_b, th_main, th_cuda, th_io;
static uint64_t syncs, gaps, bytes_ctr, util_ctr;

static void test_open_and_tracks(void **state) {
    (void)state;
    static const char *const argv_a[] = { "./gpu-app", "--n", "3", NULL };

    W = pf_open(trace_path);
    assert_non_null(W);
    assert_int_equal(pf_clock_snapshot(W, 1000, 1700000000000000000ULL, 0), 0);

    /* the caller's ids: small numbers, a pf_id, a large one */
    proc_a = 7;
    proc_b = pf_id(1, 200, 0);
    th_main = 1ull << 63;
    th_cuda = pf_id(2, proc_a, 102);
    th_io = pf_id(2, proc_b, 201);
    syncs = 3;
    gaps = 4;
    bytes_ctr = 5;
    util_ctr = 6;
    assert_int_equal(pf_process_track(W, proc_a, 100, "gpu-app", argv_a), 0);
    assert_int_equal(pf_process_track(W, proc_b, 200, "io-worker", NULL), 0);
    assert_int_equal(pf_thread_track(W, th_main, 100, 101, "main"), 0);
    assert_int_equal(pf_thread_track(W, th_cuda, 100, 102, "cuda-worker"), 0);
    assert_int_equal(pf_thread_track(W, th_io, 200, 201, "io"), 0);
    assert_int_equal(pf_child_track(W, syncs, proc_a, "syncs"), 0);
    assert_int_equal(pf_child_track(W, gaps, proc_a, "launch gaps"), 0);
    assert_int_equal(pf_counter_track(W, bytes_ctr, proc_a, "bytes in flight",
                                      PF_UNIT_SIZE_BYTES), 0);
    assert_int_equal(pf_counter_track(W, util_ctr, 0, "gpu util", PF_UNIT_UNSPECIFIED), 0);

    uint64_t all[] = { proc_a, proc_b, th_main, th_cuda, th_io, syncs, gaps,
                       bytes_ctr, util_ctr };
    size_t n = sizeof(all) / sizeof(all[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) assert_true(all[i] != all[j]);
    /* pf_id: the same parts give the same id, any other part another */
    assert_true(pf_id(2, proc_a, 102) == th_cuda);
    assert_true(pf_id(2, proc_a, 103) != th_cuda);
    assert_true(pf_id(3, proc_a, 102) != th_cuda);
    assert_true(pf_id(0, 0, 0) != 0);
}

static void test_nested_slices_and_args(void **state) {
    (void)state;
    struct pf_arg launch1[] = { PF_ARG_STR("kernel", "vecAdd"),
                         PF_ARG_UINT("grid", 128) };
    struct pf_arg launch2[] = { PF_ARG_STR("kernel", "vecAdd"),   /* reused */
                         PF_ARG_UINT("grid", 256) };
    struct pf_arg copy[] = { PF_ARG_UINT("bytes", 4096),
                      PF_ARG_PTR("ptr", 0x7f0000001000ULL) };
    struct pf_arg rd1[] = { PF_ARG_STR("path", "/data/a.bin"), PF_ARG_INT("fd", 3),
                     PF_ARG_BOOL("ok", 1) };
    struct pf_arg wr[] = { PF_ARG_STR("path", "/data/b.bin"),
                    PF_ARG_DOUBLE("delta", 0.5) };
    struct pf_arg rd2[] = { PF_ARG_STR("path", "/data/a.bin"), PF_ARG_INT("fd", -1),
                     PF_ARG_BOOL("ok", 0) };

    /* Thread main: a loop holding two launches and a sync holding a wait. */
    assert_int_equal(pf_slice_begin(W, th_main, 1000, "main loop", NULL, 0), 0);
    assert_int_equal(pf_slice(W, th_main, 3000, 400, "cudaLaunchKernel",
                              launch2, 2), 0);
    assert_int_equal(pf_slice_begin(W, th_main, 4000, "cudaDeviceSynchronize",
                                    NULL, 0), 0);
    assert_int_equal(pf_slice(W, th_main, 4100, 1800, "wait", NULL, 0), 0);
    assert_int_equal(pf_slice_end(W, th_main, 6000), 0);
    assert_int_equal(pf_instant(W, th_main, 7000, "checkpoint", NULL, 0), 0);
    assert_int_equal(pf_slice_end(W, th_main, 10000), 0);
    /* Out of time order on purpose: Perfetto sorts, the file needn't be. */
    assert_int_equal(pf_slice(W, th_main, 2000, 500, "cudaLaunchKernel",
                              launch1, 2), 0);

    assert_int_equal(pf_slice(W, th_cuda, 3500, 400, "memcpy", copy, 2), 0);

    assert_int_equal(pf_slice(W, th_io, 1500, 300, "read", rd1, 3), 0);
    assert_int_equal(pf_slice(W, th_io, 2000, 300, "write", wr, 2), 0);
    assert_int_equal(pf_slice(W, th_io, 2500, 100, "read", rd2, 3), 0);

    assert_int_equal(pf_slice(W, syncs, 4000, 2000, "sync", NULL, 0), 0);
    assert_int_equal(pf_slice(W, gaps, 2500, 500, "gap", NULL, 0), 0);
}

static void test_counters(void **state) {
    (void)state;
    assert_int_equal(pf_counter(W, bytes_ctr, 3500, 0), 0);
    assert_int_equal(pf_counter(W, bytes_ctr, 3600, 4096), 0);
    assert_int_equal(pf_counter(W, bytes_ctr, 3900, 0), 0);
    assert_int_equal(pf_counter_double(W, util_ctr, 2600, 0.75), 0);
}

static void test_flow(void **state) {
    (void)state;
    uint64_t f = pf_id(9, th_main, 11000);
    /* A launch on the main thread flows into its kernel on the worker. */
    assert_int_equal(pf_slice_begin_flow(W, th_main, 11000, "cudaLaunchKernel",
                                         NULL, 0, &f, 1, 0), 0);
    assert_int_equal(pf_slice_end(W, th_main, 11300), 0);
    assert_int_equal(pf_slice_begin_flow(W, th_cuda, 11500, "kernel vecAdd",
                                         NULL, 0, &f, 1, 1), 0);
    assert_int_equal(pf_slice_end(W, th_cuda, 12500), 0);
}

static void test_refused_calls(void **state) {
    (void)state;
    struct pf_arg bad[] = { { .name = "x", .kind = 99 } };
    struct pf_stats before, after;

    pf_get_stats(W, &before);
    assert_int_equal(pf_slice_end(W, th_io, 9000), -1);        /* none open */
    assert_int_equal(pf_counter(W, th_main, 9000, 1), -1);     /* not counter */
    assert_int_equal(pf_slice_begin(W, bytes_ctr, 9000, "x", NULL, 0), -1);
    assert_int_equal(pf_instant(W, util_ctr, 9000, "x", NULL, 0), -1);
    assert_int_equal(pf_slice_begin(W, 0, 9000, "x", NULL, 0), -1);
    assert_int_equal(pf_slice_begin(W, 999, 9000, "x", NULL, 0), -1);
    assert_int_equal(pf_slice_begin(W, th_io, 9000, NULL, NULL, 0), -1);
    assert_int_equal(pf_slice_begin(W, th_io, 9000, "x", bad, 1), -1);
    assert_int_equal(pf_thread_track(W, 20, 100, 0, "tid zero"), -1);
    assert_int_equal(pf_process_track(W, 21, 0, "pid zero", NULL), -1);
    assert_int_equal(pf_child_track(W, 22, 999, "orphan"), -1);
    assert_int_equal(pf_child_track(W, 23, bytes_ctr, "under a counter"), -1);
    assert_int_equal(pf_counter_track(W, 24, 999, "orphan", PF_UNIT_COUNT), -1);
    assert_int_equal(pf_child_track(W, 0, proc_a, "id zero"), -1);
    assert_int_equal(pf_child_track(W, syncs, proc_a, "syncs again"), -1);   /* declared */
    assert_int_equal(pf_thread_track(W, proc_a, 100, 103, "a process's id"), -1);
    /* a refused declaration leaves its id unknown */
    assert_int_equal(pf_slice_begin(W, 20, 9000, "x", NULL, 0), -1);
    pf_get_stats(W, &after);
    assert_int_equal(after.packets, before.packets);   /* nothing written */
}

static void test_stats_and_close(void **state) {
    (void)state;
    struct pf_stats st;

    pf_get_stats(W, &st);
    assert_int_equal(st.open_slices, 0);
    assert_int_equal(st.intern_resets, 0);
    /* 13 slices + 1 instant + 4 counters; each slice is a BEGIN and an END. */
    assert_int_equal(st.events, 13 * 2 + 1 + 4);
    /* Each distinct string once: 11 event names, 8 arg names, 3 values. */
    assert_int_equal(st.interned, 11 + 8 + 3);
    /* 1 clock snapshot + 9 tracks + the events. */
    assert_int_equal(st.packets, 1 + 9 + st.events);
    assert_int_equal(pf_close(W), 0);
    W = NULL;
}

/* Many distinct strings against a small limit: the writer must empty its
 * tables and restart the sequence, and still balance every slice. */
static void test_intern_reset(void **state) {
    (void)state;
    struct pf_writer *w = pf_open(reset_path);
    struct pf_stats st;
    char name[32], val[32];

    assert_non_null(w);
    pf_set_intern_limit(w, 50);
    uint64_t t = 301;
    assert_int_equal(pf_thread_track(w, t, 300, 301, "resetter"), 0);
    for (int i = 0; i < 100; i++) {
        uint64_t ts = 1000 + (uint64_t)i * 100;
        struct pf_arg a[] = { PF_ARG_STR("value", val), PF_ARG_INT("i", i) };
        snprintf(name, sizeof(name), "outer-%d", i);
        snprintf(val, sizeof(val), "v-%d", i);
        assert_int_equal(pf_slice_begin(w, t, ts, name, a, 2), 0);
        assert_int_equal(pf_slice(w, t, ts + 10, 50, "inner", a, 2), 0);
        assert_int_equal(pf_slice_end(w, t, ts + 90), 0);
    }
    pf_get_stats(w, &st);
    assert_true(st.intern_resets >= 2);
    assert_int_equal(st.open_slices, 0);
    assert_int_equal(pf_close(w), 0);
}

/* A failed write must surface at the latest in pf_close(). */
static void test_write_error(void **state) {
    (void)state;
    if (access("/dev/full", W_OK) != 0) skip();
    struct pf_writer *w = pf_open("/dev/full");
    assert_non_null(w);
    uint64_t t = 1;
    pf_process_track(w, t, 1, "p", NULL);
    for (int i = 0; i < 1000; i++)
        pf_slice(w, t, (uint64_t)i, 1, "s", NULL, 0);
    assert_int_equal(pf_close(w), -1);
}

int main(int argc, char **argv) {
    if (argc > 1) trace_path = argv[1];
    if (argc > 2) reset_path = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_and_tracks),
        cmocka_unit_test(test_nested_slices_and_args),
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_flow),
        cmocka_unit_test(test_refused_calls),
        cmocka_unit_test(test_stats_and_close),
        cmocka_unit_test(test_intern_reset),
        cmocka_unit_test(test_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
