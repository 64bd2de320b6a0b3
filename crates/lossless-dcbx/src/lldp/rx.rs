//! LLDP receive machine and remote MIB (802.1AB-2016 §9.2.10, Figure 9-7):
//! neighbours keyed by MSAP (Chassis ID + Port ID), aged by rxInfoTTL,
//! deleted by a shutdown LLDPDU, and the MSAPs tooManyNeighbors discarded
//! ([`super::discarded`]), each with its own deadline. Which neighbour DCBX talks to,
//! and how long an extra one keeps the port without a peer, is [`super::peer`].

use lossless_wire::cee::CeeDcbx;
use lossless_wire::ieee::IeeeDcbx;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use lossless_wire::lldp::{address_family, capability, Lldpdu, ManagementAddress};
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::event::NeighborLoss;
use crate::stats::LldpStats;
use crate::time::{Duration, Instant};

use super::discarded::{Discarded, Speaks};

pub use super::msap::{Msap, OwnedId};

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
    /// Its IEEE 802.3 Maximum Frame Size TLV: the largest frame it takes, octets.
    pub max_frame_size: Option<u16>,
    /// Its CEE DCBX TLV, if its last LLDPDU had one (boxed, as `ieee`: a peer
    /// speaks one version, and the other's 650 or 250 octets would be held empty
    /// on every port).
    pub dcbx: Option<Box<CeeDcbx>>,
    /// Its IEEE 802.1Qaz TLVs, if its last LLDPDU had any (malformed ones included).
    pub ieee: Option<Box<IeeeDcbx>>,
    /// It sends the older CIN DCBX TLV (subtype 1), which we recognise but do not negotiate.
    pub cin_dcbx: bool,
    /// It has been the port's DCBX peer since it appeared: it holds the port for as
    /// long as it stays.
    pub negotiated: bool,
    /// Since when it has shared the port with another neighbour (None: alone, or
    /// negotiated). A neighbour we never negotiated with holds the port until this
    /// plus `max_neighbor_hold`.
    pub sharing_since: Option<Instant>,
}

/// A serialisable summary of a neighbour.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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
    /// The largest frame it takes, octets (its IEEE 802.3 Maximum Frame Size TLV); null
    /// when it sends none.
    pub max_frame_size: Option<u16>,
    pub dcbx: std::borrow::Cow<'static, str>,
    /// What it is to the multiple-neighbour rule: `negotiated` (it has been the
    /// port's DCBX peer), `holding` (it shares the port and keeps it without a DCBX
    /// peer, `holds_port_s` more seconds), `set_aside` (it held the port for
    /// `max_neighbor_hold` and no longer does), `alone` (the only neighbour),
    /// `silent` (it stopped sending, [`Neighbor::silent_from`]: it counts only if
    /// every neighbour did).
    pub role: std::borrow::Cow<'static, str>,
    pub holds_port_s: Option<f64>,
}

/// The System Capabilities TLV by name (802.1AB Table 8-4).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CapabilitiesSummary {
    pub capabilities: Vec<String>,
    pub enabled: Vec<String>,
}

impl Neighbor {
    /// When it counts as having stopped sending: one and a half of its transmit
    /// intervals after its last LLDPDU, the interval taken as a quarter of its TTL
    /// (802.1AB's txTTL is msgTxInterval × msgTxHold, msgTxHold 4 by default, as
    /// lldpad, lldpd and switches send: 45 s for a TTL of 120 s). Only ever compared
    /// with another neighbour that still sends ([`RemoteMib::dcbx_view`]): alone on
    /// the port it stays until its TTL, as 802.1AB says.
    pub fn silent_from(&self) -> Instant {
        self.last_rx + Duration::from_millis(u64::from(self.ttl) * 1000 * 3 / 8)
    }

    /// It stopped sending (see [`Neighbor::silent_from`]).
    pub fn silent(&self, now: Instant) -> bool {
        now >= self.silent_from()
    }

    /// The instant it stops holding the port, if it holds it by sharing.
    pub fn hold_ends(&self, hold: Duration) -> Option<Instant> {
        match (self.negotiated, self.sharing_since) {
            (false, Some(since)) => Some(since + hold),
            _ => None,
        }
    }

