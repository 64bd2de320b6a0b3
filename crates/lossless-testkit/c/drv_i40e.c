/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the i40e model, an XL710
 * port as the i40e driver's dcbnl ops drive it.
 *
 * Facts from drivers/net/ethernet/intel/i40e/i40e_dcb_nl.c (nl) and
 * i40e_main.c (main), by function:
 * ops (nl dcbnl_ops): ieee_getets/setets, ieee_getpfc/setpfc,
 *   ieee_setapp/delapp, getdcbx/setdcbx; CEE: getstate, setstate,
 *   getpermhwaddr, all four PG setters and getters (Rx setters do nothing),
 *   setpfccfg, getpfccfg, setall, getcap, getnumtcs, setnumtcs,
 *   getpfcstate, setpfcstate, getapp. No buffer, apptrust, CEE setapp.
 * power-on, firmware LLDP off (main i40e_init_pf_dcb,
 *   i40e_dcb_sw_default_config with the set-LLDP-MIB path): DCBX cap HOST |
 *   IEEE, DCB capable but off; ETS willing, TC0 ETS at 100 %, others strict,
 *   every priority on TC0; PFC willing, pfc_cap 8; the firmware APP table
 *   holds FCoE on priority 3. With the firmware agent (DCBX in firmware):
 *   LLD_MANAGED | IEEE.
 * applying (main i40e_hw_dcb_config): a TC the priority table uses (counted
 *   as ice_dcb_get_num_tc counts, which i40e_dcb_get_num_tc is taken to be)
 *   whose TSA is neither ETS nor strict: EINVAL (the bandwidths are not
 *   checked); a changed priority table, PFC or APP table quiesces the VSIs
 *   (the port stops and restarts: a link flap here) and sets DCB on when
 *   more than one TC is used; then the configuration is the applied one
 *   (and, set-LLDP-MIB, its ETS recommendation the ETS configuration).
 * ETS, PFC (nl i40e_dcbnl_ieee_setets/setpfc): no IEEE in the cap, or
 *   LLD_MANAGED: EINVAL; the applied configuration with the request (ETS:
 *   willing, cbs, bandwidth, TSA, prio_tc and the reco fields; PFC:
 *   pfc_cap or 8 when 0, pfc_en; mbc and delay not kept) is applied; a
 *   failure is EINVAL. Read back (i40e_dcbnl_ieee_getets/getpfc): without
 *   IEEE in the cap EINVAL, so IEEE_GET leaves them out; ets_cap 8,
 *   reco_prio_tc = prio_tc, Tx and Rx bandwidth the same, delay 0.
 * APP (nl i40e_dcbnl_ieee_setapp/delapp): any selector. Same gate; a full
 *   firmware table (32) is EINVAL; the kernel table first (EEXIST); an
 *   entry the firmware table has is done; else added and applied. Delete:
 *   the kernel entry first (ENOENT); the firmware table keeps its only
 *   entry (0); the entry is looked for from the second on: not found is
 *   EINVAL (the kernel entry already gone); removed and applied.
 * DCBX (nl i40e_dcbnl_setdcbx, get_cap): LLD_MANAGED in the cap, or a mode
 *   with LLD_MANAGED, with CEE and IEEE, or without HOST: 1; else the cap
 *   becomes the mode (0). GCAP: PG, PFC 1, PG_TCS, PFC_TCS 0x80, DCBX the
 *   cap, UP2TC, GSP, BCN 0. GNUMTCS 8; SNUMTCS status 1 (setnumtcs EINVAL).
 * CEE (nl): ops do nothing unless the cap has CEE and not LLD_MANAGED
 *   (SET_ALL then 1, SSTATE 0, getapp EINVAL). In CEE mode PG Tx maps the
 *   priorities of up_map to the TC (made ETS), PG bandwidth sets the TC's,
 *   PFC sets priorities, in tmp_cfg; SET_ALL applies tmp_cfg (0, or 1 on a
 *   failure). The IEEE setters overwrite tmp_cfg with the applied
 *   configuration. GSTATE is DCB on; PFC_GSTATE any PFC on; PFC_SSTATE does
 *   nothing.
 * What i40e does as ice does is in models.c, each kernel driver having its
 *   own copy of that code: the software defaults, the ETS recommendation,
 *   the number of TCs, the firmware APP table, the IEEE setters' check, the
 *   refused DCBX modes, and the CEE ops but SSTATE, PFC_SSTATE, SET_ALL,
 *   SNUMTCS (fwcfg_cee).
 */
