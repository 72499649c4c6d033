/*
 * outfile.c: an output file that appears whole or not at all, for every
 * command that writes one (convert, diff --timeline).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

/* A regular file (or none yet) at the target: written as a new file in
 * the target's directory, renamed over the target when complete, removed
 * on failure. A device or FIFO (/dev/null) is written directly, opened
 * without following a link. A symbolic link at the target is refused:
 * following it would write wherever it points (a link planted at
 * DIR.pftrace in a shared directory), replacing it would undo a link the
 * user made. */
int ft_out_open(struct ft_outfile *o, const char *target, const char *cmd)
{
	struct stat st;
	memset(o, 0, sizeof *o);
	o->target = target;
	o->cmd = cmd;
	o->fd = -1;
	int exists = lstat(target, &st) == 0;
	if (exists && S_ISLNK(st.st_mode)) {
		fprintf(stderr, "feedtrace %s: %s is a symbolic link: not following it "
			"(remove it, or name another output with -o)\n", o->cmd, target);
		return -1;
	}
	if (exists && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "feedtrace %s: %s is a directory\n", o->cmd, target);
		return -1;
	}
	/* a link planted after this check is replaced by the rename, not followed */
	if (exists && !S_ISREG(st.st_mode)) {
		o->fd = open(target, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		if (o->fd < 0) {
			fprintf(stderr, "feedtrace %s: %s: %s\n", o->cmd, target, strerror(errno));
			return -1;
		}
	} else {
		const char *slash = strrchr(target, '/');
		int dl = slash ? (int)(slash - target) + 1 : 0;
		if (snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dl, target,
			     slash ? slash + 1 : target) >= (int)sizeof o->tmp) {
			fprintf(stderr, "feedtrace %s: %s: name too long\n", o->cmd, target);
			return -1;
		}
		o->fd = mkostemp(o->tmp, O_CLOEXEC);
		if (o->fd < 0) {
			fprintf(stderr, "feedtrace %s: cannot create a file beside %s: %s\n", o->cmd, target, strerror(errno));
			o->tmp[0] = 0;
			return -1;
		}
		mode_t um = umask(0);            /* the mode fopen would have given */
		umask(um);
		fchmod(o->fd, 0666 & ~um);
	}
	/* the very file opened above, whatever happens to its name meanwhile */
	snprintf(o->via, sizeof o->via, "/proc/self/fd/%d", o->fd);
	if (access(o->via, W_OK) != 0)
		snprintf(o->via, sizeof o->via, "%s", "");     /* no /proc: by name */
	return 0;
}

const char *ft_out_path(const struct ft_outfile *o)
{
	return o->via[0] ? o->via : o->tmp[0] ? o->tmp : o->target;
}

/* ok: the file is complete; returns 0 when it is in place */
int ft_out_close(struct ft_outfile *o, int ok)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (!o->tmp[0])
		return ok ? 0 : -1;
	if (ok && rename(o->tmp, o->target) == 0)
		return 0;
	if (ok)
		fprintf(stderr, "feedtrace %s: %s: %s\n", o->cmd, o->target, strerror(errno));
	unlink(o->tmp);
	return -1;
}

