/*
 * capture_steps: a loop of user "step" ranges (feedtrace_range_push/pop,
 * found at run time: the program runs untraced too) whose descriptors are
 * all made before the first step, for the capture gate's tests
 * (tests/traced/test_capture.py).
 *
 *   capture_steps FILE N    opens FILE and a pipe, then N steps, each:
 *                           push "step"; pread 8 bytes of FILE; a byte
 *                           through the pipe; a mutex lock pair; pop.
 *                           Prints the bytes it read, summed, and N.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void (*push)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "feedtrace_range_push");
	void (*pop)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "feedtrace_range_pop");
	int fd = open(argv[1], O_RDONLY);
	int p[2];
	if (fd < 0 || pipe(p) != 0)
		return 1;
	int n = atoi(argv[2]);
	long sum = 0;
	for (int i = 0; i < n; i++) {
		if (push)
			push("step");
		unsigned char b[8];
		if (pread(fd, b, sizeof b, 0) != (ssize_t)sizeof b)
			return 1;
		for (int k = 0; k < 8; k++)
			sum += b[k];
		char c = 'x';
		if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
			return 1;
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
		if (pop)
			pop();
	}
	printf("sum %ld steps %d\n", sum, n);
	return 0;
}
