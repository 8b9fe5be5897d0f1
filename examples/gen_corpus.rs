//! Scale corpus generator for karplint's benchmark and robustness runs.
//!
//! Writes `--files N` manifest files under `--out DIR`, deterministic from `--seed S`: the
//! same arguments always give the same bytes. The mix imitates a platform monorepo:
//! Deployments and StatefulSets (some without requests, with affinity, tolerations and
//! topology spread), Services, ConfigMaps with large payloads, CRDs with large OpenAPI
//! schemas (most of the bytes, as in real trees), Karpenter NodePools and EC2NodeClasses,
//! LimitRanges, PDBs, PVCs, multi-document bundles, `kind: List` files and JSON files.
//!
//! ```text
//! cargo run --release --example gen_corpus -- --files 20000 --seed 1 --out /tmp/corpus
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

/// splitmix64: small, fast and deterministic on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const TEAMS: &[&str] = &[
    "payments", "search", "checkout", "identity", "ledger", "ml", "data", "edge", "platform",
    "growth", "ads", "media",
];
const WORDS: &[&str] = &[
    "api",
    "worker",
    "gateway",
    "cache",
    "indexer",
    "scheduler",
    "router",
    "frontend",
    "batch",
    "stream",
    "sync",
    "auth",
    "billing",
    "notifier",
    "exporter",
    "ingest",
];
const IMAGES: &[&str] = &[
    "nginx:1.27",
    "public.ecr.aws/docker/library/redis:7.2",
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:2024.11.3",
    "ghcr.io/example/worker:v3.14.1",
    "quay.io/prometheus/node-exporter:v1.8.2",
];
const ZONES: &[&str] = &["us-east-1a", "us-east-1b", "us-east-1c"];
const CPUS: &[&str] = &["100m", "250m", "500m", "1", "2", "1500m"];
const MEMS: &[&str] = &["128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"];

fn name(r: &mut Rng) -> String {
    format!("{}-{}-{}", r.pick(TEAMS), r.pick(WORDS), r.below(1000))
}

fn container(r: &mut Rng, out: &mut String, indent: &str, name: &str) {
    let _ = writeln!(out, "{indent}- name: {name}");
    let _ = writeln!(out, "{indent}  image: {}", r.pick(IMAGES));
    let _ = writeln!(out, "{indent}  imagePullPolicy: IfNotPresent");
    let _ = writeln!(out, "{indent}  ports:");
    for p in 0..r.range(1, 3) {
        let _ = writeln!(out, "{indent}  - name: port-{p}");
        let _ = writeln!(out, "{indent}    containerPort: {}", 8080 + p);
        let _ = writeln!(out, "{indent}    protocol: TCP");
    }
    let _ = writeln!(out, "{indent}  env:");
    for e in 0..r.range(2, 10) {
        let _ = writeln!(
            out,
            "{indent}  - name: {}_VAR_{e}",
            name.to_uppercase().replace('-', "_")
        );
        let _ = writeln!(out, "{indent}    value: \"{}\"", r.next());
    }
    if !r.chance(15) {
        let _ = writeln!(out, "{indent}  resources:");
        let _ = writeln!(out, "{indent}    requests:");
        let _ = writeln!(out, "{indent}      cpu: {}", r.pick(CPUS));
        let _ = writeln!(out, "{indent}      memory: {}", r.pick(MEMS));
        if r.chance(60) {
            let _ = writeln!(out, "{indent}    limits:");
            let _ = writeln!(out, "{indent}      memory: {}", r.pick(MEMS));
        }
    }
    let _ = writeln!(out, "{indent}  readinessProbe:");
    let _ = writeln!(out, "{indent}    httpGet:");
    let _ = writeln!(out, "{indent}      path: /healthz");
    let _ = writeln!(out, "{indent}      port: 8080");
    let _ = writeln!(out, "{indent}    periodSeconds: 10");
    let _ = writeln!(out, "{indent}  volumeMounts:");
    let _ = writeln!(out, "{indent}  - name: config");
    let _ = writeln!(out, "{indent}    mountPath: /etc/{name}");
    let _ = writeln!(out, "{indent}    readOnly: true");
}

