/*
 * words.h: the English of the model's decisions (words.c). The model
 * (verdict.c, report.c) decides and keeps plain structs with enums and
 * figures; these put them into the sentences the text, JSON and HTML
 * writers print. Nothing here decides about the run: only which words
 * and figures say what was decided.
 */
#ifndef FT_WORDS_H
#define FT_WORDS_H

#include <stddef.h>

#include "analysis.h"
#include "mapped.h"
#include "report.h"

/* a process's verdict v (its say, limit and figures) as one sentence */
void ft_words_verdict(const struct ft_verdict *v, char *out, size_t cap);
/* the run verdict's detail (rv's detail_say, data_cause, producers and
 * the flags beside them; v: the main process's verdict; m: the run's
 * mapped data, named for mapped I/O) */
void ft_words_detail(const struct ft_run_verdict *rv, const struct ft_verdict *v,
		     const struct ft_mapped *m, char *out, size_t cap);

#endif
