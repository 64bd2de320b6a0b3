//! Reading the PFC counters off the event loop: a thread of its own with its own dcbnl
//! and ethtool sockets takes the ports' requests (`Output::ReadPfc`), reads
//! `DCB_CMD_IEEE_GET` (the IEEE PFC object's `requests` and `indications`) and the
//! driver's ethtool statistics by name, and hands the samples back to the core task as
//! one input per batch, each with the time it was taken. A slow driver (mlx5 reads its
//! counters from firmware) delays only this thread, never an LLDPDU, and a reading
//! handled late is still judged on when it was taken.

use std::collections::HashMap;
use std::io;
use std::sync::mpsc as std_mpsc;
use std::thread;

use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::pfc::{Counter, PfcSample, PfcSource};
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

/// The per-priority PFC statistics drivers name, after their `rx_` or `tx_`:
/// `PREFIX<N>SUFFIX` with N a priority 0..=7, and the counter it is received and sent.
/// mlx5: `rx_prio3_pause`, `tx_prio3_pause_duration`, `rx_prio3_pause_transition`; ice:
/// `rx_priority_3_xoff`; ixgbe: `rx_pb_3_pxoff`.
const PER_PRIORITY: [(&str, &str, Counter, Counter); 5] = [
    ("prio", "_pause", Counter::RxPause, Counter::TxPause),
    (
        "prio",
        "_pause_duration",
        Counter::RxPauseDuration,
        Counter::TxPauseDuration,
    ),
    (
        "prio",
        "_pause_transition",
        Counter::RxPauseTransitions,
        Counter::TxPauseTransitions,
    ),
    ("priority_", "_xoff", Counter::RxPause, Counter::TxPause),
    ("pb_", "_pxoff", Counter::RxPause, Counter::TxPause),
];

/// mlx5's per-port storm counter: the device kept pausing and stopped.
const STORM: &str = "tx_pause_storm_error_events";

/// What a driver's statistic is for the PFC counters, by its name ([`PER_PRIORITY`],
/// [`STORM`]).
pub fn classify(name: &str) -> Option<PfcStat> {
    if name == STORM {
        return Some(PfcStat::Storm);
    }
    let (rx, rest) = match name.strip_prefix("rx_") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("tx_")?),
    };
    PER_PRIORITY
        .iter()
        .find_map(|&(prefix, suffix, rx_counter, tx_counter)| {
            let n = rest.strip_prefix(prefix)?.strip_suffix(suffix)?;
            let priority = match n.as_bytes() {
                [d @ b'0'..=b'7'] => d - b'0',
                _ => return None,
            };
            let counter = if rx { rx_counter } else { tx_counter };
            Some(PfcStat::Counter(counter, priority))
        })
}

/// What the reading thread knows of an interface's ethtool statistics.
enum Layout {
    /// The driver has `count` statistics, these of them PFC's (by index); `values` is
    /// the buffer each reading fills (a reading allocates nothing).
    Pfc {
        count: u32,
        stats: Vec<(usize, PfcStat)>,
        values: Vec<u64>,
    },
    /// None of them is PFC's, or (`why`) the driver gave none at all: looked at again
    /// after `left` more readings (a driver reload may bring them).
    NoPfc { left: u32, why: Option<String> },
}

/// Readings between two looks at a driver that has no PFC statistics (10 s at the
/// default interval): the driver is not asked for its statistics on every reading.
pub const REPROBE_READS: u32 = 50;

/// One port's reading: when it was taken (the watchdog judges on this time, not on
/// when the event loop gets to it) and what it said.
#[derive(Debug)]
pub struct PfcRead {
    pub ifindex: u32,
    pub taken: std::time::Instant,
    pub result: Result<PfcSample, HardwareError>,
}

/// The reading thread's handle: requests go in; the readings come back in batches,
/// all that were asked for while the thread was busy in one (one input for the event
/// loop per round, not one per port).
pub struct PfcReader {
    tx: std_mpsc::Sender<(u32, String)>,
}

