/*
 * life_prog.c: the C side of tests/traced/test_lifecycle.py. One program, many
 * modes; every mode reads its data file with open()+read(100)+close() so the
 * test can count "read of PATH with ret=100" exactly.
 *
 *   life_prog ret FILE N CODE         N reads, return CODE from main
 *   life_prog exit FILE N CODE        N reads, exit(CODE)
 *   life_prog fork FILE NP NC CODE    NP reads, fork; child NC reads, _exit(CODE);
 *                                     parent waits, prints "child=PID status=S";
 *                                     an atexit handler prints "atexit"
 *   life_prog execv FILE N M          N reads, execv(self, "again", FILE, M)
 *   life_prog execl FILE N M          the same through execl
 *   life_prog again FILE M            M reads (the exec'd image), return 0
 *   life_prog pause FILE K            K reads, "ready", pause()
 *   life_prog handler FILE K          SIGTERM handler (prints "handler", exit(7)),
 *                                     K reads, "ready", pause()
 *   life_prog sigquery                prints the SIGTERM/SIGINT dispositions
 *   life_prog threads FILE T R        T threads x R reads each, joined
 *   life_prog shortthreads FILE T     T threads one after another, one read each
 *   life_prog sleep FILE N            N reads, "ready", sleep 60 s
 *   life_prog zero N                  open /dev/zero, N one-byte reads, no close
 *   life_prog vfork FILE              opens FILE, reads 100; vfork: the child
 *                                     dup2s the fd onto 60, closes it, reads 100
 *                                     through 60, _exit(0); the parent preads 100
 *                                     at 0 through the fd, closes it, prints
 *                                     "vfork status=S"
 *   life_prog exitsig FILE N          fork; the child makes N reads, tells the
 *                                     parent through a pipe and calls _exit(0);
 *                                     the parent sends it SIGTERM at once (while
 *                                     the tracer commits the child's trace) and
 *                                     prints "child exit=E signal=S"
 *   life_prog crash FILE N HOW        N reads, then dies by a fault: HOW is segv
 *                                     (store to address 0), bus (touch a mapped
 *                                     page past the end of FILE), fpe (integer
 *                                     division by zero), ill (ud2), abort
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *file;

static void read_file(int n)
{
	char buf[100];
	for (int i = 0; i < n; i++) {
		int fd = open(file, O_RDONLY);
		if (fd < 0) {
			perror(file);
			exit(90);
		}
		if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
			fprintf(stderr, "short read of %s\n", file);
			exit(91);
		}
		close(fd);
	}
}

/* write(), not stdio: a signal may arrive while stdio is still inside the
 * fflush that wrote "ready", and a handler using stdio would repeat it. */
static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(96);
}

static void ready(void)
{
	say("ready\n");
}

static void on_term(int sig)
{
	(void)sig;
	say("handler\n");
	exit(7);          /* runs atexit and destructors: end reason "exit" */
}

static void at_exit(void)
{
	say("atexit\n");
}

static void *reader(void *arg)
{
	read_file((int)(long)arg);
	return NULL;
}

