//! The RDMA device's congestion and retransmission counters (`hw_counters`): what each
//! driver's counter is ([`RoceCounter::of`]), what one reading says ([`RoceSample`]),
//! and totals that never go down ([`RoceCounters`]), on the same rules as the PFC
//! counters (a reset, a wrap or a vanished counter is counted, never taken as events).
//!
//! The runtime reads `class/infiniband/DEV/ports/N/hw_counters/NAME` (losslessd under
//! its `--sysfs` root, the lab from its model) for the names [`RoceCounter::of`] knows,
//! with the PFC counters, and hands them back in the [`super::PfcSample`].

use serde::{Deserialize, Serialize};

use super::track::{Discontinuity, DiscontinuityCounts, Step, Track};

pub use lossless_proto::pfc::{RoceCounter, HW_COUNTERS};

/// The Prometheus metric a counter is a series of, and the `reason` label of a
/// retransmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    CnpSent,
    CnpHandled,
    CnpIgnored,
    EcnMarked,
    OutOfBuffer,
    Retransmission(&'static str),
}

/// The metric family of a counter.
pub fn family(c: RoceCounter) -> Family {
    match c {
        RoceCounter::CnpSent => Family::CnpSent,
        RoceCounter::CnpHandled => Family::CnpHandled,
        RoceCounter::CnpIgnored => Family::CnpIgnored,
        RoceCounter::EcnMarked => Family::EcnMarked,
        RoceCounter::OutOfBuffer => Family::OutOfBuffer,
        c => Family::Retransmission(c.name()),
    }
}

/// One value of a hw counter file as the kernel shows it (`%llu\n`,
/// `drivers/infiniband/core/sysfs.c` show_hw_stats); None when it is not that.
pub fn parse_hw_counter(text: &str) -> Option<u64> {
    let t = text.strip_suffix('\n').unwrap_or(text);
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// One counter of a reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoceValue {
    pub counter: RoceCounter,
    /// The driver's name for it (its file under `hw_counters/`).
    pub name: String,
    pub value: u64,
}

/// One reading of a port's RDMA hw counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoceSample {
    /// The RDMA device and its port.
    pub device: String,
    pub port: u32,
    /// The counters read (those [`RoceCounter::of`] knows), in the driver's order.
    pub values: Vec<RoceValue>,
    /// What could not be read (no `hw_counters` directory, a file that failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One counter's total and rate.
#[derive(Debug, Clone, PartialEq)]
pub struct RoceTrack {
    pub counter: RoceCounter,
    pub name: String,
    pub track: Track,
    /// Its change over the last interval, per second (None: not known).
    pub rate: Option<f64>,
}

impl RoceTrack {
    /// The total since the port was added (None: never reported).
    pub fn total(&self) -> Option<u64> {
        (self.track.last().is_some() || self.track.total > 0).then_some(self.track.total)
    }
}

/// A port's RDMA counters: the device last read, each counter's total.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoceCounters {
    /// `DEV` and its port, from the last reading that had a device.
    pub device: Option<(String, u32)>,
    /// Why the last reading had no counters, or some failed.
    pub error: Option<String>,
    /// In the order first seen.
    pub tracks: Vec<RoceTrack>,
    pub discontinuities: DiscontinuityCounts,
}

impl RoceCounters {
    /// Takes a reading (`None`: the port has no RDMA device now); `seconds` since the
    /// previous reading, when the two are one interval. The counters that did not
    /// continue from their last value.
    pub fn ingest(
        &mut self,
        seconds: Option<f64>,
        sample: Option<&RoceSample>,
    ) -> Vec<(RoceCounter, Discontinuity)> {
        let mut broken = Vec::new();
        let values: &[RoceValue] = sample.map_or(&[], |s| &s.values);
        for v in values {
            if !self.tracks.iter().any(|t| t.name == v.name) {
                self.tracks.push(RoceTrack {
                    counter: v.counter,
                    name: v.name.clone(),
                    track: Track::default(),
                    rate: None,
                });
            }
        }
        for t in &mut self.tracks {
            let now = values.iter().find(|v| v.name == t.name).map(|v| v.value);
            let step = t.track.update(now);
            if let Step::Broken(d) = step {
                self.discontinuities.count(&d);
                broken.push((t.counter, d));
            }
            t.rate = match (step, seconds) {
                (Step::Delta(d), Some(s)) => Some(d as f64 / s),
                _ => None,
            };
        }
        if let Some(s) = sample {
            self.device = Some((s.device.clone(), s.port));
        }
        self.error = sample.and_then(|s| s.error.clone());
        broken
    }

