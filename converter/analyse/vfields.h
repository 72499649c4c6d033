/*
 * vfields.h: the helpers that turn verdict.def's columns into code: a
 * row's scope (P, R), its ranks flag (0, 1) and its diff way (NONE,
 * STATE, NS) select code at compile time. FT_VF_IF(c, code) keeps code
 * when c expands to 1.
 */
#ifndef FT_VFIELDS_H
#define FT_VFIELDS_H

#define FT_VF_IF(c, ...) FT_VF_IF_(c, __VA_ARGS__)
#define FT_VF_IF_(c, ...) FT_VF_IF_##c(__VA_ARGS__)
#define FT_VF_IF_0(...)
#define FT_VF_IF_1(...) __VA_ARGS__

/* scope: R rows are the run's verdict only */
#define FT_VF_RUN_P 0
#define FT_VF_RUN_R 1
/* diff: shown by diff or not */
#define FT_VF_SHOWN_NONE 0
#define FT_VF_SHOWN_STATE 1
#define FT_VF_SHOWN_NS 1
/* the diff ways, as values (struct ft_diff_vrow's way) */
enum ft_vf_diff { FT_VF_DIFF_NONE, FT_VF_DIFF_STATE, FT_VF_DIFF_NS };

#endif
