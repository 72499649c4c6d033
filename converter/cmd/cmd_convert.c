/*
 * cmd_convert.c: `feedtrace convert DIR [-o FILE]`: its options (one
 * getopt_long table; the analysis and reading options from cli.h), then
 * the run converted (convert.c) into a file that appears whole or not at
 * all (outfile.c), and one line of what was written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rankpick.h"
#include "cmds.h"
#include "convert.h"
#include "outfile.h"
#include "symbolize.h"

static void usage_to(FILE *out)
{
	fprintf(out, "usage: feedtrace convert DIR [-o FILE.pftrace] [options]\n"
		"The run in DIR as a Perfetto timeline (default DIR.pftrace), findings\n"
		"included; open it at https://ui.perfetto.dev.\n%s"
		FT_READ_HELP
		"  --threads N          1: convert on one thread; 2 (the default, or 1\n"
		"                       with a single CPU usable): read, merge and analyse\n"
		"                       on one, encode and write the Perfetto file on the\n"
		"                       other (the output is the same byte for byte)\n"
		"  --ranks LIST         only the processes of these ranks (0,5 or 0-3,8:\n"
		"                       the straggler beside a typical rank), on the\n"
		"                       lowest one's host's clock (docs/ANALYSES.md, \"Ranks\")\n"
		"  --quiet              no progress line\n"
		"  -h, --help           this text\n"
		"Example: feedtrace convert t1 -o t1.pftrace\n", ft_an_opts_help);
}

static void usage(void)
{
	usage_to(stderr);
}

int ft_cmd_convert(int argc, char **argv)
{
	enum { THREADS = FT_OPT_OWN, QUIET, RANKS };
	static const struct option opts[] = {
		FT_AN_LONGOPTS, FT_READ_LONGOPTS,
		{ "out", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, THREADS },
		{ "ranks", required_argument, NULL, RANKS },
		{ "quiet", no_argument, NULL, QUIET },
		FT_HELP_LONGOPTS,
	};
	struct ft_conv_opts o;
	memset(&o, 0, sizeof o);
	ft_an_default_opts(&o.an);
	int quiet = 0;
	const char *dir = NULL, *out = NULL, *ranks = NULL;
	int mixed = 0, c;
	struct ft_cli cli;
	ft_cli_begin(&cli, "convert", argc, argv);
	const struct ft_cli_shared sh = { &o.an, &o.mg, &mixed };
	while ((c = ft_cli_next(&cli, ":o:h", opts, &sh)) != -1) {
		switch (c) {
		case FT_CLI_BADVAL: goto bad;
		case 'o': out = optarg; break;
		case THREADS: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || end == optarg || n < 1 || n > 2) {
				fprintf(stderr, "feedtrace convert: --threads: 1 or 2, not '%s'\n", optarg);
				goto bad;
			}
			o.threads = (int)n;
			break;
		}
		case QUIET: quiet = 1; break;
		case RANKS: ranks = optarg; break;
		case 'h':
			usage_to(stdout);
			ft_cli_end(&cli);
			return 0;
		default:
			ft_cli_bad(&cli, c);
			usage();
			goto bad;
		}
	}
	if (optind + 1 == cli.argc)
		dir = cli.argv[optind];
	ft_cli_end(&cli);
	if (!dir) {
		usage();
		return 2;
	}
	char def[4096];
	if (!out) {
		size_t l = strlen(dir);
		while (l > 1 && dir[l - 1] == '/')
			l--;
		snprintf(def, sizeof def, "%.*s.pftrace", (int)l, dir);
		out = def;
	}
	struct ft_progress pg;
	ft_progress_init(&pg, quiet);
	o.progress = pg.on ? &pg : NULL;
	struct ft_trace tr;
	if (ft_trace_open(dir, &tr, stderr) != 0) {
		fprintf(stderr, "feedtrace convert: nothing to convert\n");
		return 1;
	}
	/* ranks traced apart are runs of their own: with --ranks, one job */
	if (!mixed && !ranks && ft_trace_one_run(&tr, "convert", stderr) != 0) {
		ft_trace_close(&tr);
		return 2;
	}
	int64_t *shift = NULL;                 /* --ranks: each process onto one clock */
	if (ranks && ft_rank_pick(&tr, ranks, mixed, &o.an, &o.mg, &shift, stderr) != 0) {
		ft_trace_close(&tr);
		return 2;
	}
	o.proc_shift = shift;
	struct ft_outfile of;
	if (ft_out_open(&of, out, "convert") != 0) {
		ft_trace_close(&tr);
		free(shift);
		return 1;
	}
	struct pf_writer *w = pf_open(ft_out_path(&of));
	if (!w) {
		fprintf(stderr, "feedtrace convert: %s: %s\n", out, strerror(errno));
		ft_out_close(&of, 0);
		ft_trace_close(&tr);
		free(shift);
		return 1;
	}
	struct ft_conv_stats st;
	memset(&st, 0, sizeof st);
	ft_conv_clock(w, &tr);
	ft_conv_trace(w, &tr, &o, stderr, &st);
	struct pf_stats ps;
	pf_get_stats(w, &ps);
	int rc = pf_close(w) ? 1 : 0;
	if (rc)
		fprintf(stderr, "feedtrace convert: %s: write failed; no file written\n", out);
	if (ft_out_close(&of, !rc) != 0)
		rc = 1;
	if (!rc)
		fprintf(stderr, "feedtrace convert: %s: %d processes, %llu events, %llu slices, "
			"%llu findings, %llu flows, %llu bytes%s\n", out, tr.nprocs,
			(unsigned long long)st.events, (unsigned long long)st.slices,
			(unsigned long long)st.findings, (unsigned long long)st.flows,
			(unsigned long long)ps.bytes, tr.errors ? " (damaged input: see above)" : "");
	if (st.dropped)
		fprintf(stderr, "feedtrace convert: %llu events were dropped while recording\n",
			(unsigned long long)st.dropped);
	if (st.lane_overflow)
		fprintf(stderr, "feedtrace convert: %llu slices left out: more than %d overlapping\n",
			(unsigned long long)st.lane_overflow, FT_CONV_MAX_LANES);
	ft_symbols_print_notes(stderr, "feedtrace convert: ");
	ft_trace_close(&tr);
	free(shift);
	return rc;
bad:
	ft_cli_end(&cli);
	return 2;
}
