//! The relay's XDP fast path, set up from a `[relay]` section: the program's
//! configuration built from the sans-IO core's own tunnel header (so the
//! bytes are the core's), and the counters it keeps, folded into the core's
//! status for `relay show` and `/metrics`.

use lossless_relay::host::XdpCounts;
use lossless_relay::storm::{PriorityCounters, PriorityStatus, StormGuard};
use lossless_relay::tunnel::Encapsulator;
use lossless_relay::{DropReason, Port, RelayConfig, TunnelConfig, TxBatch};
use lossless_sys::xdp::{counter, held, Kind, RelayCfg, StormState, HDR_MAX};

/// The program's configuration for `cfg`, or why the XDP path cannot carry
/// it (the AF_PACKET path then does).
pub fn xdp_config(cfg: &RelayConfig) -> Result<RelayCfg, String> {
    let encap =
        Encapsulator::new(&cfg.tunnel, &cfg.wan, &cfg.marking).map_err(|e| e.to_string())?;
    let hl = encap.header_len();
    if hl > HDR_MAX {
        return Err(format!(
            "a {hl}-octet tunnel header is longer than the XDP program writes ({HDR_MAX})"
        ));
    }
    let mut c = RelayCfg::default();
    c.dc_port_mac = cfg.dc.port_mac.0;
    c.gw_port_mac = cfg.dc.gateway_port_mac.0;
    c.gw_system_mac = cfg.dc.gateway_system_mac.map_or([0; 6], |m| m.0);
    c.has_system_mac = u8::from(cfg.dc.gateway_system_mac.is_some());
    c.wan_port_mac = cfg.wan.port_mac.0;
    c.storm = u8::from(cfg.storm.max_per_second.is_some());
    c.hdr_len = hl as u8;
    for (inner_len, hdr) in [(60usize, &mut c.hdr60), (64, &mut c.hdr64)] {
        let inner = vec![0u8; inner_len];
        let mut buf = vec![0u8; hl + inner_len];
        encap.frame(&inner).emit(&mut buf);
        hdr[..hl].copy_from_slice(&buf[..hl]);
    }
    let ip = encap.ip_offset();
    match &cfg.tunnel {
        TunnelConfig::Srv6 {
            local_sid, reduced, ..
        } => {
            c.kind = if *reduced {
                Kind::Srv6Reduced
            } else {
                Kind::Srv6
            } as u8;
            c.local_addr = local_sid.octets();
        }
        TunnelConfig::Vxlan {
            source,
            vni,
            port,
            ipv4_checksum,
            ..
        } => {
            c.vni = *vni;
            c.set_vxlan_port(*port);
            match source {
                std::net::IpAddr::V4(a) => {
                    c.kind = Kind::Vxlan4 as u8;
                    c.local_addr[..4].copy_from_slice(&a.octets());
                    if *ipv4_checksum {
                        c.udp_csum_off = ip.map_or(0, |o| o + 20 + 6) as u16;
                    }
                }
                std::net::IpAddr::V6(a) => {
                    c.kind = Kind::Vxlan6 as u8;
                    c.local_addr = a.octets();
                    c.udp_csum_off = ip.map_or(0, |o| o + 40 + 6) as u16;
                }
            }
        }
        TunnelConfig::SrMpls {
            local_label,
            control_word,
            pop_labels,
            ..
        } => {
            if pop_labels.len() > c.pop_labels.len() {
                return Err(format!(
                    "{} labels to pop; the XDP program takes at most {}",
                    pop_labels.len(),
                    c.pop_labels.len()
                ));
            }
            c.pop_labels[..pop_labels.len()].copy_from_slice(pop_labels);
            c.npop = pop_labels.len() as u32;
            c.kind = Kind::Mpls as u8;
            c.local_label = *local_label;
            c.control_word = u8::from(*control_word);
        }
    }
    Ok(c)
}

/// The storm ceiling's state for the program's map: `guard`'s settings
/// (as `StormConfig::guard` made them for the core), buckets full at `now_ns`
/// on the program's clock.
pub fn storm_state(guard: &StormGuard, now_ns: u64) -> StormState {
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    StormState::new(
        now_ns,
        guard.rate(),
        guard.burst(),
        ns(guard.gap()),
        guard.clock().speed_bps(),
        ns(guard.clock().refresh_before()),
    )
}

/// The map's per-priority state as the core's `StormGuard::status` gives
/// it; `offset`: the program's clock minus the core's.
pub fn priority_status(st: &StormState, offset: u64) -> [PriorityStatus; 8] {
    std::array::from_fn(|i| {
        let p = &st.p[i];
        PriorityStatus {
            priority: i as u8,
            in_episode: p.in_episode != 0,
            pending: match p.held {
                held::RESUME => Some(0),
                held::REFRESH => Some(p.held_quanta),
                _ => None,
            },
            far_paused_until_ns: (p.far_paused != 0).then(|| p.far_until.saturating_sub(offset)),
            tokens: p.tokens / lossless_sys::xdp::UNIT,
            counters: PriorityCounters {
                episodes: p.episodes,
                relayed: p.relayed,
                bypassed: p.bypassed,
                suppressed: p.suppressed,
                flushed: p.flushed,
                refreshed: p.refreshed,
            },
        }
    })
}

