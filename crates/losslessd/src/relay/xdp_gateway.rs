//! A DC gateway's XDP path: `xdp_gateway` on the interface facing the PE
//! checks every MAC Control frame with `GatewayCheck`'s rules (the C the PE's
//! program checks with), drops the illegal ones before the host sees them
//! and passes the rest; its counters and last accepted frame, in the core's
//! terms, go into `relay show` and `/metrics`.

use lossless_relay::show::AcceptedPfc;
use lossless_relay::{DropReason, GatewayConfig, GatewayCounters};
use lossless_sys::xdp::{counter, GatewayLast, Side, Sources, XdpRelay};
use lossless_wire::MacAddr;

use super::xdp::{AttachGate, Gate};
use super::XdpShowSlot;

/// The program's `gateway` map for `cfg`: the PE's MACs.
pub fn sources(cfg: &GatewayConfig) -> Sources {
    Sources {
        port_mac: cfg.pe_port_mac.0,
        system_mac: cfg.pe_system_mac.map_or([0; 6], |m| m.0),
        has_system_mac: u8::from(cfg.pe_system_mac.is_some()),
    }
}

/// The program's counters as `GatewayCheck` counts.
pub fn counters(c: &[u64; counter::COUNT]) -> GatewayCounters {
    let mut g = GatewayCounters {
        received: c[counter::GATEWAY_RECEIVED],
        accepted: c[counter::GATEWAY_ACCEPTED],
        ..GatewayCounters::default()
    };
    for (i, r) in DropReason::ALL.into_iter().enumerate() {
        g.dropped.add_n(r, c[counter::GATEWAY_DROP + i]);
    }
    g
}

/// The program's last accepted frame as `relay show` gives it; `offset_ns`:
/// the program's clock minus the relay's.
pub fn accepted(last: &GatewayLast, offset_ns: u64) -> AcceptedPfc {
    AcceptedPfc {
        src: MacAddr(last.src),
        class_enable: last.class_enable,
        quanta: last.quanta,
        at_s: last.at_ns.saturating_sub(offset_ns) as f64 / 1e9,
    }
}

/// The gateway thread's XDP path: loaded and attached when it can be.
pub struct GatewayXdp {
    sources: Sources,
    gate: AttachGate,
    relay: Option<XdpRelay>,
    /// What programs dropped earlier counted (one is loaded again when the
    /// interface comes back), and what the running one counted so far.
    carried: GatewayCounters,
    current: GatewayCounters,
}

impl GatewayXdp {
    pub fn new(cfg: &GatewayConfig) -> GatewayXdp {
        GatewayXdp {
            sources: sources(cfg),
            // The program redirects nothing: `auto` attaches on veth too.
            gate: AttachGate::new(cfg.datapath.xdp, false),
            relay: None,
            carried: GatewayCounters::default(),
            current: GatewayCounters::default(),
        }
    }

    /// Loads and attaches the program on `iface` unless it runs there
    /// (at most one try a second); records the outcome in `show`.
    pub fn ensure(&mut self, iface: &str, show: &mut XdpShowSlot) {
        let idx = match self.gate.check(&[iface], show) {
            Gate::Keep => return,
            Gate::Stop => {
                self.stop();
                return;
            }
            Gate::Start(idx) => idx,
        };
        self.stop();
        match self.start(idx[0]) {
            Ok((relay, mode)) => {
                self.relay = Some(relay);
                self.gate.attached(idx);
                super::xdp_running(
                    show,
                    mode,
                    "every MAC Control frame checked in XDP, the illegal ones dropped there; \
                     the packet socket is closed",
                );
            }
            Err(why) => super::xdp_off(show, &why),
        }
    }

    fn stop(&mut self) {
        if self.relay.take().is_some() {
            let c = std::mem::take(&mut self.current);
            self.carried.add(&c);
        }
    }

    fn start(&self, ifindex: u32) -> Result<(XdpRelay, lossless_sys::xdp::Mode), String> {
        if let Err(e) = lossless_sys::xdp::object() {
            return Err(format!("unavailable: not built ({e})"));
        }
        let mut x = XdpRelay::load_gateway(&self.sources)
            .map_err(|e| format!("unavailable: the kernel refused the program: {e}"))?;
        let mode = x
            .attach(Side::Gateway, ifindex)
            .map_err(|e| format!("unavailable: {e}"))?;
        Ok((x, mode))
    }

    pub fn running(&self) -> bool {
        self.relay.is_some()
    }

    /// Everything the programs counted, and the running one's last accepted
    /// frame; `core_now`: the relay's clock now.
    pub fn read(
        &mut self,
        core_now: lossless_relay::Instant,
    ) -> (GatewayCounters, Option<AcceptedPfc>) {
        let mut last = None;
        if let Some(x) = &self.relay {
            if let Ok(c) = x.counters() {
                self.current = counters(&c);
            }
            let offset = lossless_sys::xdp::ktime_ns()
                .saturating_sub(u64::try_from(core_now.since_epoch().as_nanos()).unwrap_or(0));
            last = x
                .gateway_last()
                .ok()
                .flatten()
                .map(|l| accepted(&l, offset));
        }
        let mut total = self.carried;
        total.add(&self.current);
        (total, last)
    }
}
