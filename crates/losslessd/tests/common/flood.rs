//! A daemon with two ports, one flooded by a device on its link, the other with a
//! real DCBX peer: what the flood test and the flood benchmark share.

use std::path::Path;
use std::time::{Duration, Instant};

use lossless_node::protocol::Request;
use lossless_testkit::{Flood, Netns, TempDir, Veth};
use serde_json::Value;

use super::{converged, Daemon};

/// The peer's side of `pa`/`pb`: PFC on 3 and 4, not willing.
pub const LEAF_CONFIG: &str = "[ports.\"pb\"]\npfc = { willing = false, priorities = [3, 4] }\n";

/// `fb`'s MAC: the flooding device, or with [`FloodRig::start_peered`] `fa`'s peer.
pub const FB_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x0f, 0x0b];

/// The veth pair `pa` (in `hub`) and `pb` (in `leaf`), down.
pub fn peer_link(hub: &Netns, leaf: &Netns) -> Veth {
    Veth::new(
        hub,
        "pa",
        "02:00:00:00:01:0a",
        leaf,
        "pb",
        "02:00:00:00:01:0b",
    )
}

/// Waits (`limit` from `t0`) until `daemon`'s `pa` has agreed PFC 3,4 with its
/// peer: the time since `t0`, None if not within `limit`.
pub fn agreed_within(daemon: &Daemon, t0: Instant, limit: Duration) -> Option<Duration> {
    while t0.elapsed() < limit {
        let v = daemon.dcbx("pa");
        // IEEE 802.1Qaz (auto, the default, against a losslessd) or CEE.
        let pfc = match v["mode"]["running"].as_str() {
            Some("ieee") => v["ieee"]["pfc"]["oper"].clone(),
            _ => v["pfc"]["oper"]["priorities"].clone(),
        };
        if converged(&v) && pfc == serde_json::json!([3, 4]) {
            return Some(t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// `hub` runs the daemon under test on `fa` (flooded from `fb`) and `pa` (whose
/// peer, a second losslessd on `pb`, is in `leaf`). Links `fa`/`fb` up, `pa`/`pb`
/// down.
pub struct FloodRig {
    pub hub: Netns,
    pub leaf: Netns,
    pub peer_link: Veth,
    pub daemon: Daemon,
    pub peer: Daemon,
    pub dir: TempDir,
}

impl FloodRig {
    /// `hub_extra`: more of the hub's configuration file (a `[daemon]` section);
    /// `bin`: the hub's losslessd ([`super::losslessd_bin`], or an older build to
    /// compare with).
    pub fn start(hub_extra: &str, bin: &Path) -> FloodRig {
        FloodRig::start_with(hub_extra, bin, false).0
    }

    /// As [`FloodRig::start`], with the second losslessd on `fb` too: `fa` has a DCBX
    /// peer, whose first LLDPDU (as `fa` received it) comes back with the rig, for a
    /// flood that copies its identity ([`FloodRig::peer_flood`]). Returns once the
    /// hub's `fa` has that peer.
    pub fn start_peered(hub_extra: &str, bin: &Path) -> (FloodRig, Vec<u8>) {
        let (rig, lldpdu) = FloodRig::start_with(hub_extra, bin, true);
        let t0 = Instant::now();
        while rig.daemon.dcbx("fa")["peer_present"] != true {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "fa found no peer: {}",
                rig.daemon.dcbx("fa")
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        (rig, lldpdu.expect("the peer's LLDPDU on fa"))
    }

    /// A flood out of `fb` with the identity of `fa`'s DCBX peer: copies of its
    /// `lldpdu`, and XOFFs for priority 3 from its MAC, in turn.
    pub fn peer_flood(&self, lldpdu: &[u8]) -> Flood {
        let xoff = lossless_testkit::xoff_frame(FB_MAC, 3);
        Flood::frames(&self.leaf, "fb", vec![lldpdu.to_vec(), xoff])
    }

    fn start_with(hub_extra: &str, bin: &Path, peered: bool) -> (FloodRig, Option<Vec<u8>>) {
        let dir = TempDir::new();
        let hub = Netns::new();
        let leaf = Netns::new();
        let flood_link = Veth::new(
            &hub,
            "fa",
            "02:00:00:00:0f:0a",
            &leaf,
            "fb",
            "02:00:00:00:0f:0b",
        );
        let peer_link = peer_link(&hub, &leaf);
        flood_link.up(&hub, &leaf);
        let hub_conf = dir.path().join("hub.toml");
        std::fs::write(
            &hub_conf,
            format!("{hub_extra}\n[ports.\"fa\"]\n[ports.\"pa\"]\n"),
        )
        .expect("hub config");
        let leaf_conf = dir.path().join("leaf.toml");
        let leaf_text = if peered {
            format!("{LEAF_CONFIG}[ports.\"fb\"]\n")
        } else {
            LEAF_CONFIG.to_string()
        };
        std::fs::write(&leaf_conf, leaf_text).expect("leaf config");
        // What `fa` hears from the peer's first LLDPDU on `fb`.
        let capture = peered.then(|| {
            hub.run(|| {
                let index = lossless_sys::link::if_nametoindex("fa").expect("fa");
                lossless_sys::PacketSocket::open(index).expect("a socket on fa")
            })
        });
        let daemon = Daemon::start_bin(
            &hub,
            &dir.path().join("hub"),
            bin,
            &[
                "--config",
                hub_conf.to_str().unwrap_or_default(),
                "--log",
                "info",
            ],
        );
        let peer = Daemon::start(
            &leaf,
            &dir.path().join("leaf"),
            &[
                "--config",
                leaf_conf.to_str().unwrap_or_default(),
                "--log",
                "info",
            ],
        );
        let lldpdu = capture.map(|sock| {
            let t0 = Instant::now();
            let mut buf = vec![0u8; 9216];
            loop {
                assert!(t0.elapsed() < Duration::from_secs(10), "no LLDPDU from fb");
                match sock.recv(&mut buf) {
                    Ok(n) if buf[12..14] == [0x88, 0xcc] && buf[6..12] == FB_MAC => {
                        break buf[..n].to_vec()
                    }
                    Ok(_) => {}
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        (
            FloodRig {
                hub,
                leaf,
                peer_link,
                daemon,
                peer,
                dir,
            },
            lldpdu,
        )
    }

    /// Starts the flood out of `fb`.
    pub fn flood(&self) -> Flood {
        Flood::start(&self.leaf, "fb", 120)
    }

    /// Sends `n` PFC frames out of `fb`, back to back.
    pub fn send_pfc_frames(&self, n: u64) {
        let fb = lossless_testkit::Injector::open(&self.leaf, "fb");
        let frame = lossless_testkit::pfc_frame();
        for _ in 0..n {
            fb.send(&frame);
        }
    }

    /// `fa`'s I/O counters in the hub daemon.
    pub fn flooded_io(&self) -> Value {
        self.daemon.call(&Request::Counters {
            port: Some("fa".into()),
        })["ports"][0]["io"]
            .clone()
    }

    /// Sets `pa` and `pb` up at once and waits (`limit`) until the hub's `pa` has
    /// agreed PFC 3,4 with its peer: the time from just before the link-up, None if
    /// not within `limit`.
    pub fn peer_converges(&self, limit: Duration) -> Option<Duration> {
        let t0 = Instant::now();
        self.hub.ip(&["link", "set", "pa", "up"]);
        self.leaf.ip(&["link", "set", "pb", "up"]);
        agreed_within(&self.daemon, t0, limit)
    }

    /// The hub's own figure for `pa`'s last negotiation: from the link event to every
    /// feature agreed (`last_convergence_ms`).
    pub fn own_ms(&self) -> Option<f64> {
        let v = self.daemon.call(&Request::Status);
        v["ports"].as_array()?.iter().find(|p| p["port"] == "pa")?["last_convergence_ms"].as_f64()
    }

    /// Sets `pa` and `pb` down and waits until the hub sees `pa` without a peer.
    pub fn peer_down(&self) {
        self.hub.ip(&["link", "set", "pa", "down"]);
        self.leaf.ip(&["link", "set", "pb", "down"]);
        let t0 = Instant::now();
        while converged(&self.daemon.dcbx("pa")) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