/// The XDP program's counters in the core's terms.
pub fn xdp_counts(c: &[u64; counter::COUNT]) -> XdpCounts {
    let mut x = XdpCounts {
        egress_received: c[counter::EGRESS_RECEIVED],
        egress_relayed: c[counter::EGRESS_RELAYED],
        egress_passed: c[counter::EGRESS_PASSED],
        ingress_received: c[counter::INGRESS_RECEIVED],
        ingress_delivered: c[counter::INGRESS_DELIVERED],
        ingress_passed: c[counter::INGRESS_PASSED],
        redirect_failed: c[counter::REDIRECT_FAILED],
        egress_suppressed: c[counter::EGRESS_SUPPRESSED],
        egress_masked: c[counter::EGRESS_MASKED],
        egress_flushed: c[counter::EGRESS_FLUSHED],
        ..XdpCounts::default()
    };
    for (i, r) in DropReason::ALL.into_iter().enumerate() {
        x.egress_dropped.add_n(r, c[counter::EGRESS_DROP + i]);
        x.ingress_dropped.add_n(r, c[counter::INGRESS_DROP + i]);
    }
    x
}

/// How often a failed attach is tried again, and the interfaces looked up.
const RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// When a relay thread (re)loads and attaches its program: the `xdp`
/// setting, at most one try a second, the interfaces' indexes (a program
/// runs again after an interface came back with a new index).
pub struct AttachGate {
    off: Option<&'static str>,
    /// `auto` and the program redirects: not on veth.
    veth_off: bool,
    attached: Option<Vec<u32>>,
    last_try: Option<std::time::Instant>,
}

/// What [`AttachGate::check`] asks of the caller.
pub enum Gate {
    /// Leave the program as it is (running, or not tried again yet).
    Keep,
    /// Drop the program: it must not run now (`show` says why).
    Stop,
    /// Load and attach it on these interface indexes, then call
    /// [`AttachGate::attached`] or [`super::xdp_off`].
    Start(Vec<u32>),
}

impl AttachGate {
    /// `redirects`: the program sends frames into another interface (`auto`
    /// then leaves veth alone).
    pub fn new(mode: lossless_relay::XdpMode, redirects: bool) -> AttachGate {
        AttachGate {
            off: (mode == lossless_relay::XdpMode::Off)
                .then_some("off in the configuration ([relay.datapath] xdp = \"off\")"),
            veth_off: redirects && mode == lossless_relay::XdpMode::Auto,
            attached: None,
            last_try: None,
        }
    }

    pub fn check(&mut self, ifaces: &[&str], show: &mut crate::relay::XdpShowSlot) -> Gate {
        if let Some(why) = self.off {
            super::xdp_off(show, why);
            return Gate::Stop;
        }
        if self.last_try.is_some_and(|t| t.elapsed() < RETRY) {
            return Gate::Keep;
        }
        self.last_try = Some(std::time::Instant::now());
        let idx: Result<Vec<u32>, _> = ifaces
            .iter()
            .map(|i| lossless_sys::if_nametoindex(i))
            .collect();
        let Ok(idx) = idx else {
            self.attached = None;
            super::xdp_off(
                show,
                if ifaces.len() == 1 {
                    "waiting for the interface"
                } else {
                    "waiting for both interfaces"
                },
            );
            return Gate::Stop;
        };
        if self.attached.as_ref() == Some(&idx) {
            return Gate::Keep;
        }
        if self.veth_off {
            if let Some(veth) = ifaces.iter().find(|i| is_veth(i)) {
                self.attached = None;
                super::xdp_off(
                    show,
                    &format!(
                        "not attached: {veth} is a veth, and a frame redirected into a veth is \
                     lost unless its receiving end runs an XDP program, which this host \
                     cannot see (xdp = \"on\" attaches anyway)"
                    ),
                );
                return Gate::Stop;
            }
        }
        self.attached = None;
        Gate::Start(idx)
    }

    /// The program runs on `idx`.
    pub fn attached(&mut self, idx: Vec<u32>) {
        self.attached = Some(idx);
    }
}

/// The fast path of one PE thread: loaded and attached when it can be, with
/// what `relay show` says about it.
pub struct XdpPath {
    cfg: Result<RelayCfg, String>,
    gate: AttachGate,
    relay: Option<lossless_sys::xdp::XdpRelay>,
    /// The ceiling's settings (its map written from them, on the program's
    /// clock, when the program loads).
    storm: Result<Option<StormGuard>, String>,
}

impl XdpPath {
    pub fn new(cfg: &RelayConfig) -> XdpPath {
        XdpPath {
            cfg: xdp_config(cfg),
            gate: AttachGate::new(cfg.datapath.xdp, true),
            relay: None,
            storm: cfg
                .storm
                .guard(lossless_relay::Instant::ZERO)
                .map_err(|e| e.to_string()),
        }
    }

    /// Whether the configuration has a storm ceiling.
    fn storm_on(&self) -> bool {
        matches!(self.storm, Ok(Some(_)))
    }

