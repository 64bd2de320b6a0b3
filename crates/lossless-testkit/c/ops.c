/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the dcbnl commands as
 * net/dcb/dcbnl.c answers them, run() taking one. A command whose driver op
 * the model lacks answers EOPNOTSUPP (after the attribute check dcbnl.c does
 * first, where it does one); the model's CEE hook answers the commands its
 * driver answers differently; the rest is the generic driver, one function
 * per op group. The IEEE commands are in ieee.c.
 */
#include "dcbdrv.h"

const char *const cmd_names[] = {
	"UNDEFINED", "GSTATE", "SSTATE", "PGTX_GCFG", "PGTX_SCFG", "PGRX_GCFG",
	"PGRX_SCFG", "PFC_GCFG", "PFC_SCFG", "SET_ALL", "GPERM_HWADDR", "GCAP",
	"GNUMTCS", "SNUMTCS", "PFC_GSTATE", "PFC_SSTATE", "BCN_GCFG", "BCN_SCFG",
	"GAPP", "SAPP", "IEEE_SET", "IEEE_GET", "GDCBX", "SDCBX", "GFEATCFG",
	"SFEATCFG", "CEE_GET", "IEEE_DEL",
};
const int ncmd = (int)(sizeof cmd_names / sizeof cmd_names[0]);

int reply_type(int cmd)
{
	switch (cmd) {
	case DCB_CMD_SSTATE: case DCB_CMD_PGTX_SCFG: case DCB_CMD_PGRX_SCFG:
	case DCB_CMD_PFC_SCFG: case DCB_CMD_SET_ALL: case DCB_CMD_SNUMTCS:
	case DCB_CMD_PFC_SSTATE: case DCB_CMD_BCN_SCFG: case DCB_CMD_SAPP:
	case DCB_CMD_IEEE_SET: case DCB_CMD_SDCBX: case DCB_CMD_SFEATCFG:
	case DCB_CMD_IEEE_DEL:
		return RTM_SETDCB;
	default:
		return RTM_GETDCB;
	}
}

/* A set command's reply: its status as the one attribute, cut to u8
 * (dcbnl.c's nla_put_u8(skb, DCB_ATTR_..., ret)), kept whole in *status for
 * the log; returns 0, the command's answer. */
int status_reply(struct mb *r, int attr, int *status, int value)
{
	*status = value;
	put_u8(r, attr, (uint8_t)value);
	return 0;
}

/* The PG_CFG reply for the TCs and PGs the request names, from p. */
void cee_pg_get(const struct pg *p, const struct nlattr *req, struct mb *r)
{
	const struct nlattr *tb[DCB_PG_ATTR_MAX + 1], *ptb[DCB_TC_ATTR_PARAM_MAX + 1];
	size_t outer;
	int all;

	parse(DATA(req), DLEN(req), tb, DCB_PG_ATTR_MAX);
	outer = nest(r, DCB_ATTR_PG_CFG);
	all = tb[DCB_PG_ATTR_TC_ALL] != NULL;
	for (int i = DCB_PG_ATTR_TC_0; i <= DCB_PG_ATTR_TC_7; i++) {
		const struct nlattr *sel = all ? tb[DCB_PG_ATTR_TC_ALL] : tb[i];
		int tc = i - DCB_PG_ATTR_TC_0, pall;
		size_t in;

		if (!sel)
			continue;
		parse(DATA(sel), DLEN(sel), ptb, DCB_TC_ATTR_PARAM_MAX);
		pall = ptb[DCB_TC_ATTR_PARAM_ALL] != NULL;
		in = nest(r, i);
		if (pall || ptb[DCB_TC_ATTR_PARAM_PGID])
			put_u8(r, DCB_TC_ATTR_PARAM_PGID, p->pgid[tc]);
		if (pall || ptb[DCB_TC_ATTR_PARAM_UP_MAPPING])
			put_u8(r, DCB_TC_ATTR_PARAM_UP_MAPPING, p->up_map[tc]);
		if (pall || ptb[DCB_TC_ATTR_PARAM_STRICT_PRIO])
			put_u8(r, DCB_TC_ATTR_PARAM_STRICT_PRIO, p->strict[tc]);
		if (pall || ptb[DCB_TC_ATTR_PARAM_BW_PCT])
			put_u8(r, DCB_TC_ATTR_PARAM_BW_PCT, p->bw_pct[tc]);
		nest_end(r, in);
	}
	all = tb[DCB_PG_ATTR_BW_ID_ALL] != NULL;
	for (int i = DCB_PG_ATTR_BW_ID_0; i <= DCB_PG_ATTR_BW_ID_7; i++)
		if (all || tb[i])
			put_u8(r, i, p->pg_bw[i - DCB_PG_ATTR_BW_ID_0]);
	nest_end(r, outer);
}

