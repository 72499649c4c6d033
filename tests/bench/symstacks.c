/*
 * symstacks.c: a trace with 10 000 distinct native stacks, for the
 * symbolisation benchmark (scripts/bench_symbols.sh). On the simulated
 * driver (linked with -lcuda): one hidden sync (cuMemcpyDtoH to pageable
 * memory) from each of 10 000 call paths (4 levels, each level calling the
 * next from one of 10 distinct call instructions), then READS 1-byte reads
 * of /dev/zero (cheap events, so that the converter's events/s is measured
 * on a trace of some size). Usage: symstacks READS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef unsigned long long CUdeviceptr;
int cuInit(unsigned flags);
int cuDeviceGet(int *dev, int ordinal);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuMemAlloc_v2(CUdeviceptr *p, size_t n);
int cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);

static CUdeviceptr dev;

static volatile int sink;

static __attribute__((noinline)) int leaf(int tag)
{
	char buf[4];
	int r = cuMemcpyDtoH_v2(buf, dev, sizeof buf);
	sink += tag;
	return r;
}

/* ten call instructions per level, each on its own line: ten return
 * addresses and ten source lines at each level (a different assembler
 * comment after each call keeps the compiler from merging them) */
static __attribute__((noinline)) int level1(int path)
{
	int r;
	switch (path % 10) {
	case 0: r = leaf(path / 10); __asm__ volatile("# 0"); break;
	case 1: r = leaf(path / 10); __asm__ volatile("# 1"); break;
	case 2: r = leaf(path / 10); __asm__ volatile("# 2"); break;
	case 3: r = leaf(path / 10); __asm__ volatile("# 3"); break;
	case 4: r = leaf(path / 10); __asm__ volatile("# 4"); break;
	case 5: r = leaf(path / 10); __asm__ volatile("# 5"); break;
	case 6: r = leaf(path / 10); __asm__ volatile("# 6"); break;
	case 7: r = leaf(path / 10); __asm__ volatile("# 7"); break;
	case 8: r = leaf(path / 10); __asm__ volatile("# 8"); break;
	default: r = leaf(path / 10); __asm__ volatile("# 9"); break;
	}
	return r;
}

static __attribute__((noinline)) int level2(int path)
{
	int r;
	switch (path % 10) {
	case 0: r = level1(path / 10); __asm__ volatile("# 0"); break;
	case 1: r = level1(path / 10); __asm__ volatile("# 1"); break;
	case 2: r = level1(path / 10); __asm__ volatile("# 2"); break;
	case 3: r = level1(path / 10); __asm__ volatile("# 3"); break;
	case 4: r = level1(path / 10); __asm__ volatile("# 4"); break;
	case 5: r = level1(path / 10); __asm__ volatile("# 5"); break;
	case 6: r = level1(path / 10); __asm__ volatile("# 6"); break;
	case 7: r = level1(path / 10); __asm__ volatile("# 7"); break;
	case 8: r = level1(path / 10); __asm__ volatile("# 8"); break;
	default: r = level1(path / 10); __asm__ volatile("# 9"); break;
	}
	return r;
}

static __attribute__((noinline)) int level3(int path)
{
	int r;
	switch (path % 10) {
	case 0: r = level2(path / 10); __asm__ volatile("# 0"); break;
	case 1: r = level2(path / 10); __asm__ volatile("# 1"); break;
	case 2: r = level2(path / 10); __asm__ volatile("# 2"); break;
	case 3: r = level2(path / 10); __asm__ volatile("# 3"); break;
	case 4: r = level2(path / 10); __asm__ volatile("# 4"); break;
	case 5: r = level2(path / 10); __asm__ volatile("# 5"); break;
	case 6: r = level2(path / 10); __asm__ volatile("# 6"); break;
	case 7: r = level2(path / 10); __asm__ volatile("# 7"); break;
	case 8: r = level2(path / 10); __asm__ volatile("# 8"); break;
	default: r = level2(path / 10); __asm__ volatile("# 9"); break;
	}
	return r;
}

static __attribute__((noinline)) int level4(int path)
{
	int r;
	switch (path % 10) {
	case 0: r = level3(path / 10); __asm__ volatile("# 0"); break;
	case 1: r = level3(path / 10); __asm__ volatile("# 1"); break;
	case 2: r = level3(path / 10); __asm__ volatile("# 2"); break;
	case 3: r = level3(path / 10); __asm__ volatile("# 3"); break;
	case 4: r = level3(path / 10); __asm__ volatile("# 4"); break;
	case 5: r = level3(path / 10); __asm__ volatile("# 5"); break;
	case 6: r = level3(path / 10); __asm__ volatile("# 6"); break;
	case 7: r = level3(path / 10); __asm__ volatile("# 7"); break;
	case 8: r = level3(path / 10); __asm__ volatile("# 8"); break;
	default: r = level3(path / 10); __asm__ volatile("# 9"); break;
	}
	return r;
}

int main(int argc, char **argv)
{
	long reads = argc > 1 ? atol(argv[1]) : 0;
	void *ctx;
	int d;
	if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&ctx, d) ||
	    cuCtxSetCurrent(ctx) || cuMemAlloc_v2(&dev, 64))
		return 1;
	long sum = 0;
	for (int p = 0; p < 10000; p++)
		sum += level4(p);
	int fd = open("/dev/zero", O_RDONLY);
	char c;
	for (long i = 0; i < reads; i++)
		sum += read(fd, &c, 1);
	printf("%ld\n", sum);
	return 0;
}