fn pod_spec(r: &mut Rng, out: &mut String, indent: &str, app: &str) {
    let _ = writeln!(out, "{indent}serviceAccountName: {app}");
    if r.chance(40) {
        let _ = writeln!(out, "{indent}nodeSelector:");
        let _ = writeln!(
            out,
            "{indent}  karpenter.sh/capacity-type: {}",
            r.pick(&["on-demand", "spot"])
        );
        if r.chance(30) {
            let _ = writeln!(
                out,
                "{indent}  kubernetes.io/arch: {}",
                r.pick(&["amd64", "arm64"])
            );
        }
    }
    if r.chance(30) {
        let _ = writeln!(out, "{indent}tolerations:");
        let _ = writeln!(out, "{indent}- key: dedicated");
        let _ = writeln!(out, "{indent}  operator: Equal");
        let _ = writeln!(out, "{indent}  value: {}", r.pick(TEAMS));
        let _ = writeln!(out, "{indent}  effect: NoSchedule");
    }
    if r.chance(30) {
        let _ = writeln!(out, "{indent}affinity:");
        let _ = writeln!(out, "{indent}  nodeAffinity:");
        let _ = writeln!(
            out,
            "{indent}    requiredDuringSchedulingIgnoredDuringExecution:"
        );
        let _ = writeln!(out, "{indent}      nodeSelectorTerms:");
        let _ = writeln!(out, "{indent}      - matchExpressions:");
        let _ = writeln!(out, "{indent}        - key: topology.kubernetes.io/zone");
        let _ = writeln!(out, "{indent}          operator: In");
        let _ = writeln!(
            out,
            "{indent}          values: [{}, {}]",
            ZONES[0],
            r.pick(ZONES)
        );
    }
    if r.chance(25) {
        let _ = writeln!(out, "{indent}topologySpreadConstraints:");
        let _ = writeln!(out, "{indent}- maxSkew: 1");
        let _ = writeln!(out, "{indent}  topologyKey: topology.kubernetes.io/zone");
        let _ = writeln!(out, "{indent}  whenUnsatisfiable: DoNotSchedule");
        let _ = writeln!(out, "{indent}  labelSelector:");
        let _ = writeln!(out, "{indent}    matchLabels:");
        let _ = writeln!(out, "{indent}      app: {app}");
    }
    let _ = writeln!(out, "{indent}containers:");
    for c in 0..r.range(1, 3) {
        container(r, out, indent, &format!("{app}-c{c}"));
    }
    let _ = writeln!(out, "{indent}volumes:");
    let _ = writeln!(out, "{indent}- name: config");
    let _ = writeln!(out, "{indent}  configMap:");
    let _ = writeln!(out, "{indent}    name: {app}-config");
}

fn metadata(r: &mut Rng, out: &mut String, app: &str, ns: &str) {
    let _ = writeln!(out, "metadata:");
    let _ = writeln!(out, "  name: {app}");
    let _ = writeln!(out, "  namespace: {ns}");
    let _ = writeln!(out, "  labels:");
    let _ = writeln!(out, "    app: {app}");
    let _ = writeln!(out, "    app.kubernetes.io/part-of: {ns}");
    let _ = writeln!(out, "    app.kubernetes.io/managed-by: kustomize");
    if r.chance(50) {
        let _ = writeln!(out, "  annotations:");
        let _ = writeln!(
            out,
            "    deployment.kubernetes.io/revision: \"{}\"",
            r.below(50)
        );
        let _ = writeln!(out, "    owner: team-{ns}@example.com");
    }
}

