/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the mlx5 model, a
 * ConnectX port as mlx5_core's dcbnl ops drive it. Facts from
 * drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c (en_dcbnl) and
 * en/port_buffer.c (port_buffer), by function:
 *
 * ops (mlx5e_dcbnl_ops): ieee_getets/setets, ieee_getmaxrate/setmaxrate,
 *   ieee_getpfc/setpfc, ieee_setapp/delapp, getdcbx/setdcbx,
 *   dcbnl_getbuffer/setbuffer; CEE: setall, getstate, getpermhwaddr,
 *   setpgtccfgtx, setpgbwgcfgtx, getpgtccfgtx, getpgbwgcfgtx, setpfccfg,
 *   getpfccfg, getcap, getnumtcs, getpfcstate, setpfcstate. No Rx PG ops:
 *   dcbnl.c's __dcbnl_pg_getcfg/__dcbnl_pg_setcfg want all four, so every
 *   PGTX/PGRX get and set is EOPNOTSUPP; no setstate, setnumtcs, getapp,
 *   setapp (CEE: the kernel's dcb_getapp/dcb_setapp), apptrust.
 * power-on (mlx5e_dcbnl_initialize, mlx5e_ets_init): DCBX cap CEE|IEEE,
 *   plus HOST unless the firmware runs DCBX (mlx5e_dcbnl_query_dcbx_mode:
 *   anything but HOST is AUTO); ETS: every TC vendor TSA at 100 %, prio_tc
 *   1,0,2,3,4,5,6,7; cable length 7 m (MLX5E_DEFAULT_CABLE_LEN); trust PCP
 *   (mlx5e_trust_initialize), no DSCP APP entries.
 * ETS (mlx5e_dcbnl_ieee_setets, mlx5e_dbcnl_validate_ets): a prio_tc of 8
 *   or more (MLX5E_MAX_PRIORITY) is EINVAL; when some TC is ETS the ETS
 *   bandwidths must sum to 100, else EINVAL (zero_sum_allowed only quiets
 *   the message). mlx5e_dcbnl_ieee_setets_core programs prio_tc, a TC group
 *   per TC (mlx5e_build_tc_group: vendor TCs group 7, strict TCs from group
 *   1 or 2 upward, ETS TCs group 0, or 1 when some ETS TC has 0 %) and a
 *   bandwidth per TC (mlx5e_build_tc_tx_bw: strict and vendor 100 %, 0 % ETS
 *   TCs share 100 % in their group); the TSA requested is kept in the
 *   driver (priv->dcbx.tc_tsa). A TSA it does not know (CBS) leaves group and
 *   bandwidth unset in the driver: 0 here.
 * ETS read back (mlx5e_dcbnl_ieee_getets): bandwidth as programmed, so a
 *   strict TC reads 100 %; when an ETS TC of group 1 is under 100 % the
 *   group 0 TCs read 0 %; a TC under 100 % reads ETS, a group-7 TC vendor
 *   (when no TC is in group 6), others the TSA kept. willing, cbs, the Rx
 *   and reco fields read 0.
 * PFC (mlx5e_dcbnl_ieee_setpfc, mlx5e_dcbnl_ieee_getpfc): a pfc_en that
 *   differs is programmed and the port link toggled (mlx5_toggle_port_link:
 *   down and up when the port is up); delay is the cable length (kept, read
 *   back); mbc is not kept; pfc_cap 8 (mlx5_max_tc + 1).
 * APP (mlx5e_dcbnl_ieee_setapp/delapp): a selector other than DSCP, or a
 *   DSCP of 64 or more, is EINVAL. setapp: the first DSCP entry switches
 *   the port to DSCP trust; the DSCP's old entry (its priority as
 *   programmed) leaves the kernel table and the new one goes in: a DSCP is
 *   replaced, never EEXIST. delapp: no DSCP entry at all, or a priority
 *   other than the one programmed, is ENOENT; the last one deleted switches
 *   back to PCP trust.
 * DCBX (mlx5e_dcbnl_setdcbx, getdcbx, getcap): LLD_MANAGED is refused (1);
 *   mode 0 hands DCBX to the firmware (HOST dropped, 0); a mode without
 *   HOST is refused (1); otherwise the port goes host-managed and the cap
 *   becomes the mode as given. GCAP's DCBX is the cap | CEE | IEEE; PG, PFC
 *   1; UP2TC, GSP, BCN 0; PG_TCS, PFC_TCS 0x80 (1 << mlx5_max_tc).
 * CEE (mlx5e_dcbnl_getstate, setpfccfg, getpfccfg, getpfcstate,
 *   setpfcstate, setall): GSTATE is always 1; PFC_GCFG and PFC_GSTATE read
 *   the PFC programmed; PFC_SCFG (0 or 1 only) and PFC_SSTATE are kept for
 *   SET_ALL; SET_ALL builds an ETS from the CEE priority groups, whose
 *   bandwidths the unreachable PG setters never fill, so its validation
 *   fails and it answers MLX5_DCB_NO_CHG (1), programming nothing.
 * buffer (mlx5e_dcbnl_getbuffer/setbuffer, port_buffer's
 *   mlx5e_port_manual_buffer_config): nothing changed, nothing done; a
 *   buffer holding a priority with PFC on is lossless; a lossless buffer of
 *   size 0 is EINVAL, one under the minimum (xoff + MTU + one cell, from
 *   mlx5e_calculate_buf_sz_and_thresholds at 100 Gb/s, the cable length and
 *   the port MTU) ENOMEM; sizes over the total are EINVAL; sizes are kept
 *   in 128-byte cells (port_set_buffer, rounded up).
 */
