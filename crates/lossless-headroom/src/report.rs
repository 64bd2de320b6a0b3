//! One calculation end to end (DV, WAN term, cells, thresholds) and its two renderings:
//! the serde form behind `--json` and the text behind `--explain`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::cells::{self, Alpha, BufferTooSmall, Headroom, Thresholds};
use crate::dv::{self, DelayValue, DvError, Inputs, Term};
use crate::source::Source;
use crate::units::{grouped, Bytes, Duration, Length, Rate};
use crate::wan::{self, Wan};

/// Everything `lossless headroom calc` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub inputs: Inputs,
    pub alpha: Alpha,
    pub cell: Bytes,
    pub wan: Option<Wan>,
    /// Per-priority buffer for xoff/xon.
    pub buffer: Option<Bytes>,
    /// xon below xoff; default two maximum frames.
    pub xon_gap: Option<Bytes>,
}

impl Request {
    pub fn new(inputs: Inputs) -> Self {
        Request {
            inputs,
            alpha: Alpha::ONE,
            cell: cells::DEFAULT_CELL,
            wan: None,
            buffer: None,
            xon_gap: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    #[error(transparent)]
    Dv(#[from] DvError),
    #[error(transparent)]
    Buffer(#[from] BufferTooSmall),
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MediumReport {
    pub name: &'static str,
    pub velocity_c: f64,
    pub ns_per_m: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WanReport {
    pub delay_ns: f64,
    pub rx_bps: u64,
    pub tx_bps: u64,
    /// (rx - tx) x delay.
    pub bit_times: u64,
    pub bytes: u64,
    pub source: Source,
}

/// The answer. Field names are the `--json` schema (docs/headroom.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Report {
    pub speed_bps: u64,
    pub cable_m: f64,
    pub medium: MediumReport,
    pub terms: [Term; 7],
    pub dv_bit_times: u64,
    pub dv_bytes: u64,
    /// DV as a time at the line rate.
    pub dv_ns: f64,
    pub wan: Option<WanReport>,
    /// DV plus the WAN term: what the headroom must absorb.
    pub total_bit_times: u64,
    pub headroom: Headroom,
    pub thresholds: Option<Thresholds>,
    #[serde(skip)]
    speed: Rate,
    #[serde(skip)]
    cable: Length,
    #[serde(skip)]
    wan_delay: Option<Duration>,
}

const WAN_PFC_DRAFT: Source = Source::document(
    "draft-he-rtgwg-wan-pfc-00 s3.2: reserved buffer > (receive rate - send rate) x PFC \
     forwarding delay",
);

/// Computes everything; allocation-free (the benchmark's `calc`).
pub fn calc(req: &Request) -> Result<Report, CalcError> {
    let i = &req.inputs;
    let dv: DelayValue = dv::delay_value(i)?;
    let wan = req.wan.map(|w| {
        let bits = wan::wan_bits(&w);
        WanReport {
            delay_ns: w.delay.0 as f64 / 1e3,
            rx_bps: w.rx_rate.0,
            tx_bps: w.tx_rate.0,
            bit_times: bits,
            bytes: bits.div_ceil(8),
            source: WAN_PFC_DRAFT,
        }
    });
    let total = dv.bit_times.saturating_add(wan.map_or(0, |w| w.bit_times));
    let headroom = cells::headroom(total, req.alpha, req.cell);
    let max_frame_bytes = dv.term(dv::TermKind::MaxFrame).each_bit_times.div_ceil(8);
    let thresholds = match req.buffer {
        Some(b) => Some(cells::thresholds(
            b,
            &headroom,
            req.xon_gap.unwrap_or(Bytes(2 * max_frame_bytes)),
        )?),
        None => None,
    };
    Ok(Report {
        speed_bps: i.speed.0,
        cable_m: i.cable.0 as f64 / 1e6,
        medium: MediumReport {
            name: i.medium.name,
            velocity_c: i.medium.velocity(),
            ns_per_m: i.medium.ns_per_m(),
        },
        terms: dv.terms,
        dv_bit_times: dv.bit_times,
        dv_bytes: dv.bytes(),
        dv_ns: dv.bit_times as f64 * 1e9 / i.speed.0 as f64,
        wan,
        total_bit_times: total,
        headroom,
        thresholds,
        speed: i.speed,
        cable: i.cable,
        wan_delay: req.wan.map(|w| w.delay),
    })
}

fn kb(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.1} KB", bytes as f64 / 1e3)
    }
}

impl Report {
    /// The terms nobody gave, with the values taken for them (`--explain` has their
    /// sources), or `None` when every term was given.
    pub fn assumed(&self) -> Option<String> {
        use crate::dv::TermKind;
        use crate::source::SourceKind;
        let parts: Vec<String> = self
            .terms
            .iter()
            .filter(|t| t.source.kind != SourceKind::User && t.kind != TermKind::CableDelay)
            .map(|t| match t.kind {
                // Frames count their 20 octets of preamble, SFD and IPG in bit times.
                TermKind::MaxFrame | TermKind::PfcFrame => {
                    format!("{} {} octets", t.symbol, grouped(t.each_bit_times / 8 - 20))
                }
                _ => format!("{} {} bit times", t.symbol, grouped(t.each_bit_times)),
            })
            .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "assumed (not given; --explain for the sources): {}",
                parts.join(", ")
            )
        })
    }

