//! LLDPDU (IEEE 802.1AB-2016 §8): mandatory Chassis ID, Port ID, TTL first, in
//! that order; then optional TLVs; then End of LLDPDU. Only padding (zero
//! bytes) may follow End.
//!
//! [`Lldpdu`] borrows from the buffer it was parsed from, so parsing a frame
//! with no unknown TLVs does not allocate, unless an APP table holds more
//! entries than it keeps in place (`cee::INLINE_APP_ENTRIES`,
//! `ieee::INLINE_APP_ENTRIES`).

use crate::cee::CeeDcbx;
use crate::ieee::IeeeDcbx;
use crate::MacAddr;

/// LLDP Ethertype.
pub const ETHERTYPE_LLDP: u16 = 0x88cc;

/// The longest LLDPDU: one frame's MAC service data unit, 1500 octets on
/// Ethernet (802.1AB-2016 §8.1). [`Lldpdu::emit`] refuses a longer one.
pub const MAX_LLDPDU_LEN: usize = 1500;

/// The longest Port Description, System Name or System Description (802.1AB
/// §8.5.5 to §8.5.7: a 255-octet string).
pub const MAX_STRING_LEN: usize = 255;

/// TLV type codes (802.1AB Table 8-1).
pub mod tlv_type {
    pub const END: u8 = 0;
    pub const CHASSIS_ID: u8 = 1;
    pub const PORT_ID: u8 = 2;
    pub const TTL: u8 = 3;
    pub const PORT_DESCRIPTION: u8 = 4;
    pub const SYSTEM_NAME: u8 = 5;
    pub const SYSTEM_DESCRIPTION: u8 = 6;
    pub const SYSTEM_CAPABILITIES: u8 = 7;
    pub const MANAGEMENT_ADDRESS: u8 = 8;
    pub const ORG_SPECIFIC: u8 = 127;
}

/// Chassis ID subtypes (802.1AB Table 8-2); 0 and 8..255 are reserved.
pub mod chassis_subtype {
    pub const CHASSIS_COMPONENT: u8 = 1;
    pub const INTERFACE_ALIAS: u8 = 2;
    pub const PORT_COMPONENT: u8 = 3;
    pub const MAC_ADDRESS: u8 = 4;
    pub const NETWORK_ADDRESS: u8 = 5;
    pub const INTERFACE_NAME: u8 = 6;
    pub const LOCAL: u8 = 7;
}

/// Port ID subtypes (802.1AB Table 8-3); 0 and 8..255 are reserved.
pub mod port_subtype {
    pub const INTERFACE_ALIAS: u8 = 1;
    pub const PORT_COMPONENT: u8 = 2;
    pub const MAC_ADDRESS: u8 = 3;
    pub const NETWORK_ADDRESS: u8 = 4;
    pub const INTERFACE_NAME: u8 = 5;
    pub const AGENT_CIRCUIT_ID: u8 = 6;
    pub const LOCAL: u8 = 7;
}

/// System capability bits (802.1AB-2016 Table 8-4), as the System
/// Capabilities TLV carries them in both its bitmaps.
pub mod capability {
    pub const OTHER: u16 = 1 << 0;
    pub const REPEATER: u16 = 1 << 1;
    pub const BRIDGE: u16 = 1 << 2;
    pub const WLAN_ACCESS_POINT: u16 = 1 << 3;
    pub const ROUTER: u16 = 1 << 4;
    pub const TELEPHONE: u16 = 1 << 5;
    pub const DOCSIS_CABLE_DEVICE: u16 = 1 << 6;
    /// "Station only": an end station with none of the other capabilities.
    pub const STATION_ONLY: u16 = 1 << 7;
    pub const CVLAN_COMPONENT: u16 = 1 << 8;
    pub const SVLAN_COMPONENT: u16 = 1 << 9;
    pub const TWO_PORT_MAC_RELAY: u16 = 1 << 10;
    /// Bits 11..15 are reserved.
    pub const DEFINED: u16 = (1 << 11) - 1;

    /// The name of each defined bit, bit 0 first: what `lossless decode` prints
    /// and the configuration file takes.
    pub const NAMES: [&str; 11] = [
        "other",
        "repeater",
        "bridge",
        "wlan_access_point",
        "router",
        "telephone",
        "docsis_cable_device",
        "station_only",
        "cvlan_component",
        "svlan_component",
        "two_port_mac_relay",
    ];

    /// The bit of a name in [`NAMES`].
    pub fn from_name(name: &str) -> Option<u16> {
        NAMES.iter().position(|n| *n == name).map(|b| 1 << b)
    }

    /// The names of the bits set, bit 0 first; reserved bits as `bitN`.
    pub fn names(bits: u16) -> Vec<String> {
        (0..16)
            .filter(|b| bits & (1 << b) != 0)
            .map(|b| match NAMES.get(b) {
                Some(name) => (*name).to_string(),
                None => format!("bit{b}"),
            })
            .collect()
    }
}

/// IANA address family numbers a Management Address TLV uses (802.1AB §8.5.9.3).
pub mod address_family {
    pub const IPV4: u8 = 1;
    pub const IPV6: u8 = 2;
    pub const MAC: u8 = 6;
}

/// Management Address interface numbering subtypes (802.1AB §8.5.9.5).
pub mod interface_subtype {
    pub const UNKNOWN: u8 = 1;
    pub const IF_INDEX: u8 = 2;
    pub const SYSTEM_PORT_NUMBER: u8 = 3;
}

/// A Chassis ID or Port ID: subtype plus 1..=255 octets of id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Id<'a> {
    pub subtype: u8,
    pub id: &'a [u8],
}

/// System Capabilities TLV (802.1AB §8.5.8): two 16-bit bitmaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemCapabilities {
    pub capabilities: u16,
    pub enabled: u16,
}

