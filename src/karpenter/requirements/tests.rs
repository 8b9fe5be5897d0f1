//! Unit and property tests for the requirement algebra: one unit test per case
//! karpenter-model §2–§3 names, and proptest properties that pin the set semantics down on a small
//! value universe.

use super::*;
use proptest::prelude::*;

fn req(key: &str, op: &str, values: &[&str]) -> Requirement {
    let op: Operator = op.parse().expect("operator");
    Requirement::new(key, op, values.iter().copied()).expect("valid requirement")
}

fn reqs(list: &[(&str, &str, &[&str])]) -> Requirements {
    list.iter().map(|(k, op, v)| req(k, op, v)).collect()
}

const ZONE: &str = "topology.kubernetes.io/zone";
const ARCH: &str = "kubernetes.io/arch";
const CPU: &str = "karpenter.k8s.aws/instance-cpu";
const TEAM: &str = "example.com/team";

// --- operators and construction --------------------------------------------------------------

#[test]
fn operators_parse_and_unknown_is_an_error() {
    for op in Operator::ALL {
        assert_eq!(op.as_str().parse::<Operator>(), Ok(op));
    }
    assert_eq!(
        "Equals".parse::<Operator>(),
        Err(RequirementError::UnknownOperator("Equals".into()))
    );
    assert!("in".parse::<Operator>().is_err());
}

#[test]
fn constructor_validates_values() {
    let none: [&str; 0] = [];
    assert!(matches!(
        Requirement::new(ZONE, Operator::In, none),
        Err(RequirementError::MissingValues { .. })
    ));
    assert!(matches!(
        Requirement::new(ZONE, Operator::NotIn, none),
        Err(RequirementError::MissingValues { .. })
    ));
    assert!(matches!(
        Requirement::new(ZONE, Operator::Exists, ["a"]),
        Err(RequirementError::UnexpectedValues { .. })
    ));
    assert!(matches!(
        Requirement::new(CPU, Operator::Gt, ["1", "2"]),
        Err(RequirementError::NotSingleValue { count: 2, .. })
    ));
    assert!(matches!(
        Requirement::new(CPU, Operator::Lt, none),
        Err(RequirementError::NotSingleValue { count: 0, .. })
    ));
    assert!(matches!(
        Requirement::new(CPU, Operator::Gt, ["four"]),
        Err(RequirementError::NotAnInteger { .. })
    ));
    assert!(matches!(
        Requirement::new(CPU, Operator::Gt, [i64::MAX.to_string()]),
        Err(RequirementError::OutOfRange { .. })
    ));
    assert!(matches!(
        Requirement::new(CPU, Operator::Lt, [i64::MIN.to_string()]),
        Err(RequirementError::OutOfRange { .. })
    ));
}

#[test]
fn gt_and_lt_are_canonicalized_to_inclusive_bounds() {
    let gt = req(CPU, "Gt", &["4"]);
    assert_eq!(gt.greater_than_or_equal(), Some(5));
    assert_eq!(gt.operator(), Operator::Exists);
    assert_eq!(gt.to_string(), "karpenter.k8s.aws/instance-cpu Exists >=5");
    assert_eq!(
        gt.to_string_up_to_v1_8(),
        "karpenter.k8s.aws/instance-cpu Exists >4"
    );
    let lt = req(CPU, "Lt", &["4"]);
    assert_eq!(lt.less_than_or_equal(), Some(3));
    assert_eq!(lt.to_string(), "karpenter.k8s.aws/instance-cpu Exists <=3");
    assert_eq!(req(CPU, "Gte", &["4"]), req(CPU, "Gt", &["3"]));
    assert_eq!(req(CPU, "Lte", &["4"]), req(CPU, "Lt", &["5"]));
}

