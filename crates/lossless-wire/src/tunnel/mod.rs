//! Tunnel headers that carry a whole Ethernet frame across an IP or MPLS WAN,
//! for the PFC relay of draft-he-rtgwg-wan-pfc-00 (a PE encapsulates the PFC
//! frame it received from its DC gateway and the far PE takes it out again).
//!
//! - [`ipv6`] and [`srh`]: SRv6 L2 encapsulation, IPv6 + Segment Routing
//!   Header (RFC 8754) with next header 143 (Ethernet), the layout of the
//!   Linux kernel's `seg6 mode l2encap` and `seg6local action End.DX2`; also
//!   the reduced form without an SRH (`l2encap.red` with one segment).
//! - [`ipv4`], [`udp`] and [`vxlan`]: VXLAN (RFC 7348) over IPv4 or IPv6.
//! - [`mpls`]: an SR-MPLS label stack (RFC 3032 entries) over an Ethernet
//!   pseudowire (RFC 4448), with or without its control word.
//! - [`frame`]: a whole encapsulated frame, outer Ethernet header to inner
//!   frame, as one `Repr` ([`TunnelFrame`]).
//!
//! Field names in errors are Wireshark's (`ipv6.routing.segleft`,
//! `vxlan.vni`, `mpls.label`...), so an error can be matched against what
//! `tshark -V` shows for the same bytes.

pub mod checksum;
pub mod frame;
pub mod ip;
pub mod ipv4;
pub mod ipv6;
pub mod mpls;
pub mod srh;
pub mod udp;
pub mod vxlan;

pub use frame::{Encap, IpHeader, ParseOptions, TunnelFrame};
pub use ip::IpProtocol;
pub use ipv4::Ipv4Header;
pub use ipv6::Ipv6Header;
pub use mpls::{ControlWord, LabelEntry, LabelStack};
pub use srh::{SegmentList, Srh};
pub use udp::UdpHeader;
pub use vxlan::{Vni, VxlanHeader};
