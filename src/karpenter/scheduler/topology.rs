//! Scheduler, topology: the topology groups of one batch, which count the batch's pods per
//! domain of a topology key and narrow each NodeClaim to the domains a pod's topology
//! spread constraints and pod (anti-)affinity terms leave it.
//!
//! Mirrors, at core v1.14.3, `pkg/controllers/provisioning/scheduling/topology.go`
//! (`Topology`: `NewTopology`, `buildDomainGroups`, `AddRequirements`, `Record`,
//! `Register`), `topologygroup.go` (`TopologyGroup`: `nextDomainTopologySpread`,
//! `domainMinCount`, `nextDomainAffinity`, `nextDomainAntiAffinity`, `selects`),
//! `topologynodefilter.go` (`TopologyNodeFilter`) and `topologydomaingroup.go`
//! (`TopologyDomainGroup.ForEachDomain`). Where upstream iterates a Go map and takes the
//! first domain it meets (a random choice among equals), karplint takes the smallest name.
//!
//! Every run starts from an empty cluster: no pod is counted before the batch, and the
//! hostname domains are the batch's own NodeClaims.

use crate::karpenter::requirements::{
    LABEL_HOSTNAME, LABEL_ZONE, LabelFlavor, Operator, Requirement, Requirements, normalize_key,
};
use crate::karpenter::sim::{DomainUniverse, Failure, Simulator};
use crate::karpenter::taints::{self, Taint, Toleration};
use crate::model::workload::{LabelSelector, PodAffinityTerm, TopologySpreadConstraint};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// `TopologyType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupType {
    Spread,
    PodAffinity,
    PodAntiAffinity,
}

impl GroupType {
    /// `TopologyType.String`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupType::Spread => "topology spread",
            GroupType::PodAffinity => "pod affinity",
            GroupType::PodAntiAffinity => "pod anti-affinity",
        }
    }
}

/// Which namespaces a term counts pods in ([`crate::karpenter::topology::term_namespaces`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Namespaces {
    All,
    Listed(BTreeSet<String>),
}

/// A label selector as a set of `(key, operator, values)` expressions, `matchLabels`
/// entries being `In` with one value; `None` selects nothing (a term without a selector, or
/// one `LabelSelectorAsSelector` rejects).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selector(Option<BTreeSet<(String, String, BTreeSet<String>)>>);

impl Selector {
    fn of(sel: Option<&LabelSelector>) -> Selector {
        let Some(sel) = sel else {
            return Selector(None);
        };
        let mut out = BTreeSet::new();
        for (k, v) in sel.match_labels.iter() {
            out.insert((
                k.to_string(),
                "In".to_string(),
                BTreeSet::from([v.to_string()]),
            ));
        }
        for e in sel.match_expressions.iter() {
            let op = e.operator.value.to_string();
            if !matches!(op.as_str(), "In" | "NotIn" | "Exists" | "DoesNotExist") {
                return Selector(None);
            }
            let values = e.values.iter().map(|v| v.value.to_string()).collect();
            out.insert((e.key.value.to_string(), op, values));
        }
        Selector(Some(out))
    }

    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let Some(exprs) = &self.0 else { return false };
        exprs.iter().all(|(k, op, values)| {
            let have = labels.get(k);
            match op.as_str() {
                "In" => have.is_some_and(|h| values.contains(h)),
                "NotIn" => have.is_none_or(|h| !values.contains(h)),
                "Exists" => have.is_some(),
                _ => have.is_none(),
            }
        })
    }
}

/// `TopologyNodeFilter`: which NodeClaims a topology spread constraint counts. `None` on
/// affinity terms, which count every node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeFilter {
    /// The nodeSelector with each required node-affinity term (OR-ed).
    requirements: Vec<Requirements>,
    honor_affinity: bool,
    honor_taints: bool,
    tolerations: Vec<Toleration>,
}

/// What a node's requirements are to a filter's (`Requirements.Compatible`'s options).
#[derive(Debug, Clone, Copy)]
pub enum Compat {
    /// A NodeClaim still to launch, of a pool with this label flavour: an undefined
    /// well-known label is allowed (`NodeClaim.CanAdd` records with
    /// `AllowUndefinedWellKnownLabels`).
    Claim(LabelFlavor),
    /// A node's labels (a node launched in an earlier round): a label the node lacks
    /// matches only a `NotIn` or `DoesNotExist` (`countDomains` and `ExistingNode` call
    /// `Compatible` with no option).
    Labels,
}

