/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the hns3 model, a HiSilicon
 * HNS3 port as the hns3 and hclge drivers' dcbnl ops drive it. Like bnxt's,
 * the driver has no CEE op, no getcap and no permanent-address op: dcbnl.c
 * answers every CEE command EOPNOTSUPP; CEE APP entries go through the
 * kernel's dcb_getapp/dcb_setapp.
 *
 * Facts from drivers/net/ethernet/hisilicon/hns3/hns3_dcbnl.c (nl),
 * hns3pf/hclge_dcb.c (dcb) and hns3pf/hclge_tm.c (tm), by function:
 * ops (nl hns3_dcbnl_ops): ieee_getets/setets, ieee_getpfc/setpfc,
 *   ieee_setapp/delapp, getdcbx/setdcbx (a reset in progress, EBUSY, is not
 *   modelled). No firmware DCBX agent: LOSSLESS_DCBDRV_FW_AGENT does nothing.
 * power-on (dcb hclge_dcb_ops_set, tm hclge_tm_tc_info_init,
 *   hclge_tm_pg_info_init): DCBX cap IEEE | HOST; one TC: TC0 DWRR (ETS) at
 *   100 %, TCs 1-7 strict (weight 1, read as 0 %), every priority on TC0,
 *   PFC off; no DSCP mapped (HNAE3_PRIO_ID_INVALID). 8 TCs, pfc_cap 8.
 * ETS (dcb hclge_ieee_setets, hclge_ets_validate, hclge_dcb_common_validate,
 *   hclge_ets_sch_mode_validate): no IEEE in the cap: EINVAL; the TCs used
 *   are the highest prio_tc + 1, over 8 EINVAL; a TSA other than strict or
 *   ETS, an ETS TC the priorities do not use ("tc disabled"), an ETS TC at
 *   0 %, or ETS bandwidths not summing to 100: EINVAL. A change of prio_tc,
 *   of a TC's strict/ETS mode or of the TC count takes the NIC down and up
 *   (hclge_notify_down_uinit ... hclge_notify_init_up: a link flap here); a
 *   bandwidth change alone does not. Read back (hclge_tm_info_to_ieee_ets):
 *   willing 1, ets_cap 8, prio_tc, bandwidth for the TCs in use (0 beyond),
 *   strict or ETS per TC.
 * PFC (dcb hclge_ieee_setpfc/getpfc): no IEEE: EINVAL; the same pfc_en:
 *   nothing (0); else kept (per priority; the hardware map per TC) and the
 *   NIC taken down and up (a flap). mbc and delay read 0.
 * APP (dcb hclge_ieee_setapp/delapp): a selector other than DSCP, a DSCP of
 *   64 or more, a priority of 8 or more: EINVAL; the DSCP's priority already
 *   mapped: nothing (0, not even the kernel table); else the kernel table
 *   (EEXIST), the DSCP's old entry leaves it (a DSCP is replaced), DSCP
 *   mode. Delete: the same checks and a priority other than the one mapped
 *   are EINVAL (not ENOENT); the last DSCP deleted goes back to priority
 *   mode.
 * DCBX (dcb hclge_setdcbx): LLD_MANAGED, CEE or no HOST: 1; otherwise the
 *   cap becomes the mode (0).
 */
#include "dcbdrv.h"

#define HOST DCB_CAP_DCBX_HOST
#define LLD DCB_CAP_DCBX_LLD_MANAGED
#define CEE DCB_CAP_DCBX_VER_CEE
#define IEEE DCB_CAP_DCBX_VER_IEEE

#define PRIO_INVALID 0xff /* HNAE3_PRIO_ID_INVALID */

static void hns3_init(struct drv *d)
{
	struct hw *h = &d->hw;

	d->dcbx = IEEE | HOST;
	h->num_tc = 1;
	for (int i = 0; i < 8; i++) {
		h->ets.tc_tsa[i] = i ? X_TSA_STRICT : X_TSA_ETS;
		h->ets.tc_tx_bw[i] = i ? 1 : 100;
	}
	memset(h->dscp, PRIO_INVALID, sizeof h->dscp);
}

