//! What the agent says about its own system (802.1AB-2016 §8.5): the LLDPDU a
//! configuration makes (the mandatory TLVs and the identity TLVs; the agent adds the
//! DCBX TLVs of the running version), and the longest one it can make, which
//! [`PortConfig::validate`] bounds by one frame. A function of the configuration alone,
//! so it lives beside it: validation and the agent both read it.

use std::net::IpAddr;

use lossless_wire::cee::MAX_TLV_VALUE_LEN as CEE_MAX_TLV_VALUE_LEN;
use lossless_wire::lldp::{
    address_family, chassis_subtype, interface_subtype, port_subtype, Id, Lldpdu, ManagementAddress,
};

use super::PortConfig;
use crate::mode::DcbxMode;

/// The largest CEE DCBX TLV: its LLDP header and a full 511-octet value. What
/// is sent lags the configuration by one SeqNo (the previous content stays until
/// the peer acknowledged it), so the bound is the TLV's, not the configuration's.
const CEE_MAX_TLV_LEN: usize = 2 + CEE_MAX_TLV_VALUE_LEN;

impl PortConfig {
    /// The Chassis ID and Port ID this configuration sends (its MSAP): the
    /// configured strings (subtypes local and interface name), else the port's MAC.
    pub fn msap(&self) -> (Id<'_>, Id<'_>) {
        let chassis_id = match &self.chassis_id {
            Some(s) => Id {
                subtype: chassis_subtype::LOCAL,
                id: s.as_bytes(),
            },
            None => Id {
                subtype: chassis_subtype::MAC_ADDRESS,
                id: &self.mac.0,
            },
        };
        let port_id = match &self.port_id {
            Some(s) => Id {
                subtype: port_subtype::INTERFACE_NAME,
                id: s.as_bytes(),
            },
            None => Id {
                subtype: port_subtype::MAC_ADDRESS,
                id: &self.mac.0,
            },
        };
        (chassis_id, port_id)
    }
}

/// Builds the LLDPDU of `cfg` without DCBX TLVs and hands it to `f` to add them
/// and emit it. `shutdown`: the shutdown LLDPDU instead (TTL 0, mandatory TLVs only).
pub(crate) fn with_lldpdu<R>(
    cfg: &PortConfig,
    shutdown: bool,
    f: impl FnOnce(&mut Lldpdu) -> R,
) -> R {
    let (chassis_id, port_id) = cfg.msap();
    let ttl = if shutdown { 0 } else { cfg.timers.ttl() };
    let mut pdu = Lldpdu::new(chassis_id, port_id, ttl);
    let (v4, v6);
    if !shutdown {
        pdu.port_description = cfg.port_description.as_deref().map(str::as_bytes);
        pdu.system_name = cfg.system_name.as_deref().map(str::as_bytes);
        pdu.system_description = cfg.system_description.as_deref().map(str::as_bytes);
        pdu.system_capabilities = cfg.system_capabilities;
        if let Some(m) = cfg.management_address {
            let (family, address): (u8, &[u8]) = match m.address {
                IpAddr::V4(a) => {
                    v4 = a.octets();
                    (address_family::IPV4, &v4)
                }
                IpAddr::V6(a) => {
                    v6 = a.octets();
                    (address_family::IPV6, &v6)
                }
            };
            pdu.management_addresses.push(ManagementAddress {
                address_subtype: family,
                address,
                interface_subtype: interface_subtype::IF_INDEX,
                interface_number: m.ifindex,
                oid: &[],
            });
        }
    }
    f(&mut pdu)
}

/// The longest LLDPDU a configuration can make, in two parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LldpduBound {
    /// Everything but DCBX: the mandatory TLVs, the identity TLVs, End.
    pub identity: usize,
    /// The DCBX TLVs of the versions the port may run: a whole CEE DCBX TLV, the
    /// IEEE 802.1Qaz TLVs as the configuration makes them.
    pub dcbx: usize,
}

impl LldpduBound {
    pub fn of(cfg: &PortConfig) -> LldpduBound {
        let identity = with_lldpdu(cfg, false, |pdu| pdu.buffer_len());
        let d = &cfg.dcbx;
        let cee = match d.mode {
            DcbxMode::Cee | DcbxMode::Auto => CEE_MAX_TLV_LEN,
            DcbxMode::Ieee | DcbxMode::Static => 0,
        };
        let ieee = match d.mode {
            // What a new port advertises: the configured tables. The operational ones
            // have the same length (fixed-size ETS and PFC TLVs; the APP TLV carries
            // our own entries only).
            DcbxMode::Ieee | DcbxMode::Auto => d
                .ieee_tlvs(
                    d.ieee.ets.cfg.table,
                    d.pfc.cfg.priorities,
                    d.headroom_measurement,
                )
                .buffer_len(),
            DcbxMode::Cee | DcbxMode::Static => 0,
        };
        LldpduBound {
            identity,
            dcbx: cee.max(ieee),
        }
    }

    pub fn total(&self) -> usize {
        self.identity + self.dcbx
    }
}
