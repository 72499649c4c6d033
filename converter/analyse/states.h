/*
 * states.h: the states the model of a run decides (a verdict's limit,
 * the window it stands on and the basis of its shares, the cause of a
 * data wait, a process's and a producer's role, how a diff's finding
 * changed and what its change is of), each an enum with one X-macro list giving the name every
 * output prints for it. Logic compares the enums; the text, JSON and HTML
 * writers print ft_<state>_name(). Value 0 of each is "not decided" and
 * has no name (NULL). A new state is one line in its list.
 */
#ifndef FT_STATES_H
#define FT_STATES_H

/* which feed limits a process (struct ft_verdict's limit) */
#define FT_LIMITS(X)                                    \
	X(FT_LIMIT_SUBMISSION, "work submission")       \
	X(FT_LIMIT_DATA, "data delivery")               \
	X(FT_LIMIT_SYNC, "synchronization")             \
	X(FT_LIMIT_LOCKS, "locks")                      \
	X(FT_LIMIT_GPU, "GPU-bound")                    \
	X(FT_LIMIT_NONE, "none")                        \
	X(FT_LIMIT_RANKS, "other ranks")

/* what the verdict's window starts from (struct ft_run_verdict's from) */
#define FT_FROMS(X)                                     \
	X(FT_FROM_STEPS, "steps")                       \
	X(FT_FROM_LAUNCH, "first launch")               \
	X(FT_FROM_BATCH, "first batch")                 \
	X(FT_FROM_WHOLE, "whole run")

/* why the loop waits for data (struct ft_run_verdict's data_cause) */
#define FT_CAUSES(X)                                    \
	X(FT_CAUSE_IO, "I/O")                           \
	X(FT_CAUSE_PREPROCESSING, "preprocessing")      \
	X(FT_CAUSE_UNKNOWN, "unknown")                  \
	X(FT_CAUSE_RUNQ, "waiting for a core")          \
	X(FT_CAUSE_MAPPED, "mapped I/O")

/* a process's part in the run (roles.c) */
#define FT_ROLES(X)                                     \
	X(FT_ROLE_MAIN, "main")                         \
	X(FT_ROLE_WORKER, "worker")                     \
	X(FT_ROLE_RANK, "rank")                         \
	X(FT_ROLE_HELPER, "helper")

/* a thread delivering data to the feeding process (struct ft_producer) */
#define FT_PRODS(X)                                     \
	X(FT_PROD_WORKER, "worker")                     \
	X(FT_PROD_LOADER, "loader thread")

/* what the verdict's shares stand on (struct ft_verdict's basis): the
 * GPU's idle time split by the feed, or the feeding threads' time */
#define FT_BASES(X)                                     \
	X(FT_BASIS_GPU_IDLE, "gpu_idle")                \
	X(FT_BASIS_THREAD_TIME, "thread_time")

/* how a finding changed from one side of a diff to the other */
#define FT_STATUSES(X)                                  \
	X(FT_STATUS_GONE, "gone")                       \
	X(FT_STATUS_NEW, "new")                         \
	X(FT_STATUS_SHRANK, "shrank")                   \
	X(FT_STATUS_GREW, "grew")                       \
	X(FT_STATUS_SAME, "same")

/* what a diff's change is of (diff.h's change_of) */
#define FT_CHANGE_OFS(X)                                \
	X(FT_OF_STEP_TIME, "step_time")                 \
	X(FT_OF_WALL_TIME, "wall_time")                 \
	X(FT_OF_STEP_MEDIAN, "step_median")

#define FT_STATE_ENUM_(id, name) id,
#define FT_STATE_NAME_(id, name) name,

/* enum type (first value UNSET) and const char *type_name(enum type) */
#define FT_STATE_(type, unset, list)                                            \
	enum type { unset, list(FT_STATE_ENUM_) };                              \
	static inline const char *type##_name(enum type s)                     \
	{                                                                       \
		static const char *const name[] = { NULL, list(FT_STATE_NAME_) }; \
		return (unsigned)s < sizeof name / sizeof *name ? name[s] : NULL; \
	}

FT_STATE_(ft_limit, FT_LIMIT_UNSET, FT_LIMITS)
FT_STATE_(ft_from, FT_FROM_UNSET, FT_FROMS)
FT_STATE_(ft_cause, FT_CAUSE_UNSET, FT_CAUSES)
FT_STATE_(ft_proc_role, FT_ROLE_UNSET, FT_ROLES)
FT_STATE_(ft_prod, FT_PROD_UNSET, FT_PRODS)
FT_STATE_(ft_basis, FT_BASIS_UNSET, FT_BASES)
FT_STATE_(ft_status, FT_STATUS_UNSET, FT_STATUSES)
FT_STATE_(ft_change_of, FT_OF_UNSET, FT_CHANGE_OFS)

#endif
