/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): ethtool's generic netlink
 * family for emulated interfaces. A request on a NETLINK_GENERIC socket,
 * addressed to the kernel, of the "ethtool" family, for an emulated interface
 * that exists, is answered here when it is one of
 *
 *   ETHTOOL_MSG_PAUSE_GET, ETHTOOL_MSG_PAUSE_SET       (net/ethtool/pause.c)
 *   ETHTOOL_MSG_PRIVFLAGS_GET, ETHTOOL_MSG_PRIVFLAGS_SET (net/ethtool/privflags.c)
 *
 * (the generic model answers pause only); what Debian's ethtool 6.1 sends for
 * `-a`, `-A`, `--show-priv-flags` and `--set-priv-flags`. Everything else goes
 * to the kernel unchanged: other commands (LINKMODES_GET, which `ethtool -a`
 * sends when autoneg is on, is the veth's), dumps, requests of callers without
 * CAP_NET_ADMIN for a set (genetlink's GENL_UNS_ADMIN_PERM answers EPERM before
 * looking at the device), and requests whose attributes the command's policy
 * would refuse or that name no device (the kernel answers those before any
 * driver op, the same for a veth). What the kernel does around the driver's op
 * is done as net/ethtool does it:
 *
 *   netlink.c ethnl_parse_header_dev_get: the device by index or name;
 *     ethnl_default_doit: the reply carries the header (index and name);
 *   pause.c: pause_parse_request (a stats source without ETHTOOL_FLAG_STATS:
 *     EINVAL "ETHTOOL_FLAG_STATS must be set when requesting a source of
 *     stats"), pause_prepare_data (EMAC/PMAC without a MAC merge layer:
 *     EOPNOTSUPP "Device does not support MAC merge layer"; get_pause_stats
 *     with ETHTOOL_FLAG_STATS), pause_fill_reply; ethnl_set_pause: the driver's
 *     values, each attribute given changes one (ethnl_update_bool32), nothing
 *     changed: 0 without calling set_pauseparam, else its return;
 *   privflags.c: no priv flag ops EOPNOTSUPP; the verbose or compact bitset
 *     (bitset.c ethnl_put_bitset32 with a mask of every flag);
 *     ethnl_set_privflags: ethnl_update_bitset32 (bitset.c, every refusal with
 *     its errno and extack message, NL_SET_ERR_MSG_ATTR's offset), nothing
 *     changed: 0, else set_priv_flags' return.
 *
 * Messages set with NL_SET_ERR_MSG_MOD carry the "ethtool_nl: " prefix of the
 * module they are built in (as the running kernel answers); they reach the
 * caller as NLMSGERR_ATTR_MSG (and NLMSGERR_ATTR_OFFS) when its socket set
 * NETLINK_EXT_ACK, the request echoed unless NETLINK_CAP_ACK, as
 * net/netlink/af_netlink.c netlink_ack does. Drivers report their refusals in
 * the kernel log only: here in dcbdrv.log (PAUSE_SET, PRIVFLAGS_SET lines).
 */
#include "dcbdrv.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif
enum {
	X_ERRATTR_MSG = 1,      /* NLMSGERR_ATTR_MSG */
	X_ERRATTR_OFFS = 2,     /* NLMSGERR_ATTR_OFFS */
	X_HEADER_PHY_INDEX = 4, /* ETHTOOL_A_HEADER_PHY_INDEX, newer than 6.1's headers */
	X_PAUSE_STATS_SRC = 6,  /* ETHTOOL_A_PAUSE_STATS_SRC, likewise */
	X_FLAG_STATS = 1 << 2,  /* ETHTOOL_FLAG_STATS */
	X_SRC_PMAC = 2,         /* ETHTOOL_MAC_STATS_SRC_PMAC */
	X_ALTIFNAMSIZ = 128,
	X_MAX_BITSET = 0x7fff,  /* ETHNL_MAX_BITSET_SIZE */
};
#define FLAGS_BASIC (ETHTOOL_FLAG_COMPACT_BITSETS | ETHTOOL_FLAG_OMIT_REPLY)
#define MOD "ethtool_nl: " /* NL_SET_ERR_MSG_MOD's prefix (KBUILD_MODNAME) */

/* ---- the caller, its socket, the family --------------------------------------- */

static int sock_protocol(int fd)
{
	int v;
	socklen_t l = sizeof v;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) < 0 || v != AF_NETLINK)
		return -1;
	l = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &l) < 0)
		return -1;
	return v;
}

