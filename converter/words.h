/*
 * words.h: the English of the model's decisions (words.c). The model
 * (verdict.c, report.c) decides and keeps plain structs with enums and
 * figures; these put them into the sentences the text, JSON and HTML
 * writers print. Nothing here decides.
 */
#ifndef FT_WORDS_H
#define FT_WORDS_H

#include <stddef.h>

#include "analysis.h"

/* a process's verdict v (its say, limit and figures) as one sentence */
void ft_words_verdict(const struct ft_verdict *v, char *out, size_t cap);

#endif