#[test]
fn aliases_are_normalized() {
    assert_eq!(req("beta.kubernetes.io/arch", "In", &["arm64"]).key(), ARCH);
    assert_eq!(
        req("failure-domain.beta.kubernetes.io/zone", "In", &["a"]).key(),
        ZONE
    );
    assert_eq!(
        req("topology.ebs.csi.aws.com/zone", "In", &["a"]).key(),
        ZONE
    );
    assert_eq!(
        normalize_key("failure-domain.beta.kubernetes.io/region"),
        "topology.kubernetes.io/region"
    );
    assert_eq!(
        normalize_key("beta.kubernetes.io/instance-type"),
        "node.kubernetes.io/instance-type"
    );
    assert_eq!(normalize_key("beta.kubernetes.io/os"), "kubernetes.io/os");
    assert_eq!(normalize_key(TEAM), TEAM);
    // the template's zone and the pod's alias land on the same key
    let template = reqs(&[(ZONE, "In", &["us-east-1a"])]);
    let pod = reqs(&[("topology.ebs.csi.aws.com/zone", "In", &["us-east-1b"])]);
    assert!(matches!(
        template.compatible(&pod),
        Err(IncompatibleError::Conflict { .. })
    ));
}

// --- rendering --------------------------------------------------------------------------------

#[test]
fn display_matches_karpenter_requirement_string() {
    assert_eq!(
        req(ZONE, "In", &["b", "a"]).to_string(),
        "topology.kubernetes.io/zone In [a b]"
    );
    assert_eq!(
        req(ZONE, "NotIn", &["a"]).to_string(),
        "topology.kubernetes.io/zone NotIn [a]"
    );
    assert_eq!(
        req(ZONE, "Exists", &[]).to_string(),
        "topology.kubernetes.io/zone Exists"
    );
    assert_eq!(
        req(ZONE, "DoesNotExist", &[]).to_string(),
        "topology.kubernetes.io/zone DoesNotExist"
    );
    let many = req(
        "node.kubernetes.io/instance-type",
        "In",
        &["g", "f", "e", "d", "c", "b", "a"],
    );
    assert_eq!(
        many.to_string(),
        "node.kubernetes.io/instance-type In [a b c d e and 2 others]"
    );
    let five = req(ZONE, "In", &["e", "d", "c", "b", "a"]);
    assert_eq!(
        five.to_string(),
        "topology.kubernetes.io/zone In [a b c d e]"
    );
    let bounded = req(CPU, "Gt", &["2"]).intersection(&req(CPU, "Lt", &["9"]));
    assert_eq!(
        bounded.to_string(),
        "karpenter.k8s.aws/instance-cpu Exists >=3 <=8"
    );
    let with_min =
        req("karpenter.k8s.aws/instance-family", "In", &["m5", "c5"]).with_min_values(Some(2));
    assert_eq!(
        with_min.to_string(),
        "karpenter.k8s.aws/instance-family In [c5 m5] minValues 2"
    );
    let not_in_bounded = req(CPU, "NotIn", &["4", "x"]).intersection(&req(CPU, "Gte", &["3"]));
    assert_eq!(
        not_in_bounded.to_string(),
        "karpenter.k8s.aws/instance-cpu NotIn [4] >=3"
    );
}

#[test]
fn requirements_display_is_sorted_comma_joined_and_hides_hostname() {
    let r = reqs(&[
        (ZONE, "In", &["a"]),
        (ARCH, "In", &["amd64"]),
        (LABEL_HOSTNAME, "In", &["node-1"]),
        (LABEL_NODEPOOL, "In", &["default"]),
    ]);
    assert_eq!(
        r.to_string(),
        "karpenter.sh/nodepool In [default], kubernetes.io/arch In [amd64], \
         topology.kubernetes.io/zone In [a]"
    );
}

// --- set semantics ------------------------------------------------------------------------------

#[test]
fn in_and_not_in_intersect_as_sets() {
    let a = req(ZONE, "In", &["a", "b", "c"]);
    let not_b = req(ZONE, "NotIn", &["b"]);
    let i = a.intersection(&not_b);
    assert_eq!(i.operator(), Operator::In);
    assert_eq!(i.to_string(), "topology.kubernetes.io/zone In [a c]");
    let both_not = not_b.intersection(&req(ZONE, "NotIn", &["c"]));
    assert_eq!(
        both_not.to_string(),
        "topology.kubernetes.io/zone NotIn [b c]"
    );
    let dne = a.intersection(&req(ZONE, "DoesNotExist", &[]));
    assert_eq!(dne.operator(), Operator::DoesNotExist);
    assert!(dne.is_empty());
}