int can_net_admin(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof data);
	if (syscall(SYS_capget, &h, data) != 0)
		return 0;
	return (data[CAP_NET_ADMIN / 32].effective >> (CAP_NET_ADMIN % 32)) & 1;
}

static __thread int resolving;

/* The ethtool family's id (CTRL_CMD_GETFAMILY), asked once per process: the
 * kernel gives genetlink families one id for every namespace. 0: unknown. */
static uint16_t family_id(void)
{
	static uint16_t id;
	static int tried;
	unsigned char buf[8192];
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		unsigned char a[NLA_HDRLEN + 8];
	} req;
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};
	struct timeval tv = {1, 0};
	struct nlattr *a = (struct nlattr *)req.a;
	ssize_t n;
	int fd;

	if (id || resolving || tried > 3)
		return id;
	resolving = 1;
	tried++;
	memset(&req, 0, sizeof req);
	req.h.nlmsg_len = sizeof req;
	req.h.nlmsg_type = GENL_ID_CTRL;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof ETHTOOL_GENL_NAME;
	memcpy(req.a + NLA_HDRLEN, ETHTOOL_GENL_NAME, sizeof ETHTOOL_GENL_NAME);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
	    sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&k, sizeof k) == (ssize_t)sizeof req &&
	    (n = recv(fd, buf, sizeof buf, 0)) > (ssize_t)(NLMSG_HDRLEN + GENL_HDRLEN)) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		const struct nlattr *tb[CTRL_ATTR_MAX + 1];
		if (h->nlmsg_type == GENL_ID_CTRL && h->nlmsg_len <= (size_t)n &&
		    parse((const char *)buf + NLMSG_HDRLEN + GENL_HDRLEN,
			  (int)h->nlmsg_len - (int)(NLMSG_HDRLEN + GENL_HDRLEN), tb,
			  CTRL_ATTR_MAX) == 0 &&
		    tb[CTRL_ATTR_FAMILY_ID] && DLEN(tb[CTRL_ATTR_FAMILY_ID]) == 2)
			memcpy(&id, DATA(tb[CTRL_ATTR_FAMILY_ID]), 2);
	}
	if (fd >= 0)
		close(fd);
	resolving = 0;
	return id;
}

/* ---- answers ---------------------------------------------------------------------- */

struct req {
	int fd;
	const struct nlmsghdr *h;
	uint32_t portid;
	uint16_t family;
	char ifname[IFNAMSIZ];
	int ifindex;
	uint32_t flags; /* the header's ETHTOOL_FLAG_* */
};

/* NLMSG_ERROR for r: err (0: an ACK), with extack's message and the offset of
 * the attribute it names (NULL: none) when the socket asked for them. */
static void answer_error(const struct req *r, int err, const char *msg, const void *attr)
{
	static unsigned char b[NLMSG_HDRLEN + sizeof(struct nlmsgerr) + 16384 + 512];
	struct nlmsghdr *h = (struct nlmsghdr *)b;
	struct nlmsgerr *e = NLMSG_DATA(h);
	int cap = 0, ext = 0;
	socklen_t l = sizeof cap;
	size_t echo = err ? r->h->nlmsg_len : NLMSG_HDRLEN, len;

	getsockopt(r->fd, SOL_NETLINK, NETLINK_CAP_ACK, &cap, &l);
	l = sizeof ext;
	getsockopt(r->fd, SOL_NETLINK, NETLINK_EXT_ACK, &ext, &l);
	if (cap || echo > 16384)
		echo = NLMSG_HDRLEN;
	memset(b, 0, NLMSG_HDRLEN + sizeof *e);
	h->nlmsg_type = NLMSG_ERROR;
	h->nlmsg_flags = echo == NLMSG_HDRLEN ? NLM_F_CAPPED : 0;
	h->nlmsg_seq = r->h->nlmsg_seq;
	h->nlmsg_pid = r->portid;
	e->error = err;
	memcpy(&e->msg, r->h, echo);
	len = NLMSG_HDRLEN + sizeof *e - sizeof e->msg + NLMSG_ALIGN(echo);
	if (err && ext && (msg || attr)) {
		struct mb m;
		m.len = 0;
		if (msg)
			put(&m, X_ERRATTR_MSG, msg, strlen(msg) + 1);
		if (attr) {
			uint32_t off = (uint32_t)((const char *)attr - (const char *)r->h);
			put(&m, X_ERRATTR_OFFS, &off, 4);
		}
		memcpy(b + len, m.b, m.len);
		len += m.len;
		h->nlmsg_flags |= NLM_F_ACK_TLVS;
	}
	h->nlmsg_len = (uint32_t)len;
	enqueue(r->fd, b, len);
}

