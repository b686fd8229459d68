//! The canonical JSON report: the [`RunRecord`] serialized, pretty-printed, its `verdict`
//! (the headline lines) first and its `safety_groups` beside the flat `safety_failures`.

use crate::record::RunRecord;

/// The JSON document.
// serde_json fails only on a map key that is not a string or a hand-written `Serialize`
// that errs: the record's derived fields have neither.
#[allow(clippy::expect_used)]
pub fn render(record: &RunRecord) -> String {
    // The verdict as judged now: the expectations are compared after `assemble`.
    let mut record = record.clone();
    record.verdict = super::headline(&record);
    let mut s = serde_json::to_string_pretty(&record).expect("the record serializes");
    s.push('\n');
    s
}