#include "dcbdrv.h"

#define CELL 128u

/* mlx5e_build_tc_group and mlx5e_build_tc_tx_bw, into h->tc_group/h->bw */
static void ets_core(struct hw *h, const struct ieee_ets *e)
{
	int any_ets = 0, zero = 0, strict, n0 = 0, last0 = -1, share;

	for (int i = 0; i < 8; i++)
		if (e->tc_tsa[i] == X_TSA_ETS) {
			any_ets = 1;
			if (!e->tc_tx_bw[i])
				zero = 1;
		}
	strict = any_ets + zero;
	for (int i = 0; i < 8; i++)
		if (e->tc_tsa[i] == X_TSA_ETS && !e->tc_tx_bw[i]) {
			n0++;
			last0 = i;
		}
	share = n0 ? 100 / n0 : 0;
	for (int i = 0; i < 8; i++) {
		switch (e->tc_tsa[i]) {
		case X_TSA_VENDOR:
			h->tc_group[i] = 7;
			h->bw[i] = 100;
			break;
		case X_TSA_STRICT:
			h->tc_group[i] = (uint8_t)strict++;
			h->bw[i] = 100;
			break;
		case X_TSA_ETS:
			h->tc_group[i] = e->tc_tx_bw[i] && zero ? 1 : 0;
			h->bw[i] = e->tc_tx_bw[i] ? e->tc_tx_bw[i] : (uint8_t)share;
			break;
		default:
			h->tc_group[i] = 0;
			h->bw[i] = 0;
		}
	}
	if (last0 >= 0)
		h->bw[last0] = (uint8_t)(h->bw[last0] + 100 % n0);
	memcpy(h->ets.prio_tc, e->prio_tc, 8);
	memcpy(h->ets.tc_tsa, e->tc_tsa, 8);
}

static void init(struct drv *d)
{
	struct ieee_ets e;

	memset(&e, 0, sizeof e);
	d->dcb_state = 1;
	d->hw.fw_mode = d->fw_agent;
	d->dcbx = DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE;
	if (!d->fw_agent)
		d->dcbx |= DCB_CAP_DCBX_HOST;
	for (int i = 0; i < 8; i++) {
		e.tc_tx_bw[i] = 100;
		e.tc_tsa[i] = X_TSA_VENDOR;
		e.prio_tc[i] = (uint8_t)i;
	}
	e.prio_tc[0] = 1;
	e.prio_tc[1] = 0;
	ets_core(&d->hw, &e);
	d->hw.pfc.pfc_cap = 8;
	d->hw.pfc.delay = 7;
}

static int getets(struct drv *d, struct ieee_ets *e)
{
	struct hw *h = &d->hw;
	int zero = 0, g6 = 0;

	e->ets_cap = 8;
	memcpy(e->prio_tc, h->ets.prio_tc, 8);
	for (int i = 0; i < 8; i++) {
		e->tc_tx_bw[i] = h->bw[i];
		if (h->bw[i] < 100 && h->tc_group[i] == 1)
			zero = 1;
		if (h->tc_group[i] == 6)
			g6 = 1;
	}
	if (zero)
		for (int i = 0; i < 8; i++)
			if (h->tc_group[i] == 0)
				e->tc_tx_bw[i] = 0;
	for (int i = 0; i < 8; i++) {
		if (h->bw[i] < 100)
			h->ets.tc_tsa[i] = X_TSA_ETS;
		else if (h->tc_group[i] == 7 && !g6)
			h->ets.tc_tsa[i] = X_TSA_VENDOR;
	}
	memcpy(e->tc_tsa, h->ets.tc_tsa, 8);
	return 0;
}