/* A reply of `cmd` begun: the netlink and genetlink headers, then the
 * ETHTOOL_A_*_HEADER nest with the device (ethnl_fill_reply_header). */
static void reply_start(struct mb *m, const struct req *r, int cmd)
{
	struct genlmsghdr *g = (struct genlmsghdr *)(m->b + NLMSG_HDRLEN);
	uint32_t idx = (uint32_t)r->ifindex;
	size_t at;

	memset(m->b, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	g->cmd = (uint8_t)cmd;
	g->version = ETHTOOL_GENL_VERSION;
	at = nest(m, 1 | NLA_F_NESTED); /* every ETHTOOL_A_*_HEADER is 1 */
	put(m, ETHTOOL_A_HEADER_DEV_INDEX, &idx, 4);
	put(m, ETHTOOL_A_HEADER_DEV_NAME, r->ifname, strlen(r->ifname) + 1);
	nest_end(m, at);
}

/* The ACK of a request that succeeded: only when it asked for one. */
static void ack(const struct req *r)
{
	if (r->h->nlmsg_flags & NLM_F_ACK)
		answer_error(r, 0, NULL, NULL);
}

/* genlmsg_reply: the reply (flags 0), then the ACK when asked for. */
static void reply_send(struct mb *m, const struct req *r)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->b;

	h->nlmsg_len = (uint32_t)m->len;
	h->nlmsg_type = r->family;
	h->nlmsg_flags = 0;
	h->nlmsg_seq = r->h->nlmsg_seq;
	h->nlmsg_pid = r->portid;
	enqueue(r->fd, m->b, m->len);
	ack(r);
}

static void put_u32(struct mb *m, int type, uint32_t v) { put(m, type, &v, 4); }

/* ---- request attributes --------------------------------------------------------- */

/* Parses the attributes of `len` bytes at p into tb[0..max]: -1 when one is
 * malformed, of a type above max or in `reject` (a bit per type), or repeated. */
static int parse_strict(const void *p, int len, const struct nlattr **tb, int max,
			unsigned reject)
{
	const struct nlattr *a = p;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= (int)NLA_HDRLEN) {
		if (!NLA_OK_(a, len) || TYPE(a) == 0 || TYPE(a) > max || (reject >> TYPE(a)) & 1)
			return -1;
		tb[TYPE(a)] = a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return len == 0 ? 0 : -1;
}

static int u32_attr(const struct nlattr *a, uint32_t *v)
{
	if (!a || DLEN(a) != 4)
		return -1;
	memcpy(v, DATA(a), 4);
	return 0;
}

/* The request header (ethnl_header_policy, ethnl_parse_header_dev_get): the
 * device and flags into r; -1 when the kernel should answer (malformed, flags
 * the policy refuses, no device given or found, index and name apart). */