fn workload(r: &mut Rng, out: &mut String, kind: &str, ns: &str) {
    let app = name(r);
    let _ = writeln!(out, "apiVersion: apps/v1");
    let _ = writeln!(out, "kind: {kind}");
    metadata(r, out, &app, ns);
    let _ = writeln!(out, "spec:");
    let _ = writeln!(out, "  replicas: {}", r.range(1, 12));
    if kind == "StatefulSet" {
        let _ = writeln!(out, "  serviceName: {app}");
    }
    let _ = writeln!(out, "  selector:");
    let _ = writeln!(out, "    matchLabels:");
    let _ = writeln!(out, "      app: {app}");
    let _ = writeln!(out, "  template:");
    let _ = writeln!(out, "    metadata:");
    let _ = writeln!(out, "      labels:");
    let _ = writeln!(out, "        app: {app}");
    let _ = writeln!(out, "    spec:");
    pod_spec(r, out, "      ", &app);
    if kind == "StatefulSet" {
        let _ = writeln!(out, "  volumeClaimTemplates:");
        let _ = writeln!(out, "  - metadata:");
        let _ = writeln!(out, "      name: data");
        let _ = writeln!(out, "    spec:");
        let _ = writeln!(out, "      accessModes: [ReadWriteOnce]");
        let _ = writeln!(out, "      storageClassName: gp3");
        let _ = writeln!(out, "      resources:");
        let _ = writeln!(out, "        requests:");
        let _ = writeln!(out, "          storage: {}Gi", r.range(1, 500));
    }
}

fn service(r: &mut Rng, out: &mut String, ns: &str) {
    let app = name(r);
    let _ = writeln!(out, "apiVersion: v1");
    let _ = writeln!(out, "kind: Service");
    metadata(r, out, &app, ns);
    let _ = writeln!(out, "spec:");
    let _ = writeln!(out, "  type: ClusterIP");
    let _ = writeln!(out, "  selector:");
    let _ = writeln!(out, "    app: {app}");
    let _ = writeln!(out, "  ports:");
    for p in 0..r.range(1, 4) {
        let _ = writeln!(out, "  - name: http-{p}");
        let _ = writeln!(out, "    port: {}", 80 + p);
        let _ = writeln!(out, "    targetPort: {}", 8080 + p);
    }
}

fn configmap(r: &mut Rng, out: &mut String, ns: &str, max_lines: u64) {
    let app = name(r);
    let _ = writeln!(out, "apiVersion: v1");
    let _ = writeln!(out, "kind: ConfigMap");
    metadata(r, out, &format!("{app}-config"), ns);
    let _ = writeln!(out, "data:");
    for k in 0..r.range(2, 8) {
        let _ = writeln!(out, "  key-{k}.properties: |");
        for l in 0..r.range(5, max_lines) {
            let _ = writeln!(
                out,
                "    {}.{}.setting{l} = {} # {}",
                r.pick(WORDS),
                r.pick(WORDS),
                r.next(),
                r.pick(TEAMS)
            );
        }
    }
    let _ = writeln!(
        out,
        "  log-level: \"{}\"",
        r.pick(&["info", "debug", "warn"])
    );
    let _ = writeln!(out, "  enabled: \"true\"");
}

fn schema_props(r: &mut Rng, out: &mut String, depth: usize, indent: &str, budget: &mut u64) {
    let _ = writeln!(out, "{indent}properties:");
    for i in 0..r.range(3, 9) {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let field = format!("{}{}", r.pick(WORDS), i);
        let _ = writeln!(out, "{indent}  {field}:");
        let _ = writeln!(
            out,
            "{indent}    description: {} configures the {} of the {} {}; see the operator guide for the allowed values and defaults.",
            field,
            r.pick(WORDS),
            r.pick(TEAMS),
            r.pick(WORDS)
        );
        let inner = format!("{indent}    ");
        match (depth, r.below(5)) {
            (d, 0 | 1) if d < 5 => {
                let _ = writeln!(out, "{inner}type: object");
                schema_props(r, out, depth + 1, &inner, budget);
            }
            (d, 2) if d < 5 => {
                let _ = writeln!(out, "{inner}type: array");
                let _ = writeln!(out, "{inner}items:");
                let _ = writeln!(out, "{inner}  type: object");
                schema_props(r, out, depth + 1, &format!("{inner}  "), budget);
            }
            (_, 3) => {
                let _ = writeln!(out, "{inner}type: integer");
                let _ = writeln!(out, "{inner}format: int32");
                let _ = writeln!(out, "{inner}minimum: 0");
            }
            _ => {
                let _ = writeln!(out, "{inner}type: string");
                if r.chance(30) {
                    let _ = writeln!(out, "{inner}enum: [Always, Never, IfNotPresent]");
                }
            }
        }
    }
}

