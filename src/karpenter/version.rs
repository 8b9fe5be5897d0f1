//! Simulator settings: the Karpenter version whose behaviour and wording karplint follows
//! (`karpenter.version` in `.karplint.yaml`, `--karpenter-version`).
//!
//! The simulator mirrors core v1.14.3 (`docs/karpenter-upstream.md`); a few behaviours and
//! messages differ on older releases, and each method below says which, with the upstream
//! file and function and the release where it changed (read at the release tags of
//! `sigs.k8s.io/karpenter`). Versions before v0.32 (core `github.com/aws/karpenter-core`,
//! v1alpha5 APIs only) are not modelled.

use super::pod::PodLevelResources;
use std::fmt;

/// A Karpenter minor release (`v1.8`); patch releases do not change what karplint models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KarpenterVersion {
    major: u16,
    minor: u16,
}

/// The minor releases karplint models, oldest first: v0.32–v0.37 (v1beta1 APIs), then
/// v1.0–v1.14.
const RELEASES: [(u16, u16); 21] = [
    (0, 32),
    (0, 33),
    (0, 34),
    (0, 35),
    (0, 36),
    (0, 37),
    (1, 0),
    (1, 1),
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (1, 6),
    (1, 7),
    (1, 8),
    (1, 9),
    (1, 10),
    (1, 11),
    (1, 12),
    (1, 13),
    (1, 14),
];

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not `X.Y`, `vX.Y` or `X.Y.Z`.
    #[error("invalid Karpenter version {0:?}: expected MAJOR.MINOR, e.g. 1.8")]
    Malformed(String),
    /// Before the oldest release karplint models.
    #[error(
        "Karpenter {0} is older than karplint models: versions {oldest} to {newest} are supported",
        oldest = KarpenterVersion::OLDEST,
        newest = KarpenterVersion::NEWEST
    )]
    TooOld(KarpenterVersion),
    /// Well-formed, but not a release karplint knows (a future one, or no such minor).
    #[error("unknown Karpenter version {0}")]
    Unknown(KarpenterVersion),
}

impl VersionError {
    /// The help: the closest known release, then the supported range.
    pub fn help(&self, typed: &str) -> String {
        let known = KarpenterVersion::known_names();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let typed = typed.trim();
        let typed = format!("v{}", typed.strip_prefix('v').unwrap_or(typed));
        let close = match self {
            VersionError::TooOld(_) => String::new(),
            VersionError::Unknown(v) if *v > KarpenterVersion::NEWEST => {
                format!("did you mean `{}`? ", KarpenterVersion::NEWEST)
            }
            _ => crate::suggest::did_you_mean(&typed, &known),
        };
        format!(
            "{close}known versions: {} to {} ({})",
            KarpenterVersion::OLDEST,
            KarpenterVersion::NEWEST,
            known.join(", ")
        )
    }
}

impl KarpenterVersion {
    /// v0.32: the oldest release modelled (the first with v1beta1 NodePools).
    pub const OLDEST: KarpenterVersion = KarpenterVersion::new(0, 32);
    /// v1.14: the release the simulator mirrors, and the default.
    pub const NEWEST: KarpenterVersion = KarpenterVersion::new(1, 14);
    /// v1.0: the first release with the `karpenter.sh/v1` APIs.
    pub const V1_0: KarpenterVersion = KarpenterVersion::new(1, 0);

    pub const fn new(major: u16, minor: u16) -> Self {
        KarpenterVersion { major, minor }
    }

    /// Every release modelled, oldest first, as `vX.Y`.
    pub fn known_names() -> Vec<String> {
        RELEASES
            .iter()
            .map(|&(major, minor)| KarpenterVersion::new(major, minor).to_string())
            .collect()
    }

