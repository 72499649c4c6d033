/*
 * stepfigs.h: a run's step figures (stepfigs.def, computed by
 * stepfigs.c): their keys and types for the report's JSON and --fail-if,
 * and each one's value.
 */
#ifndef FT_STEPFIGS_H
#define FT_STEPFIGS_H

#include <stdint.h>

#include "analysis.h"

/* the decimals a RATE figure is written with (and compared at) */
#define FT_STEP_PLACES 4

enum ft_stepfig {
#define STEPFIG(id, key, type, value) FT_SF_##id,
#include "stepfigs.def"
#undef STEPFIG
	FT_SF_N
};

enum ft_stepfig_type { FT_SF_COUNT, FT_SF_RATE, FT_SF_TEXT };

struct ft_stepfig_info {
	const char *key;
	enum ft_stepfig_type type;
};
extern const struct ft_stepfig_info ft_stepfigs[FT_SF_N];

/* a figure's value: the member its type says */
struct ft_stepval {
	uint64_t count;
	double rate;
	const char *text;
};

/* figure k of m, a run with steps (m->steps > 0) */
struct ft_stepval ft_stepfig(const struct ft_metrics *m, enum ft_stepfig k);
/* x per step of m; 0 without steps */
double ft_per_step(const struct ft_metrics *m, uint64_t x);
/* what m's steps were counted from: "optimizer", "batches" or "ranges" */
const char *ft_steps_from(const struct ft_metrics *m);

#endif