static int header(const struct nlattr *nest, uint32_t allowed, struct req *r)
{
	const struct nlattr *tb[X_HEADER_PHY_INDEX + 1];
	char byidx[IF_NAMESIZE];

	if (!nest || parse_strict(DATA(nest), DLEN(nest), tb, ETHTOOL_A_HEADER_FLAGS, 0) < 0)
		return -1;
	r->flags = 0;
	if (tb[ETHTOOL_A_HEADER_FLAGS] &&
	    (u32_attr(tb[ETHTOOL_A_HEADER_FLAGS], &r->flags) < 0 || (r->flags & ~allowed)))
		return -1;
	r->ifname[0] = '\0';
	if (tb[ETHTOOL_A_HEADER_DEV_NAME]) {
		const struct nlattr *a = tb[ETHTOOL_A_HEADER_DEV_NAME];
		int n = DLEN(a);
		if (n < 1 || n > X_ALTIFNAMSIZ || !memchr(DATA(a), 0, n) ||
		    strlen((const char *)DATA(a)) >= IFNAMSIZ)
			return -1;
		snprintf(r->ifname, sizeof r->ifname, "%s", (const char *)DATA(a));
	}
	if (tb[ETHTOOL_A_HEADER_DEV_INDEX]) {
		uint32_t idx;
		if (u32_attr(tb[ETHTOOL_A_HEADER_DEV_INDEX], &idx) < 0 ||
		    !if_indextoname(idx, byidx) || (r->ifname[0] && strcmp(byidx, r->ifname)))
			return -1;
		snprintf(r->ifname, sizeof r->ifname, "%s", byidx);
	}
	if (!r->ifname[0])
		return -1;
	r->ifindex = (int)if_nametoindex(r->ifname);
	return r->ifindex > 0 ? 0 : -1;
}

/* ---- PAUSE ----------------------------------------------------------------------- */

enum { ANSWERED = 1, KERNEL = 0 };

static int pause_get(struct drv *d, struct req *r, const struct nlattr **tb, struct mb *m,
		     struct note *n)
{
	uint32_t src = 0;
	struct pausep p;

	if (tb[X_PAUSE_STATS_SRC]) {
		if (!(r->flags & X_FLAG_STATS)) {
			answer_error(r, -EINVAL,
				     MOD "ETHTOOL_FLAG_STATS must be set when requesting a source of stats",
				     NULL);
			return -EINVAL;
		}
		memcpy(&src, DATA(tb[X_PAUSE_STATS_SRC]), 4);
	}
	if (src) { /* EMAC or PMAC: no MAC merge layer on any model */
		note(n, "stats.src=%u", src);
		answer_error(r, -EOPNOTSUPP, MOD "Device does not support MAC merge layer", NULL);
		return -EOPNOTSUPP;
	}
	eth_get_pause(d, &p);
	reply_start(m, r, ETHTOOL_MSG_PAUSE_GET_REPLY);
	put_u8(m, ETHTOOL_A_PAUSE_AUTONEG, !!p.autoneg);
	put_u8(m, ETHTOOL_A_PAUSE_RX, !!p.rx);
	put_u8(m, ETHTOOL_A_PAUSE_TX, !!p.tx);
	if (r->flags & X_FLAG_STATS) {
		const struct ethmodel *em = ethmodel_of(d);
		size_t at;
		put_u32(m, X_PAUSE_STATS_SRC, src);
		at = nest(m, ETHTOOL_A_PAUSE_STATS | NLA_F_NESTED);
		if (em->pause_tx) {
			uint64_t v = eth_stat(d, em->pause_tx);
			put(m, ETHTOOL_A_PAUSE_STAT_TX_FRAMES, &v, 8);
		}
		if (em->pause_rx) {
			uint64_t v = eth_stat(d, em->pause_rx);
			put(m, ETHTOOL_A_PAUSE_STAT_RX_FRAMES, &v, 8);
		}
		nest_end(m, at);
	}
	note(n, "autoneg=%u rx=%u tx=%u", !!p.autoneg, !!p.rx, !!p.tx);
	reply_send(m, r);
	return 0;
}

static int pause_set(struct drv *d, struct req *r, const struct nlattr **tb, struct note *n,
		     int *changed)
{
	struct pausep p;
	int mod = 0, err;
	const int attr[3] = {ETHTOOL_A_PAUSE_AUTONEG, ETHTOOL_A_PAUSE_RX, ETHTOOL_A_PAUSE_TX};
	uint8_t *field[3] = {&p.autoneg, &p.rx, &p.tx};

	eth_get_pause(d, &p);
	for (int i = 0; i < 3; i++) {
		uint8_t v;
		*field[i] = !!*field[i];
		if (!tb[attr[i]])
			continue;
		v = !!DATA(tb[attr[i]])[0]; /* ethnl_update_bool32 */
		if (v != *field[i]) {
			*field[i] = v;
			mod = 1;
		}
	}
	if (!mod) {
		note(n, "unchanged");
		ack(r);
		return 0;
	}
	err = eth_set_pause(d, &p, n);
	*changed = 1; /* hns3 keeps what it recorded even when it refuses */
	if (err < 0) {
		answer_error(r, err, NULL, NULL);
		return err;
	}
	ack(r);
	return 0;
}