#[test]
fn crossing_bounds_give_does_not_exist() {
    let i = req(CPU, "Gt", &["5"]).intersection(&req(CPU, "Lt", &["6"]));
    assert_eq!(i.operator(), Operator::DoesNotExist);
    let single = req(CPU, "Gte", &["6"]).intersection(&req(CPU, "Lte", &["6"]));
    assert_eq!(single.operator(), Operator::Exists);
    assert!(single.has("6"));
    assert!(!single.has("7"));
}

#[test]
fn gt_lt_with_non_integer_values_are_never_satisfied() {
    let gt = req(CPU, "Gt", &["2"]);
    assert!(!gt.has("four"));
    assert!(!gt.has("4.5"));
    assert!(gt.has("4"));
    assert!(
        gt.has("+4"),
        "Go's Atoi accepts a sign, so does i64::from_str"
    );
    // a template label with a non-integer value can never meet a pod's Gt
    let template = Requirements::from_labels([(TEAM, "big")]);
    let pod = reqs(&[(TEAM, "Gt", &["1"])]);
    assert_eq!(
        template.compatible(&pod).map_err(|e| e.to_string()),
        Err(
            "key example.com/team, example.com/team Exists >=2 not in example.com/team In [big]"
                .to_owned()
        )
    );
}

#[test]
fn any_picks_an_allowed_value() {
    assert_eq!(req(ZONE, "In", &["b", "a"]).any().as_deref(), Some("a"));
    assert_eq!(req(ZONE, "Exists", &[]).any().as_deref(), Some("0"));
    assert_eq!(req(CPU, "NotIn", &["0", "1"]).any().as_deref(), Some("2"));
    assert_eq!(req(CPU, "Gt", &["7"]).any().as_deref(), Some("8"));
    assert_eq!(req(ZONE, "DoesNotExist", &[]).any(), None);
    let full = req(CPU, "NotIn", &["3"]).intersection(&req(CPU, "Gte", &["3"]));
    let full = full.intersection(&req(CPU, "Lte", &["3"]));
    assert_eq!(full.any(), None);
    assert!(
        !full.is_empty(),
        "Karpenter's Len ignores bounds on complements"
    );
}

#[test]
fn add_intersects_same_key() {
    let mut r = Requirements::new();
    r.add(req(ZONE, "In", &["a", "b"]));
    r.add(req(ZONE, "In", &["b", "c"]));
    assert_eq!(
        r.get(ZONE).map(ToString::to_string).as_deref(),
        Some("topology.kubernetes.io/zone In [b]")
    );
    assert!(r.has("failure-domain.beta.kubernetes.io/zone"));
    assert_eq!(r.keys().collect::<Vec<_>>(), vec![ZONE]);
    assert_eq!(r.get_or_exists(ARCH).operator(), Operator::Exists);
    assert_eq!(r.len(), 1);
}

// --- Compatible: karpenter-model §2.2 / §3.3 cases -----------------------------------------------

#[test]
fn custom_label_without_known_values_is_rejected() {
    let template = reqs(&[(ARCH, "In", &["amd64"])]);
    let pod = Requirements::from_labels([("eks.amazonaws.com/nodegroup", "ng-1")]);
    let err = template.compatible(&pod).expect_err("must fail");
    assert_eq!(
        err.karpenter_message(),
        "incompatible requirements, label \"eks.amazonaws.com/nodegroup\" does not have known values"
    );
    assert_eq!(err.key(), "eks.amazonaws.com/nodegroup");
}

#[test]
fn typo_hint_points_at_a_known_key() {
    let template = Requirements::new();
    let pod = Requirements::from_labels([("example.com/instance-type", "m5.large")]);
    assert_eq!(
        template.compatible(&pod).map_err(|e| e.to_string()),
        Err(
            "label \"example.com/instance-type\" does not have known values \
             (typo of \"node.kubernetes.io/instance-type\"?)"
                .to_owned()
        )
    );
    // a key contained in a template key
    let template = Requirements::from_labels([("example.com/team-name", "x")]);
    let pod = Requirements::from_labels([("team", "x")]);
    assert_eq!(
        template.compatible(&pod),
        Err(IncompatibleError::UndefinedLabel {
            key: "team".into(),
            hint: Some("example.com/team-name".into())
        })
    );
}

