/*
 * outfile.h: an output file that appears whole or not at all (outfile.c):
 * a regular file is written as a temporary beside the target and renamed
 * over it; a device or FIFO is written directly; a symbolic link is
 * refused. cmd names the command in messages.
 */
#ifndef FT_OUTFILE_H
#define FT_OUTFILE_H

struct ft_outfile {
	const char *target, *cmd;
	char tmp[4096];                  /* "" when written directly */
	char via[64];                    /* the path pf_open opens */
	int fd;
};
int ft_out_open(struct ft_outfile *o, const char *target, const char *cmd);
const char *ft_out_path(const struct ft_outfile *o);
int ft_out_close(struct ft_outfile *o, int ok);        /* ok: complete; 0 when in place */

#endif
