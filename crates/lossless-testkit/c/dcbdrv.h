/*
 * dcbdrv: an emulated DCB-capable network driver, loaded with LD_PRELOAD.
 *
 * Part of lossless-testkit (see ../README.md). veth has no dcbnl ops, so the
 * kernel answers every RTM_GETDCB/RTM_SETDCB on it with EOPNOTSUPP. This
 * library sits between a process and its NETLINK_ROUTE sockets: a dcbnl
 * request addressed to the kernel for an emulated interface is not sent;
 * the reply the kernel's net/dcb/dcbnl.c would build for the driver being
 * modelled is queued on that socket instead, and the next receive on it
 * returns it. The driver's ethtool side is answered the same way: requests
 * of the ethtool generic netlink family (pause, private flags) and the
 * SIOCETHTOOL ioctl (name, statistics, pause, private flags) for emulated
 * interfaces. Everything else goes to libc unchanged.
 *
 * Environment (all optional):
 *   LOSSLESS_DCBDRV_IFACES   comma-separated interfaces to emulate
 *                            (default: every interface except lo)
 *   LOSSLESS_DCBDRV_DIR      directory for IF.state files, IF.lock files and
 *                            the log (dcbdrv.log); nothing is written without
 *                            it. Processes with the same DIR share one NIC per
 *                            interface (statefile.c); without it each process
 *                            has its own.
 *   LOSSLESS_DCBDRV_MODEL    the driver modelled: generic (default), mlx5,
 *                            ice, i40e, bnxt, hns3, ixgbe (models.c, drv_*.c)
 *   LOSSLESS_DCBDRV_FW_AGENT 1 (every emulated interface) or a comma list of
 *                            interfaces: the NIC's firmware LLDP/DCBX agent
 *                            owns DCBX there (where the modelled driver knows
 *                            such a state)
 *   LOSSLESS_DCBDRV_DCB_ON   1: DCB is on from the start (default off; the
 *                            generic and ixgbe models, the others decide)
 *   LOSSLESS_DCBDRV_BUFFER   1, or "total=N size=a,b,.. prio2buffer=a,b,..":
 *                            the generic driver has DCB buffer ops (mlx5
 *                            always has them; this gives their power-on sizes)
 *   LOSSLESS_DCBDRV_APPS     "SEL,PRIO,PROTO;...": APP entries at power-on
 *   LOSSLESS_DCBDRV_LOG_GETS 1: log get requests too (sets are always logged)
 *   LOSSLESS_DCBDRV_LLDPAD_FIX 0: do not patch lldpad (see lldpad_fix())
 *   LOSSLESS_DCBDRV_SYSFS    ROOT of an emulated host tree (sysfs, configfs at
 *                            ROOT/kernel/config, debugfs at ROOT/kernel/debug,
 *                            laid by src/sysfs.rs): opens, writes, mkdir,
 *                            rmdir, unlink under ROOT get the kernel's answers
 *                            and are logged (sysfs.c); unset: nothing changes
 *
 * The state file format and the log format are documented in ../README.md;
 * the Rust side (src/dcbdrv.rs) parses them.
 *
 * The library's files, each with its own header comment:
 *   dcbdrv.h      what the files share: the emulated NIC's state, the model
 *                 descriptor, the netlink message buffer, the functions one
 *                 file calls in another
 *   state.c       the log, the emulated interfaces, the power-on state
 *   statefile.c   the state file and its lock: the NIC shared by processes
 *   nlmsg.c       netlink attributes: building a reply, parsing a request
 *   ops.c         the dcbnl commands: the CEE ones and the dispatch (run())
 *   ieee.c        the IEEE 802.1Qaz commands, the kernel's APP table
 *   models.c      the table of driver models, the generic driver, what the
 *                 models share (the link reset, checks and answers several
 *                 drivers' ops have alike, ice's and i40e's common code)
 *   drv_mlx5.c    the mlx5 model (ConnectX: en_dcbnl.c, en/port_buffer.c)
 *   drv_ice.c     the ice model (E810: ice_dcb_nl.c, ice_dcb_lib.c)
 *   drv_i40e.c    the i40e model (XL710: i40e_dcb_nl.c, i40e_main.c)
 *   drv_ixgbe.c   the ixgbe model (82599: ixgbe_dcb_nl.c, ixgbe_main.c)
 *   drv_bnxt.c    the bnxt model (NetXtreme-C/E: bnxt_dcb.c, bnxt.c)
 *   drv_hns3.c    the hns3 model (HiSilicon: hns3_dcbnl.c, hclge_dcb.c)
 *   shim.c        the real libc calls, the reply queues, the request path,
 *                 the wrapped libc calls, the load-time constructor
 *   lldpad_fix.c  the patch for Debian 12's lldpad
 *   ethtool.c     ethtool's generic netlink family (pause, private flags)
 *   ethtool_ioctl.c  SIOCETHTOOL (driver name, statistics, pause, flags)
 *   ethmodels.c   each model's ethtool ops: pause, private flags, the
 *                 statistics' names
 *   sysfs.c       the kernel's write semantics on an emulated sysfs,
 *                 configfs and debugfs (LOSSLESS_DCBDRV_SYSFS)
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
#include <linux/sockios.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
	X_TSA_STRICT = 0,
	X_TSA_CBS = 1,
	X_TSA_ETS = 2,
	X_TSA_VENDOR = 255,
};

struct xbuffer { /* struct dcbnl_buffer */
	uint8_t prio2buffer[8];
	uint32_t buffer_size[8];
	uint32_t total_size;
};

