/*
 * cli.c: the commands' shared command-line pieces (cli.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "symbolize.h"
#include "util.h"

void ft_cli_begin(struct ft_cli *c, const char *cmd, int argc, char **argv)
{
	/* getopt wants the program's name first */
	c->cmd = cmd;
	c->argc = argc + 1;
	c->argv = ft_xmalloc(sizeof *c->argv * (size_t)(argc + 2));
	c->argv[0] = (char *)cmd;
	for (int i = 0; i < argc; i++)
		c->argv[i + 1] = argv[i];
	c->argv[argc + 1] = NULL;
	c->mem = c->argv;
	optind = 1;
	opterr = 0;
}

void ft_cli_end(struct ft_cli *c)
{
	free(c->mem);
	c->argv = c->mem = NULL;
}

void ft_cli_bad(const struct ft_cli *c, int code)
{
	const char *arg = optind > 0 && optind <= c->argc ? c->argv[optind - 1] : "?";
	if (code == ':')
		fprintf(stderr, "feedtrace %s: %s needs a value\n", c->cmd, arg);
	else if (optopt > 0 && optopt < 256)
		fprintf(stderr, "feedtrace %s: unknown option -%c\n", c->cmd, optopt);
	else
		fprintf(stderr, "feedtrace %s: unknown option %s\n", c->cmd, arg);
}

int ft_cli_next(struct ft_cli *c, const char *shortopts, const struct option *opts,
		const struct ft_cli_shared *sh)
{
	for (;;) {
		int code = getopt_long(c->argc, c->argv, shortopts, opts, NULL), k = 0;
		if (code == -1 || !sh)
			return code;
		if (sh->an)
			k = ft_an_set_opt(sh->an, c->cmd, code, optarg);
		if (!k && sh->mg)
			k = ft_read_set_opt(sh->mg, sh->mixed, c->cmd, code, optarg);
		if (k < 0)
			return FT_CLI_BADVAL;
		if (!k)
			return code;
	}
}

int ft_an_set_opt(struct ft_an_opts *o, const char *cmd, int code, const char *arg)
{
	struct stat st;
	switch (code) {
	case FT_OPT_SYMBOLS:
		if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "feedtrace %s: --symbols needs a directory, not '%s'\n", cmd, arg);
			return -1;
		}
		ft_symbols_add_dir(arg);
		return 1;
	case FT_OPT_STEP_RANGE:
		if (!*arg) {
			fprintf(stderr, "feedtrace %s: --step-range needs a range name\n", cmd);
			return -1;
		}
		o->step_range = arg;
		return 1;
	case FT_OPT_GAP_MS: case FT_OPT_STORM_READS: case FT_OPT_STORM_WINDOW_MS:
	case FT_OPT_SMALL_READ: case FT_OPT_LOCK_MIN_MS: case FT_OPT_BIN_MS:
		break;
	default:
		return 0;
	}
	static const char *const names[] = { "--gap-ms", "--storm-reads", "--storm-window-ms",
					      "--small-read", "--lock-min-ms", "--bin-ms" };
	int k = code - FT_OPT_GAP_MS;
	int whole = code == FT_OPT_STORM_READS || code == FT_OPT_SMALL_READ;
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v >= 0) || v > 1e12 || (code != FT_OPT_LOCK_MIN_MS && v <= 0) ||
	    (whole && (v != (double)(uint64_t)v || v > 4e9))) {
		fprintf(stderr, "feedtrace %s: %s needs a positive %s, not '%s'\n", cmd, names[k],
			whole ? "whole number" : "number", arg);
		return -1;
	}
	uint64_t ms = (uint64_t)(v * 1e6 + 0.5);
	switch (code) {
	case FT_OPT_GAP_MS: o->gap_ns = ms; break;
	case FT_OPT_STORM_READS: o->storm_reads = (uint32_t)v; break;
	case FT_OPT_STORM_WINDOW_MS: o->storm_window_ns = ms; break;
	case FT_OPT_SMALL_READ: o->small_read = (uint32_t)v; break;
	case FT_OPT_LOCK_MIN_MS: o->lock_min_ns = ms; break;
	case FT_OPT_BIN_MS: o->bin_ns = ms ? ms : 1; break;
	}
	return 1;
}

int ft_read_set_opt(struct ft_merge_opts *mg, int *mixed, const char *cmd, int code,
		    const char *arg)
{
	if (code == FT_OPT_MIXED) {
		*mixed = 1;
		return 1;
	}
	if (code != FT_OPT_REORDER_MS)
		return 0;
	return ft_parse_ms(cmd, "--reorder-ms", arg, &mg->horizon_ns) != 0 ? -1 : 1;
}