impl PfcReader {
    /// Starts the thread; `deliver` hands each batch on, and returns false when nobody
    /// takes them any more (the thread then ends).
    pub fn start(mut deliver: impl FnMut(Vec<PfcRead>) -> bool + Send + 'static) -> PfcReader {
        let (tx, rx) = std_mpsc::channel::<(u32, String)>();
        let spawned = thread::Builder::new()
            .name("pfc-counters".into())
            .spawn(move || {
                let mut r = Reading::default();
                let mut asked = Vec::new();
                while let Ok(first) = rx.recv() {
                    asked.push(first);
                    asked.extend(rx.try_iter());
                    let reads = asked
                        .drain(..)
                        .map(|(ifindex, name)| {
                            let result = r.read(&name);
                            PfcRead {
                                ifindex,
                                taken: std::time::Instant::now(),
                                result,
                            }
                        })
                        .collect();
                    if !deliver(reads) {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the PFC counter thread");
        }
        PfcReader { tx }
    }

    /// The reader for the daemon: batches come back as [`Input::Pfc`].
    pub(crate) fn for_inputs(input: mpsc::Sender<Input>) -> PfcReader {
        PfcReader::start(move |reads| input.blocking_send(Input::Pfc(reads)).is_ok())
    }

    /// Asks for a port's counters.
    pub fn request(&self, ifindex: u32, name: String) -> bool {
        self.tx.send((ifindex, name)).is_ok()
    }
}

/// The reading thread's sockets and what it knows of each driver's statistics.
#[derive(Default)]
pub struct Reading {
    dcbnl: Option<Dcbnl>,
    ethtool: Option<EthtoolStats>,
    layouts: HashMap<String, Layout>,
}

impl Reading {
    /// One port's PFC counters: dcbnl's, and the driver's ethtool statistics where it
    /// has PFC ones.
    pub fn read(&mut self, name: &str) -> Result<PfcSample, HardwareError> {
        let (mut sample, dcb) = match self.dcbnl_counters(name) {
            Ok(s) => (s, Ok(())),
            Err(e) => (PfcSample::default(), Err(e)),
        };
        match (self.ethtool_counters(name, &mut sample), dcb) {
            (Ok(true), dcb) => {
                sample.source = match dcb {
                    Ok(()) => PfcSource::DcbnlEthtool,
                    Err(_) => PfcSource::Ethtool,
                };
                Ok(sample)
            }
            (eth, Ok(())) => {
                if let Err(e) = eth {
                    debug!(port = name, reason = %e, "no ethtool PFC statistics");
                }
                Ok(sample)
            }
            (eth, Err(d)) => {
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

    /// Adds the driver's PFC statistics to `sample`; false when it has none. The names
    /// (`ETHTOOL_GSTRINGS`) are read once and again only when the number of statistics
    /// changes; a driver without PFC statistics is asked again only every
    /// [`REPROBE_READS`] readings; otherwise one `ETHTOOL_GSTATS` per reading, into a
    /// buffer kept for the port.
    fn ethtool_counters(&mut self, name: &str, sample: &mut PfcSample) -> io::Result<bool> {
        let e = match &mut self.ethtool {
            Some(e) => e,
            None => self.ethtool.insert(EthtoolStats::open()?),
        };
        match self.layouts.get_mut(name) {
            Some(Layout::Pfc { .. }) => {}
            Some(Layout::NoPfc { left, .. }) if *left > 0 => *left -= 1,
            // Not looked at yet, or time to look again.
            _ => {
                self.layouts
                    .insert(name.to_string(), Layout::probe(e, name));
            }
        }
        let Some(layout) = self.layouts.get_mut(name) else {
            return Ok(false);
        };
        if let Layout::NoPfc { why, .. } = layout {
            return match why {
                Some(why) => Err(io::Error::other(why.clone())),
                None => Ok(false),
            };
        }
        match layout.read(e, name, sample) {
            // The driver's statistics changed (a reload): their names again.
            Ok(false) => {
                *layout = Layout::probe(e, name);
                layout.read(e, name, sample)
            }
            Ok(true) => Ok(true),
            Err(err) => {
                self.layouts.remove(name);
                Err(err)
            }
        }
    }
}

impl Layout {
    /// Looks at a driver's statistics: how many (`ETHTOOL_GSSET_INFO`) and their names
    /// (`ETHTOOL_GSTRINGS`).
    fn probe(e: &EthtoolStats, name: &str) -> Layout {
        let no_pfc = |why: Option<String>| Layout::NoPfc {
            left: REPROBE_READS,
            why,
        };
        let count = match e.count(name) {
            Ok(n) => n,
            Err(err) => return no_pfc(Some(err.to_string())),
        };
        let stats: Vec<(usize, PfcStat)> = match e.names(name, count) {
            Ok(names) => names
                .iter()
                .enumerate()
                .filter_map(|(i, n)| classify(n).map(|s| (i, s)))
                .collect(),
            Err(err) => return no_pfc(Some(err.to_string())),
        };
        if stats.is_empty() {
            return no_pfc(None);
        }
        Layout::Pfc {
            count,
            stats,
            values: Vec::new(),
        }
    }

    /// One `ETHTOOL_GSTATS` into the sample: false when the driver's number of
    /// statistics is not the one the names were read for (or it has no PFC ones).
    fn read(&mut self, e: &EthtoolStats, name: &str, sample: &mut PfcSample) -> io::Result<bool> {
        let Layout::Pfc {
            count,
            stats,
            values,
        } = self
        else {
            return Ok(false);
        };
        let v = e.values(name, *count, values)?;
        if v.len() != *count as usize {
            return Ok(false);
        }
        merge(sample, stats.iter().map(|&(i, s)| (s, v[i])));
        Ok(true)
    }
}

/// Adds the ethtool statistics to a sample: dcbnl's frame counts stay where it has
/// them (the standard interface), ethtool fills what dcbnl does not report.
fn merge(sample: &mut PfcSample, stats: impl IntoIterator<Item = (PfcStat, u64)>) {
    for (s, v) in stats {
        match s {
            PfcStat::Storm => sample.storm_events = Some(v),
            PfcStat::Counter(c, p) => {
                if sample.get(c, p).is_none() {
                    sample.set(c, p, Some(v));
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
            ("rx_priority_8_xoff", None),
            ("rx_pb_3_xoff", None),
            ("rx_prio3_pause_durations", None),
            ("rx_prio33_pause", None),
            ("rx_prio8_pause", None),
            ("rx_prio3_bytes", None),
            ("rx_pause_ctrl_phy", None),
            ("peer_ifindex", None),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
    }

    /// `lo` has neither dcbnl nor ethtool statistics (a real kernel answer): its
    /// statistics are not asked for again on the next reading, and the reason stays.
    #[test]
    fn a_driver_without_statistics_is_not_asked_every_reading_and_keeps_its_reason() {
        let mut r = Reading::default();
        let first = r
            .read("lo")
            .expect_err("lo has no PFC counters")
            .to_string();
        assert!(
            first.contains("dcbnl: ") && first.contains("ethtool statistics: "),
            "{first}"
        );
        let left = |r: &Reading| match r.layouts["lo"] {
            Layout::NoPfc { left, .. } => left,
            Layout::Pfc { .. } => panic!("lo has no PFC statistics"),
        };
        assert_eq!(left(&r), REPROBE_READS);
        let second = r
            .read("lo")
            .expect_err("lo has no PFC counters")
            .to_string();
        assert_eq!(first, second);
        assert_eq!(left(&r), REPROBE_READS - 1, "not asked again");
        for _ in 0..REPROBE_READS {
            let _ = r.read("lo");
        }
        assert_eq!(left(&r), REPROBE_READS, "asked again after 50 readings");
    }

    #[test]
    fn dcbnl_frame_counts_stay_ethtool_fills_the_rest() {
        let mut s = PfcSample::dcbnl([1; 8], [2; 8]);
        merge(
            &mut s,
            [
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