static int hns3_setets(struct drv *d, const struct ieee_ets *e, struct note *n)
{
	struct hw *h = &d->hw;
	int num = 0, changed = 0, total = 0, has = 0, err = ieee_gate(d, "ets", 0, n);

	if (err)
		return err;
	for (int i = 0; i < 8; i++) {
		if (e->prio_tc[i] != h->ets.prio_tc[i])
			changed = 1;
		if (e->prio_tc[i] > num)
			num = e->prio_tc[i];
	}
	num++;
	if (num > 8) {
		note(n, "ets.refused=%d_tcs_over_8", num);
		return -EINVAL;
	}
	for (int i = 0; i < 8; i++) {
		if (e->tc_tsa[i] == X_TSA_STRICT) {
			if (h->ets.tc_tsa[i] != X_TSA_STRICT)
				changed = 1;
		} else if (e->tc_tsa[i] == X_TSA_ETS) {
			if (i >= num) {
				note(n, "ets.refused=tc_%d_disabled_cannot_set_ets_bw", i);
				return -EINVAL;
			}
			if (!e->tc_tx_bw[i]) {
				note(n, "ets.refused=tc_%d_ets_bw_0", i);
				return -EINVAL;
			}
			if (h->ets.tc_tsa[i] != X_TSA_ETS)
				changed = 1;
			total += e->tc_tx_bw[i];
			has = 1;
		} else {
			note(n, "ets.refused=tc_%d_tsa_%u_unsupported", i, e->tc_tsa[i]);
			return -EINVAL;
		}
	}
	if (has && total != 100) {
		note(n, "ets.refused=ets_bw_sum_%d_not_100", total);
		return -EINVAL;
	}
	if (num != h->num_tc)
		changed = 1;
	h->num_tc = (uint8_t)num;
	for (int i = 0; i < 8; i++) {
		h->ets.tc_tsa[i] = e->tc_tsa[i];
		h->ets.tc_tx_bw[i] = e->tc_tsa[i] == X_TSA_ETS ? e->tc_tx_bw[i] : 0;
	}
	memcpy(h->ets.prio_tc, e->prio_tc, 8);
	if (changed)
		link_reset(d, 0, n); /* hclge_notify_down_uinit ... init_up */
	return 0;
}

static int hns3_getets(struct drv *d, struct ieee_ets *e)
{
	const struct hw *h = &d->hw;

	memset(e, 0, sizeof *e);
	e->willing = 1;
	e->ets_cap = 8;
	for (int i = 0; i < 8; i++) {
		e->prio_tc[i] = h->ets.prio_tc[i];
		e->tc_tx_bw[i] = i < h->num_tc ? h->ets.tc_tx_bw[i] : 0;
		e->tc_tsa[i] = h->ets.tc_tsa[i] == X_TSA_STRICT ? X_TSA_STRICT : X_TSA_ETS;
	}
	return 0;
}

static int hns3_setpfc(struct drv *d, const struct ieee_pfc *p, struct note *n)
{
	struct hw *h = &d->hw;
	uint8_t map = 0;
	int err = ieee_gate(d, "pfc", 0, n);

	if (err)
		return err;
	if (p->pfc_en == h->pfc.pfc_en)
		return 0;
	for (int i = 0; i < h->num_tc; i++)
		for (int j = 0; j < 8; j++)
			if (h->ets.prio_tc[j] == i && (p->pfc_en & (1u << j))) {
				map |= (uint8_t)(1u << i);
				break;
			}
	h->pfc_map = map;
	h->pfc.pfc_en = p->pfc_en;
	link_reset(d, 0, n); /* HNAE3_DOWN_CLIENT ... HNAE3_UP_CLIENT */
	return 0;
}

static int hns3_getpfc(struct drv *d, struct ieee_pfc *p)
{
	p->pfc_cap = 8;
	p->pfc_en = d->hw.pfc.pfc_en;
	return 0;
}

static int hns3_checks(const struct dcb_app *a, struct note *n)
{
	if (a->selector != X_SEL_DSCP || a->protocol >= 64 || a->priority >= 8) {
		note(n, "app.refused=%s", a->selector != X_SEL_DSCP ? "not_dscp" : "out_of_range");
		return -EINVAL;
	}
	return 0;
}

static int hns3_setapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct hw *h = &d->hw;
	struct dcb_app old;
	int err = hns3_checks(a, n);

	if (err)
		return err;
	if (a->priority == h->dscp[a->protocol]) {
		note(n, "hns3.dscp=already_mapped");
		return 0;
	}
	if ((err = kapp_add(d, a)) != 0)
		return err;
	old = (struct dcb_app){X_SEL_DSCP, h->dscp[a->protocol], a->protocol};
	h->dscp[a->protocol] = a->priority;
	h->trust = 1; /* HNAE3_TC_MAP_MODE_DSCP */
	if (old.priority == PRIO_INVALID) {
		h->dscp_cnt++;
		return 0;
	}
	return kapp_del(d, &old);
}

static int hns3_delapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct hw *h = &d->hw;
	int err = hns3_checks(a, n);

	if (err)
		return err;
	if (a->priority != h->dscp[a->protocol]) {
		note(n, "app.refused=dscp_%u_not_mapped_to_prio_%u", a->protocol, a->priority);
		return -EINVAL;
	}
	if ((err = kapp_del(d, a)) != 0)
		return err;
	h->dscp[a->protocol] = PRIO_INVALID;
	if (h->dscp_cnt)
		h->dscp_cnt--;
	if (!h->dscp_cnt)
		h->trust = 0; /* HNAE3_TC_MAP_MODE_PRIO */
	return 0;
}

static uint8_t hns3_setdcbx(struct drv *d, uint8_t mode, struct note *n)
{
	int bad = (mode & LLD) || (mode & CEE) || !(mode & HOST);

	return dcbx_take(d, mode, bad ? "mode_unsupported" : NULL, n);
}

const struct model model_hns3 = {
	.name = "hns3",
	.ops = 0,
	.init = hns3_init,
	.getets = hns3_getets,
	.setets = hns3_setets,
	.getpfc = hns3_getpfc,
	.setpfc = hns3_setpfc,
	.setapp = hns3_setapp,
	.delapp = hns3_delapp,
	.setdcbx = hns3_setdcbx,
};
