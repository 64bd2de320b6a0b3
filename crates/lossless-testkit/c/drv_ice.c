/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the ice model, an E810
 * port as the ice driver's dcbnl ops drive it. Facts from
 * drivers/net/ethernet/intel/ice/ice_dcb_nl.c (nl) and ice_dcb_lib.c (lib),
 * ice_dcb_lib.h (lib.h), by function:
 *
 * ops (nl dcbnl_ops): ieee_getets/setets, ieee_getpfc/setpfc,
 *   ieee_setapp/delapp; CEE: getstate, setstate, getpermhwaddr, all four PG
 *   setters and getters (the Rx setters do nothing), setpfccfg, getpfccfg,
 *   setall, getcap, getnumtcs, getpfcstate, getapp; getdcbx, setdcbx. No
 *   setpfcstate, setnumtcs, CEE setapp (the kernel's dcb_setapp), buffer,
 *   apptrust.
 * statuses (lib.h): ICE_DCB_HW_CHG_RST 0, ICE_DCB_NO_HW_CHG 1,
 *   ICE_DCB_HW_CHG 2.
 * power-on, software LLDP (lib ice_init_pf_dcb, ice_dcb_sw_dflt_cfg): DCBX
 *   cap HOST | IEEE (ice_dcb_get_mode); ETS willing, TC0 ETS at 100 %,
 *   other TCs strict (0), every priority on TC0; ets_cap 8; PFC willing,
 *   pfc_cap 8; the firmware APP table holds FCoE (ethertype 0x8906) on
 *   priority 3; VLAN (L2) QoS mode. With the firmware LLDP agent
 *   (ICE_FLAG_FW_LLDP_AGENT; LOSSLESS_DCBDRV_FW_AGENT here) the cap is
 *   LLD_MANAGED | IEEE. The desired configuration (desired_dcbx_cfg) starts
 *   as the applied one (where the driver first fills it is not in the files
 *   read; once anything is applied the two are equal).
 * applying (lib ice_pf_dcb_cfg): the desired configuration is compared
 *   whole with the applied one; equal: ICE_DCB_NO_HW_CHG (software LLDP)
 *   or ICE_DCB_HW_CHG_RST (firmware LLDP); different: the bandwidth check
 *   (lib ice_dcb_bwchk) can refuse it (EINVAL), else it is applied, the
 *   ETS recommendation made equal to the ETS configuration in both, and the
 *   answer is ICE_DCB_HW_CHG_RST. ice_dcb_bwchk: the TCs the priority table
 *   uses (ice_dcb_get_num_tc: contiguous from TC0, a gap counts as one TC);
 *   one TC gets 100 %; else their bandwidths must sum to 100 (0 gives TC0
 *   100 %), EINVAL otherwise.
 * ETS and PFC (nl ice_dcbnl_setets, ice_dcbnl_setpfc): LLD_MANAGED or no
 *   IEEE in the cap: EINVAL. The request goes into the desired
 *   configuration (the priority table only in VLAN mode: DSCP mode keeps
 *   it; PFC: pfc_cap or 8 when 0, pfc_en; willing, mbc, delay are not
 *   kept), ETS is bandwidth-checked first (a refused one stays in the
 *   desired configuration, and is refused again by every later apply);
 *   then applied: ICE_DCB_HW_CHG_RST closes and reopens the netdev
 *   (ice_dcbnl_devreset: dev_close, dev_open: a link flap, and a port that
 *   was down comes up); ICE_DCB_NO_HW_CHG answers 0 with no flap.
 * ETS/PFC read back (nl ice_dcbnl_getets, ice_dcbnl_getpfc): willing,
 *   ets_cap, cbs, bandwidth (Tx and Rx the same), TSA, prio_tc, reco
 *   bandwidth and TSA from the applied configuration, reco_prio_tc = its
 *   prio_tc; pfc_cap, pfc_en, mbc applied, delay from a register (0 here).
 * APP (nl ice_dcbnl_setapp): a selector other than DSCP, LLD_MANAGED, no
 *   IEEE in the cap, a DSCP of 64 or more, a priority of 8 or more: EINVAL.
 *   The entry goes into the kernel table (EEXIST for a duplicate); a DSCP
 *   already mapped is EINVAL (and the entry leaves the table again). The
 *   first one switches the port to DSCP QoS: desired ETS not willing, TC i
 *   ETS with TC0 100 % and the others 0 %, priority i on TC i, PFC not
 *   willing, pfc_cap 8, DSCP 8i..8i+7 on TC i. Then applied: reset done
 *   answers 0 after the flap; anything else answers ICE_DCB_NO_HW_CHG, 1,
 *   a positive status that stops the APP table there.
 * APP delete (nl ice_dcbnl_delapp): LLD_MANAGED: EINVAL; the kernel entry
 *   goes (ENOENT without it); not in the firmware table: EINVAL; a non-DSCP
 *   entry answers ICE_DCB_HW_CHG, 2; a DSCP goes back to DSCP % 8 and, when
 *   it was the last, the port goes back to VLAN QoS with the software
 *   defaults applied (ice_dcb_sw_dflt_cfg: PFC off); applied with a flap;
 *   ICE_DCB_NO_HW_CHG becomes ICE_DCB_HW_CHG.
 * DCBX (nl ice_dcbnl_setdcbx, getdcbx, ice_dcbnl_get_cap): firmware LLDP
 *   agent, LLD_MANAGED, CEE and IEEE together, no HOST, the mode already
 *   set, DSCP QoS: all ICE_DCB_NO_HW_CHG (1); else the cap becomes the mode
 *   (ICE_DCB_HW_CHG_RST, 0). GCAP: PG, PFC 1; UP2TC, GSP, BCN 0; PG_TCS,
 *   PFC_TCS 0x80; DCBX the cap.
 * CEE (nl): every CEE op does nothing unless the cap has CEE and not
 *   LLD_MANAGED (getters leave what dcbnl.c put: DCB_ATTR_VALUE_UNDEFINED
 *   for PG fields; getapp: EINVAL); SET_ALL and SSTATE then answer
 *   ICE_DCB_NO_HW_CHG. In CEE mode: PG Tx maps the priorities of up_map to
 *   the TC and makes it ETS (prio type, PG id and per-TC percent ignored),
 *   PG bandwidth sets the TC's bandwidth, PFC sets priorities, all in the
 *   desired configuration; SET_ALL applies it (0 when applied, else 1, no
 *   devreset); SSTATE toggles DCB (ICE_DCB_HW_CHG, the desired
 *   configuration copied from the applied one when turned on). GSTATE is 1
 *   (DCB capable); PG getters read the applied priority table and
 *   bandwidths (Rx bandwidth 0); GNUMTCS 8.
 * What ice does as i40e does is in models.c, each kernel driver having its
 *   own copy of that code: the software defaults, the ETS recommendation,
 *   the number of TCs, the firmware APP table, the IEEE setters' check, the
 *   refused DCBX modes, and the CEE ops but GSTATE, SSTATE, SET_ALL and
 *   PFC_SCFG's log word (fwcfg_cee).
 */
#include "dcbdrv.h"

enum { RST = 0, NO_HW_CHG = 1, HW_CHG = 2 };
#define HOST DCB_CAP_DCBX_HOST
#define LLD DCB_CAP_DCBX_LLD_MANAGED
#define IEEE DCB_CAP_DCBX_VER_IEEE

/* ice_dcb_sw_dflt_cfg's configuration (willing ETS), the one i40e has too,
 * with ets_cap (maxtcs) 8 */
static void sw_default(struct fwcfg *c)
{
	fwcfg_sw_default(c);
	c->ets.ets_cap = 8;
}

static void init(struct drv *d)
{
	d->dcb_state = 1; /* ice_dcbnl_getstate: DCB capable */
	d->dcbx = (uint8_t)((d->fw_agent ? LLD : HOST) | IEEE);
	sw_default(&d->hw.local);
	fwcfg_reco_from_cfg(&d->hw.local);
	d->hw.want = d->hw.local;
}

static int bwchk(struct fwcfg *c, struct note *n)
{
	int num = num_tc_contig(c->ets.prio_tc), total = 0;

	if (num == 1) {
		c->ets.tc_tx_bw[0] = 100;
		return 0;
	}
	for (int i = 0; i < num; i++)
		total += c->ets.tc_tx_bw[i];
	if (!total) {
		c->ets.tc_tx_bw[0] = 100;
	} else if (total != 100) {
		note(n, "ice.refused=bw_sum_%d_over_%d_tcs_not_100", total, num);
		return -EINVAL;
	}
	return 0;
}

/* ice_pf_dcb_cfg(): applies `next` */
static int pf_dcb_cfg(struct drv *d, struct fwcfg *next, struct note *n)
{
	struct hw *h = &d->hw;
	int ret = d->fw_agent ? RST : NO_HW_CHG;

	h->dcb_on = num_tc_contig(next->ets.prio_tc) > 1;
	if (!memcmp(next, &h->local, sizeof *next)) {
		note(n, "ice.applied=no_change");
		return ret;
	}
	if (bwchk(next, n))
		return -EINVAL;
	h->local = *next;
	fwcfg_reco_from_cfg(&h->local);
	fwcfg_reco_from_cfg(next);
	note(n, "ice.applied=1");
	return RST;
}

/* what ice_dcbnl_setets/setpfc answer for ice_pf_dcb_cfg's answer */
static int after_apply(struct drv *d, int err, struct note *n)
{
	if (err == RST)
		link_reset(d, 1, n); /* ice_dcbnl_devreset */
	return err == NO_HW_CHG ? 0 : err;
}

static int setets(struct drv *d, const struct ieee_ets *e, struct note *n)
{
	struct fwcfg *w = &d->hw.want;
	int bwcfg = 0, bwrec = 0, err = ieee_gate(d, "ets", 1, n);

	if (err)
		return err;
	w->ets.willing = e->willing;
	w->ets.cbs = e->cbs;
	for (int i = 0; i < 8; i++) {
		w->ets.tc_tx_bw[i] = e->tc_tx_bw[i];
		bwcfg += e->tc_tx_bw[i];
		w->ets.tc_tsa[i] = e->tc_tsa[i];
		if (!w->dscp_mode) {
			w->ets.prio_tc[i] = e->prio_tc[i];
			w->ets.reco_prio_tc[i] = e->reco_prio_tc[i];
		}
		w->ets.tc_reco_bw[i] = e->tc_reco_bw[i];
		bwrec += e->tc_reco_bw[i];
		w->ets.tc_reco_tsa[i] = e->tc_reco_tsa[i];
	}
	if (bwchk(w, n))
		return -EINVAL;
	w->ets.ets_cap = 8;
	if (!bwcfg)
		w->ets.tc_tx_bw[0] = 100;
	if (!bwrec)
		w->ets.tc_reco_bw[0] = 100;
	return after_apply(d, pf_dcb_cfg(d, w, n), n);
}

static int getets(struct drv *d, struct ieee_ets *e)
{
	const struct fwcfg *c = &d->hw.local;

	*e = c->ets;
	memcpy(e->tc_rx_bw, c->ets.tc_tx_bw, 8);
	memcpy(e->reco_prio_tc, c->ets.prio_tc, 8);
	return 0;
}

static int setpfc(struct drv *d, const struct ieee_pfc *p, struct note *n)
{
	int err = ieee_gate(d, "pfc", 1, n);

	if (err)
		return err;
	d->hw.want.pfc_cap = p->pfc_cap ? p->pfc_cap : 8;
	d->hw.want.pfc_en = p->pfc_en;
	return after_apply(d, pf_dcb_cfg(d, &d->hw.want, n), n);
}

static int getpfc(struct drv *d, struct ieee_pfc *p)
{
	p->pfc_cap = d->hw.local.pfc_cap;
	p->pfc_en = d->hw.local.pfc_en;
	return 0;
}

static int bit(const uint8_t *map, unsigned i)
{
	return (map[i / 8] >> (i % 8)) & 1;
}

static int setapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct hw *h = &d->hw;
	struct fwcfg *w = &h->want;
	int err;

	if (a->selector != X_SEL_DSCP) {
		note(n, "app.refused=sel_%u_not_dscp", a->selector);
		return -EINVAL;
	}
	if ((err = ieee_gate(d, "app", 1, n)) != 0)
		return err;
	if (a->protocol >= 64 || a->priority >= 8) {
		note(n, "app.refused=dscp_%u_prio_%u_out_of_range", a->protocol, a->priority);
		return -EINVAL;
	}
	if ((err = kapp_add(d, a)) != 0)
		return err;
	if (bit(w->mapped, a->protocol)) {
		note(n, "app.refused=dscp_%u_already_mapped", a->protocol);
		kapp_del(d, a);
		return -EINVAL;
	}
	w->mapped[a->protocol / 8] |= (uint8_t)(1u << (a->protocol % 8));
	if (!h->local.dscp_mode) {
		note(n, "ice.qos_mode=dscp");
		w->dscp_mode = 1;
		w->ets.willing = 0;
		w->pfc_cap = 8;
		w->pfc_willing = 0;
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 8; j++)
				w->dscp[i * 8 + j] = (uint8_t)i;
		for (int i = 0; i < 8; i++) {
			w->ets.tc_tx_bw[i] = i ? 0 : 100;
			w->ets.tc_tsa[i] = X_TSA_ETS;
			w->ets.prio_tc[i] = (uint8_t)i;
		}
	}
	w->dscp[a->protocol] = a->priority;
	if (w->napp < FWAPPS)
		w->app[w->napp++] = (struct fwapp){a->protocol, a->selector, a->priority};
	if (pf_dcb_cfg(d, w, n) == RST) {
		link_reset(d, 1, n);
		return 0;
	}
	note(n, "app.status=ICE_DCB_NO_HW_CHG");
	return NO_HW_CHG;
}

