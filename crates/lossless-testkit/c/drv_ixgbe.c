/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the ixgbe model, an 82599
 * port as the ixgbe driver's dcbnl ops drive it.
 *
 * Facts from drivers/net/ethernet/intel/ixgbe/ixgbe_dcb_nl.c (nl)
 * and ixgbe_main.c (main), by function:
 * ops (nl ixgbe_dcbnl_ops): every CEE op, ieee_getets/setets,
 *   ieee_getpfc/setpfc, ieee_setapp/delapp, getdcbx/setdcbx. No buffer,
 *   apptrust.
 * power-on (main ixgbe_sw_init): DCBX cap HOST | CEE (IEEE sets refused
 *   until SDCBX), DCB off; CEE: every TC in PG 0 at 12 or 13 % (odd TCs 13),
 *   TC0 holds every priority, PG 0 100 %, PFC off; 8 TCs (82599).
 * CEE (nl): sets go to temp_dcb_cfg, gets read dcb_cfg; DCB_ATTR_VALUE_
 *   UNDEFINED leaves a PG field as it is; PFC_SCFG marks PFC mode on when a
 *   priority changes. SET_ALL (ixgbe_dcbnl_set_all, ixgbe_copy_dcb_cfg):
 *   no CEE in the cap, or nothing changed: 1; a PG change 0; a PFC change 2
 *   (answered last, so a PG and PFC change is 2); a changed up_map, or an
 *   FCoE APP priority the port does not use, resets the port (devreset:
 *   ndo_stop and ndo_open, a link flap) and answers 0 (IXGBE_FCOE).
 *   SSTATE: no CEE 1; no change 0; else the TCs are set up again
 *   (ixgbe_setup_tc, which stops and reopens a running port: taken from
 *   its use, not read). GNUMTCS: EINVAL while DCB is off; SNUMTCS 1; GAPP
 *   without CEE in the cap EINVAL.
 * ETS (nl ixgbe_dcbnl_ieee_setets): no IEEE in the cap: EINVAL. The request
 *   is kept before it is checked (a refused one still reads back); the TCs
 *   used (highest prio_tc + 1, 0 for all on TC0) over 8: EINVAL; another TC
 *   count sets the TCs up (a flap), the same count with another priority
 *   table resets the port (a flap); bandwidths and TSAs are not checked.
 *   Read back (getets): ets_cap 8, the rest 0 until one is set, then cbs,
 *   bandwidths, TSA and prio_tc as set (willing and reco 0).
 * PFC (nl ixgbe_dcbnl_ieee_setpfc/getpfc): no IEEE: EINVAL; kept whole
 *   (pfc_en, mbc, delay read back); pfc_cap 8.
 * APP (nl ixgbe_dcbnl_ieee_setapp/delapp): any selector; no IEEE: EINVAL;
 *   the kernel table (EEXIST, ENOENT); an FCoE entry whose priority the port
 *   does not use moves FCoE there and resets the port.
 * DCBX (nl ixgbe_dcbnl_setdcbx): LLD_MANAGED, CEE with IEEE, no HOST: 1;
 *   the same mode: 0; else the cap becomes the mode and, for IEEE, an empty
 *   ETS and PFC are set (ixgbe_dcbnl_ieee_setets/setpfc), for CEE every CEE
 *   setting is committed (set_all: a port reset), for neither the TCs are
 *   torn down. There is no firmware DCBX agent: LOSSLESS_DCBDRV_FW_AGENT
 *   does nothing.
 */
#include "dcbdrv.h"

#define HOST DCB_CAP_DCBX_HOST
#define CEE DCB_CAP_DCBX_VER_CEE
#define IEEE DCB_CAP_DCBX_VER_IEEE
#define FCOE 0x8906

static void ixgbe_init(struct drv *d)
{
	d->dcbx = HOST | CEE;
	for (int dir = 0; dir < 2; dir++) {
		struct pg *p = &d->pg[dir];
		memset(p, 0, sizeof *p);
		for (int j = 0; j < 8; j++)
			p->bw_pct[j] = (uint8_t)(12 + (j & 1));
		p->up_map[0] = 0xff;
		p->pg_bw[0] = 100;
	}
	memset(d->pfc_up, 0, 8);
	d->pfc_state = 0;
	memcpy(d->hw.cee_pg, d->pg, sizeof d->pg);
	d->hw.fcoe_up = 3; /* IXGBE_FCOE_DEFTC */
}

/* ixgbe_setup_tc(): a running port stops and reopens */
static void ixgbe_setup_tc(struct drv *d, int tc, struct note *n)
{
	link_reset(d, 0, n);
	d->hw.num_tc = (uint8_t)tc;
	d->dcb_state = tc ? 1 : 0;
	note(n, "ixgbe.tcs=%d", tc);
}

