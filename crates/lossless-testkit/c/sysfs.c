/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the kernel's write semantics on an
 * emulated host tree (sysfs, configfs, debugfs) laid by the Rust side
 * (src/sysfs.rs, HostTree) under LOSSLESS_DCBDRV_SYSFS=ROOT. The files are plain
 * files; this file wraps the libc calls a process uses on them (open, write, mkdir,
 * rmdir, unlink, truncate, fopen; read and close through the hooks in shim.c) and
 * answers as the kernel and the modelled drivers do. Without the variable every
 * wrapper goes straight to libc.
 *
 * What the kernel does, and where (facts from the sources; the code is ours):
 *
 *  - Opening an attribute for writing when its mode has no write bit, or its
 *    attribute has no store: EACCES, even for root (fs/kernfs/file.c kernfs_fop_open,
 *    sysfs's root has KERNFS_ROOT_EXTRA_OPEN_PERM_CHECK; fs/configfs/file.c
 *    __configfs_open_file). debugfs files are checked by the VFS only (root passes).
 *  - O_CREAT of a name that does not exist: EACCES (fs/namei.c lookup_open: the
 *    directory has no ->create in kernfs, configfs and debugfs).
 *  - mkdir where no make_group exists: EPERM (configfs_mkdir; kernfs_iop_mkdir without
 *    syscall ops; vfs_mkdir without ->mkdir for debugfs); an existing name EEXIST
 *    first (filename_create). rmdir likewise EPERM; in configfs the default groups
 *    (ports/, ports/N/) EPERM (configfs_rmdir, CONFIGFS_USET_DEFAULT). unlink: EPERM
 *    (vfs_unlink without ->unlink; configfs_unlink of a non-link), a directory EISDIR.
 *  - A write is one store: kernfs_fop_write_iter copies at most a page, terminates it
 *    and calls the store whatever the offset (sysfs_kf_write: a 0-byte write is 0);
 *    configfs_write_iter copies at most 4095 bytes (a 0-byte write is EFAULT,
 *    fill_write_buffer) and calls the store. A store's return is the write's return.
 *  - A file whose device went: writes and reads on an fd opened before fail ENODEV
 *    (kernfs_get_active) or EIO (debugfs: debugfs_file_get); a configfs attribute
 *    whose group was removed ENOENT (flush_write_buffer, fill_read_buffer, frag_dead);
 *    the RDMA CM's attributes while their device is gone ENODEV
 *    (cma_configfs.c cma_configfs_params_get), the group itself stays.
 *  - O_TRUNC and truncate() change nothing (kernfs and configfs setattr take the size).
 *
 * The stores (each names its kernel or MLNX_OFED function):
 *  - rdma_cm default_roce_mode / default_roce_tos (cma_configfs.c, cma.c, cache.c)
 *  - mlx5_ib debugfs cc_params (drivers/infiniband/hw/mlx5/cong.c set_param)
 *  - MLNX_OFED ecn/roce_{rp,np} (mlx5/core/en_ecn.c mlx5e_store_*)
 *  - MLNX_OFED mlx5_ib tc/N/traffic_class and ttl/N/ttl (hw/mlx5/main_ext.c)
 *  - hw_counters/lifespan (drivers/infiniband/core/sysfs.c set_stats_lifespan)
 *  - net/IF/mtu (net/core/net-sysfs.c mtu_store, netdev_store; dev_set_mtu)
 * Every other file is refused for writing at open (EACCES), as an attribute without
 * a store is.
 *
 * A successful store replaces the file whole (a temporary file in ROOT.kstate renamed
 * over it, so a reader never sees half a value); a read through an fd this library
 * opened reads the path's current content at the fd's offset (sysfs regenerates the
 * content at each read from 0). The RDMA CM's per-device values live in
 * ROOT.kstate/rdma_cm/IB/N/ (the kernel keeps them in struct cma_device, not in the
 * group). One lock (ROOT.kstate/lock, flock) serialises the stores of every process.
 *
 * Every write, open for writing, mkdir, rmdir and unlink under ROOT is logged
 * (logline, state.c): "SYSFS_WRITE ok path=REL value=V shown=S" or
 * "SYSFS_WRITE err=-22 path=REL value=V refused=WHY"; V and S escaped (bytes outside
 * '!'..'~' and '\' as \xHH).
 */
#include "dcbdrv.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <sys/types.h>

/* ---- the real libc calls --------------------------------------------------- */

static int (*s_open)(const char *, int, ...);
static int (*s_open64)(const char *, int, ...);
static int (*s_openat)(int, const char *, int, ...);
static int (*s_openat64)(int, const char *, int, ...);
static int (*s_creat)(const char *, mode_t);
static ssize_t (*s_write)(int, const void *, size_t);
static ssize_t (*s_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*s_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*s_writev)(int, const struct iovec *, int);
static ssize_t (*s_pread)(int, void *, size_t, off_t);
static ssize_t (*s_pread64)(int, void *, size_t, off_t);
static int (*s_mkdir)(const char *, mode_t);
static int (*s_mkdirat)(int, const char *, mode_t);
static int (*s_rmdir)(const char *);
static int (*s_unlink)(const char *);
static int (*s_unlinkat)(int, const char *, int);
static int (*s_truncate)(const char *, off_t);
static int (*s_ftruncate)(int, off_t);
static int (*s_truncate64)(const char *, off_t);
static int (*s_ftruncate64)(int, off_t);
static FILE *(*s_fopen)(const char *, const char *);
static int (*s_dup)(int);
static int (*s_dup2)(int, int);
static int (*s_dup3)(int, int, int);
static int (*s_fcntl)(int, int, ...);
static int (*s_fcntl64)(int, int, ...);
static FILE *(*s_fopen64)(const char *, const char *);

/* snprintf that may cut (every path here fits PATH_MAX; a cut one names no file). */
static int fmt(char *dst, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));
static int fmt(char *dst, size_t size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(dst, size, f, ap);
	va_end(ap);
	return n;
}

static void *sreal(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "dcbdrv: no %s in libc\n", name);
		abort();
	}
	return p;
}

/* The root, resolved; "" when LOSSLESS_DCBDRV_SYSFS is not set. */
static char root[PATH_MAX];
static size_t rootlen;
static char kstate[PATH_MAX + 16];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fdmu = PTHREAD_MUTEX_INITIALIZER;

static void sysfs_init(void)
{
	const char *r = getenv("LOSSLESS_DCBDRV_SYSFS");

	s_open = sreal("open");
	s_open64 = sreal("open64");
	s_openat = sreal("openat");
	s_openat64 = sreal("openat64");
	s_creat = sreal("creat");
	s_write = sreal("write");
	s_pwrite = sreal("pwrite");
	s_pwrite64 = sreal("pwrite64");
	s_writev = sreal("writev");
	s_pread = sreal("pread");
	s_pread64 = sreal("pread64");
	s_mkdir = sreal("mkdir");
	s_mkdirat = sreal("mkdirat");
	s_rmdir = sreal("rmdir");
	s_unlink = sreal("unlink");
	s_unlinkat = sreal("unlinkat");
	s_truncate = sreal("truncate");
	s_ftruncate = sreal("ftruncate");
	s_truncate64 = sreal("truncate64");
	s_ftruncate64 = sreal("ftruncate64");
	s_fopen = sreal("fopen");
	s_fopen64 = sreal("fopen64");
	s_dup = sreal("dup");
	s_dup2 = sreal("dup2");
	s_dup3 = sreal("dup3");
	s_fcntl = sreal("fcntl");
	s_fcntl64 = sreal("fcntl64");
	if (!r || !*r || !realpath(r, root)) {
		root[0] = '\0';
		return;
	}
	rootlen = strlen(root);
	fmt(kstate, sizeof kstate, "%s.kstate", root);
}

static int active(void)
{
	pthread_once(&once, sysfs_init);
	return rootlen > 0;
}

/* ---- paths ------------------------------------------------------------------ */

enum fs { FS_NONE, FS_SYSFS, FS_CONFIGFS, FS_DEBUGFS };

