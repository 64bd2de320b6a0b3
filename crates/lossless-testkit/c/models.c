/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the table of driver models
 * (LOSSLESS_DCBDRV_MODEL chooses one), the generic driver, and what the
 * models share: the link reset some drivers do when they reconfigure, the
 * checks and answers several drivers' ops have alike (the IEEE setters' DCBX
 * check, ETS and PFC read back as set, setdcbx), and what ice and i40e do
 * alike on their DCBX configuration (struct fwcfg): the number of traffic
 * classes a priority table uses, the firmware APP table, the software
 * defaults, the CEE ops.
 *
 * A model is a struct model (dcbdrv.h): the dcbnl ops its driver has (a
 * command whose op is missing answers EOPNOTSUPP, as net/dcb/dcbnl.c does),
 * its GCAP answers, its power-on state, and hooks for the ops whose answers
 * differ from the generic driver's. Each drv_*.c file opens with a comment
 * block citing, for every rule it models, the kernel file and function.
 *
 * The generic driver is the permissive one this library always emulated: it
 * has every CEE and IEEE op, APP trust, and DCB buffer ops when
 * LOSSLESS_DCBDRV_BUFFER says so; it accepts every APP selector, every ETS
 * (but a prio_tc of 8 or more) and every trust table.
 */
#include "dcbdrv.h"

static uint8_t generic_cap_dcbx(const struct drv *d)
{
	(void)d;
	return DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE;
}

const struct model model_generic = {
	.name = "generic",
	.ops = OP_CEE_ALL | OP_APPTRUST,
	.caps = {CAPS_PG_PFC_8TCS, [DCB_CAP_ATTR_UP2TC] = 1, [DCB_CAP_ATTR_GSP] = 1},
	.cap_dcbx = generic_cap_dcbx,
};

const struct model *const models[M_COUNT] = {
	[M_GENERIC] = &model_generic, [M_MLX5] = &model_mlx5, [M_ICE] = &model_ice,
	[M_I40E] = &model_i40e,       [M_BNXT] = &model_bnxt, [M_HNS3] = &model_hns3,
	[M_IXGBE] = &model_ixgbe,
};

const struct model *model_of(const struct drv *d)
{
	return models[d->model >= 0 && d->model < M_COUNT ? d->model : M_GENERIC];
}

int model_by_name(const char *name)
{
	for (int i = 0; i < M_COUNT; i++)
		if (strcmp(models[i]->name, name) == 0)
			return i;
	return -1;
}

/* d->ets and d->pfc as the model's ieee_getets/ieee_getpfc report them now,
 * for the state file (the generic driver's are its state). */
void model_sync(struct drv *d)
{
	const struct model *m = model_of(d);
	struct ieee_ets e;
	struct ieee_pfc p;

	memset(&e, 0, sizeof e);
	if (m->getets && m->getets(d, &e) == 0)
		d->ets = e;
	memset(&p, 0, sizeof p);
	if (m->getpfc && m->getpfc(d, &p) == 0) {
		memset(p.requests, 0, sizeof p.requests);
		memset(p.indications, 0, sizeof p.indications);
		d->pfc = p;
	}
}

/* What a driver does when it closes and reopens the netdev (ice's
 * ice_dcbnl_devreset: dev_close then dev_open, so a port that was down comes
 * up: open_always) or stops and restarts it while it runs (the others): the
 * emulated veth is set down and up with SIOCSIFFLAGS, a link flap every
 * process on the namespace sees. */
void link_reset(struct drv *d, int open_always, struct note *n)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), up;

	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", d->ifname);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		note(n, "link.reset=failed_errno_%d", errno);
		if (s >= 0)
			r_close(s);
		return;
	}
	up = (ifr.ifr_flags & IFF_UP) != 0;
	if (!up && !open_always) {
		note(n, "link.reset=none_port_down");
		r_close(s);
		return;
	}
	if (up) {
		ifr.ifr_flags &= ~IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
			note(n, "link.reset=failed_errno_%d", errno);
			r_close(s);
			return;
		}
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
		note(n, "link.reset=failed_errno_%d", errno);
		r_close(s);
		return;
	}
	r_close(s);
	d->link_resets++;
	note(n, "link.reset=%s", up ? "down_up" : "up");
}

