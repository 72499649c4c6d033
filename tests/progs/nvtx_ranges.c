/*
 * nvtx_ranges: NVTX ranges and marks through the stand-in NVTX loader
 * (examples/nvtx_stub.h), which loads NVTX_INJECTION64_PATH like NVTX does.
 *
 *   nvtx_ranges steps N   N x { push "step"; push "forward"; pop; mark "tick"; pop }
 *   nvtx_ranges all N     the same, then one of each other form: RangePushEx,
 *                         RangePushW, MarkW, MarkEx, RangeStartA ended on another
 *                         thread, the domain calls (RegisterStringA, a registered
 *                         push, MarkEx, RangeStartEx/End), and a pop with nothing open
 *
 * Prints what the calls returned: "levels" (push results), "pops" (pop results),
 * "ids" (range ids) so the test can compare them with the records.
 */
#include <stdio.h>
#include <string.h>

#include "../../examples/nvtx_stub.h"

static nvtxRangeId_t async_id;

static void *ender(void *arg)
{
	(void)arg;
	nvtxRangeEnd(async_id);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[2]), all = !strcmp(argv[1], "all");
	long lv = 0, pops = 0;
	for (int i = 0; i < n; i++) {
		lv += nvtxRangePushA("step");
		lv += nvtxRangePushA("forward");
		pops += nvtxRangePop();
		nvtxMarkA("tick");
		pops += nvtxRangePop();
	}
	printf("levels %ld pops %ld\n", lv, pops);
	if (!all)
		return 0;
	nvtxEventAttributes_t a = nvtx_stub_attr("ex push", NULL);
	int l1 = nvtxRangePushEx(&a);
	int l2 = nvtxRangePushW(L"wide push");
	int p2 = nvtxRangePop();
	int p1 = nvtxRangePop();
	nvtxMarkW(L"wide mark");
	nvtxEventAttributes_t m = nvtx_stub_attr("ex mark", NULL);
	nvtxMarkEx(&m);
	async_id = nvtxRangeStartA("async");
	pthread_t th;
	pthread_create(&th, NULL, ender, NULL);
	pthread_join(th, NULL);
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(NULL, "registered");
	nvtxEventAttributes_t r = nvtx_stub_attr(NULL, reg);
	int l3 = nvtxDomainRangePushEx(NULL, &r);
	int p3 = nvtxDomainRangePop(NULL);
	nvtxEventAttributes_t dm = nvtx_stub_attr("domain mark", NULL);
	nvtxDomainMarkEx(NULL, &dm);
	nvtxEventAttributes_t ds = nvtx_stub_attr("domain range", NULL);
	nvtxRangeId_t did = nvtxDomainRangeStartEx(NULL, &ds);
	nvtxDomainRangeEnd(NULL, did);
	int p4 = nvtxRangePop();               /* nothing open: -1 */
	printf("more %d %d %d %d %d %d %d\n", l1, l2, p2, p1, l3, p3, p4);
	printf("ids %llu %llu\n", (unsigned long long)async_id, (unsigned long long)did);
	return 0;
}