impl Compat {
    /// `node.Compatible(filter, options)`.
    fn compatible(self, node: &Requirements, filter: &Requirements) -> bool {
        match self {
            Compat::Claim(flavor) => node.compatible_with_ok(filter, flavor),
            Compat::Labels => node.met_as_labels(filter),
        }
    }
}

impl NodeFilter {
    /// `TopologyNodeFilter.Matches`.
    fn matches<'t>(
        &self,
        taints: impl IntoIterator<Item = &'t Taint>,
        requirements: &Requirements,
        compat: Compat,
    ) -> bool {
        let affinity = !self.honor_affinity
            || self.requirements.is_empty()
            || (self.requirements.iter()).any(|r| compat.compatible(requirements, r));
        affinity && (!self.honor_taints || tolerates_all(&self.tolerations, taints))
    }
}

fn tolerates_all<'t>(
    tolerations: &[Toleration],
    taints: impl IntoIterator<Item = &'t Taint>,
) -> bool {
    taints
        .into_iter()
        .all(|t| taints::is_tolerated(tolerations, t))
}

/// One topology term of a pod template: what `NewTopologyGroup` hashes (`TopologyGroup.Hash`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Term {
    pub kind: GroupType,
    pub key: String,
    max_skew: i64,
    min_domains: Option<i64>,
    namespaces: Namespaces,
    selector: Selector,
    filter: Option<NodeFilter>,
}

impl Term {
    /// A topology spread constraint (`newForTopologies`, with `matchLabelKeys` added to the
    /// selector as `In` the pod's own value).
    pub fn spread(
        tsc: &TopologySpreadConstraint,
        namespace: &str,
        labels: &BTreeMap<String, String>,
        strict: Vec<Requirements>,
        tolerations: &[Toleration],
    ) -> Term {
        let mut selector = Selector::of(tsc.label_selector.as_ref());
        if let Some(exprs) = &mut selector.0 {
            for k in tsc.match_label_keys.iter() {
                if let Some(v) = labels.get(k.value.as_str()) {
                    let value = BTreeSet::from([v.clone()]);
                    exprs.insert((k.value.to_string(), "In".to_string(), value));
                }
            }
        }
        // Whether field `p` (else `default`) reads `value`.
        let policy =
            |p: &Option<crate::model::de::Spanned<crate::model::de::Str>>,
             default: &str,
             value: &str| { p.as_ref().map_or(default, |p| p.value.as_str()) == value };
        Term {
            kind: GroupType::Spread,
            key: normalize_key(&tsc.topology_key.value).to_string(),
            max_skew: tsc.max_skew.as_ref().map_or(1, |m| m.value),
            // The API server rejects minDomains beside ScheduleAnyway (a parse-error): read
            // as absent there.
            min_domains: tsc
                .min_domains
                .as_ref()
                .filter(|_| policy(&tsc.when_unsatisfiable, "DoNotSchedule", "DoNotSchedule"))
                .map(|m| m.value),
            namespaces: Namespaces::Listed(BTreeSet::from([namespace.to_string()])),
            selector,
            filter: Some(NodeFilter {
                requirements: strict,
                honor_affinity: policy(&tsc.node_affinity_policy, "Honor", "Honor"),
                honor_taints: policy(&tsc.node_taints_policy, "Ignore", "Honor"),
                tolerations: tolerations.to_vec(),
            }),
        }
    }

    /// A pod affinity or anti-affinity term (`newForAffinities`), required or preferred.
    pub fn affinity(kind: GroupType, term: &PodAffinityTerm, namespace: &str) -> Term {
        let namespaces = match crate::karpenter::topology::term_namespaces(term, namespace) {
            Some(names) => Namespaces::Listed(names.into_iter().map(String::from).collect()),
            None => Namespaces::All,
        };
        Term {
            kind,
            key: normalize_key(&term.topology_key.value).to_string(),
            max_skew: i64::from(i32::MAX),
            min_domains: None,
            namespaces,
            selector: Selector::of(term.label_selector.as_ref()),
            filter: None,
        }
    }

    /// `TopologyGroup.selects`.
    fn selects(&self, pod: &PodIdentity) -> bool {
        let in_namespace = match &self.namespaces {
            Namespaces::All => true,
            Namespaces::Listed(n) => n.contains(&pod.namespace),
        };
        in_namespace && self.selector.matches(&pod.labels)
    }

    /// `TopologyGroup.Counts`.
    fn counts<'t>(
        &self,
        pod: &PodIdentity,
        taints: impl IntoIterator<Item = &'t Taint>,
        requirements: &Requirements,
        compat: Compat,
    ) -> bool {
        self.selects(pod)
            && self
                .filter
                .as_ref()
                .is_none_or(|f| f.matches(taints, requirements, compat))
    }
}

