#![allow(clippy::unwrap_used)]
//! The node core on its own, fed by hand: what it does with a frame that arrives
//! before the kernel said the link is up.

use std::path::Path;

use lossless_dcbx::{Duration, Instant};
use lossless_node::config::DaemonConfig;
use lossless_node::link::{Link, LinkChange};
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::protocol::{Request, Response};
use lossless_node::state::PersistedState;

const NAMES: [&str; 2] = ["va", "vb"];

fn link(i: usize, up: bool) -> Link {
    Link {
        ifindex: 10 + i as u32,
        name: NAMES[i].to_string(),
        mac: Some([2, 0, 0, 0, 0, 0x0a + i as u8]),
        admin_up: true,
        oper_up: up,
        carrier: up,
        alias: None,
    }
}

struct Sim {
    d: [Node; 2],
}

impl Sim {
    fn new() -> Sim {
        Sim::with_daemon("")
    }

    /// Both nodes with this `[daemon]` section.
    fn with_daemon(daemon: &str) -> Sim {
        let node = |i: usize| {
            let text = format!("[daemon]\n{daemon}\n[ports.\"{}\"]\n", NAMES[i]);
            let config = DaemonConfig::parse(&text, Path::new("links.toml")).unwrap();
            Node::new(
                config,
                Identity::default(),
                PersistedState::default(),
                now(),
            )
        };
        Sim {
            d: [node(0), node(1)],
        }
    }

    fn now(&self) -> Now {
        now()
    }

    /// B is up and sends its first LLDPDU before A's link notification: A
    /// reads its link, which has the carrier but is not running yet.
    fn lldpdu_before_the_device_runs(&mut self) {
        let now = self.now();
        self.d[1].handle_links(now, vec![link(1, true)]);
        self.d[0].handle_links(now, vec![link(0, false)]);
        let mut lldpdu = None;
        while let Some(out) = self.d[1].poll_output() {
            if let Output::Send { frame, .. } = out {
                lldpdu.get_or_insert(frame);
            }
        }
        while self.d[0].poll_output().is_some() {}
        self.d[0].handle_frame(now, 10, &lldpdu.expect("B sends at link-up"));
        let Some(Output::ReadLink { frame: f, .. }) = self.d[0].poll_output() else {
            panic!("A reads the link")
        };
        let coming_up = Link {
            oper_up: false,
            ..link(0, true)
        };
        self.d[0].handle_link_read(now, Some(coming_up), &f);
    }

    /// Node A's answer to a request.
    fn request(&mut self, now: Now, req: Request) -> Response {
        self.d[0].handle_request(now, 7, req);
        while let Some(out) = self.d[0].poll_output() {
            if let Output::Reply { id: 7, response } = out {
                return response;
            }
        }
        panic!("no reply")
    }
}

fn now() -> Now {
    Now {
        mono: Instant::ZERO,
        unix: 0.0,
    }
}

/// A frame that arrives before the link notification makes the daemon read the link;
/// with the carrier on but the device not yet running (linkwatch has not activated
/// its queue, so anything sent now would be dropped) nothing is sent: the frame is
/// kept and handled when the notification says the link is up.
#[test]
fn a_frame_before_the_device_runs_is_kept_for_the_link_up() {
    let mut s = Sim::new();
    let now = s.now();
    s.lldpdu_before_the_device_runs();
    let mut outs = Vec::new();
    while let Some(out) = s.d[0].poll_output() {
        outs.push(out);
    }
    assert!(
        !outs.iter().any(|o| matches!(o, Output::Send { .. })),
        "sent before the device runs: {outs:?}"
    );
    let dcbx = |s: &mut Sim| {
        let now = s.now();
        let r = s.request(now, Request::DcbxShow { port: None });
        r.result.unwrap()["ports"][0].clone()
    };
    assert_eq!(dcbx(&mut s)["peer_present"], false);
    // The notification: the link is up, the kept LLDPDU is B's, A answers it.
    s.d[0].handle_link_change(now, LinkChange::New(link(0, true)));
    let mut sent = 0;
    while let Some(out) = s.d[0].poll_output() {
        sent += usize::from(matches!(out, Output::Send { .. }));
    }
    assert!(sent >= 1);
    assert_eq!(dcbx(&mut s)["peer_present"], true);
}

