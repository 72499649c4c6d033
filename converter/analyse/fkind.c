/*
 * fkind.c: the table of finding kinds (fkinds.def) and what every
 * consumer asks of a finding through it (fkind.h).
 */
#include "fkind.h"

const struct ft_fkind_ops *const ft_fkinds[FT_FK_N] = {
#define FKIND(name, ops) [FT_FK_##name] = &ops,
#include "fkinds.def"
#undef FKIND
};

const char *ft_finding_suggestion(const struct ft_finding *f)
{
	return ft_fkind(f)->suggestion(f);
}

void ft_finding_label(const struct ft_finding *f, char *buf, size_t cap)
{
	ft_fkind(f)->label(f, buf, cap);
}
