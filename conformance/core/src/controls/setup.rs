//! A control's `[setup]` fields, declared once: [`setup!`](crate::setup) writes, from one
//! line per field, the fields as written (`SetupPatch`) and resolved (`Setup`), the keys,
//! the reading of a key with its own type, `overlay`, `resolve`, whether a written field
//! implies the control's capability and the field's part of the `open` setup. The registry
//! (`controls/mod.rs`) joins the controls' setups into the aggregate [`super::SetupPatch`]
//! and [`super::Setup`]. [`Wire`] is a setup value as sent: placeholders applied.

use std::collections::BTreeMap;
use std::fmt::Debug;

use serde::de::MapAccess;
use serde_json::{Map, Value};

use crate::protocol::SessionDirs;
use crate::verdict::Ctx;

/// One control's `[setup]` fields as written; [`setup!`](crate::setup) implements it.
pub trait SetupFields: Debug + Clone + Default + Send + Sync + 'static {
    /// The fields resolved, defaults applied.
    type Resolved: Debug + Clone + PartialEq + Eq + Send + Sync + 'static;
    /// Its keys, in declaration order.
    const KEYS: &'static [&'static str];
    /// Reads the value of `key` (one of [`SetupFields::KEYS`]).
    fn set<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
    /// `self` with every field written in `over` replaced.
    fn overlay(&self, over: &Self) -> Self;
    /// Whether a field that needs the control's capability is written (a runner-side
    /// field needs none).
    fn needs_capability(&self) -> bool;
    /// The fields with defaults filled in.
    fn resolve(&self) -> Self::Resolved;
    /// The control's part of the `open` setup: each field sent as it is (placeholders
    /// applied), then the control's own `wire` hook for the fields it sends itself.
    fn wire(
        s: &Self::Resolved,
        dirs: &SessionDirs,
        sub: &dyn Fn(&str) -> String,
    ) -> Map<String, Value>;
    /// What the classification of a step learns from these fields.
    fn ctx(_: &Self::Resolved, _: &mut Ctx) {}
}

/// No setup fields (`opened`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoSetup;

impl SetupFields for NoSetup {
    type Resolved = NoSetup;
    const KEYS: &'static [&'static str] = &[];
    fn set<'de, A: MapAccess<'de>>(&mut self, key: &str, _: &mut A) -> Result<(), A::Error> {
        Err(serde::de::Error::custom(format!(
            "`{key}` is not a setup field"
        )))
    }
    fn overlay(&self, _: &Self) -> Self {
        NoSetup
    }
    fn needs_capability(&self) -> bool {
        false
    }
    fn resolve(&self) -> NoSetup {
        NoSetup
    }
    fn wire(_: &NoSetup, _: &SessionDirs, _: &dyn Fn(&str) -> String) -> Map<String, Value> {
        Map::new()
    }
}

/// A setup value as sent in `open`: every string a path or name may be written with a
/// placeholder is substituted (`sub`); the rest is sent as serialized.
pub trait Wire {
    /// The value as sent.
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value;
}

impl Wire for String {
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        Value::String(sub(self))
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        Value::Array(self.iter().map(|x| x.wire(sub)).collect())
    }
}

impl<T: Wire> Wire for Option<T> {
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        self.as_ref().map_or(Value::Null, |x| x.wire(sub))
    }
}

impl<T: Wire> Wire for BTreeMap<String, T> {
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        Value::Object(self.iter().map(|(k, v)| (k.clone(), v.wire(sub))).collect())
    }
}

/// The part of [`crate::controls::ControlAction`] every control writes the same way, in
/// its `impl`: its key lists (`ACTION_KEYS`, `EXPECT_KEYS`), its `Expect` type, and `parse`,
/// `label` and `expect_keys` as its model module defines them. `forward_action!()` when
/// the module's `parse` returns the action and its problems, `forward_action!(plain)`
/// when it returns the action alone.
#[macro_export]
macro_rules! forward_action {
    () => {
        $crate::forward_action!(@common);
        fn parse<'de, A: serde::de::MapAccess<'de>>(
            key: &str,
            map: &mut A,
        ) -> Result<(Action, $crate::controls::Problems), A::Error> {
            parse(key, map)
        }
    };
    (plain) => {
        $crate::forward_action!(@common);
        fn parse<'de, A: serde::de::MapAccess<'de>>(
            key: &str,
            map: &mut A,
        ) -> Result<(Action, $crate::controls::Problems), A::Error> {
            Ok((parse(key, map)?, Vec::new()))
        }
    };
    (@common) => {
        const ACTION_KEYS: &'static [&'static str] = ACTION_KEYS;
        const EXPECT_KEYS: &'static [&'static str] = EXPECT_KEYS;
        type Expect = Expect;
        fn label(&self) -> String {
            Action::label(self)
        }
        fn expect_keys(&self) -> &'static [&'static str] {
            Action::expect_keys(self)
        }
    };
}

/// Implements [`Wire`] for types sent as serialized, with no placeholder in them.
#[macro_export]
macro_rules! wire_as_is {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::controls::setup::Wire for $t {
            fn wire(&self, _: &dyn Fn(&str) -> String) -> serde_json::Value {
                serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
            }
        }
    )*};
}