/// What topology reads of a pod: its namespace, labels and tolerations.
#[derive(Debug, Clone, PartialEq)]
pub struct PodIdentity {
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
}

/// `TopologyGroup`: a term and the pods it counts per domain.
#[derive(Debug, Clone)]
struct Group {
    term: Term,
    domains: BTreeMap<String, i64>,
    /// Domains where no pod is counted yet.
    empty: BTreeSet<String>,
}

/// The values a NodeClaim allows for a key, as topology reads them: the NodeClaim's
/// requirement, its own hostname for `kubernetes.io/hostname`, else `Exists`.
fn domains_of(requirements: &Requirements, key: &str, hostname: &str) -> Requirement {
    if key == LABEL_HOSTNAME {
        return Requirement::in_values(key, [hostname]);
    }
    requirements
        .get(key)
        .cloned()
        .unwrap_or_else(|| Requirement::exists(key))
}

impl Group {
    fn new(
        term: Term,
        universe: &BTreeMap<String, Vec<Vec<Taint>>>,
        tolerations: &[Toleration],
    ) -> Group {
        // `ForEachDomain`: affinity terms have the zero filter, whose taint policy is not
        // `Ignore`, so they too keep only the domains of pools the pod tolerates.
        let honor_taints = term.filter.as_ref().is_none_or(|f| f.honor_taints);
        let domains: BTreeMap<String, i64> = universe
            .iter()
            .filter(|(_, sets)| !honor_taints || sets.iter().any(|s| tolerates_all(tolerations, s)))
            .map(|(d, _)| (d.clone(), 0))
            .collect();
        let empty = domains.keys().cloned().collect();
        Group {
            term,
            domains,
            empty,
        }
    }

    /// `Record` of a pod that lands on a node with `requirements` and `hostname`: in all
    /// the domains it may take for anti-affinity, only in a single one otherwise.
    fn record_on(&mut self, requirements: &Requirements, hostname: &str) {
        let domains = domains_of(requirements, &self.term.key, hostname);
        if self.term.kind == GroupType::PodAntiAffinity {
            for d in domains.values() {
                self.record(d);
            }
        } else if domains.len() == Some(1)
            && let Some(d) = domains.values().iter().next()
        {
            self.record(d);
        }
    }

    /// [`Group::record_on`] for a settled pod, when the group counts it.
    fn record_pod(&mut self, pod: &PodIdentity, p: &Settled) {
        if self
            .term
            .counts(pod, p.taints.iter(), &p.requirements, Compat::Labels)
        {
            self.record_on(&p.requirements, &p.hostname);
        }
    }

    fn record(&mut self, domain: &str) {
        *self.domains.entry(domain.to_string()).or_insert(0) += 1;
        self.empty.remove(domain);
    }

    /// `countDomains` over a node launched in an earlier round: its domain of the group's
    /// key is known to the group, with a count of zero when no pod it counts is there,
    /// when the group's filter takes the node (`nodeFilter.Matches`); a hostname group
    /// knows every node (`NewExistingNode` → `Register`).
    fn register_node(&mut self, node: &Settled) {
        if self.term.key == LABEL_HOSTNAME {
            self.register(&node.hostname);
            return;
        }
        let filtered = (self.term.filter.as_ref())
            .is_some_and(|f| !f.matches(node.taints.iter(), &node.requirements, Compat::Labels));
        let domains = domains_of(&node.requirements, &self.term.key, &node.hostname);
        if !filtered
            && !domains.is_complement()
            && let [domain] = Vec::from_iter(domains.values()).as_slice()
        {
            self.register(domain);
        }
    }

    fn register(&mut self, domain: &str) {
        if !self.domains.contains_key(domain) {
            self.domains.insert(domain.to_string(), 0);
            self.empty.insert(domain.to_string());
        }
    }

    /// `TopologyGroup.Get`: the domains the pod may take, `DoesNotExist` when none.
    fn get(
        &self,
        pod: &PodIdentity,
        pod_domains: &Requirement,
        node_domains: &Requirement,
    ) -> Requirement {
        let options: Vec<String> = match self.term.kind {
            GroupType::Spread => self.next_domain_spread(pod, pod_domains, node_domains),
            GroupType::PodAffinity => self.next_domain_affinity(pod, pod_domains, node_domains),
            GroupType::PodAntiAffinity => self.next_domain_anti_affinity(pod_domains, node_domains),
        };
        if options.is_empty() {
            Requirement::does_not_exist(&self.term.key)
        } else {
            Requirement::in_values(&self.term.key, options)
        }
    }

