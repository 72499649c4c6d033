/*
 * json.c: the JSON writer (json.h). Each value first writes the comma
 * its level needs, then its key; strings through ft_json_string (util.c).
 */
#include <inttypes.h>

#include "json.h"
#include "util.h"

void ft_json_begin(struct ft_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->more[0] = 0;
}

static void item(struct ft_json *j, const char *key)
{
	if (j->more[j->depth])
		fputc(',', j->out);
	j->more[j->depth] = 1;
	if (key) {
		ft_json_string(j->out, key);
		fputc(':', j->out);
	}
}

static void open_level(struct ft_json *j, const char *key, char open, char close)
{
	item(j, key);
	fputc(open, j->out);
	if (j->depth + 1 < FT_JSON_DEPTH)
		j->depth++;
	j->close[j->depth] = close;
	j->more[j->depth] = 0;
}

void ft_json_obj(struct ft_json *j, const char *key)
{
	open_level(j, key, '{', '}');
}

void ft_json_arr(struct ft_json *j, const char *key)
{
	open_level(j, key, '[', ']');
}

void ft_json_end(struct ft_json *j)
{
	if (j->depth > 0)
		fputc(j->close[j->depth--], j->out);
}

void ft_json_u64(struct ft_json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void ft_json_int(struct ft_json *j, const char *key, int64_t v)
{
	item(j, key);
	fprintf(j->out, "%" PRId64, v);
}

void ft_json_fixed(struct ft_json *j, const char *key, double v, int places)
{
	item(j, key);
	fprintf(j->out, "%.*f", places, v);
}

void ft_json_g(struct ft_json *j, const char *key, double v)
{
	item(j, key);
	fprintf(j->out, "%.6g", v);
}

void ft_json_hex(struct ft_json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->out, "\"0x%" PRIx64 "\"", v);
}

void ft_json_str(struct ft_json *j, const char *key, const char *s)
{
	item(j, key);
	if (s)
		ft_json_string(j->out, s);
	else
		fputs("null", j->out);
}

void ft_json_bool(struct ft_json *j, const char *key, int v)
{
	item(j, key);
	fputs(v ? "true" : "false", j->out);
}

void ft_json_null(struct ft_json *j, const char *key)
{
	item(j, key);
	fputs("null", j->out);
}
