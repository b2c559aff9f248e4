// SPDX-License-Identifier: GPL-2.0
/*
 * runas USER PROGRAM [ARG]...: run PROGRAM as USER, for good.
 *
 * The dracut lane's initramfs has no su or setpriv; this is the least that
 * does the job.  USER comes from /etc/passwd, read here (a static program
 * has no NSS).  All groups are dropped but USER's own, the real, effective
 * and saved ids all become USER's, no_new_privs is set, and the result is
 * checked before PROGRAM runs: a uid of 0 or a way back to it is an error.
 * The environment is replaced by a minimal one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int lookup(const char *user, uid_t *uid, gid_t *gid, char *home, size_t len)
{
	FILE *f = fopen("/etc/passwd", "re");
	char line[512];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		/* name:passwd:uid:gid:gecos:home:shell */
		char *field[7] = { 0 }, *p = line;
		int n;

		line[strcspn(line, "\n")] = 0;
		for (n = 0; n < 7 && p; n++)
			field[n] = strsep(&p, ":");
		if (n < 6 || strcmp(field[0], user))
			continue;
		*uid = (uid_t)strtoul(field[2], NULL, 10);
		*gid = (gid_t)strtoul(field[3], NULL, 10);
		snprintf(home, len, "%s", field[5][0] ? field[5] : "/");
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

int main(int argc, char **argv)
{
	static char env_home[600], env_user[300];
	char *envp[] = { "PATH=/usr/bin:/usr/sbin:/bin:/sbin", env_home, env_user, NULL };
	uid_t uid, ruid, euid, suid;
	gid_t gid, rgid, egid, sgid;
	char home[512];

	if (argc < 3) {
		fprintf(stderr, "usage: runas USER PROGRAM [ARG]...\n");
		return 2;
	}
	if (lookup(argv[1], &uid, &gid, home, sizeof(home))) {
		fprintf(stderr, "runas: no user '%s' in /etc/passwd\n", argv[1]);
		return 2;
	}
	if (uid == 0 || gid == 0) {
		fprintf(stderr, "runas: '%s' is not an unprivileged user\n", argv[1]);
		return 2;
	}
	if (setgroups(1, &gid) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)) {
		perror("runas: dropping privileges");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		perror("runas: PR_SET_NO_NEW_PRIVS");
		return 2;
	}
	/* No way back: every id is the user's and root's are refused. */
	if (getresuid(&ruid, &euid, &suid) || getresgid(&rgid, &egid, &sgid) ||
	    ruid != uid || euid != uid || suid != uid ||
	    rgid != gid || egid != gid || sgid != gid) {
		fprintf(stderr, "runas: ids did not change as asked\n");
		return 2;
	}
	if (setuid(0) == 0 || errno != EPERM) {
		fprintf(stderr, "runas: setuid(0) did not fail with EPERM\n");
		return 2;
	}
	snprintf(env_home, sizeof(env_home), "HOME=%s", home);
	snprintf(env_user, sizeof(env_user), "USER=%s", argv[1]);
	if (chdir(home))
		(void)chdir("/");
	execve(argv[2], argv + 2, envp);
	fprintf(stderr, "runas: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
