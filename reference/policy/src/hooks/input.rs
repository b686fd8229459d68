//! The JSON object a command hook reads on stdin (HOOK-IN-1 to -3): every field of the
//! seed's capture (`agent_name`, `cwd`, `hook_event_name`, `safety_policy`, `session_id`,
//! `tool_input`, `tool_name`, `tool_use_id`) and what a guard needs that no peer gives:
//! `argv` (each simple command of a shell line as its words after quote removal),
//! `effective_cwd` (the resolved directory the call runs in) and `decision_so_far`.
//! `tool_response` is added for the events after a call.
//!
//! Pure: builds a value from what it is given. Keys come out in sorted order (the capture's
//! order), because `serde_json`'s map is ordered.

use super::config::Event;
use crate::gate::syntax::{simple_commands, tokens};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// What the order has decided before a hook runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionSoFar {
    /// `allow`, `ask` or `deny`, or `None` when nothing has decided yet (preempting hooks).
    pub decision: Option<String>,
    /// The stage that produced it.
    pub stage: String,
    /// Its reason code.
    pub reason: Option<String>,
}

/// The facts of one call a hook is told.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallFacts {
    /// The agent's name in the agent file.
    pub agent_name: String,
    /// The session's working directory.
    pub cwd: String,
    /// The mode's `safety_policy` spelling.
    pub safety_policy: String,
    /// The session id.
    pub session_id: String,
    /// The tool.
    pub tool_name: String,
    /// Its input, as rewritten so far.
    pub tool_input: Value,
    /// The call's id.
    pub tool_use_id: String,
    /// The resolved directory the call runs in.
    pub effective_cwd: String,
}

/// The words of each simple command of a shell line (wrappers kept: a guard sees what
/// will run), or `None` for a call that is not a shell line.
pub fn argv_of(tool: &str, input: &Value) -> Option<Vec<Vec<String>>> {
    if tool != crate::permissions::rules::SHELL_TOOL {
        return None;
    }
    let line = input.get(crate::permissions::rules::SHELL_KEY)?.as_str()?;
    Some(
        simple_commands(line)
            .map(|c| {
                tokens(c)
                    .into_iter()
                    .map(|t| t.word.text.into_owned())
                    .collect::<Vec<_>>()
            })
            .filter(|w| !w.is_empty())
            .collect(),
    )
}

/// The stdin object for `event`.
pub fn hook_input(
    event: Event,
    call: &CallFacts,
    so_far: &DecisionSoFar,
    response: Option<&Value>,
) -> Value {
    let mut m = Map::new();
    m.insert("agent_name".into(), json!(call.agent_name));
    m.insert("cwd".into(), json!(call.cwd));
    m.insert("hook_event_name".into(), json!(event.name()));
    m.insert("safety_policy".into(), json!(call.safety_policy));
    m.insert("session_id".into(), json!(call.session_id));
    m.insert("tool_input".into(), call.tool_input.clone());
    m.insert("tool_name".into(), json!(call.tool_name));
    m.insert("tool_use_id".into(), json!(call.tool_use_id));
    m.insert(
        "argv".into(),
        serde_json::to_value(argv_of(&call.tool_name, &call.tool_input)).unwrap_or(Value::Null),
    );
    m.insert("effective_cwd".into(), json!(call.effective_cwd));
    m.insert(
        "decision_so_far".into(),
        serde_json::to_value(so_far).unwrap_or(Value::Null),
    );
    if let Some(r) = response {
        m.insert("tool_response".into(), r.clone());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_fields_in_the_seeds_order_plus_three() {
        let call = CallFacts {
            agent_name: "root".into(),
            cwd: "/c".into(),
            safety_policy: "restricted".into(),
            session_id: "s".into(),
            tool_name: "shell".into(),
            tool_input: json!({"cmd": "rm -rf work/m101-nothing"}),
            tool_use_id: "c1".into(),
            effective_cwd: "/c".into(),
        };
        let so_far = DecisionSoFar {
            decision: None,
            stage: "preempt_hook".into(),
            reason: None,
        };
        let v = hook_input(Event::PreToolUse, &call, &so_far, None);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "agent_name",
                "argv",
                "cwd",
                "decision_so_far",
                "effective_cwd",
                "hook_event_name",
                "safety_policy",
                "session_id",
                "tool_input",
                "tool_name",
                "tool_use_id"
            ]
        );
        assert_eq!(v["argv"], json!([["rm", "-rf", "work/m101-nothing"]]));
    }

    #[test]
    fn argv_splits_chains_and_removes_quotes() {
        assert_eq!(
            argv_of("shell", &json!({"cmd": "echo 'a b' && nice rm x"})),
            Some(vec![
                vec!["echo".into(), "a b".into()],
                vec!["nice".into(), "rm".into(), "x".into()]
            ])
        );
        assert_eq!(argv_of("read", &json!({"path": "x"})), None);
    }
}