/* ---- what several drivers' ops have alike --------------------------------- */

/* The check an IEEE setter starts with: no IEEE in the DCBX cap is EINVAL,
 * noted WHAT.refused=dcbx_not_ieee (ixgbe's and hclge's ieee_setets/setpfc,
 * ixgbe's setapp/delapp); with `lld`, LLD_MANAGED in the cap is EINVAL too,
 * noted WHAT.refused=fw_lldp_agent (ice and i40e: the firmware agent owns
 * DCBX). */
int ieee_gate(const struct drv *d, const char *what, int lld, struct note *n)
{
	if (lld && (d->dcbx & DCB_CAP_DCBX_LLD_MANAGED)) {
		note(n, "%s.refused=fw_lldp_agent", what);
		return -EINVAL;
	}
	if (!(d->dcbx & DCB_CAP_DCBX_VER_IEEE)) {
		note(n, "%s.refused=dcbx_not_ieee", what);
		return -EINVAL;
	}
	return 0;
}

/* ETS as a driver that keeps the request reads it back (bnxt's and ixgbe's
 * ieee_getets): ets_cap, then, once an ETS was set (hw.has_ets), its cbs,
 * bandwidths, TSA and prio_tc; willing and the reco fields 0. */
int ets_as_set(const struct drv *d, struct ieee_ets *e, uint8_t cap)
{
	const struct hw *h = &d->hw;

	e->ets_cap = cap;
	if (!h->has_ets)
		return 0;
	e->cbs = h->ets.cbs;
	memcpy(e->tc_tx_bw, h->ets.tc_tx_bw, 8);
	memcpy(e->tc_rx_bw, h->ets.tc_rx_bw, 8);
	memcpy(e->tc_tsa, h->ets.tc_tsa, 8);
	memcpy(e->prio_tc, h->ets.prio_tc, 8);
	return 0;
}

/* PFC likewise (bnxt's and ixgbe's ieee_getpfc): pfc_cap, then, once a PFC
 * was set (hw.has_pfc), its pfc_en, mbc and delay. */
int pfc_as_set(const struct drv *d, struct ieee_pfc *p, uint8_t cap)
{
	p->pfc_cap = cap;
	if (d->hw.has_pfc) {
		p->pfc_en = d->hw.pfc.pfc_en;
		p->mbc = d->hw.pfc.mbc;
		p->delay = d->hw.pfc.delay;
	}
	return 0;
}

/* The DCBX modes ice, i40e and ixgbe refuse, each driver's setdcbx making
 * the same check: LLD_MANAGED, CEE and IEEE together, or no HOST. */
int dcbx_unsupported(uint8_t mode)
{
	return (mode & DCB_CAP_DCBX_LLD_MANAGED) ||
	       ((mode & DCB_CAP_DCBX_VER_IEEE) && (mode & DCB_CAP_DCBX_VER_CEE)) ||
	       !(mode & DCB_CAP_DCBX_HOST);
}

/* How a setdcbx ends once the driver judged the mode: refused (`why`), noted
 * dcbx.refused=WHY, the cap as it was, 1; else the cap becomes the mode, 0
 * (ice, i40e, ixgbe, bnxt, hns3). */
uint8_t dcbx_take(struct drv *d, uint8_t mode, const char *why, struct note *n)
{
	if (why) {
		note(n, "dcbx.refused=%s", why);
		return 1;
	}
	d->dcbx = mode;
	return 0;
}

/* ---- what ice and i40e do alike on their DCBX configuration --------------- */

/* The traffic classes a priority table uses, counted from TC0 while they are
 * contiguous; 1 for a table with a gap (and at least 1): ice_dcb_get_num_tc()
 * in ice_dcb_lib.c, i40e_dcb_get_num_tc() likewise. A TC of 8 or more falls
 * out of their u8 bitmap. */
