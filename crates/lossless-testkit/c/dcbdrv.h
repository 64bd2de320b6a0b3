/*
 * dcbdrv: an emulated DCB-capable network driver, loaded with LD_PRELOAD.
 *
 * Part of lossless-testkit (see ../README.md). veth has no dcbnl ops, so the
 * kernel answers every RTM_GETDCB/RTM_SETDCB on it with EOPNOTSUPP. This
 * library sits between a process and its NETLINK_ROUTE sockets: a dcbnl
 * request addressed to the kernel for an emulated interface is not sent;
 * the reply the kernel's net/dcb/dcbnl.c would build for a driver that has
 * the CEE and IEEE 802.1Qaz dcbnl ops is queued on that socket instead, and
 * the next receive on it returns it. Everything else goes to libc unchanged.
 *
 * Environment (all optional):
 *   LOSSLESS_DCBDRV_IFACES   comma-separated interfaces to emulate
 *                            (default: every interface except lo)
 *   LOSSLESS_DCBDRV_DIR      directory for IF.state files and the log
 *                            (dcbdrv.log); nothing is written without it
 *   LOSSLESS_DCBDRV_DCB_ON   1: DCB is on from the start (default off)
 *   LOSSLESS_DCBDRV_BUFFER   1, or "total=N size=a,b,.. prio2buffer=a,b,..":
 *                            the driver has DCB buffer ops
 *   LOSSLESS_DCBDRV_LOG_GETS 1: log get requests too (sets are always logged)
 *   LOSSLESS_DCBDRV_LLDPAD_FIX 0: do not patch lldpad (see lldpad_fix())
 *
 * The state file format and the log format are documented in ../README.md;
 * the Rust side (src/dcbdrv.rs) parses them.
 *
 * The library's files, each with its own header comment:
 *   dcbdrv.h      what the files share: the emulated driver's state, the
 *                 netlink message buffer, the functions one file calls in another
 *   state.c       the log, the state file, the emulated interfaces and the
 *                 driver state they start with
 *   nlmsg.c       netlink attributes: building a reply, parsing a request
 *   ops.c         the driver: one function per dcbnl op group
 *   shim.c        the real libc calls, the reply queues, the request path,
 *                 the wrapped libc calls, the load-time constructor
 *   lldpad_fix.c  the patch for Debian 12's lldpad
 *
 * Only the wrapped libc calls are exported: build.rs compiles every file with
 * -fvisibility=hidden and the wrappers carry DCBDRV_EXPORT; the declarations
 * below are hidden as well, so a sibling's call binds inside the library.
 */
#ifndef DCBDRV_H
#define DCBDRV_H

#define _GNU_SOURCE /* every .c includes this file first */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif

/* ieee_attrs and ieee_attrs_app values newer than some installed headers. */
enum {
	X_IEEE_ETS = 1,
	X_IEEE_PFC = 2,
	X_IEEE_APP_TABLE = 3,
	X_IEEE_MAXRATE = 7,
	X_DCB_BUFFER = 10,
	X_DCB_APP_TRUST_TABLE = 11,
	X_IEEE_MAX = 12,
	X_APP_IEEE = 1, /* DCB_ATTR_IEEE_APP */
	X_APP_DCB = 2,  /* DCB_ATTR_DCB_APP */
	X_SEL_DSCP = 5,
	X_SEL_PCP = 255,
};

struct xbuffer { /* struct dcbnl_buffer */
	uint8_t prio2buffer[8];
	uint32_t buffer_size[8];
	uint32_t total_size;
};

#define MAXDRV 16
#define MAXAPP 128
#define UNDEF 0xff /* DCB_ATTR_VALUE_UNDEFINED */

struct app {
	uint8_t selector, priority;
	uint16_t protocol;
	uint8_t cee; /* added by DCB_CMD_SAPP (CEE), not IEEE_SET */
};

struct pg {
	uint8_t pgid[8], up_map[8], strict[8], bw_pct[8], pg_bw[8];
};

struct drv {
	char ifname[IFNAMSIZ];
	uint8_t dcb_state, dcbx, numtcs_pg, numtcs_pfc;
	uint8_t pfc_state, pfc_up[8];
	struct pg pg[2]; /* 0 tx, 1 rx */
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	struct app app[MAXAPP];
	int n_app;
	uint8_t trust[256];
	int n_trust;
	int has_buffer;
	struct xbuffer buf;
	int changed; /* since the last SET_ALL */
	unsigned sets, set_all;
};

/* The wrapped libc calls (shim.c): the library's only exported symbols. */
#define DCBDRV_EXPORT __attribute__((visibility("default")))

/* netlink messages: the reply being built, reading attributes */

struct mb {
	unsigned char b[16384];
	size_t len;
};

#define NLA_OK_(a, rem) ((rem) >= (int)NLA_HDRLEN && (a)->nla_len >= NLA_HDRLEN && (a)->nla_len <= (rem))
#define DATA(a) ((const unsigned char *)(a) + NLA_HDRLEN)
#define DLEN(a) ((int)(a)->nla_len - (int)NLA_HDRLEN)
#define TYPE(a) ((a)->nla_type & NLA_TYPE_MASK)

#define FOR_NESTED(a, parent, rem)                                                     \
	for (a = (const struct nlattr *)DATA(parent), rem = DLEN(parent); NLA_OK_(a, rem); \
	     rem -= NLA_ALIGN(a->nla_len),                                                 \
	    a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len)))

#pragma GCC visibility push(hidden)

/* shim.c: the real libc calls */
extern int (*r_close)(int);

/* state.c: log and state file, interfaces */
int env_on(const char *k);
void logline(const char *ifname, const char *cmd, const char *fmt, ...);
void write_state(const struct drv *d);
int emulated(const char *ifname);
struct drv *drv_get(const char *ifname); /* under shim.c's mutex */
void read_counters(const struct drv *d, struct ieee_pfc *p);

/* nlmsg.c: netlink messages */
size_t put(struct mb *m, int type, const void *data, size_t n);
void put_u8(struct mb *m, int type, uint8_t v);
void put_u16(struct mb *m, int type, uint16_t v);
size_t nest(struct mb *m, int type);
void nest_end(struct mb *m, size_t at);
int parse(const void *p, int len, const struct nlattr **tb, int max);
int u8_of(const struct nlattr *a, uint8_t *v);

/* ops.c: the driver */
extern const char *const cmd_names[]; /* the log's name of each DCB_CMD_* */
extern const int ncmd;                /* entries in cmd_names */
int reply_type(int cmd);
int run(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	char *lg, size_t lsz);

/* lldpad_fix.c: called by the constructor in shim.c */
void lldpad_fix(void);

#pragma GCC visibility pop

#endif
