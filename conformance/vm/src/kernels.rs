//! `vm-images/kernels.toml`: the kernels of the matrix, their variants, and what each
//! guest must show. Only reads and plans; fetching is `vm-images/build.py`'s job.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::error::VmError;
use gatehouse_conform_core::scenario::{Scenario, Tier};

/// The whole file.
#[derive(Debug, Clone, Deserialize)]
pub struct KernelsFile {
    /// Shared settings.
    pub defaults: Defaults,
    /// Every kernel, in matrix order.
    #[serde(rename = "kernel")]
    pub kernels: Vec<Kernel>,
    /// The named variants.
    #[serde(rename = "variant", default)]
    pub variants: BTreeMap<String, Variant>,
    /// Scenarios run on some kernels only.
    #[serde(rename = "narrowed", default)]
    pub narrowed: Vec<Narrowed>,
}

/// One `[[narrowed]]`: scenarios of the enforcement tier whose kernel-facing part is the
/// same on every kernel of a class, run on one kernel of each class (`kernels`, in base
/// and in their variants). Every other guest leaves them out with `--exclude`, and the
/// matrix report says which guests did and why; `vm --whole-suite` runs everything
/// everywhere.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Narrowed {
    /// Scenario patterns, as `--exclude` takes them (`fence/choices-network-`).
    pub scenarios: Vec<String>,
    /// The kernels whose guests run them.
    pub kernels: Vec<String>,
    /// Why one kernel per class shows what every kernel of the class would.
    pub why: String,
    /// Requirement prefixes (`FENCE-`) none of its scenarios may pin: an entry that
    /// narrows scenarios because they test something other than the fence says so here,
    /// and a scenario it selects that pins such a requirement makes `vm` refuse before
    /// any boot ([`Narrowed::check`]), so that a scenario added later is never left out
    /// of a kernel silently.
    #[serde(default)]
    pub unless_pins: Vec<String>,
}

impl Narrowed {
    /// The first scenario of `scenarios` this entry selects that pins a requirement of
    /// [`Narrowed::unless_pins`], as a sentence naming both; `None` when there is none.
    pub fn check<'a>(
        &self,
        scenarios: impl IntoIterator<Item = (&'a str, Vec<String>)>,
    ) -> Option<String> {
        if self.unless_pins.is_empty() {
            return None;
        }
        let scenarios: Vec<(&str, Vec<String>)> = scenarios.into_iter().collect();
        let picked = gatehouse_conform_core::filter::select_all(
            &self.scenarios,
            &[],
            scenarios,
            |(id, _)| id,
        )
        .ok()?;
        picked.iter().find_map(|(id, requirements)| {
            let pinned = requirements
                .iter()
                .find(|r| self.unless_pins.iter().any(|p| r.starts_with(p.as_str())))?;
            Some(format!(
                "selects {id}, which pins {pinned}: `unless_pins` {:?} says no scenario it leaves out may (narrow that scenario in an entry of its own, or change the patterns)",
                self.unless_pins
            ))
        })
    }
}

/// `[defaults]`.
#[derive(Debug, Clone, Deserialize)]
pub struct Defaults {
    /// Guest memory.
    pub memory_mib: u32,
    /// Seconds before a guest is killed and reported errored.
    pub timeout_secs: u64,
}

/// One `[[kernel]]`.
#[derive(Debug, Clone, Deserialize)]
pub struct Kernel {
    /// `6.1`.
    pub id: String,
    /// The Landlock ABI the kernel must declare (0: none).
    pub landlock_abi: i64,
    /// Whether user namespaces work on it.
    pub user_namespaces: bool,
    /// The fence backend the reference must declare there (`none`: it refuses).
    #[serde(default = "native")]
    pub fence_backend: String,
    /// The variants the matrix runs on it besides `base`.
    #[serde(default)]
    pub variants: Vec<String>,
    /// Whether its `base` guest runs the decision tier too. The decision tier is pure
    /// policy that no kernel feature changes: the host runs it, and the guests run the
    /// enforcement tier (`--whole-suite`, or this, for both).
    #[serde(default)]
    pub decision_tier: bool,
    /// Whether `vm --ci` (what `.ci/run` runs on its 2-core machine) boots it, in base
    /// and in each of its variants.
    #[serde(default)]
    pub ci: bool,
}

/// One `[variant.NAME]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Variant {
    /// Added to the kernel command line.
    #[serde(default)]
    pub cmdline: Option<String>,
    /// Written by the guest's init before the suite runs.
    #[serde(default)]
    pub sysctl: BTreeMap<String, String>,
    /// Overrides the kernel's Landlock ABI.
    #[serde(default)]
    pub landlock_abi: Option<i64>,
    /// Overrides the kernel's user namespaces.
    #[serde(default)]
    pub user_namespaces: Option<bool>,
    /// Overrides the kernel's fence backend.
    #[serde(default)]
    pub fence_backend: Option<String>,
}