/* path (relative to dirfd, or absolute) resolved: the real path in abs, the part
 * under the root in rel (no leading '/', "" for the root itself). Returns 1 when the
 * path is under the root. The last component need not exist (it is then kept as
 * written, not followed). */
static int resolve(int dirfd, const char *path, char *abs, char **rel)
{
	char joined[PATH_MAX * 2], dir[PATH_MAX], *slash, *base;
	size_t n;

	if (!path || !*path)
		return 0;
	if (path[0] == '/') {
		fmt(joined, sizeof joined, "%s", path);
	} else {
		char base_dir[PATH_MAX];
		if (dirfd == AT_FDCWD) {
			if (!getcwd(base_dir, sizeof base_dir))
				return 0;
		} else {
			char link[64];
			ssize_t l;
			fmt(link, sizeof link, "/proc/self/fd/%d", dirfd);
			l = readlink(link, base_dir, sizeof base_dir - 1);
			if (l <= 0)
				return 0;
			base_dir[l] = '\0';
		}
		fmt(joined, sizeof joined, "%s/%s", base_dir, path);
	}
	/* strip trailing slashes (but keep "/") */
	n = strlen(joined);
	while (n > 1 && joined[n - 1] == '/')
		joined[--n] = '\0';
	if (realpath(joined, abs) == NULL) {
		if (errno != ENOENT)
			return 0;
		slash = strrchr(joined, '/');
		if (!slash)
			return 0;
		base = slash + 1;
		*slash = '\0';
		if (realpath(*joined ? joined : "/", dir) == NULL)
			return 0;
		if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
			return 0;
		fmt(abs, PATH_MAX, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, base);
	}
	if (strncmp(abs, root, rootlen) != 0 || (abs[rootlen] != '/' && abs[rootlen] != '\0'))
		return 0;
	*rel = abs + rootlen + (abs[rootlen] == '/');
	return 1;
}

static enum fs fs_of(const char *rel)
{
	if (strncmp(rel, "kernel/config/", 14) == 0 || strcmp(rel, "kernel/config") == 0)
		return FS_CONFIGFS;
	if (strncmp(rel, "kernel/debug/", 13) == 0 || strcmp(rel, "kernel/debug") == 0)
		return FS_DEBUGFS;
	return FS_SYSFS;
}

/* Splits rel into at most max components (in place, in a copy): returns the count. */
static int split(const char *rel, char *copy, size_t size, char **c, int max)
{
	int n = 0;
	char *save = NULL, *t;

	fmt(copy, size, "%s", rel);
	for (t = strtok_r(copy, "/", &save); t && n < max; t = strtok_r(NULL, "/", &save))
		c[n++] = t;
	return t ? max + 1 : n;
}

static int exists(const char *abs)
{
	struct stat st;
	return lstat(abs, &st) == 0;
}

/* A directory's identity while it lives: inode and change time (an inode number can
 * come back for a directory laid again). */
struct ident {
	ino_t ino;
	struct timespec ct;
};

static struct ident ident_of(const char *abs)
{
	struct stat st;
	struct ident id = {0, {0, 0}};

	if (lstat(abs, &st) == 0) {
		id.ino = st.st_ino;
		id.ct = st.st_ctim;
	}
	return id;
}

static int same(struct ident a, struct ident b)
{
	return a.ino == b.ino && a.ct.tv_sec == b.ct.tv_sec && a.ct.tv_nsec == b.ct.tv_nsec;
}

/* The netdev under ROOT/devices/pci0000:00/PCI/net/, or "-". */
static void netdev_of_pci(const char *pci, char *out, size_t size)
{
	char p[PATH_MAX + 64];
	DIR *d;
	struct dirent *e;

	fmt(out, size, "-");
	fmt(p, sizeof p, "%s/devices/pci0000:00/%s/net", root, pci);
	d = opendir(p);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		fmt(out, size, "%s", e->d_name);
		break;
	}
	closedir(d);
}

/* The PCI address of RDMA device ib (class/infiniband/IB -> ../../devices/pci0000:00/
 * PCI/infiniband/IB), or 0 when the device is not there. */
static int pci_of_ibdev(const char *ib, char *out, size_t size)
{
	char p[PATH_MAX + 64], t[PATH_MAX];
	ssize_t l;
	char *c[8], copy[PATH_MAX];
	int n;

	fmt(p, sizeof p, "%s/class/infiniband/%s", root, ib);
	l = readlink(p, t, sizeof t - 1);
	if (l <= 0)
		return 0;
	t[l] = '\0';
	n = split(t, copy, sizeof copy, c, 7);
	for (int i = 0; i + 1 < n; i++)
		if (strcmp(c[i], "pci0000:00") == 0) {
			fmt(out, size, "%s", c[i + 1]);
			return 1;
		}
	return 0;
}

/* The driver bound to the PCI function: the last component of PCI/driver. */
static void driver_of_pci(const char *pci, char *out, size_t size)
{
	char p[PATH_MAX + 64], t[PATH_MAX];
	ssize_t l;
	const char *b;

	fmt(out, size, "-");
	fmt(p, sizeof p, "%s/devices/pci0000:00/%s/driver", root, pci);
	l = readlink(p, t, sizeof t - 1);
	if (l <= 0)
		return;
	t[l] = '\0';
	b = strrchr(t, '/');
	fmt(out, size, "%s", b ? b + 1 : t);
}

/* ---- the attributes ------------------------------------------------------------ */

enum kind {
	K_PLAIN,      /* no store: refused for writing at open */
	K_MTU,        /* net/IF/mtu */
	K_LIFESPAN,   /* infiniband/IB/ports/N/hw_counters/lifespan */
	K_ECN_ENABLE, /* MLNX_OFED ecn/roce_{rp,np}/enable/P */
	K_ECN_PARAM,  /* MLNX_OFED ecn/roce_{rp,np}/NAME */
	K_TC,         /* MLNX_OFED infiniband/IB/tc/N/traffic_class */
	K_TTL,        /* MLNX_OFED infiniband/IB/ttl/N/ttl */
	K_CC,         /* debugfs mlx5/PCI/cc_params/NAME */
	K_ROCE_MODE,  /* configfs rdma_cm/IB/ports/N/default_roce_mode */
	K_ROCE_TOS,   /* configfs rdma_cm/IB/ports/N/default_roce_tos */
};

/* A congestion-control parameter as the firmware holds it (mlx5_ifc.h
 * cong_control_r_roce_ecn_rp/np: field widths), under its debugfs name (cong.c
 * mlx5_ib_dbg_cc_name) and its MLNX_OFED sysfs name (en_sysfs.c mlx5e_fill_*_attributes)
 * with NVIDIA's documented range ("DCQCN CC Parameters"; lo > hi: not checked): a
 * value outside it is taken as refused by the firmware (EINVAL, assumed). */
struct ccp {
	const char *dbg, *ofed, *dir; /* dir: roce_rp or roce_np */
	int bits;
	unsigned lo, hi;
};

static const struct ccp ccps[] = {
	{"rp_clamp_tgt_rate", "clamp_tgt_rate", "roce_rp", 1, 1, 0},
	{"rp_clamp_tgt_rate_ati", "clamp_tgt_rate_after_time_inc", "roce_rp", 1, 1, 0},
	{"rp_time_reset", "rpg_time_reset", "roce_rp", 32, 1, 131071},
	{"rp_byte_reset", "rpg_byte_reset", "roce_rp", 32, 1, 32767},
	{"rp_threshold", "rpg_threshold", "roce_rp", 32, 1, 31},
	{"rp_ai_rate", "rpg_ai_rate", "roce_rp", 32, 1, 0},
	{"rp_max_rate", "rpg_max_rate", "roce_rp", 32, 1, 0},
	{"rp_hai_rate", "rpg_hai_rate", "roce_rp", 32, 1, 0},
	{"rp_min_dec_fac", "rpg_min_dec_fac", "roce_rp", 32, 0, 100},
	{"rp_min_rate", "rpg_min_rate", "roce_rp", 32, 1, 0},
	{"rp_rate_to_set_on_first_cnp", "rate_to_set_on_first_cnp", "roce_rp", 32, 1, 0},
	{"rp_dce_tcp_g", "dce_tcp_g", "roce_rp", 32, 0, 1023},
	{"rp_dce_tcp_rtt", "dce_tcp_rtt", "roce_rp", 32, 1, 131071},
	{"rp_rate_reduce_monitor_period", "rate_reduce_monitor_period", "roce_rp", 32, 1, 0},
	{"rp_initial_alpha_value", "initial_alpha_value", "roce_rp", 32, 0, 1023},
	{"rp_gd", "rpg_gd", "roce_rp", 32, 1, 0},
	{"np_min_time_between_cnps", "min_time_between_cnps", "roce_np", 32, 0, 4095},
	{"np_cnp_dscp", "cnp_dscp", "roce_np", 6, 1, 0},
	{"np_cnp_prio_mode", NULL, "roce_np", 1, 1, 0},
	{"np_cnp_prio", "cnp_802p_prio", "roce_np", 3, 1, 0},
};
#define NCCP (sizeof ccps / sizeof ccps[0])

