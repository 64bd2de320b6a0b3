//! Reading the PFC counters off the event loop: a thread of its own with its own dcbnl
//! and ethtool sockets takes the ports' requests (`Output::ReadPfc`), reads
//! `DCB_CMD_IEEE_GET` (the IEEE PFC object's `requests` and `indications`), the
//! driver's ethtool statistics by name (PFC frames, time paused, drops per priority:
//! `lossless_node::pfc::names`) and the RDMA device's hw counters under the `--sysfs`
//! root (`class/infiniband/DEV/ports/N/hw_counters/`: CNPs, ECN marks,
//! retransmissions: `lossless_node::pfc::rdma`), and hands the samples back to the core
//! task as one input per batch, each with the time it was taken. A slow driver (mlx5
//! reads its counters from firmware) delays only this thread, never an LLDPDU, and a
//! reading handled late is still judged on when it was taken.

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::thread;

use lossless_host::SysRoot;
use lossless_node::hardware::{HardwareError, HardwareErrorKind};
pub use lossless_node::pfc::names::{classify, PfcStat};
use lossless_node::pfc::rdma::parse_hw_counter;
use lossless_node::pfc::{PfcSample, PfcSource, RoceCounter, RoceSample, RoceValue};
use lossless_sys::dcbnl::Dcbnl;
use lossless_sys::ethtool::EthtoolStats;
use tracing::debug;

use crate::convert;

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
/// The same for a port without an RDMA device (or without hw counters).
pub const REPROBE_READS: u32 = 50;

