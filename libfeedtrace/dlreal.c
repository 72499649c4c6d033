/*
 * dlreal.c: the real dlsym and dlvsym, for the wrappers of both (dl.c)
 * and for whatever else must look a symbol up past feedtrace (cuda.c).
 * They cannot be found with dlsym/dlvsym (that would be us), so they are
 * looked up once in libc's own dynamic symbol table.
 */
#include <dlfcn.h>
#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "dlreal.h"

FT_HIDDEN void *(*ft_real_dlsym)(void *, const char *);
FT_HIDDEN void *(*ft_real_dlvsym)(void *, const char *, const char *);

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