static const struct ccp *ccp_by_dbg(const char *n)
{
	for (size_t i = 0; i < NCCP; i++)
		if (strcmp(ccps[i].dbg, n) == 0)
			return &ccps[i];
	return NULL;
}

static const struct ccp *ccp_by_ofed(const char *dir, const char *n)
{
	for (size_t i = 0; i < NCCP; i++)
		if (ccps[i].ofed && strcmp(ccps[i].ofed, n) == 0 && strcmp(ccps[i].dir, dir) == 0)
			return &ccps[i];
	return NULL;
}

/* What an attribute path is: its kind, the device it belongs to (the PCI function, or
 * for configfs the RDMA device and port), and the directory whose inode identifies
 * that device while it lives. */
struct attr {
	enum kind kind;
	enum fs fs;
	char pci[64], ib[64], ifname[IFNAMSIZ + 1], name[128], dir[16];
	int port;
	char devdir[PATH_MAX + 64]; /* absolute */
	char group[PATH_MAX + 64];  /* configfs: the group directory */
	const struct ccp *cc;
};

static void classify(const char *rel, struct attr *a)
{
	char copy[PATH_MAX], *c[16];
	int n = split(rel, copy, sizeof copy, c, 15);

	memset(a, 0, sizeof *a);
	a->kind = K_PLAIN;
	a->fs = fs_of(rel);
	fmt(a->ifname, sizeof a->ifname, "-");
	if (a->fs == FS_CONFIGFS) {
		/* kernel config rdma_cm IB ports N ATTR */
		if (n >= 4 && strcmp(c[2], "rdma_cm") == 0) {
			fmt(a->ib, sizeof a->ib, "%s", c[3]);
			fmt(a->group, sizeof a->group, "%s/kernel/config/rdma_cm/%s", root, c[3]);
			if (pci_of_ibdev(a->ib, a->pci, sizeof a->pci))
				netdev_of_pci(a->pci, a->ifname, sizeof a->ifname);
		}
		if (n == 7 && strcmp(c[2], "rdma_cm") == 0 && strcmp(c[4], "ports") == 0) {
			a->port = atoi(c[5]);
			if (strcmp(c[6], "default_roce_mode") == 0)
				a->kind = K_ROCE_MODE;
			else if (strcmp(c[6], "default_roce_tos") == 0)
				a->kind = K_ROCE_TOS;
		}
		return;
	}
	if (a->fs == FS_DEBUGFS) {
		/* kernel debug mlx5 PCI cc_params NAME */
		if (n >= 4 && strcmp(c[2], "mlx5") == 0) {
			fmt(a->pci, sizeof a->pci, "%s", c[3]);
			fmt(a->devdir, sizeof a->devdir, "%s/kernel/debug/mlx5/%s", root, c[3]);
			netdev_of_pci(a->pci, a->ifname, sizeof a->ifname);
		}
		if (n == 6 && strcmp(c[2], "mlx5") == 0 && strcmp(c[4], "cc_params") == 0 &&
		    (a->cc = ccp_by_dbg(c[5])) != NULL)
			a->kind = K_CC;
		return;
	}
	/* devices pci0000:00 PCI ... */
	if (n < 3 || strcmp(c[0], "devices") != 0 || strcmp(c[1], "pci0000:00") != 0)
		return;
	fmt(a->pci, sizeof a->pci, "%s", c[2]);
	fmt(a->devdir, sizeof a->devdir, "%s/devices/pci0000:00/%s", root, c[2]);
	netdev_of_pci(a->pci, a->ifname, sizeof a->ifname);
	if (n >= 5 && strcmp(c[3], "net") == 0) {
		fmt(a->ifname, sizeof a->ifname, "%s", c[4]);
		if (n == 6 && strcmp(c[5], "mtu") == 0)
			a->kind = K_MTU;
		if (n >= 8 && strcmp(c[5], "ecn") == 0 &&
		    (strcmp(c[6], "roce_rp") == 0 || strcmp(c[6], "roce_np") == 0)) {
			fmt(a->dir, sizeof a->dir, "%s", c[6]);
			if (n == 9 && strcmp(c[7], "enable") == 0 && c[8][0] >= '0' &&
			    c[8][0] <= '7' && c[8][1] == '\0') {
				a->kind = K_ECN_ENABLE;
				a->port = c[8][0] - '0';
			} else if (n == 8 && (a->cc = ccp_by_ofed(c[6], c[7])) != NULL) {
				a->kind = K_ECN_PARAM;
			}
		}
		return;
	}
	if (n >= 5 && strcmp(c[3], "infiniband") == 0) {
		fmt(a->ib, sizeof a->ib, "%s", c[4]);
		if (n == 9 && strcmp(c[5], "ports") == 0 && strcmp(c[7], "hw_counters") == 0 &&
		    strcmp(c[8], "lifespan") == 0)
			a->kind = K_LIFESPAN;
		if (n == 8 && strcmp(c[5], "tc") == 0 && strcmp(c[7], "traffic_class") == 0)
			a->kind = K_TC;
		if (n == 8 && strcmp(c[5], "ttl") == 0 && strcmp(c[7], "ttl") == 0)
			a->kind = K_TTL;
	}
}

/* ---- the kernel's number parsers (lib/kstrtox.c; lib/vsprintf.c vsscanf) ---------- */

/* _kstrtoull after kstrtoull's '+': 0, -EINVAL or -ERANGE. */
static int k_strtoull(const char *s, unsigned base, unsigned long long *res)
{
	unsigned long long r = 0;
	int n = 0, overflow = 0;

	if (base == 0) {
		if (s[0] == '0')
			base = (tolower((unsigned char)s[1]) == 'x' && isxdigit((unsigned char)s[2])) ? 16 : 8;
		else
			base = 10;
	}
	if (base == 16 && s[0] == '0' && tolower((unsigned char)s[1]) == 'x')
		s += 2;
	for (;; s++, n++) {
		unsigned c = (unsigned char)*s, v;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (tolower(c) >= 'a' && tolower(c) <= 'f')
			v = (unsigned)tolower(c) - 'a' + 10;
		else
			break;
		if (v >= base)
			break;
		if (r > (ULLONG_MAX - v) / base)
			overflow = 1;
		r = r * base + v;
	}
	if (overflow)
		return -ERANGE;
	if (n == 0)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = r;
	return 0;
}

static int kstrtoull(const char *s, unsigned base, unsigned long long *res)
{
	if (s[0] == '+')
		s++;
	return k_strtoull(s, base, res);
}

static int kstrtoll(const char *s, unsigned base, long long *res)
{
	unsigned long long t;
	int rv;

	if (s[0] == '-') {
		rv = k_strtoull(s + 1, base, &t);
		if (rv < 0)
			return rv;
		if ((long long)-t > 0)
			return -ERANGE;
		*res = (long long)-t;
		return 0;
	}
	rv = kstrtoull(s, base, &t);
	if (rv < 0)
		return rv;
	if ((long long)t < 0)
		return -ERANGE;
	*res = (long long)t;
	return 0;
}