fn crd(r: &mut Rng, out: &mut String, fields: u64) {
    let plural = format!("{}{}s", r.pick(WORDS), r.below(100));
    let group = format!("{}.example.com", r.pick(TEAMS));
    let _ = writeln!(out, "apiVersion: apiextensions.k8s.io/v1");
    let _ = writeln!(out, "kind: CustomResourceDefinition");
    let _ = writeln!(out, "metadata:");
    let _ = writeln!(out, "  name: {plural}.{group}");
    let _ = writeln!(out, "  annotations:");
    let _ = writeln!(out, "    controller-gen.kubebuilder.io/version: v0.16.4");
    let _ = writeln!(out, "spec:");
    let _ = writeln!(out, "  group: {group}");
    let _ = writeln!(out, "  names:");
    let _ = writeln!(out, "    kind: {}", plural.to_uppercase());
    let _ = writeln!(out, "    plural: {plural}");
    let _ = writeln!(out, "  scope: Namespaced");
    let _ = writeln!(out, "  versions:");
    for v in ["v1alpha1", "v1"] {
        let _ = writeln!(out, "  - name: {v}");
        let _ = writeln!(out, "    served: true");
        let _ = writeln!(out, "    storage: {}", v == "v1");
        let _ = writeln!(out, "    schema:");
        let _ = writeln!(out, "      openAPIV3Schema:");
        let _ = writeln!(out, "        type: object");
        let mut budget = fields;
        schema_props(r, out, 0, "        ", &mut budget);
    }
}

