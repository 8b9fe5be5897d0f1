//! Taints and tolerations, the first check of the simulator stage.
//!
//! Before Karpenter looks at labels or resources it asks whether the pod tolerates every
//! `spec.template.spec.taints` entry of a NodePool (core `pkg/scheduling/taints.go`, using
//! upstream `Toleration.ToleratesTaint`). This module reproduces that match, the
//! `PreferNoSchedule` relaxation Karpenter applies as its last resort, and the exact wording of
//! the `did not tolerate taint` message in each Karpenter generation, plus the toleration YAML
//! karplint suggests as a fix. Types here are plain strings; the model stage converts YAML.

use std::fmt;
use std::str::FromStr;

/// A taint or toleration effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Effect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl Effect {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::NoSchedule => "NoSchedule",
            Effect::PreferNoSchedule => "PreferNoSchedule",
            Effect::NoExecute => "NoExecute",
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the Kubernetes taint effects or toleration operators.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaintError {
    #[error("unknown taint effect {0:?}")]
    UnknownEffect(String),
    #[error("unknown toleration operator {0:?}")]
    UnknownOperator(String),
}

impl FromStr for Effect {
    type Err = TaintError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "NoSchedule" => Ok(Effect::NoSchedule),
            "PreferNoSchedule" => Ok(Effect::PreferNoSchedule),
            "NoExecute" => Ok(Effect::NoExecute),
            other => Err(TaintError::UnknownEffect(other.to_owned())),
        }
    }
}

/// A NodePool (or node) taint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Taint {
    pub key: String,
    /// Empty when the taint has no value.
    pub value: String,
    pub effect: Effect,
}

impl Taint {
    /// A taint from its parts.
    pub fn new(key: impl Into<String>, value: impl Into<String>, effect: Effect) -> Self {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
        }
    }

    /// Upstream `Taint.MatchTaint`: same key and effect, whatever the value.
    pub fn matches(&self, other: &Taint) -> bool {
        self.key == other.key && self.effect == other.effect
    }
}

