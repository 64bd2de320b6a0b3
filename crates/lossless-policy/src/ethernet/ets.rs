//! IEEE 802.1Qaz ETS from the CEE priority groups: the same classes and shares, so a port
//! runs the policy whichever DCBX version it negotiates (`mode = "auto"` runs IEEE first).
//!
//! Priority group G becomes traffic class G: a priority's class is its PGID (0-7 here,
//! never CEE's strict 15, since a PGID is an SL2VL table's VL 0-7), a class's bandwidth is
//! its group's percentage, and a class that carries a priority is served by ETS. A class no
//! priority is in has 0 % (the PG percentages give bandwidth only to the groups that carry
//! a priority) and is strict: it holds nothing, and drivers refuse ETS on an unused class
//! (hns3).

use serde::Serialize;

/// The three ETS tables of one interface, as losslessd's `ets.prio_tc`, `ets.tc_bw` and
/// `ets.tsa` take them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthEts {
    /// Traffic class of priority 0..7.
    pub prio_tc: [u8; 8],
    /// Bandwidth percentage of traffic class 0..7; sums to 100.
    pub tc_bw: [u8; 8],
    /// Selection algorithm of traffic class 0..7: `"ets"` or `"strict"`.
    pub tsa: [&'static str; 8],
}

/// The ETS tables meaning what the priority groups `pgid` with shares `percent` mean.
pub(super) fn from_pg(pgid: &[u8; 8], percent: &[u8; 8]) -> EthEts {
    let mut tsa = ["strict"; 8];
    for g in pgid {
        if let Some(t) = tsa.get_mut(usize::from(*g)) {
            *t = "ets";
        }
    }
    EthEts {
        prio_tc: *pgid,
        tc_bw: *percent,
        tsa,
    }
}
