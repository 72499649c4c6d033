/*
 * cli.h: what the commands share on their command lines (uftrace's way:
 * each command one getopt_long table, built from these pieces). The
 * analysis options, --reorder-ms and --mixed as table entries with their
 * codes, --help and the end as every table's last entries; getopt_long
 * over a command's arguments, the shared options taken on the way
 * (ft_cli_next); one line for a bad one.
 */
#ifndef FT_CLI_H
#define FT_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <time.h>

#include "analysis.h"
#include "merge.h"
#include "progress.h"

enum {
	FT_OPT_GAP_MS = 256, FT_OPT_STORM_READS, FT_OPT_STORM_WINDOW_MS, FT_OPT_SMALL_READ,
	FT_OPT_LOCK_MIN_MS, FT_OPT_BIN_MS, FT_OPT_SYMBOLS, FT_OPT_STEP_RANGE,
	FT_OPT_REORDER_MS, FT_OPT_MIXED, FT_OPT_OWN            /* a command's own from here */
};

/* the analysis options (ft_an_opts_help lists them) */
#define FT_AN_LONGOPTS \
	{ "gap-ms", required_argument, NULL, FT_OPT_GAP_MS }, \
	{ "storm-reads", required_argument, NULL, FT_OPT_STORM_READS }, \
	{ "storm-window-ms", required_argument, NULL, FT_OPT_STORM_WINDOW_MS }, \
	{ "small-read", required_argument, NULL, FT_OPT_SMALL_READ }, \
	{ "lock-min-ms", required_argument, NULL, FT_OPT_LOCK_MIN_MS }, \
	{ "bin-ms", required_argument, NULL, FT_OPT_BIN_MS }, \
	{ "symbols", required_argument, NULL, FT_OPT_SYMBOLS }, \
	{ "step-range", required_argument, NULL, FT_OPT_STEP_RANGE }
#define FT_READ_LONGOPTS \
	{ "reorder-ms", required_argument, NULL, FT_OPT_REORDER_MS }, \
	{ "mixed", no_argument, NULL, FT_OPT_MIXED }
/* every table's end: -h, --help (code 'h') and the terminator */
#define FT_HELP_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ NULL, 0, NULL, 0 }
#define FT_READ_HELP \
	"  --reorder-ms MS      merge window across threads (1000)\n" \
	"  --mixed              read files of several runs together (refused else)\n"

/* A command's arguments (after its name) as getopt_long wants them. */
struct ft_cli { const char *cmd; int argc; char **argv, **mem; };
void ft_cli_begin(struct ft_cli *c, const char *cmd, int argc, char **argv);
void ft_cli_end(struct ft_cli *c);
/* the one line for getopt_long's '?' (an unknown option) or ':' (a value
 * missing: the short options start with ':') */
void ft_cli_bad(const struct ft_cli *c, int code);

/* The shared options a command takes (its table holds their entries):
 * an for FT_AN_LONGOPTS, mg and mixed for FT_READ_LONGOPTS; NULL: none. */
struct ft_cli_shared {
	struct ft_an_opts *an;
	struct ft_merge_opts *mg;
	int *mixed;
};
enum { FT_CLI_BADVAL = -2 };
/* getopt_long's next code over the command's arguments, the shared
 * options taken into sh on the way: a code of the command's own (or '?',
 * ':', 1 as getopt_long gives them), -1 at the end, FT_CLI_BADVAL after a
 * shared option's bad value (its line printed) */
int ft_cli_next(struct ft_cli *c, const char *shortopts, const struct option *opts,
		const struct ft_cli_shared *sh);

/* an analysis option's code and value into o: 1 taken, 0 not one, -1 a bad
 * value (one line printed) */
int ft_an_set_opt(struct ft_an_opts *o, const char *cmd, int code, const char *arg);
/* --reorder-ms, --mixed: 1 taken, 0 not one, -1 bad */
int ft_read_set_opt(struct ft_merge_opts *mg, int *mixed, const char *cmd, int code,
		    const char *arg);

#endif