/// Upstream `Taint.ToString`: `key=value:Effect`, or `key:Effect` when the value is empty.
impl fmt::Display for Taint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect)
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A toleration operator. Kubernetes defaults an absent operator to `Equal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TolerationOperator {
    Exists,
    #[default]
    Equal,
}

impl TolerationOperator {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TolerationOperator::Exists => "Exists",
            TolerationOperator::Equal => "Equal",
        }
    }
}

impl FromStr for TolerationOperator {
    type Err = TaintError;

    /// Parses the YAML value; the empty string is `Equal`, as in Kubernetes.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "Exists" => Ok(TolerationOperator::Exists),
            "Equal" | "" => Ok(TolerationOperator::Equal),
            other => Err(TaintError::UnknownOperator(other.to_owned())),
        }
    }
}

/// A pod toleration.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Toleration {
    /// Empty matches every key (with `Exists`).
    pub key: String,
    pub operator: TolerationOperator,
    /// Compared only with `Equal`.
    pub value: String,
    /// `None` matches every effect.
    pub effect: Option<Effect>,
}

/// A taint as written in a NodePool, node group or Node; `None` for an effect Kubernetes
/// does not know (the API server would reject it).
pub fn from_model(t: &crate::model::karpenter::Taint) -> Option<Taint> {
    let effect: Effect = t.effect.value.parse().ok()?;
    let value = t
        .value
        .as_ref()
        .map(|v| v.value.0.clone())
        .unwrap_or_default();
    Some(Taint::new(t.key.value.clone(), value, effect))
}

/// Upstream `Toleration.ToleratesTaint`; see [`Toleration::tolerates`].
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if toleration.effect.is_some_and(|e| e != taint.effect) {
        return false;
    }
    if !toleration.key.is_empty() && toleration.key != taint.key {
        return false;
    }
    match toleration.operator {
        TolerationOperator::Exists => true,
        TolerationOperator::Equal => toleration.value == taint.value,
    }
}

/// Whether any of `tolerations` tolerates `taint`.
pub fn is_tolerated(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint))
}

/// Karpenter's message for one untolerated taint (core v1.5 and later).
pub fn untolerated_taint_message(taint: &Taint) -> String {
    format!("did not tolerate taint (taint={taint})")
}

/// Karpenter's error for every taint of a pool the pod does not tolerate (`Taints.Tolerates`
/// appends one error per taint with `multierr.Append`, whose message joins them with `; `).
pub fn untolerated_taints_message(taints: &[Taint]) -> String {
    let each: Vec<String> = taints.iter().map(untolerated_taint_message).collect();
    each.join("; ")
}

/// The narrowest toleration of `taint`: `Equal` with the taint's value, or `Exists` when the
/// taint has no value, always with the taint's effect.
pub fn suggested_toleration(taint: &Taint) -> Toleration {
    let operator = if taint.value.is_empty() {
        TolerationOperator::Exists
    } else {
        TolerationOperator::Equal
    };
    Toleration {
        key: taint.key.clone(),
        operator,
        value: taint.value.clone(),
        effect: Some(taint.effect),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: Effect) -> Taint {
        Taint::new(key, value, effect)
    }

    fn tol(key: &str, op: TolerationOperator, value: &str, effect: Option<Effect>) -> Toleration {
        Toleration {
            key: key.into(),
            operator: op,
            value: value.into(),
            effect,
        }
    }

    use Effect::*;
    use TolerationOperator::{Equal, Exists};

    #[test]
    fn parse_effects_and_operators() {
        assert_eq!("NoSchedule".parse(), Ok(NoSchedule));
        assert_eq!("PreferNoSchedule".parse(), Ok(PreferNoSchedule));
        assert_eq!("NoExecute".parse(), Ok(NoExecute));
        assert!("noschedule".parse::<Effect>().is_err());
        assert_eq!("".parse(), Ok(Equal));
        assert_eq!("Exists".parse(), Ok(Exists));
        assert_eq!(
            "Lt".parse::<TolerationOperator>(),
            Err(TaintError::UnknownOperator("Lt".into()))
        );
    }

    #[test]
    fn empty_key_exists_tolerates_everything() {
        let all = tol("", Exists, "", None);
        for t in [
            taint("a", "1", NoSchedule),
            taint("b", "", NoExecute),
            taint("c", "x", PreferNoSchedule),
        ] {
            assert!(tolerates(&all, &t), "{t}");
        }
        let all_no_schedule = tol("", Exists, "", Some(NoSchedule));
        assert!(tolerates(&all_no_schedule, &taint("a", "1", NoSchedule)));
        assert!(!tolerates(&all_no_schedule, &taint("a", "1", NoExecute)));
    }

    #[test]
    fn exists_ignores_value_equal_compares_it() {
        let t = taint("dedicated", "gpu", NoSchedule);
        assert!(tolerates(&tol("dedicated", Exists, "", None), &t));
        assert!(tolerates(&tol("dedicated", Exists, "cpu", None), &t));
        assert!(tolerates(&tol("dedicated", Equal, "gpu", None), &t));
        assert!(!tolerates(&tol("dedicated", Equal, "cpu", None), &t));
        assert!(!tolerates(&tol("dedicated", Equal, "", None), &t));
        assert!(!tolerates(&tol("other", Exists, "", None), &t));
        // default operator is Equal: an empty value only matches a valueless taint
        let valueless = taint("dedicated", "", NoSchedule);
        assert!(tolerates(
            &Toleration {
                key: "dedicated".into(),
                ..Default::default()
            },
            &valueless
        ));
    }

    #[test]
    fn empty_effect_matches_all_effects_but_set_effect_must_match() {
        let t = taint("k", "v", NoExecute);
        assert!(tolerates(&tol("k", Equal, "v", None), &t));
        assert!(tolerates(&tol("k", Equal, "v", Some(NoExecute)), &t));
        assert!(!tolerates(&tol("k", Equal, "v", Some(NoSchedule)), &t));
    }

    #[test]
    fn message_at_head() {
        let valued = taint("dedicated", "gpu", NoSchedule);
        let bare = taint("nvidia.com/gpu", "", NoExecute);
        assert_eq!(
            untolerated_taint_message(&valued),
            "did not tolerate taint (taint=dedicated=gpu:NoSchedule)"
        );
        assert_eq!(
            untolerated_taint_message(&bare),
            "did not tolerate taint (taint=nvidia.com/gpu:NoExecute)"
        );
    }

    #[test]
    fn suggested_toleration_is_the_narrowest_that_tolerates() {
        let valued = taint("dedicated", "true", NoSchedule);
        let suggestion = suggested_toleration(&valued);
        assert!(tolerates(&suggestion, &valued));
        assert_eq!(suggestion.operator, Equal);
        let bare = taint("nvidia.com/gpu", "", NoSchedule);
        let suggestion = suggested_toleration(&bare);
        assert!(tolerates(&suggestion, &bare));
        assert_eq!(suggestion.operator, Exists);
    }
}
