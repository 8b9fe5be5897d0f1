//! NodeOverlays as core's NodeOverlay controller applies them: one test per behaviour of
//! `pkg/controllers/nodeoverlay/suite_test.go` (Karpenter v1.14.3) that karplint models,
//! named after the upstream `It`, on the built-in catalog.

use super::*;
use crate::karpenter::catalog::Catalog;
use crate::karpenter::sim::Simulator;

const FUSE: &str = "smarter-devices/fuse";

/// A NodePool `name` with template labels `labels` (flow-style map body).
fn pool(name: &str, labels: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  template:
    metadata: {{labels: {{{labels}}}}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements: [{{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, m6g]}}]
---
"
    )
}

/// A NodeOverlay `name` with the fields of its `spec` (flow-style map body).
fn overlay(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {{name: {name}}}
spec: {{{spec}}}
---
"
    )
}

/// Runs `check` on the simulator of `yaml`.
fn with_sim(yaml: &str, check: impl FnOnce(&Simulator)) {
    let objects = crate::parse::parse_source(0, yaml, false, false).objects;
    let index = Index::new(&objects);
    let sim = Simulator::new(&index, Catalog::builtin(), Default::default());
    check(&sim);
}

/// The capacity of `resource` on type `it` of pool `name`.
fn capacity(sim: &Simulator, name: &str, it: &str, resource: &str) -> Option<Quantity> {
    let pool = sim.pools.iter().find(|p| p.name == name).expect("the pool");
    let t = pool.types().find(|t| t.it.name == it).expect("the type");
    t.capacity_of(resource)
}

#[test]
fn should_apply_capacity_adjustments_for_instances_types() {
    let yaml = pool("default", "") + &overlay("fuse", "capacity: {smarter-devices/fuse: 5}");
    with_sim(&yaml, |sim| {
        assert_eq!(
            capacity(sim, "default", "m5.large", FUSE),
            Some(Quantity::from_units(5))
        );
        let pool = &sim.pools[0];
        let t = pool
            .types()
            .find(|t| t.it.name == "m5.large")
            .expect("m5.large");
        assert_eq!(t.allocatable().get_or_zero(FUSE), Quantity::from_units(5));
        assert!(sim.overlay_notes().is_empty());
    });
}

#[test]
fn should_not_apply_capacity_adjustments_for_instances_types_that_do_not_overlap() {
    let yaml = pool("default", "")
        + &overlay(
            "fuse",
            "requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}], capacity: {smarter-devices/fuse: 5}",
        );
    with_sim(&yaml, |sim| {
        assert_eq!(capacity(sim, "default", "m5.large", FUSE), None);
        assert_eq!(
            capacity(sim, "default", "m6g.large", FUSE),
            Some(Quantity::from_units(5))
        );
    });
}

#[test]
fn should_apply_higher_weight_overlay_when_multiple_overlays_match_the_same_instance_type() {
    let req =
        "requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]";
    let yaml = pool("default", "")
        + &overlay(
            "overlay-a",
            &format!("{req}, weight: 10, capacity: {{smarter-devices/fuse: 5}}"),
        )
        + &overlay(
            "overlay-b",
            &format!("{req}, weight: 20, capacity: {{smarter-devices/fuse: 99}}"),
        );
    with_sim(&yaml, |sim| {
        assert_eq!(
            capacity(sim, "default", "m5.large", FUSE),
            Some(Quantity::from_units(99))
        );
        assert!(
            sim.overlay_notes().is_empty(),
            "different weights never conflict"
        );
    });
}

#[test]
fn should_update_capacity_for_instance_types_from_multiple_overlays() {
    let yaml = pool("default", "")
        + &overlay(
            "overlay-a",
            "weight: 10, capacity: {smarter-devices/fuse: 5}",
        )
        + &overlay("overlay-b", "weight: 20, capacity: {example.com/dongle: 2}");
    with_sim(&yaml, |sim| {
        assert_eq!(
            capacity(sim, "default", "m5.large", FUSE),
            Some(Quantity::from_units(5))
        );
        assert_eq!(
            capacity(sim, "default", "m5.large", "example.com/dongle"),
            Some(Quantity::from_units(2))
        );
    });
}

