/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): what each modelled driver's
 * ethtool ops answer: link flow control (get/set_pauseparam), private flags
 * (get_sset_count/get_strings for ETH_SS_PRIV_FLAGS, get/set_priv_flags), the
 * statistics' names (ETH_SS_STATS) and get_pause_stats. ethtool.c (generic
 * netlink) and ethtool_ioctl.c (SIOCETHTOOL) do what net/ethtool does around
 * these ops. Facts from the drivers' source, by function; nothing copied.
 *
 * generic: a DCB driver that takes any link flow control (autoneg included)
 *   and keeps it; the rest of its ethtool identity is the veth's (the kernel
 *   answers: driver "veth", veth's statistics, no private flags).
 * mlx5 (mellanox/mlx5/core/en_ethtool.c):
 *   pause: mlx5e_ethtool_get_pauseparam reports the port's PFCC pause and
 *   never autoneg; mlx5e_ethtool_set_pauseparam refuses autoneg with EINVAL
 *   (no message) and programs rx/tx; it does not look at PFC (what the
 *   firmware does with global pause and PFC together is not in the kernel).
 *   flags: mlx5e_priv_flags, in order rx_cqe_moder, tx_cqe_moder,
 *   rx_cqe_compress, rx_striding_rq, rx_no_csum_complete, xdp_tx_mpwqe,
 *   skb_tx_mpwqe, tx_port_ts; mlx5e_set_priv_flags runs each changed flag's
 *   handler in order (the modelled ConnectX has every capability the handlers
 *   ask for, no HW-GRO, HTB or MQPRIO channel mode: they all succeed).
 *   Power-on (mlx5e_build_nic_params: CQE-based RX moderation where the
 *   device starts periods from CQEs, striding RQ, the MPWQE flags): 0x69.
 *   stats (en_stats.c): the per-priority traffic group (rx_prio%d_bytes,
 *   _packets, _discards, tx_prio%d_bytes, _packets), then per priority with
 *   PFC on (mlx5e_query_pfc_combined: the port's PFC) rx_prio%d_pause,
 *   rx_prio%d_pause_duration, tx_prio%d_pause, tx_prio%d_pause_duration,
 *   rx_prio%d_pause_transition, the same five as rx_global_* / tx_global_*
 *   while global pause is on (mlx5e_query_global_pause_combined), then
 *   tx_pause_storm_warning_events and tx_pause_storm_error_events; the
 *   per-port buffer congestion group (sbcam_reg): rx_prio%d_buf_discard,
 *   rx_prio%d_cong_discard, rx_prio%d_marked. Before them, of the software
 *   and IEEE 802.3 groups, rx/tx packets and bytes and rx/tx_pause_ctrl_phy,
 *   which mlx5e_stats_pause_get reports as the pause statistics.
 * ice (intel/ice/ice_ethtool.c):
 *   pause: ice_get_pauseparam reports autoneg from the PHY, and rx/tx off
 *   while the applied DCBX configuration has PFC (pfc.pfcena);
 *   ice_set_pauseparam refuses a change of autoneg (EOPNOTSUPP, "To change
 *   autoneg please use: ethtool -s <dev> autoneg <on|off>") and any change
 *   while PFC is enabled (EOPNOTSUPP, "Priority flow control enabled. Cannot
 *   set link flow control."), messages to the kernel log only.
 *   flags: ice_gstrings_priv_flags link-down-on-close, fw-lldp-agent,
 *   vf-true-promisc-support, mdd-auto-reset-vf, vf-vlan-pruning.
 *   ice_set_priv_flags: more bits than flags EINVAL (ioctl only); turning
 *   fw-lldp-agent off stops the firmware LLDP agent, reinitialises DCB in
 *   software (ice_init_pf_dcb: ice_dcb_sw_dflt_cfg) and makes the DCBX cap
 *   HOST; turning it on in DSCP QoS mode is EOPNOTSUPP ("QoS in L3 DSCP mode,
 *   FW Agent not allowed to start") and the flag stays off, else the agent
 *   starts, DCB is read back from the firmware, the cap becomes LLD_MANAGED
 *   and ice_nway_reset restarts the link. The VF flags are refused only with
 *   VFs (none here), link-down-on-close only with total port shutdown (off).
 *   stats (__ice_get_strings): ..., tx_priority_%u_xon.nic,
 *   tx_priority_%u_xoff.nic per priority, then rx_priority_%u_xon.nic,
 *   rx_priority_%u_xoff.nic; no get_pause_stats in the source read.
 * i40e (intel/i40e/i40e_ethtool.c):
 *   pause: i40e_get_pauseparam: autoneg as negotiated, rx/tx off while the
 *   local DCBX configuration has PFC; i40e_set_pauseparam refuses an autoneg
 *   change and any change with PFC (EOPNOTSUPP, the same two messages as
 *   ice), else tells the OS the link goes down and restarts autoneg: a link
 *   flap. flags: i40e_gstrings_priv_flags (MFP and total-port-shutdown read
 *   only), and vf-true-promisc-support on PF 0 (this port): MFP,
 *   total-port-shutdown, LinkPolling, flow-director-atr, veb-stats,
 *   hw-atr-eviction, link-down-on-close, legacy-rx, disable-source-pruning,
 *   disable-fw-lldp, rs-fec, base-r-fec, vf-vlan-pruning, mdd-auto-reset-vf,
 *   vf-true-promisc-support. i40e_set_priv_flags: a read-only flag changed
 *   EOPNOTSUPP; hw-atr-eviction on EOPNOTSUPP (the XL710 lacks
 *   I40E_HW_CAP_ATR_EVICT); rs-fec or base-r-fec changed on a non-25G device
 *   EOPNOTSUPP ("Device does not support changing FEC configuration");
 *   disable-fw-lldp on applies the software default DCB configuration
 *   (i40e_dcb_sw_default_config) and stops the agent, off starts it; a
 *   change of disable-fw-lldp, veb-stats, legacy-rx, disable-source-pruning,
 *   or ATR turned back on resets the PF (a link flap), after which DCB comes
 *   up HOST (agent stopped) or LLD_MANAGED (agent running). Power-on:
 *   flow-director-atr on, disable-fw-lldp as the agent is.
 *   stats: port.link_xon_rx ..., then per priority port.tx_priority_%u_xon_tx,
 *   _xoff_tx, port.rx_priority_%u_xon_rx, _xoff_rx, _xon_2_xoff.
 * bnxt (broadcom/bnxt/bnxt_ethtool.c): bnxt_get_pauseparam reports the
 *   requested flow control and autoneg of flow control; bnxt_set_pauseparam
 *   refuses autoneg without speed autoneg (EINVAL; the modelled port
 *   autonegotiates its speed) and takes the rest, PFC or not. No priv flag
 *   ops (EOPNOTSUPP). bnxt_get_pause_stats: rx_pause_frames/tx_pause_frames.
 *   stats: port stats rx_pause_frames, rx_pfc_frames,
 *   rx_pfc_ena_frames_pri%d, rx_pfc_xon2xoff_frames_pri%d, tx_pause_frames,
 *   tx_pfc_frames, tx_pfc_ena_frames_pri%d; extended pfc_pri%d_rx_duration_us,
 *   pfc_pri%d_rx_transitions, rx_discard_bytes_cos%d,
 *   rx_discard_packets_cos%d, pfc_pri%d_tx_duration_us,
 *   pfc_pri%d_tx_transitions; per priority rx/tx_bytes_pri%d, _packets_pri%d.
 * hns3 (hisilicon/hns3/hns3_ethtool.c, hns3pf/hclge_main.c): a fibre port
 *   without PHY: hclge_get_pauseparam reports autoneg 0 and rx/tx off in
 *   PFC mode (tm_info.fc_mode HCLGE_FC_PFC, which an enabled PFC sets);
 *   hclge_set_pauseparam refuses in PFC mode (EOPNOTSUPP, "Priority flow
 *   control enabled. Cannot set link flow control."), else records the user's
 *   rx/tx (hclge_record_user_pauseparam) and, asked for autoneg without a PHY,
 *   answers EOPNOTSUPP having recorded them. flags: hns3_priv_flags
 *   limit_promisc (supported from device version 2, off), never refused.
 *   hns3_get_pause_stats: mac_rx/tx_mac_pause_num. stats (hclge
 *   g_mac_stats_string): mac_tx/rx_mac_pause_num, mac_tx_pfc_pkt_num,
 *   mac_tx_pfc_pri%d_pkt_num, mac_tx_pfc_pri%d_xoff_time,
 *   mac_rx_pfc_pkt_num, mac_rx_pfc_pri%d_pkt_num, mac_rx_pfc_pri%d_xoff_time.
 * ixgbe (intel/ixgbe/ixgbe_ethtool.c), an 82599 SFP+ port at 10 Gb/s:
 *   ixgbe_get_pauseparam: autoneg only where ixgbe_device_supports_autoneg_fc
 *   (not fibre at 10G), rx/tx from the current mode; ixgbe_set_pauseparam:
 *   autoneg EINVAL; DCB refuses link flow control on the 82598 only; a
 *   changed mode resets the adapter (ixgbe_reinit_locked: a link flap).
 *   flags: ixgbe_priv_flags_strings legacy-rx, vf-ipsec, mdd-disable-vf
 *   (the 82599 takes all three; a change reinitialises: a link flap).
 *   stats: tx/rx_flow_control_xon/xoff, then tx_pb_%u_pxon, tx_pb_%u_pxoff
 *   per packet buffer, then rx_pb_%u_pxon, rx_pb_%u_pxoff. No
 *   get_pause_stats in the source read.
 * Power-on link flow control: rx and tx on (full) everywhere; autoneg as the
 *   driver reports it: ice, i40e, bnxt on; mlx5, hns3, ixgbe, generic off.
 */
#include "dcbdrv.h"

/* ---- shared ------------------------------------------------------------------ */

static void stored(const struct drv *d, struct pausep *p)
{
	p->autoneg = d->eth.autoneg;
	p->rx = d->eth.rx;
	p->tx = d->eth.tx;
}

static void keep(struct drv *d, const struct pausep *p, struct note *n)
{
	d->eth.autoneg = !!p->autoneg; /* a driver testing it for truth */
	d->eth.rx = p->rx;
	d->eth.tx = p->tx;
	note(n, "autoneg=%u rx=%u tx=%u", p->autoneg, p->rx, p->tx);
}

/* Appends a formatted name; returns the next index. */
static int add(char (*names)[32], int i, int max, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int add(char (*names)[32], int i, int max, const char *fmt, ...)
{
	va_list ap;

	if (i >= max)
		return i;
	va_start(ap, fmt);
	vsnprintf(names[i], 32, fmt, ap);
	va_end(ap);
	return i + 1;
}

/* A name per priority 0..7 for each of the formats, priority outermost. */
static int per_prio(char (*names)[32], int i, int max, const char *const *fmts, int nfmt)
{
	for (int p = 0; p < 8; p++)
		for (int f = 0; f < nfmt; f++)
			i = add(names, i, max, fmts[f], p);
	return i;
}

static int words(char (*names)[32], int i, int max, const char *const *w, int n)
{
	for (int k = 0; k < n; k++)
		i = add(names, i, max, "%s", w[k]);
	return i;
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The firmware LLDP agent started or stopped by a private flag (ice's
 * fw-lldp-agent, i40e's disable-fw-lldp): DCB is set up again as the driver's
 * probe does (the model's init: the software default configuration, the DCBX
 * cap LLD_MANAGED with the agent, HOST without), LOSSLESS_DCBDRV_FW_AGENT's
 * state and the flag being one. */
static void fw_agent_switch(struct drv *d, int on, struct note *n)
{
	d->fw_agent = (uint8_t)on;
	models[d->model]->init(d);
	note(n, "fw_agent=%d dcbx=0x%02x", on, d->dcbx);
}

/* ---- generic ------------------------------------------------------------------ */

static int generic_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	keep(d, p, n);
	return 0;
}

static const struct ethmodel eth_generic = {
	.get_pause = stored,
	.set_pause = generic_set_pause,
};

/* ---- mlx5 --------------------------------------------------------------------- */

static void mlx5_get_pause(const struct drv *d, struct pausep *p)
{
	stored(d, p);
	p->autoneg = 0;
}

static int mlx5_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	if (p->autoneg) {
		note(n, "mlx5.refused=autoneg");
		return -EINVAL;
	}
	keep(d, p, n);
	return 0;
}

static const char *const mlx5_flags[] = {
	"rx_cqe_moder", "tx_cqe_moder",        "rx_cqe_compress", "rx_striding_rq",
	"rx_no_csum_complete", "xdp_tx_mpwqe", "skb_tx_mpwqe",    "tx_port_ts",
};

static int mlx5_set_flags(struct drv *d, uint32_t flags, struct note *n)
{
	(void)n; /* each handler succeeds on the modelled ConnectX */
	d->eth.priv = flags & 0xff;
	return 0;
}

static int mlx5_stats(const struct drv *d, char (*names)[32], int max)
{
	static const char *const head[] = {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
					   "rx_pause_ctrl_phy", "tx_pause_ctrl_phy"};
	static const char *const traffic[] = {"rx_prio%d_bytes", "rx_prio%d_packets",
					      "rx_prio%d_discards", "tx_prio%d_bytes",
					      "tx_prio%d_packets"};
	static const char *const pfc[] = {"rx_%s_pause", "rx_%s_pause_duration", "tx_%s_pause",
					  "tx_%s_pause_duration", "rx_%s_pause_transition"};
	static const char *const buff[] = {"rx_prio%d_buf_discard", "rx_prio%d_cong_discard",
					   "rx_prio%d_marked"};
	int i = words(names, 0, max, head, N(head));
	char prio[16];

	i = per_prio(names, i, max, traffic, N(traffic));
	for (int p = 0; p < 8; p++) {
		if (!(d->hw.pfc.pfc_en & (1u << p)))
			continue;
		snprintf(prio, sizeof prio, "prio%d", p);
		for (int f = 0; f < N(pfc); f++)
			i = add(names, i, max, pfc[f], prio);
	}
	if (d->eth.rx || d->eth.tx)
		for (int f = 0; f < N(pfc); f++)
			i = add(names, i, max, pfc[f], "global");
	i = add(names, i, max, "tx_pause_storm_warning_events");
	i = add(names, i, max, "tx_pause_storm_error_events");
	return per_prio(names, i, max, buff, N(buff));
}

static const struct ethmodel eth_mlx5 = {
	.driver = "mlx5_core",
	.get_pause = mlx5_get_pause,
	.set_pause = mlx5_set_pause,
	.flags = mlx5_flags,
	.nflags = N(mlx5_flags),
	.set_flags = mlx5_set_flags,
	.stat_names = mlx5_stats,
	.pause_rx = "rx_pause_ctrl_phy",
	.pause_tx = "tx_pause_ctrl_phy",
};

/* ---- ice and i40e ----------------------------------------------------------- */

/* ice_get_pauseparam, i40e_get_pauseparam: PFC in the applied configuration
 * reports link flow control off. */
static void intel_get_pause(const struct drv *d, struct pausep *p)
{
	stored(d, p);
	if (d->hw.local.pfc_en)
		p->rx = p->tx = 0;
}

/* What ice_set_pauseparam and i40e_set_pauseparam check first, alike. */
static int intel_pause_checks(struct drv *d, const struct pausep *p, struct note *n)
{
	if (p->autoneg != d->eth.autoneg) {
		note(n, "%s.refused=autoneg_change", models[d->model]->name);
		return -EOPNOTSUPP;
	}
	if (d->hw.local.pfc_en) {
		note(n, "%s.refused=pfc_enabled", models[d->model]->name);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int ice_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	int err = intel_pause_checks(d, p, n);

	if (err)
		return err;
	keep(d, p, n);
	return 0;
}

static const char *const ice_flags[] = {"link-down-on-close", "fw-lldp-agent",
					"vf-true-promisc-support", "mdd-auto-reset-vf",
					"vf-vlan-pruning"};
enum { ICE_FW_LLDP = 1 };

static int ice_set_flags(struct drv *d, uint32_t flags, struct note *n)
{
	uint32_t changed = flags ^ eth_flags(d);

	if (flags > (1u << N(ice_flags))) {
		note(n, "ice.refused=flags_0x%x", flags);
		return -EINVAL;
	}
	flags &= (1u << N(ice_flags)) - 1;
	if (changed & (1u << ICE_FW_LLDP)) {
		if (!(flags & (1u << ICE_FW_LLDP))) {
			fw_agent_switch(d, 0, n);
		} else if (d->hw.local.dscp_mode) {
			/* the flag is cleared again; the others are kept */
			d->eth.priv = flags & ~(1u << ICE_FW_LLDP);
			note(n, "ice.refused=dscp_qos_mode");
			return -EOPNOTSUPP;
		} else {
			fw_agent_switch(d, 1, n);
			link_reset(d, 0, n); /* ice_nway_reset */
		}
	}
	d->eth.priv = flags;
	return 0;
}

static int ice_stats(const struct drv *d, char (*names)[32], int max)
{
	static const char *const head[] = {
		"rx_unicast",          "tx_unicast",          "rx_bytes",
		"tx_bytes",            "rx_dropped",          "tx_queue_0_packets",
		"tx_queue_0_bytes",    "rx_queue_0_packets",  "rx_queue_0_bytes",
		"rx_bytes.nic",        "tx_bytes.nic",        "rx_dropped.nic",
		"link_xon_rx.nic",     "link_xoff_rx.nic",    "link_xon_tx.nic",
		"link_xoff_tx.nic"};
	static const char *const tx[] = {"tx_priority_%d_xon.nic", "tx_priority_%d_xoff.nic"};
	static const char *const rx[] = {"rx_priority_%d_xon.nic", "rx_priority_%d_xoff.nic"};
	int i = words(names, 0, max, head, N(head));

	(void)d;
	i = per_prio(names, i, max, tx, N(tx));
	return per_prio(names, i, max, rx, N(rx));
}

static const struct ethmodel eth_ice = {
	.driver = "ice",
	.get_pause = intel_get_pause,
	.set_pause = ice_set_pause,
	.flags = ice_flags,
	.nflags = N(ice_flags),
	.set_flags = ice_set_flags,
	.stat_names = ice_stats,
};

static int i40e_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	int err = intel_pause_checks(d, p, n);

	if (err)
		return err;
	keep(d, p, n);
	link_reset(d, 0, n); /* netif_carrier_off, i40e_set_fc, i40e_nway_reset */
	return 0;
}

static const char *const i40e_flags[] = {
	"MFP",          "total-port-shutdown",    "LinkPolling",     "flow-director-atr",
	"veb-stats",    "hw-atr-eviction",        "link-down-on-close", "legacy-rx",
	"disable-source-pruning", "disable-fw-lldp", "rs-fec",       "base-r-fec",
	"vf-vlan-pruning", "mdd-auto-reset-vf",   "vf-true-promisc-support"};
enum {
	I40E_MFP = 0,
	I40E_TPS = 1,
	I40E_ATR = 3,
	I40E_VEB_STATS = 4,
	I40E_ATR_EVICT = 5,
	I40E_LEGACY_RX = 7,
	I40E_SRC_PRUNING = 8,
	I40E_FW_LLDP_DIS = 9,
	I40E_RS_FEC = 10,
	I40E_BASE_R_FEC = 11,
};
#define BIT_(i) (1u << (i))

static int i40e_set_flags(struct drv *d, uint32_t flags, struct note *n)
{
	uint32_t changed = (flags ^ eth_flags(d)) & (BIT_(N(i40e_flags)) - 1);
	int reset = 0;

	if (changed & (BIT_(I40E_MFP) | BIT_(I40E_TPS))) {
		note(n, "i40e.refused=read_only_flag");
		return -EOPNOTSUPP;
	}
	if (changed & (BIT_(I40E_FW_LLDP_DIS) | BIT_(I40E_VEB_STATS) | BIT_(I40E_LEGACY_RX) |
		       BIT_(I40E_SRC_PRUNING)))
		reset = 1;
	if ((changed & BIT_(I40E_ATR)) && (flags & BIT_(I40E_ATR)))
		reset = 1;
	if (flags & BIT_(I40E_ATR_EVICT)) {
		note(n, "i40e.refused=no_atr_evict_cap");
		return -EOPNOTSUPP;
	}
	if (changed & (BIT_(I40E_RS_FEC) | BIT_(I40E_BASE_R_FEC))) {
		note(n, "i40e.refused=fec_not_25g");
		return -EOPNOTSUPP;
	}
	if (changed & BIT_(I40E_FW_LLDP_DIS))
		fw_agent_switch(d, !(flags & BIT_(I40E_FW_LLDP_DIS)), n);
	d->eth.priv = flags & (BIT_(N(i40e_flags)) - 1);
	if (reset)
		link_reset(d, 0, n); /* i40e_do_reset */
	return 0;
}

static int i40e_stats(const struct drv *d, char (*names)[32], int max)
{
	static const char *const head[] = {
		"rx_packets",        "tx_packets",         "rx_bytes",
		"tx_bytes",          "rx_dropped",         "tx_dropped",
		"port.rx_bytes",     "port.tx_bytes",      "port.rx_discards",
		"port.link_xon_rx",  "port.link_xoff_rx",  "port.link_xon_tx",
		"port.link_xoff_tx"};
	static const char *const pfc[] = {
		"port.tx_priority_%d_xon_tx", "port.tx_priority_%d_xoff_tx",
		"port.rx_priority_%d_xon_rx", "port.rx_priority_%d_xoff_rx",
		"port.rx_priority_%d_xon_2_xoff"};
	int i = words(names, 0, max, head, N(head));

	(void)d;
	return per_prio(names, i, max, pfc, N(pfc));
}

static const struct ethmodel eth_i40e = {
	.driver = "i40e",
	.get_pause = intel_get_pause,
	.set_pause = i40e_set_pause,
	.flags = i40e_flags,
	.nflags = N(i40e_flags),
	.set_flags = i40e_set_flags,
	.stat_names = i40e_stats,
};

/* ---- bnxt ------------------------------------------------------------------- */

static int bnxt_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	/* autoneg of flow control needs speed autoneg, which the modelled port has */
	keep(d, p, n);
	return 0;
}

static int bnxt_stats(const struct drv *d, char (*names)[32], int max)
{
	static const char *const rx_pri[] = {"rx_pfc_ena_frames_pri%d"};
	static const char *const rx_x2x[] = {"rx_pfc_xon2xoff_frames_pri%d"};
	static const char *const tx_pri[] = {"tx_pfc_ena_frames_pri%d"};
	static const char *const rx_ext[] = {"pfc_pri%d_rx_duration_us", "pfc_pri%d_rx_transitions"};
	static const char *const disc[] = {"rx_discard_bytes_cos%d", "rx_discard_packets_cos%d"};
	static const char *const tx_ext[] = {"pfc_pri%d_tx_duration_us", "pfc_pri%d_tx_transitions"};
	static const char *const pri[] = {"rx_bytes_pri%d", "rx_packets_pri%d", "tx_bytes_pri%d",
					  "tx_packets_pri%d"};
	int i = 0;

	(void)d;
	i = add(names, i, max, "rx_pause_frames");
	i = add(names, i, max, "rx_pfc_frames");
	i = per_prio(names, i, max, rx_pri, 1);
	i = per_prio(names, i, max, rx_x2x, 1);
	i = add(names, i, max, "tx_pause_frames");
	i = add(names, i, max, "tx_pfc_frames");
	i = per_prio(names, i, max, tx_pri, 1);
	i = per_prio(names, i, max, rx_ext, N(rx_ext));
	for (int f = 0; f < N(disc); f++)
		for (int c = 0; c < 8; c++)
			i = add(names, i, max, disc[f], c);
	i = per_prio(names, i, max, tx_ext, N(tx_ext));
	for (int f = 0; f < N(pri); f++)
		for (int p = 0; p < 8; p++)
			i = add(names, i, max, pri[f], p);
	return i;
}

static const struct ethmodel eth_bnxt = {
	.driver = "bnxt_en",
	.get_pause = stored,
	.set_pause = bnxt_set_pause,
	.stat_names = bnxt_stats,
	.pause_rx = "rx_pause_frames",
	.pause_tx = "tx_pause_frames",
};

/* ---- hns3 ------------------------------------------------------------------- */

static void hns3_get_pause(const struct drv *d, struct pausep *p)
{
	stored(d, p);
	p->autoneg = 0; /* not copper */
	if (d->hw.pfc.pfc_en)
		p->rx = p->tx = 0;
}

static int hns3_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	if (d->hw.pfc.pfc_en) {
		note(n, "hns3.refused=pfc_enabled");
		return -EOPNOTSUPP;
	}
	/* hclge_record_user_pauseparam, before autoneg is looked at */
	d->eth.rx = p->rx;
	d->eth.tx = p->tx;
	note(n, "rx=%u tx=%u", p->rx, p->tx);
	if (p->autoneg) {
		note(n, "hns3.refused=autoneg_without_phy");
		return -EOPNOTSUPP;
	}
	return 0;
}

static const char *const hns3_flags[] = {"limit_promisc"};

static int hns3_set_flags(struct drv *d, uint32_t flags, struct note *n)
{
	(void)n;
	d->eth.priv = flags & 1;
	return 0;
}

static int hns3_stats(const struct drv *d, char (*names)[32], int max)
{
	static const char *const head[] = {"mac_tx_mac_pause_num", "mac_rx_mac_pause_num",
					   "mac_tx_pfc_pkt_num"};
	int i = words(names, 0, max, head, N(head));

	(void)d;
	for (int p = 0; p < 8; p++)
		i = add(names, i, max, "mac_tx_pfc_pri%d_pkt_num", p);
	for (int p = 0; p < 8; p++)
		i = add(names, i, max, "mac_tx_pfc_pri%d_xoff_time", p);
	i = add(names, i, max, "mac_rx_pfc_pkt_num");
	for (int p = 0; p < 8; p++)
		i = add(names, i, max, "mac_rx_pfc_pri%d_pkt_num", p);
	for (int p = 0; p < 8; p++)
		i = add(names, i, max, "mac_rx_pfc_pri%d_xoff_time", p);
	return i;
}

static const struct ethmodel eth_hns3 = {
	.driver = "hns3",
	.get_pause = hns3_get_pause,
	.set_pause = hns3_set_pause,
	.flags = hns3_flags,
	.nflags = N(hns3_flags),
	.set_flags = hns3_set_flags,
	.stat_names = hns3_stats,
	.pause_rx = "mac_rx_mac_pause_num",
	.pause_tx = "mac_tx_mac_pause_num",
};

/* ---- ixgbe ------------------------------------------------------------------ */

static void ixgbe_get_pause(const struct drv *d, struct pausep *p)
{
	stored(d, p);
	p->autoneg = 0; /* no autoneg of flow control on fibre at 10G */
}

static int ixgbe_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	uint8_t rx = p->rx, tx = p->tx;

	if (p->autoneg) {
		note(n, "ixgbe.refused=autoneg_fc_unsupported");
		return -EINVAL;
	}
	if (rx == d->eth.rx && tx == d->eth.tx) {
		note(n, "ixgbe.fc=unchanged");
		return 0;
	}
	keep(d, p, n);
	link_reset(d, 0, n); /* ixgbe_reinit_locked */
	return 0;
}

static const char *const ixgbe_flags[] = {"legacy-rx", "vf-ipsec", "mdd-disable-vf"};

static int ixgbe_set_flags(struct drv *d, uint32_t flags, struct note *n)
{
	int changed = (flags ^ eth_flags(d)) & 7;

	d->eth.priv = flags & 7;
	if (changed)
		link_reset(d, 0, n); /* ixgbe_reinit_locked */
	return 0;
}

static int ixgbe_stats(const struct drv *d, char (*names)[32], int max)
{
	static const char *const head[] = {"rx_packets",          "tx_packets",
					   "rx_bytes",            "tx_bytes",
					   "tx_flow_control_xon", "rx_flow_control_xon",
					   "tx_flow_control_xoff", "rx_flow_control_xoff"};
	static const char *const tx[] = {"tx_pb_%d_pxon", "tx_pb_%d_pxoff"};
	static const char *const rx[] = {"rx_pb_%d_pxon", "rx_pb_%d_pxoff"};
	int i = words(names, 0, max, head, N(head));

	(void)d;
	i = per_prio(names, i, max, tx, N(tx));
	return per_prio(names, i, max, rx, N(rx));
}

static const struct ethmodel eth_ixgbe = {
	.driver = "ixgbe",
	.get_pause = ixgbe_get_pause,
	.set_pause = ixgbe_set_pause,
	.flags = ixgbe_flags,
	.nflags = N(ixgbe_flags),
	.set_flags = ixgbe_set_flags,
	.stat_names = ixgbe_stats,
};

/* ---- the table ---------------------------------------------------------------- */

static const struct ethmodel *const ethmodels[M_COUNT] = {
	[M_GENERIC] = &eth_generic, [M_MLX5] = &eth_mlx5, [M_ICE] = &eth_ice,
	[M_I40E] = &eth_i40e,       [M_BNXT] = &eth_bnxt, [M_HNS3] = &eth_hns3,
	[M_IXGBE] = &eth_ixgbe,
};

const struct ethmodel *ethmodel_of(const struct drv *d)
{
	return ethmodels[d->model >= 0 && d->model < M_COUNT ? d->model : M_GENERIC];
}

int eth_has_pause(const struct drv *d)
{
	return ethmodel_of(d)->get_pause != NULL;
}

void eth_get_pause(const struct drv *d, struct pausep *p)
{
	memset(p, 0, sizeof *p);
	ethmodel_of(d)->get_pause(d, p);
}

int eth_set_pause(struct drv *d, const struct pausep *p, struct note *n)
{
	return ethmodel_of(d)->set_pause(d, p, n);
}

/* The private flags get_priv_flags reports: the firmware agent's flag (ice's
 * fw-lldp-agent, i40e's disable-fw-lldp) is the NIC's fw_agent. */
uint32_t eth_flags(const struct drv *d)
{
	uint32_t f = d->eth.priv;

	if (d->model == M_ICE)
		f = (f & ~(1u << ICE_FW_LLDP)) | (d->fw_agent ? 1u << ICE_FW_LLDP : 0);
	else if (d->model == M_I40E)
		f = (f & ~BIT_(I40E_FW_LLDP_DIS)) | (d->fw_agent ? 0 : BIT_(I40E_FW_LLDP_DIS));
	return f;
}

/* set_priv_flags with the word the driver gets; the changes noted first. */
int eth_set_flags(struct drv *d, uint32_t flags, struct note *n)
{
	const struct ethmodel *m = ethmodel_of(d);
	uint32_t old = eth_flags(d);

	for (int i = 0; i < m->nflags; i++)
		if ((old ^ flags) & (1u << i))
			note(n, "flag.%s=%s", m->flags[i], (flags >> i) & 1 ? "on" : "off");
	if (flags >> m->nflags)
		note(n, "flags=0x%x", flags);
	return m->set_flags(d, flags, n);
}

int eth_stat_names(const struct drv *d, char (*names)[32], int max)
{
	return ethmodel_of(d)->stat_names(d, names, max);
}

int eth_owns(const struct drv *d)
{
	return ethmodel_of(d)->driver != NULL;
}

void eth_power_on(struct drv *d)
{
	d->eth.rx = d->eth.tx = 1;
	d->eth.autoneg = d->model == M_ICE || d->model == M_I40E || d->model == M_BNXT;
	switch (d->model) {
	case M_MLX5:
		d->eth.priv = 0x69; /* rx_cqe_moder, rx_striding_rq, xdp_tx_mpwqe, skb_tx_mpwqe */
		break;
	case M_I40E:
		d->eth.priv = BIT_(I40E_ATR);
		break;
	default:
		d->eth.priv = 0;
	}
	d->eth.priv = eth_flags(d);
	d->eth.nstat = 0;
}

uint64_t eth_stat(const struct drv *d, const char *name)
{
	for (int i = 0; i < d->eth.nstat; i++)
		if (strncmp(d->eth.stat[i].name, name, sizeof d->eth.stat[i].name) == 0)
			return d->eth.stat[i].value;
	return 0;
}
