//! Names and renderings shared by the readable and the JSON output, so both
//! say the same thing about the same bytes.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use lossless_wire::app_name;
use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, Tsa};
use lossless_wire::lldp::{chassis_subtype, port_subtype, Id};
use lossless_wire::MacAddr;

/// Lowercase hex without separators (`"001b21"`), for JSON.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Lowercase hex with a space between bytes, for people.
pub fn hex_spaced(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `00-1b-21`, the way OUIs are written in the standards.
pub fn oui(oui: [u8; 3]) -> String {
    format!("{:02x}-{:02x}-{:02x}", oui[0], oui[1], oui[2])
}

/// `[3, 4]`, or `[]` for none.
pub fn priority_list(map: PriorityMap) -> String {
    let list: Vec<String> = map.priorities().map(|p| p.to_string()).collect();
    format!("[{}]", list.join(", "))
}

/// Which of the two ID TLVs an [`Id`] came from: their subtype tables differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    Chassis,
    Port,
}

pub fn id_subtype_name(kind: IdKind, subtype: u8) -> &'static str {
    match (kind, subtype) {
        (IdKind::Chassis, chassis_subtype::CHASSIS_COMPONENT) => "chassis component",
        (IdKind::Chassis, chassis_subtype::INTERFACE_ALIAS) => "interface alias",
        (IdKind::Chassis, chassis_subtype::PORT_COMPONENT) => "port component",
        (IdKind::Chassis, chassis_subtype::MAC_ADDRESS) => "mac address",
        (IdKind::Chassis, chassis_subtype::NETWORK_ADDRESS) => "network address",
        (IdKind::Chassis, chassis_subtype::INTERFACE_NAME) => "interface name",
        (IdKind::Chassis, chassis_subtype::LOCAL) => "local",
        (IdKind::Port, port_subtype::INTERFACE_ALIAS) => "interface alias",
        (IdKind::Port, port_subtype::PORT_COMPONENT) => "port component",
        (IdKind::Port, port_subtype::MAC_ADDRESS) => "mac address",
        (IdKind::Port, port_subtype::NETWORK_ADDRESS) => "network address",
        (IdKind::Port, port_subtype::INTERFACE_NAME) => "interface name",
        (IdKind::Port, port_subtype::AGENT_CIRCUIT_ID) => "agent circuit id",
        (IdKind::Port, port_subtype::LOCAL) => "local",
        _ => "reserved subtype",
    }
}

/// The value of a Chassis or Port ID as text: a MAC address as
/// `aa:bb:cc:dd:ee:ff`, a network address as an IP address, anything else as
/// text when it is printable UTF-8, and otherwise as `0x` + hex.
pub fn id_value(kind: IdKind, id: &Id<'_>) -> String {
    let is_mac = match kind {
        IdKind::Chassis => id.subtype == chassis_subtype::MAC_ADDRESS,
        IdKind::Port => id.subtype == port_subtype::MAC_ADDRESS,
    };
    let is_net = match kind {
        IdKind::Chassis => id.subtype == chassis_subtype::NETWORK_ADDRESS,
        IdKind::Port => id.subtype == port_subtype::NETWORK_ADDRESS,
    };
    if is_mac {
        if let Ok(b) = <[u8; 6]>::try_from(id.id) {
            return MacAddr(b).to_string();
        }
    }
    if is_net {
        if let Some((&family, addr)) = id.id.split_first() {
            if let Some(a) = ip_address(family, addr) {
                return a;
            }
        }
    }
    text_or_hex(id.id)
}

/// Printable UTF-8 as is; anything else as `0x` + hex, so the two cannot be confused
/// (text starting with "0x" is shown as hex too).
pub fn text_or_hex(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.is_empty() && !s.starts_with("0x") && !s.chars().any(char::is_control) => {
            s.to_string()
        }
        _ => format!("0x{}", hex(bytes)),
    }
}

