//! What the node says of a port's NIC: whether the negotiated configuration reaches it,
//! why a dcbnl operation failed, and what a CEE driver holds. Plain values; the node
//! core (`lossless-node`) decides them.

use serde::{Deserialize, Serialize};

/// Whether the negotiated configuration reaches the NIC.
///
/// In JSON, `mode` names the variant; a failed programming's [`HardwareError`] is
/// `error` (its message), `error_kind` and `error_code` (absent without an errno).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "HardwareWire", into = "HardwareWire")]
pub enum Hardware {
    /// `apply = "none"`: negotiate and report only; no dcbnl request is ever sent.
    ReportOnly,
    /// `apply = "dcbnl"`, the NIC's answer to the dcbnl probe not in yet:
    /// nothing is programmed until it is.
    Probing,
    /// `apply = "dcbnl"` and the NIC answers dcbnl: operational PFC/PG are programmed.
    Dcbnl {
        /// The last programming attempt failed: why (boxed: a port's state stays
        /// small).
        error: Option<Box<HardwareError>>,
        /// Successful programming rounds.
        applied: u64,
    },
    /// `apply = "dcbnl"` but the NIC has no dcbnl (veth, most virtual NICs):
    /// DCBX still runs; the result is reported, not programmed.
    Unsupported { reason: String },
}

/// [`Hardware`] as JSON: the error's parts are fields of their own beside `applied`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
enum HardwareWire {
    ReportOnly,
    Probing,
    Dcbnl {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_kind: Option<HardwareErrorKind>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_code: Option<String>,
        applied: u64,
    },
    Unsupported {
        reason: String,
    },
}

impl From<HardwareWire> for Hardware {
    fn from(w: HardwareWire) -> Self {
        match w {
            HardwareWire::ReportOnly => Hardware::ReportOnly,
            HardwareWire::Probing => Hardware::Probing,
            HardwareWire::Dcbnl {
                error,
                error_kind,
                error_code,
                applied,
            } => Hardware::Dcbnl {
                // A daemon before `error_kind` said only the message.
                error: error.map(|message| {
                    Box::new(HardwareError {
                        kind: error_kind.unwrap_or(HardwareErrorKind::Other),
                        message,
                        code: error_code,
                    })
                }),
                applied,
            },
            HardwareWire::Unsupported { reason } => Hardware::Unsupported { reason },
        }
    }
}

impl From<Hardware> for HardwareWire {
    fn from(h: Hardware) -> Self {
        match h {
            Hardware::ReportOnly => HardwareWire::ReportOnly,
            Hardware::Probing => HardwareWire::Probing,
            Hardware::Dcbnl { error, applied } => {
                let (error, error_kind, error_code) = match error {
                    Some(e) => (Some(e.message), Some(e.kind), e.code),
                    None => (None, None, None),
                };
                HardwareWire::Dcbnl {
                    error,
                    error_kind,
                    error_code,
                    applied,
                }
            }
            Hardware::Unsupported { reason } => HardwareWire::Unsupported { reason },
        }
    }
}

/// Why the NIC could not be programmed or read, by kind: what the core counts and
/// shows, and decides on (a driver without dcbnl is reported, not retried).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HardwareErrorKind {
    /// The driver has no dcbnl ops, or not this one (`EOPNOTSUPP`).
    NotSupported,
    /// No such interface (`ENODEV`).
    NoDevice,
    /// The driver or the kernel refused a value (`EINVAL`, a non-zero status).
    Refused,
    /// Not allowed (`EPERM`, `EACCES`).
    Permission,
    /// The device is busy (`EBUSY`, `EAGAIN`).
    Busy,
    /// No answer in time.
    Timeout,
    /// An answer that did not parse, or was not the answer to the request.
    Malformed,
    /// The socket itself failed, or any other error.
    Other,
}

impl HardwareErrorKind {
    pub const ALL: [HardwareErrorKind; 8] = [
        HardwareErrorKind::NotSupported,
        HardwareErrorKind::NoDevice,
        HardwareErrorKind::Refused,
        HardwareErrorKind::Permission,
        HardwareErrorKind::Busy,
        HardwareErrorKind::Timeout,
        HardwareErrorKind::Malformed,
        HardwareErrorKind::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HardwareErrorKind::NotSupported => "not_supported",
            HardwareErrorKind::NoDevice => "no_device",
            HardwareErrorKind::Refused => "refused",
            HardwareErrorKind::Permission => "permission",
            HardwareErrorKind::Busy => "busy",
            HardwareErrorKind::Timeout => "timeout",
            HardwareErrorKind::Malformed => "malformed",
            HardwareErrorKind::Other => "other",
        }
    }
}

/// A failed dcbnl operation: its kind and the runtime's full message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct HardwareError {
    pub kind: HardwareErrorKind,
    pub message: String,
    /// The driver's or the kernel's answer by its symbolic name (`EINVAL`,
    /// `EOPNOTSUPP`), when it gave an errno.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl HardwareError {
    pub fn new(kind: HardwareErrorKind, message: impl Into<String>) -> Self {
        HardwareError {
            kind,
            message: message.into(),
            code: None,
        }
    }

    /// The same, with the errno's symbolic name.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The answer in a word or two: the errno's name, else the kind.
    pub fn answer(&self) -> String {
        match &self.code {
            Some(c) => c.clone(),
            None => self.kind.name().replace('_', " "),
        }
    }
}

/// CEE DCBX's priority groups as programmed: the PGID of each priority, each PG's
/// share.
pub type CeePg = ([u8; 8], [u8; 8]);

/// What a CEE driver holds: PFC per priority and its state, the transmit priority
/// groups as CEE writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CeeNic {
    /// Bit p: PFC on priority p (`PFC_GCFG`).
    pub pfc: u8,
    /// PFC switched on (`PFC_GSTATE`).
    pub pfc_state: bool,
    /// The PGID of each priority (15: strict) and each PG's share; None where the
    /// driver does not report them (mlx5 has no receive PG getters, and dcbnl.c
    /// answers `PGTX_GCFG` only for a driver with both).
    pub pg: Option<CeePg>,
}

impl CeeNic {
    /// The priorities PFC runs on: none while PFC is off.
    pub fn pfc_running(&self) -> u8 {
        if self.pfc_state {
            self.pfc
        } else {
            0
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn a_failed_programming_keeps_error_as_its_message_and_adds_its_kind() {
        let h = Hardware::Dcbnl {
            error: Some(Box::new(
                HardwareError::new(HardwareErrorKind::Refused, "ETS: EINVAL").with_code("EINVAL"),
            )),
            applied: 2,
        };
        let v = serde_json::to_value(&h).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"mode": "dcbnl", "error": "ETS: EINVAL", "error_kind": "refused",
                "error_code": "EINVAL", "applied": 2})
        );
        assert_eq!(serde_json::from_value::<Hardware>(v).unwrap(), h);
        // An older daemon's: the message only.
        let old: Hardware = serde_json::from_value(
            serde_json::json!({"mode": "dcbnl", "error": "x", "applied": 0}),
        )
        .unwrap();
        assert_eq!(
            old,
            Hardware::Dcbnl {
                error: Some(Box::new(HardwareError::new(HardwareErrorKind::Other, "x"))),
                applied: 0
            }
        );
        let ok = Hardware::Dcbnl {
            error: None,
            applied: 1,
        };
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            serde_json::json!({"mode": "dcbnl", "applied": 1})
        );
    }
}
