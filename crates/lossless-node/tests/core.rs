#![allow(clippy::unwrap_used)]
//! Two daemon cores (`Daemon`, sans-IO) joined by a virtual link on a virtual clock:
//! every frame the one sends the other receives `DELAY` later, with kernel-like
//! timestamps, and the NIC's dcbnl answers come from a model of a driver (no NIC with a
//! DCB buffer exists on the test machines). No root, no sockets.
//!
//! What it checks: the headroom measured on the link reaches the NIC as the IEEE PFC
//! delay and as the size of the DCB buffers that hold PFC priorities, with the
//! driver's priority-to-buffer map kept and its other buffers left alone; and where
//! the driver has no buffer, `headroom show`, the metrics and the events say why.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::time::Duration;

use lossless_dcbx::Instant;
use lossless_node::config::DaemonConfig;
use lossless_node::hardware::{DcbBuffer, IeeePfc, IeeeReadback};
use lossless_node::link::{Link, LinkChange};
use lossless_node::node::{Identity, PersistError};
use lossless_node::node::{Node, Now, Output};
use lossless_node::protocol::Response;
use lossless_node::protocol::{FeatureChange, FeatureName, Request};
use lossless_node::state::PersistedState;
use lossless_node::timestamps::{Clock, Clocks};
use serde_json::Value;

/// One way, each direction.
const DELAY: Duration = Duration::from_nanos(100);

/// Priorities 3 and 4 (PFC) in buffer 1, the others in buffer 0, on a 1 MiB port.
const DRIVER: DcbBuffer = DcbBuffer {
    prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
    buffer_size: [262_144, 65_536, 0, 0, 0, 0, 0, 0],
    total_size: 1_048_576,
};

/// How the modelled NIC of daemon A answers dcbnl.
#[derive(Clone, Copy)]
enum Nic {
    /// dcbnl_getbuffer and dcbnl_setbuffer: takes the sizes it is given.
    WithBuffer,
    /// IEEE ops without the buffer ones: no DCB_ATTR_DCB_BUFFER in IEEE_GET.
    NoBuffer,
}

enum Delivery {
    Frame(Vec<u8>),
    Measure(Vec<u8>, u64),
}

struct Sim {
    d: [Node; 2],
    now: Duration,
    /// (when, to which daemon, sequence for a stable order, what)
    queue: BinaryHeap<Reverse<(Duration, usize, u64, usize)>>,
    deliveries: Vec<Option<Delivery>>,
    nic: Nic,
    buffer: DcbBuffer,
    /// (pfc_enabled, pfc_delay_bits) per ApplyHeadroom.
    pfc_sets: Vec<(u8, u16)>,
    buffer_sets: Vec<DcbBuffer>,
    events: [Vec<Value>; 2],
    /// Replies of node A to requests.
    replies: Vec<(u64, Response)>,
}

const NAMES: [&str; 2] = ["va", "vb"];

fn link(i: usize, up: bool) -> Link {
    Link {
        ifindex: 10 + i as u32,
        name: NAMES[i].to_string(),
        mac: Some([2, 0, 0, 0, 0, 0x0a + i as u8]),
        admin_up: true,
        oper_up: up,
        carrier: up,
    }
}

fn ps(d: Duration) -> u64 {
    d.as_nanos() as u64 * 1000
}

impl Sim {
    fn new(nic: Nic) -> Sim {
        let daemon = |i: usize, body: &str| {
            let text = format!(
                "[ports.\"{}\"]\n{body}\n[ports.\"{}\".headroom]\n\
                 measure = true\nspeed = \"100G\"\n",
                NAMES[i], NAMES[i]
            );
            let config = DaemonConfig::parse(&text, Path::new("core.toml")).unwrap();
            let now = Now {
                mono: Instant::ZERO,
                unix: 0.0,
            };
            let identity = Identity {
                pid: 1000 + i as u32,
                ..Identity::default()
            };
            Node::new(config, identity, PersistedState::default(), now)
        };
        let a = daemon(
            0,
            "apply = \"dcbnl\"\npfc = { willing = false, priorities = [3, 4] }",
        );
        let b = daemon(1, "");
        Sim {
            d: [a, b],
            now: Duration::ZERO,
            queue: BinaryHeap::new(),
            deliveries: Vec::new(),
            nic,
            buffer: DRIVER,
            pfc_sets: Vec::new(),
            buffer_sets: Vec::new(),
            events: [Vec::new(), Vec::new()],
            replies: Vec::new(),
        }
    }