    pub fn summary(&self, now: Instant, hold: Duration) -> NeighborSummary {
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
            max_frame_size: self.max_frame_size,
            dcbx: match (&self.dcbx, &self.ieee, self.cin_dcbx) {
                (Some(_), Some(_), _) => "ieee+cee",
                (None, Some(_), _) => "ieee",
                (Some(_), None, _) => "cee",
                (None, None, true) => "cin",
                (None, None, false) => "none",
            }
            .into(),
            role: match (self.negotiated, self.hold_ends(hold)) {
                _ if self.silent(now) => "silent",
                (true, _) => "negotiated",
                (false, Some(end)) if end > now => "holding",
                (false, Some(_)) => "set_aside",
                (false, None) => "alone",
            }
            .into(),
            holds_port_s: self
                .hold_ends(hold)
                .filter(|end| *end > now)
                .map(|end| end.saturating_since(now).as_secs_f64()),
        }
    }
}

/// What a received LLDPDU did to the remote MIB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RxOutcome {
    /// A known neighbour refreshed its information; `ttl_changed`: with a TTL other
    /// than its last one's (which asks for our LLDPDU, see `TxKind::Solicit`).
    Updated { ttl_changed: bool },
    /// A new MSAP was added (newNeighbor: fast transmission starts).
    Added,
    /// A shutdown LLDPDU deleted a neighbour.
    Deleted(Msap),
    /// A shutdown LLDPDU from an MSAP whose information was discarded: forgotten.
    DiscardedShutdown,
    /// Shutdown from an MSAP we did not hold: nothing to do.
    Ignored,
    /// No room: tooManyNeighbors, the information was discarded.
    TooMany,
}

/// What the remote MIB allows: how many neighbours, how long an extra one holds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_neighbors: usize,
    pub hold: Duration,
}

/// What ageing did.
#[derive(Debug, Default)]
pub struct Aged {
    /// Neighbours deleted, and why.
    pub gone: Vec<(Msap, NeighborLoss)>,
    /// Neighbours we never negotiated with whose hold on the port ended.
    pub hold_expired: Vec<Msap>,
    /// Something changed that may change who the DCBX peer is (a discarded MSAP
    /// aged out too).
    pub changed: bool,
}

#[derive(Debug, Clone, Default)]
pub struct RemoteMib {
    pub(super) neighbors: Vec<Neighbor>,
    pub(super) discarded: Discarded,
    /// Up to when holds were checked: a hold that ends later is still to come.
    pub(super) checked: Instant,
}

