/*
 * integ_closefrom: closefrom(3), then two files of its own (fds 3 and 4,
 * where libunwind 1.6 kept its validation pipe) written between GPU waits
 * made from a function with no unwind info (the walker falls back to frame
 * pointers and validates addresses there). Prints the fds and what it read
 * back; the files must be byte for byte what an untraced run writes.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

/* No CFI: unwinders find no FDE for this frame. */
__asm__(".text\n.globl nocfi_call\n.type nocfi_call,@function\nnocfi_call:\n"
	"\tpush %rbp\n\tmov %rsp, %rbp\n\tcall *%rdi\n\tpop %rbp\n\tret\n"
	".size nocfi_call, .-nocfi_call\n");
void nocfi_call(void (*fn)(void));

static CUresult (*dtoh)(void *, CUdeviceptr, size_t);
static CUresult (*sync_ctx)(void);
static CUdeviceptr dev;
static char host[256];
static int fails;

static void wait_gpu(void)
{
	fails += dtoh(host, dev, sizeof host) != 0;
	fails += sync_ctx() != 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return 2;
	CUresult (*init)(unsigned) = (CUresult (*)(unsigned))dlsym(h, "cuInit");
	CUresult (*retain)(void **, int) = (CUresult (*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
	CUresult (*setcur)(void *) = (CUresult (*)(void *))dlsym(h, "cuCtxSetCurrent");
	CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))dlsym(h, "cuMemAlloc_v2");
	dtoh = (CUresult (*)(void *, CUdeviceptr, size_t))dlsym(h, "cuMemcpyDtoH_v2");
	sync_ctx = (CUresult (*)(void))dlsym(h, "cuCtxSynchronize");
	void *ctx;
	init(0);
	retain(&ctx, 0);
	setcur(ctx);
	alloc(&dev, 4096);
	nocfi_call(wait_gpu);           /* the walker is set up before closefrom */
	closefrom(3);
	int a = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	int b = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	printf("fds %d %d\n", a, b);
	char line[64];
	for (int i = 0; i < 50; i++) {
		int n = snprintf(line, sizeof line, "line %d\n", i);
		if (write(a, line, (size_t)n) != n || write(b, line, (size_t)n) != n)
			return 3;
		/* each wait from new stack pages: libunwind caches 4 valid pages */
		volatile char *pad = alloca(4096 * (size_t)(i % 8 + 1));
		pad[0] = 0;
		nocfi_call(wait_gpu);
	}
	/* the read end: whatever libunwind would read from fd 3 is gone */
	char back[1024];
	ssize_t got = pread(a, back, sizeof back, 0);
	off_t pos = lseek(a, 0, SEEK_CUR);
	printf("read %zd pos %lld fails %d\n", got, (long long)pos, fails);
	return 0;
}
