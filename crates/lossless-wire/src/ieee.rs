//! IEEE 802.1Qaz DCBX (IEEE 802.1Q-2018 Annex D.2.9 to D.2.12): four LLDP
//! organizationally specific TLVs, OUI 00-80-C2, that carry a port's ETS,
//! PFC and application priority configuration.
//!
//! ```text
//! ETS Configuration   subtype 9,  length 25: Willing:1 CBS:1 rsvd:3 MaxTCs:3 (0 = 8)
//!                     | priority->TC (4 bytes, 4 bits each, priority 0 high nibble)
//!                     | TC bandwidth % (8 bytes) | TSA per TC (8 bytes)
//! ETS Recommendation  subtype 10, length 25: reserved byte | the same three tables
//! PFC Configuration   subtype 11, length 6:  Willing:1 MBC:1 rsvd:2 PFCcap:4 | enable bitmap
//! Application Priority subtype 12, length 5+3n: reserved byte
//!                     | n x { priority:3 rsvd:2 selector:3 | protocol u16 }
//! ```
//!
//! Emission is byte-identical to lldpad's, which sends them in this order.
//! The values are plain: the DCBX core keeps them as admin, peer and
//! operational configuration, and `validate` holds local configuration to the
//! same rules the parser applies to a peer's. Reserved bits are sent as zero
//! and ignored on receipt, as the standard says of reserved fields, so they
//! are not kept; the one exception is bit 5 of the PFC flags, which announces
//! adaptive headroom measurement ([`PfcConfig::headroom_measurement`]).

use serde::Deserialize;

use crate::DecodeError;

mod app;
mod codec;
mod ets;
mod ets_text;
mod pfc;

pub use crate::cee::{InvalidValue, PriorityMap};
pub use app::{AppPriority, AppPriorityTable, Selector};
pub(crate) use codec::{is_dcbx_tlv, IeeeRx};
pub use ets::{EtsConfig, EtsRecommendation, EtsTable, Tsa};
pub use ets_text::{EtsTextError, EtsTextProblem};
pub use pfc::{PfcConfig, FLAG_HEADROOM_MEASUREMENT};

/// The IEEE 802.1 OUI.
pub const IEEE_8021_OUI: [u8; 3] = [0x00, 0x80, 0xc2];

/// IEEE 802.1 organizationally specific TLV subtypes of DCBX (IEEE 802.1Q-2018 Annex D).
pub mod subtype {
    pub const ETS_CONFIGURATION: u8 = 9;
    pub const ETS_RECOMMENDATION: u8 = 10;
    pub const PFC_CONFIGURATION: u8 = 11;
    pub const APPLICATION_PRIORITY: u8 = 12;
}

/// TLV lengths as the LLDP length field gives them (OUI and subtype included).
pub const ETS_TLV_LEN: usize = 25;
pub const PFC_TLV_LEN: usize = 6;
/// Application Priority: OUI, subtype, reserved byte, then 3 bytes per entry.
pub const APP_TLV_HEADER_LEN: usize = 5;
pub const APP_ENTRY_LEN: usize = 3;
/// The most entries one Application Priority TLV can carry: (511 - 5) / 3.
/// The capacity of [`AppPriorityTable`], so a table that validates always fits.
pub const MAX_APP_ENTRIES: usize = (crate::codec::MAX_TLV_LEN - APP_TLV_HEADER_LEN) / APP_ENTRY_LEN;
/// The entries an [`AppPriorityTable`] holds in place; a longer table moves to
/// the heap (so parsing an Application Priority TLV of more entries allocates
/// once). Enough for a DSCP entry per priority and a few protocols.
pub const INLINE_APP_ENTRIES: usize = 16;

/// The number of traffic classes and of priorities (IEEE 802.1Q-2018 8.6.6, Queuing frames).
pub const MAX_TCS: u8 = 8;

/// The IEEE DCBX TLVs of one LLDPDU.
///
/// Each TLV is `None` when absent, `Some(Err(..))` when malformed (wrong
/// length, a reserved value, a second instance), `Some(Ok(..))` otherwise. A
/// malformed TLV does not make the LLDPDU malformed: the DCBX core counts it
/// and treats that TLV as absent, the others stand.
///
/// A second instance of a TLV replaces the first with an error of kind
/// `Duplicate` (its offset is the second's, `first_offset` the first's).
/// lldpad keeps the first, logs "802.1Qaz Duplicate ... TLV" and ignores
/// the rest; we believe neither, because two different configurations from one
/// peer say nothing about which it runs, and the CEE layer does the same for
/// two DCBX TLVs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IeeeDcbx {
    pub ets_config: Option<Result<EtsConfig, DecodeError>>,
    pub ets_recommendation: Option<Result<EtsRecommendation, DecodeError>>,
    pub pfc: Option<Result<PfcConfig, DecodeError>>,
    pub app: Option<Result<AppPriorityTable, DecodeError>>,
}

impl IeeeDcbx {
    /// The TLVs to send; emit writes what it is given, so validate first.
    pub fn new(
        ets_config: Option<EtsConfig>,
        ets_recommendation: Option<EtsRecommendation>,
        pfc: Option<PfcConfig>,
        app: Option<AppPriorityTable>,
    ) -> IeeeDcbx {
        IeeeDcbx {
            ets_config: ets_config.map(Ok),
            ets_recommendation: ets_recommendation.map(Ok),
            pfc: pfc.map(Ok),
            app: app.map(Ok),
        }
    }

    /// No IEEE DCBX TLV at all, not even a malformed one.
    pub fn is_empty(&self) -> bool {
        self.ets_config.is_none()
            && self.ets_recommendation.is_none()
            && self.pfc.is_none()
            && self.app.is_none()
    }

    /// The errors held, in the order ETS-CFG, ETS-REC, PFC, APP.
    pub fn errors(&self) -> impl Iterator<Item = &DecodeError> {
        [
            self.ets_config.as_ref().and_then(|r| r.as_ref().err()),
            self.ets_recommendation
                .as_ref()
                .and_then(|r| r.as_ref().err()),
            self.pfc.as_ref().and_then(|r| r.as_ref().err()),
            self.app.as_ref().and_then(|r| r.as_ref().err()),
        ]
        .into_iter()
        .flatten()
    }

    /// What `parse(emit(self))` gives: emission skips malformed TLVs.
    pub fn normalized(&self) -> IeeeDcbx {
        IeeeDcbx {
            ets_config: self.ets_config.clone().filter(Result::is_ok),
            ets_recommendation: self.ets_recommendation.clone().filter(Result::is_ok),
            pfc: self.pfc.clone().filter(Result::is_ok),
            app: self.app.clone().filter(Result::is_ok),
        }
    }
}

/// Serde helper shared by the open code-point newtypes: a name or a number.
#[derive(Deserialize)]
#[serde(untagged)]
enum NameOrNumber {
    Name(String),
    Number(u8),
}

/// Serialises a code point by name when it has one, else as its number.
fn serialize_code<S: serde::Serializer>(
    name: Option<&str>,
    value: u8,
    s: S,
) -> Result<S::Ok, S::Error> {
    match name {
        Some(n) => s.serialize_str(n),
        None => s.serialize_u8(value),
    }
}
