//! Who the host is, for the LLDP identity TLVs (IEEE 802.1AB-2016 §8.5.5 to §8.5.9):
//! Port Description, System Name, System Description, System Capabilities and
//! Management Address.
//!
//! The runtime reads the host (hostname, uname, IP forwarding, addresses) and hands it
//! to the node as a [`HostInfo`] ([`Node::handle_host`](crate::node::Node::handle_host));
//! the lab gives its simulated hosts names the same way. Nothing here reads them. Each
//! port then sends, TLV by TLV, what its settings say ([`IdentitySettings`]): the
//! host's value (the default), a configured one, or nothing.

use std::collections::HashMap;
use std::net::IpAddr;

use lossless_dcbx::{MgmtAddress, PortConfig};
use lossless_wire::lldp::{capability, SystemCapabilities, MAX_STRING_LEN};
use serde::{Deserialize, Serialize};

use crate::link::Link;

/// The longest host name Linux has (`HOST_NAME_MAX`): what a System Name left to the
/// host is counted at, and cut to.
pub const MAX_HOSTNAME_LEN: usize = 64;

/// What the runtime knows about the host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// The host name (`uname -n`).
    pub hostname: Option<String>,
    /// What the host runs, as lldpd says it: `uname -s -r -v -m`.
    pub description: Option<String>,
    /// IPv4 or IPv6 forwarding is on: the host routes.
    pub forwarding: bool,
    /// The addresses of every interface (tentative and failed ones left out by the
    /// runtime), in the kernel's order: primary IPv4 addresses before secondary ones.
    pub addresses: Vec<HostAddress>,
}

/// The host as the ports read it: what the runtime said, and its addresses
/// ranked once for all ports (a host with thousands of ports has thousands of
/// addresses, and a port's identity is read at every link change).
#[derive(Debug, Clone, Default)]
pub struct Host {
    info: HostInfo,
    management: ManagementAddresses,
}

impl Host {
    pub fn new(info: HostInfo) -> Host {
        let management = ManagementAddresses::new(&info.addresses);
        Host { info, management }
    }

    pub fn info(&self) -> &HostInfo {
        &self.info
    }
}

/// One address of one interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostAddress {
    pub ifindex: u32,
    pub address: IpAddr,
    /// A secondary IPv4 address (`IFA_F_SECONDARY`), or a deprecated IPv6 one: chosen
    /// only when the interface has no other.
    pub secondary: bool,
}

/// One identity TLV's setting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Advertise<T> {
    /// What the host says (the default; the configuration file's `true`).
    #[default]
    Host,
    /// This value.
    Value(T),
    /// Not sent (`false`).
    Off,
}

impl<T: Clone> Advertise<T> {
    /// The value to send: this one, the host's, or none.
    fn pick(&self, host: &Option<T>) -> Option<T> {
        match self {
            Advertise::Host => host.clone(),
            Advertise::Value(v) => Some(v.clone()),
            Advertise::Off => None,
        }
    }
}

/// What a port sends about its system, TLV by TLV.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentitySettings {
    /// Default: the interface's alias, else its name.
    pub port_description: Advertise<String>,
    /// Default: the host name.
    pub system_name: Advertise<String>,
    /// Default: `uname -s -r -v -m`.
    pub system_description: Advertise<String>,
    /// Default: station only, or router when the host forwards IP.
    pub system_capabilities: Advertise<SystemCapabilities>,
    /// Default: the port's primary address, else the host's. Always numbered with the
    /// port's ifIndex.
    pub management_address: Advertise<IpAddr>,
}

impl IdentitySettings {
    /// Sets the identity TLVs of `cfg` from these settings and what the host says.
    pub fn apply(&self, local: &LocalInfo, cfg: &mut PortConfig) {
        cfg.port_description = self.port_description.pick(&local.port_description);
        cfg.system_name = self.system_name.pick(&local.system_name);
        cfg.system_description = self.system_description.pick(&local.system_description);
        cfg.system_capabilities = self.system_capabilities.pick(&local.system_capabilities);
        let address = self
            .management_address
            .pick(&local.management_address.map(|m| m.address));
        cfg.management_address = address.map(|address| MgmtAddress {
            address,
            ifindex: local.ifindex,
        });
    }
}

/// What the host says for one port: the value of each identity TLV left to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalInfo {
    pub ifindex: u32,
    pub port_description: Option<String>,
    pub system_name: Option<String>,
    pub system_description: Option<String>,
    pub system_capabilities: Option<SystemCapabilities>,
    pub management_address: Option<MgmtAddress>,
}

