//! Counters: the 802.1AB-2016 statistics (§9.2.6) and DCBX's own.

use lossless_wire::cee::CeeDcbx;
use lossless_wire::ieee::IeeeDcbx;
use std::collections::BTreeMap;

use lossless_wire::{DecodeError, DecodeErrorKind};
use serde::Serialize;

/// LLDP statistics, named as in the LLDP MIB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LldpStats {
    /// statsFramesOutTotal
    pub frames_out: u64,
    /// statsFramesInTotal
    pub frames_in: u64,
    /// statsFramesInErrorsTotal: LLDPDUs that failed validation.
    pub frames_in_errors: u64,
    /// statsFramesDiscardedTotal: errors plus information dropped for tooManyNeighbors.
    pub frames_discarded: u64,
    /// statsTLVsDiscardedTotal
    pub tlvs_discarded: u64,
    /// statsTLVsUnrecognizedTotal
    pub tlvs_unrecognized: u64,
    /// statsAgeoutsTotal
    pub ageouts: u64,
    /// Neighbours we never negotiated with that kept the port without a DCBX peer
    /// for `max_neighbor_hold` and were then set aside (not in the LLDP MIB).
    pub neighbor_hold_expiries: u64,
    /// lldpduLengthErrors: frames not sent because a TLV would not fit (never
    /// for a validated configuration).
    pub lldpdu_length_errors: u64,
}

/// DCBX counters, so that a misbehaving peer can be diagnosed from numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DcbxStats {
    /// CEE TLVs received and handed to the machines.
    pub tlvs_in: u64,
    /// CEE TLVs without a Control sub-TLV (ignored).
    pub missing_control: u64,
    /// Duplicate sub-TLVs received (each is a feature error).
    pub duplicates: u64,
    /// Feature sub-TLVs with bad contents (treated as absent).
    pub invalid_features: u64,
    /// Unknown sub-TLVs skipped.
    pub unknown_subtlvs: u64,
    /// CIN (subtype 1) TLVs seen: recognised, not negotiated.
    pub cin_tlvs: u64,
    /// Times the peer's DCBX went away (expiry, shutdown, withdrawal).
    pub peer_losses: u64,
    /// Times our SeqNo advanced.
    pub seq_changes: u64,
    /// IEEE 802.1Qaz TLVs.
    pub ieee: IeeeStats,
    /// Times the running DCBX version changed (`mode = "auto"`).
    pub mode_changes: u64,
}

/// IEEE 802.1Qaz TLVs received, and the malformed ones by TLV and by reason. A
/// malformed TLV is treated as absent: its contents never run (a willing port that
/// took the peer's configuration from it runs its own until a good one arrives).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct IeeeStats {
    /// LLDPDUs that carried at least one IEEE DCBX TLV.
    pub lldpdus_in: u64,
    pub invalid_ets_config: u64,
    pub invalid_ets_recommendation: u64,
    pub invalid_pfc: u64,
    pub invalid_app: u64,
    /// A length other than the TLV's (or not 5 + 3n for APP).
    pub bad_length: u64,
    /// A value the standard does not allow: a reserved TSA or selector, a DSCP above
    /// 63, bandwidths that do not sum to 100, a traffic class above 7.
    pub bad_value: u64,
    /// The same TLV twice in one LLDPDU.
    pub duplicate: u64,
    /// Any other malformation.
    pub other: u64,
}

impl IeeeStats {
    /// Counts a received LLDPDU's IEEE TLVs and what was wrong with them.
    pub fn count(&mut self, ieee: &IeeeDcbx) {
        if ieee.is_empty() {
            return;
        }
        self.lldpdus_in += 1;
        let bad = |slot: bool| u64::from(slot);
        self.invalid_ets_config += bad(matches!(ieee.ets_config, Some(Err(_))));
        self.invalid_ets_recommendation += bad(matches!(ieee.ets_recommendation, Some(Err(_))));
        self.invalid_pfc += bad(matches!(ieee.pfc, Some(Err(_))));
        self.invalid_app += bad(matches!(ieee.app, Some(Err(_))));
        for e in ieee.errors() {
            self.count_error(e);
        }
    }

    fn count_error(&mut self, e: &DecodeError) {
        match e.kind {
            DecodeErrorKind::BadLength { .. } | DecodeErrorKind::TooShort { .. } => {
                self.bad_length += 1
            }
            DecodeErrorKind::BadValue { .. } => self.bad_value += 1,
            DecodeErrorKind::Duplicate { .. } => self.duplicate += 1,
            _ => self.other += 1,
        }
    }

    /// Malformed TLVs in all.
    pub fn invalid(&self) -> u64 {
        self.invalid_ets_config
            + self.invalid_ets_recommendation
            + self.invalid_pfc
            + self.invalid_app
    }
}

impl DcbxStats {
    /// Counts a received CEE TLV and what was wrong with it.
    pub fn count_tlv(&mut self, cee: &CeeDcbx) {
        let d = &cee.duplicates;
        let invalid = |f: Option<bool>| u64::from(f == Some(true));
        self.tlvs_in += 1;
        self.missing_control += u64::from(cee.control.is_none());
        self.duplicates += [d.control, d.pg, d.pfc, d.app]
            .map(u64::from)
            .iter()
            .sum::<u64>();
        self.invalid_features += invalid(cee.pg.as_ref().map(Result::is_err))
            + invalid(cee.pfc.as_ref().map(Result::is_err))
            + invalid(cee.app.as_ref().map(Result::is_err));
        self.unknown_subtlvs += u64::from(cee.unknown_subtlvs);
    }
}

/// Malformed input by the field at fault (in the standard's terms: `lldp.ttl`,
/// `dcbx.pfc.length`, `ieee.app.protocol`) and what was wrong with it
/// ([`DecodeErrorKind::name`]): whole LLDPDUs discarded, and DCBX TLVs or sub-TLVs
/// treated as absent. Both labels come from a fixed set in the parser, so however
/// hostile the peer, the table stays small.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecodeErrors {
    counts: BTreeMap<(&'static str, &'static str), u64>,
}

impl DecodeErrors {
    pub fn count(&mut self, e: &DecodeError) {
        *self.counts.entry((e.field, e.kind.name())).or_default() += 1;
    }

    /// `(field, kind, count)`, by field then kind.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &'static str, u64)> + '_ {
        self.counts.iter().map(|(&(f, k), &n)| (f, k, n))
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}