    /// Reads `1.8`, `v1.8` or `1.8.3` (the patch is ignored).
    pub fn parse(s: &str) -> Result<Self, VersionError> {
        let malformed = || VersionError::Malformed(s.to_string());
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let parts: Vec<&str> = t.split('.').collect();
        if !(2..=3).contains(&parts.len())
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(malformed());
        }
        let number = |p: &str| p.parse::<u16>().map_err(|_| malformed());
        let v = KarpenterVersion::new(number(parts[0])?, number(parts[1])?);
        if parts.len() == 3 {
            number(parts[2])?;
        }
        if v < Self::OLDEST {
            return Err(VersionError::TooOld(v));
        }
        if !RELEASES.contains(&(v.major, v.minor)) {
            return Err(VersionError::Unknown(v));
        }
        Ok(v)
    }

    /// The release after this one (`v0.37` → `v1.0`), or itself for the newest.
    pub fn next(self) -> KarpenterVersion {
        let at = RELEASES.iter().position(|&r| r == (self.major, self.minor));
        match at.and_then(|i| RELEASES.get(i + 1)) {
            Some(&(major, minor)) => KarpenterVersion::new(major, minor),
            None => self,
        }
    }

    /// Whether new NodeClaims account for the host ports of the DaemonSets that will run
    /// on them: from v1.4, `scheduling/scheduler.go` `getDaemonHostPortUsage` seeds each
    /// template's NodeClaims with its DaemonSets' `HostPortUsage`
    /// (`pkg/scheduling/hostportusage.go`), which `NodeClaim.CanAdd` checks with
    /// `Conflicts`. Up to v1.3 (read at v1.3.3) a new NodeClaim starts with an empty
    /// `NewHostPortUsage()`: only the pods placed on it conflict with each other, which
    /// every modelled version checks (`nodeclaim.go` `Add`, v0.32).
    pub fn daemonset_host_ports(self) -> bool {
        self >= KarpenterVersion::new(1, 4)
    }

    /// Whether pod-level `spec.resources` count: from v1.8, `pkg/utils/resources`
    /// `Ceiling` calls component-helpers `resourcehelper.PodRequests` with default
    /// options (pod-level resources honoured); up to v1.7 its own `podRequests` sums the
    /// containers and init containers only, plus `spec.overhead`.
    pub fn pod_level_resources(self) -> PodLevelResources {
        if self >= KarpenterVersion::new(1, 8) {
            PodLevelResources::Honoured
        } else {
            PodLevelResources::Ignored
        }
    }

    /// Whether messages print `Gt`/`Lt` bounds inclusively (` >=5`, ` <=3`): from v1.9,
    /// `pkg/scheduling/requirement.go` `Requirement.String` prints `gte`/`lte`; up to v1.8
    /// it prints the exclusive ` >4` / ` <4` it stores.
    pub fn inclusive_bounds(self) -> bool {
        self >= KarpenterVersion::new(1, 9)
    }

    /// Whether an instance-type filter error leads with its reason
    /// (`<reason>, requirements=…, resources=…`): from v1.3 (read at v1.3.3),
    /// `scheduling/nodeclaim.go` `InstanceTypeFilterError.Error`. Up to v1.2, `NodeClaim.Add`
    /// wraps `filterResults.FailureReason`: `no instance type satisfied resources … and
    /// requirements … (<reason>)`.
    pub fn filter_reason_first(self) -> bool {
        self >= KarpenterVersion::new(1, 3)
    }
}

impl Default for KarpenterVersion {
    fn default() -> Self {
        KarpenterVersion::NEWEST
    }
}

impl fmt::Display for KarpenterVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_minor_with_or_without_v_and_patch() {
        for s in ["1.8", "v1.8", "1.8.3", " v1.8.0 "] {
            assert_eq!(KarpenterVersion::parse(s), Ok(KarpenterVersion::new(1, 8)));
        }
        assert_eq!(
            KarpenterVersion::parse("0.37").map(|v| v.to_string()),
            Ok("v0.37".to_string())
        );
        assert_eq!(KarpenterVersion::default().to_string(), "v1.14");
    }

    #[test]
    fn refuses_malformed_old_and_unknown_versions() {
        for s in ["", "1", "1.x", "v", "1.8.3.1", "1..8", "latest", "-1.8"] {
            assert!(
                matches!(KarpenterVersion::parse(s), Err(VersionError::Malformed(_))),
                "{s}"
            );
        }
        let old = KarpenterVersion::parse("0.31").unwrap_err();
        assert!(matches!(old, VersionError::TooOld(_)));
        assert!(old.to_string().contains("v0.32 to v1.14"), "{old}");
        assert!(!old.help("0.31").contains("did you mean"));
        let future = KarpenterVersion::parse("1.15").unwrap_err();
        assert!(matches!(future, VersionError::Unknown(_)));
        assert!(future.help("1.15").starts_with("did you mean `v1.14`?"));
        assert!(matches!(
            KarpenterVersion::parse("0.40"),
            Err(VersionError::Unknown(_))
        ));
    }

    #[test]
    fn next_release() {
        assert_eq!(KarpenterVersion::new(0, 37).next(), KarpenterVersion::V1_0);
        assert_eq!(
            KarpenterVersion::new(1, 3).next(),
            KarpenterVersion::new(1, 4)
        );
        assert_eq!(KarpenterVersion::NEWEST.next(), KarpenterVersion::NEWEST);
    }

    /// The gates, at the releases where upstream changed.
    #[test]
    fn behaviour_changes_at_their_releases() {
        let v = |s: &str| KarpenterVersion::parse(s).unwrap();
        assert!(!v("1.3").daemonset_host_ports() && v("1.4").daemonset_host_ports());
        assert_eq!(v("1.7").pod_level_resources(), PodLevelResources::Ignored);
        assert_eq!(v("1.8").pod_level_resources(), PodLevelResources::Honoured);
        assert!(!v("1.8").inclusive_bounds() && v("1.9").inclusive_bounds());
        assert!(!v("1.2").filter_reason_first() && v("1.3").filter_reason_first());
    }

    /// The simulator's verdict on the Deployment of `yaml`, as Karpenter `version` decides.
    fn verdict_on(yaml: &str, version: &str) -> crate::karpenter::sim::Verdict {
        use crate::karpenter::{catalog::Catalog, sim::Simulator};
        let objects = crate::parse::parse_source(0, yaml, false, false).objects;
        let index = crate::index::Index::new(&objects);
        let version = KarpenterVersion::parse(version).unwrap();
        let sim = Simulator::for_version(&index, Catalog::builtin(), Default::default(), version);
        let obj = (index.of_kind(crate::model::Kind::Deployment).next()).expect("a Deployment");
        let w = obj.workload().expect("a workload");
        sim.schedule(obj, w.pod_spec().expect("a pod spec"), false)
    }

    const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec:
  template:
    spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
