/*
 * dl_default: prints whether global look-ups find CUDA driver symbols
 * ("cuLaunchKernel", "cuMemcpyDtoH_v2") and a libc one ("read"), as
 * programs do to probe for a driver. Must print the same with feedtrace.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	const char *names[] = { "cuLaunchKernel", "cuMemcpyDtoH_v2", "read" };
	for (int i = 0; i < 3; i++)
		printf("%s %s\n", names[i], dlsym(RTLD_DEFAULT, names[i]) ? "found" : "absent");
	return 0;
}
