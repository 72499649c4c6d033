/*
 * main.c: the `feedtrace` command: dispatches to its subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "dump.h"

static void usage(FILE *out)
{
	fputs("usage: feedtrace COMMAND ...\n"
	      "  run [-o DIR] -- CMD [ARGS...]   run CMD under the tracer\n"
	      "  dump DIR [--json] [--summary]   print every recorded call and a tally\n"
	      "  convert DIR [-o FILE.pftrace]   write a Perfetto timeline with the findings\n"
	      "  report DIR [--json]             the verdict, findings and call sites\n"
	      "  diff BEFORE AFTER [--json] [-o FILE.pftrace]  compare two runs\n",
	      out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "dump") == 0)
		return ft_cmd_dump(argc - 2, argv + 2);
	if (strcmp(argv[1], "convert") == 0)
		return ft_cmd_convert(argc - 2, argv + 2);
	if (strcmp(argv[1], "report") == 0)
		return ft_cmd_report(argc - 2, argv + 2);
	if (strcmp(argv[1], "diff") == 0)
		return ft_cmd_diff(argc - 2, argv + 2);
	if (strcmp(argv[1], "run") == 0)
		return ft_cmd_run(argc - 2, argv + 2);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "feedtrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
