//! A PE's data path: PFC from the DC gateway in, tunnel frames to the WAN
//! out, and the reverse. One thread, two sockets, batches both ways.

use lossless_relay::{Port, RelayConfig, TunnelConfig, TxBatch};
use lossless_sys::batch::{BatchOptions, Filter, RxBatch};
use lossless_sys::if_hwaddr;

use super::{idle, Core, Link, Shared, MAX_FRAME};

/// The WAN socket's filter: only what the tunnel can be.
fn wan_filter(tunnel: &TunnelConfig) -> Filter {
    match tunnel {
        TunnelConfig::Srv6 { .. } => Filter::Srv6,
        TunnelConfig::Vxlan { port, .. } => Filter::Udp { port: *port },
        TunnelConfig::SrMpls { .. } => Filter::Mpls,
    }
}

pub(super) fn run(shared: &Shared, cfg: &RelayConfig) {
    let batch = usize::from(cfg.datapath.batch);
    let priority = cfg.marking.socket_priority;
    let dc_name = cfg.dc.interface.clone().unwrap_or_default();
    let wan_name = cfg.wan.interface.clone().unwrap_or_default();
    // Tunnel frames come addressed to wan.port_mac: when that is not the
    // interface's own address, the NIC must pass other unicast up.
    let promiscuous = if_hwaddr(&wan_name).map_or(true, |mac| mac != cfg.wan.port_mac.0);
    let mut dc = Link::new(
        0,
        &dc_name,
        Filter::MacControl,
        BatchOptions {
            priority,
            ..BatchOptions::default()
        },
    );
    let mut wan = Link::new(
        1,
        &wan_name,
        wan_filter(&cfg.tunnel),
        BatchOptions {
            priority,
            promiscuous,
            ..BatchOptions::default()
        },
    );
    let mut rx = RxBatch::new(batch, MAX_FRAME);
    let mut out = TxBatch::with_capacity(2 * batch, 256);
    while !shared.stopping() {
        dc.ensure_open(shared);
        wan.ensure_open(shared);
        out.clear();
        let (received, next) = {
            let mut guard = shared.lock();
            let st = &mut *guard;
            let Core::Pe(relay) = &mut st.core else {
                return;
            };
            let mut received = 0;
            for (link, port) in [(&mut dc, Port::Dc), (&mut wan, Port::Wan)] {
                let io = &mut st.ports[link.slot];
                let n = link.recv(&mut rx, io);
                link.read_stats(io);
                if n > 0 {
                    received += n;
                    relay.process(shared.now(), port, rx.iter(), &mut out);
                }
            }
            relay.process_timeout(shared.now(), &mut out);
            (received, relay.poll_timeout())
        };
        dc.send(
            out.iter().filter(|t| t.port == Port::Dc).map(|t| t.frame),
            shared,
        );
        wan.send(
            out.iter().filter(|t| t.port == Port::Wan).map(|t| t.frame),
            shared,
        );
        if received == 0 && out.is_empty() {
            idle(shared, &[&dc, &wan], next);
        }
    }
}
