//! A DC gateway's data path: read the PFC frames on the interface facing the
//! PE and check each the way draft-he-rtgwg-wan-pfc-00 asks (legal, to
//! 01-80-C2-00-00-01, from the PE's port or system MAC). What the gateway then
//! does with an accepted frame is its NIC's business (PFC pauses in hardware);
//! the daemon counts and shows.
//!
//! Where the XDP program runs ([`super::xdp_gateway`]), it checks the frames
//! instead, with the same rules, and drops the illegal ones before the host
//! sees them; the packet socket is then closed and the thread reads the
//! program's counters.

use lossless_relay::{GatewayCheck, GatewayConfig, GatewayCounters};
use lossless_sys::batch::Filter;

use super::xdp_gateway::GatewayXdp;
use super::{idle, ring_options, Core, Link, Shared};
use lossless_node::relay::{AcceptedPfc, GatewayShow};

pub(super) struct State {
    check: GatewayCheck,
    pe_port_mac: lossless_wire::MacAddr,
    pe_system_mac: Option<lossless_wire::MacAddr>,
    last_accepted: Option<AcceptedPfc>,
    /// What the XDP programs counted.
    xdp: GatewayCounters,
}

impl State {
    pub(super) fn new(check: GatewayCheck, cfg: &GatewayConfig) -> State {
        State {
            check,
            pe_port_mac: cfg.pe_port_mac,
            pe_system_mac: cfg.pe_system_mac,
            last_accepted: None,
            xdp: GatewayCounters::default(),
        }
    }

    pub(super) fn show(&self) -> GatewayShow {
        let mut counters = *self.check.counters();
        counters.add(&self.xdp);
        GatewayShow {
            pe_port_mac: self.pe_port_mac,
            pe_system_mac: self.pe_system_mac,
            counters,
            last_accepted: self.last_accepted,
            buffer: self.check.buffer().cloned(),
        }
    }
}

pub(super) fn run(shared: &Shared, cfg: &GatewayConfig) {
    let name = cfg.interface.clone().unwrap_or_default();
    let mut link = Link::new(0, &name, Filter::MacControl, ring_options(0, false));
    let batch = usize::from(shared.datapath.batch);
    let mut fast = GatewayXdp::new(cfg);
    while !shared.stopping() {
        if run_xdp(shared, &mut fast, &mut link, &name) {
            idle(shared, &[], None);
            continue;
        }
        link.ensure_open(shared);
        let received = {
            let mut guard = shared.lock();
            let st = &mut *guard;
            let Core::Gateway(g) = &mut st.core else {
                return;
            };
            let io = &mut st.ports[link.slot];
            let tick = std::time::Instant::now();
            let at_s = shared.at(tick).since_epoch().as_secs_f64();
            let n = link.recv(
                batch,
                io,
                |_| {},
                |frames| {
                    for frame in frames.iter() {
                        if let Ok(pfc) = g.check.check(frame) {
                            g.last_accepted = Some(AcceptedPfc {
                                src: pfc.src,
                                class_enable: pfc.class_enable,
                                quanta: pfc.quanta,
                                at_s,
                            });
                        }
                    }
                },
            );
            link.read_stats(io, tick);
            n
        };
        if received == 0 {
            idle(shared, &[&link], None);
        }
    }
}

/// Attaches the XDP program when it can; while it runs, keeps the packet
/// socket closed and the program's counts in the state. Whether it runs.
fn run_xdp(shared: &Shared, fast: &mut GatewayXdp, link: &mut Link, name: &str) -> bool {
    let mut guard = shared.lock();
    let st = &mut *guard;
    fast.ensure(name, &mut st.xdp);
    if !fast.running() {
        return false;
    }
    link.serve_in_xdp(&mut st.ports[link.slot]);
    let (counts, last) = fast.read(shared.now());
    if let Core::Gateway(g) = &mut st.core {
        g.xdp = counts;
        if let Some(l) = last {
            if g.last_accepted.is_none_or(|a| a.at_s <= l.at_s) {
                g.last_accepted = Some(l);
            }
        }
    }
    true
}