fn nodepool(r: &mut Rng, out: &mut String) {
    let n = format!("{}-{}", r.pick(TEAMS), r.below(100));
    let _ = writeln!(out, "apiVersion: karpenter.sh/v1");
    let _ = writeln!(out, "kind: NodePool");
    let _ = writeln!(out, "metadata:");
    let _ = writeln!(out, "  name: {n}");
    let _ = writeln!(out, "spec:");
    let _ = writeln!(out, "  weight: {}", r.range(1, 100));
    let _ = writeln!(out, "  template:");
    let _ = writeln!(out, "    spec:");
    let _ = writeln!(out, "      nodeClassRef:");
    let _ = writeln!(out, "        group: karpenter.k8s.aws");
    let _ = writeln!(out, "        kind: EC2NodeClass");
    let _ = writeln!(out, "        name: {n}");
    let _ = writeln!(out, "      requirements:");
    let _ = writeln!(out, "      - key: karpenter.sh/capacity-type");
    let _ = writeln!(out, "        operator: In");
    let _ = writeln!(out, "        values: [on-demand, spot]");
    let _ = writeln!(out, "      - key: karpenter.k8s.aws/instance-category");
    let _ = writeln!(out, "        operator: In");
    let _ = writeln!(out, "        values: [c, m, r]");
    let _ = writeln!(out, "      - key: kubernetes.io/arch");
    let _ = writeln!(out, "        operator: In");
    let _ = writeln!(out, "        values: [{}]", r.pick(&["amd64", "arm64"]));
    if r.chance(40) {
        let _ = writeln!(out, "      taints:");
        let _ = writeln!(out, "      - key: dedicated");
        let _ = writeln!(out, "        value: {}", r.pick(TEAMS));
        let _ = writeln!(out, "        effect: NoSchedule");
    }
    let _ = writeln!(out, "  limits:");
    let _ = writeln!(out, "    cpu: \"{}\"", r.range(100, 2000));
    let _ = writeln!(out, "    memory: {}Gi", r.range(100, 4000));
    let _ = writeln!(out, "  disruption:");
    let _ = writeln!(out, "    consolidationPolicy: WhenEmptyOrUnderutilized");
    let _ = writeln!(out, "    consolidateAfter: 1m");
    let _ = writeln!(out, "---");
    let _ = writeln!(out, "apiVersion: karpenter.k8s.aws/v1");
    let _ = writeln!(out, "kind: EC2NodeClass");
    let _ = writeln!(out, "metadata:");
    let _ = writeln!(out, "  name: {n}");
    let _ = writeln!(out, "spec:");
    let _ = writeln!(out, "  role: KarpenterNodeRole-{n}");
    let _ = writeln!(out, "  amiSelectorTerms:");
    let _ = writeln!(out, "  - alias: al2023@latest");
    let _ = writeln!(out, "  subnetSelectorTerms:");
    let _ = writeln!(out, "  - tags:");
    let _ = writeln!(out, "      karpenter.sh/discovery: cluster-{}", r.below(5));
    let _ = writeln!(out, "  securityGroupSelectorTerms:");
    let _ = writeln!(out, "  - tags:");
    let _ = writeln!(out, "      karpenter.sh/discovery: cluster-{}", r.below(5));
    let _ = writeln!(out, "  kubelet:");
    let _ = writeln!(out, "    maxPods: {}", r.range(20, 110));
}

fn small(r: &mut Rng, out: &mut String, ns: &str) {
    match r.below(4) {
        1 if ns.ends_with("-prod") => {
            let _ = writeln!(
                out,
                "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: defaults\n  namespace: {ns}\nspec:\n  limits:\n  - type: Container\n    defaultRequest:\n      cpu: {}\n      memory: {}",
                r.pick(CPUS),
                r.pick(MEMS)
            );
        }
        0 | 1 => {
            let _ = writeln!(
                out,
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}"
            );
        }
        2 => {
            let app = name(r);
            let _ = writeln!(
                out,
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {app}\n  namespace: {ns}\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app: {app}"
            );
        }
        _ => {
            let app = name(r);
            let _ = writeln!(
                out,
                "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {app}\n  namespace: {ns}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: gp3\n  resources:\n    requests:\n      storage: {}Gi",
                r.range(1, 100)
            );
        }
    }
}

fn any_doc(r: &mut Rng, out: &mut String, ns: &str) {
    match r.below(10) {
        0..=3 => workload(r, out, "Deployment", ns),
        4 => workload(r, out, "StatefulSet", ns),
        5 | 6 => service(r, out, ns),
        7 => configmap(r, out, ns, 20),
        _ => small(r, out, ns),
    }
}

fn json_deployment(r: &mut Rng, ns: &str) -> String {
    let app = name(r);
    let containers: Vec<String> = (0..r.range(1, 3))
        .map(|c| {
            let env: Vec<String> = (0..r.range(2, 8))
                .map(|e| format!("{{\"name\": \"VAR_{e}\", \"value\": \"{}\"}}", r.next()))
                .collect();
            let resources = if r.chance(85) {
                format!(
                    ", \"resources\": {{\"requests\": {{\"cpu\": \"{}\", \"memory\": \"{}\"}}}}",
                    r.pick(CPUS),
                    r.pick(MEMS)
                )
            } else {
                String::new()
            };
            format!(
                "{{\"name\": \"{app}-c{c}\", \"image\": \"{}\", \"env\": [{}]{resources}}}",
                r.pick(IMAGES),
                env.join(", ")
            )
        })
        .collect();
    format!(
        "{{\n  \"apiVersion\": \"apps/v1\",\n  \"kind\": \"Deployment\",\n  \"metadata\": {{\"name\": \"{app}\", \"namespace\": \"{ns}\", \"labels\": {{\"app\": \"{app}\"}}}},\n  \"spec\": {{\n    \"replicas\": {},\n    \"selector\": {{\"matchLabels\": {{\"app\": \"{app}\"}}}},\n    \"template\": {{\n      \"metadata\": {{\"labels\": {{\"app\": \"{app}\"}}}},\n      \"spec\": {{\"containers\": [\n        {}\n      ]}}\n    }}\n  }}\n}}\n",
        r.range(1, 10),
        containers.join(",\n        ")
    )
}

