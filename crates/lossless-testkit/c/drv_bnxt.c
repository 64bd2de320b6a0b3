/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the bnxt model, a Broadcom
 * NetXtreme-C/E port as bnxt_en's dcbnl ops drive it. Like hns3's, the
 * driver has no CEE op, no getcap and no permanent-address op: dcbnl.c
 * answers every CEE command (GCAP, GSTATE, PG, PFC_CFG, SET_ALL, NUMTCS...)
 * EOPNOTSUPP; CEE APP entries go through the kernel's dcb_getapp/dcb_setapp.
 *
 * Facts from drivers/net/ethernet/broadcom/bnxt/bnxt_dcb.c (dcb) and
 * bnxt.c (main), by function:
 * ops (dcb dcbnl_ops): ieee_getets/setets, ieee_getpfc/setpfc,
 *   ieee_setapp/delapp, getdcbx/setdcbx.
 * the NIC modelled: 8 TCs and CoS queues (bp->max_tc), 2 of them lossless
 *   (bp->max_lltc; queues 1 and 2 have the lossless profile), DSCP 0..63
 *   (bnxt_hwrm_queue_dscp_qcaps with 6 DSCP bits); TC i on queue i.
 * power-on (dcb bnxt_dcb_init): DCBX cap IEEE | HOST; with the firmware
 *   LLDP and DCBX agents IEEE | LLD_MANAGED. No ETS or PFC record yet.
 * ETS (dcb bnxt_dcbnl_ieee_setets, bnxt_ets_validate): no IEEE or no HOST
 *   in the cap: EINVAL; a prio_tc over 8 (max_tc; "over", so 8 passes):
 *   EINVAL; the TCs below the highest prio_tc must be strict or ETS, else
 *   ENOTSUPP (524); their ETS bandwidths may sum to less than 100 but not
 *   more (EINVAL), and an ETS TC at 0 % with the others at 100 is EINVAL
 *   (starved). Then the TC count (highest prio_tc + 1, at most 8) is set up
 *   (main bnxt_setup_mq_tc: another count than the NIC's, 0 at power-on,
 *   closes and reopens a running NIC: a link flap here), and the request
 *   kept. Read back (bnxt_dcbnl_ieee_getets): ets_cap 8; before a set in
 *   host mode nothing else (zeros); after, cbs, Tx and Rx bandwidth, TSA,
 *   prio_tc as set (willing and reco 0).
 * PFC (dcb bnxt_dcbnl_ieee_setpfc, bnxt_hwrm_queue_pfc_cfg): same cap
 *   check; without an ETS record EINVAL; more TCs holding PFC priorities
 *   than lossless queues: EINVAL; a PFC TC on a lossy queue remaps the
 *   queues (bnxt_queue_remap: lossless TCs to lossless queues first, and
 *   the NIC closed and reopened); the request is kept whole (pfc_en, mbc,
 *   delay read back). pfc_cap is max_lltc (bnxt_dcbnl_ieee_getpfc).
 * APP (dcb bnxt_dcbnl_ieee_setapp/delapp, bnxt_dcbnl_ieee_dscp_app_prep):
 *   same cap check; any selector; a DSCP over 63: EINVAL; then the kernel
 *   table (EEXIST, ENOENT); RoCE (ethertype 0x8915, UDP 4791) and DSCP
 *   entries also go to the firmware.
 * DCBX (dcb bnxt_dcbnl_setdcbx): LLD_MANAGED in the cap: 1; a mode with
 *   HOST on a NIC whose firmware runs the LLDP agent, or with CEE, or
 *   without IEEE: 1; otherwise the cap becomes the mode (0), a mode
 *   without HOST included (then the setters refuse).
 */
#include "dcbdrv.h"

#define HOST DCB_CAP_DCBX_HOST
#define LLD DCB_CAP_DCBX_LLD_MANAGED
#define CEE DCB_CAP_DCBX_VER_CEE
#define IEEE DCB_CAP_DCBX_VER_IEEE
#define ENOTSUPP 524 /* the kernel's, not in userspace errno.h */

#define BNXT_MAX_TC 8
#define BNXT_MAX_LLTC 2
static int bnxt_lossless(int q)
{
	return q == 1 || q == 2;
}

static void bnxt_init(struct drv *d)
{
	d->dcbx = (uint8_t)(IEEE | (d->fw_agent ? LLD : HOST));
	for (int i = 0; i < 8; i++)
		d->hw.qidx[i] = (uint8_t)i;
}

static int bnxt_gate(const struct drv *d, const char *what, struct note *n)
{
	if (!(d->dcbx & IEEE) || !(d->dcbx & HOST)) {
		note(n, "%s.refused=%s", what, d->dcbx & LLD ? "fw_lldp_agent" : "dcbx_not_host_ieee");
		return -EINVAL;
	}
	return 0;
}

