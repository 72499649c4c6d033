/*
 * run.c: `feedtrace run [-o DIR] -- CMD...`: runs CMD with the library
 * preloaded and FEEDTRACE_OUT set, waits, prints the report (report.c), and
 * exits as CMD did (a signal death becomes 128 + signal number).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"

/* libfeedtrace.so beside the tool (build/) or in ../lib (installed). */
static int find_library(char *out, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *dir = dirname(self);
	const char *cand[] = { "%s/libfeedtrace.so", "%s/../lib/libfeedtrace.so" };
	for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
		snprintf(out, cap, cand[i], dir);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

int ft_cmd_run(int argc, char **argv)
{
	const char *out_dir = NULL;
	int i = 0;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out_dir = argv[++i];
		else if (argv[i][0] == '-') {
			fprintf(stderr, "feedtrace run: unknown option %s\n", argv[i]);
			return 2;
		} else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: feedtrace run [-o DIR] -- CMD [ARGS...]\n");
		return 2;
	}
	char lib[PATH_MAX + 32];
	if (find_library(lib, sizeof lib) != 0) {
		fprintf(stderr, "feedtrace run: libfeedtrace.so not found beside the feedtrace binary\n");
		return 2;
	}
	char dir[PATH_MAX];
	if (!out_dir) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		size_t n = strftime(dir, sizeof dir, "feedtrace-%Y%m%d-%H%M%S", &tm);
		snprintf(dir + n, sizeof dir - n, "-%d", (int)getpid());   /* unique per run */
		out_dir = dir;
	}
	char abs_dir[PATH_MAX];
	if (out_dir[0] != '/' && getcwd(abs_dir, sizeof abs_dir - strlen(out_dir) - 2)) {
		strcat(abs_dir, "/");
		strcat(abs_dir, out_dir);
	} else {
		snprintf(abs_dir, sizeof abs_dir, "%s", out_dir);
	}
	const char *old = getenv("LD_PRELOAD");
	size_t need = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *preload = malloc(need);
	if (!preload)
		return 2;
	snprintf(preload, need, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	setenv("FEEDTRACE_OUT", abs_dir, 1);
	/* NVTX ranges (shim/nvtx.c): the loader dlopens this same path, so it
	 * gets the preloaded copy; a tool already named (Nsight) is kept */
	setenv("NVTX_INJECTION64_PATH", lib, 0);
	free(preload);

	pid_t pid = fork();
	if (pid < 0) {
		perror("feedtrace run: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "feedtrace run: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	/* the child gets the terminal's signals itself; we just wait */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	fprintf(stderr, "feedtrace: trace written to %s\n", abs_dir);
	struct stat st;
	if (stat(abs_dir, &st) == 0)
		ft_report_print(abs_dir, stderr);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
