//! IP protocol numbers (IPv4 Protocol, IPv6 Next Header), as an open newtype:
//! any value parses and round-trips, the ones the relay uses have names.

use std::fmt;

/// An IANA "Assigned Internet Protocol Number".
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct IpProtocol(pub u8);

impl IpProtocol {
    pub const HOP_BY_HOP: IpProtocol = IpProtocol(0);
    pub const UDP: IpProtocol = IpProtocol(17);
    /// IPv6 Routing header; routing type 4 is the Segment Routing Header.
    pub const ROUTING: IpProtocol = IpProtocol(43);
    pub const NO_NEXT_HEADER: IpProtocol = IpProtocol(59);
    pub const DESTINATION_OPTIONS: IpProtocol = IpProtocol(60);
    /// "Ethernet" (RFC 8986 section 10.1): the payload is a whole Ethernet
    /// frame from its destination MAC, without FCS. SRv6 End.DX2 and the
    /// kernel's `seg6 mode l2encap` use it.
    pub const ETHERNET: IpProtocol = IpProtocol(143);
}

impl fmt::Debug for IpProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            IpProtocol::HOP_BY_HOP => "hop-by-hop",
            IpProtocol::UDP => "udp",
            IpProtocol::ROUTING => "routing",
            IpProtocol::NO_NEXT_HEADER => "none",
            IpProtocol::DESTINATION_OPTIONS => "dest-opts",
            IpProtocol::ETHERNET => "ethernet",
            _ => return write!(f, "IpProtocol({})", self.0),
        };
        write!(f, "{}({name})", self.0)
    }
}

impl fmt::Display for IpProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