    /// The hostname of a NodeClaim, when the key is the hostname (upstream's special case
    /// for new NodeClaims, whose domain is registered only once a pod joins).
    fn single_host<'r>(&self, node_domains: &'r Requirement) -> Option<&'r String> {
        let values = node_domains.values();
        (self.term.key == LABEL_HOSTNAME && !node_domains.is_complement() && values.len() == 1)
            .then(|| values.iter().next())
            .flatten()
    }

    /// `nextDomainTopologySpread`: the least-counted domain within `maxSkew` of the minimum.
    fn next_domain_spread(
        &self,
        pod: &PodIdentity,
        pod_domains: &Requirement,
        node_domains: &Requirement,
    ) -> Vec<String> {
        let min = self.domain_min_count(pod_domains);
        let own = i64::from(self.term.selects(pod));
        if let Some(host) = self.single_host(node_domains) {
            // A new hostname can always be created: the global minimum is zero.
            let count = self.domains.get(host).copied().unwrap_or(0) + own;
            return if count <= self.term.max_skew {
                vec![host.clone()]
            } else {
                Vec::new()
            };
        }
        let mut best: Option<(&String, i64)> = None;
        for (domain, count) in &self.domains {
            if !node_domains.has(domain) {
                continue;
            }
            let count = count + own;
            if count - min <= self.term.max_skew && best.is_none_or(|(_, c)| count < c) {
                best = Some((domain, count));
            }
        }
        best.map(|(d, _)| vec![d.clone()]).unwrap_or_default()
    }

    /// `domainMinCount`: the least count over the domains the pod supports; zero for the
    /// hostname, or when fewer than `minDomains` domains exist.
    fn domain_min_count(&self, pod_domains: &Requirement) -> i64 {
        if self.term.key == LABEL_HOSTNAME {
            return 0;
        }
        let supported: Vec<i64> = self
            .domains
            .iter()
            .filter(|(d, _)| pod_domains.has(d))
            .map(|(_, c)| *c)
            .collect();
        let n = i64::try_from(supported.len()).unwrap_or(i64::MAX);
        if self.term.min_domains.is_some_and(|m| n < m) {
            return 0;
        }
        supported.into_iter().min().unwrap_or(i64::from(i32::MAX))
    }

    /// Whether the pod may open the first domain: it selects itself and no domain it
    /// supports has a pod yet (`anyCompatiblePodDomain`).
    fn may_bootstrap(&self, pod: &PodIdentity, pod_domains: &Requirement) -> bool {
        self.term.selects(pod)
            && (self.domains.len() == self.empty.len()
                || !self
                    .domains
                    .iter()
                    .any(|(d, c)| pod_domains.has(d) && *c > 0))
    }

    /// `nextDomainAffinity`: domains that hold a selected pod, else (a pod selecting
    /// itself, first of its kind) one domain to start from.
    fn next_domain_affinity(
        &self,
        pod: &PodIdentity,
        pod_domains: &Requirement,
        node_domains: &Requirement,
    ) -> Vec<String> {
        if let Some(host) = self.single_host(node_domains) {
            let ok = pod_domains.has(host)
                && (self.domains.get(host).is_some_and(|c| *c > 0)
                    || self.may_bootstrap(pod, pod_domains));
            return if ok { vec![host.clone()] } else { Vec::new() };
        }
        let mut options: BTreeSet<String> = self
            .domains
            .iter()
            .filter(|(d, c)| **c > 0 && pod_domains.has(d) && node_domains.has(d))
            .map(|(d, _)| d.clone())
            .collect();
        if options.is_empty() && self.may_bootstrap(pod, pod_domains) {
            let both = self
                .domains
                .keys()
                .find(|d| pod_domains.has(d) && node_domains.has(d));
            options.extend(both.cloned());
            options.extend(self.domains.keys().find(|d| pod_domains.has(d)).cloned());
        }
        options.into_iter().collect()
    }

    /// `nextDomainAntiAffinity`: the domains where no selected pod is yet.
    fn next_domain_anti_affinity(
        &self,
        pod_domains: &Requirement,
        node_domains: &Requirement,
    ) -> Vec<String> {
        if let Some(host) = self.single_host(node_domains) {
            let taken = self.domains.get(host).is_some_and(|c| *c > 0);
            return if taken {
                Vec::new()
            } else {
                vec![host.clone()]
            };
        }
        self.empty
            .iter()
            .filter(|d| node_domains.has(d) && pod_domains.has(d))
            .cloned()
            .collect()
    }
}

