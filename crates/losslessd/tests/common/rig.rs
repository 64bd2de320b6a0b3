//! losslessd doing everything it does in service, for the tests that look at a whole
//! run (the unit's sandbox, the metrics the dashboards and alerts use): host H's
//! daemon on two DCBX ports and a PFC relay PE, peer P's daemon on the other ends and a
//! DC gateway's relay check.
//!
//! ```text
//!  ns H: losslessd                           ns P: losslessd
//!    va0 ====================================== vb0   DCBX, apply = "dcbnl", headroom
//!    va1 ====================================== vb1   DCBX, as the test configures it
//!    pe2-dc (relay PE, storm ceiling) ========= gen   P's relay gateway; the test sends here
//!    pe2-wan ================================== sink  the test receives here
//! ```
//!
//! H's va0 applies to the NIC through dcbnl: on the kernel's veth (the probe fails,
//! report only) or, with `shim`, on lossless-testkit's emulated DCB driver with a DCB
//! buffer (the headroom is programmed and the buffer sized).

use std::os::fd::AsFd;
use std::time::Duration;

use lossless_node::protocol::Request;
use lossless_relay::example::{self, Kind, DC2_GW, PE2_DC, PE2_WAN};
use lossless_relay::RelaySection;
use lossless_sys::batch::{wait_any, RxBatch};
use lossless_testkit::ShimEnv;
use lossless_wire::MacAddr;

use super::*;

const WAIT: Duration = Duration::from_secs(20);
const SINK: MacAddr = MacAddr([2, 0, 0, 0, 0xaa, 2]);
/// Each daemon's metrics endpoint, in its own namespace.
pub const METRICS: &str = "127.0.0.1:9717";

/// How to run the rig.
#[derive(Debug, Clone, Copy, Default)]
pub struct RigOptions<'a> {
    /// The body of H's `[ports."va1"]` and of P's `[ports."vb1"]`.
    pub va1: &'a str,
    pub vb1: &'a str,
    /// The emulated DCB driver, with a DCB buffer, under H's va0.
    pub shim: bool,
    /// A command H's daemon runs under (see [`Daemon::start_under`]).
    pub wrapper: &'a [&'a str],
}

pub struct Rig {
    // Drop order: the daemons before their namespaces.
    pub h: Daemon,
    pub p: Daemon,
    pub shim: Option<ShimEnv>,
    pub nh: Netns,
    pub np: Netns,
    pub dir: TempDir,
}

fn relay_pe() -> String {
    let mut cfg = example::pe(2, Kind::Srv6);
    cfg.wan.next_hop_mac = SINK;
    cfg.storm.max_per_second = Some(1000);
    cfg.storm.burst = Some(10);
    #[derive(serde::Serialize)]
    struct File {
        relay: RelaySection,
    }
    toml::to_string(&File {
        relay: RelaySection::Pe(cfg),
    })
    .expect("relay section")
}

const HEADROOM: &str = "[ports.\"IF\".headroom]\nmeasure = true\nspeed = \"100G\"\n";