static int bnxt_setets(struct drv *d, const struct ieee_ets *e, struct note *n)
{
	struct hw *h = &d->hw;
	int max = 0, total = 0, zero = 0, tc, err = bnxt_gate(d, "ets", n);

	if (err)
		return err;
	for (int i = 0; i < 8; i++) {
		if (e->prio_tc[i] > BNXT_MAX_TC) {
			note(n, "ets.refused=prio_%d_tc_%u_over_%d", i, e->prio_tc[i], BNXT_MAX_TC);
			return -EINVAL;
		}
		if (e->prio_tc[i] > max)
			max = e->prio_tc[i];
	}
	for (int i = 0; i < max; i++) {
		if (e->tc_tsa[i] == X_TSA_ETS) {
			total += e->tc_tx_bw[i];
			zero |= !e->tc_tx_bw[i];
		} else if (e->tc_tsa[i] != X_TSA_STRICT) {
			note(n, "ets.refused=tc_%d_tsa_%u_unsupported", i, e->tc_tsa[i]);
			return -ENOTSUPP;
		}
	}
	if (total > 100) {
		note(n, "ets.refused=ets_bw_sum_%d_over_100", total);
		return -EINVAL;
	}
	if (zero && total == 100) {
		note(n, "ets.refused=ets_tc_at_0_starved");
		return -EINVAL;
	}
	tc = max >= BNXT_MAX_TC ? BNXT_MAX_TC : max + 1;
	if (!h->has_ets) {
		h->has_ets = 1;
		memset(h->ets.prio_tc, 8, 8);
	}
	if (tc != h->num_tc) { /* bnxt_setup_mq_tc */
		link_reset(d, 0, n);
		h->num_tc = (uint8_t)tc;
		note(n, "bnxt.tcs=%d", tc);
	}
	h->ets = *e;
	return 0;
}

static int bnxt_getets(struct drv *d, struct ieee_ets *e)
{
	return ets_as_set(d, e, BNXT_MAX_TC);
}

/* bnxt_queue_remap(): lossless TCs to lossless queues first */
static void bnxt_remap(struct hw *h, unsigned mask)
{
	unsigned qmap = 0;

	for (int i = 0, j = 0; i < BNXT_MAX_TC && j < BNXT_MAX_TC;) {
		if (mask & (1u << i)) {
			if (bnxt_lossless(j)) {
				h->qidx[i] = (uint8_t)j;
				qmap |= 1u << j;
				i++;
			}
			j++;
			continue;
		}
		i++;
	}
	for (int i = 0, j = 0; i < BNXT_MAX_TC; i++) {
		if (mask & (1u << i))
			continue;
		while (j < BNXT_MAX_TC && (qmap & (1u << j)))
			j++;
		h->qidx[i] = (uint8_t)j;
		qmap |= 1u << j;
		j++;
	}
}

static int bnxt_setpfc(struct drv *d, const struct ieee_pfc *p, struct note *n)
{
	struct hw *h = &d->hw;
	unsigned tc_mask = 0;
	int count = 0, remap = 0, err = bnxt_gate(d, "pfc", n);

	if (err)
		return err;
	h->has_pfc = 1;
	if (!h->has_ets) {
		note(n, "pfc.refused=no_ets_set_yet");
		return -EINVAL;
	}
	for (int i = 0; i < BNXT_MAX_TC; i++) {
		for (int pri = 0; pri < 8; pri++)
			if ((p->pfc_en & (1u << pri)) && h->ets.prio_tc[pri] == i)
				tc_mask |= 1u << i;
		if (tc_mask & (1u << i))
			count++;
	}
	if (count > BNXT_MAX_LLTC) {
		note(n, "pfc.refused=%d_lossless_tcs_over_%d", count, BNXT_MAX_LLTC);
		return -EINVAL;
	}
	for (int i = 0; i < BNXT_MAX_TC; i++)
		if ((tc_mask & (1u << i)) && !bnxt_lossless(h->qidx[i]))
			remap = 1;
	if (remap) {
		bnxt_remap(h, tc_mask);
		note8(n, "bnxt.tc_queue", h->qidx);
		link_reset(d, 0, n);
	}
	h->pfc.pfc_en = p->pfc_en;
	h->pfc.mbc = p->mbc;
	h->pfc.delay = p->delay;
	return 0;
}

static int bnxt_getpfc(struct drv *d, struct ieee_pfc *p)
{
	return pfc_as_set(d, p, BNXT_MAX_LLTC);
}

static int bnxt_dscp_prep(const struct dcb_app *a, struct note *n)
{
	if (a->selector == X_SEL_DSCP && a->protocol > 63) {
		note(n, "app.refused=dscp_%u_over_63", a->protocol);
		return -EINVAL;
	}
	return 0;
}

static int bnxt_setapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	int err = bnxt_gate(d, "app", n);

	if (!err)
		err = bnxt_dscp_prep(a, n);
	if (!err)
		err = kapp_add(d, a);
	if (!err && ((a->selector == IEEE_8021QAZ_APP_SEL_ETHERTYPE && a->protocol == 0x8915) ||
		     (a->selector == IEEE_8021QAZ_APP_SEL_DGRAM && a->protocol == 4791) ||
		     a->selector == X_SEL_DSCP))
		note(n, "bnxt.firmware_app=added");
	return err;
}

static int bnxt_delapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	int err = bnxt_gate(d, "app", n);

	if (!err)
		err = bnxt_dscp_prep(a, n);
	return err ? err : kapp_del(d, a);
}

static uint8_t bnxt_setdcbx(struct drv *d, uint8_t mode, struct note *n)
{
	const char *why = NULL;

	if (d->dcbx & LLD)
		why = "fw_dcbx_agent";
	else if ((mode & HOST) && (d->fw_agent || (mode & CEE) || !(mode & IEEE)))
		why = d->fw_agent ? "fw_lldp_agent" : "ieee_only";
	return dcbx_take(d, mode, why, n);
}

const struct model model_bnxt = {
	.name = "bnxt",
	.ops = 0,
	.init = bnxt_init,
	.getets = bnxt_getets,
	.setets = bnxt_setets,
	.getpfc = bnxt_getpfc,
	.setpfc = bnxt_setpfc,
	.setapp = bnxt_setapp,
	.delapp = bnxt_delapp,
	.setdcbx = bnxt_setdcbx,
};