/// A group that leaves a pod no domain, with the domains it was asked about: the
/// `topologyError`, written out only when the caller keeps it (a pod tried on a planned
/// NodeClaim drops it).
pub struct Refusal<'g> {
    group: &'g Group,
    pod_domains: Requirement,
    node_domains: Requirement,
}

impl Refusal<'_> {
    /// The `topologyError` of the pod.
    pub fn failure(&self) -> Failure {
        Failure::Topology {
            constraint: self.group.term.kind.as_str(),
            key: self.group.term.key.clone(),
            counts: pretty_map(&self.group.domains, 25),
            pod_domains: self.pod_domains.to_string(),
            node_domains: self.node_domains.to_string(),
        }
    }
}

/// `pretty.Map`: `k: v` pairs by key, at most `max`, then how many were left out.
fn pretty_map(values: &BTreeMap<String, i64>, max: usize) -> String {
    let shown: Vec<String> = values
        .iter()
        .take(max)
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let mut out = shown.join(", ");
    if values.len() > max {
        out.push_str(&format!(" and {} other(s)", values.len() - max));
    }
    out
}

/// `Topology`: the groups of one batch. A group is made the first time a pod owns its term
/// (`Topology.Update`, at the start of the batch for every pod as written, then at each
/// relaxation step) and counts only the pods placed after that: the group of a spread
/// constraint hashes the pod's tolerations and required node-affinity terms with it
/// (`TopologyNodeFilter`), so a relaxed pod may start a fresh group that counts none of the
/// pods placed before.
pub struct Topology {
    groups: Vec<Group>,
    by_term: HashMap<Term, usize>,
    /// Groups of required anti-affinity terms, tracked the other way round as well
    /// (`inverseTopologyGroups`): the pods they select keep out of their owners' domains.
    inverse: Vec<Group>,
    pods: Vec<Arc<PodIdentity>>,
    /// Per workload, the inverse groups its pods own.
    inverse_owned: Vec<Vec<usize>>,
    /// Per workload, the groups that select its pods.
    selecting: Vec<Vec<usize>>,
    /// Per workload, the inverse groups that select its pods.
    inverse_selecting: Vec<Vec<usize>>,
    /// The nodes launched in earlier rounds: every group counts their pods, groups made
    /// later too (`countDomains` reads the cluster's pods).
    settled: Vec<Settled>,
}

/// A launched node: the workload of each pod on it, its labels (`NewLabelRequirements`),
/// hostname and taints.
#[derive(Debug, Clone)]
pub struct Settled {
    pub workloads: Vec<usize>,
    pub requirements: Requirements,
    pub hostname: String,
    pub taints: Vec<Taint>,
}

impl Topology {
    /// `NewTopology`: the inverse groups of every workload's required anti-affinity terms
    /// (`inverse`, by workload), with domains from every NodePool and instance type
    /// (`buildDomainGroups`), each counting no pod yet. Make the groups of the pods as
    /// written with [`Topology::update`].
    pub fn new(sim: &Simulator, pods: Vec<Arc<PodIdentity>>, inverse: &[Vec<Term>]) -> Topology {
        let mut topology = Topology {
            groups: Vec::new(),
            by_term: HashMap::new(),
            inverse: Vec::new(),
            inverse_owned: Vec::new(),
            selecting: vec![Vec::new(); pods.len()],
            inverse_selecting: vec![Vec::new(); pods.len()],
            pods,
            settled: Vec::new(),
        };
        let mut by_inverse: HashMap<&Term, usize> = HashMap::new();
        for (w, terms) in inverse.iter().enumerate() {
            let mut owned = Vec::new();
            for term in terms {
                if topology.zones_unknown(sim, term) {
                    continue;
                }
                let g = match by_inverse.get(term) {
                    Some(&g) => g,
                    None => {
                        let tolerations = topology.pods[w].tolerations.clone();
                        let group = topology.group(sim, term, &tolerations);
                        topology.inverse.push(group);
                        by_inverse.insert(term, topology.inverse.len() - 1);
                        topology.inverse.len() - 1
                    }
                };
                owned.push(g);
            }
            topology.inverse_owned.push(owned);
        }
        for (w, pod) in topology.pods.iter().enumerate() {
            let selecting =
                (0..topology.inverse.len()).filter(|&g| topology.inverse[g].term.selects(pod));
            topology.inverse_selecting[w] = selecting.collect();
        }
        topology
    }

