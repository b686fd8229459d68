//! The canonical JSON report: the [`RunRecord`] serialized, pretty-printed.

use crate::record::RunRecord;

/// The JSON document.
pub fn render(record: &RunRecord) -> String {
    let mut s = serde_json::to_string_pretty(record).expect("the record serializes");
    s.push('\n');
    s
}