static int ixgbe_setets(struct drv *d, const struct ieee_ets *e, struct note *n)
{
	struct hw *h = &d->hw;
	int max = 0, chg = 0, err = ieee_gate(d, "ets", 0, n);

	if (err)
		return err;
	if (!h->has_ets) {
		h->has_ets = 1;
		memset(h->ets.prio_tc, 0, 8); /* the hardware's up2tc at power-on */
	}
	for (int i = 0; i < 8; i++) {
		if (e->prio_tc[i] > max)
			max = e->prio_tc[i];
		if (e->prio_tc[i] != h->ets.prio_tc[i])
			chg = 1;
	}
	h->ets = *e;
	if (max)
		max++;
	if (max > 8) {
		note(n, "ets.refused=%d_tcs_over_8 ets.kept=1", max);
		return -EINVAL;
	}
	if (max != h->num_tc)
		ixgbe_setup_tc(d, max, n);
	else if (chg)
		link_reset(d, 0, n); /* ixgbe_dcbnl_devreset */
	return 0;
}

static int ixgbe_getets(struct drv *d, struct ieee_ets *e)
{
	return ets_as_set(d, e, 8);
}

static int ixgbe_setpfc(struct drv *d, const struct ieee_pfc *p, struct note *n)
{
	int err = ieee_gate(d, "pfc", 0, n);

	if (err)
		return err;
	d->hw.has_pfc = 1;
	d->hw.pfc.pfc_cap = p->pfc_cap;
	d->hw.pfc.pfc_en = p->pfc_en;
	d->hw.pfc.mbc = p->mbc;
	d->hw.pfc.delay = p->delay;
	return 0;
}

static int ixgbe_getpfc(struct drv *d, struct ieee_pfc *p)
{
	return pfc_as_set(d, p, 8);
}

/* dcb_ieee_getapp_mask(): the priority bit of the first FCoE entry the kernel
 * finds (its list puts the newest first) */
static uint8_t fcoe_mask(const struct drv *d)
{
	for (int i = d->n_app - 1; i >= 0; i--)
		if (d->app[i].selector == IEEE_8021QAZ_APP_SEL_ETHERTYPE &&
		    d->app[i].protocol == FCOE)
			return (uint8_t)(1u << d->app[i].priority);
	return 0;
}

static int ixgbe_setapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	int err = ieee_gate(d, "app", 0, n);

	if (err || (err = kapp_add(d, a)) != 0)
		return err;
	if (a->selector == IEEE_8021QAZ_APP_SEL_ETHERTYPE && a->protocol == FCOE &&
	    !(fcoe_mask(d) & (1u << d->hw.fcoe_up))) {
		d->hw.fcoe_up = a->priority;
		link_reset(d, 0, n); /* ixgbe_dcbnl_devreset */
	}
	return 0;
}

static int ixgbe_delapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	int err = ieee_gate(d, "app", 0, n);

	if (err || (err = kapp_del(d, a)) != 0)
		return err;
	if (a->selector == IEEE_8021QAZ_APP_SEL_ETHERTYPE && a->protocol == FCOE) {
		uint8_t mask = fcoe_mask(d);
		if (!(mask & (1u << d->hw.fcoe_up))) {
			d->hw.fcoe_up = mask ? (uint8_t)(__builtin_ffs(mask) - 1) : 3;
			link_reset(d, 0, n);
		}
	}
	return 0;
}

/* ixgbe_copy_dcb_cfg() and ixgbe_dcbnl_set_all(): the SET_ALL status; `force`
 * as ixgbe_dcbnl_setdcbx() marks every setting changed */
enum { IX_PFC = 2, IX_PG = 4, IX_APP = 16 };
static int ixgbe_set_all(struct drv *d, int force, struct note *n)
{
	enum { PFC = IX_PFC, PG = IX_PG, APP = IX_APP };
	struct hw *h = &d->hw;
	int bits = force, ret = 1, i = app_find(d, DCB_APP_IDTYPE_ETHTYPE, FCOE, -1);
	uint8_t up = i >= 0 ? d->app[i].priority : 0;

	if (!(d->dcbx & CEE)) {
		note(n, "cee.refused=dcbx_not_cee");
		return 1;
	}
	if (up && !(up & (1u << h->fcoe_up)))
		bits |= APP;
	for (int dir = 0; dir < 2; dir++)
		for (int tc = 0; tc < 8; tc++) {
			struct pg *t = &h->cee_pg[dir], *a = &d->pg[dir];
			if (t->strict[tc] != a->strict[tc] || t->pgid[tc] != a->pgid[tc] ||
			    t->bw_pct[tc] != a->bw_pct[tc] || t->pg_bw[tc] != a->pg_bw[tc])
				bits |= PG;
			if (t->up_map[tc] != a->up_map[tc])
				bits |= PG | PFC | APP;
		}
	if (memcmp(h->cee_pfc, d->pfc_up, 8) || h->cee_pfc_state != d->pfc_state)
		bits |= PFC;
	memcpy(d->pg, h->cee_pg, sizeof d->pg);
	memcpy(d->pfc_up, h->cee_pfc, 8);
	d->pfc_state = h->cee_pfc_state;
	if (!bits)
		return 1;
	if (bits & PG)
		ret = 0;
	if (bits & PFC)
		ret = 2;
	if (bits & APP) {
		h->fcoe_up = up ? (uint8_t)(__builtin_ffs(up) - 1) : h->fcoe_up;
		link_reset(d, 0, n); /* ixgbe_dcbnl_devreset */
		ret = 0;
	}
	note(n, "ixgbe.changed=%s%s%s", bits & PG ? "pg," : "", bits & PFC ? "pfc," : "",
	     bits & APP ? "app" : "");
	return ret;
}

