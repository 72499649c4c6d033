/*
 * util.h: the converter's shared helpers, one definition each (util.c):
 * allocation (every converter allocation exits with one line when memory
 * runs out: a half-written report helps no one), and numbers and text as
 * the report, the diff and the pages print them.
 */
#ifndef FT_UTIL_H
#define FT_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

void *ft_xmalloc(size_t n);
void *ft_xcalloc(size_t n, size_t size);
void *ft_xrealloc(void *p, size_t n);
char *ft_xstrdup(const char *s);
/* the one line and exit(2) when memory runs out (for an allocation made
 * elsewhere: open_memstream) */
void ft_oom(void) __attribute__((noreturn));
/* the one growing array: p, an array of cap elements (cap any integer
 * type of 4 or 8 bytes), grown to twice as many (first at first); the
 * caller checks when (n == cap) */
#define FT_GROW(p, cap, first) \
	((void)sizeof(char[sizeof (cap) == 4 || sizeof (cap) == 8 ? 1 : -1]), \
	 (p) = ft_grow_array((p), &(cap), sizeof (cap), (first), sizeof *(p)))
void *ft_grow_array(void *p, void *cap, size_t capsize, size_t first, size_t elem);

void ft_fmt_ns(char *buf, size_t cap, uint64_t ns);      /* "1.5 us", "2.0 ms" */
void ft_fmt_count(char *buf, size_t cap, uint64_t n);    /* "1,234,567" */
void ft_fmt_bytes(char *buf, size_t cap, uint64_t b);    /* "2.0 MiB" */
/* s in at most width columns: its tail after "..." when longer */
const char *ft_fit(const char *s, int width);
/* s whole on one line, a control character as '?' (a command to copy) */
void ft_put_clean(FILE *out, const char *s);
/* s wrapped at 78 columns with the given indent (a word longer than the
 * line: its middle elided); ft_wrap_from: the first line starts at column
 * col0, already printed */
void ft_wrap_from(FILE *out, const char *s, int indent, int col0);
void ft_wrap(FILE *out, const char *s, int indent);
/* a text field: "" when there is none (null is written only where the
 * schema says a field may be null) */
static inline const char *ft_txt(const char *s)
{
	return s ? s : "";
}
/* where a second pass over a process sends what the reader says of damage
 * (the first pass said it): /dev/null, or err when that cannot be opened */
FILE *ft_said_once(FILE *err);

uint64_t ft_hash_str(const char *s);                     /* FNV-1a, 64 bits */

/* a u64 -> index map (open addressing, linear probing) */
struct ft_map {
	uint64_t *key;
	uint32_t *val;             /* index + 1; 0 = empty */
	uint32_t cap, n;
};
long ft_map_get(const struct ft_map *m, uint64_t key);     /* -1 when absent */
void ft_map_put(struct ft_map *m, uint64_t key, uint32_t idx);
void ft_map_clear(struct ft_map *m);                       /* empty, memory kept */
void ft_map_free(struct ft_map *m);

#endif
