//! Wire formats of the lossless control plane: bytes to typed values and back.
//!
//! Every parser takes a byte slice and returns either a typed value or a
//! [`DecodeError`] naming the field, the offset (from the start of the slice
//! handed to the outermost parser) and the reason. No parser panics, whatever
//! the input; every emitter writes exactly `buffer_len()` bytes.
//!
//! Layout follows smoltcp's `wire`: a plain `Repr` per protocol unit with
//! `parse`, `buffer_len` and `emit`.

pub mod cee;
pub mod error;
pub mod ethernet;
pub mod lldp;
pub mod mac;
pub mod mac_control;

pub use error::{DecodeError, DecodeErrorKind};
pub use mac::MacAddr;
