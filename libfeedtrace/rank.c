/*
 * rank.c: which rank of a distributed job this process is, from its
 * launcher's environment, read once at start-up (never from a hook) and
 * written in every file header (output.c). DataLoader workers and other
 * children inherit the environment, so they carry their rank's identity.
 * A process that several launchers describe (torchrun under srun) takes
 * the first in this list: the framework's own rank before the
 * scheduler's.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "format.h"
#include "internal.h"
#include "log.h"

/* LAUNCHER(kind, rank, local rank, world size, job id or NULL) */
#define LAUNCHERS(X)                                                                     \
	X(FT_LAUNCH_TORCH, "RANK", "LOCAL_RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID")     \
	X(FT_LAUNCH_MPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",             \
	  "OMPI_COMM_WORLD_SIZE", NULL)                                                   \
	X(FT_LAUNCH_PMI, "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", NULL)                 \
	X(FT_LAUNCH_SLURM, "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_JOB_ID")

struct ft_rank ft_rank;

static const struct {
	uint32_t kind;
	const char *rank, *local, *size, *job;
} launchers[] = {
#define ROW(k, r, l, s, j) { k, r, l, s, j },
	LAUNCHERS(ROW)
#undef ROW
};

/* a launcher's number: 0 to 2^24; -1 unset; -2 not a number (said) */
static int32_t number(const char *var)
{
	const char *v = getenv(var);
	uint32_t x;
	if (!v)
		return -1;
	if (ft_parse_u32(v, 0, 1u << 24, &x) != 0) {
		ft_log("feedtrace: %s=\"%.40s\" is not a rank number; no rank recorded", var, v);
		return -2;
	}
	return (int32_t)x;
}

void ft_rank_load(void)
{
	memset(&ft_rank, 0, sizeof ft_rank);
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
		int32_t r = number(launchers[i].rank), n = number(launchers[i].size);
		if (r == -1 && n == -1)
			continue;               /* not this launcher */
		if (r == -2 || n == -2)
			return;                 /* said above */
		if (r < 0 || n <= 0 || r >= n) {
			ft_log("feedtrace: %s and %s do not make a rank of a world (%d of %d); "
			       "no rank recorded", launchers[i].rank, launchers[i].size, r, n);
			return;
		}
		int32_t l = number(launchers[i].local);
		ft_rank.rank = r;
		ft_rank.world_size = n;
		ft_rank.local_rank = l >= 0 ? l : -1;
		ft_rank.launcher = launchers[i].kind;
		const char *job = launchers[i].job ? getenv(launchers[i].job) : NULL;
		if (job)
			strncpy(ft_rank.job, job, sizeof ft_rank.job - 1);
		return;
	}
}
