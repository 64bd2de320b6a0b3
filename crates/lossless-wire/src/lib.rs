//! Wire formats of the lossless control plane: bytes to typed values and back.
//!
//! Every parser takes a byte slice and returns either a typed value or a
//! [`DecodeError`] naming the field, the offset (from the start of the slice
//! handed to the outermost parser) and the reason. No parser panics, whatever
//! the input; every emitter writes exactly `buffer_len()` bytes.
//!
//! Layout follows smoltcp's `wire`: a plain `Repr` per protocol unit with
//! `parse`, `buffer_len` and `emit`.

pub mod app_name;
pub mod cee;
mod codec;
pub mod error;
pub mod ethernet;
pub mod frame;
pub mod ieee;
pub mod lldp;
pub mod mac;
pub mod mac_control;
pub mod measure;
pub mod table;
pub mod tunnel;

pub use cee::{CeeDcbx, InvalidValue};
pub use error::{DecodeError, DecodeErrorKind, EmitError};
pub use ethernet::{EthernetFrame, EthernetHeader, VlanTag};
pub use frame::{emit_lldp_frame, emit_mac_control_frame, emit_measure_frame, Frame, Payload};
pub use ieee::IeeeDcbx;
pub use lldp::Lldpdu;
pub use mac::MacAddr;
pub use mac_control::MacControl;
pub use measure::Measure;