static int delapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct hw *h = &d->hw;
	struct fwcfg *w = &h->want;
	int i, err;

	if (d->dcbx & LLD) {
		note(n, "app.refused=fw_lldp_agent");
		return -EINVAL;
	}
	if ((err = kapp_del(d, a)) != 0)
		return err;
	i = fwapp_find(w, a->selector, a->protocol, a->priority, 0);
	if (i < 0) {
		note(n, "app.refused=not_in_firmware_table");
		return -EINVAL;
	}
	fwapp_remove(w, i, &h->local);
	if (a->selector != X_SEL_DSCP) {
		note(n, "app.status=ICE_DCB_HW_CHG");
		return HW_CHG;
	}
	w->mapped[a->protocol / 8] &= (uint8_t)~(1u << (a->protocol % 8));
	w->dscp[a->protocol] = (uint8_t)(a->protocol % 8);
	if (!memcmp(w->mapped, "\0\0\0\0\0\0\0\0", 8) && w->dscp_mode) {
		struct fwcfg dflt;
		note(n, "ice.qos_mode=vlan");
		w->dscp_mode = 0;
		memset(&h->local, 0, sizeof h->local);
		sw_default(&dflt);
		err = pf_dcb_cfg(d, &dflt, n);
	} else {
		err = pf_dcb_cfg(d, w, n);
	}
	if (err == RST)
		link_reset(d, 1, n);
	if (err == NO_HW_CHG)
		err = HW_CHG;
	if (err > 0)
		note(n, "app.status=ICE_DCB_HW_CHG");
	return err;
}

