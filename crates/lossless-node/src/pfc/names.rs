//! What a driver's ethtool statistic is for the PFC counters, by its name
//! (`ETHTOOL_GSTRINGS`): the PFC frames, time paused and pause transitions per
//! priority, the drops per priority, and mlx5's storm counter. The runtime reads the
//! names once per driver, keeps the indices [`classify`] knows, and reads only those.
//!
//! Each name below is as the driver's source prints it (Linux 6.x):
//!
//! | driver | per priority N (0..=7) |
//! | --- | --- |
//! | mlx5 (`en_stats.c`) | `rx_prioN_pause`, `tx_prioN_pause`, `*_prioN_pause_duration` (µs), `*_prioN_pause_transition`, `rx_prioN_discards`, `rx_prioN_buf_discard`, `rx_prioN_cong_discard`; `tx_pause_storm_error_events` |
//! | ice (`ice_ethtool.c`) | `rx_priority_N_xoff.nic`, `tx_priority_N_xoff.nic` |
//! | i40e (`i40e_ethtool.c`) | `port.rx_priority_N_xoff_rx`, `port.tx_priority_N_xoff_tx` (older kernels: without `_rx`/`_tx`) |
//! | bnxt (`bnxt_ethtool.c`) | `rx_pfc_ena_frames_priN`, `tx_pfc_ena_frames_priN`, `pfc_priN_rx_duration_us`, `pfc_priN_tx_duration_us`, `pfc_priN_rx_transitions`, `pfc_priN_tx_transitions` |
//! | hns3 (`hclge_main.c`) | `mac_rx_pfc_priN_pkt_num`, `mac_tx_pfc_priN_pkt_num` |
//! | ixgbe (`ixgbe_ethtool.c`) | `rx_pb_N_pxoff`, `tx_pb_N_pxoff` (packet buffer N: priority N with the default mapping) |
//!
//! Not followed: hns3's `mac_*_pfc_priN_xoff_time` (the driver does not say its unit),
//! bnxt's `rx_discard_packets_cosN` (per hardware queue, not per priority), and the
//! XON counters (a storm is XOFF; dcbnl's counts are all PFC frames).

use super::counters::Counter;

/// What one ethtool statistic is, for the PFC counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PfcStat {
    /// A counter of priority N.
    Counter(Counter, u8),
    /// mlx5's per-port storm counter.
    Storm,
}

/// The per-priority statistics: the name with `#` where the driver prints the
/// priority, and what it counts.
pub const PER_PRIORITY: &[(&str, Counter)] = &[
    // mlx5
    ("rx_prio#_pause", Counter::RxPause),
    ("tx_prio#_pause", Counter::TxPause),
    ("rx_prio#_pause_duration", Counter::RxPauseDuration),
    ("tx_prio#_pause_duration", Counter::TxPauseDuration),
    ("rx_prio#_pause_transition", Counter::RxPauseTransitions),
    ("tx_prio#_pause_transition", Counter::TxPauseTransitions),
    ("rx_prio#_discards", Counter::RxDiscards),
    ("rx_prio#_buf_discard", Counter::RxHostBufferDiscards),
    ("rx_prio#_cong_discard", Counter::RxHostCongestionDiscards),
    // ice
    ("rx_priority_#_xoff.nic", Counter::RxPause),
    ("tx_priority_#_xoff.nic", Counter::TxPause),
    ("rx_priority_#_xoff", Counter::RxPause),
    ("tx_priority_#_xoff", Counter::TxPause),
    // i40e
    ("port.rx_priority_#_xoff_rx", Counter::RxPause),
    ("port.tx_priority_#_xoff_tx", Counter::TxPause),
    ("port.rx_priority_#_xoff", Counter::RxPause),
    ("port.tx_priority_#_xoff", Counter::TxPause),
    // bnxt
    ("rx_pfc_ena_frames_pri#", Counter::RxPause),
    ("tx_pfc_ena_frames_pri#", Counter::TxPause),
    ("pfc_pri#_rx_duration_us", Counter::RxPauseDuration),
    ("pfc_pri#_tx_duration_us", Counter::TxPauseDuration),
    ("pfc_pri#_rx_transitions", Counter::RxPauseTransitions),
    ("pfc_pri#_tx_transitions", Counter::TxPauseTransitions),
    // hns3
    ("mac_rx_pfc_pri#_pkt_num", Counter::RxPause),
    ("mac_tx_pfc_pri#_pkt_num", Counter::TxPause),
    // ixgbe
    ("rx_pb_#_pxoff", Counter::RxPause),
    ("tx_pb_#_pxoff", Counter::TxPause),
];

/// mlx5's per-port storm counter: the device kept pausing and stopped.
pub const STORM: &str = "tx_pause_storm_error_events";

/// What a driver's statistic is for the PFC counters, by its name ([`PER_PRIORITY`],
/// [`STORM`]).
pub fn classify(name: &str) -> Option<PfcStat> {
    if name == STORM {
        return Some(PfcStat::Storm);
    }
    PER_PRIORITY.iter().find_map(|&(pattern, counter)| {
        let (before, after) = pattern.split_once('#')?;
        let n = name.strip_prefix(before)?.strip_suffix(after)?;
        match n.as_bytes() {
            [d @ b'0'..=b'7'] => Some(PfcStat::Counter(counter, d - b'0')),
            _ => None,
        }
    })
}