impl LocalInfo {
    /// The host's values for the port on `link`. Strings are cut to the 255 octets
    /// their TLV carries (at a character boundary).
    pub fn of(host: &Host, link: &Link) -> LocalInfo {
        let (management, host) = (&host.management, &host.info);
        let port_description = link
            .alias
            .as_deref()
            .filter(|a| !a.is_empty())
            .unwrap_or(&link.name);
        let caps = if host.forwarding {
            capability::ROUTER
        } else {
            capability::STATION_ONLY
        };
        LocalInfo {
            ifindex: link.ifindex,
            port_description: Some(clip(port_description)),
            system_name: host
                .hostname
                .as_deref()
                .map(|h| clip_to(h, MAX_HOSTNAME_LEN)),
            system_description: host.description.as_deref().map(clip),
            system_capabilities: Some(SystemCapabilities {
                capabilities: caps,
                enabled: caps,
            }),
            management_address: management.of(link.ifindex).map(|address| MgmtAddress {
                address,
                ifindex: link.ifindex,
            }),
        }
    }

    /// The longest values the host could give: what a configuration is checked
    /// against before any port exists (a host name of 64 octets, an alias and a
    /// description of 255, an IPv6 address).
    pub fn longest() -> LocalInfo {
        let s = Some("x".repeat(MAX_STRING_LEN));
        LocalInfo {
            ifindex: 1,
            port_description: s.clone(),
            system_name: Some("x".repeat(MAX_HOSTNAME_LEN)),
            system_description: s,
            system_capabilities: Some(SystemCapabilities {
                capabilities: capability::STATION_ONLY,
                enabled: capability::STATION_ONLY,
            }),
            management_address: Some(MgmtAddress {
                address: IpAddr::V6(std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
                ifindex: 1,
            }),
        }
    }
}

/// At most 255 octets of `s`, cut at a character boundary.
fn clip(s: &str) -> String {
    clip_to(s, MAX_STRING_LEN)
}

/// At most `max` octets of `s`, cut at a character boundary.
fn clip_to(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// The address each port names as its management address, best first: the
/// port's IPv4 address, its IPv6 address (not link-local), the host's IPv4
/// address, the host's IPv6 address (not link-local), the port's link-local
/// IPv6 address (reachable from the neighbour that reads it). Primary before
/// secondary at each step; loopback addresses never; the first address in the
/// host's order among equals.
///
/// The host's addresses are ranked in one pass, for every port at once: per
/// interface the best of its own addresses (the steps that name the port),
/// and the best of the host's (the steps that do not). A port's choice is the
/// better of its own and the host's.
#[derive(Debug, Clone, Default)]
struct ManagementAddresses {
    /// The best address of any interface by the host's steps, with its rank.
    host: Option<(usize, IpAddr)>,
    /// Per ifindex, the best of the interface's own addresses, with its rank.
    port: HashMap<u32, (usize, IpAddr)>,
}

/// The steps, best first; the port's own ones are 0, 1 and 4.
const PORT_V4: usize = 0;
const PORT_V6: usize = 1;
const HOST_V4: usize = 2;
const HOST_V6: usize = 3;
const PORT_LINK_LOCAL: usize = 4;

impl ManagementAddresses {
    fn new(addresses: &[HostAddress]) -> ManagementAddresses {
        let mut m = ManagementAddresses::default();
        let better =
            |best: Option<(usize, IpAddr)>, rank: usize| best.is_none_or(|(b, _)| rank < b);
        for a in addresses {
            let ip = a.address;
            if ip.is_loopback() || ip.is_unspecified() {
                continue;
            }
            let link_local = matches!(ip, IpAddr::V6(v6) if v6.is_unicast_link_local());
            // Primary before secondary within a step.
            let rank = |step: usize| step * 2 + usize::from(a.secondary);
            let (own, any) = match (ip, link_local) {
                (IpAddr::V4(_), _) => (PORT_V4, Some(HOST_V4)),
                (IpAddr::V6(_), false) => (PORT_V6, Some(HOST_V6)),
                (IpAddr::V6(_), true) => (PORT_LINK_LOCAL, None),
            };
            let entry = m.port.get(&a.ifindex).copied();
            if better(entry, rank(own)) {
                m.port.insert(a.ifindex, (rank(own), ip));
            }
            if let Some(any) = any {
                if better(m.host, rank(any)) {
                    m.host = Some((rank(any), ip));
                }
            }
        }
        m
    }

    /// The management address of the port on `ifindex`.
    fn of(&self, ifindex: u32) -> Option<IpAddr> {
        // The two never tie: they rank by different steps.
        [self.port.get(&ifindex).copied(), self.host]
            .into_iter()
            .flatten()
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, ip)| ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(ifindex: u32, a: &str, secondary: bool) -> HostAddress {
        HostAddress {
            ifindex,
            address: a.parse().expect("address"),
            secondary,
        }
    }

    #[test]
    fn the_port_before_the_host_ipv4_before_ipv6_primary_before_secondary() {
        let all = vec![
            addr(1, "127.0.0.1", false),
            addr(1, "::1", false),
            addr(2, "fe80::2", false),
            addr(2, "10.0.0.2", false),
            addr(3, "fe80::3", false),
            addr(3, "2001:db8::3", false),
            addr(3, "192.0.2.9", true),
            addr(3, "192.0.2.3", false),
        ];
        let pick =
            |list: &[HostAddress], i| ManagementAddresses::new(list).of(i).map(|a| a.to_string());
        assert_eq!(pick(&all, 3).as_deref(), Some("192.0.2.3"));
        assert_eq!(pick(&all, 2).as_deref(), Some("10.0.0.2"));
        // Port 3 without IPv4: its global IPv6 address, not the host's IPv4.
        let no_v4: Vec<_> = all
            .iter()
            .copied()
            .filter(|a| a.ifindex != 3 || a.address.is_ipv6())
            .collect();
        assert_eq!(pick(&no_v4, 3).as_deref(), Some("2001:db8::3"));
        // A port with only a link-local address: the host's address first.
        assert_eq!(pick(&all, 9).as_deref(), Some("10.0.0.2"));
        let only_ll = vec![addr(1, "127.0.0.1", false), addr(4, "fe80::4", false)];
        assert_eq!(pick(&only_ll, 4).as_deref(), Some("fe80::4"));
        // Loopback alone is no management address.
        assert_eq!(pick(&only_ll[..1], 1), None);
        // Only a secondary: taken.
        assert_eq!(
            pick(&[addr(5, "192.0.2.5", true)], 5).as_deref(),
            Some("192.0.2.5")
        );
    }

    /// The rule as written, step by step over every address: what the one-pass
    /// ranking must choose.
    fn by_the_steps(addresses: &[HostAddress], ifindex: u32) -> Option<IpAddr> {
        let link_local =
            |a: &HostAddress| matches!(a.address, IpAddr::V6(v6) if v6.is_unicast_link_local());
        let steps: [&dyn Fn(&HostAddress) -> bool; 5] = [
            &|a| a.ifindex == ifindex && a.address.is_ipv4(),
            &|a| a.ifindex == ifindex && a.address.is_ipv6() && !link_local(a),
            &|a| a.address.is_ipv4(),
            &|a| a.address.is_ipv6() && !link_local(a),
            &|a| a.ifindex == ifindex && link_local(a),
        ];
        let usable = |a: &&HostAddress| !a.address.is_loopback() && !a.address.is_unspecified();
        for step in steps {
            for secondary in [false, true] {
                if let Some(a) = addresses
                    .iter()
                    .filter(usable)
                    .find(|a| step(a) && a.secondary == secondary)
                {
                    return Some(a.address);
                }
            }
        }
        None
    }

    proptest::proptest! {
        #[test]
        fn the_one_pass_ranking_chooses_as_the_steps_do(
            picks in proptest::collection::vec((1u32..5, 0usize..12, proptest::bool::ANY), 0..24),
            port in 0u32..6,
        ) {
            const POOL: [&str; 12] = [
                "127.0.0.1", "::1", "0.0.0.0", "10.0.0.1", "10.0.0.2", "169.254.1.1",
                "2001:db8::1", "2001:db8::2", "fe80::1", "fe80::2", "fd00::1", "192.0.2.7",
            ];
            let addresses: Vec<HostAddress> = picks
                .iter()
                .map(|&(i, a, secondary)| addr(i, POOL[a], secondary))
                .collect();
            proptest::prop_assert_eq!(
                ManagementAddresses::new(&addresses).of(port),
                by_the_steps(&addresses, port)
            );
        }
    }

    #[test]
    fn long_values_are_cut_at_a_character_boundary() {
        let s = "é".repeat(200);
        let c = clip(&s);
        assert_eq!(c.len(), 254);
        assert!(c.chars().all(|ch| ch == 'é'));
        assert_eq!(clip("short"), "short");
        let h = HostInfo {
            hostname: Some("h".repeat(100)),
            ..HostInfo::default()
        };
        let l = Link {
            ifindex: 2,
            name: "eth0".into(),
            mac: None,
            admin_up: true,
            oper_up: true,
            carrier: true,
            alias: Some("a".repeat(300)),
        };
        let local = LocalInfo::of(&Host::new(h), &l);
        assert_eq!(local.system_name.map(|s| s.len()), Some(64));
        assert_eq!(local.port_description.map(|s| s.len()), Some(255));
    }
}
