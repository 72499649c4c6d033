/*
 * real.c: resolves the real libc functions named in libc.def, once, with
 * dlsym(RTLD_NEXT) (dlvsym where a symbol version matters). Called from
 * the constructor (shim/init.c) and, before it ran, from the first wrapper
 * that needs one.
 */
#include <dlfcn.h>

#include "real.h"

#define REAL_FN(name, version) \
	__attribute__((visibility("hidden"))) __typeof__(&name) real_##name;
#include "libc.def"
#undef REAL_FN

void ft_real_init(void)
{
	void *p;
#define REAL_FN(name, version)                                            \
	if (!real_##name) {                                               \
		p = (version) ? dlvsym(RTLD_NEXT, #name, (version) ? (version) : "") \
			      : NULL;                                     \
		if (!p)                                                   \
			p = dlsym(RTLD_NEXT, #name);                      \
		real_##name = (__typeof__(&name))p;                       \
	}
#include "libc.def"
#undef REAL_FN
}

int ft_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return REAL(sigaction)(sig, act, old);
}