";

    /// Core `provisioning/suite_test.go` "should account for daemonset hostports" (added
    /// with `getDaemonHostPortUsage` in v1.4): a pod whose host port a DaemonSet on every
    /// node binds stays Pending from v1.4, and schedules up to v1.3.
    #[test]
    fn should_account_for_daemonset_hostports_from_v1_4() {
        use crate::karpenter::sim::{Failure, Verdict};
        let port = "ports: [{containerPort: 80, hostPort: 8080}]";
        let yaml = format!(
            "{POOL}---
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  template:
    spec: {{containers: [{{name: a, image: x, {port}}}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  template:
    spec: {{containers: [{{name: w, image: x, {port}, resources: {{requests: {{cpu: 100m}}}}}}]}}
"
        );
        match verdict_on(&yaml, "1.4") {
            Verdict::Pending(f) => {
                assert!(
                    matches!(f[0].failure, Failure::HostPortTaken { .. }),
                    "{f:?}"
                )
            }
            other => panic!("v1.4: expected Pending, got {other:?}"),
        }
        assert!(matches!(verdict_on(&yaml, "1.3"), Verdict::Schedules(_)));
    }

    /// Core `provisioning/suite_test.go` "should schedule based on the pod level resources
    /// requests" (v1.8, where `resources.Ceiling` became component-helpers `PodRequests`):
    /// pod-level requests replace the containers' from v1.8; up to v1.7 only the containers
    /// count, so a pod asking 2000 CPUs at pod level and 1 in its container schedules.
    #[test]
    fn should_schedule_based_on_the_pod_level_resources_requests_from_v1_8() {
        use crate::karpenter::sim::Verdict;
        let yaml = format!(
            "{POOL}---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  template:
    spec:
      resources: {{requests: {{cpu: \"2000\"}}}}
      containers: [{{name: w, image: x, resources: {{requests: {{cpu: \"1\"}}}}}}]
"
        );
        assert!(matches!(verdict_on(&yaml, "1.8"), Verdict::Pending(_)));
        assert!(matches!(verdict_on(&yaml, "1.7"), Verdict::Schedules(_)));
    }

    /// Core `pkg/scheduling/requirement.go` `Requirement.String` and
    /// `scheduling/nodeclaim.go` `InstanceTypeFilterError.Error` across releases: a `Gt`
    /// bound prints ` >N` up to v1.8 and ` >=N+1` from v1.9; the filter error leads with
    /// its reason from v1.3 and wraps it up to v1.2.
    #[test]
    fn messages_are_worded_as_the_version_words_them() {
        use crate::karpenter::sim::Verdict;
        let yaml = format!(
            "{}---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  template:
    spec:
      nodeSelector: {{karpenter.k8s.aws/instance-family: c5}}
      containers: [{{name: w, image: x, resources: {{requests: {{cpu: \"512\"}}}}}}]
",
            POOL.replace(
                "name: default}",
                "name: default}, requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [\"4\"]}]"
            )
        );
        let message = |v: &str| match verdict_on(&yaml, v) {
            Verdict::Pending(f) => f[0]
                .failure
                .message_on("p", KarpenterVersion::parse(v).unwrap()),
            other => panic!("{v}: expected Pending, got {other:?}"),
        };
        let new = message("1.9");
        assert!(
            new.starts_with("no instance type has enough resources, requirements="),
            "{new}"
        );
        assert!(
            new.contains("karpenter.k8s.aws/instance-cpu Exists >=5"),
            "{new}"
        );
        let v18 = message("1.8");
        assert!(
            v18.contains("karpenter.k8s.aws/instance-cpu Exists >4"),
            "{v18}"
        );
        let v12 = message("1.2");
        assert!(
            v12.starts_with("no instance type satisfied resources {"),
            "{v12}"
        );
        assert!(
            v12.ends_with(" (no instance type has enough resources)"),
            "{v12}"
        );
    }
}
