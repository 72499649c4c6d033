/*
 * run.c: `feedtrace run [-o DIR] -- CMD...`: runs CMD with the library
 * preloaded and FEEDTRACE_OUT set, waits, prints the report (report_text.c), and
 * exits as CMD did: its status, or death by the same signal after the
 * report. A command that cannot be executed: the shell's message and 127
 * (126 when found but not executable), no trace. "trace written" only when
 * the directory got trace files; a directory holding another run's is
 * refused unless --append.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>

#include "format.h"
#include "cli.h"
#include "cmds.h"
#include "report.h"

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

/* The executable execvp would run for cmd (searched in PATH as it does). */
static int find_command(const char *cmd, char *out, size_t cap)
{
	if (strchr(cmd, '/'))
		return snprintf(out, cap, "%s", cmd) < (int)cap ? 0 : -1;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; ; ) {
		size_t n = strcspn(p, ":");
		if (snprintf(out, cap, "%.*s%s%s", (int)n, p, n ? "/" : "", cmd) < (int)cap &&
		    access(out, X_OK) == 0)
			return 0;
		if (!p[n])
			return -1;
		p += n + 1;
	}
}

/* The AddressSanitizer runtime the program at path links (its DT_NEEDED
 * libasan.so.N) into soname; 0 when it links none. */
