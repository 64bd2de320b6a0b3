//! The Delay Value (PFC Delay Value Constraint Model, section 3): the bits a receiver must
//! still absorb after it decides to send PFC,
//!
//! ```text
//! DV = 2*(max_frame_size) + (PFC_frame_size) + 2*(cable_delay) + ID_s1 + ID_s2 + HD_s2
//! ```
//!
//! plus one term the model folds into ID and HD and that operators often have as a figure of
//! its own: the peer's PFC response time, in pause quanta (zero unless given). Every term
//! has a default from the model, from Adaptive PFC Headroom or from a stated assumption, and
//! every one can be overridden, so any worked example can be typed in.

use serde::Serialize;

use crate::medium::Medium;
use crate::phy::{self, Phy};
use crate::source::Source;
use crate::units::{Delay, FrameSize, Length, Rate, UnitError};

/// PFC Delay Value Constraint Model, section 7: "802.3as Maximum frame 2000 Octets 16,160 bit
/// times".
pub const DEFAULT_MAX_FRAME: FrameSize = FrameSize::Octets(2000);
/// PFC Delay Value Constraint Model, section 7: "PFC Frame size 64 Octets or 672 bit times".
pub const DEFAULT_PFC_FRAME: FrameSize = FrameSize::Octets(64);
/// PFC Delay Value Constraint Model, table 2: MACsec SecY transmit delay, 17,024 bit times
/// (33.25 pause quanta).
pub const MACSEC_SECY_TX: u64 = 17_024;

/// The higher-layer delay as given: named components of the PFC Delay Value Constraint
/// Model's table 2 plus figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HigherLayer {
    /// MACsec SecY transmit delays (17,024 bit times each).
    pub macsec: u32,
    /// Memory/interface pipelining: one maximum frame each (PFC Delay Value
    /// Constraint Model, table 2).
    pub pipelining: u32,
    /// Figures given in bit times or pause quanta.
    pub bits: u64,
    /// Figures given as a time, converted at the line rate.
    pub time: crate::units::Duration,
}

const HD_EXPECTED: &str = "macsec, pipelining, none, bit times (6144), pause quanta (12q) or a \
                           time (1us), joined with +";

/// `macsec+pipelining`, `6144`, `12q`, `macsec+2us`, `none`.
pub fn parse_higher_layer(input: &str) -> Result<HigherLayer, UnitError> {
    let mut hd = HigherLayer::default();
    for part in input.split('+') {
        let p = part.trim();
        match p.to_ascii_lowercase().as_str() {
            "macsec" => hd.macsec += 1,
            "pipelining" | "pipeline" => hd.pipelining += 1,
            "none" => {}
            _ => match crate::units::parse_delay(p) {
                Ok(Delay::Bits(b)) => hd.bits = hd.bits.saturating_add(b),
                Ok(Delay::Time(t)) => {
                    hd.time = crate::units::Duration(hd.time.0.saturating_add(t.0))
                }
                Err(e) => {
                    return Err(UnitError {
                        input: input.to_owned(),
                        reason: format!("{:?}: {}", p, e.reason),
                        expected: HD_EXPECTED,
                    })
                }
            },
        }
    }
    Ok(hd)
}

/// Everything the DV depends on. `None` means "the default", which the term's source says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inputs {
    pub speed: Rate,
    pub cable: Length,
    pub medium: Medium,
    pub max_frame: Option<FrameSize>,
    pub pfc_frame: Option<FrameSize>,
    /// A 10G PHY from the PFC Delay Value Constraint Model's table 1 instead of the worst case.
    pub phy: Option<&'static Phy>,
    /// ID per station (both stations unless `peer_interface_delay` is given).
    pub interface_delay: Option<Delay>,
    pub peer_interface_delay: Option<Delay>,
    pub higher_layer_delay: Option<HigherLayer>,
    /// The peer's PFC response time on top of ID_s2 + HD_s2.
    pub response_time: Option<Delay>,
}

impl Inputs {
    /// The PFC Delay Value Constraint Model's defaults for everything but the link itself.
    pub fn new(speed: Rate, cable: Length, medium: Medium) -> Self {
        Inputs {
            speed,
            cable,
            medium,
            max_frame: None,
            pfc_frame: None,
            phy: None,
            interface_delay: None,
            peer_interface_delay: None,
            higher_layer_delay: None,
            response_time: None,
        }
    }
}

