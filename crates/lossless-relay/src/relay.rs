//! A PE's relay: both directions of draft-he-rtgwg-wan-pfc-00 section 3.2 on
//! one DC-facing and one WAN-facing port.
//!
//! - A frame on [`Port::Dc`] is the egress direction: legal only if it is a
//!   well-formed PFC frame to 01-80-C2-00-00-01 from the gateway's port or
//!   system MAC ([`crate::pfc`]); then the storm ceiling ([`crate::storm`])
//!   decides which priorities go, and the frame is encapsulated and sent on
//!   [`Port::Wan`], marked (DSCP / PCP / MPLS TC, socket priority).
//! - A frame on [`Port::Wan`] is the ingress direction: it must be our
//!   tunnel, addressed to us ([`crate::tunnel`]), and carry a well-formed PFC
//!   frame to 01-80-C2-00-00-01; its source MAC is rewritten to our DC-facing
//!   port MAC and it is sent on [`Port::Dc`], class-enable vector and pause
//!   times untouched.
//!
//! Driven sans-IO: `handle_frame(now, port, bytes)` then drain
//! `poll_transmit()`; `poll_timeout()` / `handle_timeout(now)` for the storm
//! ceiling's deferred frames. [`Relay::process`] does the same for a batch
//! straight into a caller's [`TxBatch`].

use lossless_time::Instant;
use lossless_wire::{DecodeError, EthernetFrame};

use crate::batch::{Port, Transmit, TxBatch};
use crate::buffer::GatewayBuffer;
use crate::config::{ConfigError, RelayConfig, TunnelConfig};
use crate::delay::WanDelay;
use crate::pfc::{check_pfc, restrict, AllowedSources, PfcFrame, MAX_PFC_FRAME_LEN};
use crate::status::{EgressCounters, IngressCounters, RelayStatus, StormStatus};
use crate::storm::{Flush, StormGuard};
use crate::tunnel::{Decapsulator, Encapsulator};
use crate::DropReason;

/// What became of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Egress: encapsulated and queued for the WAN. `held` lists the
    /// priorities the storm ceiling cleared from it (0: sent as received).
    Relayed { held: u8 },
    /// Egress: legal, but every priority it carries was held back.
    Suppressed,
    /// Ingress: queued for the DC gateway with our source MAC.
    Delivered,
    /// Ingress: a WAN delay measurement frame from the far PE, taken by our
    /// measurement session (never delivered to the DC).
    Measured,
    /// Refused.
    Dropped(DropReason),
}

/// The last legal frame the ceiling held back: what a deferred frame is made
/// from.
#[derive(Debug, Clone, Copy)]
struct Template {
    bytes: [u8; MAX_PFC_FRAME_LEN],
    len: usize,
    pfc: PfcFrame,
}

/// A PE relay. See the module docs.
#[derive(Debug, Clone)]
pub struct Relay {
    cfg: RelayConfig,
    gateway: AllowedSources,
    encap: Encapsulator,
    encap_header_len: usize,
    encap_ip_offset: Option<usize>,
    decap: Decapsulator,
    storm: Option<StormGuard>,
    template: Option<Template>,
    egress: EgressCounters,
    ingress: IngressCounters,
    last_malformed: Option<DecodeError>,
    gateway_buffer: Option<GatewayBuffer>,
    delay: Option<WanDelay>,
    queue: TxBatch,
    /// Next entry of `queue` for `poll_transmit`.
    read: usize,
}

impl Relay {
    /// A relay for `cfg`, its storm buckets full at `now`.
    pub fn new(cfg: RelayConfig, now: Instant) -> Result<Relay, ConfigError> {
        cfg.validate()?;
        let encap = Encapsulator::new(&cfg.tunnel, &cfg.wan, &cfg.marking)?;
        let decap = Decapsulator::new(&cfg.tunnel, &cfg.wan);
        let storm = cfg.storm.guard(now)?;
        let gateway_buffer = match &cfg.buffer {
            Some(b) if !b.is_measured() => Some(b.evaluate()?),
            _ => None,
        };
        let delay = cfg
            .measure
            .as_ref()
            .map(|m| WanDelay::new(m, cfg.dc.port_mac, now))
            .transpose()?;
        Ok(Relay {
            gateway: AllowedSources {
                port_mac: cfg.dc.gateway_port_mac,
                system_mac: cfg.dc.gateway_system_mac,
            },
            encap_header_len: encap.header_len(),
            encap_ip_offset: encap.ip_offset(),
            encap,
            decap,
            storm,
            template: None,
            egress: EgressCounters::default(),
            ingress: IngressCounters::default(),
            last_malformed: None,
            gateway_buffer,
            delay,
            queue: TxBatch::with_capacity(16, 128),
            read: 0,
            cfg,
        })
    }

