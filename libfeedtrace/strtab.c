/*
 * strtab.c: interned strings (paths, later kernel names and call sites)
 * and the fd -> path table. Lock-free: a CAS claims a hash slot, the text
 * goes into an append-only arena laid out exactly as a STRINGS chunk, and
 * a release store of its length publishes it. The flusher copies the
 * published tail of the arena into the trace before the records that use
 * it. Ids are arena offsets / 8 + 1, so 0 means "no string".
 *
 * fork copies the arena and table as they are at that instant: a string
 * another thread was adding is then half there in the child, forever (its
 * thread did not come along). ft_strtab_after_fork_child mends both.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "internal.h"

/* Sizes: virtual (MAP_NORESERVE), pages come as strings do, so a run's
 * memory is what it interned, up to these bounds: 256 MiB of text (about
 * 4 M paths of 50 bytes) and a table in three parts: 256 KiB of first
 * slots, 1 MiB of near ones, then 64 MiB of far ones (4 M, half full at
 * 2 M strings). A string takes a slot among the first FIRST_PROBES from
 * its hash's place in the first part, else among NEAR_PROBES in the near
 * part, else goes on to the far part. A hash puts each string on a page
 * of its own: a single 64 MiB table had a page resident per string up to
 * 16 K strings (+6.6 MiB in each process of examples/train.py with its
 * DataLoader workers), and a first part of 1 MiB took two page faults (a
 * read, then the write) on each of its 256 pages in a run of 5 000
 * strings, on the program's thread, as it opened files. The first part
 * holds about 12 K strings; its 64 pages are faulted by the flusher once
 * a process has a dozen or so (ft_strtab_prefault), and the near part
 * takes the tens of thousands after. The last DIR_RESERVE of the arena
 * takes only the directories
 * of paths that no longer fit (ft_intern_path), so when paths must be
 * dropped their directory is kept, and each drop is counted. */
#define ARENA_BYTES (256ull << 20)
#define DIR_RESERVE (8ull << 20)
#define FIRST_SLOTS (1u << 14)
#define FIRST_PROBES 16
#define NEAR_SLOTS (1u << 16)
#define NEAR_PROBES 16
#define FAR_SLOTS (1u << 22)
#define FAR_PROBES 64
#define TABLE_SLOTS (FIRST_SLOTS + NEAR_SLOTS + FAR_SLOTS)
#define PROBES (FIRST_PROBES + NEAR_PROBES + FAR_PROBES)
#define MAX_STRING 4095

struct table_slot {
	_Atomic uint64_t hash;
	_Atomic uint32_t id;
	uint32_t pad;
};

static unsigned char *arena;            /* MAP_NORESERVE: pages on first touch */
static _Atomic uint64_t arena_used;
static struct table_slot *table;
static _Atomic unsigned adding;         /* threads between claiming a slot and its id */
_Atomic uint32_t ft_fd_paths[FT_FD_SLOTS];
_Atomic uint64_t ft_strings_lost;
/* the first part's pages are faulted by the flusher once the process has
 * PREFAULT_AFTER bytes of strings of its own (ft_strtab_prefault) */
#define PREFAULT_AFTER (1u << 10)
static uint64_t own_from;               /* arena end at the fork: later strings are ours */
static int first_faulted;               /* this process faulted the first part */

static void *map_zeroed(size_t bytes)
{
	return ft_map_anon(bytes, MAP_NORESERVE);      /* pages on first touch */
}

void ft_strtab_init(void)
{
	arena = map_zeroed(ARENA_BYTES);
	table = map_zeroed(TABLE_SLOTS * sizeof *table);
	if (!arena || !table)
		arena = NULL, table = NULL;
}

/* 16 bytes a step, each folded into the state by one 64x64->128-bit
 * multiply whose halves are xored (the product's middle bits depend on
 * every bit of both factors). The hook waits for the id between two
 * system calls, so what counts is the chain of dependent steps: one
 * multiply per 16 bytes plus two to finish (a 31-byte path: 3), where
 * the rotate-multiply hash before took one step per 8 bytes plus a
 * three-multiply avalanche (6), and measured 9 ns an open. The
 * string's last 1..16 bytes are read as two words that may overlap (never
 * a byte outside the string: tests/traced/test_io.py); its length goes in first,
 * so "ab" and "abab" differ. A product alone is zero when one word is
 * its key's value: 200 000 strings sharing such a word all collided until
 * each step kept its second factor (step()). The table trusts the 64-bit value (no text
 * compare), so every bit of every byte reaches it. */
