//! A running relay data path on a simulated node: the relay host (the one the daemon
//! runs) and the node's port each of its interfaces runs on. What the simulator does
//! with it (starting it for the node core, handing it frames, its timer) is
//! [`super::datapath`]'s; this part knows nothing of the simulator's nodes.

use lossless_dcbx::Instant;
use lossless_node::node::RelayStartError;
use lossless_relay::{GatewayCheck, Host, Port as Side, Relay, RelaySection};

/// What `if_nametoindex` answers for an interface that does not exist
/// (ENODEV), which the daemon's `relay show` then prints.
const NO_SUCH_DEVICE: i32 = 19;

/// A running data path: the host, and the node's port each of its
/// interfaces runs on (None: no port of that name).
pub(super) struct Datapath {
    pub(super) host: Host,
    ports: Vec<(Side, Option<usize>)>,
    pub(super) started: Instant,
    /// The storm timer queued (older entries are stale).
    pub(super) wake: Option<Instant>,
}

impl Datapath {
    /// Starts the data path of `section` at `now`; `port_of` names the node's port
    /// of an interface (None: the node has no port of that name).
    pub(super) fn start(
        section: RelaySection,
        port_of: impl Fn(&str) -> Option<usize>,
        now: Instant,
    ) -> Result<Datapath, RelayStartError> {
        let mut host = Host::new(section)?;
        let links: Vec<_> = host
            .links()
            .iter()
            .map(|l| (l.side, port_of(&l.interface)))
            .collect();
        for &(side, port) in &links {
            match port {
                Some(_) => host.opened(side),
                None => {
                    let e = std::io::Error::from_raw_os_error(NO_SUCH_DEVICE);
                    host.open_failed(side, &e);
                }
            }
        }
        Ok(Datapath {
            host,
            ports: links,
            started: now,
            wake: None,
        })
    }

    /// The host's clock at `now`.
    pub(super) fn clock(&self, now: Instant) -> Instant {
        Instant::ZERO + now.saturating_since(self.started)
    }

    /// The side of the interface on `port` that takes `frame`, if any.
    pub(super) fn takes(&self, port: usize, frame: &[u8]) -> Option<Side> {
        self.ports
            .iter()
            .find(|&&(side, p)| p == Some(port) && self.host.takes(side, frame))
            .map(|&(side, _)| side)
    }

    pub(super) fn port(&self, side: Side) -> Option<usize> {
        self.ports.iter().find(|(s, _)| *s == side)?.1
    }

    /// The relay core of a PE.
    pub(super) fn relay(&self) -> Option<&Relay> {
        self.host.relay()
    }

    /// The check of a DC gateway.
    pub(super) fn gateway(&self) -> Option<&GatewayCheck> {
        self.host.gateway()
    }
}