    /// Loads and attaches the program on `dc` and `wan` if it is not
    /// running there yet (again after an interface came back with a new
    /// index), at most once a second; records the outcome in `show`.
    pub fn ensure(&mut self, dc: &str, wan: &str, show: &mut crate::relay::XdpShowSlot) {
        let idx = match self.gate.check(&[dc, wan], show) {
            Gate::Keep => return,
            Gate::Stop => {
                self.relay = None;
                return;
            }
            Gate::Start(idx) => idx,
        };
        self.relay = None;
        match self.start(idx[0], idx[1]) {
            Ok((relay, mode)) => {
                self.relay = Some(relay);
                self.gate.attached(idx);
                let why = if self.storm_on() {
                    "the storm ceiling's state in a BPF map; its held values sent by the relay \
                     thread when due"
                } else {
                    ""
                };
                super::xdp_running(show, mode, why);
            }
            Err(why) => super::xdp_off(show, &why),
        }
    }

    fn start(
        &self,
        dc: u32,
        wan: u32,
    ) -> Result<(lossless_sys::xdp::XdpRelay, lossless_sys::xdp::Mode), String> {
        let cfg = self.cfg.as_ref().map_err(|e| format!("unavailable: {e}"))?;
        if let Err(e) = lossless_sys::xdp::object() {
            return Err(format!("unavailable: not built ({e})"));
        }
        let mut x = lossless_sys::xdp::XdpRelay::load(cfg)
            .map_err(|e| format!("unavailable: the kernel refused the program: {e}"))?;
        x.set_ports(dc, wan)
            .map_err(|e| format!("unavailable: {e}"))?;
        let storm = self
            .storm
            .as_ref()
            .map_err(|e| format!("unavailable: {e}"))?;
        if let Some(g) = storm {
            x.storm_init(&storm_state(g, lossless_sys::xdp::ktime_ns()))
                .map_err(|e| format!("unavailable: {e}"))?;
        }
        let m1 = x
            .attach(lossless_sys::xdp::Side::Dc, dc)
            .map_err(|e| format!("unavailable: {e}"))?;
        let m2 = x
            .attach(lossless_sys::xdp::Side::Wan, wan)
            .map_err(|e| format!("unavailable: {e}"))?;
        let mode =
            if m1 == lossless_sys::xdp::Mode::Generic || m2 == lossless_sys::xdp::Mode::Generic {
                lossless_sys::xdp::Mode::Generic
            } else {
                lossless_sys::xdp::Mode::Native
            };
        Ok((x, mode))
    }

    /// Whether the program runs with the storm ceiling: frames the DC socket
    /// gets are then the ones it passed up behind a due flush.
    pub fn storm_running(&self) -> bool {
        self.storm_on() && self.relay.is_some()
    }

    /// How long until the ceiling holds a value due, when the program runs it.
    pub fn storm_due_in(&self) -> Option<std::time::Duration> {
        if !self.storm_on() {
            return None;
        }
        let st = self.relay.as_ref()?.storm_state().ok()?;
        if st.next_due == lossless_sys::xdp::NEVER {
            return None;
        }
        let now = lossless_sys::xdp::ktime_ns();
        Some(std::time::Duration::from_nanos(
            st.next_due.saturating_sub(now),
        ))
    }

    /// Sends the ceiling's held values that are due, then (with `frame`)
    /// admits a frame the program passed up: the tunnel frames go into
    /// `out` for the WAN.
    pub fn storm_run(&mut self, frame: Option<&[u8]>, priority: u32, out: &mut TxBatch) {
        let Some(x) = self.relay.as_mut() else {
            return;
        };
        match x.storm_flush() {
            Ok(frames) => {
                for f in frames {
                    out.push(Port::Wan, priority, &f);
                }
            }
            Err(e) => tracing::warn!(error = %e, "the storm ceiling's flush failed"),
        }
        let Some(f) = frame else {
            return;
        };
        match x.test_run(lossless_sys::xdp::Side::Dc, f) {
            Ok((lossless_sys::xdp::XDP_REDIRECT, t)) => out.push(Port::Wan, priority, &t),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "the storm ceiling's admission failed"),
        }
    }

    /// The program's counts, when it runs; `core_now` is the core's clock
    /// now (the storm state's times are shown on it).
    pub fn counts(&self, core_now: lossless_relay::Instant) -> Option<XdpCounts> {
        let x = self.relay.as_ref()?;
        let mut counts = xdp_counts(&x.counters().ok()?);
        if self.storm_on() {
            let st = x.storm_state().ok()?;
            let offset = lossless_sys::xdp::ktime_ns()
                .saturating_sub(u64::try_from(core_now.since_epoch().as_nanos()).unwrap_or(0));
            counts.storm = Some(priority_status(&st, offset));
        }
        Some(counts)
    }
}

/// Whether `ifname`'s driver is veth (a failed question counts as not).
fn is_veth(ifname: &str) -> bool {
    lossless_sys::ethtool::EthtoolStats::open()
        .and_then(|e| e.driver(ifname))
        .is_ok_and(|d| d == "veth")
}