fn native() -> String {
    "native".into()
}

/// The variant every kernel has: the kernel as it boots.
pub const BASE: &str = "base";

/// One guest to boot: a kernel in a variant, and what it must show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestPlan {
    /// The kernel id.
    pub kernel: String,
    /// The variant name (`base` or a `[variant.*]` key).
    pub variant: String,
    /// Extra kernel command line.
    pub cmdline: String,
    /// Sysctls the init sets, `key=value`.
    pub sysctls: Vec<String>,
    /// The Landlock ABI the inner run must see (`--expect-landlock-abi`).
    pub landlock_abi: i64,
    /// Whether the guest's probe must find user namespaces.
    pub user_namespaces: bool,
    /// The backend the inner run must see (`--expect-fence-backend`).
    pub fence_backend: String,
    /// Whether the guest runs the decision tier as well as the enforcement tier.
    pub decision_tier: bool,
    /// The `[[narrowed]]` entries whose scenarios this guest leaves out (its kernel is
    /// not among theirs).
    pub leaves_out: Vec<Narrowed>,
}

impl GuestPlan {
    /// The tiers the guest runs, as the matrix report names them.
    pub fn tiers(&self) -> &'static str {
        if self.decision_tier {
            "all"
        } else {
            "enforcement"
        }
    }

    /// `6.1/userns-off`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.kernel, self.variant)
    }
}

impl KernelsFile {
    /// Reads and checks the file; every problem names it.
    pub fn load(path: &Path) -> Result<KernelsFile, VmError> {
        let text = std::fs::read_to_string(path).map_err(|source| VmError::ReadKernels {
            path: path.to_path_buf(),
            source,
        })?;
        let file: KernelsFile = toml::from_str(&text).map_err(|e| VmError::ParseKernels {
            path: path.to_path_buf(),
            source: Box::new(e),
        })?;
        for n in &file.narrowed {
            let bad = |why: String| VmError::BadNarrowed {
                path: path.to_path_buf(),
                scenarios: n.scenarios.clone(),
                why,
            };
            if n.scenarios.is_empty() || n.scenarios.iter().any(|p| p.trim().is_empty()) {
                return Err(bad(
                    "`scenarios` must name at least one pattern, none empty".into(),
                ));
            }
            if let Some(k) = n
                .kernels
                .iter()
                .find(|k| !file.kernels.iter().any(|x| &x.id == *k))
            {
                return Err(bad(format!(
                    "`kernels` names {k:?}, which no [[kernel]] is"
                )));
            }
            if n.kernels.is_empty() || n.why.trim().is_empty() {
                return Err(bad("`kernels` and `why` must not be empty".into()));
            }
            if n.unless_pins.iter().any(|p| p.trim().is_empty()) {
                return Err(bad("`unless_pins` must not hold an empty prefix".into()));
            }
        }
        for k in &file.kernels {
            for v in &k.variants {
                if !file.variants.contains_key(v) {
                    return Err(VmError::UndeclaredVariant {
                        path: path.to_path_buf(),
                        kernel: k.id.clone(),
                        variant: v.clone(),
                    });
                }
            }
        }
        Ok(file)
    }

    /// The first `[[narrowed]]` entry with `unless_pins` that selects a scenario of the
    /// enforcement tier pinning one of them (the decision tier runs on no guest), with the
    /// sentence [`Narrowed::check`] gives; `None` when every entry keeps its promise.
    pub fn broken_narrowing(&self, scenarios: &[Scenario]) -> Option<(&Narrowed, String)> {
        self.narrowed.iter().find_map(|n| {
            let enforcement = scenarios
                .iter()
                .filter(|s| s.tier == Tier::Enforcement)
                .map(|s| (s.id.as_str(), s.all_requirements()));
            n.check(enforcement).map(|why| (n, why))
        })
    }

    /// The kernel with this id.
    pub fn kernel(&self, id: &str) -> Result<&Kernel, VmError> {
        self.kernels
            .iter()
            .find(|k| k.id == id)
            .ok_or_else(|| VmError::UnknownKernel {
                kernel: id.to_string(),
                known: self.kernels.iter().map(|k| k.id.clone()).collect(),
            })
    }

