/*
 * cover.c: stretches of wall time (cover.h). Lists are merged by their
 * starts, never expanded into a grid: exact to the nanosecond, linear in
 * the intervals.
 */
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "util.h"

void ft_cover_add(struct ft_cover *c, uint64_t s, uint64_t e)
{
	if (e <= s)
		return;
	struct ft_iv *last = c->n ? &c->iv[c->n - 1] : NULL;
	if (last && s <= last->e) {
		if (e > last->e) {
			c->len += e - last->e;
			last->e = e;
		}
		return;
	}
	if (c->n == c->cap)
		FT_GROW(c->iv, c->cap, 8);
	c->iv[c->n++] = (struct ft_iv){ s, e };
	c->len += e - s;
}

static int by_start(const void *x, const void *y)
{
	const struct ft_iv *a = x, *b = y;
	return a->s < b->s ? -1 : a->s > b->s;
}

void ft_cover_put(struct ft_cover *c, uint64_t s, uint64_t e)
{
	if (e <= s)
		return;
	if (!c->n || s >= c->iv[c->n - 1].s) {
		ft_cover_add(c, s, e);
		return;
	}
	/* early: append, sort, merge again (rare: a call delivered late) */
	if (c->n == c->cap)
		FT_GROW(c->iv, c->cap, 8);
	c->iv[c->n++] = (struct ft_iv){ s, e };
	qsort(c->iv, (size_t)c->n, sizeof *c->iv, by_start);
	int n = c->n;
	c->n = 0;
	c->len = 0;
	for (int i = 0; i < n; i++)
		ft_cover_add(c, c->iv[i].s, c->iv[i].e);
}

void ft_cover_free(struct ft_cover *c)
{
	free(c->iv);
	memset(c, 0, sizeof *c);
}

void ft_cover_merge(struct ft_cover *out, const struct ft_cover *a, const struct ft_cover *b)
{
	int i = 0, j = 0;
	while (i < a->n || j < b->n) {
		const struct ft_iv *x = j >= b->n || (i < a->n && a->iv[i].s <= b->iv[j].s)
					? &a->iv[i++] : &b->iv[j++];
		ft_cover_add(out, x->s, x->e);
	}
}

/* the length of [s, e) within b, from b's interval *at on (s never
 * earlier than an earlier call's s: *at only moves forward) */
static uint64_t within(const struct ft_cover *b, int *at, uint64_t s, uint64_t e)
{
	while (*at < b->n && b->iv[*at].e <= s)
		(*at)++;
	uint64_t len = 0;
	for (int i = *at; i < b->n && b->iv[i].s < e; i++) {
		uint64_t x = b->iv[i].s > s ? b->iv[i].s : s;
		uint64_t y = b->iv[i].e < e ? b->iv[i].e : e;
		len += y > x ? y - x : 0;
	}
	return len;
}

uint64_t ft_cover_union_within(const struct ft_iv *const *iv, const int *n, int k,
			       const struct ft_cover *b)
{
	int *pos = ft_xcalloc((size_t)k + 1, sizeof *pos);
	uint64_t len = 0, s = 0, e = 0;
	int open = 0, at = 0;
	for (;;) {
		int m = -1;                     /* the list whose next interval starts first */
		for (int i = 0; i < k; i++)
			if (pos[i] < n[i] && (m < 0 || iv[i][pos[i]].s < iv[m][pos[m]].s))
				m = i;
		if (m < 0)
			break;
		struct ft_iv x = iv[m][pos[m]++];
		if (open && x.s <= e) {
			if (x.e > e)
				e = x.e;
			continue;
		}
		if (open)
			len += b ? within(b, &at, s, e) : e - s;
		s = x.s, e = x.e, open = 1;
	}
	if (open)
		len += b ? within(b, &at, s, e) : e - s;
	free(pos);
	return len;
}

uint64_t ft_cover_union(const struct ft_iv *const *iv, const int *n, int k)
{
	return ft_cover_union_within(iv, n, k, NULL);
}
