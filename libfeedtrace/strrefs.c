/*
 * strrefs.c: the strings a fork child's file needs from those it inherited.
 * A child inherits its parent's string table (every path the parent opened:
 * thousands after `import torch`) but uses few of them. Its file starts
 * with none of them; before each EVENTS chunk, the writer asks for the
 * inherited strings its records name (their str fields, from events.def)
 * that this file has not had yet, and writes those first. A bitmap over
 * the inherited ids says which were written. Nothing here allocates after
 * the fork child's set-up: the raw exit drain calls it from any context.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "layout.h"

#define MAX_STR_FIELDS 4

static const char *const specs[FT_EV_COUNT] = {
#define EV(id, num, nm, grp, cls, ns, flds) [FT_EV_##id] = flds,
#include "events.def"
#undef EV
};

/* per kind: byte offsets of its str fields, 0-terminated (no field is at 0) */
static uint8_t str_off[FT_EV_COUNT][MAX_STR_FIELDS + 1];
static int layouts_built;

static uint32_t inherited_ids;          /* ids 1..inherited_ids came with the fork */
static _Atomic uint64_t *sent;          /* bit per inherited id: in this file */
static size_t sent_bytes;

static void build_layouts(void)
{
	struct ft_layout_field f[16];
	for (unsigned k = 1; k < FT_EV_COUNT; k++) {
		int n = ft_layout_parse(specs[k], f, 16), m = 0;
		for (int i = 0; i < n && m < MAX_STR_FIELDS; i++)
			if (f[i].type == FT_F_STR && f[i].off < 256)
				str_off[k][m++] = (uint8_t)f[i].off;
	}
	layouts_built = 1;
}

/* Fork child, one thread: the strings up to arena offset end are inherited. */
void ft_strrefs_after_fork_child(uint64_t end)
{
	if (!layouts_built)
		build_layouts();
	if (sent)
		syscall(SYS_munmap, sent, sent_bytes);
	sent = NULL;
	inherited_ids = (uint32_t)(end / 8);
	sent_bytes = ((size_t)inherited_ids / 64 + 1) * 8;
	sent = ft_map_anon(sent_bytes, 0);
	if (!sent)
		inherited_ids = 0;      /* then the whole table is written, as before */
}

/* The arena offset a fork child's file starts its strings at (0: all). */
uint64_t ft_strrefs_start(void)
{
	return (uint64_t)inherited_ids * 8;
}

/* Appends the entry of id to buf (if inherited, not yet sent, and it fits). */
static size_t take(uint32_t id, unsigned char *buf, size_t used, size_t cap)
{
	if (id == 0 || id > inherited_ids)
		return 0;
	uint64_t bit = 1ull << ((id - 1) % 64);
	_Atomic uint64_t *w = &sent[(id - 1) / 64];
	if (atomic_load_explicit(w, memory_order_relaxed) & bit)
		return 0;
	const struct ft_string_entry *e = ft_strtab_entry(id);
	if (!e)
		return 0;
	size_t size = sizeof *e + ((e->len + 7) & ~7u);
	if (used + size > cap)
		return 0;
	memcpy(buf + used, e, size);
	atomic_fetch_or_explicit(w, bit, memory_order_relaxed);
	return size;
}

size_t ft_strrefs_one(uint32_t id, unsigned char *buf, size_t cap)
{
	return inherited_ids ? take(id, buf, 0, cap) : 0;
}

/* The inherited strings named by the n slots from index first of a ring
 * (slot i at ring[i & mask]) that this file lacks, as string entries in
 * buf; returns the bytes used. A full buf stops the scan: call again. */
size_t ft_strrefs_collect(const struct ft_rec *ring, uint64_t mask, uint64_t first,
			  uint64_t n, unsigned char *buf, size_t cap)
{
	if (!inherited_ids)
		return 0;
	size_t used = 0;
	for (uint64_t i = 0; i < n;) {
		const struct ft_rec *r = &ring[(first + i) & mask];
		unsigned kind = r->kind, k = r->nslots ? r->nslots : 1;
		if (kind < FT_EV_COUNT) {
			for (const uint8_t *o = str_off[kind]; *o; o++) {
				if (*o / FT_SLOT_SIZE >= k || i + *o / FT_SLOT_SIZE >= n)
					continue;
				const struct ft_rec *s = &ring[(first + i + *o / FT_SLOT_SIZE) & mask];
				uint32_t id;
				memcpy(&id, (const unsigned char *)s + *o % FT_SLOT_SIZE, 4);
				size_t got = take(id, buf, used, cap);
				if (!got && id && id <= inherited_ids && used + 8 + 4096 > cap)
					return used;            /* full: the caller writes, then asks again */
				used += got;
			}
		}
		i += k;
	}
	return used;
}
