// SPDX-License-Identifier: GPL-2.0
/*
 * The trace (trace.h): what a run's child records with h_rec_*(), and
 * the comparison of a dtimerfd run's trace with native's.
 */
#include <stdarg.h>
#include <sys/mman.h>

#include "harness.h"
#include "trace.h"

struct h_run *h_run;

struct h_run *run_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct h_run), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

/*
 * Append an observation, labelled by fmt, to this run's record; past
 * H_MAX_OBS the run is marked overflowed instead (and fails).
 */
static void obs_add(struct h_obs *o, const char *fmt, va_list ap)
{
	if (!h_run)
		return;
	if (h_run->nobs >= H_MAX_OBS) {
		h_run->overflow = 1;
		return;
	}
	vsnprintf(o->label, sizeof(o->label), fmt, ap);
	h_run->obs[h_run->nobs++] = *o;
}

void h_rec_ret(long long ret, int err, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_RET, .v = ret, .err = ret < 0 ? err : 0 };
	va_list ap;

	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_val(long long v, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_VAL, .v = v };
	va_list ap;

	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_approx(long long v, long long tol, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_APPROX, .v = v, .tol = tol };
	va_list ap;

	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_str(const char *s, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_STR };
	va_list ap;

	snprintf(o.str, sizeof(o.str), "%s", s);
	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_its(const struct itimerspec *its, long long tol,
	       const char *fmt, ...)
{
	char label[H_LABEL];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	h_rec_approx(h_its_value(its), tol, "%s it_value", label);
	h_rec_val(h_its_interval(its), "%s it_interval", label);
}

static void obs_show(const char *who, const struct h_obs *o)
{
	switch (o->kind) {
	case OBS_RET:
		if (o->v < 0)
			printf("#   %-10s %lld, errno %s\n", who, o->v,
			       strerrorname_np(o->err) ?: "?");
		else
			printf("#   %-10s %lld\n", who, o->v);
		break;
	case OBS_VAL:
		printf("#   %-10s %lld\n", who, o->v);
		break;
	case OBS_APPROX:
		printf("#   %-10s %lld (+-%lld)\n", who, o->v, o->tol);
		break;
	case OBS_STR:
		printf("#   %-10s \"%s\"\n", who, o->str);
		break;
	}
}

static int obs_equal(const struct h_obs *a, const struct h_obs *b)
{
	long long tol, d;

	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case OBS_RET:
		return a->v == b->v && (a->v >= 0 || a->err == b->err);
	case OBS_VAL:
		return a->v == b->v;
	case OBS_APPROX:
		tol = a->tol > b->tol ? a->tol : b->tol;
		d = a->v - b->v;
		return d <= tol && d >= -tol;
	case OBS_STR:
		return !strcmp(a->str, b->str);
	}
	return 0;
}

/* The differential check: 0 when @b's trace matches native's @a. */
int compare(const struct h_run *a, const struct h_run *b,
	    const char *bname)
{
	int n = a->nobs > b->nobs ? a->nobs : b->nobs;
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		const struct h_obs *x = i < a->nobs ? &a->obs[i] : NULL;
		const struct h_obs *y = i < b->nobs ? &b->obs[i] : NULL;

		if (!x || !y) {
			printf("# trace length differs: native %d steps, %s %d; first extra step: %s\n",
			       a->nobs, bname, b->nobs,
			       x ? x->label : y->label);
			return 1;
		}
		if (strcmp(x->label, y->label)) {
			printf("# traces diverge at step %d: native '%s', %s '%s'\n",
			       i + 1, x->label, bname, y->label);
			return 1;
		}
		if (!obs_equal(x, y)) {
			if (bad < 10) {
				printf("# differs at step %d '%s':\n", i + 1,
				       x->label);
				obs_show("native:", x);
				obs_show(bname, y);
			}
			bad++;
		}
	}
	if (bad > 10)
		printf("# ... %d differences in all\n", bad);
	return bad != 0;
}
