//! Reading who the host is, for the node's identity TLVs: the host name and the kernel
//! (`uname`), whether it forwards IP, and every interface address. The node never
//! reads these itself; the runtime hands them over as a [`HostInfo`], at start, when
//! an address comes or goes, on SIGHUP and every [`REFRESH`].

use std::time::Duration;

use lossless_node::identity::{HostAddress, HostInfo};
use lossless_sys::addr::dump_addresses;
use lossless_sys::host::uname;
use tracing::warn;

/// How often the host is read again even when nothing said it changed (a new host
/// name, forwarding switched on): lldpd's interval.
pub const REFRESH: Duration = Duration::from_secs(30);

/// The host as it is now. What cannot be read is left out (and logged).
pub fn read() -> HostInfo {
    let (hostname, description) = match uname() {
        Ok(u) => (
            Some(u.nodename).filter(|n| !n.is_empty()),
            Some(format!(
                "{} {} {} {}",
                u.sysname, u.release, u.version, u.machine
            )),
        ),
        Err(e) => {
            warn!(error = %e, "uname failed: no System Name or System Description from the host");
            (None, None)
        }
    };
    let addresses = match dump_addresses() {
        Ok(list) => list
            .into_iter()
            .filter(|a| !a.tentative)
            .map(|a| HostAddress {
                ifindex: a.ifindex,
                address: a.address,
                secondary: a.secondary || a.deprecated,
            })
            .collect(),
        Err(e) => {
            warn!(error = %e, "address dump failed: no Management Address from the host");
            Vec::new()
        }
    };
    HostInfo {
        hostname,
        description,
        forwarding: forwarding(),
        addresses,
    }
}

/// IPv4 or IPv6 forwarding is on in this network namespace.
fn forwarding() -> bool {
    [
        "/proc/sys/net/ipv4/ip_forward",
        "/proc/sys/net/ipv6/conf/all/forwarding",
    ]
    .iter()
    .any(|p| std::fs::read_to_string(p).is_ok_and(|s| s.trim() == "1"))
}