    /// Whether `term` is on zones and the run names none (no NodePool requirement, no
    /// `cluster.zones`): every real node has a zone, so the term is assumed satisfiable
    /// rather than judged against an empty set of domains. Pod affinity is assumed so only
    /// when some pod of the batch is there to follow (once its node launches, its zone is
    /// known).
    fn zones_unknown(&self, sim: &Simulator, term: &Term) -> bool {
        term.key == LABEL_ZONE
            && (term.kind != GroupType::PodAffinity || self.pods.iter().any(|p| term.selects(p)))
            && domain_universe(sim, &term.key).is_empty()
    }

    /// Whether `term` makes a group that counts pods: not one assumed satisfiable because
    /// the run names no zone ([`Topology::zones_unknown`]). Relaxing a pod drops terms and
    /// narrows a spread's filter, never its key, so a batch none of whose terms counts
    /// never makes a group.
    pub fn makes_group(&self, sim: &Simulator, term: &Term) -> bool {
        !self.zones_unknown(sim, term)
    }

    /// The first domain of `key`, by name, that some NodePool offers and `allowed` allows:
    /// where a node launched without one lands (the fleet request's choice among offerings
    /// of one price).
    pub fn first_domain(
        &mut self,
        sim: &Simulator,
        key: &str,
        allowed: &Requirement,
    ) -> Option<String> {
        let universe = domain_universe(sim, key);
        universe.keys().find(|d| allowed.has(d)).cloned()
    }

    /// Whether some group counts pods by `key`.
    pub fn uses_key(&self, key: &str) -> bool {
        (self.groups.iter().chain(&self.inverse)).any(|g| g.term.key == key)
    }

    /// A new group for `term`, its domains those of pools the owner's `tolerations` allow.
    fn group(&mut self, sim: &Simulator, term: &Term, tolerations: &[Toleration]) -> Group {
        Group::new(term.clone(), &domain_universe(sim, &term.key), tolerations)
    }

    /// `Topology.Update`: the groups of `terms`, which a pod of workload `w` with
    /// `tolerations` owns at one relaxation step, made when missing.
    pub fn update(
        &mut self,
        sim: &Simulator,
        terms: &[Term],
        tolerations: &[Toleration],
    ) -> Vec<usize> {
        let mut out = Vec::with_capacity(terms.len());
        for term in terms {
            if self.zones_unknown(sim, term) {
                continue;
            }
            if let Some(&g) = self.by_term.get(term) {
                out.push(g);
                continue;
            }
            let mut group = self.group(sim, term, tolerations);
            for node in &self.settled {
                group.register_node(node);
                for &w in &node.workloads {
                    group.record_pod(&self.pods[w], node);
                }
            }
            let g = self.groups.len();
            for (w, pod) in self.pods.iter().enumerate() {
                if group.term.selects(pod) {
                    self.selecting[w].push(g);
                }
            }
            self.groups.push(group);
            self.by_term.insert(term.clone(), g);
            out.push(g);
        }
        out
    }

    /// Whether a required anti-affinity term of some workload selects workload `w`'s pods.
    pub fn inversely_selected(&self, w: usize) -> bool {
        !self.inverse_selecting[w].is_empty()
    }

    /// Whether a hostname group the pod of workload `w` owns refuses the NodeClaim
    /// `hostname` on that hostname's count alone, as [`Topology::add_requirements`] would:
    /// a NodeClaim's hostname is its single domain, so `nextDomainTopologySpread` refuses it
    /// once its count (with the pod) passes `maxSkew`, and `nextDomainAntiAffinity` once a
    /// selected pod is there. A cheap test before the NodeClaim's requirements are built,
    /// which keeps a hostname spread over many NodeClaims from costing as much per
    /// NodeClaim as a join.
    pub fn host_refuses(&self, w: usize, owned: &[usize], hostname: &str) -> bool {
        let pod = &self.pods[w];
        (owned.iter().map(|&g| &self.groups[g]))
            .filter(|g| g.term.key == LABEL_HOSTNAME)
            .any(|g| {
                let count = g.domains.get(hostname).copied().unwrap_or(0);
                match g.term.kind {
                    GroupType::Spread => count + i64::from(g.term.selects(pod)) > g.term.max_skew,
                    GroupType::PodAntiAffinity => count > 0,
                    GroupType::PodAffinity => false,
                }
            })
    }

    /// Whether one of the groups a pod owns (`owned`) is a hostname spread or anti-affinity
    /// group, which [`Topology::host_refuses`] may refuse a NodeClaim on.
    pub fn host_may_refuse(&self, owned: &[usize]) -> bool {
        (owned.iter().map(|&g| &self.groups[g]))
            .any(|g| g.term.key == LABEL_HOSTNAME && g.term.kind != GroupType::PodAffinity)
    }

