//! The runner's typed events and the [`Reporter`] trait that consumes them. The runner
//! emits; reporters (progress, the record collector) listen and never drive the run.

use crate::protocol::Hello;
use crate::record::{RunRecord, ScenarioRecord};

/// Something that happened during a run.
#[derive(Debug)]
pub enum Event<'a> {
    /// The handshake is done; `total` scenarios will run.
    RunStarted {
        /// The implementation's hello answer.
        environment: &'a Hello,
        /// How many scenarios will run.
        total: usize,
    },
    /// A scenario begins.
    ScenarioStarted {
        /// Its id.
        id: &'a str,
    },
    /// A scenario ended.
    ScenarioFinished {
        /// Its record, outcome included.
        record: &'a ScenarioRecord,
    },
    /// The run is over.
    RunFinished {
        /// The canonical record.
        record: &'a RunRecord,
    },
}

/// A consumer of events.
pub trait Reporter {
    /// Handles one event.
    fn event(&mut self, event: &Event<'_>);
}
