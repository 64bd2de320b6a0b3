//! LLDP receive machine and remote MIB (802.1AB-2016 §9.2.10, Figure 9-7):
//! neighbours keyed by MSAP (Chassis ID + Port ID), aged by rxInfoTTL,
//! deleted by a shutdown LLDPDU, and the tooManyNeighbors condition.

use lossless_wire::cee::CeeDcbx;
use lossless_wire::ieee::IeeeDcbx;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use lossless_wire::lldp::{address_family, capability, Id, Lldpdu, ManagementAddress};
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::event::NeighborLoss;
use crate::stats::LldpStats;
use crate::time::{Duration, Instant};

/// An owned Chassis ID or Port ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedId {
    pub subtype: u8,
    pub id: Vec<u8>,
}

impl OwnedId {
    fn from_wire(id: &Id<'_>) -> Self {
        OwnedId {
            subtype: id.subtype,
            id: id.id.to_vec(),
        }
    }

    fn matches(&self, id: &Id<'_>) -> bool {
        self.subtype == id.subtype && self.id == id.id
    }
}

impl std::fmt::Display for OwnedId {
    /// MAC subtypes as a MAC, printable ids as text, anything else as hex.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::IdText(self.subtype, &self.id).fmt(f)
    }
}

/// The MAC Service Access Point identifier of a neighbour.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Msap {
    pub chassis_id: OwnedId,
    pub port_id: OwnedId,
}

impl Msap {
    fn matches(&self, pdu: &Lldpdu<'_>) -> bool {
        self.chassis_id.matches(&pdu.chassis_id) && self.port_id.matches(&pdu.port_id)
    }
}

/// One neighbour as the remote MIB holds it.
#[derive(Debug, Clone)]
pub struct Neighbor {
    pub msap: Msap,
    /// Source MAC of its last frame.
    pub mac: MacAddr,
    pub ttl: u16,
    /// rxInfoTTL expiry.
    pub expires: Instant,
    pub first_seen: Instant,
    pub last_rx: Instant,
    pub system_name: Option<String>,
    pub port_description: Option<String>,
    pub system_description: Option<String>,
    /// Its System Capabilities TLV: (capabilities, enabled).
    pub system_capabilities: Option<(u16, u16)>,
    /// The IPv4 and IPv6 addresses of its Management Address TLVs, in order.
    pub management_addresses: Vec<IpAddr>,
    /// Its CEE DCBX TLV, if its last LLDPDU had one.
    pub dcbx: Option<CeeDcbx>,
    /// Its IEEE 802.1Qaz TLVs, if its last LLDPDU had any (malformed ones included).
    pub ieee: Option<IeeeDcbx>,
    /// It sends the older CIN DCBX TLV (subtype 1), which we recognise but do not negotiate.
    pub cin_dcbx: bool,
}

/// A serialisable summary of a neighbour.
#[derive(Debug, Clone, Serialize)]
pub struct NeighborSummary {
    pub chassis_id: String,
    pub port_id: String,
    pub mac: MacAddr,
    pub ttl: u16,
    pub expires_in_s: f64,
    pub system_name: Option<String>,
    pub port_description: Option<String>,
    pub system_description: Option<String>,
    pub system_capabilities: Option<CapabilitiesSummary>,
    /// IPv4 and IPv6 management addresses (other families are left out).
    pub management_addresses: Vec<IpAddr>,
    pub dcbx: &'static str,
}

/// The System Capabilities TLV by name (802.1AB Table 8-4).
#[derive(Debug, Clone, Serialize)]
pub struct CapabilitiesSummary {
    pub capabilities: Vec<String>,
    pub enabled: Vec<String>,
}

impl Neighbor {
    pub fn summary(&self, now: Instant) -> NeighborSummary {
        NeighborSummary {
            chassis_id: self.msap.chassis_id.to_string(),
            port_id: self.msap.port_id.to_string(),
            mac: self.mac,
            ttl: self.ttl,
            expires_in_s: self.expires.saturating_since(now).as_secs_f64(),
            system_name: self.system_name.clone(),
            port_description: self.port_description.clone(),
            system_description: self.system_description.clone(),
            system_capabilities: self.system_capabilities.map(|(c, e)| CapabilitiesSummary {
                capabilities: capability::names(c),
                enabled: capability::names(e),
            }),
            management_addresses: self.management_addresses.clone(),
            dcbx: match (&self.dcbx, &self.ieee, self.cin_dcbx) {
                (Some(_), Some(_), _) => "ieee+cee",
                (None, Some(_), _) => "ieee",
                (Some(_), None, _) => "cee",
                (None, None, true) => "cin",
                (None, None, false) => "none",
            },
        }
    }
}

/// What a received LLDPDU did to the remote MIB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RxOutcome {
    /// A known neighbour refreshed its information.
    Updated,
    /// A new MSAP was added (newNeighbor: fast transmission starts).
    Added,
    /// A shutdown LLDPDU deleted a neighbour.
    Deleted(Msap),
    /// Shutdown from an MSAP we did not hold: nothing to do.
    Ignored,
    /// No room: tooManyNeighbors, the information was discarded.
    TooMany,
}