int num_tc_contig(const uint8_t *prio_tc)
{
	uint8_t used = 0;
	int n = 0, gap = 0;

	for (int i = 0; i < 8; i++)
		if (prio_tc[i] < 8)
			used |= (uint8_t)(1u << prio_tc[i]);
	for (int i = 0; i < 8; i++) {
		if (used & (1u << i)) {
			if (gap)
				return 1;
			n++;
		} else {
			gap = 1;
		}
	}
	return n ? n : 1;
}

/* The index of an entry of a firmware APP table from `from` on, or -1. */
int fwapp_find(const struct fwcfg *c, uint8_t sel, uint16_t proto, uint8_t prio, int from)
{
	for (int i = from; i < c->napp && i < FWAPPS; i++)
		if (c->app[i].sel == sel && c->app[i].proto == proto && c->app[i].prio == prio)
			return i;
	return -1;
}

/* Entry i leaves c's APP table; the entries after it are taken from `from`,
 * the applied configuration, as ice_dcbnl_delapp and i40e_dcbnl_ieee_delapp
 * both copy them. */
void fwapp_remove(struct fwcfg *c, int i, const struct fwcfg *from)
{
	c->app[i] = (struct fwapp){0, 0, 0};
	c->napp--;
	for (int j = i; j < c->napp; j++)
		c->app[j] = from->app[j + 1];
}

/* The software DCB defaults (ice_dcb_sw_dflt_cfg in ice_dcb_lib.c,
 * i40e_dcb_sw_default_config in i40e_main.c): ETS willing, TC0 ETS at 100 %,
 * the other TCs strict, every priority on TC0, the recommendation the same;
 * PFC willing, pfc_cap 8; the firmware APP table holds FCoE (ethertype
 * 0x8906) on priority 3. ets_cap stays 0 (ice sets it). */
void fwcfg_sw_default(struct fwcfg *c)
{
	memset(c, 0, sizeof *c);
	c->ets.willing = 1;
	c->ets.tc_tx_bw[0] = 100;
	c->ets.tc_tsa[0] = X_TSA_ETS;
	c->ets.tc_reco_bw[0] = 100;
	c->ets.tc_reco_tsa[0] = X_TSA_ETS;
	c->pfc_willing = 1;
	c->pfc_cap = 8;
	c->napp = 1;
	c->app[0] = (struct fwapp){0x8906, IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3};
}

/* The ETS recommendation made equal to the ETS configuration, as a
 * configuration is applied (ice_pf_dcb_cfg; i40e_hw_set_dcb_config). */
void fwcfg_reco_from_cfg(struct fwcfg *c)
{
	memcpy(c->ets.tc_reco_bw, c->ets.tc_tx_bw, 8);
	memcpy(c->ets.tc_reco_tsa, c->ets.tc_tsa, 8);
	memcpy(c->ets.reco_prio_tc, c->ets.prio_tc, 8);
}

/* CEE mode as ice and i40e judge it: CEE in the DCBX cap and not
 * LLD_MANAGED; out of it their CEE ops do nothing. */
int fwcfg_cee_on(const struct drv *d)
{
	return (d->dcbx & DCB_CAP_DCBX_VER_CEE) && !(d->dcbx & DCB_CAP_DCBX_LLD_MANAGED);
}

/*
 * The CEE commands ice and i40e answer alike. The kernel has this code twice,
 * each driver its own copy on its own configuration struct: ice_dcb_nl.c's
 * ice_dcbnl_{get,set}_pg_{tc,bwg}_cfg_{tx,rx}, ice_dcbnl_{get,set}_pfc_cfg,
 * ice_dcbnl_getpfcstate and its getapp op, and i40e_dcb_nl.c's i40e_dcbnl_*
 * of the same names. They read the configuration applied (hw.local) and write
 * the one being built (hw.want: ice's desired_dcbx_cfg, i40e's tmp_cfg;
 * `pending` names it in the log, after the model's name).
 *
 * Out of CEE mode (fwcfg_cee_on) the getters leave what dcbnl.c put
 * (DCB_ATTR_VALUE_UNDEFINED for the PG fields, 0 for PFC), the setters do
 * nothing, getapp is EINVAL. In CEE mode PG Tx maps the priorities of up_map
 * to the TC and makes it ETS (prio type, PG id and per-TC percent ignored),
 * PG bandwidth sets the TC's bandwidth, PFC sets priorities; the Rx PG
 * setters do nothing; the PG getters read the applied priority table and
 * bandwidths (Rx bandwidth 0). PFC_GSTATE is any PFC on.
 *
 * Returns CEE_DEFAULT for a command it does not answer.
 */
