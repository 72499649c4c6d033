/*
 * cmd_capture.c: `feedtrace capture PID|RUN_DIR [--steps N | --seconds S]`:
 * asks every traced process of a run that is not recording
 * (FEEDTRACE_CAPTURE=off, or between its windows) to record now. Writes
 * the request RUN_DIR/capture.req (a new file put in place by rename, so
 * that no reader sees half of it); each process's flusher looks for it
 * every cycle (libfeedtrace/capture.c, docs/ARCHITECTURE.md "Capture
 * windows"). A PID names the run directory its trace file is in.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"

static const char capture_usage[] =
	"usage: feedtrace capture PID|RUN_DIR [--steps N | --seconds S]\n"
	"Starts a capture window in every traced process of a run started with\n"
	"FEEDTRACE_CAPTURE=off (or between its windows): the processes that count\n"
	"steps start at the same step, soon after, for N steps (10 unless said); the\n"
	"DataLoader workers follow their main process; processes without steps record\n"
	"for S seconds, or until the others' window ends (docs/ARCHITECTURE.md,\n"
	"\"Capture windows\"). A PID names the run directory its trace file is in.\n"
	"  --steps N            the window's steps (1 to 1000000)\n"
	"  --seconds S          a window of S seconds (0.01 to 86400) instead\n"
	"  -h, --help           this text\n"
	"Example: feedtrace capture 4242 --steps 100\n";

/* the directory of the .ft file PID writes: one of its descriptors */
static int dir_of_pid(const char *pid, char *out, size_t cap)
{
	char fds[64];
	snprintf(fds, sizeof fds, "/proc/%s/fd", pid);
	DIR *d = opendir(fds);
	if (!d)
		return -1;
	int found = -1;
	for (struct dirent *e; found && (e = readdir(d));) {
		char link[600], target[4096];
		snprintf(link, sizeof link, "%s/%s", fds, e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n < 4)
			continue;
		target[n] = 0;
		if (strcmp(target + n - 3, ".ft") != 0 || target[0] != '/')
			continue;
		char *slash = strrchr(target, '/');
		*slash = 0;
		snprintf(out, cap, "%s", slash == target ? "/" : target);
		found = 0;
	}
	closedir(d);
	return found;
}

static int all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

int ft_cmd_capture(int argc, char **argv)
{
	enum { STEPS = FT_OPT_OWN, SECONDS };
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, STEPS },
		{ "seconds", required_argument, NULL, SECONDS },
		FT_HELP_LONGOPTS,
	};
	unsigned long steps = 0, ms = 0;
	int c;
	char *end;
	struct ft_cli cli;
	ft_cli_begin(&cli, "capture", argc, argv);
	while ((c = ft_cli_next(&cli, ":h", opts, NULL)) != -1) {
		switch (c) {
		case STEPS:
			steps = strtoul(optarg, &end, 10);
			if (!all_digits(optarg) || steps < 1 || steps > 1000000) {
				fprintf(stderr, "feedtrace capture: --steps %s is not from 1 to 1000000\n",
					optarg);
				goto bad;
			}
			break;
		case SECONDS: {
			double s = strtod(optarg, &end);
			if (*end || end == optarg || !(s >= 0.01 && s <= 86400)) {
				fprintf(stderr, "feedtrace capture: --seconds %s is not from 0.01 to 86400\n",
					optarg);
				goto bad;
			}
			ms = (unsigned long)(s * 1000 + 0.5);
			break;
		}
		case 'h':
			fputs(capture_usage, stdout);
			ft_cli_end(&cli);
			return 0;
		default:
			ft_cli_bad(&cli, c);
			fputs(capture_usage, stderr);
			goto bad;
		}
	}
	if (optind + 1 != cli.argc || (steps && ms)) {
		fputs(capture_usage, stderr);
		goto bad;
	}
	if (!steps && !ms)
		steps = 10;
	const char *target = cli.argv[optind];
	char dir[4096];
	struct stat st;
	if (all_digits(target) && stat(target, &st) != 0) {
		if (dir_of_pid(target, dir, sizeof dir) != 0) {
			fprintf(stderr, "feedtrace capture: process %s has no trace file open "
				"(not traced, gone, or not yours)\n", target);
			goto bad;
		}
	} else if (stat(target, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "feedtrace capture: %s is neither a process id nor a run directory\n",
			target);
		goto bad;
	} else {
		snprintf(dir, sizeof dir, "%s", target);
	}
	ft_cli_end(&cli);

	/* an id no earlier request of this directory had: the time in ms,
	 * past the last one's */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	unsigned long id = (unsigned long)(now.tv_sec % 1000000) * 1000 +
			   (unsigned long)(now.tv_nsec / 1000000) + 1;
	char path[4200], tmp[4300];
	snprintf(path, sizeof path, "%s/capture.req", dir);
	FILE *old = fopen(path, "r");
	if (old) {
		unsigned long prev = 0;
		if (fscanf(old, "feedtrace-capture id=%lu", &prev) == 1 && prev >= id)
			id = prev + 1;
		fclose(old);
	}
	snprintf(tmp, sizeof tmp, "%s/.capture.req.%d", dir, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "feedtrace-capture id=%lu steps=%lu ms=%lu\n", id,
			  ms ? 0 : steps, ms) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "feedtrace capture: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return 2;
	}
	if (ms)
		printf("feedtrace: capture %lu requested in %s: %.3g s\n", id, dir, ms / 1000.0);
	else
		printf("feedtrace: capture %lu requested in %s: %lu steps\n", id, dir, steps);
	return 0;
bad:
	ft_cli_end(&cli);
	return 2;
}
