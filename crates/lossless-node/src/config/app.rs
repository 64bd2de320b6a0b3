//! The APP table as an operator writes it: one list for both DCBX versions. The rules
//! are plain values the control protocol carries too (`dcbx set`, `dcbx show`), so they
//! live in `lossless-proto`.

pub use lossless_proto::app::*;
