/*
 * modules.c: the MODULES chunk. Which ELF objects the process has loaded
 * (path, load bias, address range, GNU build-id), each written once per
 * file, so that the converter can symbolise the recorded return addresses
 * offline against the files (docs/FORMAT.md, MODULES). Called by the
 * flusher at each cycle, never in a hook: one dl_iterate_phdr, and a walk
 * of the list only when the loader's count of loads or unloads changed.
 * A fork child writes the list it inherited from the cache and walks the
 * loader's list only if that count moved since: a walk reads every
 * object's program and note headers, which in a child (whose page tables
 * start without the parent's file pages) faults a range of each object's
 * pages into its RSS: ~10 MiB in a DataLoader worker of PyTorch.
 */
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "internal.h"

#define MAX_WRITTEN 1024

static struct { uint64_t bias, lo; } written[MAX_WRITTEN];
static int nwritten;
/* Every entry written, kept: a fork child's file gets them from here in
 * the raw exit drain (ft_modules_write_cached) when the child leaves (by
 * _exit, a signal) before its flusher walked the loader's list: the walk
 * takes the loader's lock, which a drain in a signal handler must not. */
static unsigned char cache[64 << 10];
static size_t cache_used;
static int cache_pending;            /* this file has no MODULES yet: write the cache */
static int cache_whole = 1;          /* every entry written is in the cache */
static int walking;                  /* a walk under way (a child of a fork then walks again) */
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;

struct batch {
	unsigned char buf[16 << 10];
	size_t used;
	int changed;             /* dlpi_adds/subs moved since the last walk */
	ft_chunk_writer *write;  /* NULL: raw */
};

static void emit(const void *p, size_t n, ft_chunk_writer *write)
{
	if (write) {
		write(FT_CHUNK_MODULES, p, n);
	} else {
		struct iovec v = { (void *)p, n };
		ft_output_write_chunk(FT_CHUNK_MODULES, FT_CODEC_RAW, (uint32_t)n, &v, 1);
	}
}

static void batch_flush(struct batch *b)
{
	if (!b->used)
		return;
	emit(b->buf, b->used, b->write);
	b->used = 0;
}

static int already(uint64_t bias, uint64_t lo)
{
	for (int i = 0; i < nwritten; i++)
		if (written[i].bias == bias && written[i].lo == lo)
			return 1;
	return 0;
}

static size_t entry_size(const struct ft_module_entry *e)
{
	return sizeof *e + ((e->build_id_len + e->path_len + 7) & ~(size_t)7);
}

static int in_cache(uint64_t bias, uint64_t lo)
{
	for (size_t at = 0; at < cache_used;) {
		const struct ft_module_entry *e = (const struct ft_module_entry *)(cache + at);
		if (e->bias == bias && e->lo == lo)
			return 1;
		at += entry_size(e);
	}
	return 0;
}

/* the NT_GNU_BUILD_ID note of a loaded object, read from its PT_NOTE segments */
static size_t build_id(const struct dl_phdr_info *info, const unsigned char **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof *n;
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && n->n_descsz <= 255) {
				*id = desc;
				return n->n_descsz;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static int one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct batch *b = arg;
	(void)size;
	if (!b->changed) {
		b->changed = info->dlpi_adds != seen_adds || info->dlpi_subs != seen_subs;
		seen_adds = info->dlpi_adds;
		seen_subs = info->dlpi_subs;
		if (!b->changed)
			return 1;               /* nothing loaded or unloaded since */
	}
	uint64_t lo = ~0ull, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t s = info->dlpi_addr + ph->p_vaddr;
		if (s < lo)
			lo = s;
		if (s + ph->p_memsz > hi)
			hi = s + ph->p_memsz;
	}
	if (lo >= hi || already(info->dlpi_addr, lo) || nwritten == MAX_WRITTEN)
		return 0;
	char exe[4096];
	const char *path = info->dlpi_name;
	if (!path || !path[0]) {                /* the program itself */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0)
			return 0;
		exe[n] = 0;
		path = exe;
	} else if (path[0] != '/') {
		return 0;                       /* the vDSO: no file */
	}
	const unsigned char *id = NULL;
	size_t idlen = build_id(info, &id);
	size_t plen = strlen(path) + 1;
	size_t need = sizeof(struct ft_module_entry) + ((idlen + plen + 7) & ~(size_t)7);
	if (need > sizeof b->buf)
		return 0;
	if (b->used + need > sizeof b->buf)
		batch_flush(b);
	struct ft_module_entry *e = (struct ft_module_entry *)(b->buf + b->used);
	memset(e, 0, need);
	e->bias = info->dlpi_addr;
	e->lo = lo;
	e->hi = hi;
	e->path_len = (uint32_t)plen;
	e->build_id_len = (uint8_t)idlen;
	memcpy(e + 1, id, idlen);
	memcpy((unsigned char *)(e + 1) + idlen, path, plen);
	if (!in_cache(e->bias, e->lo)) {
		if (cache_used + need <= sizeof cache) {
			memcpy(cache + cache_used, e, need);
			cache_used += need;
		} else {
			cache_whole = 0;
		}
	}
	b->used += need;
	cache_pending = 0;
	written[nwritten].bias = info->dlpi_addr;
	written[nwritten++].lo = lo;
	return 0;
}

static void write_cached(ft_chunk_writer *write);

void ft_modules_write(ft_chunk_writer *write)
{
	static struct batch b;       /* the flusher's (or an exit path's, under the flush lock) */
	if (!ft_cfg.stack_depth)
		return;                 /* no stacks recorded: nothing to symbolise */
	write_cached(write);         /* a fork child's inherited list, if not yet */
	b.used = 0;
	b.changed = 0;
	b.write = write;
	walking = 1;
	dl_iterate_phdr(one, &b);
	batch_flush(&b);
	walking = 0;
}

/* The child keeps the parent's view of the loader's counts when the cache
 * holds every entry written and no walk was cut by the fork: its first
 * cycle then writes the cache and walks only if something was loaded or
 * unloaded since. */
void ft_modules_after_fork_child(void)
{
	nwritten = 0;
	if (!cache_whole || walking)
		seen_adds = seen_subs = ~0ull;
	walking = 0;
	cache_pending = cache_used != 0;
}

/* The inherited entries into this file, if it has none yet; they count
 * as written (no copy from the next walk). Async-signal-safe when write
 * is NULL (raw). */
static void write_cached(ft_chunk_writer *write)
{
	if (!cache_pending || !ft_cfg.stack_depth)
		return;
	cache_pending = 0;
	size_t at = 0, start = 0;
	while (at < cache_used) {
		const struct ft_module_entry *e = (const struct ft_module_entry *)(cache + at);
		size_t need = entry_size(e);
		if (at + need - start > (16 << 10)) {
			emit(cache + start, at - start, write);
			start = at;
		}
		if (nwritten < MAX_WRITTEN) {
			written[nwritten].bias = e->bias;
			written[nwritten++].lo = e->lo;
		}
		at += need;
	}
	if (at > start)
		emit(cache + start, at - start, write);
}

/* Async-signal-safe: the raw exit drain's. */
void ft_modules_write_cached(void)
{
	write_cached(NULL);
}
