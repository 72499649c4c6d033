/*
 * stepfigs.c: a run's step figures, as stepfigs.def lists them: their
 * table and the value of each.
 */
#include "stepfigs.h"

const struct ft_stepfig_info ft_stepfigs[FT_SF_N] = {
#define STEPFIG(id, key, type, value) [FT_SF_##id] = { key, FT_SF_##type },
#include "stepfigs.def"
#undef STEPFIG
};

double ft_per_step(const struct ft_metrics *m, uint64_t x)
{
	return m->steps ? (double)x / (double)m->steps : 0;
}

const char *ft_steps_from(const struct ft_metrics *m)
{
	return m->steps_from_optimizer ? "optimizer" : m->steps_from_batches ? "batches" : "ranges";
}

/* a value of type t into its member of v */
#define SET_COUNT(v, x) ((v).count = (x))
#define SET_RATE(v, x) ((v).rate = (x))
#define SET_TEXT(v, x) ((v).text = (x))

struct ft_stepval ft_stepfig(const struct ft_metrics *m, enum ft_stepfig k)
{
	struct ft_stepval v = { 0, 0, NULL };
	switch (k) {
#define STEPFIG(id, key, type, value) case FT_SF_##id: SET_##type(v, value); break;
#include "stepfigs.def"
#undef STEPFIG
	case FT_SF_N:
		break;
	}
	return v;
}
