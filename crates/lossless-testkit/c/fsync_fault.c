/* A disk that fails the flush of a directory, preloaded (LD_PRELOAD) into a process:
 * while the file named by LOSSLESS_FAULT_DIR_FSYNC exists, fsync(2) and fdatasync(2)
 * of a directory fail with EIO, as the kernel reports a writeback error of the
 * directory's metadata. Every other call (and every call while the file is absent)
 * goes to libc. Each failure made is counted in LOSSLESS_FAULT_DIR_FSYNC's file (one
 * line "fail" appended), so a test can tell the fault was taken.
 *
 * A separate library from the emulated DCB driver: it wraps nothing else. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* Whether fd is a directory and the fault is armed; counts the failure. */
static int fails(int fd)
{
	const char *flag = getenv("LOSSLESS_FAULT_DIR_FSYNC");
	struct stat st;
	int saved = errno;
	int out;
	if (!flag || !*flag || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		errno = saved;
		return 0;
	}
	out = open(flag, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (out < 0) {
		errno = saved;
		return 0;
	}
	if (write(out, "fail\n", 5) != 5) {
		/* Counted or not, the fault is taken. */
	}
	close(out);
	return 1;
}

EXPORT int fsync(int fd)
{
	static int (*real)(int);
	if (fails(fd)) {
		errno = EIO;
		return -1;
	}
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	return real(fd);
}

EXPORT int fdatasync(int fd)
{
	static int (*real)(int);
	if (fails(fd)) {
		errno = EIO;
		return -1;
	}
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	return real(fd);
}
