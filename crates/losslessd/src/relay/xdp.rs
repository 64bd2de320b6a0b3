//! The relay's XDP fast path, set up from a `[relay]` section: the program's
//! configuration built from the sans-IO core's own tunnel header (so the
//! bytes are the core's), and the counters it keeps, folded into the core's
//! status for `relay show` and `/metrics`.

use lossless_relay::tunnel::Encapsulator;
use lossless_relay::{DropReason, RelayConfig, TunnelConfig};
use lossless_sys::xdp::{counter, Kind, RelayCfg, HDR_MAX};

/// The program's configuration for `cfg`, or why the XDP path cannot carry
/// it (the AF_PACKET path then does).
pub fn xdp_config(cfg: &RelayConfig) -> Result<RelayCfg, String> {
    let encap =
        Encapsulator::new(&cfg.tunnel, &cfg.wan, &cfg.marking).map_err(|e| e.to_string())?;
    let hl = encap.header_len();
    if hl > HDR_MAX {
        return Err(format!(
            "a {hl}-octet tunnel header is longer than the XDP program writes ({HDR_MAX})"
        ));
    }
    let mut c = RelayCfg::default();
    c.dc_port_mac = cfg.dc.port_mac.0;
    c.gw_port_mac = cfg.dc.gateway_port_mac.0;
    c.gw_system_mac = cfg.dc.gateway_system_mac.map_or([0; 6], |m| m.0);
    c.has_system_mac = u8::from(cfg.dc.gateway_system_mac.is_some());
    c.wan_port_mac = cfg.wan.port_mac.0;
    c.storm = u8::from(cfg.storm.max_per_second.is_some());
    c.hdr_len = hl as u8;
    for (inner_len, hdr) in [(60usize, &mut c.hdr60), (64, &mut c.hdr64)] {
        let inner = vec![0u8; inner_len];
        let mut buf = vec![0u8; hl + inner_len];
        encap.frame(&inner).emit(&mut buf);
        hdr[..hl].copy_from_slice(&buf[..hl]);
    }
    let ip = encap.ip_offset();
    match &cfg.tunnel {
        TunnelConfig::Srv6 {
            local_sid, reduced, ..
        } => {
            c.kind = if *reduced {
                Kind::Srv6Reduced
            } else {
                Kind::Srv6
            } as u8;
            c.local_addr = local_sid.octets();
        }
        TunnelConfig::Vxlan {
            source,
            vni,
            port,
            ipv4_checksum,
            ..
        } => {
            c.vni = *vni;
            c.set_vxlan_port(*port);
            match source {
                std::net::IpAddr::V4(a) => {
                    c.kind = Kind::Vxlan4 as u8;
                    c.local_addr[..4].copy_from_slice(&a.octets());
                    if *ipv4_checksum {
                        c.udp_csum_off = ip.map_or(0, |o| o + 20 + 6) as u16;
                    }
                }
                std::net::IpAddr::V6(a) => {
                    c.kind = Kind::Vxlan6 as u8;
                    c.local_addr = a.octets();
                    c.udp_csum_off = ip.map_or(0, |o| o + 40 + 6) as u16;
                }
            }
        }
        TunnelConfig::SrMpls {
            local_label,
            control_word,
            pop_labels,
            ..
        } => {
            if pop_labels.len() > c.pop_labels.len() {
                return Err(format!(
                    "{} labels to pop; the XDP program takes at most {}",
                    pop_labels.len(),
                    c.pop_labels.len()
                ));
            }
            c.pop_labels[..pop_labels.len()].copy_from_slice(pop_labels);
            c.npop = pop_labels.len() as u32;
            c.kind = Kind::Mpls as u8;
            c.local_label = *local_label;
            c.control_word = u8::from(*control_word);
        }
    }
    Ok(c)
}

/// The XDP program's counts in the core's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XdpCounts {
    pub egress_received: u64,
    pub egress_relayed: u64,
    pub egress_passed: u64,
    pub egress_dropped: lossless_relay::DropCounts,
    pub ingress_received: u64,
    pub ingress_delivered: u64,
    pub ingress_passed: u64,
    pub ingress_dropped: lossless_relay::DropCounts,
    pub redirect_failed: u64,
}

impl XdpCounts {
    pub fn from_counters(c: &[u64; counter::COUNT]) -> XdpCounts {
        let mut x = XdpCounts {
            egress_received: c[counter::EGRESS_RECEIVED],
            egress_relayed: c[counter::EGRESS_RELAYED],
            egress_passed: c[counter::EGRESS_PASSED],
            ingress_received: c[counter::INGRESS_RECEIVED],
            ingress_delivered: c[counter::INGRESS_DELIVERED],
            ingress_passed: c[counter::INGRESS_PASSED],
            redirect_failed: c[counter::REDIRECT_FAILED],
            ..XdpCounts::default()
        };
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            x.egress_dropped.add_n(r, c[counter::EGRESS_DROP + i]);
            x.ingress_dropped.add_n(r, c[counter::INGRESS_DROP + i]);
        }
        x
    }
}
