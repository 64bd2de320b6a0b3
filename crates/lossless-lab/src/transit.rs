//! A WAN transit router (a "P" node of draft-he-rtgwg-wan-pfc-00's figure 2): it forwards by
//! the outer headers only and knows nothing of PFC. That is the draft's point:
//! "the nodes in WANs [need not] support PFC flow control capabilities"; the
//! tunnel is just traffic to them.
//!
//! Per frame, as an IP router or an LSR would:
//!
//! - the outer destination MAC must be the receiving interface's;
//! - IPv6: longest-prefix match on the destination address, hop limit
//!   decremented (the SRH is not looked at: a P node is not a segment
//!   endpoint, the segment it carries is the far PE's SID);
//! - IPv4: the header checksum is verified, longest-prefix match on the
//!   destination, TTL decremented and the checksum recomputed (the UDP
//!   checksum does not cover the TTL);
//! - MPLS: the top label is looked up and swapped (a node SID keeps its
//!   value across an SR domain with one SRGB), its TTL decremented; the
//!   labels below and what follows the stack are not read;
//! - the outer MACs become the sending interface's and its neighbour's.
//!
//! Everything after the header it routes on leaves as it came, byte for byte.

use std::net::{Ipv4Addr, Ipv6Addr};

use lossless_wire::tunnel::ipv4::ETHERTYPE_IPV4;
use lossless_wire::tunnel::ipv6::ETHERTYPE_IPV6;
use lossless_wire::tunnel::mpls::{LabelEntry, ENTRY_LEN, ETHERTYPE_MPLS};
use lossless_wire::tunnel::{Ipv4Header, Ipv6Header};
use lossless_wire::{EthernetHeader, MacAddr};
use serde::Serialize;

/// One interface of the router: its MAC and the MAC of the node behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Interface {
    pub mac: MacAddr,
    pub neighbour: MacAddr,
}

/// What a forwarding decision matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    V6 {
        dst: Ipv6Addr,
        prefix: Ipv6Addr,
        len: u8,
        hop_limit: u8,
    },
    V4 {
        dst: Ipv4Addr,
        prefix: Ipv4Addr,
        len: u8,
        ttl: u8,
    },
    Label {
        label: u32,
        out: u32,
        ttl: u8,
    },
}

impl std::fmt::Display for Lookup {
    /// The route and the hop limit / TTL as it leaves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lookup::V6 {
                dst,
                prefix,
                len,
                hop_limit,
            } => write!(f, "IPv6 {dst} via {prefix}/{len}, hop limit {hop_limit}"),
            Lookup::V4 {
                dst,
                prefix,
                len,
                ttl,
            } => write!(f, "IPv4 {dst} via {prefix}/{len}, TTL {ttl}"),
            Lookup::Label { label, out, ttl } => {
                write!(f, "MPLS label {label} swapped to {out}, TTL {ttl}")
            }
        }
    }
}

/// A forwarded frame: where it goes and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    /// Index of the interface it leaves on.
    pub interface: usize,
    pub lookup: Lookup,
    pub frame: Vec<u8>,
}

/// Why the router dropped a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransitDrop {
    /// Outer destination MAC is not the receiving interface's.
    NotForUs,
    /// Neither IPv4, IPv6 nor MPLS unicast.
    NotRoutable,
    /// The header it would route on does not decode (length, version, IPv4
    /// checksum).
    Malformed,
    /// Hop limit or TTL would reach zero.
    Expired,
    /// No route for the destination address or label.
    NoRoute,
}

impl std::fmt::Display for TransitDrop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TransitDrop::NotForUs => "not for this router (destination MAC)",
            TransitDrop::NotRoutable => "not IPv4, IPv6 or MPLS unicast",
            TransitDrop::Malformed => "malformed header",
            TransitDrop::Expired => "hop limit expired",
            TransitDrop::NoRoute => "no route",
        })
    }
}

/// Frames forwarded and dropped, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TransitCounters {
    pub received: u64,
    pub forwarded: u64,
    pub not_for_us: u64,
    pub not_routable: u64,
    pub malformed: u64,
    pub expired: u64,
    pub no_route: u64,
}

impl TransitCounters {
    fn drop(&mut self, why: TransitDrop) {
        let c = match why {
            TransitDrop::NotForUs => &mut self.not_for_us,
            TransitDrop::NotRoutable => &mut self.not_routable,
            TransitDrop::Malformed => &mut self.malformed,
            TransitDrop::Expired => &mut self.expired,
            TransitDrop::NoRoute => &mut self.no_route,
        };
        *c += 1;
    }
}

#[derive(Debug, Clone, Copy)]
struct Route<A> {
    prefix: A,
    len: u8,
    interface: usize,
}

#[derive(Debug, Clone, Copy)]
struct Swap {
    label: u32,
    out: u32,
    interface: usize,
}

/// The router. Interfaces are numbered by their index in `new`.
#[derive(Debug, Clone)]
pub struct Transit {
    interfaces: Vec<Interface>,
    v6: Vec<Route<Ipv6Addr>>,
    v4: Vec<Route<Ipv4Addr>>,
    labels: Vec<Swap>,
    counters: TransitCounters,
}

fn v6_matches(addr: Ipv6Addr, prefix: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(addr) & mask == u128::from(prefix) & mask
}

fn v4_matches(addr: Ipv4Addr, prefix: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(addr) & mask == u32::from(prefix) & mask
}

/// The longest matching prefix.
fn longest<A: Copy>(
    routes: &[Route<A>],
    addr: A,
    matches: fn(A, A, u8) -> bool,
) -> Option<Route<A>> {
    routes
        .iter()
        .filter(|r| matches(addr, r.prefix, r.len))
        .max_by_key(|r| r.len)
        .copied()
}

