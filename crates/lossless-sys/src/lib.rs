//! Linux system interfaces for the lossless daemon. Everything `unsafe` in the
//! workspace lives here.
