/*
 * empty.c: the null arm of `make bench`'s end-to-end figure
 * (scripts/bench_e2e.py): a shared library with no hook, no constructor
 * and no thread, preloaded as libfeedtrace.so is, so that what loading
 * any library moves (the address space's layout, the page faults that
 * follow from it) is in the reference the tracer is compared with.
 */
int feedtrace_bench_empty;