    fn now(&self) -> Now {
        Now {
            mono: Instant::from_duration(self.now),
            unix: self.now.as_secs_f64(),
        }
    }

    fn ieee(&self) -> IeeeReadback {
        IeeeReadback {
            pfc: Some(IeeePfc::default()),
            buffer: match self.nic {
                Nic::WithBuffer => Some(self.buffer),
                Nic::NoBuffer => None,
            },
        }
    }

    fn send(&mut self, to: usize, what: Delivery) {
        let at = self.now + DELAY;
        let n = self.deliveries.len();
        self.deliveries.push(Some(what));
        self.queue.push(Reverse((at, to, n as u64, n)));
    }

    /// Carries out what daemon `i` asked for, as the runtime and the NIC would.
    fn drain(&mut self, i: usize) {
        let ifindex = 10 + i as u32;
        while let Some(out) = self.d[i].poll_output() {
            let now = self.now();
            match out {
                Output::OpenMeasure { .. } => self.d[i].handle_measure_opened(
                    ifindex,
                    Ok(Clocks {
                        rx: Clock::Software,
                        tx: Clock::Software,
                    }),
                ),
                Output::Probe { .. } => self.d[i].handle_probe(ifindex, Ok(())),
                Output::ProgramCee { .. } => self.d[i].handle_programmed(now, ifindex, Ok(())),
                Output::ReadSpeed { .. } => self.d[i].handle_speed(now, ifindex, None),
                Output::ReadLink { frame, .. } => {
                    self.d[i].handle_link_read(now, Some(link(i, true)), &frame)
                }
                Output::Send { frame, .. } => self.send(1 - i, Delivery::Frame(frame)),
                Output::SendMeasure { frame, .. } => {
                    // The kernel's transmit timestamp: now, on the shared virtual clock.
                    let t = ps(self.now);
                    self.d[i].handle_measure_tx_timestamp(now, ifindex, &frame, t);
                    self.send(1 - i, Delivery::Measure(frame, t + ps(DELAY)));
                }
                Output::ApplyHeadroom {
                    pfc_enabled,
                    pfc_delay_bits,
                    read_buffer,
                    ..
                } => {
                    self.pfc_sets.push((pfc_enabled, pfc_delay_bits));
                    let ieee = read_buffer.then(|| Ok(self.ieee()));
                    self.d[i].handle_headroom_applied(now, ifindex, pfc_delay_bits, Ok(()), ieee);
                }
                Output::SetBuffer { buffer, .. } => {
                    self.buffer_sets.push(buffer);
                    if let Nic::WithBuffer = self.nic {
                        self.buffer = buffer;
                    }
                    let back = Ok(self.ieee());
                    self.d[i].handle_buffer_written(now, ifindex, back);
                }
                Output::Event(line) => self.events[i].push(serde_json::from_str(&line).unwrap()),
                Output::Persist { .. } => {
                    self.d[i].handle_persisted(now, Ok::<(), PersistError>(()))
                }
                Output::Reply { id, response } => self.replies.push((id, response)),
                _ => {}
            }
        }
    }