static int kstrtoint(const char *s, unsigned base, int *res)
{
	long long t;
	int rv = kstrtoll(s, base, &t);
	if (rv < 0)
		return rv;
	if (t != (int)t)
		return -ERANGE;
	*res = (int)t;
	return 0;
}

/* The kernel's sscanf(buf, "%d", &v): leading white space, an optional '-', decimal
 * digits (no '+'); 1 when it converted, 0 when not. Overflow wraps, as
 * simple_strtol does. */
static int k_sscanf_d(const char *s, int *v)
{
	unsigned long long r = 0;
	int neg = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (!isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		r = r * 10 + (unsigned)(*s++ - '0');
	*v = (int)(neg ? (unsigned)(0 - r) : (unsigned)r);
	return 1;
}

/* ---- escaping for the log --------------------------------------------------------- */

static void esc(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c > ' ' && c <= '~' && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)fmt(out + o, size - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

/* ---- the store: files replaced whole ------------------------------------------------ */

static int lockfd = -1;
/* flock excludes other processes; this, the other threads of this one (they share the
 * lock file's description) */
static pthread_mutex_t storemu = PTHREAD_MUTEX_INITIALIZER;

static void lock(void)
{
	char p[PATH_MAX + 32];

	pthread_mutex_lock(&storemu);
	if (lockfd < 0) {
		s_mkdir(kstate, 0755);
		fmt(p, sizeof p, "%s/lock", kstate);
		lockfd = s_open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	}
	if (lockfd >= 0)
		flock(lockfd, LOCK_EX);
}

static void unlock(void)
{
	if (lockfd >= 0)
		flock(lockfd, LOCK_UN);
	pthread_mutex_unlock(&storemu);
}

/* Replaces abs's content with s, keeping its mode (a temporary file renamed over it). */
static int replace(const char *abs, const char *s)
{
	char tmp[PATH_MAX + 64];
	struct stat st;
	int fd;
	size_t n = strlen(s);
	static unsigned seq;

	if (stat(abs, &st) != 0)
		return -errno;
	s_mkdir(kstate, 0755);
	fmt(tmp, sizeof tmp, "%s/tmp.%d.%u", kstate, (int)getpid(), seq++);
	fd = s_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if ((n && s_write(fd, s, n) != (ssize_t)n) || fchmod(fd, st.st_mode & 07777) != 0) {
		int e = errno;
		r_close(fd);
		s_unlink(tmp);
		return -e;
	}
	r_close(fd);
	if (rename(tmp, abs) != 0) {
		int e = errno;
		s_unlink(tmp);
		return -e;
	}
	return 0;
}

/* Reads a small file whole into out ("" when it cannot be read). */
static void slurp(const char *abs, char *out, size_t size)
{
	int fd = s_open(abs, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	out[0] = '\0';
	if (fd < 0)
		return;
	n = s_pread(fd, out, size - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	r_close(fd);
}

/* ---- the RDMA CM (configfs) ----------------------------------------------------------- */

static const char *const gid_type_str[] = {"IB/RoCE v1", "RoCE v2"};

/* The GID types port `port` of ib supports, as its default GIDs show them
 * (infiniband/IB/ports/N/gid_attrs/types/N): bit 0 RoCE v1, bit 1 RoCE v2. The kernel
 * asks roce_gid_type_mask_support(), which the GID table reflects. */
static unsigned gid_types(const char *ib, int port)
{
	char p[PATH_MAX + 128], f[PATH_MAX + 256], v[64];
	unsigned mask = 0;
	DIR *d;
	struct dirent *e;

	fmt(p, sizeof p, "%s/class/infiniband/%s/ports/%d/gid_attrs/types", root, ib, port);
	d = opendir(p);
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		fmt(f, sizeof f, "%s/%s", p, e->d_name);
		slurp(f, v, sizeof v);
		for (int i = 0; i < 2; i++) {
			size_t l = strlen(gid_type_str[i]);
			if (strncmp(v, gid_type_str[i], l) == 0 && (v[l] == '\n' || !v[l]))
				mask |= 1u << i;
		}
	}
	closedir(d);
	return mask;
}

static int ib_ports(const char *ib)
{
	char p[PATH_MAX + 64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	fmt(p, sizeof p, "%s/class/infiniband/%s/ports", root, ib);
	d = opendir(p);
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The device's value (cma_device), from ROOT.kstate, or its power-on value
 * (cma_add_one: RoCE v2 when supported, else the first supported type; ToS 0). */
static void cma_value(const char *ib, int port, int tos, char *out, size_t size)
{
	char p[PATH_MAX + 128];

	fmt(p, sizeof p, "%s/rdma_cm/%s/%d/%s", kstate, ib, port,
		 tos ? "default_roce_tos" : "default_roce_mode");
	slurp(p, out, size);
	if (out[0])
		return;
	if (tos) {
		fmt(out, size, "0\n");
	} else {
		unsigned m = gid_types(ib, port);
		fmt(out, size, "%s\n", (m & 2) || !m ? gid_type_str[1] : gid_type_str[0]);
	}
}

static void cma_keep(const char *ib, int port, int tos, const char *v)
{
	char p[PATH_MAX + 128];
	int fd;

	fmt(p, sizeof p, "%s/rdma_cm", kstate);
	s_mkdir(kstate, 0755);
	s_mkdir(p, 0755);
	fmt(p, sizeof p, "%s/rdma_cm/%s", kstate, ib);
	s_mkdir(p, 0755);
	fmt(p, sizeof p, "%s/rdma_cm/%s/%d", kstate, ib, port);
	s_mkdir(p, 0755);
	fmt(p, sizeof p, "%s/rdma_cm/%s/%d/%s", kstate, ib, port,
		 tos ? "default_roce_tos" : "default_roce_mode");
	fd = s_open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (s_write(fd, v, strlen(v)) < 0) {
		/* the value is lost: the next read shows the power-on one */
	}
	r_close(fd);
}

static int ibdev_alive(const char *ib)
{
	char p[PATH_MAX + 64];
	fmt(p, sizeof p, "%s/class/infiniband/%s", root, ib);
	return exists(p);
}

/* ---- the stores ------------------------------------------------------------------------ */

struct result {
	char shown[4200];
	char why[128];
	ssize_t ret; /* bytes taken, or -errno */
};

static void refuse(struct result *r, int err, const char *why)
{
	r->ret = -err;
	fmt(r->why, sizeof r->why, "%s", why);
}

/* The netdev's MTU bounds (dev_validate_mtu: min_mtu, max_mtu) for the driver bound to
 * its PCI function; see src/sysfs.rs max_mtu for the sources. */
static void mtu_bounds(const char *pci, unsigned *lo, unsigned *hi)
{
	char drv[64];

	driver_of_pci(pci, drv, sizeof drv);
	*lo = 68;
	*hi = 9000;
	if (strcmp(drv, "mlx5_core") == 0)
		*hi = 9978;
	else if (strcmp(drv, "ice") == 0 || strcmp(drv, "hns3") == 0)
		*hi = 9702;
	else if (strcmp(drv, "i40e") == 0)
		*hi = 9706;
	else if (strcmp(drv, "ixgbe") == 0)
		*hi = 9710;
	else if (strcmp(drv, "bnxt_en") == 0) {
		*lo = 60;
		*hi = 9500;
	}
}

/* Writes a firmware congestion parameter to both views that exist (debugfs cc_params,
 * MLNX_OFED ecn/), as "%d\n" of the field (get_param, mlx5e_show_*). */
static void cc_show(const char *pci, const char *ifname, const struct ccp *cc, unsigned v,
		    struct result *r)
{
	char p[PATH_MAX + 256];

	fmt(r->shown, sizeof r->shown, "%d\n", (int)v);
	fmt(p, sizeof p, "%s/kernel/debug/mlx5/%s/cc_params/%s", root, pci, cc->dbg);
	if (exists(p))
		replace(p, r->shown);
	if (cc->ofed && strcmp(ifname, "-") != 0) {
		fmt(p, sizeof p, "%s/devices/pci0000:00/%s/net/%s/ecn/%s/%s", root, pci,
			 ifname, cc->dir, cc->ofed);
		if (exists(p))
			replace(p, r->shown);
	}
}

static int cc_set(const struct attr *a, const struct ccp *cc, unsigned long long raw,
		  struct result *r)
{
	unsigned v = cc->bits >= 32 ? (unsigned)raw : (unsigned)raw & ((1u << cc->bits) - 1);

	if (cc->lo <= cc->hi && (v < cc->lo || v > cc->hi)) {
		refuse(r, EINVAL, "firmware_range");
		return -1;
	}
	cc_show(a->pci, a->ifname, cc, v, r);
	/* writing the CNP priority selects it (cnp_prio_mode 0): cong.c
	 * mlx5_ib_set_cc_param_mask_val; MLNX_OFED's store sets the same field group */
	if (strcmp(cc->dbg, "np_cnp_prio") == 0) {
		struct result m;
		const struct ccp *pm = ccp_by_dbg("np_cnp_prio_mode");
		cc_show(a->pci, a->ifname, pm, 0, &m);
	}
	return 0;
}

static void store(const struct attr *a, const char *abs, const char *buf, size_t count,
		  struct result *r)
{
	char s[4097];
	size_t n = count < sizeof s - 1 ? count : sizeof s - 1;

	memcpy(s, buf, n);
	s[n] = '\0';
	r->ret = (ssize_t)count;
	r->shown[0] = '\0';
	r->why[0] = '\0';
	switch (a->kind) {
	case K_MTU: {
		unsigned long long v;
		unsigned lo, hi;
		int e = kstrtoull(s, 0, &v);
		if (e) {
			refuse(r, -e, "kstrtoul");
			return;
		}
		mtu_bounds(a->pci, &lo, &hi);
		/* change_mtu passes the unsigned long on as an int (dev_set_mtu) */
		if ((int)(unsigned)v < (int)lo || (int)(unsigned)v > (int)hi) {
			refuse(r, EINVAL, "dev_validate_mtu");
			return;
		}
		fmt(r->shown, sizeof r->shown, "%u\n", (unsigned)v);
		break;
	}
	case K_LIFESPAN: {
		int v, e = kstrtoint(s, 10, &v);
		if (e) {
			refuse(r, -e, "kstrtoint");
			return;
		}
		if (v < 0 || v > 10000) {
			refuse(r, EINVAL, "lifespan_range");
			return;
		}
		fmt(r->shown, sizeof r->shown, "%d\n", v);
		break;
	}
	case K_ECN_ENABLE: {
		int v;
		if (!k_sscanf_d(s, &v)) {
			refuse(r, EINVAL, "sscanf");
			return;
		}
		fmt(r->shown, sizeof r->shown, "%d\n", v & 1);
		break;
	}
	case K_ECN_PARAM: {
		int v;
		if (!k_sscanf_d(s, &v)) {
			/* the driver ignores sscanf's result and programs whatever the
			 * variable held: refused here so a test sees it */
			refuse(r, EINVAL, "not_a_number");
			return;
		}
		if (cc_set(a, a->cc, (unsigned)v, r))
			return;
		r->shown[0] = '\0'; /* cc_set replaced the file(s) already */
		return;
	}
	case K_CC: {
		char lbuf[11] = {0};
		unsigned long long v;
		if (count > sizeof lbuf) {
			refuse(r, EINVAL, "count_over_11");
			return;
		}
		memcpy(lbuf, buf, count);
		lbuf[sizeof lbuf - 1] = '\0';
		if (kstrtoull(lbuf, 0, &v) || v > 0xffffffffull) {
			refuse(r, EINVAL, "kstrtou32");
			return;
		}
		if (cc_set(a, a->cc, v, r))
			return;
		r->shown[0] = '\0';
		return;
	}
	case K_TTL: {
		long long v;
		if (kstrtoll(s, 0, &v) || (unsigned long long)v > 0xff) {
			refuse(r, EINVAL, "ttl");
			return;
		}
		fmt(r->shown, sizeof r->shown, "%d\n", (int)v);
		break;
	}
	case K_TC: {
		/* main_ext.c traffic_class_store: at most TCLASS_MAX_CMD (100) bytes,
		 * comma-separated items, each stripped; "N" or "tclass=N" alone is the
		 * global class (kstrtoint base 0, > 255 EINVAL, negative: none) */
		char cmd[101], *p, *save = NULL;
		int tclass = 0, have = 0;
		if (count > 100) {
			refuse(r, EINVAL, "tclass_cmd_over_100");
			return;
		}
		memcpy(cmd, buf, count);
		cmd[count] = '\0';
		for (p = strtok_r(cmd, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
			char *e;
			while (isspace((unsigned char)*p))
				p++;
			e = p + strlen(p);
			while (e > p && isspace((unsigned char)e[-1]))
				*--e = '\0';
			if (!*p)
				continue;
			if (strncmp(p, "tclass=", 7) == 0 && p[7])
				p += 7;
			else if (!isdigit((unsigned char)*p) && *p != '-' && *p != '+') {
				refuse(r, EINVAL, "tclass_rules_not_modelled");
				return;
			}
			if (kstrtoint(p, 0, &tclass) || tclass > 0xff) {
				refuse(r, EINVAL, "tclass");
				return;
			}
			have = 1;
		}
		if (!have) {
			refuse(r, EINVAL, "tclass_missing");
			return;
		}
		if (tclass >= 0)
			fmt(r->shown, sizeof r->shown, "Global tclass=%d\n", tclass);
		else
			r->shown[0] = '\0';
		if (replace(abs, r->shown) != 0)
			refuse(r, EIO, "replace");
		return;
	}
	case K_ROCE_MODE: {
		/* cma_configfs.c default_roce_mode_store: the device first (ENODEV), then
		 * ib_cache_gid_parse_type_str (EINVAL), then cma_set_default_gid_type
		 * (unsupported EINVAL); returns strnlen(buf, count) */
		size_t len = strlen(s);
		int type = -1;
		unsigned m;
		if (!ibdev_alive(a->ib)) {
			refuse(r, ENODEV, "device_gone");
			return;
		}
		if (len && s[len - 1] == '\n')
			len--;
		for (int i = 0; i < 2; i++)
			if (len && strlen(gid_type_str[i]) == len && strncmp(s, gid_type_str[i], len) == 0)
				type = i;
		if (type < 0) {
			refuse(r, EINVAL, "gid_type");
			return;
		}
		m = gid_types(a->ib, a->port);
		if (!(m & (1u << type))) {
			refuse(r, EINVAL, "gid_type_unsupported");
			return;
		}
		fmt(r->shown, sizeof r->shown, "%s\n", gid_type_str[type]);
		cma_keep(a->ib, a->port, 0, r->shown);
		r->ret = (ssize_t)strnlen(buf, count);
		break;
	}
	case K_ROCE_TOS: {
		unsigned long long v;
		int e = kstrtoull(s, 0, &v);
		if (!e && v > 0xff)
			e = -ERANGE;
		if (e) {
			refuse(r, -e, "kstrtou8");
			return;
		}
		if (!ibdev_alive(a->ib)) {
			refuse(r, ENODEV, "device_gone");
			return;
		}
		fmt(r->shown, sizeof r->shown, "%u\n", (unsigned)v);
		cma_keep(a->ib, a->port, 1, r->shown);
		r->ret = (ssize_t)strnlen(buf, count);
		break;
	}
	case K_PLAIN:
	default:
		refuse(r, EACCES, "no_store");
		return;
	}
	if (replace(abs, r->shown) != 0)
		refuse(r, EIO, "replace");
}

/* ---- the file descriptors this library opened under the root ------------------------- */

struct tfd {
	int fd, writable;
	struct attr a;
	char abs[PATH_MAX];
	struct ident dev, group;
};

static struct tfd *tfds;
static int ntfd, captfd;
static volatile int tracked; /* ntfd, for the fast path */

static void track(int fd, int writable, const struct attr *a, const char *abs)
{
	struct tfd *t = NULL;

	pthread_mutex_lock(&fdmu);
	for (int i = 0; i < ntfd; i++)
		if (tfds[i].fd == fd)
			t = &tfds[i];
	if (!t) {
		if (ntfd == captfd) {
			int cap = captfd ? captfd * 2 : 16;
			struct tfd *n = realloc(tfds, (size_t)cap * sizeof *n);
			if (!n) {
				pthread_mutex_unlock(&fdmu);
				return;
			}
			tfds = n;
			captfd = cap;
		}
		t = &tfds[ntfd++];
	}
	t->fd = fd;
	t->writable = writable;
	t->a = *a;
	fmt(t->abs, sizeof t->abs, "%s", abs);
	t->dev = ident_of(a->devdir[0] ? a->devdir : "");
	t->group = ident_of(a->group[0] ? a->group : "");
	__atomic_store_n(&tracked, ntfd, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&fdmu);
}

/* A copy of fd's entry: 1 when fd is one of ours. */
static int lookup(int fd, struct tfd *out)
{
	int found = 0;

	if (!__atomic_load_n(&tracked, __ATOMIC_SEQ_CST))
		return 0;
	pthread_mutex_lock(&fdmu);
	for (int i = 0; i < ntfd; i++)
		if (tfds[i].fd == fd) {
			*out = tfds[i];
			found = 1;
		}
	pthread_mutex_unlock(&fdmu);
	return found;
}

void sysfs_forget(int fd)
{
	if (!__atomic_load_n(&tracked, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&fdmu);
	for (int i = 0; i < ntfd; i++)
		if (tfds[i].fd == fd) {
			tfds[i] = tfds[--ntfd];
			break;
		}
	__atomic_store_n(&tracked, ntfd, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&fdmu);
}

/* newfd now refers to what oldfd does (dup, dup2, dup3, F_DUPFD): a shell's
 * redirection opens the file and moves it to fd 1. */
static void track_dup(int oldfd, int newfd)
{
	struct tfd t;

	if (newfd < 0 || oldfd == newfd)
		return;
	sysfs_forget(newfd);
	if (lookup(oldfd, &t)) {
		struct tfd *n = NULL;
		pthread_mutex_lock(&fdmu);
		if (ntfd == captfd) {
			int cap = captfd ? captfd * 2 : 16;
			struct tfd *g = realloc(tfds, (size_t)cap * sizeof *g);
			if (g) {
				tfds = g;
				captfd = cap;
			}
		}
		if (ntfd < captfd) {
			n = &tfds[ntfd++];
			*n = t;
			n->fd = newfd;
		}
		__atomic_store_n(&tracked, ntfd, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&fdmu);
	}
}

DCBDRV_EXPORT int dup(int fd)
{
	int n;

	pthread_once(&once, sysfs_init);
	n = s_dup(fd);
	track_dup(fd, n);
	return n;
}

DCBDRV_EXPORT int dup2(int fd, int to)
{
	int n;

	pthread_once(&once, sysfs_init);
	n = s_dup2(fd, to);
	track_dup(fd, n);
	return n;
}

DCBDRV_EXPORT int dup3(int fd, int to, int flags)
{
	int n;

	pthread_once(&once, sysfs_init);
	n = s_dup3(fd, to, flags);
	track_dup(fd, n);
	return n;
}

static int do_fcntl(int big, int fd, int cmd, void *arg)
{
	int n = big ? s_fcntl64(fd, cmd, arg) : s_fcntl(fd, cmd, arg);

	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		track_dup(fd, n);
	return n;
}

/* The third argument is an int or a pointer; passed on as glibc's own wrapper does. */
DCBDRV_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	pthread_once(&once, sysfs_init);
	return do_fcntl(0, fd, cmd, arg);
}

DCBDRV_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	pthread_once(&once, sysfs_init);
	return do_fcntl(1, fd, cmd, arg);
}

/* 0 while the file's device lives, else the errno an operation on the fd gets. */
static int gone(const struct tfd *t)
{
	if (t->a.fs == FS_CONFIGFS) {
		if (t->group.ino && !same(ident_of(t->a.group), t->group))
			return ENOENT; /* the group was removed: frag_dead */
		if ((t->a.kind == K_ROCE_MODE || t->a.kind == K_ROCE_TOS) && !ibdev_alive(t->a.ib))
			return ENODEV;
		return 0;
	}
	if (t->dev.ino && !same(ident_of(t->a.devdir), t->dev))
		return t->a.fs == FS_DEBUGFS ? EIO : ENODEV;
	return 0;
}

/* ---- logging ------------------------------------------------------------------------- */

static void log_op(const char *ifname, const char *cmd, int err, const char *rel,
		   const char *val, size_t vlen, const char *shown, const char *why)
{
	char v[1024] = "", sh[1024] = "", res[32];

	if (val)
		esc(val, vlen > 256 ? 256 : vlen, v, sizeof v);
	if (shown)
		esc(shown, strlen(shown), sh, sizeof sh);
	if (err)
		fmt(res, sizeof res, "err=%d", -err);
	else
		fmt(res, sizeof res, "ok");
	logline(ifname, cmd, "%s path=%s%s%s%s%s%s%s", res, rel, val ? " value=" : "", v,
		shown && !err ? " shown=" : "", shown && !err ? sh : "", why && *why ? " refused=" : "",
		why ? why : "");
}

/* ---- open -------------------------------------------------------------------------------- */

enum which { W_OPEN, W_OPEN64, W_OPENAT, W_OPENAT64 };

static int real_open(enum which w, int dirfd, const char *path, int flags, mode_t mode)
{
	switch (w) {
	case W_OPEN:
		return s_open(path, flags, mode);
	case W_OPEN64:
		return s_open64(path, flags, mode);
	case W_OPENAT:
		return s_openat(dirfd, path, flags, mode);
	default:
		return s_openat64(dirfd, path, flags, mode);
	}
}

static int do_open(enum which w, int dirfd, const char *path, int flags, mode_t mode)
{
	char abs[PATH_MAX];
	char *rel;
	struct stat st;
	struct attr a;
	int acc = flags & O_ACCMODE, writing = acc == O_WRONLY || acc == O_RDWR, fd, err = 0;
	const char *why = "";

	if (!active() || !resolve(dirfd, path, abs, &rel))
		return real_open(w, dirfd, path, flags, mode);
	classify(rel, &a);
	if (stat(abs, &st) != 0) {
		if (errno == ENOENT && (flags & O_CREAT)) {
			/* lookup_open: the directory has no ->create */
			errno = EACCES;
			log_op(a.ifname, "SYSFS_OPEN", EACCES, rel, NULL, 0, NULL, "no_create");
			return -1;
		}
		return real_open(w, dirfd, path, flags, mode); /* ENOENT and the like */
	}
	if (S_ISDIR(st.st_mode))
		return real_open(w, dirfd, path, flags, mode); /* EISDIR for writing */
	if ((flags & O_CREAT) && (flags & O_EXCL)) {
		errno = EEXIST;
		return -1;
	}
	if (writing) {
		if (a.fs != FS_DEBUGFS && !(st.st_mode & 0222)) {
			err = EACCES;
			why = "read_only";
		} else if (a.fs != FS_DEBUGFS && a.kind == K_PLAIN) {
			err = EACCES;
			why = "no_store";
		} else if (faccessat(AT_FDCWD, abs, W_OK, AT_EACCESS) != 0) {
			err = EACCES;
			why = "permission";
		}
		if (err) {
			log_op(a.ifname, "SYSFS_OPEN", err, rel, NULL, 0, NULL, why);
			errno = err;
			return -1;
		}
	}
	fd = real_open(w, dirfd, abs, (flags & ~(O_ACCMODE | O_CREAT | O_TRUNC | O_EXCL | O_APPEND)) | O_RDONLY, 0);
	if (fd < 0)
		return fd;
	track(fd, writing, &a, abs);
	if (writing)
		log_op(a.ifname, "SYSFS_OPEN", 0, rel, NULL, 0, NULL, NULL);
	return fd;
}

/* The variadic opens: the mode is there only when the flags ask for one
 * (glibc's __OPEN_NEEDS_MODE: O_CREAT, or all of O_TMPFILE, which holds
 * O_DIRECTORY). */
static int open_va(enum which w, int dirfd, const char *path, int flags, va_list ap)
{
	mode_t mode = 0;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		mode = (mode_t)va_arg(ap, int);
	pthread_once(&once, sysfs_init);
	return do_open(w, dirfd, path, flags, mode);
}

#define OPEN_VA(w, dirfd, path, flags)                                \
	do {                                                          \
		va_list ap;                                           \
		int fd_;                                              \
		va_start(ap, flags);                                  \
		fd_ = open_va(w, dirfd, path, flags, ap);             \
		va_end(ap);                                           \
		return fd_;                                           \
	} while (0)

DCBDRV_EXPORT int open(const char *path, int flags, ...)
{
	OPEN_VA(W_OPEN, AT_FDCWD, path, flags);
}

DCBDRV_EXPORT int open64(const char *path, int flags, ...)
{
	OPEN_VA(W_OPEN64, AT_FDCWD, path, flags);
}

DCBDRV_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_VA(W_OPENAT, dirfd, path, flags);
}

DCBDRV_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_VA(W_OPENAT64, dirfd, path, flags);
}

/* _FORTIFY_SOURCE's entry points (flags not known at compile time). */
DCBDRV_EXPORT int __open_2(const char *path, int flags)
{
	pthread_once(&once, sysfs_init);
	return do_open(W_OPEN, AT_FDCWD, path, flags, 0);
}

DCBDRV_EXPORT int __open64_2(const char *path, int flags)
{
	pthread_once(&once, sysfs_init);
	return do_open(W_OPEN64, AT_FDCWD, path, flags, 0);
}

DCBDRV_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	pthread_once(&once, sysfs_init);
	return do_open(W_OPENAT, dirfd, path, flags, 0);
}

DCBDRV_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	pthread_once(&once, sysfs_init);
	return do_open(W_OPENAT64, dirfd, path, flags, 0);
}

DCBDRV_EXPORT int creat(const char *path, mode_t mode)
{
	pthread_once(&once, sysfs_init);
	return do_open(W_OPEN, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

DCBDRV_EXPORT int creat64(const char *path, mode_t mode)
{
	pthread_once(&once, sysfs_init);
	return do_open(W_OPEN64, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* ---- write -------------------------------------------------------------------------------- */

/* A write of buf on one of our fds: the store's return, errno set on refusal. */
static ssize_t do_write(const struct tfd *t, const void *buf, size_t count)
{
	struct result r;
	const char *rel = t->abs + rootlen + 1;
	int g;
	size_t n = count;

	if (!t->writable) {
		errno = EBADF;
		return -1;
	}
	/* kernfs takes at most a page; configfs 4095 bytes, and 0 bytes is EFAULT */
	if (t->a.fs == FS_CONFIGFS) {
		if (n == 0) {
			errno = EFAULT;
			return -1;
		}
		if (n > 4095)
			n = 4095;
	} else if (n > 4096) {
		n = 4096;
	}
	if (n == 0 && t->a.fs == FS_SYSFS)
		return 0;
	lock();
	g = gone(t);
	/* the RDMA CM's ToS is parsed before the device is looked up */
	if (g == ENODEV && t->a.kind == K_ROCE_TOS) {
		char s[4097];
		unsigned long long v;
		int e;
		memcpy(s, buf, n);
		s[n] = '\0';
		e = kstrtoull(s, 0, &v);
		if (!e && v > 0xff)
			e = -ERANGE;
		if (e)
			g = -e;
	}
	if (g) {
		unlock();
		log_op(t->a.ifname, "SYSFS_WRITE", g, rel, buf, n, NULL, "device_gone");
		errno = g;
		return -1;
	}
	store(&t->a, t->abs, buf, n, &r);
	if (r.ret < 0) {
		unlock();
		log_op(t->a.ifname, "SYSFS_WRITE", (int)-r.ret, rel, buf, n, NULL, r.why);
		errno = (int)-r.ret;
		return -1;
	}
	if (!r.shown[0] && t->a.kind != K_TC)
		slurp(t->abs, r.shown, sizeof r.shown);
	unlock();
	log_op(t->a.ifname, "SYSFS_WRITE", 0, rel, buf, n, r.shown, NULL);
	return r.ret;
}

DCBDRV_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	struct tfd t;

	pthread_once(&once, sysfs_init);
	if (lookup(fd, &t))
		return do_write(&t, buf, count);
	return s_write(fd, buf, count);
}

DCBDRV_EXPORT ssize_t pwrite(int fd, const void *buf, size_t count, off_t off)
{
	struct tfd t;

	pthread_once(&once, sysfs_init);
	if (lookup(fd, &t))
		return do_write(&t, buf, count);
	return s_pwrite(fd, buf, count, off);
}

DCBDRV_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t count, off_t off)
{
	struct tfd t;

	pthread_once(&once, sysfs_init);
	if (lookup(fd, &t))
		return do_write(&t, buf, count);
	return s_pwrite64(fd, buf, count, off);
}

DCBDRV_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct tfd t;
	char buf[4096];
	size_t n = 0;

	pthread_once(&once, sysfs_init);
	if (!lookup(fd, &t))
		return s_writev(fd, iov, iovcnt);
	/* the kernel's write_iter sees the vectors as one buffer */
	for (int i = 0; i < iovcnt && n < sizeof buf; i++) {
		size_t k = iov[i].iov_len < sizeof buf - n ? iov[i].iov_len : sizeof buf - n;
		memcpy(buf + n, iov[i].iov_base, k);
		n += k;
	}
	return do_write(&t, buf, n);
}

/* ---- read (called by shim.c's read) and pread ------------------------------------------- */

/* Reads the path's current content at fd's offset: 1 when fd is ours (*n set). */
int sysfs_read(int fd, void *buf, size_t len, ssize_t *n, off_t at, int use_at)
{
	struct tfd t;
	int g, pfd;
	off_t off;

	if (!lookup(fd, &t))
		return 0;
	g = gone(&t);
	if (g) {
		errno = g;
		*n = -1;
		return 1;
	}
	off = use_at ? at : lseek(fd, 0, SEEK_CUR);
	pfd = s_open(t.abs, O_RDONLY | O_CLOEXEC);
	if (pfd < 0) {
		*n = -1; /* errno from open */
		return 1;
	}
	*n = s_pread(pfd, buf, len, off < 0 ? 0 : off);
	r_close(pfd);
	if (*n > 0 && !use_at)
		lseek(fd, off + *n, SEEK_SET);
	return 1;
}

DCBDRV_EXPORT ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;

	pthread_once(&once, sysfs_init);
	if (sysfs_read(fd, buf, len, &n, off, 1))
		return n;
	return s_pread(fd, buf, len, off);
}

DCBDRV_EXPORT ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;

	pthread_once(&once, sysfs_init);
	if (sysfs_read(fd, buf, len, &n, off, 1))
		return n;
	return s_pread64(fd, buf, len, off);
}