/// Management Address TLV (802.1AB §8.5.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManagementAddress<'a> {
    /// IANA address family number (1 IPv4, 2 IPv6, 6 802 MAC).
    pub address_subtype: u8,
    /// 1..=31 octets.
    pub address: &'a [u8],
    /// 1 unknown, 2 ifIndex, 3 system port number.
    pub interface_subtype: u8,
    pub interface_number: u32,
    /// 0..=128 octets.
    pub oid: &'a [u8],
}

/// An organizationally specific TLV this crate does not decode further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrgTlv<'a> {
    pub oui: [u8; 3],
    pub subtype: u8,
    pub info: &'a [u8],
}

/// A TLV of a reserved type (9..=126), kept as raw bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawTlv<'a> {
    pub tlv_type: u8,
    pub value: &'a [u8],
}

/// A whole LLDPDU.
///
/// Emission writes TLVs in this order: Chassis ID, Port ID, TTL, Port
/// Description, System Name, System Description, System Capabilities,
/// Management Addresses, CEE DCBX, CIN DCBX, IEEE DCBX (ETS Configuration,
/// ETS Recommendation, PFC, Application Priority), other org-specific TLVs,
/// unknown TLVs, End: lldpad's order (its DCBX module runs before its IEEE
/// 802.1Qaz module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lldpdu<'a> {
    pub chassis_id: Id<'a>,
    pub port_id: Id<'a>,
    /// Seconds; 0 means shutdown: delete this MSAP's information now.
    pub ttl: u16,
    pub port_description: Option<&'a [u8]>,
    pub system_name: Option<&'a [u8]>,
    pub system_description: Option<&'a [u8]>,
    pub system_capabilities: Option<SystemCapabilities>,
    pub management_addresses: Vec<ManagementAddress<'a>>,
    /// The CEE DCBX TLV (OUI 00-1B-21 subtype 2), if present.
    pub cee_dcbx: Option<CeeDcbx>,
    /// The body (after OUI and subtype) of a CIN DCBX TLV (subtype 1): recognised, not negotiated.
    pub cin_dcbx: Option<&'a [u8]>,
    /// The IEEE 802.1Qaz TLVs (OUI 00-80-C2, subtypes 9..12), each kept as
    /// absent, well-formed or malformed.
    pub ieee_dcbx: IeeeDcbx,
    /// Other organizationally specific TLVs.
    pub org_specific: Vec<OrgTlv<'a>>,
    pub unknown: Vec<RawTlv<'a>>,
}

impl<'a> Lldpdu<'a> {
    /// An LLDPDU with only the mandatory TLVs.
    pub fn new(chassis_id: Id<'a>, port_id: Id<'a>, ttl: u16) -> Self {
        Lldpdu {
            chassis_id,
            port_id,
            ttl,
            port_description: None,
            system_name: None,
            system_description: None,
            system_capabilities: None,
            management_addresses: Vec::new(),
            cee_dcbx: None,
            cin_dcbx: None,
            ieee_dcbx: IeeeDcbx::default(),
            org_specific: Vec::new(),
            unknown: Vec::new(),
        }
    }

    /// Chassis ID and Port ID of MAC-address subtype, as lldpad sends them.
    pub fn mac_ids(mac: &'a MacAddr) -> (Id<'a>, Id<'a>) {
        (
            Id {
                subtype: chassis_subtype::MAC_ADDRESS,
                id: &mac.0,
            },
            Id {
                subtype: port_subtype::MAC_ADDRESS,
                id: &mac.0,
            },
        )
    }

    /// The Maximum Frame Size TLV (IEEE 802.3 Clause 79.3.4: OUI 00-12-0F, subtype 4, a
    /// 2-octet maximum frame size in octets) of the first such TLV, if well formed.
    pub fn max_frame_size(&self) -> Option<u16> {
        self.org_specific
            .iter()
            .find(|o| o.oui == IEEE_8023_OUI && o.subtype == SUBTYPE_MAX_FRAME_SIZE)
            .and_then(|o| <[u8; 2]>::try_from(o.info).ok())
            .map(u16::from_be_bytes)
    }
}

/// The IEEE 802.3 OUI of its organizationally specific TLVs (802.3 Clause 79).
pub const IEEE_8023_OUI: [u8; 3] = [0x00, 0x12, 0x0f];
/// IEEE 802.3's Maximum Frame Size TLV subtype (Clause 79.3.4).
pub const SUBTYPE_MAX_FRAME_SIZE: u8 = 4;

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod max_frame_size_tests {
    use super::*;

    #[test]
    fn the_8023_maximum_frame_size_is_read_when_well_formed() {
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        let (c, p) = Lldpdu::mac_ids(&mac);
        let mut pdu = Lldpdu::new(c, p, 120);
        assert_eq!(pdu.max_frame_size(), None);
        // lldpd's MAC/PHY TLV (subtype 1) is not it; a 3-octet body is malformed.
        pdu.org_specific.push(OrgTlv {
            oui: IEEE_8023_OUI,
            subtype: 1,
            info: &[0, 0x80, 0, 0, 0x36],
        });
        pdu.org_specific.push(OrgTlv {
            oui: IEEE_8023_OUI,
            subtype: 4,
            info: &[0x05, 0xee, 0],
        });
        assert_eq!(pdu.max_frame_size(), None);
        pdu.org_specific[1].info = &[0x05, 0xee];
        assert_eq!(pdu.max_frame_size(), Some(1518));
        // Parsed from the wire the same way.
        let mut buf = vec![0u8; pdu.buffer_len()];
        pdu.emit(&mut buf).unwrap();
        assert_eq!(Lldpdu::parse(&buf).unwrap().max_frame_size(), Some(1518));
    }
}

mod codec;
