//! A flood on a link: a thread in a namespace sending LLDPDUs from ever new MSAPs,
//! or PFC frames (as a broken or hostile device would), as fast as `sendmmsg` on a
//! packet socket can, past the qdisc, until stopped.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use lossless_sys::batch::{BatchOptions, BatchSocket, Filter};
use lossless_sys::link::if_nametoindex;

use crate::inject::{lldpdu, pfc_frame};
use crate::netns::Netns;

/// Distinct MSAPs the flood cycles through (a MAC each: Chassis ID and Port ID).
pub const FLOOD_MSAPS: u32 = 1 << 16;
/// Frames per `sendmmsg`.
const BATCH: usize = 64;

/// A running flood; stopped (and joined) on drop or by [`Flood::stop`].
pub struct Flood {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Flood {
    /// Starts flooding out of `ifname` in `ns`: LLDPDUs with TTL `ttl` from MACs
    /// 02:ff:00:xx:xx:xx, [`FLOOD_MSAPS`] of them in turn.
    pub fn start(ns: &Netns, ifname: &str, ttl: u16) -> Flood {
        let frames: Vec<Vec<u8>> = (0..FLOOD_MSAPS)
            .map(|i| {
                let [_, a, b, c] = i.to_be_bytes();
                lldpdu([0x02, 0xff, 0x00, a, b, c], ttl)
            })
            .collect();
        Flood::of_frames(ns, ifname, frames)
    }

    /// Starts flooding out of `ifname` in `ns` with [`pfc_frame`]s (from
    /// 02:00:00:00:00:0b): a PFC storm.
    pub fn pfc(ns: &Netns, ifname: &str) -> Flood {
        Flood::of_frames(ns, ifname, vec![pfc_frame()])
    }

    /// Starts flooding out of `ifname` in `ns` with `frames` in turn (copies of a
    /// peer's LLDPDU, PFC frames from its MAC, ...).
    pub fn frames(ns: &Netns, ifname: &str, frames: Vec<Vec<u8>>) -> Flood {
        Flood::of_frames(ns, ifname, frames)
    }

    /// Sends `frames` in turn out of `ifname` in `ns`. Before the link is up
    /// the sends fail and are tried again.
    fn of_frames(ns: &Netns, ifname: &str, frames: Vec<Vec<u8>>) -> Flood {
        let what = format!("{ifname} in {}", ns.name);
        let sock = ns.run(|| {
            let index = if_nametoindex(ifname).unwrap_or_else(|e| panic!("{what}: {e}"));
            let opts = BatchOptions {
                rcvbuf: 1 << 16,
                ..BatchOptions::default()
            };
            BatchSocket::open(index, Filter::MacControl, opts)
                .unwrap_or_else(|e| panic!("{what}: {e}"))
        });
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let (s, n) = (stop.clone(), sent.clone());
        let thread = std::thread::spawn(move || {
            let mut at = 0;
            while !s.load(Ordering::Relaxed) {
                let batch = (0..BATCH).map(|k| frames[(at + k) % frames.len()].as_slice());
                // A full device queue refuses a batch: try again.
                if let Ok(k) = sock.send_batch(batch) {
                    at = (at + k) % frames.len();
                    n.fetch_add(k as u64, Ordering::Relaxed);
                }
            }
        });
        Flood {
            stop,
            sent,
            thread: Some(thread),
        }
    }

    /// Frames sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Stops the flood; returns how many frames it sent.
    pub fn stop(&mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.sent()
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop();
    }
}
