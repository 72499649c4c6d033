/*
 * cmd_report.c: `feedtrace report DIR`: its options (one getopt_long
 * table, the analysis and reading options shared through cli.h), then the
 * report built (report_model.c, worded: report.h) and printed as text or JSON, the budgets of
 * --fail-if decided (gate.c) and written (gate_out.c) and the page of --html written (html.c).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cmds.h"
#include "gate_out.h"
#include "report.h"

static const char report_usage[] =
	"usage: feedtrace report DIR [--json] [--html FILE] [--fail-if COND]... [options]\n"
	"The verdict (which feed limits the run), the problems found with what to\n"
	"change, and the call sites (docs/ANALYSES.md; --json: docs/REPORT-SCHEMA.md).\n"
	"  --json               machine-readable\n"
	"  --fail-if 'C'        exit 1 when C holds ('hidden_syncs_per_step > 0')\n"
	"  --junit FILE         the --fail-if results as JUnit XML\n"
	"  --html FILE          also the report as one self-contained page (charts\n"
	"                       drawn inline: opens offline, prints, attaches)\n"
	FT_READ_HELP
	"  --quiet              no progress line (shown on a terminal only)\n"
	"  -h, --help           this text\n%s"
	"Example: feedtrace report t1 --fail-if 'storms > 0'\n";

int ft_cmd_report(int argc, char **argv)
{
	enum { JSON = FT_OPT_OWN, FAIL_IF, JUNIT, HTML, QUIET };
	static const struct option opts[] = {
		FT_AN_LONGOPTS, FT_READ_LONGOPTS,
		{ "json", no_argument, NULL, JSON },
		{ "fail-if", required_argument, NULL, FAIL_IF },
		{ "junit", required_argument, NULL, JUNIT },
		{ "html", required_argument, NULL, HTML },
		{ "quiet", no_argument, NULL, QUIET },
		FT_HELP_LONGOPTS,
	};
	struct ft_an_opts o;
	struct ft_merge_opts mg = { 0, 0 };
	int quiet = 0;
	const char *dir = NULL, *junit = NULL, *html = NULL;
	int json = 0, ng = 0, mixed = 0, c;
	static struct ft_gate g[FT_GATE_MAX];
	ft_an_default_opts(&o);
	struct ft_cli cli;
	ft_cli_begin(&cli, "report", argc, argv);
	const struct ft_cli_shared sh = { &o, &mg, &mixed };
	while ((c = ft_cli_next(&cli, ":h", opts, &sh)) != -1) {
		switch (c) {
		case FT_CLI_BADVAL: goto bad;
		case JSON: json = 1; break;
		case FAIL_IF:
			if (ng == FT_GATE_MAX ||
			    ft_gate_error(&g[ng], ft_gate_parse(&g[ng], optarg), stderr) != 0)
				goto bad;
			ng++;
			break;
		case JUNIT: junit = optarg; break;
		case HTML: html = optarg; break;
		case QUIET: quiet = 1; break;
		case 'h':
			fprintf(stdout, report_usage, ft_an_opts_help);
			ft_cli_end(&cli);
			return 0;
		default:
			ft_cli_bad(&cli, c);
			fprintf(stderr, report_usage, ft_an_opts_help);
			goto bad;
		}
	}
	if (optind < cli.argc)
		dir = cli.argv[optind];
	if (!dir || optind + 1 < cli.argc) {
		if (dir)
			fprintf(stderr, "feedtrace report: one run directory only (%s, %s)\n", dir,
				cli.argv[optind + 1]);
		fprintf(stderr, report_usage, ft_an_opts_help);
		goto bad;
	}
	ft_cli_end(&cli);
	struct ft_report r;
	struct ft_progress pg;
	ft_progress_init(&pg, quiet);
	ft_report_progress(&pg);
	int built = ft_report_build(&r, dir, &o, &mg, stderr);
	ft_report_progress(NULL);
	ft_progress_end(&pg, 0);           /* cleared: the report follows */
	if (built != 0) {
		fprintf(stderr, "feedtrace report: nothing to report\n");
		return ng ? 2 : 1;
	}
	if (!mixed && ft_trace_one_run(&r.tr, "report", stderr) != 0) {
		ft_report_free(&r);
		return 2;
	}
	/* budgets (gate.c): exit 1 when one is exceeded, 2 on a bad one */
	int rc = 0;
	struct ft_report *rp = &r;
	for (int i = 0; i < ng && rc != 2; i++)
		if (ft_gate_error(&g[i], ft_gate_eval(&g[i], NULL, 0, &rp, 1, NULL, NULL),
				  stderr) != 0)
			rc = 2;
		else if (g[i].holds)
			rc = 1;
	if (rc != 2 && junit && ft_gate_junit(g, ng, "feedtrace.report", junit) != 0)
		rc = 2;
	if (rc != 2 && html && ft_report_html(&r, html) != 0)
		rc = 1;
	if (rc != 2 && json)
		ft_report_json(&r, stdout);
	else if (rc != 2)
		ft_report_text(&r, stdout);
	if (rc != 2 && ng)
		ft_gate_print(g, ng, json ? stderr : stdout);
	ft_report_free(&r);
	return rc;
bad:
	ft_cli_end(&cli);
	return 2;
}