#include "dcbdrv.h"

#define HOST DCB_CAP_DCBX_HOST
#define LLD DCB_CAP_DCBX_LLD_MANAGED
#define IEEE DCB_CAP_DCBX_VER_IEEE

static void i40e_init(struct drv *d)
{
	d->dcbx = (uint8_t)((d->fw_agent ? LLD : HOST) | IEEE);
	d->dcb_state = 0;
	fwcfg_sw_default(&d->hw.local); /* i40e_dcb_sw_default_config */
	d->hw.want = d->hw.local;
}

/* i40e_hw_dcb_config(): 0 or -EINVAL */
static int i40e_apply(struct drv *d, struct fwcfg *next, struct note *n)
{
	struct fwcfg *old = &d->hw.local;
	int num = num_tc_contig(next->ets.prio_tc), need;

	for (int i = 0; i < num; i++)
		if (next->ets.tc_tsa[i] != X_TSA_ETS && next->ets.tc_tsa[i] != X_TSA_STRICT) {
			note(n, "i40e.refused=tc_%d_tsa_%u_not_ets_or_strict", i, next->ets.tc_tsa[i]);
			return -EINVAL;
		}
	need = memcmp(next->ets.prio_tc, old->ets.prio_tc, 8) || next->pfc_cap != old->pfc_cap ||
	       next->pfc_en != old->pfc_en || next->pfc_willing != old->pfc_willing ||
	       memcmp(next->app, old->app, sizeof next->app);
	if (need) {
		d->hw.dcb_on = num > 1;
		d->dcb_state = d->hw.dcb_on;
		link_reset(d, 0, n); /* i40e_pf_quiesce_all_vsi ... unquiesce */
	}
	*old = *next;
	if (need) /* i40e_hw_set_dcb_config: etsrec = etscfg */
		fwcfg_reco_from_cfg(old);
	return 0;
}

/* i40e_dcbnl_ieee_setets/setpfc: tmp_cfg, the applied configuration for the
 * request to go into; NULL (EINVAL) without IEEE in the cap, or LLD_MANAGED */
static struct fwcfg *i40e_tmp_cfg(struct drv *d, const char *what, struct note *n)
{
	if (ieee_gate(d, what, 1, n))
		return NULL;
	d->hw.want = d->hw.local;
	return &d->hw.want;
}

static int i40e_setets(struct drv *d, const struct ieee_ets *e, struct note *n)
{
	struct fwcfg *t = i40e_tmp_cfg(d, "ets", n);

	if (!t)
		return -EINVAL;
	t->ets = *e;
	t->ets.ets_cap = 8;
	memset(t->ets.tc_rx_bw, 0, 8);
	return i40e_apply(d, t, n);
}

static int i40e_getets(struct drv *d, struct ieee_ets *e)
{
	const struct fwcfg *c = &d->hw.local;

	if (!(d->dcbx & IEEE))
		return -EINVAL;
	*e = c->ets;
	e->ets_cap = 8;
	memcpy(e->tc_rx_bw, c->ets.tc_tx_bw, 8);
	memcpy(e->reco_prio_tc, c->ets.prio_tc, 8);
	return 0;
}