    /// A reading failed: no interval spans the gap.
    pub fn failed(&mut self) {
        for t in &mut self.tracks {
            t.rate = None;
        }
    }

    /// Whether the last reading had any counter.
    pub fn present(&self) -> bool {
        self.tracks.iter().any(|t| t.track.last().is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[(&str, u64)]) -> RoceSample {
        RoceSample {
            device: "mlx5_0".into(),
            port: 1,
            values: values
                .iter()
                .map(|(n, v)| RoceValue {
                    counter: RoceCounter::of(n).expect("a known counter"),
                    name: n.to_string(),
                    value: *v,
                })
                .collect(),
            error: None,
        }
    }

    #[test]
    fn each_drivers_names_mean_one_thing() {
        use RoceCounter::*;
        for (name, want) in [
            ("np_cnp_sent", Some(CnpSent)),
            ("cnpSent", Some(CnpSent)),
            ("tx_cnp_pkts", Some(CnpSent)),
            ("tx_cnp_pkt", Some(CnpSent)),
            ("rp_cnp_handled", Some(CnpHandled)),
            ("RxECNMrkd", Some(EcnMarked)),
            ("rx_ecn_marked_pkts", Some(EcnMarked)),
            ("np_ecn_marked_roce_packets", Some(EcnMarked)),
            ("local_ack_timeout_err", Some(AckTimeout)),
            ("to_retransmits", Some(AckTimeout)),
            ("lifespan", None),
            ("rx_write_requests", None),
            ("ecn_doorbell", None),
            ("NP_CNP_SENT", None),
        ] {
            assert_eq!(RoceCounter::of(name), want, "{name}");
        }
        assert_eq!(
            family(RoceCounter::DuplicateRequest),
            Family::Retransmission("duplicate_request")
        );
        assert_eq!(family(RoceCounter::CnpSent), Family::CnpSent);
    }

    #[test]
    fn a_counter_file_is_digits_and_one_newline() {
        assert_eq!(parse_hw_counter("0\n"), Some(0));
        assert_eq!(parse_hw_counter("18446744073709551615\n"), Some(u64::MAX));
        assert_eq!(parse_hw_counter("12"), Some(12));
        for bad in [
            "",
            "\n",
            "-1\n",
            "1 \n",
            " 1\n",
            "1\n\n",
            "18446744073709551616\n",
            "+1",
        ] {
            assert_eq!(parse_hw_counter(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn totals_rates_and_a_device_that_goes_and_comes_back() {
        let mut c = RoceCounters::default();
        assert!(c
            .ingest(None, Some(&sample(&[("np_cnp_sent", 10)])))
            .is_empty());
        assert_eq!(c.tracks[0].total(), Some(0), "a baseline");
        c.ingest(
            Some(0.5),
            Some(&sample(&[("np_cnp_sent", 30), ("out_of_sequence", 4)])),
        );
        assert_eq!(c.tracks[0].total(), Some(20));
        assert_eq!(c.tracks[0].rate, Some(40.0));
        assert_eq!(c.tracks[1].total(), Some(0), "first seen: a baseline");
        // The driver reloads: the device goes, and comes back counting from 0.
        let broken = c.ingest(Some(0.5), None);
        assert_eq!(broken.len(), 2, "{broken:?}");
        assert!(!c.present());
        assert_eq!(c.discontinuities.vanished, 2);
        c.ingest(
            Some(0.5),
            Some(&sample(&[("np_cnp_sent", 0), ("out_of_sequence", 0)])),
        );
        c.ingest(
            Some(0.5),
            Some(&sample(&[("np_cnp_sent", 5), ("out_of_sequence", 1)])),
        );
        assert_eq!(c.tracks[0].total(), Some(25), "never goes down");
        assert_eq!(c.tracks[1].total(), Some(1));
        assert_eq!(c.device, Some(("mlx5_0".to_string(), 1)));
    }
}