static int needs_asan(const char *path, char *soname, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	for (Elf_Scn *scn = NULL; e && !found && (scn = elf_nextscn(e, scn)); ) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		GElf_Dyn dyn;
		for (int k = 0; !found && gelf_getdyn(d, k, &dyn); k++) {
			const char *name = dyn.d_tag == DT_NEEDED ?
				elf_strptr(e, sh.sh_link, (size_t)dyn.d_un.d_val) : NULL;
			if (name && !strncmp(name, "libasan.so", 10))
				found = snprintf(soname, cap, "%s", name) > 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static const char run_usage[] =
	"usage: feedtrace run [-o DIR] [--append] [--quiet] [--capture WHEN] -- CMD [ARGS...]\n"
	"Runs CMD with libfeedtrace.so preloaded, then prints the report on stderr.\n"
	"Exits as CMD did: its status, or death by the same signal.\n"
	"  -o, --out DIR   the run directory (default: ./feedtrace-DATE-TIME-PID)\n"
	"      --append    add to a DIR that already holds a run's trace files\n"
	"  -q, --quiet     no report, no \"trace written\" line\n"
	"      --capture WHEN  when CMD's processes record (FEEDTRACE_CAPTURE): on, off\n"
	"                  (until `feedtrace capture`), steps:A-B[/K], time:D[+S]\n"
	"  -h, --help      this text\n"
	"Environment (read by the library in CMD's processes): FEEDTRACE_OUT (set\n"
	"from -o), FEEDTRACE_HOOKS, FEEDTRACE_BUF_KB, FEEDTRACE_MEM_MB,\n"
	"FEEDTRACE_FLUSH_MS, FEEDTRACE_STACK_DEPTH, FEEDTRACE_REDACT (README.md).\n"
	"Example: feedtrace run -o t1 -- python3 train.py --epochs 1\n";

/* trace files (*.ft) in dir: how many */
/* How many trace files dir holds; *run_id: the run id of the first one
 * that has one (0: none). */
static int trace_files(const char *dir, uint64_t *run_id)
{
	*run_id = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len <= 3 || strcmp(e->d_name + len - 3, ".ft") != 0)
			continue;
		n++;
		struct ft_file_header h;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (!*run_id && fd >= 0 && read(fd, &h, sizeof h) == (ssize_t)sizeof h &&
		    !memcmp(h.magic, FT_FILE_MAGIC, 8) &&
		    h.header_size >= offsetof(struct ft_file_header, run_id) + sizeof h.run_id)
			*run_id = h.run_id;
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return n;
}

/* CMD's manner of death, ours too: the report is written, then the same
 * signal with its default action (as time(1) and strace do), so that any
 * parent sees what it would have seen without the tracer. */
static int die_like(int status)
{
	if (!WIFSIGNALED(status))
		return WEXITSTATUS(status);
	int sig = WTERMSIG(status);
	fflush(NULL);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;               /* a signal that does not kill (SIGCHLD...) */
}

int ft_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "append", no_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "capture", required_argument, NULL, 'c' },
		FT_HELP_LONGOPTS,
	};
	const char *out_dir = NULL;
	int append = 0, quiet = 0, c;
	struct ft_cli cli;
	ft_cli_begin(&cli, "run", argc, argv);
	while ((c = ft_cli_next(&cli, "+o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out_dir = optarg; break;
		case 'a': append = 1; break;
		case 'q': quiet = 1; break;
		case 'c': setenv("FEEDTRACE_CAPTURE", optarg, 1); break;   /* the library checks it */
		case 'h':
			fputs(run_usage, stdout);
			ft_cli_end(&cli);
			return 0;
		default:
			if (optopt == 'o')
				fprintf(stderr, "feedtrace run: -o needs a directory\n");
			else if (optopt == 'c')
				fprintf(stderr, "feedtrace run: --capture needs on, off, steps:A-B or time:D\n");
			else
				fprintf(stderr, "feedtrace run: unknown option %s\n", cli.argv[optind - 1]);
			fputs(run_usage, stderr);
			ft_cli_end(&cli);
			return 2;
		}
	}
	ft_cli_end(&cli);
	int i = optind - 1;              /* index into argv */
	if (i >= argc) {
		fputs(run_usage, stderr);
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
	/* a directory of another run: its report would mix the two */
	uint64_t run_id;
	int had = trace_files(abs_dir, &run_id);
	if (!append && had) {
		fprintf(stderr, "feedtrace run: %s already holds a run's trace files; give another "
			"-o, or --append to add this run to it\n", abs_dir);
		return 2;
	}
	/* --append: this run's files carry that run's id (one run to report) */
	char id[24];
	snprintf(id, sizeof id, "%016llx", (unsigned long long)run_id);
	if (run_id)
		setenv("FEEDTRACE_RUN_ID", id, 1);
	else
		unsetenv("FEEDTRACE_RUN_ID");
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

	/* exec's failure comes back through a close-on-exec pipe: its errno */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) != 0) {
		perror("feedtrace run: pipe");
		return 2;
	}
	int before = trace_files(abs_dir, &run_id);
	pid_t pid = fork();
	if (pid < 0) {
		perror("feedtrace run: fork");
		return 2;
	}
	if (pid == 0) {
		close(ep[0]);
		execvp(argv[i], argv + i);
		int e = errno;
		if (write(ep[1], &e, sizeof e) != (ssize_t)sizeof e)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(ep[1]);
	int e = 0;
	ssize_t got;
	while ((got = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	/* the child gets the terminal's signals itself; we just wait */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (got == (ssize_t)sizeof e) {
		/* as a shell says it: nothing ran, nothing was traced */
		fprintf(stderr, "feedtrace run: %s: %s\n", argv[i],
			e == ENOENT && !strchr(argv[i], '/') ? "command not found" : strerror(e));
		return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
	}
	char exe[PATH_MAX], asan[64];
	if (trace_files(abs_dir, &run_id) <= before && find_command(argv[i], exe, sizeof exe) == 0 &&
	    needs_asan(exe, asan, sizeof asan)) {
		/* ASan's runtime checks that it comes first in the process's
		 * libraries; after the preloaded tracer it stops the program */
		fprintf(stderr, "feedtrace: no trace was written to %s: %s is built with "
			"AddressSanitizer (it links %s), whose runtime stops the program when "
			"another library is loaded before it (the line above). Run it with the "
			"runtime first: LD_PRELOAD=\"$(gcc -print-file-name=libasan.so) %s\" "
			"FEEDTRACE_OUT=%s %s ...; or let the runtime come second: "
			"ASAN_OPTIONS=verify_asan_link_order=0 feedtrace run -- %s ...\n",
			abs_dir, argv[i], asan, lib, abs_dir, argv[i], argv[i]);
	} else if (trace_files(abs_dir, &run_id) <= before) {
		fprintf(stderr, "feedtrace: no trace was written to %s (the lines above say why); "
			"the command ran untraced\n", abs_dir);
	} else if (!quiet) {
		fprintf(stderr, "feedtrace: trace written to %s\n", abs_dir);
		ft_report_print(abs_dir, stderr);
	}
	return die_like(status);
}
