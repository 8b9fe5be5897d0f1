//! `Preferences.Relax` (core `provisioning/scheduling/preferences.go`): what Karpenter takes
//! away from a pod that failed to schedule, one thing per try, until nothing is left to
//! relax. This is the one place that order is written; the pod's node-requirement attempts
//! ([`super::pod::attempts`]), the per-template verdict ([`super::sim`]) and the batch's
//! relaxation steps ([`super::scheduler`]) each walk [`Relaxable::order`].

use super::pod::Attempt;

/// One relaxation, named after the function of `Relax` that makes it. `Relax` makes the
/// first that applies, so a pod's relaxations come in this order, each kind until none of
/// it is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relaxation {
    /// `removeRequiredNodeAffinityTerm`: the first of the OR-ed required node-affinity terms,
    /// while more than one is left.
    RequiredNodeTerm,
    /// `removePreferredPodAffinityTerm`: the heaviest preferred pod-affinity term.
    PreferredPodAffinityTerm,
    /// `removePreferredPodAntiAffinityTerm`: the heaviest preferred pod anti-affinity term.
    PreferredPodAntiAffinityTerm,
    /// `removePreferredNodeAffinityTerm`: the heaviest preferred node-affinity term.
    PreferredNodeTerm,
    /// `removeTopologySpreadScheduleAnyway`: the first `ScheduleAnyway` spread constraint,
    /// swapped out with the last one.
    ScheduleAnywaySpread,
    /// `toleratePreferNoScheduleTaints`: a toleration of every `PreferNoSchedule` taint, when
    /// some NodePool has one (`ToleratePreferNoSchedule`).
    PreferNoScheduleTaints,
}

/// What of a pod `Relax` can take away, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Relaxable {
    /// Required node-affinity terms (OR-ed); all but one can go.
    pub required_node_terms: usize,
    pub preferred_pod_affinity_terms: usize,
    pub preferred_pod_anti_affinity_terms: usize,
    pub preferred_node_terms: usize,
    /// Spread constraints with `whenUnsatisfiable: ScheduleAnyway`.
    pub schedule_anyway_spreads: usize,
    /// Some NodePool has a `PreferNoSchedule` taint.
    pub prefer_no_schedule: bool,
}

impl Relaxable {
    /// Every relaxation `Relax` makes, in order, until it reports that nothing is left.
    pub fn order(&self) -> Vec<Relaxation> {
        use Relaxation::*;
        let kinds = [
            (RequiredNodeTerm, self.required_node_terms.saturating_sub(1)),
            (PreferredPodAffinityTerm, self.preferred_pod_affinity_terms),
            (
                PreferredPodAntiAffinityTerm,
                self.preferred_pod_anti_affinity_terms,
            ),
            (PreferredNodeTerm, self.preferred_node_terms),
            (ScheduleAnywaySpread, self.schedule_anyway_spreads),
            (PreferNoScheduleTaints, usize::from(self.prefer_no_schedule)),
        ];
        (kinds.into_iter())
            .flat_map(|(kind, n)| std::iter::repeat_n(kind, n))
            .collect()
    }

    /// The relaxations that change the pod's node requirements or tolerations: each gives
    /// the pod a new [`Attempt`].
    pub fn node_order(&self) -> impl Iterator<Item = Relaxation> {
        self.order().into_iter().filter(|r| r.changes_attempt())
    }
}

impl Relaxation {
    /// Whether the relaxation changes the pod's node requirements or tolerations, rather
    /// than its topology terms.
    pub fn changes_attempt(self) -> bool {
        matches!(
            self,
            Relaxation::RequiredNodeTerm
                | Relaxation::PreferredNodeTerm
                | Relaxation::PreferNoScheduleTaints
        )
    }
}

/// The pod's `attempts` (its node-affinity relaxations, [`super::pod::attempts`]) followed,
/// when some NodePool has a `PreferNoSchedule` taint, by the last of them tolerating those
/// taints: the last relaxation of [`Relaxable::order`].
pub fn tolerating_prefer_no_schedule(
    mut attempts: Vec<Attempt>,
    prefer_no_schedule: bool,
) -> Vec<Attempt> {
    if prefer_no_schedule && let Some(last) = attempts.last() {
        let mut tolerating = last.clone();
        tolerating.tolerates_prefer_no_schedule = true;
        attempts.push(tolerating);
    }
    attempts
}

#[cfg(test)]
mod tests {
    use super::Relaxation::*;
    use super::*;

    /// Core `preferences_test.go`: `Relax` removes required node-affinity terms (leaving
    /// one), then preferred pod affinity, preferred pod anti-affinity, preferred node
    /// affinity, `ScheduleAnyway` spreads, and last tolerates `PreferNoSchedule` taints.
    #[test]
    fn relax_order() {
        let cases = [
            ("nothing to relax", Relaxable::default(), vec![]),
            (
                "a single required term stays",
                Relaxable {
                    required_node_terms: 1,
                    ..Relaxable::default()
                },
                vec![],
            ),
            (
                "every kind, in Relax's order",
                Relaxable {
                    required_node_terms: 3,
                    preferred_pod_affinity_terms: 1,
                    preferred_pod_anti_affinity_terms: 1,
                    preferred_node_terms: 2,
                    schedule_anyway_spreads: 1,
                    prefer_no_schedule: true,
                },
                vec![
                    RequiredNodeTerm,
                    RequiredNodeTerm,
                    PreferredPodAffinityTerm,
                    PreferredPodAntiAffinityTerm,
                    PreferredNodeTerm,
                    PreferredNodeTerm,
                    ScheduleAnywaySpread,
                    PreferNoScheduleTaints,
                ],
            ),
        ];
        for (behaviour, relaxable, want) in cases {
            assert_eq!(relaxable.order(), want, "{behaviour}");
        }
    }

    #[test]
    fn node_order_keeps_what_changes_the_attempt() {
        let relaxable = Relaxable {
            required_node_terms: 2,
            preferred_pod_affinity_terms: 2,
            preferred_node_terms: 1,
            schedule_anyway_spreads: 2,
            ..Relaxable::default()
        };
        let order: Vec<Relaxation> = relaxable.node_order().collect();
        assert_eq!(order, vec![RequiredNodeTerm, PreferredNodeTerm]);
    }
}
