//! losslessd against losslessd on one veth pair: the sections `pair` (CEE),
//! `ieee` (IEEE 802.1Qaz) and `auto-cee` (an auto port falling back to CEE),
//! and the two-daemon run they share.

use std::time::{Duration, Instant};

use crate::common::*;
use crate::measure::{frames, median, poll, stats};
use crate::{CEE, MAC_A, MAC_B, NOT_WILLING};
use lossless_node::protocol::Request;
use serde_json::json;

pub fn agreed(d: &Daemon, port: &str, pfc: &[u64]) -> bool {
    let v = d.dcbx(port);
    converged(&v) && priorities(&v["pfc"]["oper"]) == pfc
}

pub fn own_ms(d: &Daemon) -> f64 {
    d.call(&Request::Status)["ports"][0]["last_convergence_ms"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

/// What a run of two losslessd gives: wall time from link-up to both agreed, the
/// daemons' own figure, and the LLDPDUs both had sent by then.
#[derive(Default, Clone)]
pub struct Samples {
    pub wall: Vec<f64>,
    pub own: Vec<f64>,
    pub frames: Vec<f64>,
}

pub fn frames_out(d: &Daemon) -> u64 {
    d.call(&Request::Counters { port: None })["ports"][0]["lldp"]["frames_out"]
        .as_u64()
        .unwrap_or(0)
}

/// Two losslessd with configurations `a` (for `va`) and `b` (for `vb`), links down;
/// `va` up, then (timed) `vb` up, until `agreed(daemon, port)` holds on both.
pub fn two_daemons(
    name: &str,
    runs: usize,
    a: &str,
    b: &str,
    agreed: impl Fn(&Daemon, &str) -> bool,
) -> Samples {
    let mut out = Samples::default();
    for _ in 0..runs {
        let dir = TempDir::new();
        let na = Netns::new();
        let nb = Netns::new();
        Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
        let start = |ns: &Netns, sub: &str, conf: &str| {
            let file = dir.path().join(format!("{sub}.toml"));
            std::fs::write(&file, conf).unwrap();
            Daemon::start(
                ns,
                &dir.path().join(sub),
                &["--config", file.to_str().unwrap()],
            )
        };
        let da = start(&na, "a", a);
        let db = start(&nb, "b", b);
        na.ip(&["link", "set", "va", "up"]);
        std::thread::sleep(Duration::from_millis(100));
        let t0 = Instant::now();
        nb.ip(&["link", "set", "vb", "up"]);
        let ok = poll(Duration::from_secs(10), || {
            agreed(&db, "vb") && agreed(&da, "va")
        });
        match ok {
            Some(_) => {
                out.wall.push(t0.elapsed().as_secs_f64() * 1e3);
                out.frames.push((frames_out(&da) + frames_out(&db)) as f64);
                out.own.push(own_ms(&da).max(own_ms(&db)));
            }
            None => println!("{name}: run did not converge in 10 s"),
        }
    }
    out
}

/// Two losslessd in CEE: A not willing with PFC 3,4, B willing; veth links down.
pub fn pair(runs: usize) -> Samples {
    let s = two_daemons(
        "pair",
        runs,
        &format!("{NOT_WILLING}{CEE}"),
        &format!("[ports.\"vb\"]\n{CEE}"),
        |d, port| agreed(d, port, &[3, 4]),
    );
    stats(
        "losslessd <-> losslessd, link-up to agreed PFC on both ends (wall)",
        s.wall.clone(),
    );
    stats(
        "losslessd <-> losslessd, the same as the daemons measure it (max of both)",
        s.own.clone(),
    );
    frames("losslessd <-> losslessd", &s.frames);
    s
}

pub const IEEE_A: &str = r#"
[ports."va"]
dcbx = { mode = "ieee" }
pfc = { willing = false, priorities = [3, 4] }

[ports."va".ets]
willing = false
prio_tc = [0, 0, 0, 1, 1, 0, 0, 0]
tc_bw = [50, 50, 0, 0, 0, 0, 0, 0]
tsa = ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"]
"#;

pub const IEEE_B: &str = r#"
[ports."vb"]
dcbx = { mode = "ieee" }

[ports."vb".ets]
willing = true
"#;

/// IEEE 802.1Qaz agreed: PFC 3,4 and A's ETS table running, both TLVs agreed.
pub fn ieee_agreed(d: &Daemon, port: &str) -> bool {
    let v = d.dcbx(port);
    converged(&v)
        && v["mode"]["running"] == "ieee"
        && v["ieee"]["pfc"]["oper"] == json!([3, 4])
        && v["ieee"]["ets"]["oper"]["tc_bw"] == json!([50, 50, 0, 0, 0, 0, 0, 0])
}

/// Two losslessd in IEEE 802.1Qaz: A not willing (ETS recommended, PFC 3,4), B
/// willing.
pub fn ieee(runs: usize) {
    let s = two_daemons("ieee", runs, IEEE_A, IEEE_B, ieee_agreed);
    stats(
        "losslessd <-> losslessd (IEEE 802.1Qaz), link-up to agreed PFC and ETS on both ends (wall)",
        s.wall.clone(),
    );
    stats(
        "losslessd <-> losslessd (IEEE 802.1Qaz), the same as the daemons measure it (max of both)",
        s.own,
    );
    frames("losslessd <-> losslessd (IEEE 802.1Qaz)", &s.frames);
}

/// An auto port (A, not willing, PFC 3,4) against `mode = "cee"` (B, willing).
pub fn auto_cee(runs: usize, pair_frames: Option<&[f64]>, pair_wall: Option<f64>) {
    let s = two_daemons(
        "auto-cee",
        runs,
        NOT_WILLING,
        &format!("[ports.\"vb\"]\n{CEE}"),
        |d, port| {
            let v = d.dcbx(port);
            v["mode"]["running"] == "cee"
                && converged(&v)
                && priorities(&v["pfc"]["oper"]) == [3, 4]
        },
    );
    stats(
        "auto <-> cee losslessd, link-up to the fallback and agreed PFC on both ends (wall)",
        s.wall.clone(),
    );
    stats(
        "auto <-> cee losslessd, the same as the daemons measure it (max of both)",
        s.own.clone(),
    );
    frames("auto <-> cee losslessd", &s.frames);
    if let (Some(pw), Some(pf), Some(w), Some(f)) = (
        pair_wall,
        pair_frames.and_then(median),
        median(&s.wall),
        median(&s.frames),
    ) {
        println!(
            "auto-cee against pair (medians): {:+.1} ms, {:+.0} LLDPDUs",
            w - pw,
            f - pf
        );
    }
}