/// Which term of the equation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TermKind {
    MaxFrame,
    PfcFrame,
    CableDelay,
    InterfaceDelayLocal,
    InterfaceDelayPeer,
    HigherLayerDelay,
    PeerResponse,
}

impl TermKind {
    /// The name the PFC Delay Value Constraint Model gives the term.
    pub fn symbol(self) -> &'static str {
        match self {
            TermKind::MaxFrame => "max_frame_size",
            TermKind::PfcFrame => "PFC_frame_size",
            TermKind::CableDelay => "cable_delay",
            TermKind::InterfaceDelayLocal => "ID_s1",
            TermKind::InterfaceDelayPeer => "ID_s2",
            TermKind::HigherLayerDelay => "HD_s2",
            TermKind::PeerResponse => "response_s2",
        }
    }

    pub fn what(self) -> &'static str {
        match self {
            TermKind::MaxFrame => {
                "maximum frame: one the sender had just committed to before the PFC frame, \
                 one the peer had committed to when the PFC frame arrived"
            }
            TermKind::PfcFrame => "the PFC frame itself",
            TermKind::CableDelay => "bits in flight on the cable, each way",
            TermKind::InterfaceDelayLocal => {
                "interface delay of this station (MAC Control, MAC/RS, PCS, PMA, PMD; tx + rx)"
            }
            TermKind::InterfaceDelayPeer => "interface delay of the peer station (tx + rx)",
            TermKind::HigherLayerDelay => {
                "higher-layer delay at the peer (MACsec SecY, buffering and pipelining)"
            }
            TermKind::PeerResponse => {
                "extra PFC response time of the peer, beyond its ID and HD (pause quanta)"
            }
        }
    }
}

/// One term: `count x each` bit times, and where `each` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Term {
    #[serde(rename = "name")]
    pub kind: TermKind,
    pub symbol: &'static str,
    pub count: u64,
    pub each_bit_times: u64,
    pub bit_times: u64,
    pub source: Source,
}

impl Term {
    fn new(kind: TermKind, count: u64, each: u64, source: Source) -> Self {
        Term {
            kind,
            symbol: kind.symbol(),
            count,
            each_bit_times: each,
            bit_times: count.saturating_mul(each),
            source,
        }
    }
}

/// The Delay Value and its terms, in the order of the PFC Delay Value Constraint Model's
/// equation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DelayValue {
    pub terms: [Term; 7],
    pub bit_times: u64,
}

impl DelayValue {
    /// Bytes, rounded up.
    pub fn bytes(&self) -> u64 {
        self.bit_times.div_ceil(8)
    }

    pub fn term(&self, kind: TermKind) -> &Term {
        // The array is built in TermKind order; find keeps that an implementation detail.
        self.terms
            .iter()
            .find(|t| t.kind == kind)
            .unwrap_or(&self.terms[0])
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DvError {
    #[error("the line rate is zero")]
    ZeroSpeed,
    #[error(
        "no interface-delay figure is known for {0}; known speeds: 1G, 2.5G, 5G, 10G, 25G, \
         40G, 50G, 100G, 200G, 400G, 800G; or give --interface-delay"
    )]
    UnknownSpeed(Rate),
    #[error(
        "--phy {phy} is a 10G PHY (PFC Delay Value Constraint Model, table 1) but the speed \
         is {speed}"
    )]
    PhyNotAtThisSpeed { phy: &'static str, speed: Rate },
}

const USER: Source = Source::user();

fn delay_bits(d: Delay, rate: Rate) -> u64 {
    match d {
        Delay::Bits(b) => b,
        Delay::Time(t) => t.bit_times(rate),
    }
}

