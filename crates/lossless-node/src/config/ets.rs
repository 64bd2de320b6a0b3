//! `[ports."NAME".ets]`: IEEE 802.1Qaz ETS, the traffic classes of a port.
//!
//! Either three tables of eight, as the TLV carries them:
//!
//! ```toml
//! [ports."eth0".ets]
//! willing = false
//! prio_tc = [0, 0, 0, 1, 0, 0, 2, 0]      # traffic class of priorities 0..7
//! tc_bw = [50, 50, 0, 0, 0, 0, 0, 0]      # bandwidth share of classes 0..7, sum 100
//! tsa = ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"]
//! ```
//!
//! or per traffic class (priorities not listed stay on class 0; classes not listed
//! are strict with no share):
//!
//! ```toml
//! tcs = [
//!     { tc = 0, priorities = [0, 1, 2, 4, 5, 7], bandwidth = 50 },
//!     { tc = 1, priorities = [3], bandwidth = 50 },            # RoCE, lossless
//!     { tc = 2, priorities = [6], tsa = "strict" },            # CNP
//! ]
//! ```
//!
//! plus `max_tcs` (1..=8), `cbs`, `recommend` (send the table as an ETS Recommendation
//! for a willing peer; default: when not willing) and `enable`, `willing`,
//! `advertise`. The tables' rules are the TLV's ([`lossless_dcbx::ieee::EtsAdmin`]).

use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{EtsTable, Tsa, MAX_TCS};

use super::error::{each, Fault};
use super::priorities::{indexed, priorities};
use super::read::{quoted, Field};
use super::setting::{Feature, Flag, Setting, Site};

pub(crate) const ETS_KEYS: &[&str] = &[
    "enable",
    "willing",
    "advertise",
    "prio_tc",
    "tc_bw",
    "tsa",
    "tcs",
    "max_tcs",
    "cbs",
    "recommend",
];
const TC_KEYS: &[&str] = &["tc", "priorities", "bandwidth", "tsa"];

fn site(f: &Field) -> Site {
    Site {
        key: f.path.clone(),
        at: f.at(),
        parts: Vec::new(),
    }
}

/// The keys of an `[ets]` table.
pub(crate) fn read(section: &Field, out: &mut Vec<(Setting, Site)>, faults: &mut Vec<Fault>) {
    each(section.entries(), faults, |f, _| {
        let mut site = site(&f);
        let setting = if let Some(flag) = Flag::from_name(f.name) {
            Setting::Flag(Feature::Ets, flag, f.bool()?)
        } else {
            match f.name {
                "prio_tc" => {
                    let (v, at) = f.eight("the traffic class of each priority 0..7")?;
                    site.parts = indexed(at);
                    Setting::EtsPrioTc(v)
                }
                "tc_bw" => {
                    let (v, at) = f.eight("the bandwidth share of each traffic class 0..7")?;
                    site.parts = indexed(at);
                    Setting::EtsTcBw(v)
                }
                "tsa" => {
                    let (v, at) = tsa_list(&f)?;
                    site.parts = indexed(at);
                    Setting::EtsTsa(v)
                }
                "tcs" => {
                    let (v, parts) = tcs(&f)?;
                    site.parts = parts;
                    Setting::EtsTcs(v)
                }
                "max_tcs" => Setting::EtsMaxTcs(u8::try_from(f.uint(255)?).unwrap_or(u8::MAX)),
                "cbs" => Setting::EtsCbs(f.bool()?),
                "recommend" => Setting::EtsRecommend(f.bool()?),
                _ => return Err(f.unknown(ETS_KEYS)),
            }
        };
        out.push((setting, site));
        Ok(())
    });
}

/// One TSA: `"strict"`, `"cbs"`, `"ets"`, `"vendor"`, or its number (the reserved ones
/// are refused when the tables are checked).
fn tsa(f: &Field) -> Result<Tsa, Fault> {
    if let Ok(name) = f.str() {
        return Tsa::from_name(name).ok_or_else(|| {
            f.fault(format!(
                "unknown TSA {}; expected \"strict\", \"cbs\", \"ets\" or \"vendor\"",
                quoted(name)
            ))
        });
    }
    Ok(Tsa(u8::try_from(f.uint(255)?).unwrap_or(u8::MAX)))
}

fn tsa_list(f: &Field) -> Result<([Tsa; 8], Vec<usize>), Fault> {
    let elements = f.elements()?;
    if elements.len() != 8 {
        return Err(f.fault(format!(
            "expected 8 values (the selection algorithm of each traffic class 0..7), found {}",
            elements.len()
        )));
    }
    let mut out = [Tsa::STRICT; 8];
    for (slot, e) in out.iter_mut().zip(&elements) {
        *slot = tsa(e)?;
    }
    Ok((out, elements.iter().map(Field::at).collect()))
}

