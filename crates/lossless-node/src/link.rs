//! Links as the node core sees them: what the runtime reads from the kernel (rtnetlink
//! in losslessd, the simulator in the lab), reduced to what a port needs.

use serde::{Deserialize, Serialize};

/// One network interface's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub ifindex: u32,
    pub name: String,
    /// The hardware address of an Ethernet link; `None` for loopback, tunnels, ...
    pub mac: Option<[u8; 6]>,
    /// Administratively up (`IFF_UP`).
    pub admin_up: bool,
    /// Running (`IFF_RUNNING`, or operstate UP): the kernel sends on it.
    pub oper_up: bool,
    /// The carrier is on (`IFF_LOWER_UP`, without linkwatch's delay).
    pub carrier: bool,
    /// The interface's alias (`ip link set DEV alias TEXT`): its Port Description.
    #[serde(default)]
    pub alias: Option<String>,
}

impl Link {
    /// The port's link is up: administratively up with the carrier on (or running).
    ///
    /// The carrier rather than `IFF_RUNNING`: the kernel updates operstate from its
    /// linkwatch worker, up to a second later.
    pub fn is_up(&self) -> bool {
        self.admin_up && (self.carrier || self.oper_up)
    }
}

/// A change the kernel reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkChange {
    /// A new link, or any change to one (state, name, MAC); always the full state.
    New(Link),
    /// The device is gone.
    Del { ifindex: u32 },
}
