//! The parts of the `lossless` command line that are worth reaching from outside the
//! binary: the capture reader `decode` uses, for the fuzz target that feeds it any
//! bytes in any pieces.

pub mod capture;