static int setets(struct drv *d, const struct ieee_ets *e, struct note *n)
{
	int sum = 0, have = 0;

	for (int i = 0; i < 8; i++)
		if (e->prio_tc[i] >= 8) {
			note(n, "ets.refused=prio_%d_tc_%u_over_7", i, e->prio_tc[i]);
			return -EINVAL;
		}
	for (int i = 0; i < 8; i++)
		if (e->tc_tsa[i] == X_TSA_ETS) {
			have = 1;
			sum += e->tc_tx_bw[i];
		}
	if (have && sum != 100) {
		note(n, "ets.refused=ets_bw_sum_%d_not_100", sum);
		return -EINVAL;
	}
	for (int i = 0; i < 8; i++)
		if (e->tc_tsa[i] != X_TSA_ETS && e->tc_tsa[i] != X_TSA_STRICT &&
		    e->tc_tsa[i] != X_TSA_VENDOR)
			note(n, "ets.note=tc_%d_tsa_%u_unknown_to_driver", i, e->tc_tsa[i]);
	ets_core(&d->hw, e);
	return 0;
}

static int getpfc(struct drv *d, struct ieee_pfc *p)
{
	p->pfc_cap = 8;
	p->pfc_en = d->hw.pfc.pfc_en;
	p->delay = d->hw.pfc.delay;
	return 0;
}

static int setpfc(struct drv *d, const struct ieee_pfc *p, struct note *n)
{
	if (p->pfc_en != d->hw.pfc.pfc_en) {
		d->hw.pfc.pfc_en = p->pfc_en;
		link_reset(d, 0, n); /* mlx5_toggle_port_link */
	}
	if (p->delay != d->hw.pfc.delay) {
		d->hw.pfc.delay = p->delay;
		note(n, "mlx5.cable_len=%u", p->delay);
	}
	return 0;
}

static int app_checks(const struct dcb_app *a, struct note *n)
{
	if (a->selector != X_SEL_DSCP) {
		note(n, "app.refused=sel_%u_not_dscp", a->selector);
		return -EINVAL;
	}
	if (a->protocol >= 64) {
		note(n, "app.refused=dscp_%u_over_63", a->protocol);
		return -EINVAL;
	}
	return 0;
}

static int setapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct hw *h = &d->hw;
	struct dcb_app old;
	int err = app_checks(a, n), is_new;

	if (err)
		return err;
	old = (struct dcb_app){X_SEL_DSCP, h->dscp[a->protocol], a->protocol};
	if (!h->dscp_cnt) {
		h->trust = 1;
		note(n, "mlx5.trust=dscp");
	}
	h->dscp[a->protocol] = a->priority;
	is_new = kapp_del(d, &old) != 0;
	err = kapp_add(d, a);
	if (err)
		return err;
	if (is_new)
		h->dscp_cnt++;
	return 0;
}

static int delapp(struct drv *d, const struct dcb_app *a, struct note *n)
{
	struct hw *h = &d->hw;
	int err = app_checks(a, n);

	if (err)
		return err;
	if (!h->dscp_cnt) {
		note(n, "app.refused=no_dscp_entries");
		return -ENOENT;
	}
	if (a->priority != h->dscp[a->protocol]) {
		note(n, "app.refused=dscp_%u_programmed_prio_%u", a->protocol, h->dscp[a->protocol]);
		return -ENOENT;
	}
	err = kapp_del(d, a);
	if (err)
		return err;
	h->dscp[a->protocol] = 0;
	if (!--h->dscp_cnt) {
		h->trust = 0;
		note(n, "mlx5.trust=pcp");
	}
	return 0;
}

/* The smallest lossless buffer (mlx5e_calculate_buf_sz_and_thresholds at
 * 100 Gb/s: xoff + max_mtu + one cell), the port MTU taken as the
 * interface's plus 22 (Ethernet header, VLAN tag, FCS). */
static uint32_t min_lossless(const struct drv *d)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 1500, speed = 100000, cable, bmx, xon, xoff;
	uint32_t mac_rsp = 394 * 64, cell_factor = CELL * 100 / (20 + 64);

	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", d->ifname);
	if (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0)
		mtu = (uint32_t)ifr.ifr_mtu;
	if (s >= 0)
		r_close(s);
	mtu += 22;
	cable = d->hw.pfc.delay * (speed / 1000) * 1262 / 1000;
	bmx = (cable + 2 * mac_rsp + mtu) * cell_factor / 100 + mtu;
	xon = bmx - mtu + speed / 8;
	xoff = xon + 2 * mtu;
	return xoff + mtu + CELL;
}