/// What the reading thread knows of a port's RDMA device.
enum Rdma {
    /// Its hw counters that [`RoceCounter::of`] knows: (what, file name, its path,
    /// joined once).
    Counters {
        device: String,
        port: u32,
        dir: PathBuf,
        files: Vec<(RoceCounter, String, PathBuf)>,
    },
    /// No RDMA device, or (`why`: device, port, reason) none of its hw counters can
    /// be read: looked at again after `left` more readings.
    Without {
        left: u32,
        why: Option<(String, u32, String)>,
    },
}

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
    /// Starts the thread, the RDMA devices under `/sys`; `deliver` hands each batch on,
    /// and returns false when nobody takes them any more (the thread then ends).
    pub fn start(deliver: impl FnMut(Vec<PfcRead>) -> bool + Send + 'static) -> PfcReader {
        PfcReader::start_at(PathBuf::from("/sys"), deliver)
    }

    /// As [`PfcReader::start`], the RDMA devices under `sysfs` (`--sysfs`).
    pub fn start_at(
        sysfs: PathBuf,
        mut deliver: impl FnMut(Vec<PfcRead>) -> bool + Send + 'static,
    ) -> PfcReader {
        let (tx, rx) = std_mpsc::channel::<(u32, String)>();
        let spawned = thread::Builder::new()
            .name("pfc-counters".into())
            .spawn(move || {
                let mut r = Reading::new(sysfs);
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

    /// Asks for a port's counters.
    pub fn request(&self, ifindex: u32, name: String) -> bool {
        self.tx.send((ifindex, name)).is_ok()
    }
}

/// The reading thread's sockets and what it knows of each driver's statistics and
/// each port's RDMA device.
pub struct Reading {
    dcbnl: Option<Dcbnl>,
    ethtool: Option<EthtoolStats>,
    layouts: HashMap<String, Layout>,
    sysfs: SysRoot,
    rdma: HashMap<String, Rdma>,
    /// What a hw counter file holds, kept between readings (a file read allocates
    /// nothing once it has grown).
    text: String,
}

impl Default for Reading {
    /// The RDMA devices under `/sys`.
    fn default() -> Reading {
        Reading::new(PathBuf::from("/sys"))
    }
}

impl Reading {
    /// The RDMA devices under `sysfs`.
    pub fn new(sysfs: PathBuf) -> Reading {
        Reading {
            dcbnl: None,
            ethtool: None,
            layouts: HashMap::new(),
            sysfs: SysRoot::new(sysfs),
            rdma: HashMap::new(),
            text: String::new(),
        }
    }

    /// One port's PFC counters: dcbnl's, the driver's ethtool statistics where it
    /// has PFC ones, and its RDMA device's hw counters where it has one (those are
    /// lost with the reading when neither dcbnl nor ethtool answers).
    pub fn read(&mut self, name: &str) -> Result<PfcSample, HardwareError> {
        let mut sample = self.pfc(name)?;
        sample.roce = self.roce(name);
        Ok(sample)
    }

    /// The RDMA device's hw counters (None: the port has no RDMA device). Which files
    /// to read is found once, and again after the device went and, for
    /// a port without a device, every [`REPROBE_READS`] readings.
    pub fn roce(&mut self, name: &str) -> Option<RoceSample> {
        match self.rdma.get_mut(name) {
            Some(Rdma::Without { left, .. }) if *left > 0 => *left -= 1,
            Some(Rdma::Counters { .. }) => {}
            _ => {
                let found = self.probe_rdma(name);
                self.rdma.insert(name.to_string(), found);
            }
        }
        let (device, port, dir, files) = match self.rdma.get(name)? {
            Rdma::Without { why: None, .. } => return None,
            Rdma::Without {
                why: Some((device, port, why)),
                ..
            } => {
                return Some(RoceSample {
                    device: device.clone(),
                    port: *port,
                    values: Vec::new(),
                    error: Some(why.clone()),
                })
            }
            Rdma::Counters {
                device,
                port,
                dir,
                files,
            } => (device, *port, dir, files),
        };
        let mut sample = RoceSample {
            device: device.clone(),
            port,
            values: Vec::with_capacity(files.len()),
            error: None,
        };
        let mut failed = Vec::new();
        let text = &mut self.text;
        for (counter, file, path) in files {
            text.clear();
            match std::fs::File::open(path).and_then(|mut f| f.read_to_string(text)) {
                Ok(_) => match parse_hw_counter(text) {
                    Some(value) => sample.values.push(RoceValue {
                        counter: *counter,
                        name: file.clone(),
                        value,
                    }),
                    None => failed.push(format!("{} holds {text:?}", path.display())),
                },
                Err(e) => failed.push(format!("reading {}: {e}", path.display())),
            }
        }
        if !failed.is_empty() {
            sample.error = Some(failed.join("; "));
            // The device went (a driver unload takes the directory): look again at the
            // next reading. A file failing with the directory there (firmware refusing
            // one query) is tried again, not a directory listing at every reading.
            if !dir.is_dir() {
                self.rdma.remove(name);
            }
        }
        Some(sample)
    }

    fn probe_rdma(&self, name: &str) -> Rdma {
        let Some(p) = self.sysfs.rdma_port(name) else {
            return Rdma::Without {
                left: REPROBE_READS,
                why: None,
            };
        };
        let dir = self.sysfs.hw_counters(&p);
        let without = |why: String| Rdma::Without {
            left: REPROBE_READS,
            why: Some((p.device.clone(), p.port, why)),
        };
        let mut files: Vec<(RoceCounter, String, PathBuf)> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let file = e.file_name().to_string_lossy().into_owned();
                    RoceCounter::of(&file).map(|c| (c, file, e.path()))
                })
                .collect(),
            Err(e) => return without(format!("{}: {e}", dir.display())),
        };
        if files.is_empty() {
            return without(format!(
                "{} has none of the congestion and retransmission counters lossless reads",
                dir.display()
            ));
        }
        files.sort();
        Rdma::Counters {
            device: p.device,
            port: p.port,
            dir,
            files,
        }
    }

    fn pfc(&mut self, name: &str) -> Result<PfcSample, HardwareError> {
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
    use lossless_node::pfc::Counter;

    use super::*;

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

/// The reading thread on lossless-testkit's emulated host tree: the RDMA devices'
/// hw counters as each driver names them (the kernel's descriptor tables).
#[cfg(test)]
mod rdma_tests {
    use std::collections::BTreeSet;

    use lossless_testkit::sysfs::{hw_counter_names, HostTree, Port};
    use lossless_testkit::Model;

    use super::*;

    /// Per model: every hw counter `HW_COUNTERS` follows for its RDMA driver is
    /// found in the driver's own table (the emulated kernel's), and only those are read.
    #[test]
    fn each_rdma_driver_s_counters_are_found_and_read() {
        use lossless_node::pfc::rdma::HW_COUNTERS;
        use RoceCounter::*;
        let cases = [
            (Model::Mlx5, "mlx5_0", "mlx5_ib", 13),
            (Model::Ice, "irdma0", "irdma", 4),
            (Model::Bnxt, "bnxt_re0", "bnxt_re", 9),
            (Model::Hns3, "hns_0", "hns_roce", 2),
        ];
        for (model, ibdev, driver, count) in cases {
            let tree = HostTree::new(&[
                Port::new("p0", model, "0000:41:00.0").ibdev(ibdev),
                Port::new("p1", Model::I40e, "0000:42:00.0"),
            ])
            .expect("the tree");
            let mut r = Reading::new(tree.root().to_path_buf());
            let s = r.roce("p0").expect("p0 has an RDMA device");
            assert_eq!((s.device.as_str(), s.port, &s.error), (ibdev, 1, &None));
            let got: BTreeSet<(&str, RoceCounter)> = s
                .values
                .iter()
                .map(|v| (v.name.as_str(), v.counter))
                .collect();
            let want: BTreeSet<(&str, RoceCounter)> = HW_COUNTERS
                .iter()
                .filter(|(d, _, _)| *d == driver)
                .map(|&(_, n, c)| (n, c))
                .collect();
            assert_eq!(
                got, want,
                "{model}: a name in HW_COUNTERS the driver lacks?"
            );
            assert_eq!(got.len(), count, "{model}");
            assert!(s.values.iter().all(|v| v.value == 0), "{model}: power-on");
            let sent = s
                .values
                .iter()
                .find(|v| v.counter == CnpSent)
                .expect("CNPs sent")
                .name
                .clone();
            tree.set_counter(ibdev, &sent, 1234).expect("set");
            let s = r.roce("p0").expect("still there");
            let v = s.values.iter().find(|v| v.name == sent).expect("read");
            assert_eq!(v.value, 1234, "{model}");
            // XL710: no RDMA device, no counters, and not looked for at every reading.
            assert_eq!(r.roce("p1"), None);
            assert!(matches!(r.rdma["p1"], Rdma::Without { left, .. } if left == REPROBE_READS));
            assert_eq!(r.roce("p1"), None);
            assert!(
                matches!(r.rdma["p1"], Rdma::Without { left, .. } if left == REPROBE_READS - 1)
            );
        }
    }

    /// The device goes (a driver unload): the reading says which file failed, the
    /// next finds no device; it comes back at power-on values and is read again.
    #[test]
    fn a_device_that_goes_is_named_and_found_again() {
        let tree = HostTree::new(&[Port::new("p0", Model::Mlx5, "0000:41:00.0").ibdev("mlx5_0")])
            .expect("the tree");
        let mut r = Reading::new(tree.root().to_path_buf());
        tree.set_counter("mlx5_0", "out_of_sequence", 7)
            .expect("set");
        assert!(r.roce("p0").is_some_and(|s| s.values.len() == 13));
        tree.unplug("p0").expect("unplug");
        let s = r.roce("p0").expect("the device last known");
        assert!(s.values.is_empty(), "{s:?}");
        let e = s.error.unwrap_or_default();
        assert!(
            e.contains("hw_counters/") && e.contains("No such file"),
            "{e}"
        );
        assert_eq!(r.roce("p0"), None, "no device now");
        tree.replug("p0").expect("replug");
        for _ in 0..REPROBE_READS {
            assert_eq!(r.roce("p0"), None, "looked for again only after a while");
        }
        let s = r.roce("p0").expect("back");
        let oos = s.values.iter().find(|v| v.name == "out_of_sequence");
        assert_eq!(oos.map(|v| v.value), Some(0), "power-on again");
    }

    /// A file that cannot be read while the device is there is named at each reading
    /// and does not make each reading list the directory again; the others are read.
    #[test]
    fn a_file_that_fails_with_the_device_there_is_not_a_relisting() {
        let tree = HostTree::new(&[Port::new("p0", Model::Mlx5, "0000:41:00.0").ibdev("mlx5_0")])
            .expect("the tree");
        let dir = tree.path("class/infiniband/mlx5_0/ports/1/hw_counters");
        let mut r = Reading::new(tree.root().to_path_buf());
        assert!(r.roce("p0").is_some_and(|s| s.values.len() == 13));
        std::fs::write(dir.join("out_of_sequence"), "x\n").expect("garbage");
        for _ in 0..3 {
            let s = r.roce("p0").expect("the device");
            assert_eq!(s.values.len(), 12, "{s:?}");
            assert!(
                s.error
                    .as_deref()
                    .is_some_and(|e| e.contains("out_of_sequence")),
                "{s:?}"
            );
            assert!(
                matches!(r.rdma["p0"], Rdma::Counters { .. }),
                "the files are kept: no directory listing at the next reading"
            );
        }
    }

    /// A directory without any counter we read is said once per look, with why.
    #[test]
    fn hw_counters_without_any_we_read_are_named() {
        let tree = HostTree::new(&[Port::new("p0", Model::Mlx5, "0000:41:00.0").ibdev("mlx5_0")])
            .expect("the tree");
        let dir = tree.path("class/infiniband/mlx5_0/ports/1/hw_counters");
        for name in hw_counter_names(Model::Mlx5) {
            if RoceCounter::of(name).is_some() {
                std::fs::remove_file(dir.join(name)).expect("remove");
            }
        }
        let mut r = Reading::new(tree.root().to_path_buf());
        let s = r.roce("p0").expect("the device");
        assert!(s.values.is_empty());
        assert!(
            s.error
                .as_deref()
                .is_some_and(|e| e.contains("none of the congestion")),
            "{s:?}"
        );
    }
}