    /// Runs the virtual clock to `until`.
    fn run(&mut self, until: Duration) {
        loop {
            self.drain(0);
            self.drain(1);
            let timer = self
                .d
                .iter()
                .filter_map(|d| d.poll_timeout())
                .map(|t| t.since_epoch())
                .min();
            let frame = self.queue.peek().map(|Reverse((t, ..))| *t);
            let next = match (timer, frame) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).unwrap_or(until),
            };
            if next > until {
                self.now = until;
                return;
            }
            self.now = self.now.max(next);
            let now = self.now();
            if frame == Some(next) {
                let Reverse((_, to, _, n)) = self.queue.pop().unwrap();
                let ifindex = 10 + to as u32;
                match self.deliveries[n].take().unwrap() {
                    Delivery::Frame(f) => self.d[to].handle_frame(now, ifindex, &f),
                    Delivery::Measure(f, rx) => {
                        self.d[to].handle_measure_frame(now, ifindex, &f, Some(rx))
                    }
                }
            } else {
                for d in &mut self.d {
                    if d.poll_timeout().is_some_and(|t| t <= now.mono) {
                        d.handle_timeout(now);
                    }
                }
            }
        }
    }

    fn links_up(&mut self) {
        for i in 0..2 {
            let now = self.now();
            self.d[i].handle_links(now, vec![link(i, true)]);
        }
    }

    fn show(&mut self) -> Value {
        let now = self.now();
        let r = self.request(now, Request::HeadroomShow { port: None });
        r.result.unwrap()["ports"][0].clone()
    }

    /// Node A's answer to a request (its persistence succeeds at once).
    fn request(&mut self, now: Now, req: Request) -> Response {
        self.d[0].handle_request(now, 7, req);
        self.drain(0);
        let at = self
            .replies
            .iter()
            .position(|(id, _)| *id == 7)
            .expect("a reply");
        self.replies.remove(at).1
    }

    fn hardware_events(&self) -> Vec<&Value> {
        self.events[0]
            .iter()
            .filter(|e| e["event"] == "headroom_hardware")
            .collect()
    }
}

#[test]
fn headroom_reaches_the_pfc_delay_and_the_dcb_buffer() {
    let mut s = Sim::new(Nic::WithBuffer);
    s.links_up();
    s.run(Duration::from_secs(3));
    let h = s.show();
    // The virtual link's round trip, exactly: 2 x 100 ns; X = 100G x 200 ns.
    assert_eq!(h["last"]["round_trip_ns"], 200.0, "{h:#}");
    let x = h["need"]["x_bit_times"].as_u64().unwrap();
    assert_eq!(x, 20_000);
    let bytes = h["applied"]["bytes"].as_u64().unwrap();
    // DV = 20,000 + 2 x 16,160 + 672 bit times = 6,624 bytes, 42 cells of 160.
    assert_eq!(bytes, 42 * 160);
    assert_eq!(h["hardware"]["state"], "applied");
    assert_eq!(h["hardware"]["pfc_delay_bits"], 20_000);
    assert_eq!(s.pfc_sets, vec![(0b0001_1000, 20_000)]);

    // 6,720 bytes is below the driver's 64 KiB in buffer 1: nothing to write, and
    // the buffer is reported as holding the headroom.
    assert!(s.buffer_sets.is_empty(), "{:?}", s.buffer_sets);
    assert_eq!(h["buffer"]["state"], "sized", "{h:#}");
    assert_eq!(h["buffer"]["written"], false);
    assert_eq!(h["buffer"]["lossless"], serde_json::json!([1]));
    assert_eq!(h["buffer"]["floor"][1], 65_536);

    // A driver whose lossless buffer is smaller than the headroom gets it grown,
    // its map and its other buffer kept; a PFC change re-sizes for the new priorities.
    let mut s = Sim::new(Nic::WithBuffer);
    s.buffer.buffer_size[1] = 4_096;
    s.links_up();
    s.run(Duration::from_secs(3));
    assert_eq!(s.buffer_sets.len(), 1, "{:?}", s.buffer_sets);
    let w = s.buffer_sets[0];
    assert_eq!(w.prio2buffer, DRIVER.prio2buffer);
    assert_eq!(w.buffer_size, [262_144, 6_720, 0, 0, 0, 0, 0, 0]);
    let h = s.show();
    assert_eq!(h["buffer"]["state"], "sized");
    assert_eq!(h["buffer"]["written"], true);
    assert_eq!(h["buffer"]["buffer_size"][1], 6_720);
    assert_eq!(h["buffer"]["floor"][1], 4_096);
    let ev = s.hardware_events();
    let last = ev.last().unwrap();
    assert_eq!(last["buffer"]["state"], "sized", "{last}");
    assert_eq!(last["pfc_delay"]["pfc_delay_bits"], 20_000);
    let now = s.now();
    let metrics = s.d[0].render_metrics(now, None);
    for line in [
        "lossless_headroom_pfc_delay_bits{port=\"va\"} 20000",
        "lossless_headroom_buffer_state{port=\"va\",state=\"sized\",reason=\"\"} 1",
        "lossless_headroom_buffer_bytes{port=\"va\",buffer=\"1\"} 6720",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line}:\n{metrics}");
    }

    // PFC moves to priorities 0 and 7, which live in buffer 0: the delay is set for
    // them, and buffer 0 (256 KiB) already holds the headroom.
    let now = s.now();
    let r = s.request(
        now,
        Request::DcbxSet {
            port: "va".into(),
            change: FeatureChange {
                feature: FeatureName::Pfc,
                priorities: Some(vec![0, 7]),
                ..FeatureChange::default()
            },
        },
    );
    assert!(r.ok, "{r:?}");
    let until = s.now + Duration::from_secs(3);
    s.run(until);
    assert_eq!(
        s.pfc_sets.last(),
        Some(&(0b1000_0001, 20_000)),
        "{:?}",
        s.pfc_sets
    );
    assert_eq!(s.buffer_sets.len(), 1);
    let h = s.show();
    assert_eq!(h["buffer"]["lossless"], serde_json::json!([0]), "{h:#}");
    assert_eq!(h["buffer"]["written"], false);
}