#[test]
fn template_label_makes_a_key_known() {
    let template = Requirements::from_labels([(TEAM, "ml")]);
    assert_eq!(
        template.compatible(&Requirements::from_labels([(TEAM, "ml")])),
        Ok(())
    );
    let err = template
        .compatible(&Requirements::from_labels([(TEAM, "web")]))
        .expect_err("value mismatch");
    assert_eq!(
        err.karpenter_message(),
        "incompatible requirements, key example.com/team, example.com/team In [web] not in \
         example.com/team In [ml]"
    );
}

#[test]
fn not_in_and_does_not_exist_on_undefined_key_are_fine() {
    let template = Requirements::new();
    assert_eq!(
        template.compatible(&reqs(&[(TEAM, "NotIn", &["web"])])),
        Ok(())
    );
    assert_eq!(
        template.compatible(&reqs(&[(TEAM, "DoesNotExist", &[])])),
        Ok(())
    );
}

#[test]
fn exists_and_gt_on_undefined_key_are_not() {
    let template = Requirements::new();
    for pod in [
        reqs(&[(TEAM, "Exists", &[])]),
        reqs(&[(TEAM, "Gt", &["3"])]),
    ] {
        assert!(matches!(
            template.compatible(&pod),
            Err(IncompatibleError::UndefinedLabel { .. })
        ));
    }
}

#[test]
fn nodepool_exists_makes_a_key_known() {
    let template = reqs(&[(TEAM, "Exists", &[])]);
    assert_eq!(
        template.compatible(&Requirements::from_labels([(TEAM, "anything")])),
        Ok(())
    );
    assert_eq!(template.compatible(&reqs(&[(TEAM, "Exists", &[])])), Ok(()));
}

#[test]
fn undefined_well_known_key_passes() {
    let template = Requirements::new();
    let pod = reqs(&[(ZONE, "In", &["us-east-1a"]), (CPU, "Gt", &["4"])]);
    assert_eq!(template.compatible(&pod), Ok(()));
}

#[test]
fn zone_outside_nodepool() {
    let template = reqs(&[(ZONE, "In", &["us-east-1a", "us-east-1b"])]);
    let pod = Requirements::from_labels([(ZONE, "us-east-1c")]);
    assert_eq!(
        template.compatible(&pod).map_err(|e| e.karpenter_message()),
        Err(
            "incompatible requirements, key topology.kubernetes.io/zone, \
             topology.kubernetes.io/zone In [us-east-1c] not in \
             topology.kubernetes.io/zone In [us-east-1a us-east-1b]"
                .to_owned()
        )
    );
}