/// An address of IANA family 1 (IPv4), 2 (IPv6) or 6 (802 MAC), when its length fits.
pub fn ip_address(family: u8, addr: &[u8]) -> Option<String> {
    match family {
        1 => <[u8; 4]>::try_from(addr)
            .ok()
            .map(|b| Ipv4Addr::from(b).to_string()),
        2 => <[u8; 16]>::try_from(addr)
            .ok()
            .map(|b| Ipv6Addr::from(b).to_string()),
        6 => <[u8; 6]>::try_from(addr)
            .ok()
            .map(|b| MacAddr(b).to_string()),
        _ => None,
    }
}

/// An IANA address family number's name.
pub fn address_family_name(family: u8) -> &'static str {
    match family {
        1 => "ipv4",
        2 => "ipv6",
        6 => "mac",
        _ => "other",
    }
}

/// Management Address interface numbering subtype (802.1AB §8.5.9.5).
pub fn interface_subtype_name(subtype: u8) -> &'static str {
    match subtype {
        1 => "unknown",
        2 => "ifIndex",
        3 => "system port number",
        _ => "reserved",
    }
}

/// The names of the bits set in a capabilities bitmap (802.1AB Table 8-4);
/// reserved bits as `bitN`.
pub fn capability_names(bits: u16) -> Vec<String> {
    lossless_wire::lldp::capability::names(bits)
}

/// Names of well-known organizationally specific TLVs. The IEEE 802.1Qaz
/// ones (subtypes 9..12) are decoded; the names remain for the record.
pub fn org_tlv_name(oui: [u8; 3], subtype: u8) -> Option<&'static str> {
    match (oui, subtype) {
        ([0x00, 0x80, 0xc2], 1) => Some("IEEE 802.1 Port VLAN ID"),
        ([0x00, 0x80, 0xc2], 2) => Some("IEEE 802.1 Port And Protocol VLAN ID"),
        ([0x00, 0x80, 0xc2], 3) => Some("IEEE 802.1 VLAN Name"),
        ([0x00, 0x80, 0xc2], 4) => Some("IEEE 802.1 Protocol Identity"),
        ([0x00, 0x80, 0xc2], 7) => Some("IEEE 802.1 Link Aggregation"),
        ([0x00, 0x80, 0xc2], 8) => Some("IEEE 802.1Qau Congestion Notification"),
        ([0x00, 0x80, 0xc2], 9) => Some("IEEE 802.1Qaz ETS Configuration"),
        ([0x00, 0x80, 0xc2], 10) => Some("IEEE 802.1Qaz ETS Recommendation"),
        ([0x00, 0x80, 0xc2], 11) => Some("IEEE 802.1Qaz PFC Configuration"),
        ([0x00, 0x80, 0xc2], 12) => Some("IEEE 802.1Qaz Application Priority"),
        ([0x00, 0x12, 0x0f], 1) => Some("IEEE 802.3 MAC/PHY Configuration/Status"),
        ([0x00, 0x12, 0x0f], 2) => Some("IEEE 802.3 Power Via MDI"),
        ([0x00, 0x12, 0x0f], 3) => Some("IEEE 802.3 Link Aggregation"),
        ([0x00, 0x12, 0x0f], 4) => Some("IEEE 802.3 Maximum Frame Size"),
        _ => None,
    }
}

/// A name for what an IEEE APP entry matches (JSON's `name`): a DSCP's name, or a
/// protocol DCB traffic is usually identified by.
pub fn ieee_app_name(e: &AppPriority) -> Option<&'static str> {
    app_name::protocol_name(e.selector.into(), e.protocol)
}

/// `dscp 26 (AF31)`: the name of a DSCP beside its number.
pub fn dscp(d: u8) -> String {
    match app_name::dscp_name(u16::from(d)) {
        Some(n) => format!("{d} ({n})"),
        None => d.to_string(),
    }
}

/// `strict`, `cbs`, `ets`, `vendor`, or `tsa N`.
pub fn tsa_name(t: Tsa) -> String {
    match t.name() {
        Some(n) => n.to_string(),
        None => format!("tsa {}", t.0),
    }
}