/* NICs one process may hold: a whole host (lossless doctor reads every port of it;
 * its benchmark 64). Static and zero until used: untouched pages cost nothing. */
#define MAXDRV 1024
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

/* A DCBX configuration as ice's struct ice_dcbx_cfg and i40e's struct
 * i40e_dcbx_config hold it: the ETS (etscfg in willing, ets_cap (maxtcs),
 * cbs, tc_tx_bw (tcbwtable), tc_tsa, prio_tc; etsrec in the reco fields),
 * PFC, the firmware's APP table, the DSCP map. ice compares two of them
 * whole, so the layout has no padding (checked below). */
struct fwapp {
	uint16_t proto;
	uint8_t sel, prio;
};
#define FWAPPS 32
struct fwcfg {
	struct ieee_ets ets;
	uint8_t pfc_cap, pfc_en, pfc_willing, dscp_mode, napp;
	uint8_t dscp[64];
	uint8_t mapped[8]; /* bitmap: DSCP values an APP entry maps */
	struct fwapp app[FWAPPS];
};
_Static_assert(sizeof(struct fwcfg) == 264, "struct fwcfg has padding");

/* What the modelled driver and its NIC hold beyond what dcbnl reports: the
 * "hardware". Each model uses the part its comment block names; the state
 * file holds the parts the model uses (statefile.c). */
struct hw {
	struct ieee_ets ets; /* the driver's own ETS record */
	struct ieee_pfc pfc; /* its PFC record (the counters unused) */
	uint8_t has_ets, has_pfc, num_tc, trust, dscp_cnt, fcoe_up, dcb_on, fw_mode;
	uint8_t tc_group[8], bw[8], qidx[8], pfc_map;
	uint8_t dscp[64];    /* DSCP -> priority, as the NIC maps it */
	struct fwcfg local;  /* ice, i40e: the configuration applied */
	struct fwcfg want;   /* ice: desired_dcbx_cfg; i40e: tmp_cfg (CEE) */
	struct pg cee_pg[2]; /* CEE settings SET_ALL has not committed yet */
	uint8_t cee_pfc[8], cee_pfc_state;
};

/* What the NIC holds for ethtool (ethmodels.c; the state file's eth.* keys): the
 * link flow control its driver was told (what get_pauseparam reports while PFC is
 * off), the private flags (bit i: the model's flag i) and the statistics a test
 * set (by name; the others read 0). */
