//! Counters: the 802.1AB-2016 statistics (§9.2.6) and DCBX's own.

use lossless_wire::cee::CeeDcbx;
use serde::Serialize;

/// LLDP statistics, named as in the LLDP MIB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
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
    /// lldpduLengthErrors: frames not sent because a TLV would not fit (never
    /// for a validated configuration).
    pub lldpdu_length_errors: u64,
}

/// DCBX counters, so that a misbehaving peer can be diagnosed from numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
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
