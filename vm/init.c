// SPDX-License-Identifier: GPL-2.0
/*
 * PID 1 of the dtimerfd test guest.
 *
 * The guest has three serial ports, each with one job (the names are
 * amd64's; vm/arch.sh has each architecture's, arm64's are ttyAMA0, ttyS0
 * and ttyS1):
 *
 *   ttyS0  the kernel console (the host keeps it in build/vm/console.log)
 *   ttyS1  the verdict: one "ok <step>: ..." or "fail <step>: ..." line per
 *          step below, then "success <status>" only when every step was
 *          clean.  Nothing else writes to this port and a crashed kernel
 *          cannot write the last line, so the host trusts nothing else.
 *   ttyS2  stdout and stderr of the command (vm/run streams it to the user)
 *
 * Steps: mount the pseudo file systems, load /dtimerfd.ko with
 * finit_module(2), wait for /dev/dtimerfd, run /run.sh (written by vm/run)
 * with busybox sh, kill whatever it left behind, unload the module, ask
 * kmemleak (when the kernel has it), scan the kernel log for splats, check
 * the taint flags, report, reboot (which ends QEMU).
 * Everything after the command runs whatever the command did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MODULE_NAME	"dtimerfd"
#define MODULE_PATH	"/dtimerfd.ko"
#define DEVICE_PATH	"/dev/dtimerfd"
#define SCRIPT_PATH	"/run.sh"
/* The ports' names in this guest: the Makefile's, from vm/arch.sh. */
#if !defined(DTFD_VERDICT_PORT) || !defined(DTFD_OUTPUT_PORT)
#error "build with make: DTFD_VERDICT_PORT and DTFD_OUTPUT_PORT come from vm/arch.sh"
#endif
#define VERDICT_PORT	DTFD_VERDICT_PORT
#define OUTPUT_PORT	DTFD_OUTPUT_PORT
#define LOAD_MARKER	"dtimerfd-init: loading " MODULE_PATH

/* The only taint flags a clean run may show: O (out-of-tree), E (unsigned). */
#define TAINT_ALLOWED	((1UL << 12) | (1UL << 13))

/*
 * What counts as a kernel splat: splat_words[] and splat_starts[], made by
 * make from vm/splat.txt, the list every lane reads.  Leaks are not in it:
 * kmemleak logs its (often the boot's) suspects, and only
 * kmemleak_check() can tell which ones are ours.
 */
#include "splat.h"
#include "util.h"	/* tests/util.c: h_write_file() */
#include "../examples/irqs.h"	/* idle_exits_read() */

static int console_fd = -1;
static int verdict_fd = -1;
static int output_fd = -1;
static int clean = 1;

static void out(int fd, const char *buf, size_t len)
{
	while (fd >= 0 && len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void __attribute__((format(printf, 2, 3)))
vsay(int to_verdict, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	out(console_fd, "dtimerfd-init: ", 15);
	out(console_fd, line, (size_t)n);
	if (to_verdict)
		out(verdict_fd, line, (size_t)n);
}

#define say(...)	vsay(0, __VA_ARGS__)
#define report(...)	vsay(1, __VA_ARGS__)
#define failure(...)	do { clean = 0; vsay(1, "fail " __VA_ARGS__); } while (0)

static void kmsg(const char *msg)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		out(fd, msg, strlen(msg));
		close(fd);
	}
}