#[test]
fn arch_mismatch() {
    let template = reqs(&[(ARCH, "In", &["amd64"])]);
    let pod = Requirements::from_labels([("beta.kubernetes.io/arch", "arm64")]);
    let err = template.compatible(&pod).expect_err("arch mismatch");
    match &err {
        IncompatibleError::Conflict { key, pod, node } => {
            assert_eq!(&**key, ARCH);
            assert_eq!(pod.to_string(), "kubernetes.io/arch In [arm64]");
            assert_eq!(node.to_string(), "kubernetes.io/arch In [amd64]");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn cpu_lt_vs_pod_gt_conflicts() {
    let template = reqs(&[(CPU, "Lt", &["5"])]);
    let pod = reqs(&[(CPU, "Gt", &["5"])]);
    assert_eq!(
        template.compatible(&pod).map_err(|e| e.to_string()),
        Err(
            "key karpenter.k8s.aws/instance-cpu, karpenter.k8s.aws/instance-cpu Exists >=6 not \
             in karpenter.k8s.aws/instance-cpu Exists <=4"
                .to_owned()
        )
    );
    // overlapping bounds are fine
    assert_eq!(reqs(&[(CPU, "Lt", &["9"])]).compatible(&pod), Ok(()));
}

#[test]
fn two_negative_requirements_never_conflict() {
    let template = reqs(&[(ZONE, "DoesNotExist", &[])]);
    assert_eq!(
        template.intersects(&reqs(&[(ZONE, "NotIn", &["a"])])),
        Ok(())
    );
    assert_eq!(
        template.intersects(&reqs(&[(ZONE, "DoesNotExist", &[])])),
        Ok(())
    );
    assert!(template.intersects(&reqs(&[(ZONE, "In", &["a"])])).is_err());
    assert!(
        template
            .intersects(&reqs(&[(ZONE, "Exists", &[])]))
            .is_err()
    );
}

#[test]
fn first_error_is_undefined_key_then_conflicts_in_key_order() {
    let template = reqs(&[(ZONE, "In", &["a"]), (ARCH, "In", &["amd64"])]);
    let pod = Requirements::from_labels([(ZONE, "b"), (ARCH, "arm64"), (TEAM, "x")]);
    let all = template.incompatibilities_with(&pod, LabelFlavor::KarpenterAws);
    let keys: Vec<&str> = all.iter().map(IncompatibleError::key).collect();
    assert_eq!(keys, vec![TEAM, ARCH, ZONE]);
    assert_eq!(
        template.compatible(&pod).map_err(|e| e.key().to_owned()),
        Err(TEAM.to_owned())
    );
}

#[test]
fn eks_auto_mode_uses_its_own_instance_labels() {
    let template = Requirements::new();
    let auto_pod = Requirements::from_labels([("eks.amazonaws.com/instance-category", "c")]);
    let aws_pod = Requirements::from_labels([("karpenter.k8s.aws/instance-category", "c")]);
    assert_eq!(
        template.compatible_with(&auto_pod, LabelFlavor::EksAutoMode),
        Ok(())
    );
    assert!(
        template
            .compatible_with(&aws_pod, LabelFlavor::EksAutoMode)
            .is_err()
    );
    assert!(template.compatible(&auto_pod).is_err());
    assert_eq!(template.compatible(&aws_pod), Ok(()));
    for suffix in AWS_INSTANCE_LABEL_SUFFIXES {
        let aws = format!("karpenter.k8s.aws/instance-{suffix}");
        let eks = format!("eks.amazonaws.com/instance-{suffix}");
        assert!(is_well_known(&aws), "{aws}");
        assert!(LabelFlavor::EksAutoMode.is_well_known(&eks), "{eks}");
    }
}

// --- label facts -----------------------------------------------------------------------------

#[test]
fn well_known_lists_contain_core() {
    // Core Karpenter's well-known labels (`pkg/apis/v1/labels.go` `WellKnownLabels`).
    const CORE_WELL_KNOWN_LABELS: &[&str] = &[
        "karpenter.sh/nodepool",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "karpenter.sh/capacity-type",
        "node.kubernetes.io/windows-build",
    ];
    for key in CORE_WELL_KNOWN_LABELS {
        assert!(is_well_known(key));
        assert!(LabelFlavor::EksAutoMode.is_well_known(key));
    }
    assert!(!is_well_known("karpenter.k8s.aws/instance-pods"));
    assert!(!is_well_known(LABEL_HOSTNAME));
}

#[test]
fn restricted_pod_labels_at_head() {
    assert!(restricted_pod_label(LABEL_HOSTNAME).is_some());
    assert!(restricted_pod_label("karpenter.sh/registered").is_some());
    assert!(restricted_pod_label("foo.karpenter.sh/x").is_some());
    assert!(restricted_pod_label("karpenter.k8s.aws/ec2nodeclass").is_some());
    assert_eq!(restricted_pod_label(LABEL_NODEPOOL), None);
    assert_eq!(restricted_pod_label(LABEL_CAPACITY_TYPE), None);
    assert_eq!(
        restricted_pod_label("karpenter.k8s.aws/instance-family"),
        None
    );
    assert_eq!(restricted_pod_label("node-role.kubernetes.io/worker"), None);
    assert_eq!(restricted_pod_label("kubernetes.io/foo"), None);
    assert_eq!(restricted_pod_label(TEAM), None);
}

// --- properties --------------------------------------------------------------------------------

const KEY: &str = "example.com/k";
/// Values requirements are built from: strings and small integers.
const UNIVERSE: &[&str] = &["a", "b", "c", "0", "1", "2", "3", "5", "8", "-1"];

/// Values membership is sampled over: the universe plus integers around every bound used.
fn samples() -> Vec<String> {
    let mut out: Vec<String> = UNIVERSE.iter().map(|s| (*s).to_owned()).collect();
    out.extend((-4..=12).map(|n: i64| n.to_string()));
    out.push("x".into());
    out.push("+3".into());
    out.sort();
    out.dedup();
    out
}

fn arb_requirement() -> impl Strategy<Value = Requirement> {
    let values = proptest::sample::subsequence(UNIVERSE, 1..=4);
    let numeric_op = prop_oneof![
        Just(Operator::Gt),
        Just(Operator::Lt),
        Just(Operator::Gte),
        Just(Operator::Lte)
    ];
    let set = prop_oneof![
        values.clone().prop_map(|v| Requirement::in_values(KEY, v)),
        values.prop_map(|v| Requirement::not_in(KEY, v)),
        Just(Requirement::exists(KEY)),
        Just(Requirement::does_not_exist(KEY)),
        (-3i64..10, numeric_op).prop_filter_map("valid numeric requirement", |(n, op)| {
            Requirement::new(KEY, op, [n.to_string()]).ok()
        }),
    ];
    (set, proptest::option::of(1u32..4)).prop_map(|(r, m)| r.with_min_values(m))
}

/// A requirement or the intersection of two, which reaches bounded `NotIn` sets and bounds on
/// both sides.
fn arb_composite() -> impl Strategy<Value = Requirement> {
    (arb_requirement(), proptest::option::of(arb_requirement()))
        .prop_map(|(a, b)| b.map_or(a.clone(), |b| a.intersection(&b)))
}

fn same_set(a: &Requirement, b: &Requirement) -> bool {
    a.is_complement() == b.is_complement()
        && a.is_empty() == b.is_empty()
        && samples().iter().all(|v| a.has(v) == b.has(v))
}

/// Requirements on a few keys: well-known, custom, and one only EKS Auto Mode knows, so
/// both the undefined-label and the conflict paths of `Compatible` are reached.
fn arb_requirements() -> impl Strategy<Value = Requirements> {
    let key = prop_oneof![
        Just(ZONE),
        Just(ARCH),
        Just(TEAM),
        Just(KEY),
        Just("eks.amazonaws.com/instance-cpu")
    ];
    proptest::collection::vec((key, arb_composite()), 0..5).prop_map(|list| {
        list.into_iter()
            .map(|(k, r)| Requirement::exists(k).intersection(&r))
            .collect()
    })
}

/// No requirement or one on a single key, so that requirements meet on it often.
fn arb_on_one_key() -> impl Strategy<Value = Requirements> {
    proptest::option::of(arb_composite()).prop_map(|r| r.into_iter().collect())
}

/// The labels of a few instance types, each `None` for a label the type lacks.
type TypeLabels = Vec<std::collections::BTreeMap<&'static str, Option<&'static str>>>;

fn arb_type_labels(types: std::ops::Range<usize>) -> impl Strategy<Value = TypeLabels> {
    proptest::collection::vec(
        proptest::collection::btree_map(
            prop_oneof![Just(ZONE), Just(ARCH), Just(TEAM), Just(KEY)],
            proptest::option::of(proptest::sample::select(UNIVERSE)),
            0..4,
        ),
        types,
    )
}

fn table_of(rows: &TypeLabels) -> TypeRows {
    TypeRows::from_labels(
        (rows.iter())
            .map(|r| r.iter().map(|(k, v)| (*k, *v)).collect())
            .collect(),
    )
}

proptest! {
    /// A NodeClaim starts from its NodePool's requirements and narrows by those of every
    /// pod that joins it; a pod that one such NodeClaim takes is never ruled out by its
    /// NodePool's [`Requirements::may_intersect_ok`].
    #[test]
    fn a_pool_may_intersect_whatever_its_nodeclaims_take(
        node in arb_on_one_key(),
        joined in proptest::collection::vec(arb_on_one_key(), 0..3),
        pod in arb_on_one_key(),
    ) {
        let mut claim = node.clone();
        for other in &joined {
            if !claim.intersects_ok(other) {
                return Ok(());
            }
            claim.add_all(other);
        }
        if claim.intersects_ok(&pod) {
            prop_assert!(node.may_intersect_ok(&pod), "{} then {:?} / {}", node, joined, pod);
        }
    }
}

proptest! {
    #[test]
    fn boolean_checks_match_the_erroring_ones(
        node in arb_requirements(),
        pod in arb_requirements(),
        eks in any::<bool>(),
    ) {
        let flavor = if eks { LabelFlavor::EksAutoMode } else { LabelFlavor::KarpenterAws };
        prop_assert_eq!(node.intersects_ok(&pod), node.intersects(&pod).is_ok(), "{} / {}", node, pod);
        prop_assert_eq!(
            node.compatible_with_ok(&pod, flavor),
            node.compatible_with(&pod, flavor).is_ok(),
            "{} / {}", node, pod
        );
        // The error is the first of all the incompatibilities.
        prop_assert_eq!(
            node.compatible_with(&pod, flavor).err(),
            node.incompatibilities_with(&pod, flavor).into_iter().next(),
            "{} / {}", node, pod
        );
    }

    #[test]
    fn type_rows_answer_as_the_maps(rows in arb_type_labels(1..4), pod in arb_requirements()) {
        let table = table_of(&rows);
        prop_assert_eq!(table.len(), rows.len());
        for (i, labels) in rows.iter().enumerate() {
            let node: Requirements = labels
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => Requirement::in_values(k, [*v]),
                    None => Requirement::does_not_exist(k),
                })
                .collect();
            let row = table.row(i);
            prop_assert_eq!(row.intersects_ok(&pod), node.intersects_ok(&pod), "{} / {}", node, pod);
            // A query built on any row of the table answers for every row.
            let query = table.row(0).query(&pod);
            prop_assert_eq!(row.meets(&query), node.intersects_ok(&pod), "{} / {}", node, pod);
            for key in [ZONE, ARCH, TEAM, KEY] {
                prop_assert_eq!(row.has(key), node.has(key));
                let any = node.get(key).and_then(Requirement::any);
                prop_assert_eq!(row.get(key).value().map(str::to_owned), any);
            }
        }
    }

    /// [`TypeRows::meeting`] of each requirement answers, for one requirement and for
    /// every pair, as the rows' `intersects_ok` of the requirements built together does
    /// (what `Pool::exclusion` relies on).
    #[test]
    fn rows_meeting_each_requirement_answer_every_pair(
        rows in arb_type_labels(0..5),
        pod in arb_requirements(),
    ) {
        let table = table_of(&rows);
        let all: Vec<&Requirement> = pod.iter().collect();
        let met = |rs: &[&Requirement]| {
            let reqs: Requirements = rs.iter().map(|r| (*r).clone()).collect();
            (0..table.len()).any(|i| table.row(i).intersects_ok(&reqs))
        };
        for (i, a) in all.iter().enumerate() {
            let met_a = table.meeting(a);
            prop_assert_eq!(met_a.len(), table.len());
            prop_assert_eq!(met_a.contains(&true), met(&[a]), "{}", a);
            for b in &all[i + 1..] {
                let met_b = table.meeting(b);
                let together = met_a.iter().zip(&met_b).any(|(x, y)| *x && *y);
                prop_assert_eq!(together, met(&[a, b]), "{} and {}", a, b);
            }
        }
    }

    #[test]
    fn intersection_is_commutative(a in arb_composite(), b in arb_composite()) {
        let ab = a.intersection(&b);
        let ba = b.intersection(&a);
        prop_assert!(same_set(&ab, &ba), "{ab} vs {ba}");
        prop_assert_eq!(ab.to_string(), ba.to_string());
    }

    #[test]
    fn intersection_is_empty_matches_the_built_intersection(a in arb_composite(), b in arb_composite()) {
        prop_assert_eq!(a.intersection_is_empty(&b), a.intersection(&b).is_empty(), "{} ∩ {}", a, b);
    }

    #[test]
    fn intersection_is_associative(a in arb_composite(), b in arb_composite(), c in arb_composite()) {
        let left = a.intersection(&b).intersection(&c);
        let right = a.intersection(&b.intersection(&c));
        prop_assert!(same_set(&left, &right), "{left} vs {right}");
    }

    #[test]
    fn intersection_is_idempotent(a in arb_composite()) {
        let aa = a.intersection(&a);
        prop_assert!(same_set(&aa, &a), "{aa} vs {a}");
        prop_assert_eq!(aa, a);
    }

    #[test]
    fn membership_of_intersection_is_conjunction(a in arb_composite(), b in arb_composite()) {
        let ab = a.intersection(&b);
        for v in samples() {
            prop_assert_eq!(ab.has(&v), a.has(&v) && b.has(&v), "value {} in {} ∩ {} = {}", v, a, b, ab);
        }
    }

    #[test]
    fn intersects_agrees_with_non_emptiness(node in arb_composite(), pod in arb_composite()) {
        let n: Requirements = std::iter::once(node.clone()).collect();
        let p: Requirements = std::iter::once(pod.clone()).collect();
        let empty = node.intersection(&pod).is_empty();
        let lenient = |r: &Requirement| matches!(r.operator(), Operator::NotIn | Operator::DoesNotExist);
        let expected_ok = !empty || (lenient(&node) && lenient(&pod));
        prop_assert_eq!(n.intersects(&p).is_ok(), expected_ok);
        // Karpenter never reports a conflict when a common value exists
        if samples().iter().any(|v| node.has(v) && pod.has(v)) {
            prop_assert!(n.intersects(&p).is_ok());
        }
        // and the well-known-key path of Compatible is exactly Intersects
        prop_assert_eq!(n.compatible(&p).is_ok(), n.intersects(&p).is_ok());
    }

    #[test]
    fn display_round_trips_through_expressions(a in arb_composite()) {
        let rebuilt: Requirements = a
            .expressions()
            .into_iter()
            .map(|(op, values)| Requirement::new(a.key(), op, values))
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let rebuilt = rebuilt.get(KEY).cloned().map(|r| r.with_min_values(a.min_values()));
        prop_assert_eq!(rebuilt.as_ref().map(ToString::to_string), Some(a.to_string()));
        prop_assert!(rebuilt.is_some_and(|r| same_set(&r, &a)));
    }

    #[test]
    fn requirements_display_is_order_independent(
        list in proptest::collection::vec(arb_composite(), 0..4),
        keys in proptest::collection::vec(prop_oneof![Just(ZONE), Just(ARCH), Just(TEAM)], 4),
    ) {
        let keyed: Vec<Requirement> = list
            .iter()
            .zip(&keys)
            .map(|(r, k)| Requirement::exists(k).intersection(r))
            .collect();
        let forward: Requirements = keyed.iter().cloned().collect();
        let backward: Requirements = keyed.iter().rev().cloned().collect();
        prop_assert_eq!(forward.to_string(), backward.to_string());
    }

    /// Requirements added in any order hold one requirement per key, sorted, each the
    /// intersection of those added for it (Karpenter's `Requirements.Add`), as a map of
    /// key to requirement would.
    #[test]
    fn add_keeps_one_sorted_intersection_per_key(
        list in proptest::collection::vec(arb_composite(), 0..6),
        keys in proptest::collection::vec(prop_oneof![Just(ZONE), Just(ARCH), Just(TEAM)], 6),
    ) {
        let mut model = std::collections::BTreeMap::<&str, Requirement>::new();
        let mut added = Requirements::new();
        for (r, k) in list.iter().zip(&keys) {
            let r = Requirement::exists(k).intersection(r);
            let merged = match model.get(k) {
                Some(old) => r.intersection(old),
                None => r.clone(),
            };
            model.insert(k, merged);
            added.add(r);
        }
        prop_assert_eq!(added.keys().collect::<Vec<_>>(), model.keys().copied().collect::<Vec<_>>());
        for (k, r) in &model {
            prop_assert_eq!(added.get(k), Some(r));
            prop_assert!(added.has(k));
        }
        prop_assert_eq!(added.len(), model.len());
    }

    #[test]
    fn any_is_a_member(a in arb_composite()) {
        if let Some(v) = a.any() {
            prop_assert!(a.has(&v), "{} not in {}", v, a);
        } else {
            prop_assert!(samples().iter().all(|v| !a.has(v)));
        }
    }

    /// The short-string search `labelHint` uses agrees with `str::contains`, over label-like
    /// strings of a small alphabet where matches and near-matches are frequent.
    #[test]
    fn holds_is_str_contains(hay in "[a-c/.]{0,12}", needle in "[a-c/.]{0,4}") {
        prop_assert_eq!(super::holds(&hay, &needle), hay.contains(needle.as_str()));
    }
}