#[derive(Debug, Clone, Default)]
pub struct RemoteMib {
    neighbors: Vec<Neighbor>,
    /// tooManyNeighborsTimer: the condition holds until this instant.
    too_many_until: Option<Instant>,
}

fn lossy(bytes: Option<&[u8]>) -> Option<String> {
    bytes.map(|b| String::from_utf8_lossy(b).into_owned())
}

/// An IPv4 or IPv6 management address; None for other families or a length
/// that does not fit the family.
fn ip(m: &ManagementAddress<'_>) -> Option<IpAddr> {
    match m.address_subtype {
        address_family::IPV4 => <[u8; 4]>::try_from(m.address)
            .ok()
            .map(|b| Ipv4Addr::from(b).into()),
        address_family::IPV6 => <[u8; 16]>::try_from(m.address)
            .ok()
            .map(|b| Ipv6Addr::from(b).into()),
        _ => None,
    }
}

impl RemoteMib {
    pub fn neighbors(&self) -> &[Neighbor] {
        &self.neighbors
    }

    pub fn too_many_neighbors(&self, now: Instant) -> bool {
        self.too_many_until.is_some_and(|t| t > now)
    }

    /// Applies a received, valid LLDPDU (rxProcessFrame).
    pub fn receive(
        &mut self,
        now: Instant,
        src: MacAddr,
        pdu: &Lldpdu<'_>,
        max_neighbors: usize,
        stats: &mut LldpStats,
    ) -> RxOutcome {
        let pos = self.neighbors.iter().position(|n| n.msap.matches(pdu));
        if pdu.ttl == 0 {
            return match pos {
                Some(i) => RxOutcome::Deleted(self.neighbors.remove(i).msap),
                None => RxOutcome::Ignored,
            };
        }
        let ttl = Duration::from_secs(pdu.ttl.into());
        stats.tlvs_unrecognized += (pdu.unknown.len() + pdu.org_specific.len()) as u64;
        let fill = |n: &mut Neighbor| {
            n.mac = src;
            n.ttl = pdu.ttl;
            n.expires = now + ttl;
            n.last_rx = now;
            n.system_name = lossy(pdu.system_name);
            n.port_description = lossy(pdu.port_description);
            n.system_description = lossy(pdu.system_description);
            n.system_capabilities = pdu.system_capabilities.map(|c| (c.capabilities, c.enabled));
            n.management_addresses = pdu.management_addresses.iter().filter_map(ip).collect();
            n.dcbx = pdu.cee_dcbx.clone();
            n.ieee = (!pdu.ieee_dcbx.is_empty()).then(|| pdu.ieee_dcbx.clone());
            n.cin_dcbx = pdu.cin_dcbx.is_some();
        };
        match pos {
            Some(i) => {
                fill(&mut self.neighbors[i]);
                RxOutcome::Updated
            }
            None if self.neighbors.len() < max_neighbors => {
                let mut n = Neighbor {
                    msap: Msap {
                        chassis_id: OwnedId::from_wire(&pdu.chassis_id),
                        port_id: OwnedId::from_wire(&pdu.port_id),
                    },
                    mac: src,
                    ttl: pdu.ttl,
                    expires: now,
                    first_seen: now,
                    last_rx: now,
                    system_name: None,
                    port_description: None,
                    system_description: None,
                    system_capabilities: None,
                    management_addresses: Vec::new(),
                    dcbx: None,
                    ieee: None,
                    cin_dcbx: false,
                };
                fill(&mut n);
                self.neighbors.push(n);
                RxOutcome::Added
            }
            None => {
                // 802.1AB-2016 §9.2.10: tooManyNeighborsTimer = max(timer, rxTTL).
                let until = now + ttl;
                self.too_many_until = Some(self.too_many_until.map_or(until, |t| t.max(until)));
                stats.frames_discarded += 1;
                RxOutcome::TooMany
            }
        }
    }

    /// Deletes neighbours whose rxInfoTTL ran out; returns them.
    pub fn age(&mut self, now: Instant, stats: &mut LldpStats) -> Vec<(Msap, NeighborLoss)> {
        let mut gone = Vec::new();
        self.neighbors.retain(|n| {
            if n.expires <= now {
                gone.push((n.msap.clone(), NeighborLoss::TtlExpired));
                false
            } else {
                true
            }
        });
        stats.ageouts += gone.len() as u64;
        if self.too_many_until.is_some_and(|t| t <= now) {
            self.too_many_until = None;
        }
        gone
    }

    /// Forgets everything (link down, rx disabled).
    pub fn clear(&mut self) -> Vec<(Msap, NeighborLoss)> {
        self.too_many_until = None;
        self.neighbors
            .drain(..)
            .map(|n| (n.msap, NeighborLoss::LocalDown))
            .collect()
    }

    /// The next instant something ages out.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let ages = self.neighbors.iter().map(|n| n.expires).min();
        match (ages, self.too_many_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
