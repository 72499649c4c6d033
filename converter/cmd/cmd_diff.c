/*
 * cmd_diff.c: `feedtrace diff A.. [-- B..] [--json] [--fail-if C].. [--junit
 * F] [-o FILE.pftrace] [--html F]`: its options (one getopt_long table;
 * the analysis and reading options from cli.h) and the run directories of
 * each side, then the comparison (diff_write.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "diff_write.h"
#include "gate_out.h"

static const char usage_text[] =
	"usage: feedtrace diff BEFORE AFTER [options]\n"
	"       feedtrace diff BEFORE... -- AFTER... [options]   several runs per side\n"
	"  --json             machine-readable (docs/REPORT-SCHEMA.md)\n"
	"  --fail-if 'C'      exit 1 when C holds, e.g. 'step_time > +5%%' or\n"
	"                     'hidden_syncs_per_step > 0' (repeatable; docs/ANALYSES.md)\n"
	"  --junit FILE       the --fail-if results as JUnit XML\n"
	"  -o FILE.pftrace    both runs in one timeline\n"
	"  --html FILE        also both runs side by side as one self-contained page\n"
	FT_READ_HELP
	"  -h, --help         this text\n%s"
	"Example: feedtrace diff before/ after/ --fail-if 'step_time > +5%%'\n";

int ft_cmd_diff(int argc, char **argv)
{
	enum { JSON = FT_OPT_OWN, JUNIT, FAIL_IF, HTML };
	static const struct option opts[] = {
		FT_AN_LONGOPTS, FT_READ_LONGOPTS,
		{ "json", no_argument, NULL, JSON },
		{ "out", required_argument, NULL, 'o' },
		{ "junit", required_argument, NULL, JUNIT },
		{ "fail-if", required_argument, NULL, FAIL_IF },
		{ "html", required_argument, NULL, HTML },
		FT_HELP_LONGOPTS,
	};
	static struct ft_gate gates[FT_GATE_MAX];
	static struct ft_diff_args a;
	int bad = 0, npos = 0, c;
	memset(&a, 0, sizeof a);
	ft_an_default_opts(&a.an);
	a.gates = gates;
	int sep = 0;                                      /* a "--" is coming */
	for (int i = 0; i < argc; i++)
		sep |= !strcmp(argv[i], "--");
	struct ft_cli cli;
	ft_cli_begin(&cli, "diff", argc, argv);
	/* "-" first: the run directories come back in order (code 1). A "--"
	 * ends getopt's scan: what follows is parsed again as the after side,
	 * options still allowed there */
	int side = 0;                     /* 1: past the "--" */
	const struct ft_cli_shared sh = { &a.an, &a.mg, &a.mixed };
	for (;;) {
		c = ft_cli_next(&cli, "-:o:h", opts, &sh);
		if (c == -1) {
			if (side || optind >= cli.argc)
				break;
			if (!sep) {
				bad = 1;
				break;
			}
			/* the rest, with a name in front, from its start */
			int from = optind;
			cli.argv[from - 1] = (char *)cli.cmd;
			cli.argv += from - 1;
			cli.argc -= from - 1;
			optind = 0;
			side = 1;
			continue;
		}
		switch (c) {
		case FT_CLI_BADVAL: goto fail;
		case 1: {                      /* BEFORE AFTER, or BEFORE... -- AFTER... */
			int j = side ? 1 : sep ? 0 : npos++;
			if (!sep && npos > 2)
				bad = 1;
			else if (a.ndirs[j] == FT_DIFF_MAX_RUNS) {
				fprintf(stderr, "feedtrace diff: at most %d runs per side\n",
					FT_DIFF_MAX_RUNS);
				goto fail;
			} else
				a.dirs[j][a.ndirs[j]++] = optarg;
			break;
		}
		case JSON: a.json = 1; break;
		case 'o': a.out = optarg; break;
		case JUNIT: a.junit = optarg; break;
		case HTML: a.html = optarg; break;
		case FAIL_IF:
			if (a.ngates == FT_GATE_MAX ||
			    ft_gate_error(&gates[a.ngates], ft_gate_parse(&gates[a.ngates], optarg),
					  stderr) != 0)
				goto fail;
			a.ngates++;
			break;
		case 'h':
			fprintf(stdout, usage_text, ft_an_opts_help);
			ft_cli_end(&cli);
			return 0;
		default:
			ft_cli_bad(&cli, c);
			bad = 1;
		}
	}
	ft_cli_end(&cli);
	if (bad || !a.ndirs[0] || !a.ndirs[1]) {
		fprintf(stderr, usage_text, ft_an_opts_help);
		return 2;
	}
	return ft_diff(&a);
fail:
	ft_cli_end(&cli);
	return 2;
}
