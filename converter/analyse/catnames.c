/*
 * catnames.c: the names of the time categories (enum ft_cat) and of a
 * storm's read-size bins (analysis.h), apart from the analyses so that
 * the finding kinds' files (fk_*.c), which analysis.c drives, read them
 * without calling back into it.
 */
#include "analysis.h"

const char *const ft_cat_name[FT_CAT_N] = {
	"submit", "gpu_wait", "hidden_sync", "io", "locks", "data_wait", "other_ranks",
	"other_cpu", "runq" };
const char *const ft_cat_label[FT_CAT_N] = {
	"submitting", "waiting on GPU", "hidden sync", "file I/O", "locks",
	"waiting for data", "other ranks", "other CPU", "waiting for a core" };
const char *const ft_storm_hist_label[FT_STORM_HIST] = {
	"<512", "<1K", "<4K", "<16K", "<64K", "<256K", "<1M", ">=1M" };