/// Computes the Delay Value. Allocation-free and clock-free: a switch recomputes every port.
pub fn delay_value(i: &Inputs) -> Result<DelayValue, DvError> {
    if i.speed.0 == 0 {
        return Err(DvError::ZeroSpeed);
    }
    let profile = phy::profile(i.speed);

    let (max_frame, max_src) = match i.max_frame {
        Some(f) => (f.bit_times(), USER),
        None => (
            DEFAULT_MAX_FRAME.bit_times(),
            Source::document(
                "PFC Delay Value Constraint Model s7: 802.3as maximum frame, 2000 octets + 20 \
                 preamble/SFD/IPG",
            ),
        ),
    };
    let (pfc_frame, pfc_src) = match i.pfc_frame {
        Some(f) => (f.bit_times(), USER),
        None => (
            DEFAULT_PFC_FRAME.bit_times(),
            Source::document(
                "PFC Delay Value Constraint Model s7: PFC frame, 64 octets + 20 preamble/SFD/IPG",
            ),
        ),
    };
    let cable = i.medium.cable_bits(i.cable, i.speed);

    let (id_local, id_src) = match (i.interface_delay, i.phy) {
        (Some(d), _) => (delay_bits(d, i.speed), USER),
        (None, Some(p)) => {
            if i.speed.0 != 10_000_000_000 {
                return Err(DvError::PhyNotAtThisSpeed {
                    phy: p.name,
                    speed: i.speed,
                });
            }
            (
                p.bit_times(),
                Source::table(
                    "PFC Delay Value Constraint Model, table 1, composed for the --phy given",
                ),
            )
        }
        (None, None) => match profile {
            Some(p) => (p.interface_delay, p.source),
            None => return Err(DvError::UnknownSpeed(i.speed)),
        },
    };
    let (id_peer, id_peer_src) = match i.peer_interface_delay {
        Some(d) => (delay_bits(d, i.speed), USER),
        None => (
            id_local,
            if id_src.kind == crate::source::SourceKind::User {
                Source::user()
            } else {
                id_src
            },
        ),
    };

    let (hd, hd_src) = match i.higher_layer_delay {
        Some(h) => {
            let bits = (h.macsec as u64)
                .saturating_mul(MACSEC_SECY_TX)
                .saturating_add((h.pipelining as u64).saturating_mul(max_frame))
                .saturating_add(h.bits)
                .saturating_add(h.time.bit_times(i.speed));
            (bits, USER)
        }
        None if profile.is_some_and(|p| p.includes_higher_layer) && i.interface_delay.is_none() => {
            (
                0,
                Source::document(
                    "Adaptive PFC Headroom, delay table: already included in the 100G ID + HD \
                     figure",
                ),
            )
        }
        None => (
            max_frame,
            Source::table(
                "PFC Delay Value Constraint Model, table 2: memory/interface pipelining, one \
                 maximum frame; no MACsec (add --higher-layer-delay macsec+pipelining)",
            ),
        ),
    };
    let (resp, resp_src) = match i.response_time {
        Some(d) => (delay_bits(d, i.speed), USER),
        None => (
            0,
            Source::document(
                "PFC Delay Value Constraint Model s3: the peer's response is ID_s2 + HD_s2 already",
            ),
        ),
    };

    let terms = [
        Term::new(TermKind::MaxFrame, 2, max_frame, max_src),
        Term::new(TermKind::PfcFrame, 1, pfc_frame, pfc_src),
        Term::new(TermKind::CableDelay, 2, cable, i.medium.source),
        Term::new(TermKind::InterfaceDelayLocal, 1, id_local, id_src),
        Term::new(TermKind::InterfaceDelayPeer, 1, id_peer, id_peer_src),
        Term::new(TermKind::HigherLayerDelay, 1, hd, hd_src),
        Term::new(TermKind::PeerResponse, 1, resp, resp_src),
    ];
    let bit_times = terms
        .iter()
        .fold(0u64, |acc, t| acc.saturating_add(t.bit_times));
    Ok(DelayValue { terms, bit_times })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::{parse_medium, CAT6};
    use crate::units::{parse_length, parse_rate};

    fn ten_g_100m_cat6() -> Inputs {
        Inputs::new(
            Rate(10_000_000_000),
            Length(100_000_000),
            parse_medium("cat6").expect("cat6"),
        )
    }

    /// The PFC Delay Value Constraint Model's example (section 7), every figure typed in:
    /// DV = 2*(16,160) + (672) + 2*(5556) + 2*(37,888) + (33,184) = 153,064 BT, ~19.1 KB.
    #[test]
    fn dv_model_worked_example_typed_in() {
        let mut i = ten_g_100m_cat6();
        i.max_frame = Some(FrameSize::Octets(2000));
        i.pfc_frame = Some(FrameSize::Octets(64));
        i.interface_delay = Some(Delay::Bits(37_888));
        i.higher_layer_delay = Some(HigherLayer {
            bits: 33_184,
            ..HigherLayer::default()
        });
        let dv = delay_value(&i).expect("dv");
        assert_eq!(dv.term(TermKind::MaxFrame).bit_times, 2 * 16_160);
        assert_eq!(dv.term(TermKind::PfcFrame).bit_times, 672);
        assert_eq!(dv.term(TermKind::CableDelay).each_bit_times, 5_556);
        assert_eq!(dv.bit_times, 153_064);
        // "roughly 19.1K Bytes"
        assert_eq!(dv.bytes(), 19_133);
    }

    /// The same example from the defaults and the named table 2 components: HD is MACsec
    /// SecY transmit (17,024) + pipelining (16,160) = 33,184.
    #[test]
    fn dv_model_worked_example_from_the_tables() {
        let mut i = ten_g_100m_cat6();
        i.higher_layer_delay = Some(parse_higher_layer("macsec+pipelining").expect("hd"));
        let dv = delay_value(&i).expect("dv");
        assert_eq!(dv.term(TermKind::HigherLayerDelay).bit_times, 33_184);
        assert_eq!(dv.term(TermKind::InterfaceDelayLocal).bit_times, 37_888);
        assert_eq!(dv.bit_times, 153_064);
    }

    /// IEEE 802.1Q-2018 Annex N, as Adaptive PFC Headroom quotes it:
    /// DV = 2 x 16 160 + 672 + 2 x 5556 + (25 600 + 12 288) + (25 600 + 12 288) + 6144
    ///    = 126 024 bit times.
    #[test]
    fn annex_n_example() {
        let mut i = ten_g_100m_cat6();
        i.max_frame = Some(FrameSize::Bits(16_160));
        i.pfc_frame = Some(FrameSize::Bits(672));
        i.interface_delay = Some(Delay::Bits(25_600 + 12_288));
        i.peer_interface_delay = Some(Delay::Bits(25_600 + 12_288));
        i.higher_layer_delay = Some(parse_higher_layer("6144").expect("hd"));
        assert_eq!(delay_value(&i).map(|d| d.bit_times), Ok(126_024));
        // And from the 10G defaults with only HD given.
        let mut i = ten_g_100m_cat6();
        i.higher_layer_delay = Some(parse_higher_layer("12q").expect("hd"));
        assert_eq!(delay_value(&i).map(|d| d.bit_times), Ok(126_024));
    }

    #[test]
    fn defaults_name_their_sources() {
        let dv = delay_value(&ten_g_100m_cat6()).expect("dv");
        // 2*16,160 + 672 + 2*5,556 + 2*37,888 + 16,160 (pipelining) + 0
        assert_eq!(dv.bit_times, 32_320 + 672 + 11_112 + 75_776 + 16_160);
        assert!(dv.terms.iter().all(|t| !t.source.reference.is_empty()));
    }

    #[test]
    fn phy_choice_and_errors() {
        let mut i = ten_g_100m_cat6();
        i.phy = phy::find_phy("10gbase-r");
        let dv = delay_value(&i).expect("dv");
        assert_eq!(dv.term(TermKind::InterfaceDelayPeer).bit_times, 12_288);
        i.speed = parse_rate("25G").expect("rate");
        assert!(matches!(
            delay_value(&i),
            Err(DvError::PhyNotAtThisSpeed { .. })
        ));
        let odd = Inputs::new(
            parse_rate("20G").expect("rate"),
            parse_length("1m").expect("len"),
            CAT6,
        );
        assert!(matches!(delay_value(&odd), Err(DvError::UnknownSpeed(_))));
        let mut odd = odd;
        odd.interface_delay = Some(Delay::Bits(1000));
        assert!(delay_value(&odd).is_ok());
    }

    #[test]
    fn time_and_quanta_inputs_convert_at_the_line_rate() {
        let mut i = ten_g_100m_cat6();
        i.interface_delay = Some(Delay::Time(crate::units::Duration(1_000_000))); // 1 us
        i.response_time = Some(Delay::Bits(394 * 512));
        let dv = delay_value(&i).expect("dv");
        assert_eq!(dv.term(TermKind::InterfaceDelayLocal).bit_times, 10_000);
        assert_eq!(dv.term(TermKind::PeerResponse).bit_times, 201_728);
    }
}
