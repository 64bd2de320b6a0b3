//! Reading the PFC counters off the event loop: a thread of its own with its own dcbnl
//! and ethtool sockets takes each port's request (`Output::ReadPfc`), reads
//! `DCB_CMD_IEEE_GET` (the IEEE PFC object's `requests` and `indications`) and the
//! driver's ethtool statistics by name, and hands the sample back to the core task as
//! an input. A slow driver (mlx5 reads its counters from firmware) delays only this
//! thread, never an LLDPDU.

use std::collections::HashMap;
use std::sync::mpsc as std_mpsc;
use std::thread;

use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::pfc::{Counter, PfcSample};
use lossless_sys::dcbnl::Dcbnl;
use lossless_sys::ethtool::EthtoolStats;
use tokio::sync::mpsc;
use tracing::debug;

use crate::convert;
use crate::execute::Input;

/// What one ethtool statistic is, for the PFC counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PfcStat {
    Counter(Counter, u8),
    Storm,
}

/// The PFC statistics drivers name: mlx5 (`rx_prio3_pause`, `tx_prio3_pause_duration`,
/// `rx_prio3_pause_transition`, `tx_pause_storm_error_events`), ice
/// (`rx_priority_3_xoff`), ixgbe (`rx_pb_3_pxoff`).
pub fn classify(name: &str) -> Option<PfcStat> {
    if name == "tx_pause_storm_error_events" {
        return Some(PfcStat::Storm);
    }
    let (dir, rest) = if let Some(r) = name.strip_prefix("rx_") {
        (0, r)
    } else {
        (1, name.strip_prefix("tx_")?)
    };
    let pick = |frames: Counter, other: Counter| if dir == 0 { frames } else { other };
    let prio = |s: &str| -> Option<u8> {
        let p: u8 = s.parse().ok()?;
        (p < 8).then_some(p)
    };
    if let Some(r) = rest.strip_prefix("prio") {
        let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
        let p = prio(&digits)?;
        let counter = match &r[digits.len()..] {
            "_pause" => pick(Counter::RxPause, Counter::TxPause),
            "_pause_duration" => pick(Counter::RxPauseDuration, Counter::TxPauseDuration),
            "_pause_transition" => pick(Counter::RxPauseTransitions, Counter::TxPauseTransitions),
            _ => return None,
        };
        return Some(PfcStat::Counter(counter, p));
    }
    let xoff = |r: &str, pre: &str, post: &str| -> Option<u8> {
        prio(r.strip_prefix(pre)?.strip_suffix(post)?)
    };
    let p = xoff(rest, "priority_", "_xoff").or_else(|| xoff(rest, "pb_", "_pxoff"))?;
    Some(PfcStat::Counter(
        pick(Counter::RxPause, Counter::TxPause),
        p,
    ))
}

/// Which of an interface's statistics are PFC's, by index, for the count they had.
struct Layout {
    count: u32,
    stats: Vec<(usize, PfcStat)>,
}

/// The reading thread's handle: requests go in, samples come back as inputs.
pub(crate) struct PfcReader {
    tx: std_mpsc::Sender<(u32, String)>,
}

