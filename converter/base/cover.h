/*
 * cover.h: stretches of wall time (cover.c): the sorted, disjoint
 * intervals some calls covered, grown from calls in start order; the
 * length of several lists' union and of two lists' intersection. What a
 * row's wall time across processes and the feeding threads' share of it
 * are computed from (docs/ANALYSES.md, "Problems").
 */
#ifndef FT_COVER_H
#define FT_COVER_H

#include <stdint.h>

struct ft_iv { uint64_t s, e; };

struct ft_cover {
	struct ft_iv *iv;         /* sorted, disjoint, none empty */
	int n, cap;
	uint64_t len;             /* their lengths summed */
};

/* [s, e) joins c; s no earlier than the start of any interval already in c */
void ft_cover_add(struct ft_cover *c, uint64_t s, uint64_t e);
/* [s, e) joins c, in any order (c re-sorted when it comes early) */
void ft_cover_put(struct ft_cover *c, uint64_t s, uint64_t e);
void ft_cover_free(struct ft_cover *c);
/* out (empty) becomes the union of a and b */
void ft_cover_merge(struct ft_cover *out, const struct ft_cover *a, const struct ft_cover *b);
/* the length of the union of k lists (list i: iv[i], n[i] intervals) */
uint64_t ft_cover_union(const struct ft_iv *const *iv, const int *n, int k);
/* the length of the union of k lists that lies within cover b */
uint64_t ft_cover_union_within(const struct ft_iv *const *iv, const int *n, int k,
			       const struct ft_cover *b);

#endif