static int set_buffer(struct drv *d, const struct xbuffer *b, struct note *n)
{
	const uint8_t *p2b = d->buf.prio2buffer;
	int p2b_changed = memcmp(b->prio2buffer, d->buf.prio2buffer, 8) != 0;
	int size_changed = 0;
	uint64_t total = 0;

	for (int i = 0; i < 8; i++)
		if (b->buffer_size[i] != d->buf.buffer_size[i])
			size_changed = 1;
	if (!p2b_changed && !size_changed)
		return 0;
	if (p2b_changed)
		p2b = b->prio2buffer;
	if (size_changed) {
		uint32_t min = min_lossless(d);
		for (int i = 0; i < 8; i++) {
			int lossless = 0;
			for (int prio = 0; prio < 8; prio++)
				if (p2b[prio] == i && (d->hw.pfc.pfc_en & (1u << prio)))
					lossless = 1;
			if (lossless && !b->buffer_size[i]) {
				note(n, "buffer.refused=lossless_buffer_%d_size_0", i);
				return -EINVAL;
			}
			if (lossless && b->buffer_size[i] < min) {
				note(n, "buffer.refused=lossless_buffer_%d_size_%u_under_%u", i,
				     b->buffer_size[i], min);
				return -ENOMEM;
			}
			total += b->buffer_size[i];
		}
		if (total > d->buf.total_size) {
			note(n, "buffer.refused=sum_%llu_over_total_%u", (unsigned long long)total,
			     d->buf.total_size);
			return -EINVAL;
		}
		for (int i = 0; i < 8; i++)
			d->buf.buffer_size[i] = (b->buffer_size[i] + CELL - 1) / CELL * CELL;
	}
	memcpy(d->buf.prio2buffer, p2b, 8);
	return 0;
}

static uint8_t setdcbx(struct drv *d, uint8_t mode, struct note *n)
{
	if (mode & DCB_CAP_DCBX_LLD_MANAGED)
		return 1;
	if (!mode) {
		if (!d->hw.fw_mode) {
			d->hw.fw_mode = 1;
			d->dcbx &= (uint8_t)~DCB_CAP_DCBX_HOST;
			note(n, "mlx5.dcbx=firmware");
		}
		return 0;
	}
	if (!(mode & DCB_CAP_DCBX_HOST))
		return 1;
	if (d->hw.fw_mode)
		note(n, "mlx5.dcbx=host");
	d->hw.fw_mode = 0;
	d->dcbx = mode;
	return 0;
}

static uint8_t cap_dcbx(const struct drv *d)
{
	return d->dcbx | DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE;
}

static int cee(struct drv *d, int cmd, const struct nlattr **tb, struct mb *r, int *status,
	       struct note *n)
{
	const struct nlattr *sub[DCB_PFC_UP_ATTR_MAX + 1];
	uint8_t up[8], v;

	switch (cmd) {
	case DCB_CMD_GSTATE:
		put_u8(r, DCB_ATTR_STATE, 1);
		return 0;
	case DCB_CMD_PFC_GCFG:
		for (int i = 0; i < 8; i++)
			up[i] = (d->hw.pfc.pfc_en >> i) & 1;
		cee_pfc_get(up, tb[DCB_ATTR_PFC_CFG], r);
		return 0;
	case DCB_CMD_PFC_SCFG:
		parse(DATA(tb[DCB_ATTR_PFC_CFG]), DLEN(tb[DCB_ATTR_PFC_CFG]), sub,
		      DCB_PFC_UP_ATTR_MAX);
		for (int i = 0; i < 8; i++)
			if (u8_of(sub[DCB_PFC_UP_ATTR_0 + i], &v) && v <= 1)
				d->hw.cee_pfc[i] = v;
		note8(n, "cee.pfc_up", d->hw.cee_pfc);
		return status_reply(r, DCB_ATTR_PFC_CFG, status, 0);
	case DCB_CMD_PFC_GSTATE:
		put_u8(r, DCB_ATTR_PFC_STATE, d->hw.pfc.pfc_en ? 1 : 0);
		return 0;
	case DCB_CMD_PFC_SSTATE:
		if (u8_of(tb[DCB_ATTR_PFC_STATE], &v) && v <= 1)
			d->hw.cee_pfc_state = v;
		return status_reply(r, DCB_ATTR_PFC_STATE, status, 0);
	case DCB_CMD_SET_ALL:
		note(n, "cee.refused=pg_bw_sum_0_not_100 mlx5.status=MLX5_DCB_NO_CHG");
		return status_reply(r, DCB_ATTR_SET_ALL, status, 1);
	default:
		return CEE_DEFAULT;
	}
}

const struct model model_mlx5 = {
	.name = "mlx5",
	.ops = OP_GETSTATE | OP_PFCCFG_GET | OP_PFCCFG_SET | OP_SETALL | OP_GETCAP |
	       OP_GETNUMTCS | OP_PFCSTATE_GET | OP_PFCSTATE_SET | OP_PERMHWADDR,
	.caps = {CAPS_PG_PFC_8TCS},
	.init = init,
	.cap_dcbx = cap_dcbx,
	.getets = getets,
	.setets = setets,
	.getpfc = getpfc,
	.setpfc = setpfc,
	.setapp = setapp,
	.delapp = delapp,
	.setbuffer = set_buffer,
	.setdcbx = setdcbx,
	.cee = cee,
};