impl PfcReader {
    pub(crate) fn start(input: mpsc::Sender<Input>) -> PfcReader {
        let (tx, rx) = std_mpsc::channel::<(u32, String)>();
        let spawned = thread::Builder::new()
            .name("pfc-counters".into())
            .spawn(move || {
                let mut r = Reading::default();
                while let Ok((ifindex, name)) = rx.recv() {
                    let result = r.read(&name);
                    if input
                        .blocking_send(Input::Pfc(ifindex, Box::new(result)))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the PFC counter thread");
        }
        PfcReader { tx }
    }

    /// Asks for a port's counters; the answer comes back as [`Input::Pfc`].
    pub(crate) fn request(&self, ifindex: u32, name: String) -> bool {
        self.tx.send((ifindex, name)).is_ok()
    }
}

#[derive(Default)]
struct Reading {
    dcbnl: Option<Dcbnl>,
    ethtool: Option<EthtoolStats>,
    layouts: HashMap<String, Layout>,
}

impl Reading {
    fn read(&mut self, name: &str) -> Result<PfcSample, HardwareError> {
        let dcb = self.dcbnl_counters(name);
        let eth = self.ethtool_counters(name);
        let mut sample = match &dcb {
            Ok(s) => s.clone(),
            Err(_) => PfcSample::default(),
        };
        match eth {
            Ok(stats) if !stats.is_empty() => {
                merge(&mut sample, &stats);
                sample.source = if dcb.is_ok() {
                    "dcbnl+ethtool".into()
                } else {
                    "ethtool".into()
                };
                Ok(sample)
            }
            eth if dcb.is_ok() => {
                if let Err(e) = eth {
                    debug!(port = name, reason = %e, "no ethtool PFC statistics");
                }
                Ok(sample)
            }
            eth => {
                let Err(d) = dcb else { unreachable!() };
                let why = match eth {
                    Ok(_) => "its ethtool statistics name no PFC counter".to_string(),
                    Err(e) => format!("ethtool statistics: {e}"),
                };
                Err(HardwareError::new(
                    d.kind,
                    format!("dcbnl: {}; {why}", d.message),
                ))
            }
        }
    }

    fn dcbnl_counters(&mut self, name: &str) -> Result<PfcSample, HardwareError> {
        let d = match &mut self.dcbnl {
            Some(d) => d,
            None => self.dcbnl.insert(Dcbnl::open().map_err(|e| {
                HardwareError::new(HardwareErrorKind::Other, format!("dcbnl socket: {e}"))
            })?),
        };
        let ieee = d.get_ieee(name).map_err(convert::hardware_error)?;
        let pfc = ieee.pfc.ok_or_else(|| {
            HardwareError::new(
                HardwareErrorKind::NotSupported,
                "the driver reports no IEEE PFC object (no ieee_getpfc)",
            )
        })?;
        Ok(PfcSample::dcbnl(pfc.requests, pfc.indications))
    }

    /// The driver's PFC statistics by name; empty when it has none.
    fn ethtool_counters(&mut self, name: &str) -> std::io::Result<Vec<(PfcStat, u64)>> {
        let e = match &mut self.ethtool {
            Some(e) => e,
            None => self.ethtool.insert(EthtoolStats::open()?),
        };
        let count = e.count(name)?;
        let stale = self.layouts.get(name).is_none_or(|l| l.count != count);
        if stale {
            let names = e.names(name, count)?;
            let stats = names
                .iter()
                .enumerate()
                .filter_map(|(i, n)| classify(n).map(|s| (i, s)))
                .collect();
            self.layouts
                .insert(name.to_string(), Layout { count, stats });
        }
        let layout = &self.layouts[name];
        if layout.stats.is_empty() {
            return Ok(Vec::new());
        }
        let values = e.values(name, count)?;
        Ok(layout
            .stats
            .iter()
            .filter_map(|(i, s)| values.get(*i).map(|v| (*s, *v)))
            .collect())
    }
}

/// Adds the ethtool statistics to a sample: dcbnl's frame counts stay where it has
/// them (the standard interface), ethtool fills what dcbnl does not report.
fn merge(sample: &mut PfcSample, stats: &[(PfcStat, u64)]) {
    for (s, v) in stats {
        match *s {
            PfcStat::Storm => sample.storm_events = Some(*v),
            PfcStat::Counter(c, p) => {
                if sample.get(c, p).is_none() {
                    sample.set(c, p, Some(*v));
                }
            }
        }
    }
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
            ("tx_pause_storm_warning_events", None),
            ("rx_prio8_pause", None),
            ("rx_prio3_bytes", None),
            ("rx_pause_ctrl_phy", None),
            ("peer_ifindex", None),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
    }

    #[test]
    fn dcbnl_frame_counts_stay_ethtool_fills_the_rest() {
        let mut s = PfcSample::dcbnl([1; 8], [2; 8]);
        merge(
            &mut s,
            &[
                (PfcStat::Counter(Counter::RxPause, 3), 99),
                (PfcStat::Counter(Counter::RxPauseDuration, 3), 1500),
                (PfcStat::Storm, 4),
            ],
        );
        assert_eq!(s.get(Counter::RxPause, 3), Some(2));
        assert_eq!(s.get(Counter::RxPauseDuration, 3), Some(1500));
        assert_eq!(s.storm_events, Some(4));
    }
}
