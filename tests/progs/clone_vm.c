/*
 * clone_vm: a child made by glibc's clone with CLONE_VM and its own stack
 * (no CLONE_SETTLS: it runs on the parent thread's TLS) does CHILD preads
 * of FILE; the parent does DURING preads while the child may run, waits
 * for it, then AFTER preads.
 *   clone_vm vfork|novfork|cleartid FILE CHILD DURING AFTER [raw]
 * vfork: CLONE_VFORK (the parent waits in clone); cleartid: the program
 * names its own CLONE_CHILD_CLEARTID word; raw: FILE is opened by the
 * system call, so that the child's reads are the first traced calls.
 * Prints "ok".
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int fd, child_reads;
static pid_t child_tid_word;

static int child(void *arg)
{
	(void)arg;
	char b[16];
	for (int i = 0; i < child_reads; i++)
		if (pread(fd, b, sizeof b, 0) != (ssize_t)sizeof b)
			return 3;
	return 0;
}

static int reads(int n)
{
	char b[16];
	for (int i = 0; i < n; i++)
		if (pread(fd, b, sizeof b, 0) != (ssize_t)sizeof b)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 6 && argc != 7)
		return 2;
	if (argc == 7)
		fd = (int)syscall(SYS_openat, AT_FDCWD, argv[2], O_RDONLY);
	else
		fd = open(argv[2], O_RDONLY);
	if (fd < 0)
		return 2;
	child_reads = atoi(argv[3]);
	int during = atoi(argv[4]), after = atoi(argv[5]);
	size_t size = 1 << 20;
	char *stack = malloc(size);
	if (!stack)
		return 2;
	int flags = CLONE_VM | SIGCHLD;
	if (!strcmp(argv[1], "vfork"))
		flags |= CLONE_VFORK;
	else if (!strcmp(argv[1], "cleartid"))
		flags |= CLONE_CHILD_CLEARTID;
	else if (strcmp(argv[1], "novfork"))
		return 2;
	pid_t pid = clone(child, stack + size, flags, NULL, NULL, NULL, &child_tid_word);
	if (pid < 0) {
		perror("clone");
		return 1;
	}
	if (reads(during) != 0)
		return 1;
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "child failed: %x\n", st);
		return 1;
	}
	if (reads(after) != 0)
		return 1;
	printf("ok\n");
	return 0;
}
