/*
 * dl.c: the dlsym and dlvsym wrappers (path 2 to the CUDA driver: dlopen
 * + dlsym of a driver symbol hands back the feedtrace wrapper). Everything
 * else passes through with the caller's identity kept: an RTLD_NEXT look-up
 * is resolved by glibc from the return address, so for it the wrapper is an
 * assembler stub that jumps (not calls) into the real function.
 *
 * The real dlsym/dlvsym come from libfeedtrace/dlreal.c; the CUDA side of a
 * look-up from shim/cuda.c.
 */
#include <dlfcn.h>
#include <string.h>

#include "cuda_shim.h"
#include "../libfeedtrace/dlreal.h"

/* A global look-up (RTLD_DEFAULT, the main program's handle) finds our own
 * exported wrapper first; answer what it would find without us: the next
 * definition after this library, if any, behind its wrapper. */
static void *cuda_lookup(const char *name, void *p)
{
	if (ft_cu_is_wrapper(p)) {
		p = ft_real_dlsym(RTLD_NEXT, name);
		if (!p)
			return NULL;
	}
	return ft_cu_bind_dlsym(name, p);
}

/* not strncmp: sanitizers look up their real functions through here */
FT_NO_SAN static int is_nccl(const char *n)
{
	return n[0] == 'n' && n[1] == 'c' && n[2] == 'c' && n[3] == 'l';
}

/* Not RTLD_NEXT: the caller's address does not matter. */
FT_HIDDEN FT_NO_SAN void *ft_dlsym_other(void *handle, const char *name)
{
	void *p = ft_real_dlsym(handle, name);
	if (p && name && ((name[0] == 'c' && name[1] == 'u') || is_nccl(name)))
		return cuda_lookup(name, p);
	return p;
}

FT_HIDDEN FT_NO_SAN void *ft_dlvsym_other(void *handle, const char *name, const char *version)
{
	void *p = ft_real_dlvsym(handle, name, version);
	if (p && name && ((name[0] == 'c' && name[1] == 'u') || is_nccl(name)))
		return cuda_lookup(name, p);
	return p;
}

#if defined(__x86_64__)
/* dlsym(handle, name) / dlvsym(handle, name, version):
 *   make sure the real pointers are known (saving the argument registers);
 *   RTLD_NEXT ((void *)-1): jump to the real function, return address intact;
 *   anything else: jump to the C part above. */
__asm__(
	".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	cmpq $0, ft_real_dlsym(%rip)\n"
	"	jne 1f\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	call ft_dl_boot\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"1:	cmpq $-1, %rdi\n"
	"	jne ft_dlsym_other\n"
	"	jmp *ft_real_dlsym(%rip)\n"
	".size dlsym, .-dlsym\n"
	"\n"
	".globl dlvsym\n"
	".type dlvsym, @function\n"
	"dlvsym:\n"
	"	cmpq $0, ft_real_dlvsym(%rip)\n"
	"	jne 1f\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	call ft_dl_boot\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"1:	cmpq $-1, %rdi\n"
	"	jne ft_dlvsym_other\n"
	"	jmp *ft_real_dlvsym(%rip)\n"
	".size dlvsym, .-dlvsym\n");
#else
#error "feedtrace's dlsym wrapper is written for x86-64"
#endif