/* ---- truncate: nothing changes ------------------------------------------------------------ */

/* fs/open.c vfs_truncate: a directory EISDIR, a negative length EINVAL, then
 * inode_permission(MAY_WRITE) EACCES; kernfs_iop_setattr then ignores the size. */
static int do_truncate(const char *path, off_t len, int big)
{
	char abs[PATH_MAX];
	char *rel;
	struct stat st;

	if (!active() || !resolve(AT_FDCWD, path, abs, &rel) || stat(abs, &st) != 0)
		return big ? s_truncate64(path, len) : s_truncate(path, len);
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (len < 0) {
		errno = EINVAL;
		return -1;
	}
	if (faccessat(AT_FDCWD, abs, W_OK, AT_EACCESS) != 0) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

/* do_ftruncate: an fd not open for writing, or a negative length, EINVAL. */
static int do_ftruncate(const struct tfd *t, off_t len)
{
	if (!t->writable || len < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

DCBDRV_EXPORT int truncate(const char *path, off_t len)
{
	return do_truncate(path, len, 0);
}

DCBDRV_EXPORT int truncate64(const char *path, off_t len)
{
	return do_truncate(path, len, 1);
}

DCBDRV_EXPORT int ftruncate64(int fd, off_t len)
{
	struct tfd t;

	pthread_once(&once, sysfs_init);
	if (lookup(fd, &t))
		return do_ftruncate(&t, len);
	return s_ftruncate64(fd, len);
}

DCBDRV_EXPORT int ftruncate(int fd, off_t len)
{
	struct tfd t;

	pthread_once(&once, sysfs_init);
	if (lookup(fd, &t))
		return do_ftruncate(&t, len);
	return s_ftruncate(fd, len);
}

/* ---- mkdir, rmdir, unlink ------------------------------------------------------------------ */

/* Lays the RDMA CM's group for ib (make_cma_dev, make_cma_ports): ports/N/ with
 * default_roce_mode and default_roce_tos showing the device's values. */
static int make_cma_group(const char *abs, const char *ib)
{
	char p[PATH_MAX + 128], v[64];
	int ports = ib_ports(ib);

	if (s_mkdir(abs, 0755) != 0)
		return -errno;
	fmt(p, sizeof p, "%s/ports", abs);
	s_mkdir(p, 0755);
	for (int i = 1; i <= ports; i++) {
		fmt(p, sizeof p, "%s/ports/%d", abs, i);
		s_mkdir(p, 0755);
		for (int tos = 0; tos < 2; tos++) {
			int fd;
			fmt(p, sizeof p, "%s/ports/%d/%s", abs, i,
				 tos ? "default_roce_tos" : "default_roce_mode");
			cma_value(ib, i, tos, v, sizeof v);
			fd = s_open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0)
				continue;
			if (s_write(fd, v, strlen(v)) < 0) {
				/* an empty attribute: seen by the test */
			}
			fchmod(fd, 0644);
			r_close(fd);
		}
	}
	return 0;
}

static int remove_tree(const char *abs)
{
	DIR *d = opendir(abs);
	struct dirent *e;
	char p[PATH_MAX + 256];

	if (!d)
		return s_unlink(abs);
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		fmt(p, sizeof p, "%s/%s", abs, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(p);
		else
			s_unlink(p);
	}
	closedir(d);
	return s_rmdir(abs);
}

static int do_mkdir(int dirfd, const char *path, mode_t mode, int at)
{
	char abs[PATH_MAX], copy[PATH_MAX], *c[8], parent[PATH_MAX];
	char *rel, *slash;
	struct attr a;
	int n, err = 0;
	const char *why = "";

	if (!active() || !resolve(dirfd, path, abs, &rel))
		return at ? s_mkdirat(dirfd, path, mode) : s_mkdir(path, mode);
	classify(rel, &a);
	fmt(parent, sizeof parent, "%s", abs);
	slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	if (exists(abs)) {
		err = EEXIST; /* filename_create */
	} else if (!exists(parent)) {
		err = ENOENT;
	} else {
		n = split(rel, copy, sizeof copy, c, 7);
		if (a.fs == FS_CONFIGFS && n == 4 && strcmp(c[2], "rdma_cm") == 0) {
			/* make_cma_dev: cma_enum_devices_by_ibdev by name, else ENODEV */
			lock();
			if (!ibdev_alive(c[3])) {
				err = ENODEV;
				why = "no_rdma_device";
			} else {
				err = -make_cma_group(abs, c[3]);
			}
			unlock();
		} else {
			err = EPERM;
			why = "no_make_group";
		}
	}
	log_op(a.ifname, "SYSFS_MKDIR", err, rel, NULL, 0, NULL, why);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

DCBDRV_EXPORT int mkdir(const char *path, mode_t mode)
{
	pthread_once(&once, sysfs_init);
	return do_mkdir(AT_FDCWD, path, mode, 0);
}

DCBDRV_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	pthread_once(&once, sysfs_init);
	return do_mkdir(dirfd, path, mode, 1);
}

static int do_rmdir(const char *path)
{
	char abs[PATH_MAX], copy[PATH_MAX], *c[8];
	char *rel;
	struct attr a;
	struct stat st;
	int n, err = 0;
	const char *why = "";

	if (!resolve(AT_FDCWD, path, abs, &rel))
		return s_rmdir(path);
	classify(rel, &a);
	if (lstat(abs, &st) != 0) {
		err = errno;
	} else if (!S_ISDIR(st.st_mode)) {
		err = ENOTDIR;
	} else {
		n = split(rel, copy, sizeof copy, c, 7);
		if (a.fs == FS_CONFIGFS && n == 4 && strcmp(c[2], "rdma_cm") == 0) {
			/* drop_cma_dev: the group and its default groups go; the device's
			 * values stay with the device */
			lock();
			if (remove_tree(abs) != 0)
				err = errno;
			unlock();
		} else {
			err = EPERM;
			why = a.fs == FS_CONFIGFS ? "default_group" : "no_rmdir";
		}
	}
	log_op(a.ifname, "SYSFS_RMDIR", err, rel, NULL, 0, NULL, why);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

DCBDRV_EXPORT int rmdir(const char *path)
{
	if (!active())
		return s_rmdir(path);
	return do_rmdir(path);
}

static int do_unlink(int dirfd, const char *path, int flags)
{
	char abs[PATH_MAX];
	char *rel;
	struct attr a;
	struct stat st;
	int err;

	if (!active() || !resolve(dirfd, path, abs, &rel))
		return flags || dirfd != AT_FDCWD ? s_unlinkat(dirfd, path, flags) : s_unlink(path);
	if (flags & AT_REMOVEDIR)
		return do_rmdir(abs);
	classify(rel, &a);
	if (lstat(abs, &st) != 0)
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	else
		err = EPERM;
	log_op(a.ifname, "SYSFS_UNLINK", err, rel, NULL, 0, NULL, err == EPERM ? "no_unlink" : "");
	errno = err;
	return -1;
}

DCBDRV_EXPORT int unlink(const char *path)
{
	pthread_once(&once, sysfs_init);
	return do_unlink(AT_FDCWD, path, 0);
}

DCBDRV_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	pthread_once(&once, sysfs_init);
	return do_unlink(dirfd, path, flags);
}

/* ---- fopen: stdio writes through the stores ------------------------------------------------ */

static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	struct tfd t;
	int fd = (int)(intptr_t)c;

	if (!lookup(fd, &t)) {
		errno = EBADF;
		return -1;
	}
	return do_write(&t, buf, n);
}

static ssize_t cookie_read(void *c, char *buf, size_t n)
{
	ssize_t r;
	int fd = (int)(intptr_t)c;

	if (sysfs_read(fd, buf, n, &r, 0, 0))
		return r;
	return s_pread(fd, buf, n, lseek(fd, 0, SEEK_CUR));
}

static int cookie_close(void *c)
{
	int fd = (int)(intptr_t)c;

	sysfs_forget(fd);
	return r_close(fd);
}

static FILE *do_fopen(const char *path, const char *mode, int big)
{
	char abs[PATH_MAX];
	char *rel;
	int flags, fd;
	cookie_io_functions_t io = {cookie_read, cookie_write, NULL, cookie_close};
	FILE *f;

	if (!active() || !resolve(AT_FDCWD, path, abs, &rel) ||
	    (!strchr(mode, 'w') && !strchr(mode, 'a') && !strchr(mode, '+')))
		return big ? s_fopen64(path, mode) : s_fopen(path, mode);
	flags = strchr(mode, '+') ? O_RDWR : O_WRONLY;
	if (mode[0] == 'w' || mode[0] == 'a')
		flags |= O_CREAT;
	if (strchr(mode, 'x'))
		flags |= O_EXCL;
	fd = do_open(W_OPEN, AT_FDCWD, path, flags | O_CLOEXEC, 0666);
	if (fd < 0)
		return NULL;
	f = fopencookie((void *)(intptr_t)fd, mode, io);
	if (!f) {
		sysfs_forget(fd);
		r_close(fd);
	}
	return f;
}

DCBDRV_EXPORT FILE *fopen(const char *path, const char *mode)
{
	pthread_once(&once, sysfs_init);
	return do_fopen(path, mode, 0);
}

DCBDRV_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	pthread_once(&once, sysfs_init);
	return do_fopen(path, mode, 1);
}