wire_as_is!(bool, u32, u64);

/// The part of a control's `open` setup its fields do not send as they are (fields marked
/// `=> custom`), implemented in the control's `wire.rs`.
pub trait CustomWire {
    /// Adds the custom fields of `self` to `out`.
    fn custom_wire(
        &self,
        dirs: &crate::protocol::SessionDirs,
        sub: &dyn Fn(&str) -> String,
        out: &mut serde_json::Map<String, serde_json::Value>,
    );
}

/// Declares a control's `[setup]` fields once, in its `model.rs`:
///
/// ```text
/// setup! {
///     /// `posix` or `windows`.
///     host: Host = Host::Posix,        // resolved `Host`, default `Host::Posix`
///     /// Card window override.
///     card_window_ms: u64,             // no default: resolved `Option<u64>`
///     /// Runner-side only.
///     data_trust: DataTrust = DataTrust::Trusted => runner,
///     /// Sent by the control's own hook.
///     workspaces: Vec<String> = Vec::new() => custom,
/// }
/// ```
///
/// A field is sent in `open` under its name as its [`Wire`] value, unless marked
/// `=> runner` (the runner's alone: not sent, implies no capability) or `=> custom` (sent
/// by the hook named with `@wire = expr;` before the fields, a
/// `fn(&Setup, &SessionDirs, &dyn Fn(&str) -> String, &mut Map<String, Value>)`: write
/// `@wire = <Setup as crate::controls::setup::CustomWire>::custom_wire;` and implement
/// [`CustomWire`] in the control's `wire.rs`, so that the model never imports its wire). A
/// `@ctx = path;` hook (`fn(&Setup, &mut Ctx)`) tells the judges what the fields mean
/// to them. Writes `SetupPatch`, `Setup` and `SETUP_KEYS` into the calling module.
#[macro_export]
macro_rules! setup {
    (@resolved $t:ty) => { Option<$t> };
    (@resolved $t:ty, $default:expr) => { $t };
    (@resolve $v:expr) => { $v.clone() };
    (@resolve $v:expr, $default:expr) => { $v.clone().unwrap_or_else(|| $default) };
    (@needs $v:expr) => { $v.is_some() };
    (@needs $v:expr, runner) => { false };
    (@needs $v:expr, custom) => { $v.is_some() };
    (@send $out:ident, $s:ident, $sub:ident, $name:ident) => {
        $out.insert(
            stringify!($name).into(),
            $crate::controls::setup::Wire::wire(&$s.$name, $sub),
        );
    };
    (@send $out:ident, $s:ident, $sub:ident, $name:ident, runner) => {};
    (@send $out:ident, $s:ident, $sub:ident, $name:ident, custom) => {};
    (
        $(@wire = $hook:expr;)?
        $(@ctx = $ctx:path;)?
        $(
            $(#[doc = $doc:literal])*
            $name:ident : $t:ty $(= $default:expr)? $(=> $how:ident)?
        ),* $(,)?
    ) => {
        /// The control's `[setup]` fields as written (`None`: not written).
        #[derive(Debug, Clone, Default)]
        pub struct SetupPatch {
            $($(#[doc = $doc])* pub $name: Option<$t>,)*
        }

        /// The control's `[setup]` fields, defaults applied.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Setup {
            $($(#[doc = $doc])* pub $name: $crate::setup!(@resolved $t $(, $default)?),)*
        }

        /// The setup keys this control owns.
        pub const SETUP_KEYS: &[&str] = &[$(stringify!($name)),*];

        impl $crate::controls::setup::SetupFields for SetupPatch {
            type Resolved = Setup;
            const KEYS: &'static [&'static str] = SETUP_KEYS;
            fn set<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                match key {
                    $(stringify!($name) => self.$name = Some(map.next_value()?),)*
                    _ => {
                        return Err(<A::Error as serde::de::Error>::custom(format!(
                            "`{key}` is not one of {SETUP_KEYS:?}"
                        )))
                    }
                }
                Ok(())
            }
            #[allow(clippy::clone_on_copy)]
            fn overlay(&self, over: &SetupPatch) -> SetupPatch {
                SetupPatch {
                    $($name: over.$name.clone().or_else(|| self.$name.clone()),)*
                }
            }
            fn needs_capability(&self) -> bool {
                let mut any = false;
                $(any |= $crate::setup!(@needs self.$name $(, $how)?);)*
                any
            }
            #[allow(clippy::clone_on_copy)]
            fn resolve(&self) -> Setup {
                Setup {
                    $($name: $crate::setup!(@resolve self.$name $(, $default)?),)*
                }
            }
            #[allow(unused_variables, unused_mut)]
            fn wire(
                s: &Setup,
                dirs: &$crate::protocol::SessionDirs,
                sub: &dyn Fn(&str) -> String,
            ) -> serde_json::Map<String, serde_json::Value> {
                let mut out = serde_json::Map::new();
                $($crate::setup!(@send out, s, sub, $name $(, $how)?);)*
                $(($hook)(s, dirs, sub, &mut out);)?
                out
            }
            $(fn ctx(s: &Setup, c: &mut $crate::verdict::Ctx) {
                $ctx(s, c)
            })?
        }
    };
}
