//! The canonical JSON report: the [`RunRecord`] serialized, pretty-printed.

use crate::record::RunRecord;

/// The JSON document.
// serde_json fails only on a map key that is not a string or a hand-written `Serialize`
// that errs: the record's derived fields have neither.
#[allow(clippy::expect_used)]
pub fn render(record: &RunRecord) -> String {
    let mut s = serde_json::to_string_pretty(record).expect("the record serializes");
    s.push('\n');
    s
}
