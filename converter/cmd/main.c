/*
 * main.c: the `feedtrace` command: dispatches to its subcommands, and
 * fails (one line, non-zero exit) when its standard output could not be
 * written. Never prints anything of its own on stdout but the usage and
 * the version.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "format.h"

#define FT_VERSION "0.9"

/* The commands: a new one is its file (cmds.h) and one line here; the
 * help is what follows the name on its line of the usage text. */
static const struct ft_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "run", ft_cmd_run, " [-o DIR] [--append] -- CMD   run CMD under the tracer (run --help)" },
	{ "dump", ft_cmd_dump, " DIR [--json] [--summary]   print every recorded call and a tally" },
	{ "convert", ft_cmd_convert, " DIR [-o FILE.pftrace]   write a Perfetto timeline with the findings" },
	{ "report", ft_cmd_report, " DIR [--json] [--fail-if C]  the verdict, findings and call sites" },
	{ "diff", ft_cmd_diff, " BEFORE.. [--] AFTER.. [--json] [--fail-if C] [-o F]  compare runs" },
	{ "ranks", ft_cmd_ranks, " SUMMARY.json|DIR... [--json]  which rank starves a job of ranks" },
	{ "open", ft_cmd_open, " RUN|FILE.pftrace [--no-browser]  the timeline in the Perfetto UI" },
	{ "capture", ft_cmd_capture, " PID|RUN_DIR [--steps N|--seconds S]  record a window of a running job" },
	{ "flight", ft_cmd_flight, " PID|RUN_DIR               a flight recorder's window, now (flight --help)" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
	fputs("usage: feedtrace COMMAND ...\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %s%s\n", commands[i].name, commands[i].help);
	fputs("Each command takes --help. Without the command: LD_PRELOAD=libfeedtrace.so\n"
	      "CMD traces CMD into ./feedtrace-DATE-TIME-PID (FEEDTRACE_OUT=DIR chooses);\n"
	      "FEEDTRACE_HOOKS, FEEDTRACE_BUF_KB, FEEDTRACE_MEM_MB, FEEDTRACE_FLUSH_MS,\n"
	      "FEEDTRACE_STACK_DEPTH, FEEDTRACE_REDACT tune it; FEEDTRACE_CAPTURE says when\n"
	      "it records (README.md).\n"
	      "  --version                        the version and trace format\n",
	      out);
}

/* What the command printed must have reached its output (a full disk,
 * /dev/full, a closed file): else one line and a non-zero status. */
static int finish_stdout(int rc)
{
	errno = 0;
	int failed = fflush(stdout) != 0;
	int e = errno;
	failed |= ferror(stdout) != 0;
	if (fclose(stdout) != 0 && !failed) {
		failed = 1;
		e = errno;
	}
	if (!failed)
		return rc;
	if (e)
		fprintf(stderr, "feedtrace: cannot write the output: %s\n", strerror(e));
	else
		fprintf(stderr, "feedtrace: cannot write the output (a write failed)\n");
	return rc ? rc : 1;
}

static int dispatch(int argc, char **argv)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 2, argv + 2);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("feedtrace %s (trace format %d)\n", FT_VERSION, FT_FORMAT_VERSION);
		return 0;
	}
	fprintf(stderr, "feedtrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	return finish_stdout(dispatch(argc, argv));
}
