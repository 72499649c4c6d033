/*
 * open.c: `feedtrace open RUN|FILE.pftrace`: the timeline in the Perfetto
 * UI without uploading it anywhere. A run directory is converted first
 * (convert.c) when its .pftrace is missing or older than its trace files.
 * The file is served once on 127.0.0.1:9001, the one address the UI's
 * page may fetch a trace from, with the CORS header for its origin, and
 * the link that makes the UI fetch it is printed (and opened with
 * xdg-open on a desktop). The server stops after one whole GET of the
 * file. On a remote machine (--no-browser) it prints the ssh port-forward
 * that brings the port to the user's desktop.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"

#define UI_ORIGIN "https://ui.perfetto.dev"

static const char open_usage[] =
	"usage: feedtrace open RUN|FILE.pftrace [--no-browser] [--port N]\n"
	"Shows the timeline in the Perfetto UI: converts RUN if needed, serves the\n"
	"file once on 127.0.0.1 (port 9001, the address the UI may fetch from) and\n"
	"prints the link that loads it; stops once the UI has fetched it.\n"
	"  --no-browser   do not start a browser (a remote machine): prints the ssh\n"
	"                 port-forward to run on your desktop first\n"
	"  --port N       another port (the UI itself fetches only from 9001)\n"
	"  -h, --help     this text\n"
	"Example: feedtrace open feedtrace-20261122-001500-4242\n";

extern char **environ;

/* newest modification time of DIR's trace files, 0 if none */
static time_t newest_trace(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	time_t t = 0;
	struct dirent *e;
	char p[4096];
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		struct stat st;
		if (n < 4 || strcmp(e->d_name + n - 3, ".ft"))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (stat(p, &st) == 0 && st.st_mtime > t)
			t = st.st_mtime;
	}
	closedir(d);
	return t;
}

static int send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w, n -= (size_t)w;
	}
	return 0;
}

/* One request on fd: 1 when it was a whole GET of the file. */
static int serve_one(int fd, const char *path, const char *name)
{
	char req[4096];
	size_t got = 0;
	req[0] = 0;
	while (got < sizeof req - 1 && !strstr(req, "\r\n\r\n")) {
		ssize_t r = recv(fd, req + got, sizeof req - 1 - got, 0);
		if (r <= 0)
			return 0;
		got += (size_t)r;
		req[got] = 0;
	}
	char method[8] = "", target[1024] = "";
	if (sscanf(req, "%7s %1023s", method, target) != 2)
		return 0;
	const char *cors = "Access-Control-Allow-Origin: " UI_ORIGIN "\r\n"
			   "Access-Control-Allow-Methods: GET, OPTIONS\r\n"
			   "Access-Control-Allow-Headers: *\r\n";
	char head[1024];
	if (!strcmp(method, "OPTIONS")) {
		int n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\n%sContent-Length: 0\r\n"
				 "Connection: close\r\n\r\n", cors);
		send_all(fd, head, (size_t)n);
		return 0;
	}
	if (strcmp(method, "GET") || target[0] != '/' || strcmp(target + 1, name)) {
		int n = snprintf(head, sizeof head, "HTTP/1.1 404 Not Found\r\n%sContent-Length: 0\r\n"
				 "Connection: close\r\n\r\n", cors);
		send_all(fd, head, (size_t)n);
		return 0;
	}
	FILE *f = fopen(path, "rb");
	struct stat st;
	if (!f || fstat(fileno(f), &st) != 0) {
		if (f)
			fclose(f);
		return 0;
	}
	int n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\n%sContent-Type: "
			 "application/octet-stream\r\nContent-Length: %lld\r\nCache-Control: no-cache\r\n"
			 "Connection: close\r\n\r\n", cors, (long long)st.st_size);
	int ok = send_all(fd, head, (size_t)n) == 0;
	char buf[1 << 16];
	size_t r;
	off_t sent = 0;
	while (ok && (r = fread(buf, 1, sizeof buf, f)) > 0) {
		ok = send_all(fd, buf, r) == 0;
		sent += (off_t)r;
	}
	fclose(f);
	return ok && sent == st.st_size;
}

int ft_cmd_open(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-browser", no_argument, NULL, 'n' },
		{ "port", required_argument, NULL, 'p' },
		FT_HELP_LONGOPTS,
	};
	int browser = 1, port = 9001, c;
	struct ft_cli cli;
	ft_cli_begin(&cli, "open", argc, argv);
	while ((c = ft_cli_next(&cli, "h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'n': browser = 0; break;
		case 'p':
			port = (int)strtol(optarg, &end, 10);
			if (*end || port < 1 || port > 65535) {
				fprintf(stderr, "feedtrace open: --port needs 1-65535, not '%s'\n", optarg);
				ft_cli_end(&cli);
				return 2;
			}
			break;
		case 'h':
			fputs(open_usage, stdout);
			ft_cli_end(&cli);
			return 0;
		default:
			fprintf(stderr, "feedtrace open: unknown option %s\n", cli.argv[optind - 1]);
			fputs(open_usage, stderr);
			ft_cli_end(&cli);
			return 2;
		}
	}
	const char *what = optind + 1 == cli.argc ? cli.argv[optind] : NULL;
	ft_cli_end(&cli);
	if (!what) {
		fputs(open_usage, stderr);
		return 2;
	}
	char file[4200];
	struct stat st;
	if (stat(what, &st) != 0) {
		fprintf(stderr, "feedtrace open: %s: %s\n", what, strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		size_t n = strlen(what);
		while (n > 1 && what[n - 1] == '/')
			n--;
		snprintf(file, sizeof file, "%.*s.pftrace", (int)n, what);
		struct stat ft;
		if (stat(file, &ft) != 0 || ft.st_mtime < newest_trace(what)) {
			char *cargv[] = { (char *)what, "-o", file, NULL };
			int rc = ft_cmd_convert(3, cargv);
			if (rc != 0)
				return rc;
		}
	} else {
		snprintf(file, sizeof file, "%s", what);
	}
	const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;

	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 8) != 0) {
		fprintf(stderr, "feedtrace open: cannot listen on 127.0.0.1:%d (%s)%s\n", port,
			strerror(errno), errno == EADDRINUSE ?
			": another program (a trace processor, another feedtrace open) has it; "
			"stop it and try again" : "");
		return 1;
	}
	char url[4600];
	snprintf(url, sizeof url, UI_ORIGIN "/#!/?url=http://127.0.0.1:%d/%s", port, name);
	int shown = 0;
	if (browser && (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY"))) {
		pid_t pid;
		char *xargv[] = { "xdg-open", url, NULL };
		shown = posix_spawnp(&pid, "xdg-open", NULL, NULL, xargv, environ) == 0;
	}
	if (!browser) {
		char host[256] = "THIS-HOST";
		gethostname(host, sizeof host - 1);
		printf("On your desktop, first: ssh -L %d:127.0.0.1:%d %s\n", port, port, host);
	}
	printf("%s %s\n", shown ? "Opened" : "Open", url);
	printf("Serving %s until the UI has fetched it (Ctrl-C to stop).\n", file);
	fflush(stdout);
	for (;;) {
		int fd = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			perror("feedtrace open: accept");
			close(s);
			return 1;
		}
		int done = serve_one(fd, file, name);
		close(fd);
		if (done)
			break;
	}
	close(s);
	int reaped;
	while ((reaped = waitpid(-1, NULL, WNOHANG)) > 0)
		;
	printf("Fetched; stopped serving.\n");
	return 0;
}