/// `tcs = [{ tc, priorities, bandwidth, tsa }, ...]`, by [`ClassTable`]'s rules.
fn tcs(f: &Field) -> Result<(EtsTable, Vec<(String, usize)>), Fault> {
    let mut table = ClassTable::default();
    let mut parts = Vec::new();
    for (i, e) in f.elements()?.iter().enumerate() {
        parts.push((format!("[{i}]"), e.at()));
        let (mut tc, mut prios, mut bw, mut algo) = (None, None, None, None);
        for k in e.entries()? {
            match k.name {
                "tc" => tc = Some((k.uint(u64::MAX)?, k.clone())),
                "priorities" => prios = Some((priorities(&k)?.0, k.clone())),
                "bandwidth" => bw = Some((k.uint(u64::MAX)?, k.clone())),
                "tsa" => algo = Some(tsa(&k)?),
                _ => return Err(k.unknown(TC_KEYS)),
            }
            parts.push((format!("[{i}].{}", k.name), k.at()));
        }
        let (tc, tc_field) = tc.ok_or_else(|| e.fault("missing key `tc`"))?;
        let class = Class {
            tc,
            priorities: prios.as_ref().map_or(PriorityMap::NONE, |(m, _)| *m),
            bandwidth: bw.as_ref().map_or(0, |(v, _)| *v),
            tsa: algo,
        };
        table.add(i, &class).map_err(|fault| {
            let field = match fault.key {
                ClassKey::Tc => &tc_field,
                ClassKey::Priorities => prios.as_ref().map_or(e, |(_, f)| f),
                ClassKey::Bandwidth => bw.as_ref().map_or(e, |(_, f)| f),
            };
            field.fault(fault.reason)
        })?;
    }
    Ok((table.table, parts))
}

/// One entry of `ets.tcs`, as the file, `dcbx set ets --tc` and the control socket give
/// it (values not yet checked).
#[derive(Debug, Clone)]
pub(crate) struct Class {
    pub tc: u64,
    pub priorities: PriorityMap,
    pub bandwidth: u64,
    pub tsa: Option<Tsa>,
}

/// The key of a [`Class`] a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClassKey {
    Tc,
    Priorities,
    Bandwidth,
}

/// Why a [`Class`] was refused.
#[derive(Debug, Clone)]
pub(crate) struct ClassFault {
    pub key: ClassKey,
    pub reason: String,
}

/// The three ETS tables built from the per-class form: the one rule for `ets.tcs`, used
/// by the file and by runtime changes alike. A class 0..=7, listed once; a priority in
/// one class; a share 0..=100. Priorities not listed stay on class 0; classes not
/// listed are strict with no share; a class given a share is served by ETS unless it
/// says otherwise. (The sum of the shares is the table's rule,
/// [`lossless_dcbx::ieee::EtsAdmin::validate`].)
#[derive(Debug, Clone)]
pub(crate) struct ClassTable {
    pub table: EtsTable,
    /// The index of the entry that listed each class.
    seen_tc: [Option<usize>; 8],
    /// The class each priority was put in.
    seen_prio: [Option<u8>; 8],
}

impl Default for ClassTable {
    fn default() -> Self {
        ClassTable {
            table: EtsTable {
                prio_tc: [0; 8],
                tc_bw: [0; 8],
                tsa: [Tsa::STRICT; 8],
            },
            seen_tc: [None; 8],
            seen_prio: [None; 8],
        }
    }
}

impl ClassTable {
    /// Adds entry `index`; on a refusal the table is as before.
    pub(crate) fn add(&mut self, index: usize, class: &Class) -> Result<(), ClassFault> {
        let fault = |key, reason: String| ClassFault { key, reason };
        let tc = u8::try_from(class.tc)
            .ok()
            .filter(|&tc| tc < MAX_TCS)
            .ok_or_else(|| {
                fault(
                    ClassKey::Tc,
                    format!("traffic class {} is out of range 0..=7", class.tc),
                )
            })?;
        let slot = usize::from(tc);
        if let Some(first) = self.seen_tc[slot] {
            return Err(fault(
                ClassKey::Tc,
                format!("traffic class {tc} is already tcs[{first}]"),
            ));
        }
        if let Some(p) = class
            .priorities
            .priorities()
            .find(|&p| self.seen_prio[usize::from(p)].is_some())
        {
            let other = self.seen_prio[usize::from(p)].unwrap_or(tc);
            return Err(fault(
                ClassKey::Priorities,
                format!(
                    "priority {p} is already in traffic class {other}: a priority has one class"
                ),
            ));
        }
        let share = u8::try_from(class.bandwidth)
            .ok()
            .filter(|&b| b <= 100)
            .ok_or_else(|| {
                fault(
                    ClassKey::Bandwidth,
                    format!("{} is more than 100 %", class.bandwidth),
                )
            })?;
        self.seen_tc[slot] = Some(index);
        for p in class.priorities.priorities() {
            self.seen_prio[usize::from(p)] = Some(tc);
            self.table.prio_tc[usize::from(p)] = tc;
        }
        self.table.tc_bw[slot] = share;
        self.table.tsa[slot] = class
            .tsa
            .unwrap_or(if share > 0 { Tsa::ETS } else { Tsa::STRICT });
        Ok(())
    }
}

/// The `ets.*` lines of a rendered section.
pub(crate) fn render(d: &lossless_dcbx::DcbxConfig, line: &mut impl FnMut(&str, String)) {
    let e = &d.ieee.ets;
    line("ets.enable", e.enable.to_string());
    line("ets.willing", e.willing.to_string());
    line("ets.advertise", e.advertise.to_string());
    line("ets.max_tcs", e.cfg.max_tcs.to_string());
    line("ets.cbs", e.cfg.cbs.to_string());
    if let Some(r) = e.cfg.recommend {
        line("ets.recommend", r.to_string());
    }
    let list = |v: [u8; 8]| {
        let v: Vec<String> = v.iter().map(|b| b.to_string()).collect();
        format!("[{}]", v.join(", "))
    };
    line("ets.prio_tc", list(e.cfg.table.prio_tc));
    line("ets.tc_bw", list(e.cfg.table.tc_bw));
    let tsa: Vec<String> = e
        .cfg
        .table
        .tsa
        .iter()
        .map(|t| t.name().map_or_else(|| t.0.to_string(), quoted))
        .collect();
    line("ets.tsa", format!("[{}]", tsa.join(", ")));
}