    /// Replaces the configuration, keeping the counters. The storm state is
    /// kept when the ceiling's settings are unchanged and restarts (buckets
    /// full) otherwise.
    pub fn reconfigure(&mut self, cfg: RelayConfig, now: Instant) -> Result<(), ConfigError> {
        let mut next = Relay::new(cfg, now)?;
        if next.cfg.storm == self.cfg.storm {
            next.storm = self.storm.take();
            next.template = self.template.take();
        }
        if next.cfg.measure == self.cfg.measure {
            next.delay = self.delay.take();
        }
        next.egress = self.egress;
        next.ingress = self.ingress;
        next.last_malformed = self.last_malformed.take();
        next.queue = std::mem::take(&mut self.queue);
        next.read = self.read;
        *self = next;
        Ok(())
    }

    pub fn config(&self) -> &RelayConfig {
        &self.cfg
    }

    pub fn egress_counters(&self) -> &EgressCounters {
        &self.egress
    }

    pub fn ingress_counters(&self) -> &IngressCounters {
        &self.ingress
    }

    pub fn storm(&self) -> Option<&StormGuard> {
        self.storm.as_ref()
    }

    /// The decode error of the last malformed tunnel frame from the WAN.
    pub fn last_malformed(&self) -> Option<&DecodeError> {
        self.last_malformed.as_ref()
    }

    /// Handles one frame received on `port` at `now`; what it yields is
    /// queued for [`Relay::poll_transmit`].
    pub fn handle_frame(&mut self, now: Instant, port: Port, frame: &[u8]) -> Verdict {
        let mut queue = self.take_queue();
        let v = self.one(now, now, port, frame, &mut queue);
        self.queue = queue;
        v
    }