/// A frame is charged to the receive budget once, when it arrives: not again
/// when it is handed back with the link read, nor when it is kept for the link
/// notification. With a budget of one frame, B's first LLDPDU (B is no DCBX peer
/// yet, so it counts) still reaches A's agent.
#[test]
fn a_frame_kept_for_the_link_up_is_charged_to_the_budget_once() {
    let mut s = Sim::with_daemon("rx_budget_per_s = 1\nrx_budget_burst = 1\n");
    let now = s.now();
    s.lldpdu_before_the_device_runs();
    s.d[0].handle_link_change(now, LinkChange::New(link(0, true)));
    while s.d[0].poll_output().is_some() {}
    let r = s.request(now, Request::Counters { port: None });
    let io = r.result.unwrap()["ports"][0]["io"].clone();
    assert_eq!(io["rx_over_budget"], 0, "{io}");
    assert_eq!(io["rx_frames"], 1, "{io}");
    let r = s.request(now, Request::DcbxShow { port: None });
    assert_eq!(r.result.unwrap()["ports"][0]["peer_present"], true);
}

/// A PFC frame from a device that is not the port's peer.
const STRANGER: [u8; 16] = [
    0x01, 0x80, 0xc2, 0, 0, 0x01, 2, 0xee, 0, 0, 0, 1, 0x88, 0x08, 1, 1,
];

impl Sim {
    /// Node A with a receive budget of 2 frames at once, 1 a second, its port up.
    fn budgeted() -> Sim {
        let mut s = Sim::with_daemon("rx_budget_per_s = 1\nrx_budget_burst = 2\n");
        let now = s.now();
        s.d[0].handle_links(now, vec![link(0, true)]);
        while s.d[0].poll_output().is_some() {}
        s
    }

    /// [`STRANGER`] on A's port at `now`: how many times A then asked for a socket
    /// of the port's own.
    fn stranger_frame(&mut self, now: Now) -> usize {
        self.d[0].handle_frame(now, 10, &STRANGER);
        let mut asked = 0;
        while let Some(out) = self.d[0].poll_output() {
            asked += usize::from(matches!(out, Output::ReceiveAlone { ifindex: 10 }));
        }
        asked
    }

    /// A's port's `io` counters.
    fn io(&mut self, now: Now) -> serde_json::Value {
        let r = self.request(now, Request::Counters { port: None });
        r.result.unwrap()["ports"][0]["io"].clone()
    }
}

/// A port reads the shared packet sockets until its receive budget is spent; then it
/// asks, once, for a socket of its own (`Output::ReceiveAlone`), and `counters` says
/// which it reads.
#[test]
fn a_port_past_its_budget_asks_once_for_a_socket_of_its_own() {
    let mut s = Sim::budgeted();
    let now = s.now();
    // A stranger's frames: two within the budget, then five past it.
    let asked: Vec<usize> = (0..7)
        .map(|i| {
            let n = s.stranger_frame(now);
            if i == 1 {
                assert_eq!(s.io(now)["own_socket"], false, "within the budget");
            }
            n
        })
        .collect();
    assert_eq!(
        asked,
        [0, 0, 1, 0, 0, 0, 0],
        "asked once, at the first frame past the budget"
    );
    assert_eq!(s.io(now)["own_socket"], true);
}

/// When the runtime cannot open the port's own socket, the port stays on the
/// shared ones (`own_socket` false, the failure counted) and asks again 10 s
/// later if its budget is still spent, not at every frame before then.
#[test]
fn a_socket_of_its_own_that_cannot_be_opened_is_asked_for_again_later() {
    let mut s = Sim::budgeted();
    let t0 = s.now();
    let at = |secs: u64| Now {
        mono: t0.mono + Duration::from_secs(secs),
        unix: secs as f64,
    };
    // Ten frames past the budget at `now`: the times A asked.
    let flood = |s: &mut Sim, now: Now| (0..10).map(|_| s.stranger_frame(now)).sum::<usize>();
    assert_eq!(flood(&mut s, t0), 1, "asked once");
    s.d[0].handle_own_socket_failed(t0, 10);
    let c = s.io(t0);
    assert_eq!(
        (c["own_socket"].clone(), c["own_socket_failures"].clone()),
        (false.into(), 1.into())
    );
    assert_eq!(flood(&mut s, at(9)), 0, "not again within 10 s");
    assert_eq!(flood(&mut s, at(10)), 1, "asked again after 10 s");
    assert_eq!(s.io(at(10))["own_socket"], true);
}
