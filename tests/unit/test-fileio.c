/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The root fd is a boundary: trees whose links point out of it, absolute and
 * through "..", must not make a reader read or a writer write outside it;
 * the kernel's own sysfs links inside it must keep working. Every case runs
 * twice: with openat2() and with the component walk of kernels without it.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "fileio.h"
#include "strutil.h"
#include "test.h"

static char base[] = "/tmp/test-fileio-XXXXXX";
static char *root, *outside, *inside;
static int root_fd = -EBADF;

static void put(const char *dir, const char *path, const char *content)
{
	_cleanup_free_ char *p = strprintf("%s/%s", dir, path), *cmd = NULL;
	FILE *f;

	cmd = strprintf("mkdir -p \"$(dirname '%s')\"", p);
	check(cmd && system(cmd) == 0);
	f = fopen(p, "we");
	check(f != NULL);
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void link_in_root(const char *target, const char *path)
{
	_cleanup_free_ char *p = strprintf("%s/%s", root, path), *cmd = NULL;

	cmd = strprintf("mkdir -p \"$(dirname '%s')\"", p);
	check(cmd && system(cmd) == 0);
	check(symlink(target, p) == 0);
}

static char *outside_file(const char *name)
{
	_cleanup_free_ char *p = strprintf("%s/%s", outside, name);
	char buf[256] = "";
	size_t n;
	FILE *f;

	/* Plain fopen(): this is the test's view of the world, not the agent's. */
	f = fopen(p, "re");
	if (!f)
		return strdup("(missing)");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strdup(buf);
}

static void setup(void)
{
	_cleanup_free_ char *abs_secret = NULL, *rel_secret = NULL, *deep = NULL;

	check(mkdtemp(base) != NULL);
	root = strprintf("%s/root", base);
	outside = strprintf("%s/outside", base);
	put(outside, "secret", "outside\n");
	put(outside, "dir/file", "outside dir\n");
	/*
	 * The links that must land inside the root name a directory that exists
	 * nowhere on the host (the temporary directory's name, at "/"): a
	 * broken resolver fails with ENOENT instead of reading or writing a real
	 * /etc/passwd. (An earlier draft linked to /etc/passwd; run against the
	 * old code, it truncated the host's.)
	 */
	inside = strprintf("/%s/passwd", strrchr(base, '/') + 1);
	put(root, inside + 1, "root's own passwd\n");
	put(root, "proc/sys/kernel/sched_relax_domain_level", "-1\n");
	/* sysfs: cpu0/node0 -> ../../node/node0, as the kernel makes it. */
	put(root, "sys/devices/system/node/node0/cpulist", "0-3\n");
	link_in_root("../../node/node0", "sys/devices/system/cpu/cpu0/node0");
	link_in_root("../../../../bus/cpu", "sys/devices/system/cpu/cpu0/subsystem");
	put(root, "sys/bus/cpu/uevent", "bus\n");

	abs_secret = strprintf("%s/secret", outside);
	/* From root/proc/sys/kernel/: four levels up is root/, five is base/. */
	rel_secret = strdup("../../../../outside/secret");
	link_in_root(abs_secret, "proc/sys/kernel/sched_smt_buddy_assist");
	link_in_root(rel_secret, "proc/sys/kernel/rel_link");
	deep = strprintf("../../../../../../../../../..%s", inside);
	link_in_root(deep, "proc/sys/kernel/deep_rel");
	link_in_root(inside, "proc/sys/kernel/abs_inside");
	link_in_root(outside, "sys/kernel/debug");   /* a directory link out */
	link_in_root(abs_secret, "etc/default/grub.d/topotune.cfg");
	check(root_open(root, &root_fd) == 0);
}

static void test_read(const char *mode)
{
	_cleanup_free_ char *s = NULL;
	char buf[64];
	int fd;

	/* Links out of the root resolve inside it: there is no outside. */
	check_int(read_file_at(root_fd, "/proc/sys/kernel/sched_smt_buddy_assist", 0, &s, NULL), -ENOENT);
	check_int(read_line_buf_at(root_fd, "proc/sys/kernel/rel_link", buf, sizeof(buf)), -ENOENT);
	check_int(read_file_at(root_fd, "sys/kernel/debug/secret", 0, &s, NULL), -ENOENT);
	check_int(read_file_at(root_fd, "../outside/secret", 0, &s, NULL), -ENOENT);
	check_ctx(mode, !path_exists_at(root_fd, "sys/kernel/debug/dir"));
	check_ctx(mode, !dir_exists_at(root_fd, "sys/kernel/debug/dir"));

	/* ...and there they find the root's own files. */
	check_int(read_line_at(root_fd, "proc/sys/kernel/abs_inside", &s), 0);
	check_str(s, "root's own passwd");
	free(s), s = NULL;
	check_int(read_line_buf_at(root_fd, "proc/sys/kernel/deep_rel", buf, sizeof(buf)), 17);
	check_str(buf, "root's own passwd");

	/* The kernel's own relative links in sysfs keep working. */
	check_int(read_line_at(root_fd, "sys/devices/system/cpu/cpu0/node0/cpulist", &s), 0);
	check_str(s, "0-3");
	free(s), s = NULL;
	check_int(read_line_at(root_fd, "sys/devices/system/cpu/cpu0/subsystem/uevent", &s), 0);
	check_str(s, "bus");
	free(s), s = NULL;
	check_ctx(mode, dir_exists_at(root_fd, "sys/devices/system/cpu/cpu0/node0"));

	/* The attribute reader follows the same rule. */
	check_int(read_attr_at(root_fd, "proc/sys/kernel/sched_smt_buddy_assist", buf, sizeof(buf)), -ENOENT);
	check_int(read_attr_at(root_fd, "proc/sys/kernel/rel_link", buf, sizeof(buf)), -ENOENT);
	check_int(read_attr_at(root_fd, "sys/kernel/debug/secret", buf, sizeof(buf)), -ENOENT);
	check_int(read_attr_at(root_fd, "proc/sys/kernel/abs_inside", buf, sizeof(buf)), 17);
	check_str(buf, "root's own passwd");
	check_int(read_attr_at(root_fd, "proc/sys/kernel/deep_rel", buf, sizeof(buf)), 17);
	check_int(read_attr_at(root_fd, "sys/devices/system/cpu/cpu0/node0/cpulist", buf, sizeof(buf)), 3);
	check_str(buf, "0-3");
	check_int(read_attr_at(root_fd, "proc/sys/kernel/abs_inside", buf, 4), -ENOBUFS);
	check_int(read_attr_at(root_fd, "sys/devices/system/node", buf, sizeof(buf)), -EISDIR);

	/* Opened through the read rule, a directory below the root is a root of its own. */
	fd = open_beneath(root_fd, "sys/devices/system/cpu", O_PATH | O_DIRECTORY, 0, FILEIO_READ);
	check_ctx(mode, fd >= 0);
	check_int(read_line_buf_at(fd, "cpu0/node0/cpulist", buf, sizeof(buf)), -ENOENT);
	safe_close(fd);
}

static void test_write(const char *mode)
{
	_cleanup_free_ char *s = NULL, *o = NULL;

	/* A link on the way is refused, wherever it points. */
	check_int(write_string_at(root_fd, "proc/sys/kernel/sched_smt_buddy_assist", "1"), -ELOOP);
	check_int(write_string_at(root_fd, "proc/sys/kernel/rel_link", "1"), -ELOOP);
	check_int(write_string_at(root_fd, "proc/sys/kernel/abs_inside", "1"), -ELOOP);
	check_int(write_string_at(root_fd, "sys/kernel/debug/secret", "1"), -ELOOP);
	check_int(write_string_at(root_fd, "sys/devices/system/cpu/cpu0/node0/cpulist", "1"), -ELOOP);
	check_int(write_string_at(root_fd, "../outside/secret", "1"), -EXDEV);
	check_int(create_file_at(root_fd, "etc/default/grub.d/topotune.cfg", "GRUB=x\n", 0644), -ELOOP);
	check_int(create_file_at(root_fd, "sys/kernel/debug/new", "x\n", 0644), -ELOOP);
	check_int(mkdir_beneath(root_fd, "sys/kernel/debug/newdir", 0755), -ELOOP);
	check_int(unlink_beneath(root_fd, "sys/kernel/debug/secret", false), -ELOOP);
	check_str(o = outside_file("secret"), "outside\n");
	check_str(s = outside_file("dir/file"), "outside dir\n");
	free(s), s = NULL;
	check_int(read_file_at(root_fd, inside, 0, &s, NULL), 0);
	check_str(s, "root's own passwd\n");
	free(s), s = NULL;

	/*
	 * A hard link in the root to a file outside (issue 29): no symlink on
	 * the way, yet writing would go through. Refused, the outside file
	 * neither written nor truncated.
	 */
	{
		_cleanup_free_ char *src = strprintf("%s/secret", outside), *dst = strprintf("%s/proc/sys/kernel/hard", root);

		(void)unlink(dst);
		check(src && dst && link(src, dst) == 0);
		check_int(write_string_at(root_fd, "proc/sys/kernel/hard", "1"), -EMLINK);
		free(o);
		check_str(o = outside_file("secret"), "outside\n");
		free(o), o = NULL;
		check(unlink(dst) == 0);
	}

	/* Plain paths are written as ever. */
	check_int(write_string_at(root_fd, "/proc/sys/kernel/sched_relax_domain_level", "2"), 0);
	check_int(read_line_at(root_fd, "proc/sys/kernel/sched_relax_domain_level", &s), 0);
	check_str(s, "2");
	free(s), s = NULL;
	check_int(mkdir_beneath(root_fd, "etc/default/grub.d/sub", 0755), 0);
	check_int(create_file_at(root_fd, "etc/default/grub.d/sub/a.cfg", "a\n", 0644), 0);
	check_int(create_file_at(root_fd, "etc/default/grub.d/sub/a.cfg", "b\n", 0644), 0);
	check_int(read_file_at(root_fd, "etc/default/grub.d/sub/a.cfg", 0, &s, NULL), 0);
	check_str(s, "b\n");
	free(s), s = NULL;
	/* The mode asked for, not narrowed by the umask: topotuned.service has UMask=0077. */
	{
		mode_t old = umask(0077);
		struct stat st;

		check_int(create_file_at(root_fd, "etc/default/grub.d/sub/a.cfg", "c\n", 0644), 0);
		check(fstatat(root_fd, "etc/default/grub.d/sub/a.cfg", &st, 0) == 0);
		check_ctx(mode, (st.st_mode & 07777) == 0644);
		umask(old);
	}
	check_int(unlink_beneath(root_fd, "etc/default/grub.d/sub/a.cfg", false), 0);
	check_int(unlink_beneath(root_fd, "etc/default/grub.d/sub", true), 0);

	/* A hard link's other name keeps its content: the file is replaced, not written through. */
	{
		_cleanup_free_ char *a = strprintf("%s%s", root, inside), *b = strprintf("%s/etc/hard", root);

		check(link(a, b) == 0);
		check_int(create_file_at(root_fd, "etc/hard", "replaced\n", 0644), 0);
		check_int(read_file_at(root_fd, inside, 0, &s, NULL), 0);
		check_str(s, "root's own passwd\n");
		free(s), s = NULL;
		check(unlink(b) == 0);
	}
	check_ctx(mode, !path_exists_at(root_fd, "etc/.#hard.topotune-tmp"));
}

/* Readers take regular files only: a FIFO neither blocks open() nor read(). */
static void test_fifo(const char *mode)
{
	_cleanup_free_ char *p = strprintf("%s/etc/fifo", root), *s = NULL;
	char buf[16];
	pid_t pid;
	int status;

	check(mkfifo(p, 0644) == 0);
	/* In a child with an alarm: the old code hangs here. */
	pid = fork();
	if (pid == 0) {
		alarm(5);
		_exit(read_file_at(root_fd, "etc/fifo", 0, &s, NULL) == -EBADFD &&
		      read_line_buf_at(root_fd, "etc/fifo", buf, sizeof(buf)) == -EBADFD &&
		      read_head_at(root_fd, "etc/fifo", 8, &s) == -EBADFD &&
		      /* no reader: O_NONBLOCK makes open() fail */
		      write_string_at(root_fd, "etc/fifo", "x") == -ENXIO && read_file_at(root_fd, "etc", 0, &s, NULL) == -EISDIR
			      ? 0
			      : 1);
	}
	check(pid > 0 && waitpid(pid, &status, 0) == pid);
	check_ctx(mode, WIFEXITED(status) && WEXITSTATUS(status) == 0);
	check(unlink(p) == 0);
}

/*
 * The attribute reader has no fstat() to tell a FIFO; O_NONBLOCK keeps it
 * from blocking all the same: no writer reads as an empty line, a writer
 * with nothing written as -EAGAIN. The walk (@walk) refuses it by name.
 */
static void test_attr_fifo(bool walk, const char *mode)
{
	_cleanup_free_ char *p = strprintf("%s/etc/attr-fifo", root);
	pid_t pid;
	int status;

	check(mkfifo(p, 0644) == 0);
	pid = fork();
	if (pid == 0) {
		char buf[16];
		int w, r1, r2;

		alarm(5);
		r1 = read_attr_at(root_fd, "etc/attr-fifo", buf, sizeof(buf));
		/* A writer that never writes: the old blocking open()/read() would wait for it forever. */
		w = open(p, O_RDWR | O_CLOEXEC);
		r2 = read_attr_at(root_fd, "etc/attr-fifo", buf, sizeof(buf));
		if (w < 0)
			_exit(2);
		if (walk)
			_exit(r1 == -EBADFD && r2 == -EBADFD ? 0 : 1);
		_exit(r1 == 0 && streq(buf, "") && r2 == -EAGAIN ? 0 : 1);
	}
	check(pid > 0 && waitpid(pid, &status, 0) == pid);
	check_ctx(mode, WIFEXITED(status) && WEXITSTATUS(status) == 0);
	check(unlink(p) == 0);
}

/*
 * A kernel without openat2(), or a container whose seccomp filter predates
 * it: in a child whose filter answers openat2() with @err, before the first
 * open (the probe runs once), every rule holds through the walk.
 */
static void test_no_openat2(int err, const char *mode)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ELEMENTSOF(f), .filter = f };
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		_cleanup_free_ char *s = NULL;
		char buf[64];
		bool ok;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(2);
		fileio_force_walk(false);   /* probe again, under the filter */
		ok = read_line_buf_at(root_fd, "sys/devices/system/cpu/cpu0/node0/cpulist", buf, sizeof(buf)) == 3 &&
		     read_attr_at(root_fd, "sys/devices/system/cpu/cpu0/node0/cpulist", buf, sizeof(buf)) == 3 &&
		     read_attr_at(root_fd, "proc/sys/kernel/rel_link", buf, sizeof(buf)) == -ENOENT &&
		     read_line_at(root_fd, "proc/sys/kernel/abs_inside", &s) == 0 && streq(s, "root's own passwd") &&
		     read_line_buf_at(root_fd, "proc/sys/kernel/rel_link", buf, sizeof(buf)) == -ENOENT &&
		     write_string_at(root_fd, "proc/sys/kernel/sched_smt_buddy_assist", "1") == -ELOOP &&
		     write_string_at(root_fd, "proc/sys/kernel/sched_relax_domain_level", "-1") == 0;
		_exit(ok ? 0 : 1);
	}
	check(pid > 0 && waitpid(pid, &status, 0) == pid);
	check_ctx(mode, WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A file of exactly @max bytes is within @max; one byte more is not (issue 29). */
static void test_max_size(void)
{
	_cleanup_free_ char *data = malloc(8193), *got = NULL;
	size_t size = 0;

	check(data != NULL);
	if (!data)
		return;
	memset(data, 'a', 8192);
	data[8192] = '\0';
	put(root, "max/exact", data);
	check_int(read_file_at(root_fd, "max/exact", 8192, &got, &size), 0);
	check_int(size, 8192);
	free(got);
	got = NULL;
	check_int(read_file_at(root_fd, "max/exact", 8191, &got, NULL), -EFBIG);
	put(root, "max/small", "abc");
	check_int(read_file_at(root_fd, "max/small", 3, &got, &size), 0);
	check_int(size, 3);
	free(got);
	got = NULL;
	check_int(read_file_at(root_fd, "max/small", 2, &got, NULL), -EFBIG);
}

int main(void)
{
	_cleanup_free_ char *cmd = NULL;

	setup();
	test_max_size();
	test_read("openat2");
	test_write("openat2");
	test_fifo("openat2");
	test_attr_fifo(false, "openat2");
	test_no_openat2(ENOSYS, "seccomp ENOSYS");
	test_no_openat2(EPERM, "seccomp EPERM");
	fileio_force_walk(true);
	test_read("walk");
	test_write("walk");
	test_fifo("walk");
	test_attr_fifo(true, "walk");

	safe_close(root_fd);
	cmd = strprintf("rm -rf '%s'", base);
	check(cmd && system(cmd) == 0);
	free(root);
	free(outside);
	free(inside);
	return test_end("fileio");
}