#define ETHSTATS 128
struct ethstat {
	char name[32]; /* ETH_GSTRING_LEN */
	uint64_t value;
};
struct eth {
	uint8_t autoneg, rx, tx;
	uint32_t priv;
	int nstat;
	struct ethstat stat[ETHSTATS];
};

/* One emulated NIC port: what dcbnl reports plus the model's hardware. */
struct drv {
	char ifname[IFNAMSIZ];
	int model;       /* index in models[] */
	uint8_t fw_agent; /* the firmware LLDP/DCBX agent owns DCBX */
	uint8_t dcb_state, dcbx, numtcs_pg, numtcs_pfc;
	uint8_t pfc_state, pfc_up[8];
	struct pg pg[2]; /* 0 tx, 1 rx */
	struct ieee_ets ets; /* as IEEE_GET reports it (models: kept in step) */
	struct ieee_pfc pfc;
	struct app app[MAXAPP]; /* the kernel's APP table (dcb_app_list) */
	int n_app;
	uint8_t trust[256];
	int n_trust;
	int has_buffer; /* the driver has dcbnl_getbuffer/setbuffer */
	struct xbuffer buf;
	int changed; /* CEE sets since the last SET_ALL */
	unsigned sets, set_all, gen, link_resets;
	struct hw hw;
	struct eth eth; /* ethtool's view (ethmodels.c) */
	/* this process's view of the shared state file (not in the file) */
	int lockfd, known;
	dev_t seen_dev;
	ino_t seen_ino;
	off_t seen_size;
	struct timespec seen_mtime;
};

/* The details of a request's log line: "key=value" words. */
struct note {
	char s[4096];
};

/* The dcbnl ops a modelled driver has (members of its dcbnl_rtnl_ops that
 * decide whether dcbnl.c answers EOPNOTSUPP). */
enum {
	OP_GETSTATE = 1u << 0,
	OP_SETSTATE = 1u << 1,
	OP_PG_GET = 1u << 2,     /* getpgtccfgtx/rx and getpgbwgcfgtx/rx, all four */
	OP_PG_SET = 1u << 3,     /* setpgtccfgtx/rx and setpgbwgcfgtx/rx, all four */
	OP_PFCCFG_GET = 1u << 4,
	OP_PFCCFG_SET = 1u << 5,
	OP_SETALL = 1u << 6,
	OP_GETCAP = 1u << 7,
	OP_GETNUMTCS = 1u << 8,
	OP_SETNUMTCS = 1u << 9,
	OP_PFCSTATE_GET = 1u << 10,
	OP_PFCSTATE_SET = 1u << 11,
	OP_PERMHWADDR = 1u << 12,
	OP_APPTRUST = 1u << 13,  /* dcbnl_setapptrust/getapptrust */
	OP_CEE_ALL = (1u << 13) - 1,
};

/* What the CEE hook answers when the generic code should handle the command. */
#define CEE_DEFAULT 1

struct mb;

/* A driver model: which ops it has and how they answer. A NULL hook means
 * the generic behaviour (the kernel's fallback where dcbnl.c has one). */
struct model {
	const char *name;
	unsigned ops;
	uint8_t caps[DCB_CAP_ATTR_MAX + 1]; /* GCAP answers but DCBX */
	void (*init)(struct drv *d);        /* power-on state (after the generic one) */
	uint8_t (*cap_dcbx)(const struct drv *d); /* GCAP's DCB_CAP_ATTR_DCBX */
	int (*getets)(struct drv *d, struct ieee_ets *e); /* non-zero: left out */
	int (*setets)(struct drv *d, const struct ieee_ets *e, struct note *n);
	int (*getpfc)(struct drv *d, struct ieee_pfc *p);
	int (*setpfc)(struct drv *d, const struct ieee_pfc *p, struct note *n);
	int (*setapp)(struct drv *d, const struct dcb_app *a, struct note *n);
	int (*delapp)(struct drv *d, const struct dcb_app *a, struct note *n);
	int (*setbuffer)(struct drv *d, const struct xbuffer *b, struct note *n);
	uint8_t (*setdcbx)(struct drv *d, uint8_t mode, struct note *n);
	/* CEE commands: 0 or -errno when handled, CEE_DEFAULT otherwise */
	int (*cee)(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r,
		   int *status, struct note *n);
};