    /// The guest for `kernel` in `variant`.
    pub fn plan(&self, kernel: &str, variant: &str) -> Result<GuestPlan, VmError> {
        let k = self.kernel(kernel)?;
        let v = if variant == BASE {
            Variant::default()
        } else {
            self.variants
                .get(variant)
                .cloned()
                .ok_or_else(|| VmError::UnknownVariant {
                    variant: variant.to_string(),
                    known: self.variants.keys().cloned().collect(),
                })?
        };
        Ok(GuestPlan {
            kernel: k.id.clone(),
            variant: variant.to_string(),
            cmdline: v.cmdline.clone().unwrap_or_default(),
            sysctls: v.sysctl.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            // A kernel without Landlock stays without it whatever the variant says.
            landlock_abi: v.landlock_abi.unwrap_or(k.landlock_abi).min(k.landlock_abi),
            user_namespaces: v.user_namespaces.unwrap_or(k.user_namespaces) && k.user_namespaces,
            fence_backend: v.fence_backend.unwrap_or_else(|| k.fence_backend.clone()),
            // A variant switches off a feature only the fence uses: what it changes is the
            // enforcement tier's to show.
            decision_tier: k.decision_tier && variant == BASE,
            leaves_out: self
                .narrowed
                .iter()
                .filter(|n| !n.kernels.contains(&k.id))
                .cloned()
                .collect(),
        })
    }

    /// The whole matrix: every kernel in `base` and in each of its declared variants.
    pub fn matrix(&self) -> Result<Vec<GuestPlan>, VmError> {
        self.matrix_of(|_| true)
    }

    /// The part of the matrix `.ci/run` can afford: the kernels marked `ci`, each in
    /// `base` and in its variants.
    pub fn ci_matrix(&self) -> Result<Vec<GuestPlan>, VmError> {
        self.matrix_of(|k| k.ci)
    }

    fn matrix_of(&self, keep: impl Fn(&Kernel) -> bool) -> Result<Vec<GuestPlan>, VmError> {
        let mut plans = Vec::new();
        for k in self.kernels.iter().filter(|k| keep(k)) {
            plans.push(self.plan(&k.id, BASE)?);
            for v in &k.variants {
                plans.push(self.plan(&k.id, v)?);
            }
        }
        Ok(plans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> KernelsFile {
        toml::from_str(
            r#"
            [defaults]
            memory_mib = 512
            timeout_secs = 60
            [[kernel]]
            id = "5.10"
            suite = "bullseye"
            package = "p"
            landlock_abi = 0
            user_namespaces = true
            variants = ["both-off"]
            decision_tier = true
            ci = true
            [[kernel]]
            id = "6.1"
            suite = "bookworm"
            package = "q"
            landlock_abi = 2
            user_namespaces = true
            [[narrowed]]
            scenarios = ["fence/net-"]
            kernels = ["5.10"]
            why = "w"
            [variant.both-off]
            cmdline = "lsm=yama"
            sysctl = { "user.max_user_namespaces" = "0" }
            landlock_abi = 0
            user_namespaces = false
            fence_backend = "none"
            "#,
        )
        .unwrap()
    }

    #[test]
    fn a_variant_overrides_what_the_guest_must_show() {
        let f = file();
        let p = f.plan("6.1", "both-off").unwrap();
        assert_eq!(p.landlock_abi, 0);
        assert!(!p.user_namespaces);
        assert_eq!(p.cmdline, "lsm=yama");
        assert_eq!(p.sysctls, vec!["user.max_user_namespaces=0".to_string()]);
        assert_eq!(p.fence_backend, "none");
        let base = f.plan("6.1", BASE).unwrap();
        assert_eq!((base.landlock_abi, base.user_namespaces), (2, true));
        assert_eq!(base.fence_backend, "native");
    }

    #[test]
    fn the_decision_tier_runs_only_on_the_base_guest_of_a_kernel_that_asks_for_it() {
        let f = file();
        assert_eq!(f.plan("5.10", BASE).unwrap().tiers(), "all");
        assert_eq!(f.plan("5.10", "both-off").unwrap().tiers(), "enforcement");
        assert_eq!(f.plan("6.1", BASE).unwrap().tiers(), "enforcement");
    }

    #[test]
    fn narrowed_scenarios_are_left_out_by_the_kernels_not_named_in_every_variant() {
        let f = file();
        assert!(f.plan("5.10", BASE).unwrap().leaves_out.is_empty());
        assert!(f.plan("5.10", "both-off").unwrap().leaves_out.is_empty());
        let out = f.plan("6.1", BASE).unwrap().leaves_out;
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].scenarios, ["fence/net-"]);
    }

