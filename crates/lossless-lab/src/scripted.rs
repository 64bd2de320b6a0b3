//! A scripted LLDP sender: LLDPDUs the lab builds with `lossless-wire`, sent on a
//! schedule from a node whose own LLDP is off. For peers the node core never is
//! (one sending CEE and IEEE 802.1Qaz TLVs in the same LLDPDU, as NX-OS does) and for
//! crafted frames (a malformed TLV, a TLV twice). The node core is untouched: the
//! frames go onto the segment through [`Sim::send_frame`].

use lossless_dcbx::{AdminStatus, Duration, Instant, PortConfig};
use lossless_wire::cee::CeeDcbx;
use lossless_wire::frame::emit_lldp_frame;
use lossless_wire::ieee::IeeeDcbx;
use lossless_wire::lldp::{Lldpdu, OrgTlv};
use lossless_wire::{EmitError, MacAddr};

use crate::sim::{NodeId, Sim};

/// The content of one scripted LLDPDU. Chassis ID and Port ID are the MAC (MAC
/// subtype, as lldpad and the lab's agents send them), so a frame built for an
/// agent's MAC speaks for that agent's MSAP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedPdu {
    pub mac: MacAddr,
    pub ttl: u16,
    pub system_name: Option<String>,
    pub cee: Option<CeeDcbx>,
    pub ieee: IeeeDcbx,
    /// Organizationally specific TLVs written as given, after the others: `(OUI,
    /// subtype, information)`. With the IEEE 802.1 OUI and subtypes 9..=12 these are
    /// IEEE DCBX TLVs of any length or content, which is how malformed ones are made.
    pub raw: Vec<([u8; 3], u8, Vec<u8>)>,
}

impl ScriptedPdu {
    /// An LLDPDU with the mandatory TLVs only, TTL 120.
    pub fn new(mac: MacAddr) -> Self {
        ScriptedPdu {
            mac,
            ttl: 120,
            system_name: None,
            cee: None,
            ieee: IeeeDcbx::default(),
            raw: Vec::new(),
        }
    }

    /// The Ethernet frame (to the nearest-bridge address, from `mac`).
    pub fn frame(&self) -> Result<Vec<u8>, EmitError> {
        let (chassis, port) = Lldpdu::mac_ids(&self.mac);
        let mut pdu = Lldpdu::new(chassis, port, self.ttl);
        pdu.system_name = self.system_name.as_deref().map(str::as_bytes);
        pdu.cee_dcbx = self.cee.clone();
        pdu.ieee_dcbx = self.ieee.clone();
        pdu.org_specific = self
            .raw
            .iter()
            .map(|(oui, subtype, info)| OrgTlv {
                oui: *oui,
                subtype: *subtype,
                info,
            })
            .collect();
        let mut out = Vec::new();
        emit_lldp_frame(self.mac, &pdu, &mut out)?;
        Ok(out)
    }
}

/// A node of the simulator that sends one frame every `interval` from `start`,
/// and reads nothing.
#[derive(Debug, Clone)]
pub struct ScriptedPeer {
    pub node: NodeId,
    frame: Vec<u8>,
    interval: Duration,
    next: Option<Instant>,
}

impl ScriptedPeer {
    /// Adds a node named `name` with `mac` whose own LLDP is disabled (it neither
    /// sends nor learns), link down, on no segment; nothing scheduled yet.
    pub fn add(sim: &mut Sim, name: &str, mac: MacAddr) -> ScriptedPeer {
        let mut cfg = PortConfig::new(mac);
        cfg.admin_status = AdminStatus::Disabled;
        // A default configuration with LLDP off is always valid.
        let node = sim.add_agent(name, cfg).expect("a silent node");
        ScriptedPeer {
            node,
            frame: Vec::new(),
            interval: Duration::from_secs(30),
            next: None,
        }
    }

    /// Sends `frame` at `start` and every `interval` after it (once, for a zero
    /// interval).
    pub fn schedule(&mut self, frame: Vec<u8>, start: Instant, interval: Duration) {
        self.frame = frame;
        self.interval = interval;
        self.next = Some(start);
    }

    /// Sends nothing more.
    pub fn stop(&mut self) {
        self.next = None;
    }

    /// The next scheduled transmission.
    pub fn next(&self) -> Option<Instant> {
        self.next
    }

    /// Runs the simulator to `until`, sending on schedule.
    pub fn run_until(&mut self, sim: &mut Sim, until: Instant) {
        self.run_until_true(sim, until, |_| false);
    }

    /// Runs the simulator on schedule until `done` holds (checked after every
    /// step and every scripted frame) or `limit` passes; returns the instant `done`
    /// first held.
    pub fn run_until_true(
        &mut self,
        sim: &mut Sim,
        limit: Instant,
        mut done: impl FnMut(&Sim) -> bool,
    ) -> Option<Instant> {
        loop {
            if done(sim) {
                return Some(sim.now());
            }
            let stop = match self.next {
                Some(t) if t <= limit => t,
                _ => return sim.run_until_true(limit, done),
            };
            if let Some(t) = sim.run_until_true(stop, &mut done) {
                return Some(t);
            }
            sim.send_frame(self.node, self.frame.clone());
            // A zero interval sends once.
            self.next = (self.interval > Duration::ZERO).then(|| stop + self.interval);
        }
    }
}