/// Keeps `value` in `slot`, in the box it already has when there is one (a peer's
/// TLVs are stored again with each of its LLDPDUs).
fn hold<T: Clone>(slot: &mut Option<Box<T>>, value: Option<&T>) {
    match (slot.as_deref_mut(), value) {
        (Some(held), Some(v)) => held.clone_from(v),
        (_, v) => *slot = v.map(|v| Box::new(v.clone())),
    }
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

    /// MSAPs whose information was discarded and has not aged out yet.
    pub fn discarded(&self) -> usize {
        self.discarded.live()
    }

    /// With no neighbour held and one discarded MSAP alive: the DCBX versions its
    /// last LLDPDU spoke, all we know of the port's one neighbour.
    pub fn lone_discarded(&self) -> Option<Speaks> {
        if !self.neighbors.is_empty() {
            return None;
        }
        self.discarded.only().map(|e| e.speaks)
    }

    /// Applies a received, valid LLDPDU (rxProcessFrame).
    pub fn receive(
        &mut self,
        now: Instant,
        src: MacAddr,
        pdu: &Lldpdu<'_>,
        limits: Limits,
        stats: &mut LldpStats,
    ) -> RxOutcome {
        let outcome = self.store(now, src, pdu, limits, stats);
        self.update_sharing(now);
        outcome
    }

    fn store(
        &mut self,
        now: Instant,
        src: MacAddr,
        pdu: &Lldpdu<'_>,
        limits: Limits,
        stats: &mut LldpStats,
    ) -> RxOutcome {
        let pos = self.neighbors.iter().position(|n| n.msap.matches(pdu));
        if pdu.ttl == 0 {
            return match pos {
                Some(i) => RxOutcome::Deleted(self.neighbors.remove(i).msap),
                None if self.discarded.shutdown(&Msap::of(pdu)) => RxOutcome::DiscardedShutdown,
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
            n.max_frame_size = pdu.max_frame_size();
            hold(&mut n.dcbx, pdu.cee_dcbx.as_ref());
            hold(&mut n.ieee, Some(&pdu.ieee_dcbx).filter(|t| !t.is_empty()));
            n.cin_dcbx = pdu.cin_dcbx.is_some();
        };
        match pos {
            Some(i) => {
                let ttl_changed = self.neighbors[i].ttl != pdu.ttl;
                fill(&mut self.neighbors[i]);
                RxOutcome::Updated { ttl_changed }
            }
            None if self.neighbors.len() < limits.max_neighbors => {
                let msap = Msap::of(pdu);
                // Refused before: it keeps the hold it had, not a fresh one.
                let sharing_since = self.discarded.take(&msap).and_then(|e| e.sharing_since);
                let mut n = Neighbor {
                    msap,
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
                    max_frame_size: None,
                    dcbx: None,
                    ieee: None,
                    cin_dcbx: false,
                    negotiated: false,
                    sharing_since,
                };
                fill(&mut n);
                // Room for this one only: nearly every port has one neighbour, and
                // a Vec's first growth would make room for four.
                self.neighbors.reserve_exact(1);
                self.neighbors.push(n);
                RxOutcome::Added
            }
            None => {
                // 802.1AB-2016 §9.2.10 keeps one tooManyNeighborsTimer for all of
                // them (the longest TTL seen); here each MSAP has its own.
                let speaks = Speaks {
                    cee: pdu.cee_dcbx.is_some(),
                    ieee: !pdu.ieee_dcbx.is_empty(),
                };
                self.discarded
                    .note(now, Msap::of(pdu), ttl, speaks, limits.hold);
                stats.frames_discarded += 1;
                RxOutcome::TooMany
            }
        }
    }

    /// Deletes what ran out by `now` (neighbours at their rxInfoTTL, discarded MSAPs
    /// at theirs) and reports the holds that ended since the last call.
    pub fn age(&mut self, now: Instant, hold: Duration, stats: &mut LldpStats) -> Aged {
        let since = self.checked;
        let mut aged = Aged::default();
        let fell_silent = self.neighbors.len() > 1
            && self
                .neighbors
                .iter()
                .any(|n| n.silent_from() > since && n.silent_from() <= now);
        for n in &self.neighbors {
            if let Some(end) = n.hold_ends(hold) {
                if end > since && end <= now && end < n.expires {
                    aged.hold_expired.push(n.msap.clone());
                }
            }
        }
        self.neighbors.retain(|n| {
            if n.expires <= now {
                aged.gone.push((n.msap.clone(), NeighborLoss::TtlExpired));
                false
            } else {
                true
            }
        });
        stats.ageouts += aged.gone.len() as u64;
        let discarded = self.discarded.age(since, now, hold);
        aged.hold_expired.extend(discarded.hold_expired);
        stats.neighbor_hold_expiries += aged.hold_expired.len() as u64;
        aged.changed = !aged.gone.is_empty()
            || !aged.hold_expired.is_empty()
            || discarded.gone > 0
            || fell_silent;
        self.checked = self.checked.max(now);
        self.update_sharing(now);
        aged
    }

    /// Forgets everything (link down, rx disabled).
    pub fn clear(&mut self) -> Vec<(Msap, NeighborLoss)> {
        self.discarded.clear();
        self.neighbors
            .drain(..)
            .map(|n| (n.msap, NeighborLoss::LocalDown))
            .collect()
    }

    /// The next instant something ages out, a hold ends, or (with more than one
    /// neighbour) one falls silent.
    pub fn poll_timeout(&self, hold: Duration) -> Option<Instant> {
        let after = self.checked;
        let several = self.neighbors.len() > 1;
        let neighbors = self.neighbors.iter().flat_map(|n| {
            let hold_end = n.hold_ends(hold).filter(|end| *end > after);
            let silent = Some(n.silent_from()).filter(|t| several && *t > after);
            [Some(n.expires), hold_end, silent]
        });
        neighbors
            .flatten()
            .chain(self.discarded.next_deadline(after, hold))
            .min()
    }
}
