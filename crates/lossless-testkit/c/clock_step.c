/* A step of the wall clock as one process sees it, preloaded (LD_PRELOAD): while the
 * file named by LOSSLESS_CLOCK_STEP holds a number of seconds, clock_gettime(2) of
 * CLOCK_REALTIME (and CLOCK_REALTIME_COARSE) answers that much later (earlier, if
 * negative). The kernel's own clock is untouched, and so are the receive stamps it
 * puts on frames (SO_TIMESTAMPNS): the process's reading and the kernel's stamps
 * then disagree by the step, as they do after a real step of the system clock
 * between the process's reading and the frames the kernel stamps (chrony's makestep,
 * a VM resume), without changing the machine's clock. A time namespace cannot do
 * this: it offsets CLOCK_MONOTONIC and CLOCK_BOOTTIME only.
 *
 * Only clock_gettime is wrapped (what Rust's SystemTime and most programs use; not
 * gettimeofday or time). The file is read at each call of the two clocks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

/* The step, in nanoseconds: 0 while the file is absent or empty. */
static long long step_ns(void)
{
	const char *path = getenv("LOSSLESS_CLOCK_STEP");
	char buf[32];
	ssize_t n;
	int fd;
	if (!path || !*path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoll(buf, NULL, 10) * 1000000000LL;
}

EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn real;
	long long t, step;
	int saved, r;
	if (!real)
		real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	r = real(id, ts);
	if (r != 0 || (id != CLOCK_REALTIME && id != CLOCK_REALTIME_COARSE))
		return r;
	saved = errno;
	step = step_ns();
	errno = saved;
	if (step) {
		t = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + step;
		ts->tv_sec = t / 1000000000LL;
		ts->tv_nsec = t % 1000000000LL;
	}
	return 0;
}