int fwcfg_cee(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	      struct note *n, const char *pending)
{
	struct hw *h = &d->hw;
	int on = fwcfg_cee_on(d), rx = 0;
	const struct nlattr *pg[DCB_PG_ATTR_MAX + 1], *pt[DCB_TC_ATTR_PARAM_MAX + 1];
	const struct nlattr *sub[DCB_PFC_UP_ATTR_MAX + 1];
	struct pg view;
	uint8_t up[8], v;

	switch (cmd) {
	case DCB_CMD_PGRX_GCFG:
		rx = 1;
		/* fall through */
	case DCB_CMD_PGTX_GCFG:
		memset(&view, UNDEF, sizeof view);
		for (int i = 0; i < 8 && on; i++) {
			view.pgid[i] = h->local.ets.prio_tc[i];
			view.pg_bw[i] = rx ? 0 : h->local.ets.tc_tx_bw[i];
		}
		cee_pg_get(&view, tb[DCB_ATTR_PG_CFG], r);
		return 0;
	case DCB_CMD_PGTX_SCFG:
		parse(DATA(tb[DCB_ATTR_PG_CFG]), DLEN(tb[DCB_ATTR_PG_CFG]), pg, DCB_PG_ATTR_MAX);
		for (int tc = 0; tc < 8 && on; tc++) {
			uint8_t map = UNDEF;
			if (!pg[DCB_PG_ATTR_TC_0 + tc])
				continue;
			parse(DATA(pg[DCB_PG_ATTR_TC_0 + tc]), DLEN(pg[DCB_PG_ATTR_TC_0 + tc]), pt,
			      DCB_TC_ATTR_PARAM_MAX);
			u8_of(pt[DCB_TC_ATTR_PARAM_UP_MAPPING], &map);
			for (int i = 0; i < 8; i++)
				if (map & (1u << i))
					h->want.ets.prio_tc[i] = (uint8_t)tc;
			h->want.ets.tc_tsa[tc] = X_TSA_ETS;
		}
		for (int i = 0; i < 8 && on; i++)
			if (u8_of(pg[DCB_PG_ATTR_BW_ID_0 + i], &v))
				h->want.ets.tc_tx_bw[i] = v;
		note(n, "%s.cee=%s", model_of(d)->name, on ? pending : "ignored_not_cee");
		return status_reply(r, DCB_ATTR_PG_CFG, status, 0);
	case DCB_CMD_PGRX_SCFG:
		return status_reply(r, DCB_ATTR_PG_CFG, status, 0);
	case DCB_CMD_PFC_GCFG:
		for (int i = 0; i < 8; i++)
			up[i] = on ? (h->local.pfc_en >> i) & 1 : 0;
		cee_pfc_get(up, tb[DCB_ATTR_PFC_CFG], r);
		return 0;
	case DCB_CMD_PFC_SCFG:
		parse(DATA(tb[DCB_ATTR_PFC_CFG]), DLEN(tb[DCB_ATTR_PFC_CFG]), sub,
		      DCB_PFC_UP_ATTR_MAX);
		for (int i = 0; i < 8 && on; i++)
			if (u8_of(sub[DCB_PFC_UP_ATTR_0 + i], &v)) {
				h->want.pfc_cap = 8;
				if (v)
					h->want.pfc_en |= (uint8_t)(1u << i);
				else
					h->want.pfc_en &= (uint8_t)~(1u << i);
			}
		return status_reply(r, DCB_ATTR_PFC_CFG, status, 0);
	case DCB_CMD_PFC_GSTATE:
		put_u8(r, DCB_ATTR_PFC_STATE, h->local.pfc_en ? 1 : 0);
		return 0;
	case DCB_CMD_GAPP:
		return on ? CEE_DEFAULT : -EINVAL;
	default:
		return CEE_DEFAULT;
	}
}