static const char *disp(int sig)
{
	struct sigaction old;
	memset(&old, 0xff, sizeof old);
	if (sigaction(sig, NULL, &old) != 0)
		return "error";
	if (old.sa_flags & SA_SIGINFO)
		return "siginfo";
	if (old.sa_handler == SIG_DFL)
		return "SIG_DFL";
	if (old.sa_handler == SIG_IGN)
		return "SIG_IGN";
	return "handler";
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	if (argc > 2)
		file = argv[2];

	if (!strcmp(mode, "ret") && argc == 5) {
		read_file(atoi(argv[3]));
		return atoi(argv[4]);
	}
	if (!strcmp(mode, "exit") && argc == 5) {
		read_file(atoi(argv[3]));
		exit(atoi(argv[4]));
	}
	if (!strcmp(mode, "fork") && argc == 6) {
		atexit(at_exit);          /* the parent's only: the child uses _exit */
		read_file(atoi(argv[3]));
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			return 92;
		if (pid == 0) {
			read_file(atoi(argv[4]));
			_exit(atoi(argv[5]));
		}
		int st;
		if (waitpid(pid, &st, 0) != pid)
			return 93;
		printf("child=%d status=%d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		fflush(stdout);           /* before "atexit" */
		return 0;
	}
	if ((!strcmp(mode, "execv") || !strcmp(mode, "execl")) && argc == 5) {
		read_file(atoi(argv[3]));
		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		if (!strcmp(mode, "execv")) {
			char *args[] = { argv[0], "again", argv[2], argv[4], NULL };
			execv("/proc/self/exe", args);
		} else {
			execl("/proc/self/exe", argv[0], "again", argv[2], argv[4], (char *)NULL);
		}
		perror("exec");
		return 94;
	}
	if (!strcmp(mode, "again") && argc == 4) {
		read_file(atoi(argv[3]));
		printf("again pid=%d\n", (int)getpid());
		return 0;
	}
	if (!strcmp(mode, "pause") && argc == 4) {
		read_file(atoi(argv[3]));
		ready();
		for (;;)
			pause();
	}
	if (!strcmp(mode, "handler") && argc == 4) {
		signal(SIGTERM, on_term);
		read_file(atoi(argv[3]));
		ready();
		for (;;)
			pause();
	}
	if (!strcmp(mode, "sigquery")) {
		printf("SIGTERM=%s SIGINT=%s\n", disp(SIGTERM), disp(SIGINT));
		return 0;
	}
	if (!strcmp(mode, "threads") && argc == 5) {
		int nt = atoi(argv[3]);
		long nr = atol(argv[4]);
		pthread_t th[256];
		if (nt > 256)
			return 2;
		for (int i = 0; i < nt; i++)
			if (pthread_create(&th[i], NULL, reader, (void *)nr) != 0)
				return 95;
		for (int i = 0; i < nt; i++)
			pthread_join(th[i], NULL);
		printf("threads done\n");
		return 0;
	}
	if (!strcmp(mode, "shortthreads") && argc == 4) {
		int nt = atoi(argv[3]);
		for (int i = 0; i < nt; i++) {
			pthread_t th;
			if (pthread_create(&th, NULL, reader, (void *)1L) != 0)
				return 95;
			pthread_join(th, NULL);
		}
		printf("threads done\n");
		return 0;
	}
	if (!strcmp(mode, "sleep") && argc == 4) {
		read_file(atoi(argv[3]));
		ready();
		sleep(60);
		return 0;
	}
	if (!strcmp(mode, "zero") && argc == 3) {
		long n = atol(argv[2]);
		int fd = open("/dev/zero", O_RDONLY);
		char c;
		long ok = 0;
		for (long i = 0; i < n; i++)
			ok += read(fd, &c, 1) == 1;
		printf("zero reads=%ld\n", ok);
		return 0;         /* fd left open: no close record */
	}
	if (!strcmp(mode, "exitsig") && argc == 4) {
		int p[2];
		if (pipe(p) != 0)
			return 90;
		pid_t kid = fork();
		if (kid == 0) {
			read_file(atoi(argv[3]));
			if (write(p[1], "x", 1) != 1)
				_exit(91);
			_exit(0);
		}
		char c;
		if (kid < 0 || read(p[0], &c, 1) != 1)
			return 92;
		kill(kid, SIGTERM);
		int st;
		if (waitpid(kid, &st, 0) != kid)
			return 93;
		printf("child exit=%d signal=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
		       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		return 0;
	}
	if (!strcmp(mode, "vfork") && argc == 3) {
		char buf[100];
		int fd = open(file, O_RDONLY);
		if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			return 90;
		pid_t kid = vfork();
		if (kid == 0) {
			int ok = dup2(fd, 60) == 60 && close(fd) == 0 &&
				 pread(60, buf, sizeof buf, 0) == (ssize_t)sizeof buf;
			_exit(ok ? 0 : 1);
		}
		int st = -1;
		if (kid < 0 || waitpid(kid, &st, 0) != kid)
			return 91;
		if (pread(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf)
			return 92;
		close(fd);
		printf("vfork status=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	if (!strcmp(mode, "crash") && argc == 5) {
		read_file(atoi(argv[3]));
		const char *how = argv[4];
		if (!strcmp(how, "segv")) {
			*(volatile int *)0 = 1;
		} else if (!strcmp(how, "bus")) {
			int fd = open(file, O_RDONLY);
			long page = sysconf(_SC_PAGESIZE);
			volatile char *m = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
			if (m == MAP_FAILED)
				return 97;
			(void)m[page];          /* a whole page past the file's end */
		} else if (!strcmp(how, "fpe")) {
			volatile int num = 7, zero = 0;
			volatile int x = num / zero;    /* an idiv (1 / x compiles to compares) */
			(void)x;
		} else if (!strcmp(how, "ill")) {
			__builtin_trap();
		} else if (!strcmp(how, "abort")) {
			abort();
		}
		return 98;              /* not reached */
	}
	fprintf(stderr, "life_prog: bad arguments\n");
	return 2;
}