enum { M_GENERIC, M_MLX5, M_ICE, M_I40E, M_BNXT, M_HNS3, M_IXGBE, M_COUNT };

/* The GCAP answers of a driver with PG and PFC over 8 TCs (PG, PFC 1; PG_TCS,
 * PFC_TCS 0x80), for a struct model's caps: {CAPS_PG_PFC_8TCS, ...}. */
#define CAPS_PG_PFC_8TCS                                                              \
	[DCB_CAP_ATTR_PG] = 1, [DCB_CAP_ATTR_PFC] = 1, [DCB_CAP_ATTR_PG_TCS] = 0x80, \
	[DCB_CAP_ATTR_PFC_TCS] = 0x80

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

/* state.c: log, interfaces, power-on state */
int env_on(const char *k);
int env_lists(const char *k, const char *ifname); /* "1" or a list naming ifname */
void logline(const char *ifname, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int emulated(const char *ifname);
void drv_power_on(struct drv *d); /* keeps ifname and the per-process fields */
void read_counters(const struct drv *d, struct ieee_pfc *p);
void note(struct note *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void note8(struct note *n, const char *key, const uint8_t *v);

/* statefile.c: the shared NIC */
struct drv *nic_get(const char *ifname); /* under shim.c's mutex; locks DIR/IF.lock */
void nic_put(struct drv *d, int write);  /* writes DIR/IF.state when asked, unlocks */

/* nlmsg.c: netlink messages */
size_t put(struct mb *m, int type, const void *data, size_t n);
void put_u8(struct mb *m, int type, uint8_t v);
void put_u16(struct mb *m, int type, uint16_t v);
size_t nest(struct mb *m, int type);
void nest_end(struct mb *m, size_t at);
int parse(const void *p, int len, const struct nlattr **tb, int max);
int u8_of(const struct nlattr *a, uint8_t *v);
int payload_of(const struct nlattr *a, void *out, size_t size);

/* ops.c: the dcbnl commands */
extern const char *const cmd_names[]; /* the log's name of each DCB_CMD_* */
extern const int ncmd;                /* entries in cmd_names */
int reply_type(int cmd);
int run(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	struct note *n);
int status_reply(struct mb *r, int attr, int *status, int value);
void cee_pg_get(const struct pg *p, const struct nlattr *req, struct mb *r);
void cee_pg_set(struct pg *p, const struct nlattr *req, struct note *n);
void cee_pfc_get(const uint8_t *up, const struct nlattr *cfg, struct mb *r);
void cee_pfc_set(uint8_t *up, const struct nlattr *cfg, struct note *n);

/* ieee.c: IEEE_GET/SET/DEL and the kernel's APP table */
void ieee_fill(struct drv *d, struct mb *r);
int ieee_setdel(struct drv *d, int del, const struct nlattr *req, struct note *n);
int app_find(const struct drv *d, uint8_t sel, uint16_t proto, int prio);
void app_remove(struct drv *d, int i);
int kapp_add(struct drv *d, const struct dcb_app *a);  /* dcb_ieee_setapp() */
int kapp_del(struct drv *d, const struct dcb_app *a);  /* dcb_ieee_delapp() */
int app_attr_type(uint8_t sel);

/* models.c and drv_*.c: the models and what they share */
extern const struct model *const models[M_COUNT];
const struct model *model_of(const struct drv *d);
int model_by_name(const char *name); /* -1: unknown */
void model_sync(struct drv *d);      /* d->ets/d->pfc as IEEE_GET reports them */
void link_reset(struct drv *d, int open_always, struct note *n);
int ieee_gate(const struct drv *d, const char *what, int lld, struct note *n);
int ets_as_set(const struct drv *d, struct ieee_ets *e, uint8_t cap);
int pfc_as_set(const struct drv *d, struct ieee_pfc *p, uint8_t cap);
int dcbx_unsupported(uint8_t mode);
uint8_t dcbx_take(struct drv *d, uint8_t mode, const char *why, struct note *n);
int num_tc_contig(const uint8_t *prio_tc); /* ice/i40e_dcb_get_num_tc() */
int fwapp_find(const struct fwcfg *c, uint8_t sel, uint16_t proto, uint8_t prio, int from);
void fwapp_remove(struct fwcfg *c, int i, const struct fwcfg *from);
void fwcfg_sw_default(struct fwcfg *c);
void fwcfg_reco_from_cfg(struct fwcfg *c);
int fwcfg_cee_on(const struct drv *d);
int fwcfg_cee(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	      struct note *n, const char *pending);
extern const struct model model_generic, model_mlx5, model_ice, model_i40e, model_ixgbe,
	model_bnxt, model_hns3;

/* lldpad_fix.c: called by the constructor in shim.c */
void lldpad_fix(void);

/* sysfs.c: the emulated host tree (LOSSLESS_DCBDRV_SYSFS); shim.c's read and close
 * call these. sysfs_read answers a read of an fd sysfs.c opened under the root (at
 * `at` when use_at, else at the fd's offset): 1 with *n set (-1 and errno on error),
 * 0 when fd is not one of them. */
int sysfs_read(int fd, void *buf, size_t len, ssize_t *n, off_t at, int use_at);
void sysfs_forget(int fd);

/* ---- ethtool: ethtool.c (generic netlink), ethtool_ioctl.c (SIOCETHTOOL),
 * ethmodels.c (what each driver's ethtool ops answer). shim.c calls
 * eth_intercept() from its request path and eth_ioctl() from its ioctl
 * wrapper; they take `mu` and answer through enqueue() as the dcbnl path does. */

extern pthread_mutex_t mu;                                 /* shim.c */
void enqueue(int fd, const void *data, size_t len);        /* shim.c */
extern int (*r_ioctl)(int, unsigned long, ...);            /* shim.c */

struct pausep {
	uint8_t autoneg, rx, tx;
};

/* A driver's ethtool ops as the emulation answers them; NULL members are ops the
 * driver lacks (the kernel then answers EOPNOTSUPP, as net/ethtool does). */
struct ethmodel {
	const char *driver;  /* ETHTOOL_GDRVINFO; NULL: the kernel (veth) answers */
	void (*get_pause)(const struct drv *d, struct pausep *p);
	int (*set_pause)(struct drv *d, const struct pausep *p, struct note *n);
	const char *const *flags; /* private flag names; NULL: no priv flag ops */
	int nflags;
	int (*set_flags)(struct drv *d, uint32_t flags, struct note *n);
	/* statistics: their names now (ETH_SS_STATS, in the driver's order); NULL:
	 * the kernel's (veth's) */
	int (*stat_names)(const struct drv *d, char (*names)[32], int max);
	const char *pause_rx, *pause_tx; /* get_pause_stats' counters; NULL: none */
};

#define ETH_MAXSTATS 256 /* names a model lists at most */

const struct ethmodel *ethmodel_of(const struct drv *d);
void eth_power_on(struct drv *d);                      /* ethmodels.c, from drv_power_on */
void eth_get_pause(const struct drv *d, struct pausep *p);
int eth_set_pause(struct drv *d, const struct pausep *p, struct note *n);
uint32_t eth_flags(const struct drv *d);
int eth_set_flags(struct drv *d, uint32_t flags, struct note *n);
int eth_stat_names(const struct drv *d, char (*names)[32], int max);
uint64_t eth_stat(const struct drv *d, const char *name); /* 0 when never set */
int eth_has_pause(const struct drv *d);
int eth_owns(const struct drv *d); /* the model answers ethtool beyond pause (not generic) */
int can_net_admin(void);          /* ethtool.c: the caller has CAP_NET_ADMIN */
int eth_intercept(int fd, const void *buf, size_t len, const struct sockaddr *to); /* ethtool.c */
int eth_ioctl(int fd, void *arg, int *ret);            /* ethtool_ioctl.c: 1 when answered */

#pragma GCC visibility pop

#endif
