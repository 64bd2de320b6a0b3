//! `lossless decode FILE [--json]`: every frame of a capture, decoded.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::error::CliError;

mod capture;
mod names;
mod record;
mod text;

pub const LONG_ABOUT: &str = "\
Decode every frame of a pcap or pcapng capture: LLDP (mandatory and optional TLVs), \
CEE DCBX (Control, PG, PFC, APP, with every flag), IEEE 802.1Qaz DCBX (ETS \
Configuration and Recommendation, PFC Configuration, Application Priority with DSCP \
and port entries named), PFC and 802.3x PAUSE frames. CIN DCBX (the pre-CEE layout) \
is reported as such; other organizationally specific TLVs and unknown TLVs are shown \
in hex; other Ethertypes are listed as \"other\".

A malformed frame is reported with the field, the offset (from the frame's first \
byte) and the reason, and decoding goes on with the next frame. A file that is not \
a capture, or is cut short, is an error (exit status 2) after the frames before the \
damage have been printed.";

pub const AFTER_HELP: &str = "\
Examples:
  lossless decode lldpad.pcapng
  lossless decode lldpad.pcapng --json | jq 'select(.type == \"lldp\") | .dcbx.control'
  lossless decode lldpad.pcapng --json | jq -c 'select(.ieee_dcbx.pfc) | [.src, .ieee_dcbx.pfc.enabled]'
  tcpdump -i eth0 -w dcbx.pcap ether proto 0x88cc or ether proto 0x8808
  lossless decode dcbx.pcap

The JSON fields are documented in docs/decode.md.";

/// Arguments of `lossless decode`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Capture to decode, pcap or pcapng (told apart by their magic numbers).
    ///
    /// Example: lossless decode /tmp/lldp.pcapng
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// One JSON object per frame, one per line (JSON Lines), instead of text.
    ///
    /// Example: lossless decode f.pcap --json | jq .dcbx.pfc.priorities
    #[arg(short = 'j', long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let name = args.file.display().to_string();
    let data = std::fs::read(&args.file)
        .map_err(|e| CliError::input(&name, format!("cannot read: {e}")))?;
    let frames = capture::Capture::open(&data).map_err(|e| CliError::input(&name, e))?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = decode_all(frames, args.json, &mut out);
    let flushed = out.flush();
    match result {
        Ok(Ok(())) => {}
        Ok(Err((e, decoded))) => {
            return Err(CliError::input(
                &name,
                format!("{e} ({decoded} frame(s) before it decoded)"),
            ))
        }
        Err(e) => return Err(crate::out::failed("writing output", e)),
    }
    flushed.map_err(|e| crate::out::failed("writing output", e))
}

/// Writes every frame; the outer error is a failed write, the inner one the
/// capture breaking off after some number of frames.
fn decode_all(
    frames: capture::Capture<'_>,
    json: bool,
    out: &mut impl Write,
) -> io::Result<Result<(), (capture::CaptureError, usize)>> {
    let mut buf = String::new();
    for (i, packet) in frames.enumerate() {
        let packet = match packet {
            Ok(p) => p,
            Err(e) => return Ok(Err((e, i))),
        };
        let decoded = record::decode(i + 1, &packet);
        if json {
            let rec = record::Record::new(&decoded);
            serde_json::to_writer(&mut *out, &rec).map_err(io::Error::from)?;
            out.write_all(b"\n")?;
        } else {
            buf.clear();
            text::render(&decoded, &mut buf);
            out.write_all(buf.as_bytes())?;
        }
    }
    Ok(Ok(()))
}
