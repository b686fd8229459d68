//! The file tools' messages of the adapter protocol: the `open` setup fields of `paths`
//! and the requests of the file-tool steps.

use serde::Serialize;

use super::model::{Action, DataTrust, Resolver, Setup};
use crate::vocab::YesNo;

crate::wire_as_is!(Resolver);

/// The file-tool requests.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Read one file.
    Read {
        /// Session.
        session: String,
        /// The path as the tool is given it.
        path: String,
        /// The answer if a quarantined-read prompt is offered.
        if_asked: YesNo,
    },
    /// Create or replace one file.
    Write {
        /// Session.
        session: String,
        /// The path.
        path: String,
        /// The new contents.
        content: String,
        /// The data's trust.
        data: DataTrust,
        /// The answer if the write prompts.
        if_asked: YesNo,
    },
    /// Replace the one occurrence of `old` by `new`.
    Edit {
        /// Session.
        session: String,
        /// The path.
        path: String,
        /// The text replaced.
        old: String,
        /// The replacement.
        new: String,
        /// The data's trust.
        data: DataTrust,
        /// The answer if the edit prompts.
        if_asked: YesNo,
    },
    /// List one directory.
    List {
        /// Session.
        session: String,
        /// The path.
        path: String,
    },
    /// Search beneath a path for a literal pattern.
    Search {
        /// Session.
        session: String,
        /// Where it starts.
        path: String,
        /// The literal pattern.
        pattern: String,
    },
}

/// The request of one step; `setup` gives the default data trust.
pub fn request(
    action: &Action,
    session: String,
    setup: &Setup,
    sub: &dyn Fn(&str) -> String,
) -> Request {
    match action {
        Action::Read { path, if_asked } => Request::Read {
            session,
            path: sub(path),
            if_asked: *if_asked,
        },
        Action::Write {
            path,
            content,
            old: None,
            data,
            if_asked,
        } => Request::Write {
            session,
            path: sub(path),
            content: content.clone(),
            data: data.unwrap_or(setup.data_trust),
            if_asked: *if_asked,
        },
        Action::Write {
            path,
            content,
            old: Some(old),
            data,
            if_asked,
        } => Request::Edit {
            session,
            path: sub(path),
            old: old.clone(),
            new: content.clone(),
            data: data.unwrap_or(setup.data_trust),
            if_asked: *if_asked,
        },
        Action::List(path) => Request::List {
            session,
            path: sub(path),
        },
        Action::Search { path, pattern } => Request::Search {
            session,
            path: sub(path),
            pattern: pattern.clone(),
        },
    }
}

impl crate::controls::ToRequest for Action {
    fn request(
        &self,
        session: &str,
        setup: &crate::controls::Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(crate::protocol::to_object(&request(
            self,
            session.to_string(),
            &setup.paths,
            sub,
        )))
    }
}