#[test]
fn a_driver_without_a_buffer_is_reported_with_the_reason() {
    let mut s = Sim::new(Nic::NoBuffer);
    s.links_up();
    s.run(Duration::from_secs(3));
    let h = s.show();
    assert_eq!(h["hardware"]["state"], "applied", "{h:#}");
    let reason = "driver exposes no DCB buffer: no DCB_ATTR_DCB_BUFFER in IEEE_GET";
    assert_eq!(h["buffer"]["state"], "unsupported");
    assert_eq!(h["buffer"]["reason"], reason);
    assert!(s.buffer_sets.is_empty());
    let ev = s.hardware_events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["buffer"]["reason"], reason);
    let now = s.now();
    let metrics = s.d[0].render_metrics(now, None);
    let line = format!(
        "lossless_headroom_buffer_state{{port=\"va\",state=\"unsupported\",reason=\"{reason}\"}} 1"
    );
    assert!(metrics.lines().any(|l| l == line), "{metrics}");
}

/// A frame that arrives before the link notification makes the daemon read the link;
/// with the carrier on but the device not yet running (linkwatch has not activated
/// its queue, so anything sent now would be dropped) nothing is sent: the frame is
/// kept and handled when the notification says the link is up.
#[test]
fn a_frame_before_the_device_runs_is_kept_for_the_link_up() {
    let mut s = Sim::new(Nic::NoBuffer);
    let now = s.now();
    // B is up and sends its first LLDPDU; A's link notification has not come yet.
    s.d[1].handle_links(now, vec![link(1, true)]);
    s.d[0].handle_links(now, vec![link(0, false)]);
    let mut lldpdu = None;
    while let Some(out) = s.d[1].poll_output() {
        if let Output::Send { frame, .. } = out {
            lldpdu.get_or_insert(frame);
        }
    }
    while s.d[0].poll_output().is_some() {}
    let frame = lldpdu.expect("B sends at link-up");
    s.d[0].handle_frame(now, 10, &frame);
    let Some(Output::ReadLink { frame: f, .. }) = s.d[0].poll_output() else {
        panic!("A reads the link")
    };
    let coming_up = Link {
        oper_up: false,
        ..link(0, true)
    };
    s.d[0].handle_link_read(now, Some(coming_up), &f);
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