static void setup_fs(void)
{
	static const struct {
		const char *type, *dir;
		unsigned long flags;
		int optional;
	} fs[] = {
		{ "devtmpfs", "/dev", MS_NOSUID, 0 },
		{ "proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0 },
		{ "sysfs", "/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0 },
		{ "tmpfs", "/tmp", MS_NOSUID | MS_NODEV, 0 },
		{ "tmpfs", "/run", MS_NOSUID | MS_NODEV, 0 },
		{ "tmpfs", "/dev/shm", MS_NOSUID | MS_NODEV, 1 },
		{ "devpts", "/dev/pts", MS_NOSUID | MS_NOEXEC, 1 },
		{ "debugfs", "/sys/kernel/debug", 0, 1 },
		/* the power:cpu_idle count of exits from idle (examples/irqs.h) */
		{ "tracefs", "/sys/kernel/tracing", 0, 1 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		mkdir(fs[i].dir, 0755);
		if (mount(fs[i].type, fs[i].dir, fs[i].type, fs[i].flags,
			  NULL) && errno != EBUSY && !fs[i].optional)
			say("mount %s on %s: %s", fs[i].type, fs[i].dir,
			    strerror(errno));
	}
	chmod("/tmp", 01777);
}

/*
 * The count of exits from idle (examples/irqs.h), armed once at boot for
 * the whole run, before any test, and with the other CPUs offline
 * (h_alone()): enabling a trace event patches kernel text while the other
 * vCPUs run it, which QEMU's TCG does not always survive ("Oops: int3" in
 * ttwu_do_activate, at the sched_wakeup tracepoint that comm recording
 * hooks).  Without comm and tgid recording, enabling an event hooks
 * nothing else.
 */
static int arm_idle_count(void *unused)
{
	unsigned long long exits[IRQ_MAXCPU];

	(void)unused;
	h_write_file(IRQ_TRACEFS "/options/record-cmd", "0");
	h_write_file(IRQ_TRACEFS "/options/record-tgid", "0");
	return idle_exits_read(exits, IRQ_MAXCPU);
}

/* The kernel gives PID 1 /dev/console when the initramfs has the node. */
static void setup_console(void)
{
	int fd;

	if (fcntl(1, F_GETFD) < 0 || fcntl(2, F_GETFD) < 0) {
		fd = open("/dev/console", O_RDWR | O_NOCTTY);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
	}
	console_fd = 1;
}

/* A raw serial port: no \n -> \r\n, no echo, writes not line-disciplined. */
static int open_port(const char *path)
{
	struct termios t;
	int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		say("open %s: %s", path, strerror(errno));
		return -1;
	}
	if (!tcgetattr(fd, &t)) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

static void banner(void)
{
	struct utsname u;
	struct sysinfo si;

	uname(&u);
	sysinfo(&si);
	say("%s %s %s %s, %ld CPUs, %lu MiB", u.sysname, u.release,
	    u.version, u.machine, sysconf(_SC_NPROCESSORS_ONLN),
	    (unsigned long)(si.totalram * si.mem_unit >> 20));
}

/*
 * kmemleak, on kernels that have it (the debug kernel).  Only objects
 * allocated after the module was loaded count: the boot's own suspects
 * (a minimal kernel has a few) surface at any later scan.  An object is
 * reported by the second scan that finds it unreferenced, and only when
 * older than 5 s: wait, then scan twice.
 */
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

static unsigned long long load_jiffies;

static unsigned long long read_jiffies(void)
{
	unsigned long long j = 0;
	char line[256];
	FILE *f = fopen("/proc/timer_list", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "jiffies: %llu", &j) == 1)
			break;
	fclose(f);
	return j;
}

static void kmemleak_check(void)
{
	struct timespec ts = { 5, 100 * 1000 * 1000 };
	char line[1024], header[256] = "", first[256] = "";
	int leaks = 0, shown = 0, ours = 0, old = 0;
	unsigned long long j;
	const char *p;
	FILE *f;

	if (access(KMEMLEAK, W_OK))
		return;
	nanosleep(&ts, NULL);
	if (h_write_file(KMEMLEAK, "scan") || h_write_file(KMEMLEAK, "scan")) {
		failure("kmemleak: scan: %s", strerror(errno));
		return;
	}
	f = fopen(KMEMLEAK, "re");
	if (!f) {
		failure("kmemleak: %s: %s", KMEMLEAK, strerror(errno));
		return;
	}
	/* "unreferenced object ...", "  comm "x", pid N, jiffies J", trace */
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "unreferenced object")) {
			ours = 0;
			snprintf(header, sizeof(header), "%.200s", line);
			continue;
		}
		p = strstr(line, "jiffies ");
		if (p && sscanf(p, "jiffies %llu", &j) == 1) {
			ours = j >= load_jiffies;
			if (!ours) {
				old++;
				continue;
			}
			if (!leaks++)
				memcpy(first, header, sizeof(first));
			if (shown++ < 40)
				out(console_fd, header, strlen(header));
		}
		if (ours && shown++ < 40)
			out(console_fd, line, strlen(line));
	}
	fclose(f);
	first[strcspn(first, "\n")] = '\0';
	if (leaks)
		failure("kmemleak: %d suspected leaks since the module was loaded, first: %s",
			leaks, first);
	else
		report("ok kmemleak: no suspected leak since the module was loaded (%d older ones ignored)",
		       old);
}