impl Transit {
    pub fn new(interfaces: Vec<Interface>) -> Transit {
        Transit {
            interfaces,
            v6: Vec::new(),
            v4: Vec::new(),
            labels: Vec::new(),
            counters: TransitCounters::default(),
        }
    }

    /// An IPv6 route; `len` is clamped to 128.
    pub fn route_v6(&mut self, prefix: Ipv6Addr, len: u8, interface: usize) {
        self.v6.push(Route {
            prefix,
            len: len.min(128),
            interface,
        });
    }

    /// An IPv4 route; `len` is clamped to 32.
    pub fn route_v4(&mut self, prefix: Ipv4Addr, len: u8, interface: usize) {
        self.v4.push(Route {
            prefix,
            len: len.min(32),
            interface,
        });
    }

    /// An MPLS cross-connect: top label `label` leaves as `out`.
    pub fn swap_label(&mut self, label: u32, out: u32, interface: usize) {
        self.labels.push(Swap {
            label,
            out,
            interface,
        });
    }

    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    pub fn counters(&self) -> &TransitCounters {
        &self.counters
    }

    /// Forwards a frame received on interface `from`, or says why not.
    pub fn forward(&mut self, from: usize, frame: &[u8]) -> Result<Forwarded, TransitDrop> {
        self.counters.received += 1;
        match self.route(from, frame) {
            Ok(f) => {
                self.counters.forwarded += 1;
                Ok(f)
            }
            Err(why) => {
                self.counters.drop(why);
                Err(why)
            }
        }
    }

    fn route(&self, from: usize, frame: &[u8]) -> Result<Forwarded, TransitDrop> {
        let (eth, h) = EthernetHeader::parse(frame).map_err(|_| TransitDrop::Malformed)?;
        let here = self.interfaces.get(from).ok_or(TransitDrop::NotForUs)?;
        if eth.dst != here.mac {
            return Err(TransitDrop::NotForUs);
        }
        let mut out = frame.to_vec();
        let (interface, lookup) = match eth.ethertype {
            ETHERTYPE_IPV6 => {
                let (ip, _) = Ipv6Header::parse(&frame[h..]).map_err(|_| TransitDrop::Malformed)?;
                let r = longest(&self.v6, ip.dst, v6_matches).ok_or(TransitDrop::NoRoute)?;
                let hop_limit = ip.hop_limit.checked_sub(1).filter(|h| *h > 0);
                let hop_limit = hop_limit.ok_or(TransitDrop::Expired)?;
                // Hop Limit is octet 7 of the fixed header.
                out[h + 7] = hop_limit;
                let lookup = Lookup::V6 {
                    dst: ip.dst,
                    prefix: r.prefix,
                    len: r.len,
                    hop_limit,
                };
                (r.interface, lookup)
            }
            ETHERTYPE_IPV4 => {
                let (ip, _) = Ipv4Header::parse(&frame[h..]).map_err(|_| TransitDrop::Malformed)?;
                let r = longest(&self.v4, ip.dst, v4_matches).ok_or(TransitDrop::NoRoute)?;
                let ttl = ip.ttl.checked_sub(1).filter(|t| *t > 0);
                let ttl = ttl.ok_or(TransitDrop::Expired)?;
                let header = Ipv4Header { ttl, ..ip };
                header.emit(&mut out[h..h + header.buffer_len()]);
                let lookup = Lookup::V4 {
                    dst: ip.dst,
                    prefix: r.prefix,
                    len: r.len,
                    ttl,
                };
                (r.interface, lookup)
            }
            ETHERTYPE_MPLS => {
                let word = frame.get(h..h + ENTRY_LEN).ok_or(TransitDrop::Malformed)?;
                let top =
                    LabelEntry::from_word(u32::from_be_bytes([word[0], word[1], word[2], word[3]]));
                let s = self
                    .labels
                    .iter()
                    .find(|s| s.label == top.label)
                    .ok_or(TransitDrop::NoRoute)?;
                let ttl = top.ttl.checked_sub(1).filter(|t| *t > 0);
                let ttl = ttl.ok_or(TransitDrop::Expired)?;
                let entry = LabelEntry {
                    label: s.out,
                    ttl,
                    ..top
                };
                out[h..h + ENTRY_LEN].copy_from_slice(&entry.to_bytes());
                let lookup = Lookup::Label {
                    label: top.label,
                    out: s.out,
                    ttl,
                };
                (s.interface, lookup)
            }
            _ => return Err(TransitDrop::NotRoutable),
        };
        let via = self.interfaces.get(interface).ok_or(TransitDrop::NoRoute)?;
        out[0..6].copy_from_slice(&via.neighbour.0);
        out[6..12].copy_from_slice(&via.mac.0);
        Ok(Forwarded {
            interface,
            lookup,
            frame: out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_on_their_length_only() {
        let a: Ipv6Addr = "fc00::e1:d2".parse().expect("v6");
        assert!(v6_matches(a, "fc00::e1:0".parse().expect("v6"), 112));
        assert!(!v6_matches(a, "fc00::e2:0".parse().expect("v6"), 112));
        assert!(v6_matches(a, "::".parse().expect("v6"), 0));
        assert!(v6_matches(a, a, 128));
        let b = Ipv4Addr::new(10, 0, 0, 1);
        assert!(v4_matches(b, Ipv4Addr::new(10, 0, 0, 0), 24));
        assert!(!v4_matches(b, Ipv4Addr::new(10, 0, 0, 2), 32));
        assert!(v4_matches(b, Ipv4Addr::UNSPECIFIED, 0));
    }
}
