/*
 * fkind.c: the table of finding kinds (fkinds.def) and what every
 * consumer asks of a finding through it (fkind.h).
 */
#include "fkind.h"
#include "report_model.h"

const struct ft_fkind_ops *const ft_fkinds[FT_FK_N] = {
#define FKIND(name, ops) [FT_FK_##name] = &ops,
#include "fkinds.def"
#undef FKIND
};

const char *ft_finding_suggestion(const struct ft_finding *f)
{
	return ft_fkind(f)->suggestion(f);
}

const char *ft_finding_advice(const struct ft_report *r, const struct ft_finding *f)
{
	const struct ft_fkind_ops *k = ft_fkind(f);
	return k->advice ? k->advice(r, f) : k->suggestion(f);
}

uint64_t ft_finding_cost(const struct ft_report *r, const struct ft_finding *f)
{
	const struct ft_fkind_ops *k = ft_fkind(f);
	if (!k->cost)
		return f->lost_ns;
	const struct ft_verdict *v = NULL;
	for (int i = 0; i < r->nprocs && !v; i++)
		if (r->procs[i].pid == f->pid)
			v = &r->procs[i].v;
	return k->cost(v, f);
}

void ft_finding_label(const struct ft_finding *f, char *buf, size_t cap)
{
	ft_fkind(f)->label(f, buf, cap);
}