static inline uint64_t fold(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;
	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* a 16-byte step: data word a times (data word and state) b, and b kept
 * beside the product, so that a word that zeroes a (one 8-byte value)
 * does not erase the state and b with it */
static inline uint64_t step(uint64_t a, uint64_t b)
{
	return fold(a, b) ^ b;
}

static inline uint64_t load64(const char *s)
{
	uint64_t w;
	memcpy(&w, s, 8);
	return w;
}

static inline uint64_t load32(const char *s)
{
	uint32_t w;
	memcpy(&w, s, 4);
	return w;
}

static uint64_t hash64(const char *s, size_t n)
{
	const uint64_t k0 = 0x9e3779b97f4a7c15ull, k1 = 0xd6e8feb86659fd93ull,
		       k2 = 0xa0761d6478bd642full;
	uint64_t h = fold(n ^ k0, k1), a, b;
	size_t i = 0;
	for (; i + 16 < n; i += 16)
		h = step(load64(s + i) ^ k1, load64(s + i + 8) ^ h);
	if (n >= 16) {                   /* the last 1..16: the string's last 16 */
		a = load64(s + n - 16);
		b = load64(s + n - 8);
	} else if (n >= 8) {
		a = load64(s);
		b = load64(s + n - 8);
	} else if (n >= 4) {
		a = load32(s);
		b = load32(s + n - 4);
	} else if (n > 0) {
		a = (uint64_t)(unsigned char)s[0] << 16 |
		    (uint64_t)(unsigned char)s[n / 2] << 8 | (unsigned char)s[n - 1];
		b = 0;
	} else {
		a = b = 0;
	}
	h = step(a ^ k2, b ^ h);
	h = fold(h ^ k0, k1);
	return h ? h : 1;                /* 0 marks an empty slot */
}

/* Writes the entry into the arena below limit; returns its id, 0 if it
 * does not fit. Space is claimed only when it fits: a refused string
 * leaves no hole (the flusher stops at an unpublished entry). */
static uint32_t arena_add(const char *s, size_t n, uint64_t limit)
{
	uint64_t need = sizeof(struct ft_string_entry) + ((n + 8) & ~7ull);
	uint64_t off = atomic_load(&arena_used);
	do {
		if (off + need > limit)
			return 0;
	} while (!atomic_compare_exchange_weak(&arena_used, &off, off + need));
	struct ft_string_entry *e = (struct ft_string_entry *)(arena + off);
	uint32_t id = (uint32_t)(off / 8) + 1;
	memcpy(e + 1, s, n);
	((char *)(e + 1))[n] = 0;
	e->id = id;
	atomic_store_explicit((_Atomic uint32_t *)&e->len, (uint32_t)n + 1,
			      memory_order_release);
	if (off < own_from + PREFAULT_AFTER && off + need >= own_from + PREFAULT_AFTER)
		ft_flusher_wake();      /* once: the flusher faults the table's first part */
	return id;
}

/* A string added without a table slot: a second copy under a new id. */
static uint32_t add_uncached(const char *s, size_t n, uint64_t limit)
{
	atomic_fetch_add(&adding, 1);
	uint32_t id = arena_add(s, n, limit);
	atomic_fetch_sub(&adding, 1);
	if (id == 0)
		atomic_fetch_add(&ft_strings_lost, 1);
	return id;
}

/* The probe-th slot a string of hash h may take: FIRST_PROBES in the
 * first part from the low bits, NEAR_PROBES in the near part from the
 * next ones, then FAR_PROBES in the far part from the high ones. A string
 * is in a later part only if its slots in the earlier ones were all taken
 * when it was added; slots are never given back (but by a fork child's
 * mend, after which a string may be added twice: two ids, one text). */
static inline struct table_slot *slot_at(uint64_t h, uint32_t probe)
{
	if (probe < FIRST_PROBES)
		return &table[(h + probe) & (FIRST_SLOTS - 1)];
	if (probe < FIRST_PROBES + NEAR_PROBES)
		return &table[FIRST_SLOTS + (((h >> 16) + probe) & (NEAR_SLOTS - 1))];
	return &table[FIRST_SLOTS + NEAR_SLOTS + (((h >> 32) + probe) & (FAR_SLOTS - 1))];
}

/* s (n bytes) interned with the arena filled up to limit at most. */
static uint32_t intern_n(const char *s, size_t n, uint64_t limit)
{
	uint64_t h = hash64(s, n);
	for (uint32_t probe = 0; probe < PROBES; probe++) {
		struct table_slot *slot = slot_at(h, probe);
		uint64_t cur = atomic_load_explicit(&slot->hash, memory_order_acquire);
		if (cur == 0) {
			uint64_t expect = 0;
			atomic_fetch_add(&adding, 1);
			if (!atomic_compare_exchange_strong(&slot->hash, &expect, h)) {
				atomic_fetch_sub(&adding, 1);
				cur = expect;
			} else {
				uint32_t id = arena_add(s, n, limit);
				if (id == 0) {
					atomic_fetch_add(&ft_strings_lost, 1);
					id = UINT32_MAX;    /* slot is spent: never retried */
				}
				atomic_store_explicit(&slot->id, id, memory_order_release);
				atomic_fetch_sub(&adding, 1);
				return id == UINT32_MAX ? 0 : id;
			}
		}
		if (cur == h) {
			uint32_t id;
			/* The claimer is writing the text, a few stores: wait for
			 * it, but not for ever. It may be this very thread, in a
			 * signal handler that interrupted it; or preempted. */
			for (unsigned spin = 0;
			     (id = atomic_load_explicit(&slot->id, memory_order_acquire)) == 0;
			     spin++) {
				if (spin == 4096)
					return add_uncached(s, n, limit);
				__builtin_ia32_pause();
			}
			return id == UINT32_MAX ? 0 : id;
		}
	}
	atomic_fetch_add(&ft_strings_lost, 1);      /* the table is that full */
	return 0;
}

uint32_t ft_intern(const char *s)
{
	if (!s || !table)
		return 0;
	return intern_n(s, strnlen(s, MAX_STRING), ARENA_BYTES - DIR_RESERVE);
}

/* A path that did not fit (counted in ft_strings_lost): its directory,
 * as "DIR/" and a star, from the reserve, so grouping by directory still works. */
static uint32_t intern_dir_of(const char *path)
{
	char buf[MAX_STRING + 1];
	size_t n = strnlen(path, MAX_STRING);
	while (n > 0 && path[n - 1] != '/')
		n--;
	if (n == 0) {
		memcpy(buf, "./", 2);
		n = 2;
	} else {
		if (n > MAX_STRING - 1)
			n = MAX_STRING - 1;
		memcpy(buf, path, n);
	}
	buf[n++] = '*';
	return intern_n(buf, n, ARENA_BYTES);
}

/* The published entry of id, or NULL. */
const struct ft_string_entry *ft_strtab_entry(uint32_t id)
{
	uint64_t off = ((uint64_t)id - 1) * 8;
	uint64_t used = atomic_load(&arena_used);
	if (!arena || id == 0 || off + sizeof(struct ft_string_entry) > used ||
	    off + sizeof(struct ft_string_entry) > ARENA_BYTES)
		return NULL;
	const struct ft_string_entry *e = (const void *)(arena + off);
	uint32_t len = atomic_load_explicit((_Atomic uint32_t *)&e->len, memory_order_acquire);
	if (len == 0 || e->id != id || off + sizeof *e + ((len + 7) & ~7ull) > ARENA_BYTES)
		return NULL;
	return e;
}

/* Entry at off is whole: published, its own id, its text ends in NUL. */
static int entry_whole(uint64_t off, uint64_t used)
{
	const struct ft_string_entry *e = (const void *)(arena + off);
	uint64_t len = atomic_load_explicit((_Atomic uint32_t *)&e->len, memory_order_acquire);
	uint64_t size = sizeof *e + ((len + 7) & ~7ull);
	return len != 0 && e->id == off / 8 + 1 && off + size <= used &&
	       ((const char *)(e + 1))[len - 1] == 0;
}

/* In a fork child (one thread, before the flusher starts): what a fork in
 * the middle of an add left half done is mended (below). Returns the end
 * of the inherited strings in the arena, which go into the child's file
 * only as its records name them (lifecycle.c tells strrefs.c). */
static void mend_after_fork(void);

uint64_t ft_strtab_after_fork_child(void)
{
	mend_after_fork();
	uint64_t used = atomic_load(&arena_used);
	own_from = used;
	first_faulted = 0;
	return used < ARENA_BYTES ? used : ARENA_BYTES;
}

/* Flusher thread, woken by the string that passes it: once the process
 * has PREFAULT_AFTER bytes of strings of its own (about 15 paths), the
 * rest of the first part's pages at once, so that the program's opens do
 * not fault them one by one (twice each: the look, then the claim). A
 * process with fewer strings (/bin/sleep) keeps fewer pages. In a
 * fork child they are its parent's until written: a child that interns
 * little (one that execs at once) copies few of them. */
void ft_strtab_prefault(void)
{
	if (!table || first_faulted || atomic_load(&arena_used) < own_from + PREFAULT_AFTER)
		return;
	first_faulted = 1;
	ft_populate(table, FIRST_SLOTS * sizeof *table);
}

/* When a thread of the parent was adding a string at the fork, its table
 * slot has a hash but no id (a lookup of that string would wait on a
 * thread that is not here), and its arena space has no length (the flusher
 * stops there: every later string, the child's own included, would never
 * be written). Free such slots, and fill each hole with an empty string
 * entry of its size. */
static void mend_after_fork(void)
{
	if (!table || atomic_load(&adding) == 0)
		return;
	atomic_store(&adding, 0);
	for (uint32_t i = 0; i < TABLE_SLOTS; i++)
		if (atomic_load(&table[i].hash) != 0 && atomic_load(&table[i].id) == 0)
			atomic_store(&table[i].hash, 0);
	uint64_t used = atomic_load(&arena_used);
	if (used > ARENA_BYTES)
		used = ARENA_BYTES;
	uint64_t off = 0;
	while (off + sizeof(struct ft_string_entry) <= used) {
		struct ft_string_entry *e = (struct ft_string_entry *)(arena + off);
		uint32_t len = atomic_load((_Atomic uint32_t *)&e->len);
		if (len != 0) {
			off += sizeof *e + ((len + 7) & ~7ull);
			continue;
		}
		uint64_t end = off + 16;        /* the smallest entry */
		while (end < used && !entry_whole(end, used))
			end += 8;
		if (end > used)
			break;                  /* a tail too short to fill: nothing follows */
		e->id = (uint32_t)(off / 8) + 1;
		memset(e + 1, 0, end - off - sizeof *e);
		atomic_store_explicit((_Atomic uint32_t *)&e->len,
				      (uint32_t)(end - off - sizeof *e), memory_order_release);
		off = end;
	}
}

/* A path as recorded: itself, or with FEEDTRACE_REDACT=1 only a keyed hash
 * of it ("redacted:" and 16 hex digits), so traces can leave the machine.
 * The key is per run (FEEDTRACE_REDACT_KEY, else random at start-up and
 * exported to children), so the same path hashes the same across the
 * processes of a run but cannot be looked up in a table of common paths. */
uint64_t ft_redact_key;

void ft_redact_text(const void *data, size_t n, char out[26])
{
	uint64_t h = ft_redact_key ^ 1469598103934665603ull;
	for (const unsigned char *p = data; n--; p++) {
		h ^= *p;
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	memcpy(out, "redacted:", 9);
	for (int i = 0; i < 16; i++)
		out[9 + i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
	out[25] = 0;
}

uint32_t ft_intern_path(const char *path)
{
	if (!path || !table)
		return 0;
	if (!ft_cfg.redact) {
		uint32_t id = ft_intern(path);
		return id ? id : intern_dir_of(path);
	}
	char text[26];
	ft_redact_text(path, strlen(path), text);
	return intern_n(text, strlen(text), ARENA_BYTES - DIR_RESERVE);
}

size_t ft_strtab_pending(uint64_t *pos, const void **data)
{
	if (!arena)
		return 0;
	uint64_t start = *pos, p = start;
	uint64_t used = atomic_load(&arena_used);
	if (used > ARENA_BYTES)
		used = ARENA_BYTES;
	while (p + sizeof(struct ft_string_entry) <= used) {
		struct ft_string_entry *e = (struct ft_string_entry *)(arena + p);
		uint32_t len = atomic_load_explicit((_Atomic uint32_t *)&e->len,
						    memory_order_acquire);
		if (len == 0)
			break;                  /* being written */
		p += sizeof *e + ((len + 7) & ~7ull);
	}
	*pos = p;
	*data = arena + start;
	return (size_t)(p - start);
}
