//! A neighbour's identity, its MSAP (Chassis ID + Port ID, IEEE 802.1AB-2016 §8.5.2):
//! what the remote MIB keys neighbours by and what tooManyNeighbors discards. Apart
//! from both, so neither depends on the other for it.

use lossless_wire::lldp::{Id, Lldpdu};

/// An owned Chassis ID or Port ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedId {
    pub subtype: u8,
    pub id: Vec<u8>,
}

impl OwnedId {
    pub(crate) fn from_wire(id: &Id<'_>) -> Self {
        OwnedId {
            subtype: id.subtype,
            id: id.id.to_vec(),
        }
    }

    pub(crate) fn matches(&self, id: &Id<'_>) -> bool {
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
    pub(crate) fn of(pdu: &Lldpdu<'_>) -> Msap {
        Msap {
            chassis_id: OwnedId::from_wire(&pdu.chassis_id),
            port_id: OwnedId::from_wire(&pdu.port_id),
        }
    }

    pub(crate) fn matches(&self, pdu: &Lldpdu<'_>) -> bool {
        self.chassis_id.matches(&pdu.chassis_id) && self.port_id.matches(&pdu.port_id)
    }
}
