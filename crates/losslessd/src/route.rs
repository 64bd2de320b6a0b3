//! Routing what comes in: each input the socket tasks and the reading threads hand
//! the core task goes to the node, with the time it is judged on.

use lossless_node::node::Node;

use crate::clock::Clock;
use crate::input::Input;
use crate::io::Io;

/// Hands one input to the node.
pub(crate) fn handle_input(io: &mut Io, node: &mut Node, clock: &Clock, input: Input) {
    match input {
        Input::Frames(batch, _permit) => io.ports.deliver(node, clock.now(), &batch),
        Input::RxError(ifindex) => node.handle_io_error(ifindex, false),
        Input::Measure(ifindex, frame, rx) => {
            node.handle_measure_frame(clock.now(), ifindex, &frame, rx)
        }
        Input::MeasureTx(ifindex, frame, tx) => {
            node.handle_measure_tx_timestamp(clock.now(), ifindex, &frame, tx)
        }
        // Judged on when each was taken, not on when the loop got to it.
        Input::Pfc(reads) => {
            for r in reads {
                node.handle_pfc_counters(clock.at(r.taken), r.ifindex, r.result);
            }
        }
        Input::Roce(r) => node.handle_roce_host(clock.now(), r.ifindex, r.host, r.written),
    }
}