impl Rig {
    /// Namespaces, links (down) and both daemons started.
    pub fn start(opts: RigOptions<'_>) -> Rig {
        let dir = TempDir::new();
        let (nh, np) = (Netns::new(), Netns::new());
        Veth::new(
            &nh,
            "va0",
            "02:00:00:00:03:0a",
            &np,
            "vb0",
            "02:00:00:00:03:0b",
        );
        Veth::new(
            &nh,
            "va1",
            "02:00:00:00:03:1a",
            &np,
            "vb1",
            "02:00:00:00:03:1b",
        );
        Veth::new(
            &np,
            "gen",
            &DC2_GW.to_string(),
            &nh,
            "pe2-dc",
            &PE2_DC.to_string(),
        );
        Veth::new(
            &nh,
            "pe2-wan",
            &PE2_WAN.to_string(),
            &np,
            "sink",
            &SINK.to_string(),
        );

        let conf_h = dir.path().join("h.toml");
        let h_text = format!(
            "[ports.\"va0\"]\napply = \"dcbnl\"\npfc = {{ priorities = [3] }}\n{}\n\
             [ports.\"va1\"]\n{}\n\n{}",
            HEADROOM.replace("IF", "va0"),
            opts.va1,
            relay_pe()
        );
        std::fs::write(&conf_h, h_text).expect("h.toml");
        let conf_p = dir.path().join("p.toml");
        let p_text = format!(
            "[ports.\"vb0\"]\npfc = {{ priorities = [3] }}\n{}\n[ports.\"vb1\"]\n{}\n\n\
             [relay]\nrole = \"gateway\"\ninterface = \"gen\"\npe_port_mac = \"{PE2_DC}\"\n\
             [relay.buffer]\nwan_delay = \"2ms\"\nrx_rate = \"100G\"\n",
            HEADROOM.replace("IF", "vb0"),
            opts.vb1,
        );
        std::fs::write(&conf_p, p_text).expect("p.toml");

        let shim = opts.shim.then(|| {
            ShimEnv::new(&dir.path().join("driver"), &["va0"]).buffer(Some(
                "total=1048576 size=262144,0,0,0,0,0,0,0 prio2buffer=0,0,0,1,0,0,0,0",
            ))
        });
        let env = shim.as_ref().map(ShimEnv::vars).unwrap_or_default();
        let h = Daemon::start_under(
            &nh,
            &dir.path().join("h"),
            opts.wrapper,
            &["--config", conf_h.to_str().unwrap(), "--metrics", METRICS],
            &env,
        );
        let p = Daemon::start(
            &np,
            &dir.path().join("p"),
            &["--config", conf_p.to_str().unwrap(), "--metrics", METRICS],
        );
        Rig {
            h,
            p,
            shim,
            nh,
            np,
            dir,
        }
    }

    /// Every link up; waits until va0 has converged and measured its headroom, va1
    /// sees its peer, and both relays have their ports open.
    pub fn up(&self) {
        for i in ["va0", "va1", "pe2-dc", "pe2-wan"] {
            self.nh.ip(&["link", "set", i, "up"]);
        }
        for i in ["vb0", "vb1", "gen", "sink"] {
            self.np.ip(&["link", "set", i, "up"]);
        }
        wait_for(WAIT, "va0 to converge", || {
            converged(&self.h.dcbx("va0")).then_some(())
        });
        wait_for(WAIT, "va1 to see its peer", || {
            (self.h.dcbx("va1")["peer_present"] == true).then_some(())
        });
        wait_for(WAIT, "va0's headroom to be measured", || {
            let v = self.h.call(&Request::HeadroomShow {
                port: Some("va0".into()),
            });
            v["ports"][0]["last"].is_object().then_some(())
        });
        for d in [&self.h, &self.p] {
            wait_for(WAIT, "the relay to open its ports", || {
                let v = d.call(&Request::RelayShow);
                v["ports"]
                    .as_array()
                    .is_some_and(|a| a.iter().all(|p| p["open"] == true))
                    .then_some(())
            });
        }
        self.nh.wait_running("pe2-wan");
        self.np.wait_running("gen");
    }

    /// Sends 5 PFC pauses of priority 3 from the DC gateway's side of the PE; the
    /// number of tunnel frames that reached the WAN side.
    pub fn relay_frames(&self) -> usize {
        let (gen, sink) = super::relay::gen_and_sink(&self.np.name);
        // Pause, resume, pause, resume, pause on priority 3: with the storm ceiling on,
        // each crosses (a first pause, and resumes within the ceiling's burst); a run
        // of pauses would be held as refreshes while the far side is still paused.
        let frames: Vec<Vec<u8>> = (1..=5)
            .map(|q| {
                let mut times = [0; 8];
                times[3] = if q % 2 == 1 { 1000 + q } else { 0 };
                example::pfc(DC2_GW, 0x08, times)
            })
            .collect();
        // A relay port reports itself open once its socket is; under strace (the
        // sandbox test) the data path has been seen to pass nothing for a moment after
        // (0 of 5 in one CI run): a round that brought nothing back is sent again, a
        // bounded number of times; the first round that crosses is the one counted.
        let mut batch = RxBatch::new(64, 2048);
        for _ in 0..10 {
            gen.send_batch(frames.iter().map(Vec::as_slice))
                .expect("send");
            let mut got = 0;
            while wait_any(&[sink.as_fd()], Some(Duration::from_millis(500))).expect("wait") {
                sink.recv_batch(&mut batch).expect("receive");
                got += batch.iter().count();
            }
            if got > 0 {
                return got;
            }
        }
        0
    }

    /// The body of `GET /metrics` from the daemon in `ns`.
    pub fn scrape(ns: &Netns) -> String {
        lossless_testkit::scrape_metrics(ns, METRICS)
    }
}
