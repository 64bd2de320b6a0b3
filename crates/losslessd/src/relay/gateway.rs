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

use lossless_relay::{GatewayConfig, Port, TxBatch};

use super::xdp_gateway::GatewayXdp;
use super::{idle, ring_options, Link, Shared};

pub(super) fn run(shared: &Shared, cfg: &GatewayConfig) {
    let name = cfg.interface.clone().unwrap_or_default();
    let mut link = {
        let host = shared.lock();
        let [pe] = host.links() else {
            return;
        };
        Link::new(pe, ring_options(0, false))
    };
    let batch = usize::from(shared.datapath.batch);
    let mut fast = GatewayXdp::new(cfg);
    // A gateway sends nothing: the host's output stays empty.
    let mut out = TxBatch::new();
    while !shared.stopping() {
        if run_xdp(shared, &mut fast, &mut link, &name) {
            idle(shared, &[], None);
            continue;
        }
        link.ensure_open(shared);
        let received = {
            let mut host = shared.lock();
            let tick = std::time::Instant::now();
            let now = shared.at(tick);
            let n = link.recv(
                batch,
                |_| {},
                |frames| {
                    host.process(now, Port::Dc, frames.iter().map(|f| (f, now)), &mut out);
                },
            );
            link.read_stats(&mut host, tick);
            n
        };
        if received == 0 {
            idle(shared, &[&link], None);
        }
    }
}

/// Attaches the XDP program when it can; while it runs, keeps the packet
/// socket closed and the program's counts in the host. Whether it runs.
fn run_xdp(shared: &Shared, fast: &mut GatewayXdp, link: &mut Link, name: &str) -> bool {
    let mut host = shared.lock();
    fast.ensure(name, host.xdp_mut());
    if !fast.running() {
        return false;
    }
    link.serve_in_xdp(&mut host);
    let (counts, last) = fast.read(shared.now());
    host.record_gateway_xdp(counts, last);
    true
}