    /// The readable answer; with `explain`, every term, its value and its source.
    pub fn render_text(&self, explain: bool) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "link: {} over {} of {} ({:.3}c, {:.3} ns/m)",
            self.speed, self.cable, self.medium.name, self.medium.velocity_c, self.medium.ns_per_m
        );
        if !explain {
            if let Some(line) = self.assumed() {
                let _ = writeln!(o, "{line}");
            }
        }
        if explain {
            let _ = writeln!(
                o,
                "\nDV = 2*max_frame_size + PFC_frame_size + 2*cable_delay + ID_s1 + ID_s2 + HD_s2 \
                 + response_s2   (PFC Delay Value Constraint Model s3)\n"
            );
            let _ = writeln!(
                o,
                "  {:<16} {:>5} {:>12} {:>12}  source",
                "term", "count", "each (bt)", "bit times"
            );
            for t in &self.terms {
                let _ = writeln!(
                    o,
                    "  {:<16} {:>5} {:>12} {:>12}  {}",
                    t.symbol,
                    t.count,
                    grouped(t.each_bit_times),
                    grouped(t.bit_times),
                    t.source
                );
                let _ = writeln!(o, "  {:<16} {}", "", t.kind.what());
            }
            let _ = writeln!(
                o,
                "  {:<16} {:>5} {:>12} {:>12}",
                "DV",
                "",
                "",
                grouped(self.dv_bit_times)
            );
            let _ = writeln!(o);
        }
        let _ = writeln!(
            o,
            "DV: {} bit times = {} bytes (about {}), {:.2} us at {}",
            grouped(self.dv_bit_times),
            grouped(self.dv_bytes),
            kb(self.dv_bytes),
            self.dv_ns / 1000.0,
            self.speed
        );
        if let Some(w) = &self.wan {
            let delay = self.wan_delay.map(|d| d.to_string()).unwrap_or_default();
            let _ = writeln!(
                o,
                "WAN: ({} - {}) x {} = {} bit times = {} bytes (about {})",
                Rate(w.rx_bps),
                Rate(w.tx_bps),
                delay,
                grouped(w.bit_times),
                grouped(w.bytes),
                kb(w.bytes)
            );
            if explain {
                let _ = writeln!(o, "     {}", w.source);
                let _ = writeln!(
                    o,
                    "     the DV comes on top, so the reserved buffer is strictly greater"
                );
            }
            let _ = writeln!(
                o,
                "total: {} bit times = {} bytes",
                grouped(self.total_bit_times),
                grouped(self.total_bit_times.div_ceil(8))
            );
        }
        let h = &self.headroom;
        let _ = writeln!(
            o,
            "headroom: {} cells x {} B = {} bytes (alpha {})",
            grouped(h.cells),
            h.cell_bytes,
            grouped(h.bytes),
            h.alpha
        );
        if explain {
            let _ = writeln!(
                o,
                "     ceil(ceil(bits / 8) x alpha / cell); Adaptive PFC Headroom: DV x alpha, \
                 buffer in chunks"
            );
        }
        if let Some(t) = &self.thresholds {
            let _ = writeln!(
                o,
                "thresholds for a {} byte buffer: xoff {} bytes, xon {} bytes",
                grouped(t.buffer_bytes),
                grouped(t.xoff_bytes),
                grouped(t.xon_bytes)
            );
            if explain {
                let _ = writeln!(
                    o,
                    "     xoff = buffer - headroom (down to a cell); xon = xoff - {} bytes \
                     (assumption: two maximum frames unless --xon-gap)",
                    grouped(t.xon_gap_bytes)
                );
            }
        }
        o
    }
}