#[test]
fn should_fail_when_requirements_overlays_overlap() {
    // Equal weights: overlay-b comes first (names descending), and overlay-a then prices
    // the arm64 types' offerings overlay-b priced.
    let yaml = pool("default", "")
        + &overlay(
            "overlay-a",
            "requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}], weight: 10, price: \"1.03\"",
        )
        + &overlay(
            "overlay-b",
            "requirements: [{key: karpenter.sh/capacity-type, operator: Exists}], weight: 10, price: \"23\"",
        );
    with_sim(&yaml, |sim| {
        let notes = sim.overlay_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("NodeOverlay overlay-a is not applied"),
            "{notes:?}"
        );
    });
}

#[test]
fn should_succeed_with_requirements_overlays_dont_overlap() {
    let yaml = pool("default", "")
        + &overlay(
            "overlay-a",
            "requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}], weight: 10, capacity: {smarter-devices/fuse: 1}",
        )
        + &overlay(
            "overlay-b",
            "requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}], weight: 10, capacity: {smarter-devices/fuse: 2}",
        );
    with_sim(&yaml, |sim| {
        assert!(sim.overlay_notes().is_empty());
        assert_eq!(
            capacity(sim, "default", "m6g.large", FUSE),
            Some(Quantity::from_units(1))
        );
        assert_eq!(
            capacity(sim, "default", "m5.large", FUSE),
            Some(Quantity::from_units(2))
        );
    });
}

#[test]
fn should_fail_with_conflicting_capacity_overlays_with_overlapping_requirements() {
    let yaml = pool("default", "")
        + &overlay(
            "overlay-a",
            "weight: 10, capacity: {smarter-devices/fuse: 1}",
        )
        + &overlay(
            "overlay-b",
            "weight: 10, capacity: {smarter-devices/fuse: 2}",
        );
    with_sim(&yaml, |sim| {
        // overlay-b is applied first and stays; overlay-a is left out whole.
        assert_eq!(
            capacity(sim, "default", "m5.large", FUSE),
            Some(Quantity::from_units(2))
        );
        let notes = sim.overlay_notes();
        assert!(
            notes.len() == 1 && notes[0].contains("overlay-a"),
            "{notes:?}"
        );
    });
}

#[test]
fn should_only_apply_override_for_nodepool_that_defined_in_the_overlay_requirements() {
    let yaml = pool("a", "")
        + &pool("b", "")
        + &overlay(
            "fuse",
            "requirements: [{key: karpenter.sh/nodepool, operator: In, values: [a]}], capacity: {smarter-devices/fuse: 5}",
        );
    with_sim(&yaml, |sim| {
        assert_eq!(
            capacity(sim, "a", "m5.large", FUSE),
            Some(Quantity::from_units(5))
        );
        assert_eq!(capacity(sim, "b", "m5.large", FUSE), None);
    });
}

#[test]
fn should_only_apply_price_adjustments_for_nodeclaim_spec_labels_that_defined_in_the_overlay_requirements()
 {
    // A custom label only the template of `team-a` defines: `Compatible` without undefined
    // labels allowed selects that pool alone.
    let yaml = pool("team-a", "team: a")
        + &pool("other", "")
        + &overlay(
            "fuse",
            "requirements: [{key: team, operator: In, values: [a]}], capacity: {smarter-devices/fuse: 5}",
        );
    with_sim(&yaml, |sim| {
        assert_eq!(
            capacity(sim, "team-a", "m5.large", FUSE),
            Some(Quantity::from_units(5))
        );
        assert_eq!(capacity(sim, "other", "m5.large", FUSE), None);
    });
}

#[test]
fn should_fail_validation_for_invalid_capacity_values() {
    let yaml = pool("default", "") + &overlay("cpu", "capacity: {cpu: 100}");
    with_sim(&yaml, |sim| {
        assert_eq!(
            capacity(sim, "default", "m5.large", "cpu"),
            Some(Quantity::from_units(2))
        );
        let notes = sim.overlay_notes();
        assert_eq!(
            notes,
            [
                "NodeOverlay cpu is never applied (Karpenter's validation rejects it): capacity cpu: invalid resource restricted"
            ]
        );
    });
}