static uint8_t ixgbe_setdcbx(struct drv *d, uint8_t mode, struct note *n)
{
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	uint8_t was = d->dcbx;

	if (dcbx_take(d, mode, dcbx_unsupported(mode) ? "mode_unsupported" : NULL, n))
		return 1;
	if (mode == was)
		return 0;
	memset(&ets, 0, sizeof ets);
	memset(&pfc, 0, sizeof pfc);
	ets.ets_cap = 8;
	pfc.pfc_cap = 8;
	if (mode & IEEE) {
		ixgbe_setets(d, &ets, n);
		ixgbe_setpfc(d, &pfc, n);
	} else if (mode & CEE) {
		ixgbe_set_all(d, IX_PFC | IX_PG | IX_APP, n);
	} else {
		ixgbe_setets(d, &ets, n);
		ixgbe_setpfc(d, &pfc, n);
		ixgbe_setup_tc(d, 0, n);
	}
	return 0;
}

static int ixgbe_cee(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r,
		     int *status, struct note *n)
{
	struct hw *h = &d->hw;
	const struct nlattr *sub[DCB_PFC_UP_ATTR_MAX + 1];
	uint8_t v;

	switch (cmd) {
	case DCB_CMD_SSTATE:
		u8_of(tb[DCB_ATTR_STATE], &v);
		if (!(d->dcbx & CEE))
			return status_reply(r, DCB_ATTR_STATE, status, 1);
		if (!v != !d->dcb_state)
			ixgbe_setup_tc(d, v ? 8 : 0, n);
		return status_reply(r, DCB_ATTR_STATE, status, 0);
	case DCB_CMD_PGTX_SCFG:
	case DCB_CMD_PGRX_SCFG:
		cee_pg_set(&h->cee_pg[cmd == DCB_CMD_PGRX_SCFG], tb[DCB_ATTR_PG_CFG], n);
		return status_reply(r, DCB_ATTR_PG_CFG, status, 0);
	case DCB_CMD_PFC_SCFG:
		parse(DATA(tb[DCB_ATTR_PFC_CFG]), DLEN(tb[DCB_ATTR_PFC_CFG]), sub,
		      DCB_PFC_UP_ATTR_MAX);
		for (int i = 0; i < 8; i++)
			if (u8_of(sub[DCB_PFC_UP_ATTR_0 + i], &v)) {
				h->cee_pfc[i] = v;
				if (v != d->pfc_up[i])
					h->cee_pfc_state = 1;
			}
		note8(n, "cee.pfc_up", h->cee_pfc);
		return status_reply(r, DCB_ATTR_PFC_CFG, status, 0);
	case DCB_CMD_PFC_SSTATE:
		u8_of(tb[DCB_ATTR_PFC_STATE], &v);
		h->cee_pfc_state = v;
		return status_reply(r, DCB_ATTR_PFC_STATE, status, 0);
	case DCB_CMD_SET_ALL:
		return status_reply(r, DCB_ATTR_SET_ALL, status, ixgbe_set_all(d, 0, n));
	case DCB_CMD_GNUMTCS:
		return d->dcb_state ? CEE_DEFAULT : -EINVAL;
	case DCB_CMD_SNUMTCS:
		return status_reply(r, DCB_ATTR_NUMTCS, status, 1);
	case DCB_CMD_GAPP:
		return d->dcbx & CEE ? CEE_DEFAULT : -EINVAL;
	default:
		return CEE_DEFAULT;
	}
}

const struct model model_ixgbe = {
	.name = "ixgbe",
	.ops = OP_CEE_ALL,
	.caps = {CAPS_PG_PFC_8TCS, [DCB_CAP_ATTR_GSP] = 1},
	.init = ixgbe_init,
	.getets = ixgbe_getets,
	.setets = ixgbe_setets,
	.getpfc = ixgbe_getpfc,
	.setpfc = ixgbe_setpfc,
	.setapp = ixgbe_setapp,
	.delapp = ixgbe_delapp,
	.setdcbx = ixgbe_setdcbx,
	.cee = ixgbe_cee,
};
