//! The DCBX configurations as series, for graphs and for the alerts of
//! `dist/prometheus/`: the PFC priorities each side has on (what we configured, what the
//! port runs, what the peer advertises), and whether the peer is willing (a willing
//! peer runs what we advertise, so what it advertises itself may differ harmlessly).

use std::fmt::Write;

use lossless_dcbx::Version;
use lossless_wire::cee::PriorityMap;

use crate::exposition::{esc, header};
use crate::port::Port;

/// `lossless_pfc_enabled` and `lossless_dcbx_peer_willing` for every port.
pub fn render(out: &mut String, ports: &[&Port]) {
    pfc_enabled(out, ports);
    peer_willing(out, ports);
}

/// The PFC priorities per side, in the running DCBX version.
struct PfcSides {
    admin: PriorityMap,
    oper: PriorityMap,
    /// None: the peer sends no PFC.
    peer: Option<PriorityMap>,
}

fn pfc_sides(p: &Port) -> PfcSides {
    let s = p.agent.status();
    let (admin, peer) = match s.mode.running {
        Version::Cee => (s.pfc.desired.priorities, s.pfc.peer.map(|c| c.priorities)),
        Version::Ieee => (s.ieee.pfc.admin, s.ieee.pfc.peer),
    };
    PfcSides {
        admin,
        oper: p.agent.applied_pfc(),
        peer,
    }
}

fn pfc_enabled(out: &mut String, ports: &[&Port]) {
    header(
        out,
        "lossless_pfc_enabled",
        "1 when PFC is on for the priority: side=admin as configured, side=oper as the port \
         runs it (the running DCBX version's operational PFC; 0 when PFC is off), side=peer \
         as the peer advertises it (no sample without a peer PFC).",
        "gauge",
    );
    for p in ports {
        let sides = pfc_sides(p);
        let name = esc(&p.name);
        for (side, map) in [
            ("admin", Some(sides.admin)),
            ("oper", Some(sides.oper)),
            ("peer", sides.peer),
        ] {
            let Some(map) = map else { continue };
            for priority in 0..8u8 {
                let _ = writeln!(
                    out,
                    "lossless_pfc_enabled{{port=\"{name}\",side=\"{side}\",priority=\"{priority}\"}} {}",
                    u8::from(map.contains(priority))
                );
            }
        }
    }
}

fn peer_willing(out: &mut String, ports: &[&Port]) {
    header(
        out,
        "lossless_dcbx_peer_willing",
        "1 when the peer advertises the feature willing, 0 when not (no sample when the peer \
         does not send the feature), in the running DCBX version.",
        "gauge",
    );
    for p in ports {
        let s = p.agent.status();
        let features = match s.mode.running {
            Version::Cee => [
                ("pg", s.pg.peer_willing),
                ("pfc", s.pfc.peer_willing),
                ("app", s.app.peer_willing),
            ],
            Version::Ieee => [
                ("ets", s.ieee.ets.peer_willing),
                ("pfc", s.ieee.pfc.peer_willing),
                ("app", s.ieee.app.peer_willing),
            ],
        };
        for (feature, willing) in features {
            if let Some(w) = willing {
                let _ = writeln!(
                    out,
                    "lossless_dcbx_peer_willing{{port=\"{}\",feature=\"{feature}\"}} {}",
                    esc(&p.name),
                    u8::from(w)
                );
            }
        }
    }
}