/* Writes a PG_CFG request into p. */
void cee_pg_set(struct pg *p, const struct nlattr *req, struct note *n)
{
	const struct nlattr *tb[DCB_PG_ATTR_MAX + 1], *ptb[DCB_TC_ATTR_PARAM_MAX + 1];
	uint8_t v;

	parse(DATA(req), DLEN(req), tb, DCB_PG_ATTR_MAX);
	for (int i = DCB_PG_ATTR_TC_0; i <= DCB_PG_ATTR_TC_7; i++) {
		int tc = i - DCB_PG_ATTR_TC_0;
		if (!tb[i] || parse(DATA(tb[i]), DLEN(tb[i]), ptb, DCB_TC_ATTR_PARAM_MAX) < 0)
			continue;
		/* like ixgbe: DCB_ATTR_VALUE_UNDEFINED leaves a field as it is */
		if (u8_of(ptb[DCB_TC_ATTR_PARAM_PGID], &v) && v != UNDEF)
			p->pgid[tc] = v;
		if (u8_of(ptb[DCB_TC_ATTR_PARAM_UP_MAPPING], &v) && v != UNDEF)
			p->up_map[tc] = v;
		if (u8_of(ptb[DCB_TC_ATTR_PARAM_STRICT_PRIO], &v) && v != UNDEF)
			p->strict[tc] = v;
		if (u8_of(ptb[DCB_TC_ATTR_PARAM_BW_PCT], &v) && v != UNDEF)
			p->bw_pct[tc] = v;
	}
	for (int i = DCB_PG_ATTR_BW_ID_0; i <= DCB_PG_ATTR_BW_ID_7; i++)
		if (u8_of(tb[i], &v))
			p->pg_bw[i - DCB_PG_ATTR_BW_ID_0] = v;
	note8(n, "tc_pgid", p->pgid);
	note(n, "tc_up_map=0x%02x,0x%02x,0x%02x,0x%02x,0x%02x,0x%02x,0x%02x,0x%02x",
	    p->up_map[0], p->up_map[1], p->up_map[2], p->up_map[3], p->up_map[4], p->up_map[5],
	    p->up_map[6], p->up_map[7]);
	note8(n, "tc_strict", p->strict);
	note8(n, "tc_bw_pct", p->bw_pct);
	note8(n, "pg_bw_pct", p->pg_bw);
}

