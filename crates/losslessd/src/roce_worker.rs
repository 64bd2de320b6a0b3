//! The RoCE host settings off the event loop: a thread of its own owns the
//! [`Host`](lossless_host::Host) (the `--sysfs` root and its ethtool sockets), takes the
//! ports' requests (`Output::RoceHost`: what to write, then read everything) and hands
//! each answer back to the core task. A driver slow to answer ethtool (firmware
//! queries; a reply waits up to a second) or a slow sysfs delays only this thread,
//! never an LLDPDU.

use std::sync::mpsc as std_mpsc;
use std::thread;

use lossless_host::Host;
use lossless_node::config::RoceSetting;
use lossless_node::roce::{HostRoce, WriteOutcome};

/// One port's answer.
pub struct RoceRead {
    pub ifindex: u32,
    pub host: HostRoce,
    pub written: Vec<WriteOutcome>,
}

/// The thread's handle: requests go in, answers come back through `deliver`.
pub struct RoceWorker {
    tx: std_mpsc::Sender<(u32, String, Vec<RoceSetting>)>,
}

impl RoceWorker {
    /// Starts the thread, which owns `host`; `deliver` hands each answer on and returns
    /// false when nobody takes them any more (the thread then ends).
    pub fn start(
        mut host: Host,
        mut deliver: impl FnMut(RoceRead) -> bool + Send + 'static,
    ) -> RoceWorker {
        let (tx, rx) = std_mpsc::channel::<(u32, String, Vec<RoceSetting>)>();
        let spawned = thread::Builder::new()
            .name("roce-host".into())
            .spawn(move || {
                while let Ok((ifindex, name, write)) = rx.recv() {
                    let (read, written) = host.write_and_read(&name, &write);
                    if !deliver(RoceRead {
                        ifindex,
                        host: read,
                        written,
                    }) {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the RoCE host settings thread");
        }
        RoceWorker { tx }
    }

    /// Asks for a port's writes, then its reading; false when the thread is gone.
    pub fn request(&self, ifindex: u32, name: String, write: Vec<RoceSetting>) -> bool {
        self.tx.send((ifindex, name, write)).is_ok()
    }
}