static int load_module(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct stat st;
	int fd, i;

	fd = open(MODULE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		failure("load: %s: %s", MODULE_PATH, strerror(errno));
		return -1;
	}
	kmsg(LOAD_MARKER "\n");
	load_jiffies = read_jiffies();
	if (syscall(SYS_finit_module, fd, "", 0)) {
		failure("load: finit_module(%s): %s", MODULE_PATH,
			strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	report("ok load: %s loaded", MODULE_PATH);

	/* devtmpfs creates the node from misc_register(); give it 2 s. */
	for (i = 0; i < 200; i++) {
		if (!stat(DEVICE_PATH, &st))
			break;
		nanosleep(&ts, NULL);
	}
	if (i == 200) {
		failure("device: %s did not appear", DEVICE_PATH);
		return -1;
	}
	if (!S_ISCHR(st.st_mode)) {
		failure("device: %s is not a character device", DEVICE_PATH);
		return -1;
	}
	report("ok device: %s is char %u:%u, mode %04o", DEVICE_PATH,
	       major(st.st_rdev), minor(st.st_rdev), st.st_mode & 07777);
	return 0;
}

static int run_command(void)
{
	static char *const envp[] = {
		"HOME=/root",
		"PATH=/mnt/add:/bin:/sbin:/usr/bin:/usr/sbin",
		"TERM=dumb",
		"DTIMERFD_GUEST=1",
		NULL,
	};
	int status, fd;
	pid_t pid, w;

	pid = fork();
	if (pid < 0) {
		failure("command: fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		setsid();
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		if (output_fd >= 0) {
			dup2(output_fd, 1);
			dup2(output_fd, 2);
		}
		if (chdir("/mnt/add"))
			chdir("/");
		execle("/bin/sh", "sh", SCRIPT_PATH, NULL, envp);
		say("exec /bin/sh %s: %s", SCRIPT_PATH, strerror(errno));
		_exit(127);
	}

	/* PID 1 inherits every orphan: reap them until the command ends. */
	for (;;) {
		w = wait(&status);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			failure("command: wait: %s", strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Nothing may keep the module busy: end everything but PID 1. */
static void kill_leftovers(void)
{
	kill(-1, SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
}

static void unload_module(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	kmsg("dtimerfd-init: unloading " MODULE_NAME "\n");
	/* Files may still be on their way to the last fput(): retry 2 s. */
	for (i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK)) {
			report("ok unload: " MODULE_NAME " unloaded");
			return;
		}
		if (errno == ENOENT) {
			report("ok unload: " MODULE_NAME
			       " was already unloaded by the command");
			return;
		}
		if (errno != EWOULDBLOCK && errno != EBUSY && errno != EINTR)
			break;
		nanosleep(&ts, NULL);
	}
	failure("unload: delete_module(" MODULE_NAME "): %s", strerror(errno));
}

/* Lines of the kernel log that come from the kernel (facility 0). */
static int is_splat(const char *line)
{
	const char *msg;

	if (line[0] != '<' || line[1] < '0' || line[1] > '7' || line[2] != '>')
		return 0;
	msg = line + 3;
	if (*msg == '[') {
		msg = strchr(msg, ']');
		msg = msg ? msg + 1 : line + 3;
		while (*msg == ' ')
			msg++;
	}
	return splat_match(msg);
}

static void scan_kernel_log(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf, *line, *next;
	int n, found = 0;

	if (size <= 0)
		size = 1 << 20;
	buf = malloc((size_t)size + 1);
	if (!buf) {
		failure("kmsg: no memory for the kernel log");
		return;
	}
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (n < 0) {
		failure("kmsg: klogctl: %s", strerror(errno));
		free(buf);
		return;
	}
	buf[n] = '\0';
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (is_splat(line)) {
			if (found++ < 5)
				failure("kmsg: kernel log: %s", line);
		}
	}
	if (found > 5)
		failure("kmsg: %d more splat lines in the kernel log",
			found - 5);
	if (!found)
		report("ok kmsg: no BUG/WARN/Oops/KASAN/UBSAN/lockdep report in the kernel log");
	free(buf);
}

static void check_taint(void)
{
	static const char letters[] = "PFSRMBUDAWCIOELKXTN";
	char buf[64], names[32];
	unsigned long taint;
	unsigned int i, k = 0;
	ssize_t n;
	int fd;

	fd = open("/proc/sys/kernel/tainted", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		failure("taint: cannot read /proc/sys/kernel/tainted");
		return;
	}
	buf[n] = '\0';
	taint = strtoul(buf, NULL, 10);
	for (i = 0; i < sizeof(letters) - 1; i++)
		if (taint & (1UL << i))
			names[k++] = letters[i];
	names[k] = '\0';
	if (taint & ~TAINT_ALLOWED)
		failure("taint: kernel tainted %lu (%s); only O and E are allowed",
			taint, names);
	else
		report("ok taint: %lu (%s)", taint, k ? names : "none");
}

/*
 * QEMU runs with -no-reboot, so a reboot ends it, as panic=-1 does.  A
 * reboot works on every kernel; RB_POWER_OFF needs ACPI power-off support,
 * which a minimal (debug) kernel may lack: it would halt and hang QEMU.
 */
static void power_off(void)
{
	fflush(NULL);
	sync();
	reboot(RB_AUTOBOOT);
	/* Not reached; a PID 1 that returns panics the kernel. */
	for (;;)
		pause();
}

int main(void)
{
	int status = -1;

	setup_console();
	setup_fs();
	h_alone(arm_idle_count, NULL);
	/* From here on every kernel message reaches the console log. */
	klogctl(8 /* SYSLOG_ACTION_CONSOLE_LEVEL */, NULL, 8);
	banner();
	verdict_fd = open_port(VERDICT_PORT);
	output_fd = open_port(OUTPUT_PORT);
	if (verdict_fd < 0)
		power_off();

	if (!load_module()) {
		status = run_command();
		if (status >= 0)
			report("status %d", status);
		kill_leftovers();
		if (output_fd >= 0)
			tcdrain(output_fd);
		unload_module();
	}
	kmemleak_check();
	scan_kernel_log();
	check_taint();

	if (clean && status >= 0)
		report("success %d", status);
	else
		say("not clean: no success verdict");
	tcdrain(verdict_fd);
	power_off();
	return 0;
}