static void perm_hwaddr(const char *ifname, uint8_t out[32])
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(out, 0xff, 32); /* no SAN MAC */
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
	if (s >= 0 && ioctl(s, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(out, ifr.ifr_hwaddr.sa_data, 6);
	if (s >= 0)
		r_close(s);
}

/* The PFC_CFG reply for the priorities the request names, from up[8]. */
void cee_pfc_get(const uint8_t *up, const struct nlattr *cfg, struct mb *r)
{
	const struct nlattr *sub[DCB_PFC_UP_ATTR_MAX + 1];
	size_t at;
	int all;

	parse(DATA(cfg), DLEN(cfg), sub, DCB_PFC_UP_ATTR_MAX);
	all = sub[DCB_PFC_UP_ATTR_ALL] != NULL;
	at = nest(r, DCB_ATTR_PFC_CFG);
	for (int i = DCB_PFC_UP_ATTR_0; i <= DCB_PFC_UP_ATTR_7; i++)
		if (all || sub[i])
			put_u8(r, i, up[i - DCB_PFC_UP_ATTR_0]);
	nest_end(r, at);
}

/* Writes a PFC_CFG request into up[8] (0 or 1 per priority). */
void cee_pfc_set(uint8_t *up, const struct nlattr *cfg, struct note *n)
{
	const struct nlattr *sub[DCB_PFC_UP_ATTR_MAX + 1];
	uint8_t v;

	parse(DATA(cfg), DLEN(cfg), sub, DCB_PFC_UP_ATTR_MAX);
	for (int i = DCB_PFC_UP_ATTR_0; i <= DCB_PFC_UP_ATTR_7; i++)
		if (u8_of(sub[i], &v))
			up[i - DCB_PFC_UP_ATTR_0] = v ? 1 : 0;
	note8(n, "pfc_up", up);
}

/* The driver op each CEE command needs, and the attribute dcbnl.c checks
 * before it (the handlers of GSTATE, PFC_GSTATE, GPERM_HWADDR and SDCBX look
 * at the op first: SDCBX without the op is EOPNOTSUPP whatever it carries). */
static const struct {
	unsigned op;
	int attr;
} need[] = {
	[DCB_CMD_GSTATE] = {OP_GETSTATE, 0},
	[DCB_CMD_SSTATE] = {OP_SETSTATE, DCB_ATTR_STATE},
	[DCB_CMD_PGTX_GCFG] = {OP_PG_GET, DCB_ATTR_PG_CFG},
	[DCB_CMD_PGRX_GCFG] = {OP_PG_GET, DCB_ATTR_PG_CFG},
	[DCB_CMD_PGTX_SCFG] = {OP_PG_SET, DCB_ATTR_PG_CFG},
	[DCB_CMD_PGRX_SCFG] = {OP_PG_SET, DCB_ATTR_PG_CFG},
	[DCB_CMD_PFC_GCFG] = {OP_PFCCFG_GET, DCB_ATTR_PFC_CFG},
	[DCB_CMD_PFC_SCFG] = {OP_PFCCFG_SET, DCB_ATTR_PFC_CFG},
	[DCB_CMD_SET_ALL] = {OP_SETALL, DCB_ATTR_SET_ALL},
	[DCB_CMD_GPERM_HWADDR] = {OP_PERMHWADDR, 0},
	[DCB_CMD_GCAP] = {OP_GETCAP, DCB_ATTR_CAP},
	[DCB_CMD_GNUMTCS] = {OP_GETNUMTCS, DCB_ATTR_NUMTCS},
	[DCB_CMD_SNUMTCS] = {OP_SETNUMTCS, DCB_ATTR_NUMTCS},
	[DCB_CMD_PFC_GSTATE] = {OP_PFCSTATE_GET, 0},
	[DCB_CMD_PFC_SSTATE] = {OP_PFCSTATE_SET, DCB_ATTR_PFC_STATE},
};

/*
 * Runs one dcbnl command on the emulated driver: fills `r` with the reply's
 * attributes and returns 0, or returns -errno for an NLMSG_ERROR. `status`
 * gets the status of set commands (for the log; the reply carries it cut to
 * u8).
 */
int run(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	struct note *n)
{
	const struct model *m = model_of(d);
	const struct nlattr *sub[64];
	uint8_t v;
	int err, ret;

	*status = -1;
	if (cmd < (int)(sizeof need / sizeof need[0]) && need[cmd].op) {
		if (need[cmd].attr && !tb[need[cmd].attr])
			return -EINVAL;
		if (!(m->ops & need[cmd].op)) {
			note(n, "op.missing=%s", m->name);
			return -EOPNOTSUPP;
		}
	}
	if (m->cee && cmd != DCB_CMD_IEEE_GET && cmd != DCB_CMD_IEEE_SET &&
	    cmd != DCB_CMD_IEEE_DEL && cmd != DCB_CMD_GDCBX && cmd != DCB_CMD_SDCBX &&
	    (err = m->cee(d, cmd, tb, r, status, n)) != CEE_DEFAULT)
		return err;
	switch (cmd) {
	case DCB_CMD_GSTATE:
		put_u8(r, DCB_ATTR_STATE, d->dcb_state);
		return 0;
	case DCB_CMD_SSTATE:
		if (!u8_of(tb[DCB_ATTR_STATE], &v))
			return -EINVAL;
		d->dcb_state = v ? 1 : 0;
		note(n, "state=%u", d->dcb_state);
		return status_reply(r, DCB_ATTR_STATE, status, 0);
	case DCB_CMD_PFC_GCFG:
		cee_pfc_get(d->pfc_up, tb[DCB_ATTR_PFC_CFG], r);
		return 0;
	case DCB_CMD_PFC_SCFG:
		cee_pfc_set(d->pfc_up, tb[DCB_ATTR_PFC_CFG], n);
		d->changed = 1;
		return status_reply(r, DCB_ATTR_PFC_CFG, status, 0);
	case DCB_CMD_PFC_GSTATE:
		put_u8(r, DCB_ATTR_PFC_STATE, d->pfc_state);
		return 0;
	case DCB_CMD_PFC_SSTATE:
		if (!u8_of(tb[DCB_ATTR_PFC_STATE], &v))
			return -EINVAL;
		d->pfc_state = v ? 1 : 0;
		d->changed = 1;
		note(n, "pfc_state=%u", d->pfc_state);
		return status_reply(r, DCB_ATTR_PFC_STATE, status, 0);
	case DCB_CMD_PGTX_GCFG:
	case DCB_CMD_PGRX_GCFG:
		cee_pg_get(&d->pg[cmd == DCB_CMD_PGRX_GCFG], tb[DCB_ATTR_PG_CFG], r);
		return 0;
	case DCB_CMD_PGTX_SCFG:
	case DCB_CMD_PGRX_SCFG:
		cee_pg_set(&d->pg[cmd == DCB_CMD_PGRX_SCFG], tb[DCB_ATTR_PG_CFG], n);
		d->changed = 1;
		return status_reply(r, DCB_ATTR_PG_CFG, status, 0);
	case DCB_CMD_SET_ALL:
		/* ixgbe's answers: 2 = changed without a link reset, 1 = nothing to do */
		ret = d->changed ? 2 : 1;
		d->changed = 0;
		note(n, "dcb_state=%u pfc_state=%u", d->dcb_state, d->pfc_state);
		note8(n, "pfc_up", d->pfc_up);
		return status_reply(r, DCB_ATTR_SET_ALL, status, ret);
	case DCB_CMD_GPERM_HWADDR: {
		uint8_t mac[32];
		perm_hwaddr(d->ifname, mac);
		put(r, DCB_ATTR_PERM_HWADDR, mac, sizeof mac);
		return 0;
	}
	case DCB_CMD_GCAP: {
		int all;
		parse(DATA(tb[DCB_ATTR_CAP]), DLEN(tb[DCB_ATTR_CAP]), sub, DCB_CAP_ATTR_MAX);
		all = sub[DCB_CAP_ATTR_ALL] != NULL;
		size_t at = nest(r, DCB_ATTR_CAP);
		for (int i = DCB_CAP_ATTR_ALL + 1; i <= DCB_CAP_ATTR_MAX; i++)
			if (all || sub[i])
				put_u8(r, i, i == DCB_CAP_ATTR_DCBX
						     ? (m->cap_dcbx ? m->cap_dcbx(d) : d->dcbx)
						     : m->caps[i]);
		nest_end(r, at);
		return 0;
	}
	case DCB_CMD_GNUMTCS: {
		int all;
		parse(DATA(tb[DCB_ATTR_NUMTCS]), DLEN(tb[DCB_ATTR_NUMTCS]), sub, DCB_NUMTCS_ATTR_MAX);
		all = sub[DCB_NUMTCS_ATTR_ALL] != NULL;
		size_t at = nest(r, DCB_ATTR_NUMTCS);
		if (all || sub[DCB_NUMTCS_ATTR_PG])
			put_u8(r, DCB_NUMTCS_ATTR_PG, d->numtcs_pg);
		if (all || sub[DCB_NUMTCS_ATTR_PFC])
			put_u8(r, DCB_NUMTCS_ATTR_PFC, d->numtcs_pfc);
		nest_end(r, at);
		return 0;
	}
	case DCB_CMD_SNUMTCS:
		parse(DATA(tb[DCB_ATTR_NUMTCS]), DLEN(tb[DCB_ATTR_NUMTCS]), sub, DCB_NUMTCS_ATTR_MAX);
		ret = 0;
		if (u8_of(sub[DCB_NUMTCS_ATTR_PG], &v)) {
			if (v >= 1 && v <= 8)
				d->numtcs_pg = v;
			else
				ret = -EINVAL;
		}
		if (u8_of(sub[DCB_NUMTCS_ATTR_PFC], &v)) {
			if (v >= 1 && v <= 8)
				d->numtcs_pfc = v;
			else
				ret = -EINVAL;
		}
		note(n, "pg=%u pfc=%u", d->numtcs_pg, d->numtcs_pfc);
		return status_reply(r, DCB_ATTR_NUMTCS, status, ret);
	case DCB_CMD_GAPP:
	case DCB_CMD_SAPP: {
		uint8_t idtype, up = 0;
		uint16_t id;
		int i;
		if (!tb[DCB_ATTR_APP])
			return -EINVAL;
		if (parse(DATA(tb[DCB_ATTR_APP]), DLEN(tb[DCB_ATTR_APP]), sub, DCB_APP_ATTR_MAX) < 0)
			return -EINVAL;
		if (!u8_of(sub[DCB_APP_ATTR_IDTYPE], &idtype) || !sub[DCB_APP_ATTR_ID] ||
		    DLEN(sub[DCB_APP_ATTR_ID]) < 2)
			return -EINVAL;
		if (idtype != DCB_APP_IDTYPE_ETHTYPE && idtype != DCB_APP_IDTYPE_PORTNUM)
			return -EINVAL;
		memcpy(&id, DATA(sub[DCB_APP_ATTR_ID]), 2);
		i = app_find(d, idtype, id, -1);
		if (cmd == DCB_CMD_GAPP) {
			size_t at = nest(r, DCB_ATTR_APP);
			put_u8(r, DCB_APP_ATTR_IDTYPE, idtype);
			put_u16(r, DCB_APP_ATTR_ID, id);
			put_u8(r, DCB_APP_ATTR_PRIORITY, i >= 0 ? d->app[i].priority : 0);
			nest_end(r, at);
			return 0;
		}
		if (!u8_of(sub[DCB_APP_ATTR_PRIORITY], &up))
			return -EINVAL;
		/* dcb_setapp(): replace, delete on priority 0, or add */
		ret = 0;
		if (i >= 0 && up)
			d->app[i].priority = up;
		else if (i >= 0)
			app_remove(d, i);
		else if (up && d->n_app < MAXAPP)
			d->app[d->n_app++] = (struct app){idtype, up, id, 1};
		else if (up)
			ret = -ENOMEM;
		note(n, "idtype=%u id=0x%04x priority_map=0x%02x", idtype, id, up);
		return status_reply(r, DCB_ATTR_APP, status, ret);
	}
	case DCB_CMD_IEEE_GET:
		ieee_fill(d, r);
		return 0;
	case DCB_CMD_IEEE_SET:
	case DCB_CMD_IEEE_DEL:
		if (!tb[DCB_ATTR_IEEE])
			return -EINVAL;
		ret = ieee_setdel(d, cmd == DCB_CMD_IEEE_DEL, tb[DCB_ATTR_IEEE], n);
		return status_reply(r, DCB_ATTR_IEEE, status, ret);
	case DCB_CMD_GDCBX:
		put_u8(r, DCB_ATTR_DCBX, d->dcbx);
		return 0;
	case DCB_CMD_SDCBX:
		if (!u8_of(tb[DCB_ATTR_DCBX], &v))
			return -EINVAL;
		note(n, "mode=0x%02x", v);
		if (m->setdcbx)
			return status_reply(r, DCB_ATTR_DCBX, status, m->setdcbx(d, v, n));
		/* the generic driver: host-managed DCBX only */
		if ((v & DCB_CAP_DCBX_LLD_MANAGED) || !(v & DCB_CAP_DCBX_HOST) ||
		    !(v & (DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE)))
			return status_reply(r, DCB_ATTR_DCBX, status, 1);
		d->dcbx = v;
		return status_reply(r, DCB_ATTR_DCBX, status, 0);
	default:
		/* BCN, FEATCFG and CEE_GET: ops no model has */
		return -EOPNOTSUPP;
	}
}