#[test]
fn should_fail_validation_for_invalid_requirements_values() {
    let yaml = pool("default", "")
        + &overlay(
            "restricted",
            "requirements: [{key: karpenter.sh/custom, operator: Exists}], capacity: {smarter-devices/fuse: 5}",
        );
    with_sim(&yaml, |sim| {
        assert_eq!(capacity(sim, "default", "m5.large", FUSE), None);
        let notes = sim.overlay_notes();
        assert!(
            notes.len() == 1 && notes[0].contains("restricted"),
            "{notes:?}"
        );
    });
}

#[test]
fn an_overlay_changes_nothing_when_the_feature_gate_is_off() {
    let yaml = pool("default", "") + &overlay("fuse", "capacity: {smarter-devices/fuse: 5}");
    let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
    let index = Index::new(&objects);
    let sim =
        Simulator::new(&index, Catalog::builtin(), Default::default()).with_node_overlays(false);
    assert_eq!(capacity(&sim, "default", "m5.large", FUSE), None);
    assert_eq!(sim.overlay_notes().len(), 1);
}

/// Core's `AdjustedPrice` (`cloudprovider/types.go`).
#[test]
fn adjusted_price() {
    for (price, change, want) in [
        (1.0, "", 1.0),
        (1.0, "0.5", 0.5),
        (1.0, "+0.25", 1.25),
        (1.0, "-0.25", 0.75),
        (1.0, "+10%", 1.1),
        (1.0, "-50%", 0.5),
        (1.0, "-100%", 0.0),
        (1.0, "-2", 0.0),
    ] {
        let got = if change.is_empty() {
            price
        } else {
            super::adjusted_price(price, change)
        };
        assert!(
            (got - want).abs() < 1e-9,
            "{price} {change}: {got} != {want}"
        );
    }
}

/// The NodeOverlay CRD's patterns for `price` and `priceAdjustment`.
#[test]
fn price_patterns() {
    for (s, ok) in [
        ("1", true),
        ("1.5", true),
        ("1.", false),
        ("-1", false),
        ("", false),
    ] {
        assert_eq!(is_price(s), ok, "price {s:?}");
    }
    for (s, ok) in [
        ("+1", true),
        ("-0.5", true),
        ("+.5", true),
        ("+150%", true),
        ("-10%", true),
        ("-10.5%", true),
        ("-100%", true),
        ("-150%", false),
        ("10%", false),
        ("+", false),
        ("+1.", false),
    ] {
        assert_eq!(is_adjustment(s), ok, "adjustment {s:?}");
    }
}

#[test]
fn a_price_overlay_changes_the_launched_type_price() {
    let o = PoolOverlay {
        capacity: BTreeMap::new(),
        price: [(
            3,
            [(
                Offering {
                    capacity_type: "on-demand",
                    zone: None,
                },
                "+1".to_string(),
            )]
            .into(),
        )]
        .into(),
    };
    assert!((o.price(3, "on-demand", 0.5, 0) - 1.5).abs() < 1e-9);
    assert!((o.price(3, "spot", 0.5, 0) - 0.5).abs() < 1e-9);
    assert!((o.price(4, "on-demand", 0.5, 0) - 0.5).abs() < 1e-9);
}

#[test]
fn should_pass_with_price_overlays_of_one_weight_on_mutually_exclusive_requirements() {
    let generation = |n: &str, adj: &str| {
        overlay(
            &format!("penalize-gen{n}"),
            &format!(
                "weight: 10, requirements: [{{key: karpenter.k8s.aws/instance-generation, operator: In, values: [\"{n}\"]}}], priceAdjustment: \"{adj}\""
            ),
        )
    };
    let yaml = pool("default", "")
        + &generation("5", "+45%")
        + &generation("6", "+30%")
        + &generation("7", "+15%");
    with_sim(&yaml, |sim| {
        assert!(sim.overlay_notes().is_empty(), "{:?}", sim.overlay_notes());
    });
}