/* ---- PRIVFLAGS ---------------------------------------------------------------- */

static int privflags_get(struct drv *d, struct req *r, struct mb *m, struct note *n)
{
	const struct ethmodel *em = ethmodel_of(d);
	uint32_t val = eth_flags(d), all, nbits = (uint32_t)em->nflags;
	size_t at, bits;

	if (!em->flags) {
		answer_error(r, -EOPNOTSUPP, NULL, NULL);
		return -EOPNOTSUPP;
	}
	all = nbits >= 32 ? ~0u : (1u << nbits) - 1;
	val &= all;
	reply_start(m, r, ETHTOOL_MSG_PRIVFLAGS_GET_REPLY);
	at = nest(m, ETHTOOL_A_PRIVFLAGS_FLAGS | NLA_F_NESTED);
	put_u32(m, ETHTOOL_A_BITSET_SIZE, nbits);
	if (r->flags & ETHTOOL_FLAG_COMPACT_BITSETS) {
		put(m, ETHTOOL_A_BITSET_VALUE, &val, 4);
		put(m, ETHTOOL_A_BITSET_MASK, &all, 4);
	} else {
		bits = nest(m, ETHTOOL_A_BITSET_BITS | NLA_F_NESTED);
		for (uint32_t i = 0; i < nbits; i++) {
			size_t bit = nest(m, ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
			put_u32(m, ETHTOOL_A_BITSET_BIT_INDEX, i);
			put(m, ETHTOOL_A_BITSET_BIT_NAME, em->flags[i], strlen(em->flags[i]) + 1);
			if (val & (1u << i))
				put(m, ETHTOOL_A_BITSET_BIT_VALUE, NULL, 0);
			nest_end(m, bit);
		}
		nest_end(m, bits);
	}
	nest_end(m, at);
	note(n, "flags=0x%x", val);
	reply_send(m, r);
	return 0;
}

/* The bitset nest's attributes (bitset_policy): -1 when malformed. */
static int bitset_attrs(const struct nlattr *nest, const struct nlattr **tb)
{
	uint32_t size;

	if (parse_strict(DATA(nest), DLEN(nest), tb, ETHTOOL_A_BITSET_MASK, 0) < 0)
		return -1;
	if (tb[ETHTOOL_A_BITSET_NOMASK] && DLEN(tb[ETHTOOL_A_BITSET_NOMASK]) != 0)
		return -1;
	if (tb[ETHTOOL_A_BITSET_SIZE] &&
	    (u32_attr(tb[ETHTOOL_A_BITSET_SIZE], &size) < 0 || size > X_MAX_BITSET))
		return -1;
	/* ethnl_bitset_is_compact, which privflags.c runs before looking at the device */
	if (tb[ETHTOOL_A_BITSET_BITS])
		return tb[ETHTOOL_A_BITSET_VALUE] || tb[ETHTOOL_A_BITSET_MASK] ? -1 : 0;
	return tb[ETHTOOL_A_BITSET_SIZE] && tb[ETHTOOL_A_BITSET_VALUE] ? 0 : -1;
}

/* A refusal of ethnl_update_bitset32: errno, message, the attribute it names. */
struct refusal {
	int err;
	const char *msg;
	const void *attr;
};

static int refuse(struct refusal *f, int err, const char *msg, const void *attr)
{
	f->err = err;
	f->msg = msg;
	f->attr = attr;
	return err;
}

/* ethnl_parse_bit */
static int parse_bit(const struct nlattr *bit, uint32_t nbits, int no_mask,
		     const char *const *names, uint32_t *idx, int *val, struct refusal *f)
{
	const struct nlattr *tb[ETHTOOL_A_BITSET_BIT_VALUE + 1];
	const struct nlattr *name;

	if (parse_strict(DATA(bit), DLEN(bit), tb, ETHTOOL_A_BITSET_BIT_VALUE, 0) < 0 ||
	    (tb[ETHTOOL_A_BITSET_BIT_INDEX] && DLEN(tb[ETHTOOL_A_BITSET_BIT_INDEX]) != 4) ||
	    (tb[ETHTOOL_A_BITSET_BIT_VALUE] && DLEN(tb[ETHTOOL_A_BITSET_BIT_VALUE]) != 0) ||
	    (tb[ETHTOOL_A_BITSET_BIT_NAME] &&
	     (DLEN(tb[ETHTOOL_A_BITSET_BIT_NAME]) < 1 ||
	      !memchr(DATA(tb[ETHTOOL_A_BITSET_BIT_NAME]), 0, DLEN(tb[ETHTOOL_A_BITSET_BIT_NAME])))))
		return refuse(f, -EINVAL, NULL, bit); /* the nested policy's refusal */
	name = tb[ETHTOOL_A_BITSET_BIT_NAME];
	if (tb[ETHTOOL_A_BITSET_BIT_INDEX]) {
		memcpy(idx, DATA(tb[ETHTOOL_A_BITSET_BIT_INDEX]), 4);
		if (*idx >= nbits)
			return refuse(f, -EOPNOTSUPP, "bit index too high",
				      tb[ETHTOOL_A_BITSET_BIT_INDEX]);
		if (name && names &&
		    strncmp((const char *)DATA(name), names[*idx], (size_t)DLEN(name)))
			return refuse(f, -EINVAL, "bit index and name mismatch", bit);
	} else if (name) {
		const char *s = (const char *)DATA(name);
		uint32_t i;
		for (i = 0; names && i < nbits; i++)
			if (strncmp(names[i], s, 32) == 0 && strlen(s) <= 32)
				break;
		if (!names || i == nbits)
			return refuse(f, -EOPNOTSUPP, "bit name not found", name);
		*idx = i;
	} else {
		return refuse(f, -EINVAL, "neither bit index nor name specified", bit);
	}
	*val = no_mask || tb[ETHTOOL_A_BITSET_BIT_VALUE];
	return 0;
}

/* ethnl_update_bitset32 on a bitmap of nbits (at most 32) bits */
static int update_bitset(uint32_t *map, uint32_t nbits, const struct nlattr *nest,
			 const struct nlattr **tb, const char *const *names, int *mod,
			 struct refusal *f)
{
	int no_mask = tb[ETHTOOL_A_BITSET_NOMASK] != NULL;
	uint32_t all = nbits >= 32 ? ~0u : (1u << nbits) - 1;

	if (tb[ETHTOOL_A_BITSET_BITS]) {
		const struct nlattr *a;
		uint32_t orig = *map;
		int rem;
		if (no_mask)
			*map = 0;
		FOR_NESTED(a, tb[ETHTOOL_A_BITSET_BITS], rem) {
			uint32_t idx = 0;
			int val = 0, err;
			if (TYPE(a) != ETHTOOL_A_BITSET_BITS_BIT)
				return refuse(f, -EINVAL,
					      "only ETHTOOL_A_BITSET_BITS_BIT allowed in "
					      "ETHTOOL_A_BITSET_BITS",
					      a);
			if ((err = parse_bit(a, nbits, no_mask, names, &idx, &val, f)) < 0)
				return err;
			if (val != (int)((orig >> idx) & 1)) {
				if (val)
					*map |= 1u << idx;
				else
					*map &= ~(1u << idx);
				*mod = 1;
			}
		}
		return 0;
	}
	/* compact: ethnl_compact_sanity_checks, then ethnl_bitmap32_update */
	{
		const struct nlattr *value = tb[ETHTOOL_A_BITSET_VALUE], *mask = tb[ETHTOOL_A_BITSET_MASK];
		uint32_t size, words, v = 0, k = 0, change;
		memcpy(&size, DATA(tb[ETHTOOL_A_BITSET_SIZE]), 4);
		words = (size + 31) / 32;
		if (no_mask && mask)
			return refuse(f, -EINVAL, "mask not allowed in list bitset", mask);
		if (!no_mask && !mask)
			return refuse(f, -EINVAL, "missing mask in compact nonlist bitset", nest);
		if ((uint32_t)DLEN(value) != words * 4)
			return refuse(f, -EINVAL, "bitset value length does not match size", value);
		if (mask && (uint32_t)DLEN(mask) != words * 4)
			return refuse(f, -EINVAL, "bitset mask length does not match size", mask);
		if (size > nbits) {
			const struct nlattr *test = no_mask ? value : mask;
			const unsigned char *b = DATA(test);
			for (uint32_t bit = nbits; bit < size; bit++)
				if ((b[bit / 8] >> (bit % 8)) & 1)
					return refuse(f, -EINVAL,
						      "cannot modify bits past kernel bitset size", test);
		}
		if (words)
			memcpy(&v, DATA(value), 4);
		if (mask && words)
			memcpy(&k, DATA(mask), 4);
		change = size < nbits ? size : nbits;
		for (uint32_t bit = 0; bit < change; bit++) {
			uint32_t b = 1u << bit;
			if (!no_mask && !(k & b))
				continue;
			if ((*map & b) != (v & b)) {
				*map = (*map & ~b) | (v & b);
				*mod = 1;
			}
		}
		if (no_mask && change < nbits && (*map & all & ~((change >= 32 ? ~0u : (1u << change) - 1)))) {
			*map &= change >= 32 ? ~0u : (1u << change) - 1;
			*mod = 1;
		}
	}
	return 0;
}

static int privflags_set(struct drv *d, struct req *r, const struct nlattr *flags_attr,
			 const struct nlattr **btb, struct note *n, int *changed)
{
	const struct ethmodel *em = ethmodel_of(d);
	uint32_t map = eth_flags(d);
	struct refusal f = {0, NULL, NULL};
	int mod = 0, err;
	int compact = btb[ETHTOOL_A_BITSET_BITS] == NULL;

	if (!em->flags) {
		answer_error(r, -EOPNOTSUPP, NULL, NULL);
		return -EOPNOTSUPP;
	}
	err = update_bitset(&map, (uint32_t)em->nflags, flags_attr, btb,
			    compact ? NULL : em->flags, &mod, &f);
	if (err < 0) {
		note(n, "bitset.refused=%d", err);
		answer_error(r, err, f.msg, f.attr);
		return err;
	}
	if (!mod) {
		note(n, "unchanged");
		ack(r);
		return 0;
	}
	err = eth_set_flags(d, map, n);
	*changed = 1; /* a refusal may keep part of it (ice) */
	if (err < 0) {
		answer_error(r, err, NULL, NULL);
		return err;
	}
	ack(r);
	return 0;
}

/* ---- the request path ----------------------------------------------------------- */

static const char *cmd_name(int cmd)
{
	switch (cmd) {
	case ETHTOOL_MSG_PAUSE_GET:
		return "PAUSE_GET";
	case ETHTOOL_MSG_PAUSE_SET:
		return "PAUSE_SET";
	case ETHTOOL_MSG_PRIVFLAGS_GET:
		return "PRIVFLAGS_GET";
	default:
		return "PRIVFLAGS_SET";
	}
}

int eth_intercept(int fd, const void *buf, size_t len, const struct sockaddr *to)
{
	const struct nlmsghdr *h = buf;
	const struct genlmsghdr *g;
	const struct nlattr *tb[X_PAUSE_STATS_SRC + 1], *btb[ETHTOOL_A_BITSET_MASK + 1];
	static struct mb m; /* under mu */
	static struct note lg; /* under mu */
	struct sockaddr_nl self;
	socklen_t sl = sizeof self;
	struct req r;
	struct drv *d;
	int cmd, set, max, err = 0, changed = 0;
	unsigned reject = 0;
	uint32_t allowed = FLAGS_BASIC;

	if (!buf || len < NLMSG_HDRLEN + GENL_HDRLEN || h->nlmsg_len > len ||
	    NLMSG_ALIGN(h->nlmsg_len) < len || h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN ||
	    h->nlmsg_type <= GENL_ID_CTRL || h->nlmsg_type == RTM_GETDCB ||
	    h->nlmsg_type == RTM_SETDCB || !(h->nlmsg_flags & NLM_F_REQUEST) ||
	    (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP || resolving)
		return 0;
	if (to && (to->sa_family != AF_NETLINK || ((const struct sockaddr_nl *)to)->nl_pid != 0))
		return 0;
	g = NLMSG_DATA(h);
	cmd = g->cmd;
	if (cmd != ETHTOOL_MSG_PAUSE_GET && cmd != ETHTOOL_MSG_PAUSE_SET &&
	    cmd != ETHTOOL_MSG_PRIVFLAGS_GET && cmd != ETHTOOL_MSG_PRIVFLAGS_SET)
		return 0;
	if (sock_protocol(fd) != NETLINK_GENERIC)
		return 0;
	r.family = family_id();
	if (!r.family || h->nlmsg_type != r.family)
		return 0;
	set = cmd == ETHTOOL_MSG_PAUSE_SET || cmd == ETHTOOL_MSG_PRIVFLAGS_SET;
	if (set && !can_net_admin())
		return 0; /* GENL_UNS_ADMIN_PERM: the kernel's EPERM */
	/* the command's policy */
	switch (cmd) {
	case ETHTOOL_MSG_PAUSE_GET:
		max = X_PAUSE_STATS_SRC;
		reject = 1u << ETHTOOL_A_PAUSE_AUTONEG | 1u << ETHTOOL_A_PAUSE_RX |
			 1u << ETHTOOL_A_PAUSE_TX | 1u << ETHTOOL_A_PAUSE_STATS;
		allowed |= X_FLAG_STATS;
		break;
	case ETHTOOL_MSG_PAUSE_SET:
		max = ETHTOOL_A_PAUSE_TX;
		break;
	case ETHTOOL_MSG_PRIVFLAGS_GET:
		max = ETHTOOL_A_PRIVFLAGS_HEADER;
		break;
	default:
		max = ETHTOOL_A_PRIVFLAGS_FLAGS;
	}
	if (parse_strict((const char *)g + GENL_HDRLEN,
			 (int)h->nlmsg_len - (int)(NLMSG_HDRLEN + GENL_HDRLEN), tb, max, reject) < 0)
		return 0;
	if (cmd == ETHTOOL_MSG_PAUSE_GET && tb[X_PAUSE_STATS_SRC]) {
		uint32_t src;
		if (u32_attr(tb[X_PAUSE_STATS_SRC], &src) < 0 || src > X_SRC_PMAC)
			return 0;
	}
	if (cmd == ETHTOOL_MSG_PAUSE_SET)
		for (int a = ETHTOOL_A_PAUSE_AUTONEG; a <= ETHTOOL_A_PAUSE_TX; a++)
			if (tb[a] && DLEN(tb[a]) != 1)
				return 0;
	if (cmd == ETHTOOL_MSG_PRIVFLAGS_SET &&
	    (!tb[ETHTOOL_A_PRIVFLAGS_FLAGS] || bitset_attrs(tb[ETHTOOL_A_PRIVFLAGS_FLAGS], btb) < 0))
		return 0; /* answered by the kernel before it looks at the device */
	r.fd = fd;
	r.h = h;
	if (header(tb[1], allowed, &r) < 0 || !emulated(r.ifname))
		return 0;
	if (getsockname(fd, (struct sockaddr *)&self, &sl) < 0)
		self.nl_pid = 0;
	r.portid = self.nl_pid;

	pthread_mutex_lock(&mu);
	d = nic_get(r.ifname);
	if (!d || (!eth_owns(d) && (cmd != ETHTOOL_MSG_PAUSE_GET && cmd != ETHTOOL_MSG_PAUSE_SET))) {
		if (d)
			nic_put(d, 0);
		pthread_mutex_unlock(&mu);
		return 0; /* the generic driver's private flags are the veth's */
	}
	lg.s[0] = '\0';
	switch (cmd) {
	case ETHTOOL_MSG_PAUSE_GET:
		err = pause_get(d, &r, tb, &m, &lg);
		break;
	case ETHTOOL_MSG_PAUSE_SET:
		err = pause_set(d, &r, tb, &lg, &changed);
		break;
	case ETHTOOL_MSG_PRIVFLAGS_GET:
		err = privflags_get(d, &r, &m, &lg);
		break;
	default:
		err = privflags_set(d, &r, tb[ETHTOOL_A_PRIVFLAGS_FLAGS], btb, &lg, &changed);
	}
	if (set || err || env_on("LOSSLESS_DCBDRV_LOG_GETS")) {
		char res[32] = "ok";
		if (err)
			snprintf(res, sizeof res, "err=%d", err);
		logline(r.ifname, cmd_name(cmd), "%s %s", res, lg.s);
	}
	if (changed) {
		if (!err)
			d->sets++;
		model_sync(d);
	}
	nic_put(d, changed);
	pthread_mutex_unlock(&mu);
	return 1;
}
