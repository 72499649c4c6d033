/*
 * flight_loop: numbered steps for the flight recorder's tests. Opens DATA
 * once, before any step, then runs STEPS steps, each a user range
 * "step I" (feedtrace_range_push/pop, found with dlsym: the preloaded
 * library's) around READS preads of DATA and a sleep of MS milliseconds,
 * printing "step I" as it ends. Then, by END:
 *   exit   returns from main
 *   term   sends itself SIGTERM
 *   hang   blocks for ever in read() on a pipe nobody writes (no step)
 *   fork   forks first: the child runs the steps and sends itself SIGTERM,
 *          the parent waits for it and returns (no step of its own)
 *
 *   flight_loop DATA STEPS READS MS exit|term|hang|fork
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 6)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 3;
	int steps = atoi(argv[2]), reads = atoi(argv[3]), ms = atoi(argv[4]);
	int (*push)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "feedtrace_range_push");
	int (*pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "feedtrace_range_pop");
	char buf[64], name[32];
	if (!strcmp(argv[5], "fork")) {
		pid_t child = fork();
		if (child < 0)
			return 7;
		if (child > 0) {
			int st = 0;
			waitpid(child, &st, 0);
			printf("child %d %s %d\n", (int)child, WIFSIGNALED(st) ? "signal" : "exit",
			       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			return 0;
		}
	}
	for (int i = 1; i <= steps; i++) {
		snprintf(name, sizeof name, "step %d", i);
		if (push)
			push(name);
		for (int k = 0; k < reads; k++)
			if (pread(fd, buf, sizeof buf, 0) < 0)
				return 4;
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		if (pop)
			pop();
		printf("step %d\n", i);
		fflush(stdout);
	}
	if (!strcmp(argv[5], "term") || !strcmp(argv[5], "fork")) {
		kill(getpid(), SIGTERM);
		return 5;
	}
	if (!strcmp(argv[5], "hang")) {
		int p[2];
		if (pipe(p) != 0)
			return 6;
		printf("hung\n");
		fflush(stdout);
		ssize_t r = read(p[0], buf, 1);
		return (int)r;
	}
	return 0;
}
