/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the driver itself, one
 * function per dcbnl op group, answering as net/dcb/dcbnl.c would for a
 * driver with the CEE and IEEE 802.1Qaz dcbnl ops; run() takes one command.
 */
#include "dcbdrv.h"

/* ---- the driver: one function per dcbnl op group ------------------------ */

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

/* Appends "key=value" to the log details. */
static void det(char *buf, size_t sz, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 2 >= sz)
		return;
	if (n)
		buf[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(buf + n, sz - n, fmt, ap);
	va_end(ap);
}

static void det8(char *buf, size_t sz, const char *key, const uint8_t *v)
{
	det(buf, sz, "%s=%u,%u,%u,%u,%u,%u,%u,%u", key, v[0], v[1], v[2], v[3], v[4], v[5], v[6],
	    v[7]);
}

static int app_find(const struct drv *d, uint8_t sel, uint16_t proto, int prio)
{
	for (int i = 0; i < d->n_app; i++)
		if (d->app[i].selector == sel && d->app[i].protocol == proto &&
		    (prio < 0 || d->app[i].priority == prio))
			return i;
	return -1;
}

static void app_del(struct drv *d, int i)
{
	memmove(&d->app[i], &d->app[i + 1], sizeof d->app[0] * (d->n_app - i - 1));
	d->n_app--;
}

/* ieee_attrs_app type of an APP entry, as dcbnl_app_attr_type_get(). */
static int app_attr_type(uint8_t sel)
{
	if (sel >= IEEE_8021QAZ_APP_SEL_ETHERTYPE && sel <= X_SEL_DSCP)
		return X_APP_IEEE;
	if (sel == X_SEL_PCP)
		return X_APP_DCB;
	return 0;
}

static int app_valid(int type, uint8_t sel)
{
	if (type == X_APP_IEEE)
		return sel >= IEEE_8021QAZ_APP_SEL_ETHERTYPE && sel <= X_SEL_DSCP;
	if (type == X_APP_DCB)
		return sel == X_SEL_PCP;
	return 0;
}

