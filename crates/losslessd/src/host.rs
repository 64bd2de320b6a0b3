//! Reading who the host is, for the node's identity TLVs: the host name and the kernel
//! (`uname`), whether it forwards IP, and every interface address. The node never
//! reads these itself; the runtime hands them over as a [`HostInfo`], at start, when
//! an address comes or goes, on SIGHUP and every [`REFRESH`].
//!
//! What cannot be read is not taken as gone: a failed address dump (under interface
//! churn the kernel can interrupt it more often than it is retried) or a failed
//! `uname` keeps what the last good reading said ([`HostReader`]), as lldpd keeps its
//! chassis between updates, so the Management Address does not drop out of the
//! LLDPDUs for a reading that failed.

use std::time::Duration;

use lossless_node::identity::{HostAddress, HostInfo};
use lossless_sys::addr::{dump_addresses, AddrInfo};
use lossless_sys::host::{uname, Uname};
use lossless_sys::link::LinkError;
use tracing::warn;

/// How often the host is read again even when nothing said it changed (a new host
/// name, forwarding switched on): lldpd's interval.
pub const REFRESH: Duration = Duration::from_secs(30);

/// How soon a reading that failed in part is tried again.
pub const RETRY: Duration = Duration::from_secs(1);

/// Reads the host, keeping the last good value of what a reading fails to get.
#[derive(Debug, Default)]
pub struct HostReader {
    last: HostInfo,
}

/// One reading of the host: what to hand the node, and whether a part of it could
/// not be read (and is the last good value, or absent if there was none).
#[derive(Debug)]
pub struct Reading {
    pub info: HostInfo,
    pub failed: bool,
}

impl HostReader {
    /// The host as it is now.
    pub fn read(&mut self) -> Reading {
        let reading = merge(&self.last, uname(), dump_addresses(), forwarding());
        self.last = reading.info.clone();
        reading
    }
}

/// The host from one reading's results; what failed is taken from `last` (and
/// logged). Pure: the runtime's [`HostReader::read`] hands it the system calls'
/// results.
pub fn merge(
    last: &HostInfo,
    uname: std::io::Result<Uname>,
    addresses: Result<Vec<AddrInfo>, LinkError>,
    forwarding: bool,
) -> Reading {
    let mut failed = false;
    let (hostname, description) = match uname {
        Ok(u) => (
            Some(u.nodename).filter(|n| !n.is_empty()),
            Some(format!(
                "{} {} {} {}",
                u.sysname, u.release, u.version, u.machine
            )),
        ),
        Err(e) => {
            failed = true;
            warn!(
                error = %e,
                "uname failed: the System Name and System Description stay as last read"
            );
            (last.hostname.clone(), last.description.clone())
        }
    };
    let addresses = match addresses {
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
            failed = true;
            warn!(
                error = %e,
                kept = last.addresses.len(),
                "address dump failed: the Management Address stays as last read (tried again in 1 s)"
            );
            last.addresses.clone()
        }
    };
    Reading {
        info: HostInfo {
            hostname,
            description,
            forwarding,
            addresses,
        },
        failed,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn host_uname() -> Uname {
        Uname {
            sysname: "Linux".into(),
            nodename: "h1".into(),
            release: "6.1".into(),
            version: "#1".into(),
            machine: "x86_64".into(),
        }
    }

    fn addr(last: u8) -> AddrInfo {
        AddrInfo {
            ifindex: 2,
            address: IpAddr::V4(Ipv4Addr::new(192, 0, 2, last)),
            prefix_len: 24,
            secondary: false,
            deprecated: false,
            tentative: false,
            scope: 0,
        }
    }

    #[test]
    fn a_failed_address_dump_keeps_the_last_good_list() {
        let first = merge(
            &HostInfo::default(),
            Ok(host_uname()),
            Ok(vec![addr(1)]),
            false,
        );
        assert!(!first.failed);
        assert_eq!(first.info.addresses.len(), 1);
        let second = merge(
            &first.info,
            Ok(host_uname()),
            Err(LinkError::DumpInterrupted),
            false,
        );
        assert!(second.failed);
        assert_eq!(second.info.addresses, first.info.addresses);
        // A dump that works again replaces the list, an empty one included.
        let third = merge(&second.info, Ok(host_uname()), Ok(Vec::new()), false);
        assert!(!third.failed);
        assert!(third.info.addresses.is_empty());
    }

    #[test]
    fn a_failed_uname_keeps_the_last_name() {
        let first = merge(&HostInfo::default(), Ok(host_uname()), Ok(Vec::new()), true);
        let second = merge(
            &first.info,
            Err(std::io::Error::other("uname")),
            Ok(vec![addr(2)]),
            true,
        );
        assert!(second.failed);
        assert_eq!(second.info.hostname.as_deref(), Some("h1"));
        assert_eq!(second.info.description, first.info.description);
        assert_eq!(second.info.addresses.len(), 1);
    }
}
