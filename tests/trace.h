/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The harness's own: the trace of a run, in memory shared between the
 * run's child, which records into it (h_rec_*(), harness.h), and the
 * parent, which compares a dtimerfd run's with native's and reads the
 * verdict the child left there (harness.c).
 */
#ifndef DTFD_TESTS_TRACE_H
#define DTFD_TESTS_TRACE_H

enum obs_kind { OBS_RET, OBS_VAL, OBS_APPROX, OBS_STR };

#define H_LABEL	72
#define H_STR	120
#define H_MAX_OBS 6000

struct h_obs {
	char label[H_LABEL];
	int kind;
	int err;
	long long v;
	long long tol;
	char str[H_STR];
};

struct h_run {
	int nobs;
	int overflow;
	int failed;
	int skipped;
	char skip_reason[160];
	int clock_dirty;
	long long mono0, real0;		/* reference for h_clock_restore */
	struct h_obs obs[H_MAX_OBS];
};

/* the running child's run (NULL in the parent) */
extern struct h_run *h_run;

/* a run in shared memory, or a TAP bail-out */
struct h_run *run_alloc(void);

/* The differential check: 0 when @b's trace matches native's @a. */
int compare(const struct h_run *a, const struct h_run *b, const char *bname);

#endif /* DTFD_TESTS_TRACE_H */
