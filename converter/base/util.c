/*
 * util.c: the converter's shared helpers (util.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void ft_oom(void)
{
	fprintf(stderr, "feedtrace: out of memory\n");
	exit(2);
}

static void *need(void *p)
{
	if (!p)
		ft_oom();
	return p;
}

void *ft_xmalloc(size_t n)
{
	return need(malloc(n ? n : 1));
}

void *ft_xcalloc(size_t n, size_t size)
{
	return need(calloc(n ? n : 1, size ? size : 1));
}

void *ft_xrealloc(void *p, size_t n)
{
	return need(realloc(p, n ? n : 1));
}

char *ft_xstrdup(const char *s)
{
	return need(strdup(s));
}

void *ft_grow_array(void *p, void *cap, size_t capsize, size_t first, size_t elem)
{
	uint64_t n = 0;
	if (capsize == 4) {
		uint32_t c;
		memcpy(&c, cap, 4);
		n = c;
	} else {
		memcpy(&n, cap, 8);
	}
	n = n ? 2 * n : first;
	if (capsize == 4) {
		uint32_t c = (uint32_t)n;
		memcpy(cap, &c, 4);
	} else {
		memcpy(cap, &n, 8);
	}
	return need(realloc(p, (size_t)n * elem));
}

/* ---- numbers and text for people ---- */

/* 750 ns, 1.5 us, 2.0 ms, 1.25 s, 12 s */
void ft_fmt_ns(char *buf, size_t cap, uint64_t ns)
{
	if (ns >= 10000000000ull)
		snprintf(buf, cap, "%.0f s", (double)ns / 1e9);
	else if (ns >= 1000000000ull)
		snprintf(buf, cap, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, cap, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, cap, "%.1f us", (double)ns / 1e3);
	else
		snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
}

void ft_put_clean(FILE *out, const char *s)
{
	for (; *s; s++)                 /* one line: a newline in a name shows as '?' */
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* s in at most width columns (120 at most): its tail after "..." when
 * longer; a control character as '?' (one of 4 buffers, in turn) */
const char *ft_fit(const char *s, int width)
{
	int n = (int)strlen(s);
	static char buf[4][128];
	static int k;
	if (width < 4 || width > 120)
		width = 120;
	char *b = buf[k++ & 3];
	if (n <= width)
		snprintf(b, 128, "%s", s);
	else
		snprintf(b, 128, "...%s", s + n - (width - 3));
	for (char *p = b; *p; p++)      /* one line: a newline in a name shows as '?' */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return b;
}

/* 1,234,567 */
void ft_fmt_count(char *buf, size_t cap, uint64_t n)
{
	char t[32];
	int len = snprintf(t, sizeof t, "%llu", (unsigned long long)n), o = 0;
	for (int i = 0; i < len && (size_t)o + 2 < cap; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = t[i];
	}
	buf[o] = 0;
}

/* 1.5 KiB, 2.0 MiB: binary units */
void ft_fmt_bytes(char *buf, size_t cap, uint64_t b)
{
	if (b >= 1ull << 30)
		snprintf(buf, cap, "%.1f GiB", (double)b / (1ull << 30));
	else if (b >= 1 << 20)
		snprintf(buf, cap, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, cap, "%.1f KiB", (double)b / (1 << 10));
	else
		snprintf(buf, cap, "%llu B", (unsigned long long)b);
}

/* FNV-1a, 64 bits */
uint64_t ft_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* ---- a small u64 -> index map (open addressing) ---- */

static uint32_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Returns the slot of key; *found says whether it is in use. */
static uint32_t map_slot(const struct ft_map *m, uint64_t key, int *found)
{
	uint32_t i = hash64(key) & (m->cap - 1);
	while (m->val[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	*found = m->val[i] != 0;
	return i;
}

long ft_map_get(const struct ft_map *m, uint64_t key)
{
	int found;
	if (!m->cap)
		return -1;
	uint32_t i = map_slot(m, key, &found);
	return found ? (long)m->val[i] - 1 : -1;
}

void ft_map_put(struct ft_map *m, uint64_t key, uint32_t idx)
{
	int found;
	if ((m->n + 1) * 2 > m->cap) {
		struct ft_map g = { 0 };
		g.cap = m->cap ? m->cap * 2 : 64;
		g.key = ft_xcalloc(g.cap, sizeof *g.key);
		g.val = ft_xcalloc(g.cap, sizeof *g.val);
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->val[i]) {
				uint32_t j = map_slot(&g, m->key[i], &found);
				g.key[j] = m->key[i];
				g.val[j] = m->val[i];
			}
		g.n = m->n;
		free(m->key);
		free(m->val);
		*m = g;
	}
	uint32_t i = map_slot(m, key, &found);
	if (!found)
		m->n++;
	m->key[i] = key;
	m->val[i] = idx + 1;
}

void ft_map_clear(struct ft_map *m)
{
	if (m->cap) {
		memset(m->val, 0, m->cap * sizeof *m->val);
		m->n = 0;
	}
}

void ft_map_free(struct ft_map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof *m);
}

/* prints s wrapped at 78 columns with the given indent; the first line
 * starts at column col0 (already printed) */
void ft_wrap_from(FILE *out, const char *s, int indent, int col0)
{
	int col = col0 > indent ? col0 - indent : 0;
	while (*s) {
		int w = (int)strcspn(s, " ");
		if (col && col + 1 + w > 78 - indent) {
			fputc('\n', out);
			col = 0;
		}
		if (!col)
			fprintf(out, "%*s", indent, "");
		else
			fputc(' ', out), col++;
		int room = 78 - indent;
		if (w > room && room > 12) {
			/* a path longer than the line: its middle elided (the
			 * JSON has it whole) */
			int head = (room - 3) / 3, tail = room - 3 - head;
			fwrite(s, 1, (size_t)head, out);
			fputs("...", out);
			fwrite(s + w - tail, 1, (size_t)tail, out);
			col += room;
		} else {
			fwrite(s, 1, (size_t)w, out);
			col += w;
		}
		s += w;
		while (*s == ' ')
			s++;
	}
	fputc('\n', out);
}

void ft_wrap(FILE *out, const char *s, int indent)
{
	ft_wrap_from(out, s, indent, 0);
}

FILE *ft_said_once(FILE *err)
{
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	return null ? null : err;
}