    /// `AddRequirements`: the domains the groups the pod owns (`owned`, from
    /// [`Topology::update`]) and the inverse groups that select it leave on a NodeClaim
    /// with `node` requirements and `hostname`; the failure of the first that leaves none.
    /// The hostname's requirement is not returned: it is the NodeClaim's own.
    #[allow(clippy::too_many_arguments)]
    pub fn add_requirements<'t>(
        &self,
        w: usize,
        owned: &[usize],
        strict: &Requirements,
        node: &Requirements,
        hostname: &str,
        taints: impl IntoIterator<Item = &'t Taint> + Clone,
        flavor: LabelFlavor,
    ) -> Result<Requirements, Box<Refusal<'_>>> {
        let pod = &self.pods[w];
        let inverse = self.inverse_selecting[w]
            .iter()
            .map(|&g| &self.inverse[g])
            // An inverse group is an anti-affinity term, with no node filter: how the
            // node's requirements are read does not matter to it.
            .filter(|g| {
                g.term
                    .counts(pod, taints.clone(), node, Compat::Claim(flavor))
            });
        let mut out = Requirements::new();
        for group in owned.iter().map(|&g| &self.groups[g]).chain(inverse) {
            let key = &group.term.key;
            let pod_domains = strict.get_or_exists(key);
            let node_domains = domains_of(node, key, hostname);
            let domains = group.get(pod, &pod_domains, &node_domains);
            let refusal = |pod_domains, node_domains| {
                Box::new(Refusal {
                    group,
                    pod_domains,
                    node_domains,
                })
            };
            if domains.operator() == Operator::DoesNotExist {
                return Err(refusal(pod_domains, node_domains));
            }
            // Two groups on one key may leave disjoint domains: the NodeClaim decides
            // ([`super::topology_fits`]).
            if key != LABEL_HOSTNAME {
                out.add(domains);
            }
        }
        Ok(out)
    }

    /// Whether some group of `self`, counted afresh, counts fewer pods in some domain than
    /// the same group of `before` did, or knows a domain `before` did not: a pod recorded
    /// in every domain its NodeClaim might take (anti-affinity) counts only in its node's
    /// once the node launched, and a node's domain becomes known (`countDomains`).
    pub fn frees_domains(&self, before: &Topology) -> bool {
        let freed = |now: &Group, then: &Group| {
            (now.domains.iter()).any(|(d, n)| then.domains.get(d).is_none_or(|m| n < m))
        };
        let groups = (self.by_term.iter()).filter_map(|(term, &g)| {
            Some((&self.groups[g], &before.groups[*before.by_term.get(term)?]))
        });
        let inverse = self.inverse.iter().zip(&before.inverse);
        groups.chain(inverse).any(|(now, then)| freed(now, then))
    }

    /// A node launched in an earlier round: its pods are counted by every group that
    /// selects them, now and when one is made later.
    pub fn settle(&mut self, node: Settled) {
        for &w in &node.workloads {
            self.add(
                w,
                &node.requirements,
                &node.hostname,
                node.taints.iter(),
                Compat::Labels,
            );
        }
        for group in &mut self.groups {
            group.register_node(&node);
        }
        self.settled.push(node);
    }

    /// `NodeClaim.Add`: the NodeClaim's hostname becomes a domain of every hostname group
    /// (`Register`), and the pod is counted where it lands (`Record`): in every group that
    /// selects it and counts the NodeClaim, in all the domains the NodeClaim may take for
    /// anti-affinity and only in a single one otherwise; and in its own inverse groups.
    pub fn add<'t>(
        &mut self,
        w: usize,
        requirements: &Requirements,
        hostname: &str,
        taints: impl IntoIterator<Item = &'t Taint> + Clone,
        compat: Compat,
    ) {
        for g in self.groups.iter_mut().chain(self.inverse.iter_mut()) {
            if g.term.key == LABEL_HOSTNAME {
                g.register(hostname);
            }
        }
        let pod = &self.pods[w];
        for &g in &self.selecting[w] {
            let group = &mut self.groups[g];
            if group.term.counts(pod, taints.clone(), requirements, compat) {
                group.record_on(requirements, hostname);
            }
        }
        for &g in &self.inverse_owned[w] {
            let group = &mut self.inverse[g];
            let domains = domains_of(requirements, &group.term.key, hostname);
            for d in domains.values() {
                group.record(d);
            }
        }
    }
}

