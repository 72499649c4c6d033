/*
 * cmd_flight.c: `feedtrace flight PID|RUN_DIR`: asks every traced process
 * of a run that keeps a flight recorder (FEEDTRACE_FLIGHT) to write its
 * window now. The request is a file, RUN_DIR/flight.request, made anew
 * (written beside it, renamed over it: a new inode each time); each
 * process's flusher looks at it once a cycle and writes its window when
 * the file changed since it last looked (docs/ARCHITECTURE.md, "Flight
 * recorder"). A PID names the run of that process: the directory of the
 * trace file it holds open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "cli.h"
#include "cmds.h"

static const char flight_usage[] =
	"usage: feedtrace flight PID|RUN_DIR\n"
	"Every traced process of the run (RUN_DIR, or the run of process PID) that keeps\n"
	"a flight recorder (FEEDTRACE_FLIGHT=60s or =64MiB) writes its window into its\n"
	"trace file, within FEEDTRACE_FLUSH_MS (docs/ARCHITECTURE.md, \"Flight recorder\").\n"
	"  -h, --help           this text\n"
	"Example: feedtrace flight 4242 && sleep 1 && feedtrace report RUN_DIR\n";

/* The run directory of pid: where the trace file it holds open lies
 * (HOST.PID.ft, HOST.PID.N.ft). 0, or -1 with one line printed. */
static int run_of_pid(const char *arg, char *dir, size_t cap)
{
	char path[64], link[PATH_MAX];
	char *end;
	long pid = strtol(arg, &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "feedtrace flight: %s is neither a directory nor a pid\n", arg);
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%ld/fd", pid);
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "feedtrace flight: pid %ld: %s\n", pid, strerror(errno));
		return -1;
	}
	char want[32];
	snprintf(want, sizeof want, ".%ld.", pid);
	int found = 0;
	for (struct dirent *e; !found && (e = readdir(d));) {
		char fd[600];
		snprintf(fd, sizeof fd, "%s/%s", path, e->d_name);
		ssize_t n = readlink(fd, link, sizeof link - 1);
		if (n <= 3)
			continue;
		link[n] = 0;
		char *slash = strrchr(link, '/');
		if (!slash || strcmp(link + n - 3, ".ft") || !strstr(slash, want))
			continue;
		*slash = 0;
		snprintf(dir, cap, "%s", link);
		found = 1;
	}
	closedir(d);
	if (!found)
		fprintf(stderr, "feedtrace flight: pid %ld holds no trace file open: not traced "
			"(or not by this user)\n", pid);
	return found ? 0 : -1;
}

int ft_cmd_flight(int argc, char **argv)
{
	static const struct option opts[] = {
		FT_HELP_LONGOPTS,
	};
	struct ft_cli cli;
	int c;
	ft_cli_begin(&cli, "flight", argc, argv);
	while ((c = ft_cli_next(&cli, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(flight_usage, stdout);
			ft_cli_end(&cli);
			return 0;
		}
		ft_cli_bad(&cli, c);
		fputs(flight_usage, stderr);
		ft_cli_end(&cli);
		return 2;
	}
	if (optind + 1 != cli.argc) {
		fputs(flight_usage, stderr);
		ft_cli_end(&cli);
		return 2;
	}
	const char *arg = cli.argv[optind];
	char dir[PATH_MAX];
	struct stat st;
	int rc = 1;
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(dir, sizeof dir, "%s", arg);
	else if (run_of_pid(arg, dir, sizeof dir) != 0)
		goto out;
	char req[PATH_MAX + 32], tmp[PATH_MAX + 64];
	snprintf(req, sizeof req, "%s/%s", dir, FT_FLIGHT_REQUEST_FILE);
	snprintf(tmp, sizeof tmp, "%s.%d", req, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "feedtrace flight: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	static const char line[] = "request 0\n";
	int ok = write(fd, line, sizeof line - 1) == (ssize_t)(sizeof line - 1);
	ok &= close(fd) == 0;
	if (!ok || rename(tmp, req) != 0) {
		fprintf(stderr, "feedtrace flight: %s: %s\n", req, strerror(errno));
		unlink(tmp);
		goto out;
	}
	printf("feedtrace flight: asked the traced processes of %s for their windows (%s)\n",
	       dir, req);
	rc = 0;
out:
	ft_cli_end(&cli);
	return rc;
}
