//! The relay's XDP fast path, set up from a `[relay]` section: the program's
//! configuration built from the sans-IO core's own tunnel header (so the
//! bytes are the core's), and the counters it keeps, folded into the core's
//! status for `relay show` and `/metrics`.

use lossless_relay::tunnel::Encapsulator;
use lossless_relay::{DropReason, RelayConfig, TunnelConfig};
use lossless_sys::xdp::{counter, Kind, RelayCfg, HDR_MAX};

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

/// The storm ceiling's state for the program's map, started at `now_ns`
/// on the program's clock, as `Relay::new` starts its `StormGuard`; `None`
/// without a ceiling.
pub fn storm_state(
    cfg: &RelayConfig,
    now_ns: u64,
) -> Result<Option<lossless_sys::xdp::StormState>, String> {
    let Some(rate) = cfg.storm.max_per_second else {
        return Ok(None);
    };
    let burst = cfg.storm.burst.unwrap_or(rate);
    let gap = cfg.storm.gap().map_err(|e| e.to_string())?;
    let clock = cfg.storm.clock().map_err(|e| e.to_string())?;
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Ok(Some(lossless_sys::xdp::StormState::new(
        now_ns,
        rate,
        burst,
        ns(gap),
        clock.speed_bps(),
        ns(clock.refresh_before()),
    )))
}

/// The XDP program's counts in the core's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XdpCounts {
    pub egress_received: u64,
    pub egress_relayed: u64,
    pub egress_passed: u64,
    pub egress_dropped: lossless_relay::DropCounts,
    pub ingress_received: u64,
    pub ingress_delivered: u64,
    pub ingress_passed: u64,
    pub ingress_dropped: lossless_relay::DropCounts,
    pub redirect_failed: u64,
}

impl XdpCounts {
    pub fn from_counters(c: &[u64; counter::COUNT]) -> XdpCounts {
        let mut x = XdpCounts {
            egress_received: c[counter::EGRESS_RECEIVED],
            egress_relayed: c[counter::EGRESS_RELAYED],
            egress_passed: c[counter::EGRESS_PASSED],
            ingress_received: c[counter::INGRESS_RECEIVED],
            ingress_delivered: c[counter::INGRESS_DELIVERED],
            ingress_passed: c[counter::INGRESS_PASSED],
            redirect_failed: c[counter::REDIRECT_FAILED],
            ..XdpCounts::default()
        };
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            x.egress_dropped.add_n(r, c[counter::EGRESS_DROP + i]);
            x.ingress_dropped.add_n(r, c[counter::INGRESS_DROP + i]);
        }
        x
    }
}

/// How often a failed attach is tried again, and the interfaces looked up.
const RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// The fast path of one PE thread: loaded and attached when it can be, with
/// what `relay show` says about it.
pub struct XdpPath {
    cfg: Result<RelayCfg, String>,
    off: Option<&'static str>,
    /// `auto`: not on veth.
    auto: bool,
    relay: Option<lossless_sys::xdp::XdpRelay>,
    attached: Option<(u32, u32)>,
    last_try: Option<std::time::Instant>,
    storm: bool,
}

impl XdpPath {
    pub fn new(cfg: &RelayConfig) -> XdpPath {
        XdpPath {
            cfg: xdp_config(cfg),
            off: (cfg.datapath.xdp == lossless_relay::XdpMode::Off)
                .then_some("off in the configuration ([relay.datapath] xdp = \"off\")"),
            auto: cfg.datapath.xdp == lossless_relay::XdpMode::Auto,
            relay: None,
            attached: None,
            last_try: None,
            storm: cfg.storm.max_per_second.is_some(),
        }
    }

    /// Loads and attaches the program on `dc` and `wan` if it is not
    /// running there yet (again after an interface came back with a new
    /// index), at most once a second; records the outcome in `show`.
    pub fn ensure(&mut self, dc: &str, wan: &str, show: &mut crate::relay::XdpShowSlot) {
        if let Some(why) = self.off {
            show.set_off(why);
            return;
        }
        if self.last_try.is_some_and(|t| t.elapsed() < RETRY) {
            return;
        }
        self.last_try = Some(std::time::Instant::now());
        let idx = (
            lossless_sys::if_nametoindex(dc),
            lossless_sys::if_nametoindex(wan),
        );
        let (Ok(d), Ok(w)) = idx else {
            self.relay = None;
            self.attached = None;
            show.set_off("waiting for both interfaces");
            return;
        };
        if self.attached == Some((d, w)) {
            return;
        }
        if self.auto {
            if let Some(veth) = [dc, wan].into_iter().find(|i| is_veth(i)) {
                self.relay = None;
                self.attached = None;
                show.set_off(&format!(
                    "not attached: {veth} is a veth, and a frame redirected into a veth is \
                     lost unless its receiving end runs an XDP program, which this host \
                     cannot see (xdp = \"on\" attaches anyway)"
                ));
                return;
            }
        }
        self.relay = None;
        match self.start(d, w) {
            Ok((relay, mode)) => {
                self.relay = Some(relay);
                self.attached = Some((d, w));
                let why = if self.storm {
                    "the storm ceiling is on: legal PFC from the DC goes to the core, which keeps \
                     its timers"
                } else {
                    ""
                };
                show.set_running(mode, why);
            }
            Err(why) => show.set_off(&why),
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

    /// The program's counts, when it runs.
    pub fn counts(&self) -> Option<XdpCounts> {
        let c = self.relay.as_ref()?.counters().ok()?;
        Some(XdpCounts::from_counters(&c))
    }
}

/// Whether `ifname`'s driver is veth (a failed question counts as not).
fn is_veth(ifname: &str) -> bool {
    lossless_sys::ethtool::EthtoolStats::open()
        .and_then(|e| e.driver(ifname))
        .is_ok_and(|d| d == "veth")
}