static int i40e_setpfc(struct drv *d, const struct ieee_pfc *p, struct note *n)
{
	struct fwcfg *t = i40e_tmp_cfg(d, "pfc", n);

	if (!t)
		return -EINVAL;
	t->pfc_cap = p->pfc_cap ? p->pfc_cap : 8;
	t->pfc_en = p->pfc_en;
	return i40e_apply(d, t, n);
}

static int i40e_getpfc(struct drv *d, struct ieee_pfc *p)
{
	if (!(d->dcbx & IEEE))
		return -EINVAL;
	p->pfc_cap = d->hw.local.pfc_cap;
	p->pfc_en = d->hw.local.pfc_en;
	return 0;
}

static int i40e_setapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct fwcfg *t = &d->hw.want;
	int err = ieee_gate(d, "app", 1, n);

	if (err)
		return err;
	if (d->hw.local.napp >= FWAPPS) {
		note(n, "app.refused=firmware_table_full");
		return -EINVAL;
	}
	if ((err = kapp_add(d, a)) != 0)
		return err;
	if (fwapp_find(&d->hw.local, a->selector, a->protocol, a->priority, 0) >= 0)
		return 0;
	*t = d->hw.local;
	t->app[t->napp++] = (struct fwapp){a->protocol, a->selector, a->priority};
	return i40e_apply(d, t, n);
}

static int i40e_delapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct fwcfg *t = &d->hw.want;
	int err = ieee_gate(d, "app", 1, n), i;

	if (err)
		return err;
	if ((err = kapp_del(d, a)) != 0)
		return err;
	if (d->hw.local.napp == 1) {
		note(n, "i40e.firmware_app=kept");
		return 0;
	}
	*t = d->hw.local;
	i = fwapp_find(t, a->selector, a->protocol, a->priority, 1);
	if (i < 0) {
		note(n, "app.refused=not_in_firmware_table_from_entry_1");
		return -EINVAL;
	}
	fwapp_remove(t, i, &d->hw.local);
	return i40e_apply(d, t, n);
}

static uint8_t i40e_setdcbx(struct drv *d, uint8_t mode, struct note *n)
{
	const char *why = NULL;

	if (d->dcbx & LLD)
		why = "fw_lldp_agent";
	else if (dcbx_unsupported(mode))
		why = "mode_unsupported";
	return dcbx_take(d, mode, why, n);
}

/* The CEE ops ice has alike are fwcfg_cee() (models.c); these are i40e's own. */
static int i40e_cee(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r,
		    int *status, struct note *n)
{
	struct hw *h = &d->hw;
	int on = fwcfg_cee_on(d);
	uint8_t v;

	switch (cmd) {
	case DCB_CMD_SSTATE:
		u8_of(tb[DCB_ATTR_STATE], &v);
		if (on && !v != !h->dcb_on)
			d->dcb_state = h->dcb_on = v ? 1 : 0;
		return status_reply(r, DCB_ATTR_STATE, status, 0);
	case DCB_CMD_PFC_SSTATE:
		return status_reply(r, DCB_ATTR_PFC_STATE, status, 0);
	case DCB_CMD_SET_ALL:
		return status_reply(r, DCB_ATTR_SET_ALL, status, !on || i40e_apply(d, &h->want, n));
	case DCB_CMD_SNUMTCS:
		note(n, "i40e.setnumtcs=EINVAL");
		return status_reply(r, DCB_ATTR_NUMTCS, status, 1);
	}
	return fwcfg_cee(d, cmd, tb, r, status, n, "tmp_cfg");
}

const struct model model_i40e = {
	.name = "i40e",
	.ops = OP_CEE_ALL,
	.caps = {CAPS_PG_PFC_8TCS},
	.init = i40e_init,
	.getets = i40e_getets,
	.setets = i40e_setets,
	.getpfc = i40e_getpfc,
	.setpfc = i40e_setpfc,
	.setapp = i40e_setapp,
	.delapp = i40e_delapp,
	.setdcbx = i40e_setdcbx,
	.cee = i40e_cee,
};