/// One file: its name (without directory) and contents.
fn file(r: &mut Rng, i: usize) -> (String, String) {
    // LimitRanges are written only in the `-prod` namespaces, so the others' workloads
    // without requests are findings.
    let ns = format!("{}-{}", r.pick(TEAMS), r.pick(&["prod", "staging", "dev"]));
    let mut out = String::new();
    let ext = "yaml";
    let stem = match r.below(100) {
        0..=27 => {
            workload(r, &mut out, "Deployment", &ns);
            "deployment"
        }
        28..=35 => {
            workload(r, &mut out, "StatefulSet", &ns);
            "statefulset"
        }
        36..=43 => {
            service(r, &mut out, &ns);
            "service"
        }
        44..=53 => {
            configmap(r, &mut out, &ns, 80);
            "configmap"
        }
        54..=57 => {
            let fields = r.range(40, 320);
            crd(r, &mut out, fields);
            "crd"
        }
        58..=60 => {
            nodepool(r, &mut out);
            "nodepool"
        }
        61..=62 => {
            let _ = writeln!(out, "apiVersion: v1\nkind: List\nitems:");
            for _ in 0..r.range(2, 6) {
                let mut doc = String::new();
                any_doc(r, &mut doc, &ns);
                for (j, line) in doc.lines().enumerate() {
                    let _ = writeln!(out, "{}{line}", if j == 0 { "- " } else { "  " });
                }
            }
            "list"
        }
        63..=67 => return (format!("{i:06}-deployment.json"), json_deployment(r, &ns)),
        68..=79 => {
            for d in 0..r.range(3, 25) {
                if d > 0 {
                    out.push_str("---\n");
                }
                if r.chance(10) {
                    out.push_str("# generated by kustomize build\n");
                }
                any_doc(r, &mut out, &ns);
            }
            "bundle"
        }
        _ => {
            small(r, &mut out, &ns);
            "misc"
        }
    };
    (format!("{i:06}-{stem}.{ext}"), out)
}

fn main() {
    let mut files = 2000usize;
    let mut seed = 1u64;
    let mut out = PathBuf::from("target/corpus");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_default();
        match a.as_str() {
            "--files" => files = val().parse().unwrap_or(files),
            "--seed" => seed = val().parse().unwrap_or(seed),
            "--out" => out = PathBuf::from(val()),
            _ => {
                eprintln!("usage: gen_corpus [--files N] [--seed S] [--out DIR]");
                std::process::exit(2);
            }
        }
    }
    let mut rng = Rng(seed);
    let mut bytes = 0usize;
    for i in 0..files {
        let team = TEAMS[i % TEAMS.len()];
        let dir = out.join(team).join(format!("app-{:03}", i / 120));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("gen_corpus: {}: {e}", dir.display());
            std::process::exit(2);
        }
        let (name, text) = file(&mut rng, i);
        bytes += text.len();
        if let Err(e) = std::fs::write(dir.join(&name), text) {
            eprintln!("gen_corpus: {name}: {e}");
            std::process::exit(2);
        }
    }
    eprintln!(
        "gen_corpus: wrote {files} files, {:.1} MB, to {}",
        bytes as f64 / 1e6,
        out.display()
    );
}