    /// Sends the storm ceiling's deferred frames that are due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut queue = self.take_queue();
        self.flush_due(now, &mut queue);
        self.queue = queue;
    }

    /// The next frame to send, in order. The frame borrows the relay until
    /// the next call.
    pub fn poll_transmit(&mut self) -> Option<Transmit<'_>> {
        let i = self.read;
        if i >= self.queue.len() {
            return None;
        }
        self.read += 1;
        self.queue.get(i)
    }

    /// When [`Relay::handle_timeout`] has work next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let storm = self.storm.as_ref().and_then(StormGuard::poll_timeout);
        let delay = self.delay.as_ref().and_then(WanDelay::poll_timeout);
        match (storm, delay) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The WAN delay measurement, when `[relay.measure]` is on.
    pub fn wan_delay(&self) -> Option<&WanDelay> {
        self.delay.as_ref()
    }

    /// Whether the runtime asks the kernel for the transmit time of the
    /// frames marked [`Transmit::stamp`] and hands each stamp to
    /// [`Relay::handle_tx_stamp`]: the WAN delay measurement then times its
    /// frames' departures by them. Off by default.
    pub fn set_kernel_tx_stamps(&mut self, on: bool) {
        if let Some(d) = self.delay.as_mut() {
            d.set_kernel_tx_stamps(on);
        }
    }

    /// A transmit stamp from the kernel: `frame` as it went to the WAN, sent
    /// at `sent`. What it yields (a measurement's follow-up) is appended to
    /// `out`. False when the frame is no measurement frame of ours.
    pub fn handle_tx_stamp(
        &mut self,
        now: Instant,
        frame: &[u8],
        sent: Instant,
        out: &mut TxBatch,
    ) -> bool {
        let Some(inner) = frame.get(self.encap_header_len..) else {
            return false;
        };
        let Some(d) = self.delay.as_mut() else {
            return false;
        };
        if !WanDelay::is_measurement(inner) {
            return false;
        }
        d.handle_tx_stamp(now, inner, sent);
        self.send_measurement(now, out);
        true
    }

    /// Handles `frames`, all received on `port` at `now`, appending what
    /// they yield to `out` (which is not cleared: clear it between batches).
    /// Deferred storm frames due by `now` come first. Returns the number of
    /// frames appended. Allocation-free once `out` has the capacity.
    pub fn process<'f>(
        &mut self,
        now: Instant,
        port: Port,
        frames: impl IntoIterator<Item = &'f [u8]>,
        out: &mut TxBatch,
    ) -> usize {
        let frames = frames.into_iter().map(|f| (f, now));
        self.process_arrived(now, port, frames, out)
    }

    /// As [`Relay::process`], each frame with the time it arrived (the
    /// kernel's receive time): a WAN delay measurement is timed by it, not by
    /// when this batch is handled.
    pub fn process_arrived<'f>(
        &mut self,
        now: Instant,
        port: Port,
        frames: impl IntoIterator<Item = (&'f [u8], Instant)>,
        out: &mut TxBatch,
    ) -> usize {
        let before = out.len();
        self.flush_due(now, out);
        for (f, arrived) in frames {
            self.one(now, arrived, port, f, out);
        }
        out.len() - before
    }

    /// [`Relay::handle_timeout`] into a caller's batch.
    pub fn process_timeout(&mut self, now: Instant, out: &mut TxBatch) -> usize {
        let before = out.len();
        self.flush_due(now, out);
        out.len() - before
    }

    /// The queue, emptied first if everything in it has been polled.
    fn take_queue(&mut self) -> TxBatch {
        if self.read >= self.queue.len() {
            self.queue.clear();
            self.read = 0;
        }
        std::mem::take(&mut self.queue)
    }

    fn one(
        &mut self,
        now: Instant,
        arrived: Instant,
        port: Port,
        frame: &[u8],
        out: &mut TxBatch,
    ) -> Verdict {
        match port {
            Port::Dc => {
                self.flush_due(now, out);
                self.egress(now, frame, out)
            }
            Port::Wan => self.ingress(now, arrived, frame, out),
        }
    }

    fn egress(&mut self, now: Instant, frame: &[u8], out: &mut TxBatch) -> Verdict {
        self.egress.received += 1;
        let pfc = match self.gateway.check(frame) {
            Ok(p) => p,
            Err(r) => {
                self.egress.dropped.add(r);
                return Verdict::Dropped(r);
            }
        };
        let Some(storm) = self.storm.as_mut() else {
            self.encapsulate(frame, out);
            self.egress.relayed += 1;
            return Verdict::Relayed { held: 0 };
        };
        let d = storm.admit(now, pfc.class_enable, &pfc.quanta);
        let mut bytes = [0u8; MAX_PFC_FRAME_LEN];
        let len = frame.len();
        bytes[..len].copy_from_slice(frame);
        if d.suppress != 0 {
            self.template = Some(Template { bytes, len, pfc });
        }
        if d.relay == 0 {
            self.egress.suppressed += 1;
            return Verdict::Suppressed;
        }
        if d.relay != pfc.class_enable {
            restrict(&mut bytes[..len], &pfc, d.relay);
            self.egress.masked += 1;
        }
        self.encapsulate(&bytes[..len], out);
        self.egress.relayed += 1;
        Verdict::Relayed { held: d.suppress }
    }

    fn flush_due(&mut self, now: Instant, out: &mut TxBatch) {
        if let Some(d) = self.delay.as_mut() {
            d.handle_timeout(now);
            self.send_measurement(now, out);
        }
        loop {
            let Some(storm) = self.storm.as_mut() else {
                return;
            };
            let Some(Flush {
                class_enable,
                quanta,
            }) = storm.flush_due(now)
            else {
                return;
            };
            // A value is only pending after a suppression, which saved a
            // template; without one there is nothing to build from.
            let Some(t) = self.template else {
                continue;
            };
            let mut bytes = t.bytes;
            let frame = &mut bytes[..t.len];
            for (p, q) in quanta.iter().enumerate() {
                let at = t.pfc.time_offset(p);
                frame[at..at + 2].copy_from_slice(&q.to_be_bytes());
            }
            restrict(frame, &t.pfc, class_enable);
            self.encapsulate(&bytes[..t.len], out);
            self.egress.flushed += 1;
        }
    }

    fn encapsulate(&self, inner: &[u8], out: &mut TxBatch) {
        encapsulate(
            &self.encap,
            self.encap_header_len,
            self.encap_ip_offset,
            self.cfg.marking.socket_priority,
            inner,
            out,
        );
    }

    /// The measurement session's frames, into the tunnel.
    fn send_measurement(&mut self, now: Instant, out: &mut TxBatch) {
        let Some(d) = self.delay.as_mut() else {
            return;
        };
        let (encap, len, ip, prio) = (
            &self.encap,
            self.encap_header_len,
            self.encap_ip_offset,
            self.cfg.marking.socket_priority,
        );
        let mut sent = 0;
        d.drain(now, |inner, stamp| {
            encapsulate(encap, len, ip, prio, inner, out);
            if stamp {
                out.stamp_last();
            }
            sent += 1;
        });
        self.egress.measurement += sent;
    }

    fn ingress(
        &mut self,
        now: Instant,
        arrived: Instant,
        frame: &[u8],
        out: &mut TxBatch,
    ) -> Verdict {
        self.ingress.received += 1;
        let inner = match self.decap.decapsulate(frame) {
            Ok(inner) => inner,
            Err(refusal) => {
                if refusal.error.is_some() && refusal.reason == DropReason::MalformedTunnel {
                    self.last_malformed = refusal.error;
                }
                self.ingress.dropped.add(refusal.reason);
                return Verdict::Dropped(refusal.reason);
            }
        };
        if WanDelay::is_measurement(inner) {
            if let Some(d) = self.delay.as_mut() {
                d.handle(now, arrived, inner);
                self.ingress.measurement += 1;
                self.send_measurement(now, out);
                return Verdict::Measured;
            }
        }
        if let Err(r) = check_pfc(inner) {
            self.ingress.dropped.add(r);
            return Verdict::Dropped(r);
        }
        let mac = self.cfg.dc.port_mac;
        out.push_with(
            Port::Dc,
            self.cfg.marking.socket_priority,
            None,
            inner.len(),
            |buf| {
                buf.copy_from_slice(inner);
                // check_pfc passed: a whole header is there.
                if let Ok(mut f) = EthernetFrame::new_checked(buf) {
                    f.set_src(mac);
                }
            },
        );
        self.ingress.delivered += 1;
        Verdict::Delivered
    }

    /// Everything `lossless relay show` prints.
    pub fn status(&self) -> RelayStatus {
        let (remote, local) = match &self.cfg.tunnel {
            TunnelConfig::Srv6 {
                segments,
                local_sid,
                reduced,
                ..
            } => (
                format!(
                    "segments {}{}",
                    segments
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    if *reduced { " (reduced)" } else { "" }
                ),
                format!("End.DX2 SID {local_sid}"),
            ),
            TunnelConfig::Vxlan {
                source,
                destination,
                vni,
                port,
                ..
            } => (
                format!("VTEP {destination} port {port}"),
                format!("VTEP {source} VNI {vni}"),
            ),
            TunnelConfig::SrMpls {
                labels,
                local_label,
                ..
            } => (
                format!(
                    "labels {}",
                    labels
                        .iter()
                        .map(|l| l.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                format!("label {local_label}"),
            ),
        };
        RelayStatus {
            tunnel: self.cfg.tunnel.kind().to_string(),
            remote,
            local,
            egress: self.egress,
            ingress: self.ingress,
            storm: self.storm.as_ref().map(|s| StormStatus {
                max_per_second: s.rate(),
                burst: s.burst(),
                episode_gap_ns: u64::try_from(s.gap().as_nanos()).unwrap_or(u64::MAX),
                link_speed_bps: s.clock().speed_bps(),
                refresh_before_ns: u64::try_from(s.clock().refresh_before().as_nanos())
                    .unwrap_or(u64::MAX),
                suppressed: s.suppressed(),
                priorities: s.status().to_vec(),
            }),
            last_malformed: self.last_malformed.as_ref().map(|e| e.to_string()),
            gateway_buffer: self.gateway_buffer(),
            wan_delay: self.delay.as_ref().map(WanDelay::status),
        }
    }

    /// The draft's condition and the safe bound: for the configured delay,
    /// or the measured one once a round has completed.
    fn gateway_buffer(&self) -> Option<GatewayBuffer> {
        let b = self.cfg.buffer.as_ref()?;
        if !b.is_measured() {
            return self.gateway_buffer.clone();
        }
        let (one_way, rtt) = self.delay.as_ref()?.measured()?;
        b.evaluate_measured(one_way, rtt).ok()
    }
}

/// `inner` in the tunnel of `encap`, appended to `out` for the WAN.
fn encapsulate(
    encap: &Encapsulator,
    header_len: usize,
    ip_offset: Option<usize>,
    priority: u32,
    inner: &[u8],
    out: &mut TxBatch,
) {
    let t = encap.frame(inner);
    out.push_with(
        Port::Wan,
        priority,
        ip_offset,
        header_len + inner.len(),
        |buf| {
            t.emit(buf);
        },
    );
}
