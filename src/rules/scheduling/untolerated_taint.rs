//! `untolerated-taint`: no NodePool takes the pod because it does not tolerate a NodePool taint

use super::Advice;
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::taints::{self, Taint, Toleration, TolerationOperator};
use crate::rules::{Context, Findings, Placed, Rule, declare_rule};

declare_rule!(
    UntoleratedTaint,
    "untolerated-taint",
    Error,
    "no NodePool can take the pod: the closest one has a taint it does not tolerate"
);

impl Rule for UntoleratedTaint {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        super::pending_finding(cx, &META, o, out);
    }

    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        super::batch_findings(cx, &META, workloads, out);
    }
}

/// NodePool `nodepool` has `taints` (at least one), which the pod does not tolerate:
/// suggest the narrowest toleration of each, all in one help, so that one fix takes the
/// pool.
pub(super) fn advice(taints: &[Taint], nodepool: &str) -> Advice {
    let suggestion: String = (taints.iter())
        .map(|t| toleration_yaml(&taints::suggested_toleration(t), 2))
        .collect();
    let (label, these) = match taints {
        [_] => ("no toleration for this NodePool taint", "this toleration"),
        _ => (
            "no toleration for these NodePool taints",
            "these tolerations",
        ),
    };
    Advice {
        label,
        help: format!(
            "if this pod should run on NodePool \"{nodepool}\", add {these} to the pod spec's `tolerations`:\n{}",
            suggestion.trim_end()
        ),
    }
}

fn yaml_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The toleration as a YAML sequence item for `spec.tolerations`, each line prefixed with
/// `indent` spaces. Strings are double-quoted so values like `true` stay strings.
fn toleration_yaml(toleration: &Toleration, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut fields: Vec<String> = Vec::new();
    if !toleration.key.is_empty() {
        fields.push(format!("key: {}", yaml_quote(&toleration.key)));
    }
    fields.push(format!(
        "operator: {}",
        yaml_quote(toleration.operator.as_str())
    ));
    if toleration.operator == TolerationOperator::Equal {
        fields.push(format!("value: {}", yaml_quote(&toleration.value)));
    }
    if let Some(effect) = toleration.effect {
        fields.push(format!("effect: {}", yaml_quote(effect.as_str())));
    }
    fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let lead = if i == 0 { "- " } else { "  " };
            format!("{pad}{lead}{field}\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::taints::{Effect, Toleration};

    #[test]
    fn suggested_toleration_renders_as_yaml() {
        let valued = Taint {
            key: "dedicated".into(),
            value: "true".into(),
            effect: Effect::NoSchedule,
        };
        assert_eq!(
            toleration_yaml(&taints::suggested_toleration(&valued), 2),
            "  - key: \"dedicated\"\n    operator: \"Equal\"\n    value: \"true\"\n    \
             effect: \"NoSchedule\"\n"
        );
        let bare = Taint {
            key: "nvidia.com/gpu".into(),
            value: String::new(),
            effect: Effect::NoSchedule,
        };
        assert_eq!(
            toleration_yaml(&taints::suggested_toleration(&bare), 0),
            "- key: \"nvidia.com/gpu\"\n  operator: \"Exists\"\n  effect: \"NoSchedule\"\n"
        );
        let odd = Toleration {
            key: "k".into(),
            operator: TolerationOperator::Equal,
            value: "a\"b\\c".into(),
            effect: None,
        };
        assert_eq!(
            toleration_yaml(&odd, 0),
            "- key: \"k\"\n  operator: \"Equal\"\n  value: \"a\\\"b\\\\c\"\n"
        );
    }
}