/// `buildDomainGroups`: every value of `key` some NodePool allows on some instance type
/// (the pool's requirement intersected with the type's), and every value a pool's `In`
/// requirement names, each with the taints of the pools that offer it. It depends on the
/// NodePools alone, so every round's topology shares one per key.
fn domain_universe(sim: &Simulator, key: &str) -> std::sync::Arc<DomainUniverse> {
    (sim.universe_memo).get_or_insert_with(key.to_string(), || {
        std::sync::Arc::new(build_domain_universe(sim, key))
    })
}

/// [`domain_universe`], worked out.
fn build_domain_universe(sim: &Simulator, key: &str) -> DomainUniverse {
    let mut out = DomainUniverse::new();
    // Each distinct label a type has for the key (`None`: it has none), per table of
    // labels: pools of one label flavour share theirs.
    let mut labels_of: Vec<(usize, BTreeSet<Option<Option<&str>>>)> = Vec::new();
    for (i, pool) in sim.pools.iter().enumerate() {
        let taints: Vec<Taint> = pool.taints.iter().map(|(t, _)| t.clone()).collect();
        let mut values: BTreeSet<String> = BTreeSet::new();
        let pool_req = pool.requirements.get(key);
        let offered = sim.offered(i);
        let type_reqs: Vec<Option<Requirement>> = match offered.values(key) {
            Some(v) => vec![Some(Requirement::in_values(key, v))],
            None => {
                let shared =
                    (labels_of.iter()).position(|(j, _)| sim.pools[*j].shares_type_labels(pool));
                let at = shared.unwrap_or_else(|| {
                    let labels = (pool.all_types())
                        .map(|t| {
                            let has = t.requirements.has(key);
                            has.then(|| t.requirements.get(key).value())
                        })
                        .collect();
                    labels_of.push((i, labels));
                    labels_of.len() - 1
                });
                (labels_of[at].1.iter())
                    .map(|v| match (*v)? {
                        Some(v) => Some(Requirement::in_values(key, [v])),
                        None => Some(Requirement::does_not_exist(key)),
                    })
                    .collect()
            }
        };
        for type_req in type_reqs {
            let combined = match (pool_req, type_req) {
                (Some(p), Some(t)) => p.intersection(&t),
                (Some(p), None) => p.clone(),
                (None, Some(t)) => t,
                (None, None) => continue,
            };
            // `Values()` of a `NotIn` requirement are the values it excludes: upstream
            // registers those too.
            values.extend(combined.values().iter().cloned());
        }
        if let Some(p) = pool_req.filter(|p| p.operator() == Operator::In) {
            values.extend(p.values().iter().cloned());
        }
        for v in values {
            out.entry(v).or_default().push(taints.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::requirements::Operator;

    fn reqs(list: &[(&str, &str, &[&str])]) -> Requirements {
        (list.iter())
            .map(|(key, op, values)| {
                let op: Operator = op.parse().expect("an operator");
                Requirement::new(key, op, values.iter().copied()).expect("a requirement")
            })
            .collect()
    }

    /// `TopologyNodeFilter.Matches` → `Requirements.Compatible`: `NodeClaim.CanAdd` records
    /// with `AllowUndefinedWellKnownLabels`, `countDomains` and `ExistingNode` with no
    /// option, so a node launched in an earlier round whose labels lack a well-known key
    /// (a t3 has no `instance-gpu-count` label) is not counted by a spread whose pod
    /// requires that key.
    #[test]
    fn topology_node_filter_matches_compatible_options() {
        let gpu = reqs(&[("karpenter.k8s.aws/instance-gpu-count", "Exists", &[])]);
        let no_gpu = reqs(&[("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", &[])]);
        let t3 = reqs(&[
            ("karpenter.k8s.aws/instance-family", "In", &["t3"]),
            ("topology.kubernetes.io/zone", "In", &["us-east-1a"]),
        ]);
        let g6f = reqs(&[
            ("karpenter.k8s.aws/instance-gpu-count", "In", &["1"]),
            ("topology.kubernetes.io/zone", "In", &["us-east-1b"]),
        ]);
        let claim = Compat::Claim(LabelFlavor::KarpenterAws);
        // (node, filter, compatibility, matches)
        let cases = [
            (&t3, &gpu, claim, true),
            (&t3, &gpu, Compat::Labels, false),
            (&g6f, &gpu, Compat::Labels, true),
            (&t3, &no_gpu, Compat::Labels, true),
            (&g6f, &no_gpu, Compat::Labels, false),
        ];
        for (i, (node, filter, compat, expected)) in cases.into_iter().enumerate() {
            let f = NodeFilter {
                requirements: vec![filter.clone()],
                honor_affinity: true,
                honor_taints: false,
                tolerations: Vec::new(),
            };
            assert_eq!(f.matches([], node, compat), expected, "case {i}");
        }
    }
}
