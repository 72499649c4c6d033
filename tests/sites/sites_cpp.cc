// sites_cpp.cc: a hidden sync in a C++ member function and in a function
// template (tests/traced/test_symbolize.py: demangled names); built -g -O2 without
// -rdynamic. "SITE name" marks the line of each call.
#include <cstdlib>

extern "C" {
#include "sites.h"
}

CUdeviceptr site_dev;
static volatile int calls;

namespace feed {
struct Loader {
	__attribute__((noinline)) void fetch(int n);
};

void Loader::fetch(int n)
{
	char buf[4];
	for (int i = 0; i < n; i++)
		if (cuMemcpyDtoH_v2(buf, site_dev, sizeof buf) != 0) // SITE fetch
			std::abort();
	calls++;
}

template <typename T> __attribute__((noinline)) T pull(T x)
{
	T v;
	if (cuMemcpyDtoH_v2(&v, site_dev, sizeof v) != 0) // SITE pull
		std::abort();
	calls++;
	return v + x;
}
}

int main()
{
	void *ctx;
	int dev;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuMemAlloc_v2(&site_dev, 64))
		return 1;
	feed::Loader l;
	l.fetch(2); // SITE main_fetch
	double d = feed::pull<double>(1.0); // SITE main_pull
	return d < 0 ? 2 : 0;
}