/// The name a driver gives counter `c` of priority `p`, by the first pattern of
/// [`PER_PRIORITY`] that counts it and starts with `prefix` (`"rx_prio"`: mlx5's).
pub fn driver_name(prefix: &str, c: Counter, p: u8) -> Option<String> {
    PER_PRIORITY
        .iter()
        .find(|(pattern, counter)| *counter == c && pattern.starts_with(prefix))
        .map(|(pattern, _)| pattern.replace('#', &p.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_statistics_are_named_as_drivers_name_them() {
        use Counter::*;
        let cases = [
            ("rx_prio3_pause", Some(PfcStat::Counter(RxPause, 3))),
            ("tx_prio7_pause", Some(PfcStat::Counter(TxPause, 7))),
            (
                "rx_prio0_pause_duration",
                Some(PfcStat::Counter(RxPauseDuration, 0)),
            ),
            (
                "tx_prio4_pause_duration",
                Some(PfcStat::Counter(TxPauseDuration, 4)),
            ),
            (
                "rx_prio2_pause_transition",
                Some(PfcStat::Counter(RxPauseTransitions, 2)),
            ),
            (
                "tx_prio2_pause_transition",
                Some(PfcStat::Counter(TxPauseTransitions, 2)),
            ),
            ("tx_pause_storm_error_events", Some(PfcStat::Storm)),
            ("rx_priority_5_xoff", Some(PfcStat::Counter(RxPause, 5))),
            ("tx_pb_1_pxoff", Some(PfcStat::Counter(TxPause, 1))),
            // mlx5's drops per priority
            ("rx_prio3_discards", Some(PfcStat::Counter(RxDiscards, 3))),
            (
                "rx_prio3_buf_discard",
                Some(PfcStat::Counter(RxHostBufferDiscards, 3)),
            ),
            (
                "rx_prio6_cong_discard",
                Some(PfcStat::Counter(RxHostCongestionDiscards, 6)),
            ),
            ("rx_prio3_marked", None),
            ("tx_prio3_discards", None),
            // ice
            ("rx_priority_3_xoff.nic", Some(PfcStat::Counter(RxPause, 3))),
            ("tx_priority_0_xoff.nic", Some(PfcStat::Counter(TxPause, 0))),
            ("rx_priority_3_xon.nic", None),
            // i40e, and as older kernels name them
            (
                "port.rx_priority_3_xoff_rx",
                Some(PfcStat::Counter(RxPause, 3)),
            ),
            (
                "port.tx_priority_7_xoff_tx",
                Some(PfcStat::Counter(TxPause, 7)),
            ),
            (
                "port.rx_priority_2_xoff",
                Some(PfcStat::Counter(RxPause, 2)),
            ),
            ("port.rx_priority_3_xon_2_xoff", None),
            ("port.rx_priority_3_xon_rx", None),
            // bnxt
            ("rx_pfc_ena_frames_pri3", Some(PfcStat::Counter(RxPause, 3))),
            ("tx_pfc_ena_frames_pri5", Some(PfcStat::Counter(TxPause, 5))),
            (
                "pfc_pri3_rx_duration_us",
                Some(PfcStat::Counter(RxPauseDuration, 3)),
            ),
            (
                "pfc_pri1_tx_duration_us",
                Some(PfcStat::Counter(TxPauseDuration, 1)),
            ),
            (
                "pfc_pri3_rx_transitions",
                Some(PfcStat::Counter(RxPauseTransitions, 3)),
            ),
            (
                "pfc_pri0_tx_transitions",
                Some(PfcStat::Counter(TxPauseTransitions, 0)),
            ),
            ("rx_pfc_xon2xoff_frames_pri3", None),
            ("rx_discard_packets_cos3", None),
            ("rx_pfc_frames", None),
            // hns3
            (
                "mac_rx_pfc_pri3_pkt_num",
                Some(PfcStat::Counter(RxPause, 3)),
            ),
            (
                "mac_tx_pfc_pri4_pkt_num",
                Some(PfcStat::Counter(TxPause, 4)),
            ),
            ("mac_rx_pfc_pri3_xoff_time", None),
            ("mac_rx_pfc_pkt_num", None),
            // not ours
            ("tx_pause_storm_warning_events", None),
            ("rx_priority_8_xoff", None),
            ("rx_pb_3_xoff", None),
            ("rx_prio3_pause_durations", None),
            ("rx_prio33_pause", None),
            ("rx_prio8_pause", None),
            ("rx_prio3_bytes", None),
            ("rx_pause_ctrl_phy", None),
            ("peer_ifindex", None),
            ("", None),
            ("#", None),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
    }

    #[test]
    fn names_are_made_back_from_their_pattern() {
        assert_eq!(
            driver_name("rx_prio", Counter::RxDiscards, 3).as_deref(),
            Some("rx_prio3_discards")
        );
        assert_eq!(driver_name("mac_", Counter::RxDiscards, 3), None);
        for (pattern, c) in PER_PRIORITY {
            for p in 0..8 {
                let name = pattern.replace('#', &p.to_string());
                assert_eq!(classify(&name), Some(PfcStat::Counter(*c, p)), "{name}");
            }
        }
    }
}