static uint8_t setdcbx(struct drv *d, uint8_t mode, struct note *n)
{
	const char *why = NULL;

	if (d->fw_agent)
		why = "fw_lldp_agent";
	else if (dcbx_unsupported(mode))
		why = "mode_unsupported";
	else if (mode == d->dcbx)
		why = "mode_unchanged";
	else if (d->hw.local.dscp_mode)
		why = "dscp_qos_mode";
	if (dcbx_take(d, mode, why, n) == 0)
		return RST;
	note(n, "ice.status=ICE_DCB_NO_HW_CHG");
	return NO_HW_CHG;
}

/* The CEE ops i40e has alike are fwcfg_cee() (models.c); these are ice's own. */
static int cee(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	       struct note *n)
{
	struct hw *h = &d->hw;
	int on = fwcfg_cee_on(d);
	uint8_t v;

	switch (cmd) {
	case DCB_CMD_GSTATE:
		put_u8(r, DCB_ATTR_STATE, 1);
		return 0;
	case DCB_CMD_SSTATE:
		u8_of(tb[DCB_ATTR_STATE], &v);
		if (!on || !!v == h->dcb_on)
			return status_reply(r, DCB_ATTR_STATE, status, NO_HW_CHG);
		h->dcb_on = !!v;
		if (v)
			h->want = h->local;
		return status_reply(r, DCB_ATTR_STATE, status, HW_CHG);
	case DCB_CMD_PFC_SCFG: /* noted here, then set as i40e sets it */
		note(n, "ice.cee=%s", on ? "desired" : "ignored_not_cee");
		break;
	case DCB_CMD_SET_ALL:
		if (on && pf_dcb_cfg(d, &h->want, n) == RST)
			return status_reply(r, DCB_ATTR_SET_ALL, status, RST);
		return status_reply(r, DCB_ATTR_SET_ALL, status, NO_HW_CHG);
	}
	return fwcfg_cee(d, cmd, tb, r, status, n, "desired");
}

const struct model model_ice = {
	.name = "ice",
	.ops = OP_GETSTATE | OP_SETSTATE | OP_PG_GET | OP_PG_SET | OP_PFCCFG_GET |
	       OP_PFCCFG_SET | OP_SETALL | OP_GETCAP | OP_GETNUMTCS | OP_PFCSTATE_GET |
	       OP_PERMHWADDR,
	.caps = {CAPS_PG_PFC_8TCS},
	.init = init,
	.getets = getets,
	.setets = setets,
	.getpfc = getpfc,
	.setpfc = setpfc,
	.setapp = setapp,
	.delapp = delapp,
	.setdcbx = setdcbx,
	.cee = cee,
};
