/*
 * fkind_table.c: converter/analyse/fkind.c's table of finding kinds as JSON, for
 * tests/unit/test_fkind_table.py: each kind's names, which of its ops are
 * set, the members its `json` writes, its timeline arguments' names, its
 * evidence line and suggestion, for one finding of that kind.
 */
#include <stdio.h>
#include <string.h>

#include "fkind.h"
#include "json.h"
#include "pftrace.h"

int main(void)
{
	struct ft_json jw, *j = &jw;
	ft_json_begin(j, stdout);
	ft_json_arr(j, NULL);
	for (int k = 0; k < FT_FK_N; k++) {
		const struct ft_fkind_ops *o = ft_fkinds[k];
		struct ft_finding f;
		memset(&f, 0, sizeof f);
		f.kind = k;
		f.symbol = "cuMemcpyDtoH_v2";
		f.site = "train.py:12 in step";
		f.lock_name = "launch_lock";
		f.next_call = "cuLaunchKernel";
		f.opener = "data.py:3 in __getitem__";
		f.start = 1000, f.end = 2000, f.lost_ns = 1000;
		ft_json_obj(j, NULL);
		ft_json_int(j, "index", k);
		ft_json_str(j, "key", o->key);
		ft_json_str(j, "slice", o->slice);
		ft_json_str(j, "track", o->track);
		ft_json_str(j, "row", o->row);
		ft_json_int(j, "flags", o->flags);
		ft_json_obj(j, "ops");
#define OP(name) ft_json_bool(j, #name, o->name != NULL);
		OP(suggestion) OP(advice) OP(cost) OP(label) OP(json) OP(args)
		OP(identity) OP(row_identity) OP(site) OP(same_row) OP(describe) OP(emit)
#undef OP
		ft_json_end(j);
		if (o->json) {
			ft_json_obj(j, "json");
			o->json(j, &f);
			ft_json_end(j);
		}
		if (o->args) {
			struct pf_arg a[FT_FK_MAX_ARGS + 3];
			char key[FT_FK_MAX_KEYS][32];
			int n = o->args(&f, a, key);
			ft_json_arr(j, "args");
			for (int i = 0; i < n; i++)
				ft_json_str(j, NULL, a[i].name);
			ft_json_end(j);
		}
		if (o->label) {
			char line[400];
			o->label(&f, line, sizeof line);
			ft_json_str(j, "label", line);
		}
		if (o->suggestion)
			ft_json_str(j, "suggestion", o->suggestion(&f));
		ft_json_end(j);
	}
	ft_json_end(j);
	fputc('\n', stdout);
	return 0;
}
