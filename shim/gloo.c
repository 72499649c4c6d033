/*
 * gloo.c: the gloo collectives (gloo.def), for torch.distributed's gloo
 * backend: Debian's libtorch calls them in libgloo.so.0 through its PLT,
 * so the preloaded definitions come first. Each records the call with the
 * gloo::Context it runs on (the communicator, for matching the k-th
 * collective across ranks: ranks.c) and nothing else of the options,
 * whose layout past that first member is gloo's own.
 *
 * The real function is found with dlsym(RTLD_NEXT), else in the calling
 * object's own scope, else in any loaded object's: Python loads torch's
 * libraries RTLD_LOCAL, out of RTLD_NEXT's reach, and a handle's look-up
 * searches the object and its dependencies (libgloo), never the preloaded
 * library. (The caller may have tail-called: its return address is then
 * its own caller's.) A gloo call throws
 * C++ exceptions through the wrapper (timeouts, closed connections): it
 * holds nothing across the real call (unwind tables are on for every
 * object of the library), so the exception passes and nothing is recorded.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../libfeedtrace/dlreal.h"
#include "../libfeedtrace/internal.h"

typedef void (*gloo_fn)(void *opts);

enum {
#define GLOO_FN(kind, op, sym) GLOO_##op,
#include "gloo.def"
#undef GLOO_FN
	GLOO_N
};

static const char *const gloo_sym[GLOO_N] = {
#define GLOO_FN(kind, op, sym) #sym,
#include "gloo.def"
#undef GLOO_FN
};

static _Atomic(gloo_fn) gloo_real[GLOO_N];

/* the wrappers (exported), for telling the real function from our own */
#define GLOO_FN(kind, op, sym) __attribute__((visibility("default"))) void sym(void *opts);
#include "gloo.def"
#undef GLOO_FN
static const gloo_fn gloo_ours[GLOO_N] = {
#define GLOO_FN(kind, op, sym) sym,
#include "gloo.def"
#undef GLOO_FN
};

/* sym as the scope of the loaded object named path sees it: not ours */
static void *in_scope_of(const char *path, int i)
{
	if (!path || !*path)
		return NULL;                  /* the program: its scope is the global one */
	void *h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY);
	void *p = h ? ft_real_dlsym(h, gloo_sym[i]) : NULL;
	if (h)
		dlclose(h);                   /* NOLOAD took a reference: give it back */
	return p == (void *)gloo_ours[i] ? NULL : p;
}

#define MAX_OBJECTS 1024          /* loaded objects searched (PyTorch: ~300) */

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char **names = arg;
	for (int k = 0; k < MAX_OBJECTS - 1; k++)
		if (!names[k]) {
			names[k] = info->dlpi_name;
			return 0;
		}
	return 1;
}

static gloo_fn resolve(int i, const void *caller)
{
	gloo_fn f = atomic_load_explicit(&gloo_real[i], memory_order_acquire);
	if (f)
		return f;
	if (!ft_real_dlsym)
		ft_dl_boot();
	void *p = ft_real_dlsym(RTLD_NEXT, gloo_sym[i]);
	if (p == (void *)gloo_ours[i])
		p = NULL;
	Dl_info info;
	if (!p && dladdr(caller, &info))
		p = in_scope_of(info.dli_fname, i);
	if (!p) {                             /* a tail call: the caller is further up */
		const char *names[MAX_OBJECTS] = { 0 };
		dl_iterate_phdr(collect, names);
		for (int k = 0; k < MAX_OBJECTS && names[k] && !p; k++)
			p = in_scope_of(names[k], i);
	}
	if (!p) {
		/* the caller linked gloo, so this cannot happen: say so and stop
		 * rather than return without the collective */
		static const char msg[] = "feedtrace: a gloo collective was called but libgloo's "
					  "own function was not found; aborting\n";
		if (write(2, msg, sizeof msg - 1) < 0)
			abort();
		abort();
	}
	atomic_store_explicit(&gloo_real[i], (gloo_fn)p, memory_order_release);
	return (gloo_fn)p;
}

/* the call's gloo::Context: the options' first member is a shared_ptr,
 * whose first word is the pointer it holds */
static inline const void *context_of(const void *opts)
{
	return opts ? *(const void *const *)opts : NULL;
}

/* The context's rank and size, its first members ("const int rank, size"),
 * after a vtable pointer in gloo releases whose destructor is virtual
 * (Debian's 2022 snapshot) and at its start in later ones: the pointer is
 * told by dladdr (it points into libgloo), once per process (the layout is
 * the library's). A pair that is no rank of a world (0 <= rank < size) is
 * not recorded. */
static _Atomic int ctx_off = -1;         /* in int32 words; -1: not known yet */

static void rank_of(const void *ctx, int32_t *rank, int32_t *size)
{
	*rank = *size = 0;
	if (!ctx)
		return;
	int off = atomic_load_explicit(&ctx_off, memory_order_relaxed);
	if (off < 0) {
		Dl_info info;
		off = dladdr(*(void *const *)ctx, &info) ? 2 : 0;
		atomic_store_explicit(&ctx_off, off, memory_order_relaxed);
	}
	const int32_t *w = (const int32_t *)ctx + off;
	if (w[0] >= 0 && w[0] < w[1] && w[1] <= (1 << 24))
		*rank = w[0], *size = w[1];
}

#pragma GCC visibility push(default)

#define GLOO_FN(kind, op, sym)                                               \
	void sym(void *opts)                                                  \
	{                                                                     \
		gloo_fn real = resolve(GLOO_##op, __builtin_return_address(0)); \
		struct ft_thread *t = ft_enter(FT_G_LOCK);                    \
		if (!t) {                                                     \
			real(opts);                                           \
			return;                                               \
		}                                                             \
		const void *ctx = context_of(opts);                           \
		int32_t rank, size;                                           \
		rank_of(ctx, &rank, &size);                                   \
		uint64_t t0 = ft_now();                                       \
		real(opts);                                                   \
		ft_record_p(t, FT_EV_##kind, t0, ft_now(), ctx, (uint32_t)rank, \
			    (uint32_t)size);                                  \
	}
#include "gloo.def"
#undef GLOO_FN

#pragma GCC visibility pop