static void pg_get(struct drv *d, int rx, const struct nlattr *req, struct mb *r)
{
	const struct nlattr *tb[DCB_PG_ATTR_MAX + 1], *ptb[DCB_TC_ATTR_PARAM_MAX + 1];
	const struct pg *p = &d->pg[rx];
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

static void pg_set(struct drv *d, int rx, const struct nlattr *req, char *lg, size_t lsz)
{
	const struct nlattr *tb[DCB_PG_ATTR_MAX + 1], *ptb[DCB_TC_ATTR_PARAM_MAX + 1];
	struct pg *p = &d->pg[rx];
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
	det8(lg, lsz, "tc_pgid", p->pgid);
	det(lg, lsz, "tc_up_map=0x%02x,0x%02x,0x%02x,0x%02x,0x%02x,0x%02x,0x%02x,0x%02x",
	    p->up_map[0], p->up_map[1], p->up_map[2], p->up_map[3], p->up_map[4], p->up_map[5],
	    p->up_map[6], p->up_map[7]);
	det8(lg, lsz, "tc_strict", p->strict);
	det8(lg, lsz, "tc_bw_pct", p->bw_pct);
	det8(lg, lsz, "pg_bw_pct", p->pg_bw);
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

static void ieee_fill(struct drv *d, struct mb *r)
{
	size_t ieee, apps;
	struct ieee_pfc pfc = d->pfc;

	ieee = nest(r, DCB_ATTR_IEEE);
	put(r, X_IEEE_ETS, &d->ets, sizeof d->ets);
	read_counters(d, &pfc);
	put(r, X_IEEE_PFC, &pfc, sizeof pfc);
	if (d->has_buffer)
		put(r, X_DCB_BUFFER, &d->buf, sizeof d->buf);
	apps = nest(r, X_IEEE_APP_TABLE);
	for (int i = 0; i < d->n_app; i++) {
		struct dcb_app a = {.selector = d->app[i].selector,
				    .priority = d->app[i].priority,
				    .protocol = d->app[i].protocol};
		put(r, app_attr_type(a.selector), &a, sizeof a);
	}
	nest_end(r, apps);
	apps = nest(r, X_DCB_APP_TRUST_TABLE);
	for (int i = 0; i < d->n_trust; i++)
		put_u8(r, app_attr_type(d->trust[i]), d->trust[i]);
	nest_end(r, apps);
	nest_end(r, ieee);
	put_u8(r, DCB_ATTR_DCBX, d->dcbx);
}

/* dcbnl_ieee_set / dcbnl_ieee_del; returns the status the reply carries. */
static int ieee_setdel(struct drv *d, int del, const struct nlattr *req, char *lg, size_t lsz)
{
	const struct nlattr *tb[X_IEEE_MAX + 1], *a;
	int rem;

	if (parse(DATA(req), DLEN(req), tb, X_IEEE_MAX) < 0)
		return -EINVAL;
	if (!del && tb[X_IEEE_ETS]) {
		if (DLEN(tb[X_IEEE_ETS]) < (int)sizeof(struct ieee_ets))
			return -ERANGE;
		for (int i = 0; i < 8; i++)
			if (DATA(tb[X_IEEE_ETS])[offsetof(struct ieee_ets, prio_tc) + i] >= 8)
				return -EINVAL;
		memcpy(&d->ets, DATA(tb[X_IEEE_ETS]), sizeof d->ets);
		d->ets.ets_cap = 8; /* the driver's capability, not settable */
		det(lg, lsz, "ets.willing=%u", d->ets.willing);
		det8(lg, lsz, "ets.tc_tsa", d->ets.tc_tsa);
		det8(lg, lsz, "ets.tc_tx_bw", d->ets.tc_tx_bw);
		det8(lg, lsz, "ets.prio_tc", d->ets.prio_tc);
		det8(lg, lsz, "ets.tc_reco_tsa", d->ets.tc_reco_tsa);
		det8(lg, lsz, "ets.tc_reco_bw", d->ets.tc_reco_bw);
		det8(lg, lsz, "ets.reco_prio_tc", d->ets.reco_prio_tc);
	}
	if (!del && tb[X_IEEE_PFC]) {
		struct ieee_pfc p;
		if (DLEN(tb[X_IEEE_PFC]) < (int)sizeof p)
			return -ERANGE;
		memcpy(&p, DATA(tb[X_IEEE_PFC]), sizeof p);
		d->pfc.pfc_en = p.pfc_en;
		d->pfc.mbc = p.mbc;
		d->pfc.delay = p.delay;
		det(lg, lsz, "pfc.en=0x%02x pfc.mbc=%u pfc.delay=%u", p.pfc_en, p.mbc, p.delay);
	}
	if (!del && tb[X_DCB_BUFFER] && d->has_buffer) {
		struct xbuffer b;
		uint64_t sum = 0;
		if (DLEN(tb[X_DCB_BUFFER]) < (int)sizeof b)
			return -ERANGE;
		memcpy(&b, DATA(tb[X_DCB_BUFFER]), sizeof b);
		for (int i = 0; i < 8; i++) {
			if (b.prio2buffer[i] >= 8)
				return -EINVAL;
			sum += b.buffer_size[i];
		}
		if (d->buf.total_size && sum > d->buf.total_size) {
			det(lg, lsz, "buffer.refused=sum_%llu_over_total_%u", (unsigned long long)sum,
			    d->buf.total_size);
			return -EINVAL;
		}
		memcpy(d->buf.prio2buffer, b.prio2buffer, 8);
		memcpy(d->buf.buffer_size, b.buffer_size, sizeof b.buffer_size);
		det8(lg, lsz, "buffer.prio2buffer", b.prio2buffer);
		det(lg, lsz, "buffer.size=%u,%u,%u,%u,%u,%u,%u,%u", b.buffer_size[0],
		    b.buffer_size[1], b.buffer_size[2], b.buffer_size[3], b.buffer_size[4],
		    b.buffer_size[5], b.buffer_size[6], b.buffer_size[7]);
	} else if (!del && tb[X_DCB_BUFFER]) {
		det(lg, lsz, "buffer.ignored=no_buffer_ops");
	}
	if (tb[X_IEEE_APP_TABLE]) {
		FOR_NESTED(a, tb[X_IEEE_APP_TABLE], rem) {
			struct dcb_app app;
			int i;
			if (TYPE(a) != X_APP_IEEE && TYPE(a) != X_APP_DCB)
				continue;
			if (DLEN(a) < (int)sizeof app)
				return -ERANGE;
			memcpy(&app, DATA(a), sizeof app);
			if (!app_valid(TYPE(a), app.selector))
				return -EINVAL;
			i = app_find(d, app.selector, app.protocol, app.priority);
			if (del) {
				if (i < 0)
					return -ENOENT;
				app_del(d, i);
			} else {
				if (i >= 0)
					return -EEXIST;
				if (d->n_app == MAXAPP)
					return -ENOMEM;
				d->app[d->n_app++] = (struct app){app.selector, app.priority,
								  app.protocol, 0};
			}
			det(lg, lsz, "app%s=%u,%u,%u", del ? "-" : "+", app.selector, app.priority,
			    app.protocol);
		}
	}
	if (!del && tb[X_DCB_APP_TRUST_TABLE]) {
		uint8_t sel[256];
		int n = 0;
		FOR_NESTED(a, tb[X_DCB_APP_TRUST_TABLE], rem) {
			if (!app_attr_type(DATA(a)[0]) || DLEN(a) != 1 || n >= 256 ||
			    TYPE(a) != app_attr_type(DATA(a)[0]))
				return -EINVAL;
			for (int i = 0; i < n; i++)
				if (sel[i] == DATA(a)[0])
					return -EINVAL;
			sel[n++] = DATA(a)[0];
		}
		memcpy(d->trust, sel, n);
		d->n_trust = n;
		{
			char t[1024] = "";
			size_t tl = 0;
			for (int i = 0; i < n && tl + 5 < sizeof t; i++)
				tl += (size_t)snprintf(t + tl, sizeof t - tl, "%s%u", i ? "," : "", sel[i]);
			det(lg, lsz, "trust=%s", t);
		}
	}
	return 0;
}

/*
 * Runs one dcbnl command on the emulated driver: fills `r` with the reply's
 * attributes and returns 0, or returns -errno for an NLMSG_ERROR. `status`
 * gets the u8 status of set commands (for the log).
 */
int run(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	char *lg, size_t lsz)
{
	const struct nlattr *sub[64];
	uint8_t v;

	*status = -1;
	switch (cmd) {
	case DCB_CMD_GSTATE:
		put_u8(r, DCB_ATTR_STATE, d->dcb_state);
		return 0;
	case DCB_CMD_SSTATE:
		if (!u8_of(tb[DCB_ATTR_STATE], &v))
			return -EINVAL;
		d->dcb_state = v ? 1 : 0;
		det(lg, lsz, "state=%u", d->dcb_state);
		put_u8(r, DCB_ATTR_STATE, (uint8_t)(*status = 0));
		return 0;
	case DCB_CMD_PFC_GCFG: {
		int all;
		if (!tb[DCB_ATTR_PFC_CFG])
			return -EINVAL;
		parse(DATA(tb[DCB_ATTR_PFC_CFG]), DLEN(tb[DCB_ATTR_PFC_CFG]), sub, DCB_PFC_UP_ATTR_MAX);
		all = sub[DCB_PFC_UP_ATTR_ALL] != NULL;
		size_t n = nest(r, DCB_ATTR_PFC_CFG);
		for (int i = DCB_PFC_UP_ATTR_0; i <= DCB_PFC_UP_ATTR_7; i++)
			if (all || sub[i])
				put_u8(r, i, d->pfc_up[i - DCB_PFC_UP_ATTR_0]);
		nest_end(r, n);
		return 0;
	}
	case DCB_CMD_PFC_SCFG:
		if (!tb[DCB_ATTR_PFC_CFG])
			return -EINVAL;
		parse(DATA(tb[DCB_ATTR_PFC_CFG]), DLEN(tb[DCB_ATTR_PFC_CFG]), sub, DCB_PFC_UP_ATTR_MAX);
		for (int i = DCB_PFC_UP_ATTR_0; i <= DCB_PFC_UP_ATTR_7; i++)
			if (u8_of(sub[i], &v))
				d->pfc_up[i - DCB_PFC_UP_ATTR_0] = v ? 1 : 0;
		det8(lg, lsz, "pfc_up", d->pfc_up);
		put_u8(r, DCB_ATTR_PFC_CFG, (uint8_t)(*status = 0));
		return 0;
	case DCB_CMD_PFC_GSTATE:
		put_u8(r, DCB_ATTR_PFC_STATE, d->pfc_state);
		return 0;
	case DCB_CMD_PFC_SSTATE:
		if (!u8_of(tb[DCB_ATTR_PFC_STATE], &v))
			return -EINVAL;
		d->pfc_state = v ? 1 : 0;
		det(lg, lsz, "pfc_state=%u", d->pfc_state);
		put_u8(r, DCB_ATTR_PFC_STATE, (uint8_t)(*status = 0));
		return 0;
	case DCB_CMD_PGTX_GCFG:
	case DCB_CMD_PGRX_GCFG:
		if (!tb[DCB_ATTR_PG_CFG])
			return -EINVAL;
		pg_get(d, cmd == DCB_CMD_PGRX_GCFG, tb[DCB_ATTR_PG_CFG], r);
		return 0;
	case DCB_CMD_PGTX_SCFG:
	case DCB_CMD_PGRX_SCFG:
		if (!tb[DCB_ATTR_PG_CFG])
			return -EINVAL;
		pg_set(d, cmd == DCB_CMD_PGRX_SCFG, tb[DCB_ATTR_PG_CFG], lg, lsz);
		put_u8(r, DCB_ATTR_PG_CFG, (uint8_t)(*status = 0));
		return 0;
	case DCB_CMD_SET_ALL:
		if (!tb[DCB_ATTR_SET_ALL])
			return -EINVAL;
		/* ixgbe's answers: 2 = changed without a link reset, 1 = nothing to do */
		*status = d->changed ? 2 : 1;
		d->changed = 0;
		d->set_all++;
		det(lg, lsz, "dcb_state=%u pfc_state=%u", d->dcb_state, d->pfc_state);
		det8(lg, lsz, "pfc_up", d->pfc_up);
		put_u8(r, DCB_ATTR_SET_ALL, (uint8_t)*status);
		return 0;
	case DCB_CMD_GPERM_HWADDR: {
		uint8_t mac[32];
		perm_hwaddr(d->ifname, mac);
		put(r, DCB_ATTR_PERM_HWADDR, mac, sizeof mac);
		return 0;
	}
	case DCB_CMD_GCAP: {
		static const uint8_t caps[] = {
			[DCB_CAP_ATTR_PG] = 1, [DCB_CAP_ATTR_PFC] = 1, [DCB_CAP_ATTR_UP2TC] = 1,
			[DCB_CAP_ATTR_PG_TCS] = 0x80, [DCB_CAP_ATTR_PFC_TCS] = 0x80,
			[DCB_CAP_ATTR_GSP] = 1, [DCB_CAP_ATTR_BCN] = 0, [DCB_CAP_ATTR_DCBX] = 0,
		};
		int all;
		if (!tb[DCB_ATTR_CAP])
			return -EINVAL;
		parse(DATA(tb[DCB_ATTR_CAP]), DLEN(tb[DCB_ATTR_CAP]), sub, DCB_CAP_ATTR_MAX);
		all = sub[DCB_CAP_ATTR_ALL] != NULL;
		size_t n = nest(r, DCB_ATTR_CAP);
		for (int i = DCB_CAP_ATTR_ALL + 1; i <= DCB_CAP_ATTR_MAX; i++)
			if (all || sub[i])
				put_u8(r, i, i == DCB_CAP_ATTR_DCBX
						     ? (DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_CEE |
							DCB_CAP_DCBX_VER_IEEE)
						     : caps[i]);
		nest_end(r, n);
		return 0;
	}
	case DCB_CMD_GNUMTCS: {
		int all;
		if (!tb[DCB_ATTR_NUMTCS])
			return -EINVAL;
		parse(DATA(tb[DCB_ATTR_NUMTCS]), DLEN(tb[DCB_ATTR_NUMTCS]), sub, DCB_NUMTCS_ATTR_MAX);
		all = sub[DCB_NUMTCS_ATTR_ALL] != NULL;
		size_t n = nest(r, DCB_ATTR_NUMTCS);
		if (all || sub[DCB_NUMTCS_ATTR_PG])
			put_u8(r, DCB_NUMTCS_ATTR_PG, d->numtcs_pg);
		if (all || sub[DCB_NUMTCS_ATTR_PFC])
			put_u8(r, DCB_NUMTCS_ATTR_PFC, d->numtcs_pfc);
		nest_end(r, n);
		return 0;
	}
	case DCB_CMD_SNUMTCS:
		if (!tb[DCB_ATTR_NUMTCS])
			return -EINVAL;
		parse(DATA(tb[DCB_ATTR_NUMTCS]), DLEN(tb[DCB_ATTR_NUMTCS]), sub, DCB_NUMTCS_ATTR_MAX);
		*status = 0;
		if (u8_of(sub[DCB_NUMTCS_ATTR_PG], &v)) {
			if (v >= 1 && v <= 8)
				d->numtcs_pg = v;
			else
				*status = -EINVAL;
		}
		if (u8_of(sub[DCB_NUMTCS_ATTR_PFC], &v)) {
			if (v >= 1 && v <= 8)
				d->numtcs_pfc = v;
			else
				*status = -EINVAL;
		}
		det(lg, lsz, "pg=%u pfc=%u", d->numtcs_pg, d->numtcs_pfc);
		put_u8(r, DCB_ATTR_NUMTCS, (uint8_t)*status);
		return 0;
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
			size_t n = nest(r, DCB_ATTR_APP);
			put_u8(r, DCB_APP_ATTR_IDTYPE, idtype);
			put_u16(r, DCB_APP_ATTR_ID, id);
			put_u8(r, DCB_APP_ATTR_PRIORITY, i >= 0 ? d->app[i].priority : 0);
			nest_end(r, n);
			return 0;
		}
		if (!u8_of(sub[DCB_APP_ATTR_PRIORITY], &up))
			return -EINVAL;
		/* dcb_setapp(): replace, delete on priority 0, or add */
		*status = 0;
		if (i >= 0 && up)
			d->app[i].priority = up;
		else if (i >= 0)
			app_del(d, i);
		else if (up && d->n_app < MAXAPP)
			d->app[d->n_app++] = (struct app){idtype, up, id, 1};
		else if (up)
			*status = -ENOMEM;
		det(lg, lsz, "idtype=%u id=0x%04x priority_map=0x%02x", idtype, id, up);
		put_u8(r, DCB_ATTR_APP, (uint8_t)*status);
		return 0;
	}
	case DCB_CMD_IEEE_GET:
		ieee_fill(d, r);
		return 0;
	case DCB_CMD_IEEE_SET:
	case DCB_CMD_IEEE_DEL:
		if (!tb[DCB_ATTR_IEEE])
			return -EINVAL;
		*status = ieee_setdel(d, cmd == DCB_CMD_IEEE_DEL, tb[DCB_ATTR_IEEE], lg, lsz);
		put_u8(r, DCB_ATTR_IEEE, (uint8_t)*status);
		return 0;
	case DCB_CMD_GDCBX:
		put_u8(r, DCB_ATTR_DCBX, d->dcbx);
		return 0;
	case DCB_CMD_SDCBX:
		if (!u8_of(tb[DCB_ATTR_DCBX], &v))
			return -EINVAL;
		/* host-managed DCBX only: an LLD-managed or non-host mode is refused */
		if ((v & DCB_CAP_DCBX_LLD_MANAGED) || !(v & DCB_CAP_DCBX_HOST) ||
		    !(v & (DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE))) {
			*status = 1;
		} else {
			d->dcbx = v;
			*status = 0;
		}
		det(lg, lsz, "mode=0x%02x", v);
		put_u8(r, DCB_ATTR_DCBX, (uint8_t)*status);
		return 0;
	default:
		/* BCN, FEATCFG and CEE_GET: ops this driver does not have */
		return -EOPNOTSUPP;
	}
}
