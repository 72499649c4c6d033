/*
 * dl.c: the dlsym and dlvsym wrappers (path 2 to the CUDA driver: dlopen
 * + dlsym of a driver symbol hands back the feedtrace wrapper). Everything
 * else passes through with the caller's identity kept: an RTLD_NEXT look-up
 * is resolved by glibc from the return address, so for it the wrapper is an
 * assembler stub that jumps (not calls) into the real function.
 *
 * The real dlsym/dlvsym cannot be found with dlsym/dlvsym (that would be
 * us), so they are looked up once in libc's own dynamic symbol table.
 */
#include <dlfcn.h>
#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <string.h>

#include "cuda_shim.h"

#define FT_HIDDEN __attribute__((visibility("hidden")))
/* A sanitizer's runtime calls dlsym (ours) while it initialises, before
 * its shadow memory exists: the boot path must not be instrumented. */
#define FT_NO_SAN __attribute__((no_sanitize("address", "thread", "undefined")))

FT_HIDDEN void *(*ft_real_dlsym)(void *, const char *);
FT_HIDDEN void *(*ft_real_dlvsym)(void *, const char *, const char *);

void *ft_cu_bind_dlsym(const char *name, void *p);

/* ---- one look-up in libc's .dynsym (GNU hash), default symbol version ---- */

struct elf_find {
	const void *inside;         /* an address in the object wanted */
	const char *name;
	void *found;
};

FT_NO_SAN static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* not strcmp: a sanitizer's strcmp is not ready while it initialises */
FT_NO_SAN static int same_name(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

FT_NO_SAN static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	/* glibc relocates some d_ptr entries in place; others stay vaddrs */
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

FT_NO_SAN static int find_in_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct elf_find *q = arg;
	(void)size;
	const ElfW(Dyn) *dyn = NULL;
	int inside = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (uintptr_t)q->inside >= lo &&
		    (uintptr_t)q->inside < lo + ph->p_memsz)
			inside = 1;
		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
	}
	if (!inside || !dyn)
		return 0;
	const uint32_t *gh = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Versym) *versym = NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_GNU_HASH: gh = (const uint32_t *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_VERSYM: versym = (const ElfW(Versym) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		}
	}
	if (!gh || !symtab || !strtab)
		return 1;
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = gnu_hash(q->name);
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return 1;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];
		if ((ch | 1) == (h | 1) && same_name(strtab + symtab[i].st_name, q->name) &&
		    symtab[i].st_shndx != SHN_UNDEF &&
		    (!versym || !(versym[i] & 0x8000))) {   /* the default version */
			q->found = (void *)(info->dlpi_addr + symtab[i].st_value);
			return 1;
		}
		if (ch & 1)
			break;
	}
	return 1;
}

FT_NO_SAN static void *libc_symbol(const char *name)
{
	/* an address in libc: not dlclose, which a sanitizer runtime (or any
	 * interposer loaded first) wraps; nobody wraps this one */
	struct elf_find q = { (const void *)&gnu_get_libc_version, name, NULL };
	/* libc's program headers from its mapped ELF header (dladdr), not by
	 * dl_iterate_phdr, which TSan wraps and cannot run before it is ready */
	Dl_info di;
	if (!dladdr(q.inside, &di) || !di.dli_fbase)
		return NULL;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)di.dli_fbase;
	struct dl_phdr_info info = { 0 };
	info.dlpi_phdr = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	info.dlpi_phnum = eh->e_phnum;
	info.dlpi_addr = (ElfW(Addr))di.dli_fbase;
	for (int i = 0; i < info.dlpi_phnum; i++)
		if (info.dlpi_phdr[i].p_type == PT_LOAD) {      /* the lowest: base */
			info.dlpi_addr -= info.dlpi_phdr[i].p_vaddr;
			break;
		}
	find_in_object(&info, sizeof info, &q);
	return q.found;
}

/* Called by the stubs (and ft_real_init) before the first pass-through. */
FT_HIDDEN FT_NO_SAN void ft_dl_boot(void)
{
	if (!ft_real_dlvsym)
		ft_real_dlvsym = (void *(*)(void *, const char *, const char *))libc_symbol("dlvsym");
	if (!ft_real_dlsym)
		ft_real_dlsym = (void *(*)(void *, const char *))libc_symbol("dlsym");
}

int ft_cu_is_wrapper(void *p);

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