    #[test]
    fn a_narrowed_entry_naming_an_unknown_kernel_is_refused_with_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernels.toml");
        let text = "[defaults]\nmemory_mib = 1\ntimeout_secs = 1\n[[kernel]]\nid = \"6.1\"\nlandlock_abi = 2\nuser_namespaces = true\n[[narrowed]]\nscenarios = [\"fence/x\"]\nkernels = [\"9.9\"]\nwhy = \"w\"\n";
        std::fs::write(&path, text).unwrap();
        let e = KernelsFile::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("kernels.toml: [[narrowed]] [\"fence/x\"]: `kernels` names \"9.9\""),
            "{e}"
        );
        std::fs::write(
            &path,
            text.replace("kernels = [\"9.9\"]\n", "kernels = [\"6.1\"]\nkernel = 1\n"),
        )
        .unwrap();
        assert!(
            KernelsFile::load(&path).is_err(),
            "an unknown key is refused"
        );
    }

    #[test]
    fn a_narrowed_entry_with_unless_pins_names_the_scenario_that_pins_one() {
        let entry = Narrowed {
            scenarios: vec!["hooks/".into()],
            kernels: vec!["6.1".into()],
            why: "w".into(),
            unless_pins: vec!["FENCE-".into()],
        };
        let req = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let fine = [
            ("hooks/a", req(&["HOOK-IN-3"])),
            ("fence/b", req(&["FENCE-JAIL-1"])),
        ];
        assert_eq!(entry.check(fine.clone()), None, "fence/b is not selected");
        let wrong = [
            ("hooks/a", req(&["HOOK-IN-3"])),
            ("hooks/c", req(&["ORDER-RUN-1", "FENCE-RUN-4"])),
        ];
        let why = entry.check(wrong.clone()).unwrap();
        assert!(
            why.starts_with("selects hooks/c, which pins FENCE-RUN-4"),
            "{why}"
        );
        let plain = Narrowed {
            unless_pins: vec![],
            ..entry
        };
        assert_eq!(plain.check(wrong), None, "no unless_pins, nothing to check");
    }

    #[test]
    fn the_shipped_narrowed_entries_leave_out_no_scenario_they_promise_to_keep() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let f = KernelsFile::load(&root.join("vm-images/kernels.toml")).unwrap();
        let loaded =
            gatehouse_conform_core::scenario::load_dir(&root.join("scenarios"), None).unwrap();
        assert!(f.narrowed.iter().any(|n| !n.unless_pins.is_empty()));
        let broken = f.broken_narrowing(&loaded.scenarios);
        assert!(broken.is_none(), "{broken:?}");
    }

    fn labels(plans: &[GuestPlan]) -> Vec<String> {
        plans.iter().map(GuestPlan::label).collect()
    }

    #[test]
    fn the_matrix_is_every_kernel_in_base_and_its_own_variants() {
        assert_eq!(
            labels(&file().matrix().unwrap()),
            ["5.10/base", "5.10/both-off", "6.1/base"]
        );
        assert_eq!(
            labels(&file().ci_matrix().unwrap()),
            ["5.10/base", "5.10/both-off"]
        );
    }

    #[test]
    fn unknown_kernels_and_variants_are_named() {
        let f = file();
        let e = f.plan("4.19", BASE).unwrap_err();
        assert!(
            matches!(&e, VmError::UnknownKernel { kernel, known } if kernel == "4.19" && known == &["5.10", "6.1"]),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("--kernel 4.19: "), "{e}");
        let e = f.plan("6.1", "nope").unwrap_err();
        assert!(
            matches!(&e, VmError::UnknownVariant { variant, .. } if variant == "nope"),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("--variant nope: "), "{e}");
    }

    #[test]
    fn the_shipped_file_loads_and_every_kernel_declares_an_abi() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vm-images/kernels.toml");
        let f = KernelsFile::load(&path).unwrap();
        assert!(f.kernels.len() >= 9);
        assert!(f.matrix().unwrap().len() > f.kernels.len());
        // The decision tier is kernel-independent: the host runs it, no guest does unless
        // --whole-suite asks.
        assert!(f.kernels.iter().all(|k| !k.decision_tier));
        // CI's part boots the oldest kernel, the newest and every variant of the file.
        let ci = f.ci_matrix().unwrap();
        for k in [&f.kernels[0], &f.kernels[f.kernels.len() - 1]] {
            assert!(ci.iter().any(|p| p.kernel == k.id), "{} not in --ci", k.id);
        }
        let variants = |plans: &[GuestPlan]| {
            let mut v: Vec<String> = plans.iter().map(|p| p.variant.clone()).collect();
            v.sort();
            v.dedup();
            v
        };
        assert_eq!(variants(&ci), variants(&f.matrix().unwrap()));
    }
}
